"""A large catch-up writes SQLite's full-text indexes in bulk (``store/db/index/fts_bulk.py``,
issue 39): FTS5 merges only at 64 segments a level while the chunks are written, then the
defaults come back and what waits is merged. The rows, the entries and every search's answers
are those of a catch-up with FTS5's defaults; a catch-up that stops in its bulk leaves the
settings, and the next one finishes the job; a small catch-up changes nothing; PostgreSQL
has no FTS5 and catches up as before."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import empty_postgres
from index_rows import derived_rows

from store import CallQuery, TranscriptStore, refill_search_index, search_calls
from store.db.index import fts_bulk, message_index, search_index

SESSIONS = 30  # of 7 messages each: 210 messages
TABLES = ("search_fts", "message_fts")


def _session(number: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user",
                                  "content": f"task {number}: deploy the handler {number}"}]
    for turn in range(3):
        call_id = f"c{number}_{turn}"
        out.append({"role": "assistant", "content": f"step {turn} of {number}: the handler",
                    "tool_calls": [{"id": call_id, "type": "function", "function": {
                        "name": "bash", "arguments": '{"command": "grep -rn handler '
                                                     f'/srv/app{number}/{turn}"}}'}}]})
        out.append({"role": "tool", "tool_call_id": call_id,
                    "content": f"src/handler{number}.py:{turn}: def handler(event): pass"})
    return out


@pytest.fixture(autouse=True)
def one_session_a_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A transaction per session, so that the index gets a segment per session (the real
    chunks hold 100 sessions), and a merge step of a page."""
    monkeypatch.setattr(search_index, "CHUNK_SESSIONS", 1)
    monkeypatch.setattr(message_index, "CHUNK_SESSIONS", 1)
    monkeypatch.setattr(fts_bulk, "MERGE_PAGES", 1)


def _fill(store: TranscriptStore) -> TranscriptStore:
    for number in range(SESSIONS):
        store.append(f"s{number:03d}", _session(number))
    return store


@pytest.fixture
def filled(sqlite_template: Path, tmp_path: Path) -> Iterator[TranscriptStore]:
    """An SQLite store (FTS5 is SQLite's) holding the sessions, not indexed yet."""
    path = tmp_path / "store.sqlite"
    shutil.copyfile(sqlite_template, path)
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        yield _fill(opened)


def _scalar(store: TranscriptStore, sql: str) -> Any:
    with store.engine.connect() as conn:
        return conn.exec_driver_sql(sql).scalar()


def _settings(store: TranscriptStore, table: str) -> dict[str, str]:
    with store.engine.connect() as conn:
        return {str(k): str(v) for k, v in conn.exec_driver_sql(
            f"SELECT k, v FROM {table}_config WHERE k IN ('automerge', 'crisismerge')")}


def _segments(store: TranscriptStore, table: str) -> int:
    return int(_scalar(store, f"SELECT count(DISTINCT segid) FROM {table}_idx"))


def _answers(store: TranscriptStore) -> dict[str, Any]:
    return {
        "messages": {word: [(h.session_id, h.position, h.role, h.snippet)
                            for h in store.search_messages(word, limit=1000)]
                     for word in ("handler", "deploy", "s007", "event", "step")},
        "calls": {text: sorted((c.session_id, c.position, c.index) for c in
                               search_calls(store, CallQuery(text=text)))
                  for text in ("handler", "grep -rn", "/srv/app7/", "app2")}}


def test_a_large_catch_up_is_written_in_bulk_with_the_same_answers(
        filled: TranscriptStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fts_bulk, "BULK_MESSAGES", 100)
    during: list[dict[str, str]] = []
    chunk = search_index._catch_up_chunk

    def spied(conn: Any, **kwargs: Any) -> Any:
        during.append({k: str(v) for k, v in conn.exec_driver_sql(
            "SELECT k, v FROM search_fts_config WHERE k = 'automerge'")})
        return chunk(conn, **kwargs)

    monkeypatch.setattr(search_index, "_catch_up_chunk", spied)
    done = filled.update_search_index()
    assert (done.sessions, done.calls, done.messages) == (SESSIONS, 3 * SESSIONS, 7 * SESSIONS)
    assert during and all(d == {"automerge": "0"} for d in during)  # merging held off
    bulk = {t: _segments(filled, t) for t in TABLES}
    assert all(_settings(filled, t) == {"automerge": "4", "crisismerge": "16"} for t in TABLES)
    rows, answers = derived_rows(filled), _answers(filled)
    assert answers["messages"]["handler"] and answers["calls"]["grep -rn"]
    assert filled.verify().ok  # (FTS5's integrity check of both indexes included)

    monkeypatch.setattr(fts_bulk, "BULK_MESSAGES", 10**9)  # FTS5's defaults all along
    refill_search_index(filled)
    assert derived_rows(filled) == rows and _answers(filled) == answers
    plain = {t: _segments(filled, t) for t in TABLES}
    # merged to no more segments than the defaults leave (30 transactions: 30 segments
    # merged four by four)
    assert all(bulk[t] <= plain[t] for t in TABLES), (bulk, plain)


def test_a_catch_up_stopped_in_its_bulk_is_finished_by_the_next(
        filled: TranscriptStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fts_bulk, "BULK_MESSAGES", 100)
    chunk = message_index._chunk
    calls = {"n": 0}

    def failing(conn: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] > 12:
            raise OSError("killed")
        return chunk(conn, **kwargs)

    monkeypatch.setattr(message_index, "_chunk", failing)
    with pytest.raises(Exception, match="killed"):
        filled.update_search_index()
    assert _settings(filled, "message_fts")["automerge"] == "0"  # left in its bulk
    left = _segments(filled, "message_fts")
    assert left >= 12  # (a segment per chunk written: nothing merged)

    monkeypatch.setattr(message_index, "_chunk", chunk)
    monkeypatch.setattr(fts_bulk, "BULK_MESSAGES", 10**9)  # the rest is small
    done = filled.update_search_index()
    assert done.messages == 7 * (SESSIONS - 12)
    assert _settings(filled, "message_fts") == {"automerge": "4", "crisismerge": "16"}
    assert _segments(filled, "message_fts") < left
    assert filled.verify().ok
    assert {h.session_id for h in filled.search_messages("handler 29", limit=50)} == {"s029"}


def test_a_small_catch_up_keeps_fts5_s_defaults(filled: TranscriptStore) -> None:
    filled.update_search_index()  # 210 messages: under BULK_MESSAGES
    assert all(_settings(filled, t) == {} for t in TABLES)  # never set


def test_postgres_catches_up_as_before(postgres_url: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    empty_postgres(postgres_url)
    monkeypatch.setattr(fts_bulk, "BULK_MESSAGES", 1)
    with TranscriptStore.open(postgres_url) as opened:
        _caught_up(_fill(opened))


def _caught_up(filled: TranscriptStore) -> None:
    done = filled.update_search_index()
    assert (done.sessions, done.messages) == (SESSIONS, 7 * SESSIONS)
    assert {h.session_id for h in filled.search_messages("handler 29", limit=50)} == {"s029"}
    assert filled.verify().ok
