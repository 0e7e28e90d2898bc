"""The concurrent-writers scenario of ``bench/storage.py``: N processes, committed single
appends to sessions of their own, wall time of all."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from typing import Any

from storage_raw import RawStore
from storage_raw_backends import RawPostgres, RawSQLite
from workload import (
    generate_sessions,
)

from store import TranscriptStore

# -- concurrent writers ---------------------------------------------------------------------------


def _writer(kind: str, target: str, worker: int, count: int, start_at: float,
            out: Any) -> None:
    """One writer process: ``count`` committed single-message appends to a session of its own,
    from ``start_at`` on (after one warm-up append); puts (start, end) on ``out``."""
    (session,) = generate_sessions(1, count, seed=7000 + worker, prefix=f"{kind}{worker}")
    sid = f"writer-{kind}-{worker}-{start_at}"
    pairs = list(zip(session.messages, session.keys, strict=True))[:count + 1]
    store = TranscriptStore.open(target) if kind == "store" else None
    raw: RawStore | None = None
    if store is None:
        raw = (RawSQLite(Path(target), create=False) if not target.startswith("post")
               else RawPostgres(target, create=False))

    def append(record: dict[str, Any], key: str) -> None:
        if store is not None:
            store.append(sid, [record], keys=[key])
        else:
            assert raw is not None
            raw.append(sid, [record], [key])

    append(*pairs[0])
    while time.time() < start_at:
        time.sleep(0.0005)
    started = time.time()
    for record, key in pairs[1:]:
        append(record, key)
    out.put((started, time.time()))


def run_writers(kind: str, target: str, processes: int, count: int) -> float:
    """Wall time of ``processes`` writer processes doing ``count`` appends each."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    start_at = time.time() + 2.0 + 0.3 * processes  # after every process has started
    procs = [context.Process(target=_writer, args=(kind, target, w, count, start_at, queue))
             for w in range(processes)]
    for proc in procs:
        proc.start()
    spans = [queue.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
    return max(end for _, end in spans) - min(start for start, _ in spans)
