"""The message index: every message's text, caught up off the write path (persistence).

The word index of message search (``store/db/index/message_search.py``; revision 0017), beside
the call index of ``store/db/index/search_index.py`` and kept the same way:

* **Rows**: ``message_search`` holds up to three rows per message (``store.records.messagetext``:
  its visible text under its role, ``thinking``, ``tool``), the redacted text as written
  (``body``). SQLite indexes it with ``message_fts`` (FTS5, ``unicode61``, an external-content
  table over ``body`` and ``role``, revision 0029: a search by role asks the index alone; a
  trigger takes a deleted row's text out), PostgreSQL with the GIN over ``tsv``
  (a stored ``to_tsvector('simple', body)``). Rows cascade away with their message (a
  deleted, erased or truncated session leaves none).
* **Watermark**: ``sessions.message_indexed_position`` (the messages before it are indexed)
  and ``ix_sessions_messages_behind`` (partial: ``next_position > message_indexed_position``),
  so "is anything to index?" is one index probe; truncate lowers it with ``next_position``.
* **When**: :func:`catch_up_messages`, run by ``TranscriptStore.update_search_index`` after
  the call index (``transcript-store db index``, the end of an import, each ``watch`` pass) and
  by ``search_messages`` on a writable store first; a chunk of sessions per transaction,
  their rows locked meanwhile. Appends never touch it (their round trips are unchanged).
* **Read-only**: a read-only store never writes, so it searches what is indexed;
  :func:`messages_behind` says how many sessions have messages not indexed yet.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine

from store.db.index import fts_bulk
from store.db.index.message_sql import (
    LAGGING,
    MESSAGE_FTS,
    MESSAGE_SEARCH,
    index_present,
    messages_behind,
)
from store.db.index.reads import read_briefly, short_reads
from store.db.schema.distribute import is_citus
from store.db.schema.wiretext import wire_sql
from store.records.messagetext import message_rows

if TYPE_CHECKING:
    from store.db.index.ahead import Ahead

__all__ = [
    "IndexProblem",
    "MESSAGE_FTS",
    "MESSAGE_SEARCH",
    "MessageIndexUpdate",
    "SETTLE_ROWS",
    "catch_up_messages",
    "check_message_index",
    "has_message_index",
    "insert_sqlite_rows",
    "messages_behind",
    "rebuild_message_index",
    "settle_messages",
]

#: Sessions caught up per transaction (their rows are locked meanwhile).
CHUNK_SESSIONS = 100
#: After this many rows indexed, PostgreSQL merges the GIN pending list and analyzes
#: (``store.db.index.search_index.settle``).
SETTLE_ROWS = 2000


@dataclass(frozen=True, slots=True)
class MessageIndexUpdate:
    """What a catch-up of the message index did: sessions, messages, rows written."""

    sessions: int = 0
    messages: int = 0
    rows: int = 0
    seconds: float = 0.0


_PRESENT: weakref.WeakKeyDictionary[Engine, bool] = weakref.WeakKeyDictionary()


def has_message_index(conn: Connection) -> bool:
    """Whether this database has the message index (an SQLite library without FTS5 has none,
    revision 0017)."""
    if conn.dialect.name != "sqlite":
        return True
    known = _PRESENT.get(conn.engine)
    if known is None:
        known = _PRESENT[conn.engine] = index_present(conn)
    return known


def catch_up_messages(write: Callable[[Callable[[Connection], Any]], Any],
                      read_conn: Connection, *,
                      progress: Callable[[MessageIndexUpdate, int], None] | None = None,
                      workers: int = 1) -> MessageIndexUpdate:
    """Index every committed message not indexed yet, a chunk of sessions per transaction
    run through ``write`` (the store's retrying write transaction). ``progress`` gets the
    running totals and the number of sessions that were behind at the start. ``workers`` >
    1: the rows of the chunks ahead are made in that many worker processes meanwhile
    (``store/db/index/ahead.py``; the same rows are written)."""
    total = MessageIndexUpdate()
    with short_reads(read_conn):  # (no snapshot held while the chunks are written)
        if not has_message_index(read_conn):
            return total
        behind = read_conn.exec_driver_sql(LAGGING + " ORDER BY session_id").all()
    waiting = len(behind)
    if not waiting:
        return total
    started = time.perf_counter()
    lagging = [(str(s), int(i), int(n)) for s, i, n in behind]
    # (SQLite: many messages waiting, the full-text entries merged once, at the end)
    bulk = fts_bulk.started(write, read_conn, MESSAGE_FTS, lagging)
    ahead: Ahead[Any] | None = None
    if workers > 1:
        from store.db.index.ahead import start  # (multiprocessing: not on reads)

        ahead = start(workers, lagging, CHUNK_SESSIONS,
                      read_briefly(read_conn, _read_ahead(read_conn)), make_rows)
    try:
        while True:
            size = (ahead.next_chunk() if ahead is not None else None) or CHUNK_SESSIONS
            done: MessageIndexUpdate = write(partial(_chunk, ahead=ahead, size=size))
            if not done.sessions:
                break
            total = MessageIndexUpdate(total.sessions + done.sessions,
                                       total.messages + done.messages, total.rows + done.rows,
                                       time.perf_counter() - started)
            if progress is not None:
                progress(total, waiting)
    finally:
        if ahead is not None:
            ahead.close()
    if bulk:  # (a catch-up that stopped leaves the settings: the next one finishes)
        fts_bulk.finish(write, MESSAGE_FTS)
    return MessageIndexUpdate(total.sessions, total.messages, total.rows,
                              time.perf_counter() - started)


def _quietly(conn: Connection, statement: str) -> None:
    savepoint = conn.begin_nested()
    try:
        conn.exec_driver_sql(statement)
        savepoint.commit()
    except Exception:  # noqa: BLE001 - not the owner: autovacuum will do it
        savepoint.rollback()


def settle_messages(conn: Connection) -> None:
    """PostgreSQL after bulk work: the GIN pending list merged, the statistics current."""
    _quietly(conn, "SELECT gin_clean_pending_list('ix_message_search_tsv')")
    _quietly(conn, f"ANALYZE {MESSAGE_SEARCH}")


def _session_rows(cursor: Any, pg: bool, sid: str, start: int, stop: int
                  ) -> tuple[int, list[tuple[str, int, str, str]]]:
    """(messages read, index rows) of one session's messages in [start, stop)."""
    fetched = _fetched(cursor, pg, sid, start, stop)
    return len(fetched[1]), list(_made(*fetched))


def _fetched(cursor: Any, pg: bool, sid: str, start: int, stop: int
             ) -> tuple[str, list[Any], dict[int, list[tuple[str, str]]], dict[int, list[str]]]:
    """One session's messages in [start, stop), its calls and results by position."""
    p = "%s" if pg else "?"
    where = f"WHERE session_id = {p} AND position >= {p} AND position < {p}"
    params = (sid, start, stop)
    cursor.execute(f"SELECT position, role, text, parts_json FROM messages {where}", params)
    found = cursor.fetchall()
    calls: dict[int, list[tuple[str, str]]] = {}
    results: dict[int, list[str]] = {}
    cursor.execute(f"SELECT position, raw_name, {wire_sql(pg)} FROM tool_calls {where} "
                   "ORDER BY position, call_index", params)
    for pos, raw_name, wire in cursor.fetchall():
        calls.setdefault(int(pos), []).append((str(raw_name), str(wire)))
    cursor.execute(f"SELECT position, content_json FROM tool_results {where} "
                   "ORDER BY position, result_index", params)
    for pos, content in cursor.fetchall():
        results.setdefault(int(pos), []).append(str(content))
    return sid, found, calls, results


def _made(sid: str, found: list[Any], calls: dict[int, list[tuple[str, str]]],
          results: dict[int, list[str]], ahead: Ahead[Any] | None = None
          ) -> Iterator[tuple[str, int, str, str]]:
    """The index rows of fetched messages (their redacted texts, per part)."""
    for inputs in _inputs(found, calls, results):
        pos = inputs[0]
        rows = ahead.made((sid, pos), inputs) if ahead is not None else None
        for name, body in rows if rows is not None else rows_made(inputs):
            yield sid, pos, name, body


def _inputs(found: list[Any], calls: dict[int, list[tuple[str, str]]],
            results: dict[int, list[str]]) -> Iterator[tuple[Any, ...]]:
    for pos, role, text, parts in found:
        pos = int(pos)
        yield (pos, str(role), text or "", parts or "", tuple(calls.get(pos, ())),
               tuple(results.get(pos, ())))


def rows_made(inputs: tuple[Any, ...]) -> list[tuple[str, str]]:
    """One message's index rows (role, body) from (position, role, text, parts, its calls'
    (raw name, wire), its results' contents)."""
    _, role, text, parts, calls, results = inputs
    return list(message_rows(role, text, parts, calls, results))


def make_rows(inputs: list[tuple[Any, ...]]) -> list[list[tuple[str, str]]]:
    """:func:`rows_made` of each (a worker's job)."""
    return [rows_made(i) for i in inputs]


def _read_ahead(conn: Connection) -> Callable[[Sequence[tuple[str, int, int]]],
                                              list[tuple[Any, Any]]]:
    """The messages of a planned chunk as :class:`store.db.index.ahead.Ahead` takes them."""
    pg = conn.dialect.name == "postgresql"

    def read(chunk: Sequence[tuple[str, int, int]]) -> list[tuple[Any, Any]]:
        cursor = conn.connection.cursor()
        try:
            out: list[tuple[Any, Any]] = []
            for sid, start, stop in chunk:
                _, found, calls, results = _fetched(cursor, pg, sid, start, stop)
                out += [((sid, i[0]), i) for i in _inputs(found, calls, results)]
            return out
        finally:
            cursor.close()

    return read


def _chunk(conn: Connection, ahead: Ahead[Any] | None = None,
           size: int = CHUNK_SESSIONS) -> MessageIndexUpdate:
    pg = conn.dialect.name == "postgresql"
    citus = pg and is_citus(conn)
    lock = " FOR UPDATE" if pg and not citus else ""  # SQLite: BEGIN IMMEDIATE holds the lock
    chunk = conn.exec_driver_sql(
        LAGGING + f" ORDER BY session_id LIMIT {int(size)}{lock}").all()
    if citus:  # row locks only in a statement routed to one shard: one session at a time
        locked = []
        for sid, _, _ in chunk:
            row = conn.exec_driver_sql(
                "SELECT session_id, message_indexed_position, next_position FROM sessions "
                "WHERE session_id = %(sid)s FOR UPDATE", {"sid": sid}).first()
            if row is not None and row[2] > row[1]:
                locked.append(row)
        chunk = locked
    if not chunk:
        return MessageIndexUpdate()
    cursor = conn.connection.cursor()
    try:
        # Every session's rows first, then their texts: on PostgreSQL they stream into the
        # COPY as they are made, so that the server computes the tsvector and its GIN entries
        # while this process redacts the next ones.
        fetched = [_fetched(cursor, pg, str(sid), int(start), int(stop))
                   for sid, start, stop in chunk]
        read = sum(len(f[1]) for f in fetched)
        mark = "%s" if pg else "?"
        made = 0
        if pg:
            with cursor.copy(f"COPY {MESSAGE_SEARCH} (session_id, position, role, body) "
                             "FROM STDIN") as copy:
                for one in fetched:
                    for index_row in _made(*one, ahead):
                        copy.write_row(index_row)
                        made += 1
        else:
            rows = [index_row for one in fetched for index_row in _made(*one, ahead)]
            made = len(rows)
            insert_sqlite_rows(cursor, rows)
        cursor.executemany(f"UPDATE sessions SET message_indexed_position = {mark} "
                           f"WHERE session_id = {mark}", [(stop, sid) for sid, _, stop in chunk])
    finally:
        cursor.close()
    return MessageIndexUpdate(len(chunk), read, made)


def insert_sqlite_rows(cursor: Any, rows: Sequence[tuple[str, int, str, str]]) -> None:
    """SQLite: index rows (session, position, role, body) into ``message_search`` and
    ``message_fts`` under the next free ids (the caller holds the write lock)."""
    cursor.execute("SELECT max(coalesce((SELECT seq FROM sqlite_sequence "
                   f"WHERE name = '{MESSAGE_SEARCH}'), 0), "
                   f"coalesce((SELECT max(id) FROM {MESSAGE_SEARCH}), 0))")
    first = int(cursor.fetchone()[0]) + 1
    numbered = [(first + i, *row) for i, row in enumerate(rows)]
    cursor.executemany(f"INSERT INTO {MESSAGE_SEARCH} (id, session_id, position, role, "
                       "body) VALUES (?, ?, ?, ?, ?)", numbered)
    cursor.executemany(f"INSERT INTO {MESSAGE_FTS} (rowid, body, role) VALUES (?, ?, ?)",
                       [(row[0], row[4], row[3]) for row in numbered])


def rebuild_message_index(conn: Connection) -> None:
    """Forget the whole message index (the next catch-up builds it again from the start),
    in the caller's transaction."""
    if not has_message_index(conn):
        return
    conn.exec_driver_sql(f"DELETE FROM {MESSAGE_SEARCH}")  # SQLite: the trigger empties the FTS
    if conn.dialect.name == "sqlite":
        # ... entry by entry, which leaves an index edited behind the catch-up's back
        # inconsistent: FTS5 rebuilds it from its (now empty) content table.
        conn.exec_driver_sql(f"INSERT INTO {MESSAGE_FTS}({MESSAGE_FTS}) VALUES ('rebuild')")
    conn.exec_driver_sql("UPDATE sessions SET message_indexed_position = 0 "
                         "WHERE message_indexed_position <> 0")


#: A problem :func:`check_message_index` found: (session, position or None, what is wrong).
IndexProblem = tuple[str, int | None, str]


def check_message_index(conn: Connection, session_id: str | None = None
                        ) -> list[IndexProblem]:
    """What is wrong with the message index, for ``verify`` (reads only): a watermark past
    the session's end, a row at or past the watermark, a message below it whose rows are
    not the ones :func:`store.records.messagetext.message_rows` gives for it now (missing,
    extra or different text), and on SQLite an FTS5 index that fails its own
    ``integrity-check``."""
    if not has_message_index(conn):
        return []
    pg = conn.dialect.name == "postgresql"
    p = "%s" if pg else "?"
    scope, params = ("WHERE session_id = " + p, (session_id,)) if session_id else ("", ())
    problems: list[IndexProblem] = []
    marks = conn.exec_driver_sql(
        f"SELECT session_id, message_indexed_position, next_position FROM sessions {scope} "
        "ORDER BY session_id", params).all()
    cursor = conn.connection.cursor()
    try:
        for sid, mark, stop in marks:
            sid, mark = str(sid), int(mark)
            if mark > int(stop):
                problems.append((sid, None, f"message index watermark {mark} is past the "
                                            f"session's end ({stop})"))
            cursor.execute(f"SELECT position, role, body FROM {MESSAGE_SEARCH} "
                           f"WHERE session_id = {p}", (sid,))
            stored: dict[int, dict[str, str]] = {}
            for pos, role, body in cursor.fetchall():
                if int(pos) >= mark:
                    problems.append((sid, int(pos), "message index row past the watermark"))
                else:
                    stored.setdefault(int(pos), {})[str(role)] = str(body)
            _, rows = _session_rows(cursor, pg, sid, 0, min(mark, int(stop)))
            expected: dict[int, dict[str, str]] = {}
            for _, pos, role, body in rows:
                expected.setdefault(pos, {})[role] = body
            for pos in sorted(set(stored) | set(expected)):
                have, want = stored.get(pos, {}), expected.get(pos, {})
                if have != want:
                    missing = sorted(set(want) - set(have))
                    extra = sorted(set(have) - set(want))
                    changed = sorted(r for r in set(have) & set(want) if have[r] != want[r])
                    problems.append((sid, pos, "message index: " + "; ".join(
                        f"{what} {', '.join(roles)}" for what, roles in (
                            ("missing", missing), ("extra", extra), ("text differs for", changed))
                        if roles)))
    finally:
        cursor.close()
    if not pg and session_id is None:
        try:
            conn.exec_driver_sql(f"INSERT INTO {MESSAGE_FTS} ({MESSAGE_FTS}, rank) "
                                 "VALUES ('integrity-check', 1)")
        except Exception as exc:  # noqa: BLE001 - the engine's own words are the report
            reason = str(getattr(exc, "orig", exc))
            if "readonly" not in reason:  # (a read-only open cannot run the check)
                problems.append(("", None, f"{MESSAGE_FTS} fails its integrity check: "
                                           f"{reason}"))
    return problems
