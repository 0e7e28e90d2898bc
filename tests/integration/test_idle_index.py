"""A writable store's check before each search, when nothing was committed since it last found
nothing to do (``store/db/index/gaps_cache.py``): on SQLite it reads the database's state and
runs nothing else; whoever commits next (this store, another store, another program) makes
the following check look again."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from store import CallQuery, TranscriptStore, search_calls


def _turn(call_id: str, command: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": "", "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": "bash", "arguments": f'{{"command": "{command}"}}'}}]},
        {"role": "tool", "tool_call_id": call_id, "content": f"ran {command}"}]


@contextmanager
def _statements(db: TranscriptStore) -> Iterator[list[str]]:
    """The statements ``db``'s engine runs in the block."""
    seen: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", count)


def _found(db: TranscriptStore, needle: str) -> list[str]:
    return sorted(m.call_id for m in search_calls(db, CallQuery(text=needle), limit=100))


def test_a_check_with_nothing_committed_since_runs_no_statement(store_url: str) -> None:
    with TranscriptStore.open(store_url) as db, TranscriptStore.open(store_url) as other:
        db.append("s", _turn("c1", "make build"))
        assert db.update_search_index().calls == 1
        assert db.update_search_index().calls == 0  # (found nothing: remembered on SQLite)
        with _statements(db) as seen:
            again = db.update_search_index()
        assert (again.sessions, again.calls, again.results, again.messages) == (0, 0, 0, 0)
        if db.dialect == "sqlite":  # (on PostgreSQL the state is the cluster's WAL position,
            # which the other tests' databases move too: the check may look again)
            assert seen == ["PRAGMA data_version"]
        # another store commits: the next check looks, and indexes it
        other.append("t", _turn("c2", "make deploy"))
        assert _found(db, "make deploy") == ["c2"]
        # this store commits: the same
        db.append("s", _turn("c3", "make clean"))
        assert _found(db, "make clean") == ["c3"]
        assert db.search_messages("clean")[0].session_id == "s"
        assert db.update_search_index().calls == 0


def test_a_commit_by_another_program_is_seen(tmp_path) -> None:
    """A watermark lowered by hand (``sqlite3``) after the check found nothing: the next
    check indexes the session again from there."""
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    with TranscriptStore.open(url) as db:
        db.append("s", _turn("c1", "make build"))
        db.update_search_index()
        assert db.update_search_index().calls == 0
        with sqlite3.connect(tmp_path / "store.sqlite") as raw:
            raw.execute("UPDATE sessions SET indexed_position = 1")
        redone = db.update_search_index()
        assert (redone.sessions, redone.calls, redone.results) == (1, 0, 1)
        assert _found(db, "make build") == ["c1"]
        assert db.verify().ok
