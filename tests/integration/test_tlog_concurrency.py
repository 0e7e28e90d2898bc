"""The log caught up while writers append, hold, release and erase at the same time (issue
38), on both backends: no deadlock, every message a leaf exactly once, each session's leaves
in position order, and an early checkpoint still extended at the end."""

from __future__ import annotations

import threading

from sqlalchemy import text

from store.tlog import verifier
from store.tlog.note import Signer

SIGNER = Signer.generate("test.invalid/key")


def test_catch_up_races_appends_and_events(store) -> None:
    store.append("seed", [{"role": "user", "content": "seed"}])
    early = store.log_checkpoint(SIGNER)
    errors: list[BaseException] = []

    def appender(name: str) -> None:
        try:
            for i in range(15):
                store.append(name, [{"role": "user", "content": f"{name} {i}"}])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def auditor() -> None:
        try:
            for i in range(6):
                store.log_head()
                store.hold("seed", f"case {i}")
                store.release("seed")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=appender, args=(n,)) for n in ("a", "b")]
    threads.append(threading.Thread(target=auditor))
    for t in threads:
        t.start()
    store.append("gone", [{"role": "user", "content": "to erase"}])
    store.erase(["gone"], reason="request")
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    head = store.log_head()
    with store.engine.connect() as conn:
        rows = conn.execute(text("SELECT leaf_index, kind, subject, position FROM log_leaves "
                                 "ORDER BY leaf_index")).all()
    assert [r[0] for r in rows] == list(range(head.size))
    messages = [(s, p) for _, k, s, p in rows if k == "message"]
    assert len(messages) == len(set(messages)) == 1 + 15 + 15 + 1
    for name in ("a", "b"):
        assert [p for s, p in messages if s == name] == list(range(15))
    assert sum(1 for r in rows if r[1] == "hold") == 6
    assert sum(1 for r in rows if r[1] == "tombstone") == 1
    assert store.verify().ok
    key = str(SIGNER.verifier)
    verifier.verify_text(store.log_consistency(early, SIGNER), key, early)
