"""SQLite WAL checkpoints run in the store's own thread, off the appends (issue 28: the
committed-append p99 was the appends that carried an automatic checkpoint)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from store import TranscriptStore
from store.db.writing.checkpoint import CHECKPOINT_EVERY, SAFETY_NET_PAGES

pytestmark = pytest.mark.sqlite


def test_appends_are_checkpointed_by_the_stores_thread(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as db:
        with db.engine.connect() as conn:
            pages = conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar()
        assert pages == SAFETY_NET_PAGES  # SQLite's own stays a safety net only
        checkpointer = db._checkpointer
        assert checkpointer is not None
        for n in range(2 * CHECKPOINT_EVERY + 1):
            db.append("s", [{"role": "user", "content": f"message {n} " + "x" * 500}],
                      keys=[f"k{n}"])
        deadline = time.monotonic() + 30  # waits for the thread; asserts no duration
        while checkpointer.runs < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert checkpointer.runs >= 2
        assert len(db.load("s").messages) == 2 * CHECKPOINT_EVERY + 1
    # Closed: the thread stopped, every append is in the database file.
    assert not any(t.name == "transcript-store-checkpoint" and t.is_alive()
                   for t in __import__("threading").enumerate())
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == (
            2 * CHECKPOINT_EVERY + 1)


def test_a_read_only_open_starts_no_checkpointer_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as db:
        db.append("s", [{"role": "user", "content": "hi"}])
    before = path.read_bytes()
    with TranscriptStore.open(f"sqlite:///{path}", read_only=True) as db:
        assert db._checkpointer is None
        assert db.load("s").messages
    assert path.read_bytes() == before
