"""The search index, kept off the write path and caught up from a watermark (persistence).

Appends write only the transcript. What full-text and argument searches look in (the decoded
text of ``store.records.searchtext``) is indexed later, in bulk, by :func:`catch_up`:

* **Watermark**: ``sessions.indexed_position``; the messages of a session before it are
  indexed. ``ix_sessions_search_behind`` (a partial index: ``next_position >
  indexed_position``) lists the sessions with new messages, so "is there anything to index?"
  is one index probe. The writer only moves ``next_position`` (it did already); a session's
  rows and its ``next_position`` commit together, so a session whose watermark is behind
  shows exactly the committed rows to index. ``truncate`` lowers the watermark with
  ``next_position``.
* **Text in the rows** (revision 0023): each call's and result's decoded text is its own
  ``search_body`` column (NULL until the catch-up reaches it), so a row and its text cannot
  part: a search checks that no call or result below the watermark lacks its text with one
  probe of ``ix_tool_calls_unindexed`` / ``ix_tool_results_unindexed`` (partial: the rows
  whose text is NULL), not an anti-join of two tables (``store/db/index/index_check.py``). On
  SQLite the text is indexed by ``search_fts`` (FTS5, trigram, ``detail=none``: a search asks
  it for the rows holding the needle's trigrams and ``instr`` on the text decides), each
  entry under its row's ``search_id`` (given here, in order: close ids keep FTS5's varint
  deltas short; a row caught up again keeps its id), an external-content table over the view
  ``search_items`` (so sqlite-utils and Datasette read it); triggers take a deleted row's
  text out of it. On PostgreSQL a pg_trgm GIN on each
  ``search_body`` (``fastupdate`` on: a bulk catch-up lands in the pending list and is
  merged in one go).
* **When**: at the first search after new writes when the store is writable
  (``store.audit.search``), at the end of ``transcript-store import`` (shown in its
  progress), or from ``transcript-store db index`` / ``TranscriptStore.update_search_index``.
  A chunk of sessions per transaction, their rows locked meanwhile.
* **Folded**: the text is stored folded (``store.records.searchtext.fold``) and needles are
  folded before SQL, so the index and the tail scan agree. After bulk work the catch-up
  refreshes the PostgreSQL statistics of the tables a search joins
  (:func:`refresh_statistics`).
* **No secrets** (revision 0011): the text and the argument views are indexed redacted
  (``store.trust.secrets.index_text``: the detectors' markers instead of the secrets), and
  the keyed digest of each secret found goes to ``call_secrets`` (``store/db/index/secrets.py``)
  in the same catch-up; the tail scan matches the same redacted text.
* **Never stale**: a search also scans, exactly, what is not indexed yet (:func:`tail_keys`:
  the rows at or after each lagging session's watermark, decoded in Python), so a read-only
  open (which never writes) and a search racing a writer's commit see every committed call.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from store.core.logs import logger
from store.db.index import fts_bulk
from store.db.index.reads import idle_now, read_briefly, short_reads
from store.db.index.secrets import SecretRow, insert_secrets, secret_rows, store_key
from store.db.schema.wiretext import wire_sql
from store.records.itemtexts import (
    call_made,
    make_items,
    result_made,
    searchable,
    view_texts,
)
from store.records.searchtext import call_search_text, result_search_text, text_matches
from store.trust.secrets import index_text

if TYPE_CHECKING:  # (the read side runs on a stdlib connection too: store/db/reading/driver.py)
    from sqlalchemy import Connection, Engine

    from store.db.index.ahead import Ahead

__all__ = [
    "CALL_VIEWS",
    "IndexUpdate",
    "KIND_CALL",
    "KIND_RESULT",
    "SEARCH_FTS",
    "SEARCH_ITEMS",
    "SETTLE_ITEMS",
    "catch_up",
    "has_search_index",
    "lagging",
    "merge_pending",
    "next_search_id",
    "nul_safe",
    "rebuild_statements",
    "settle",
    "tail_keys",
    "view_tail",
    "view_texts",
]

_log = logger(__name__)

SEARCH_ITEMS = "search_items"
CALL_VIEWS = "call_views"
SEARCH_FTS = "search_fts"
KIND_CALL = 0
KIND_RESULT = 1
#: Sessions caught up per transaction (their rows are locked meanwhile).
CHUNK_SESSIONS = 200

_LAGGING = ("SELECT session_id, indexed_position, next_position FROM sessions "
            "WHERE next_position > indexed_position")


@dataclass(frozen=True, slots=True)
class IndexUpdate:
    """What a catch-up indexed: sessions, calls and results, and how long it took;
    ``messages``: the messages the message index took in (``store/db/index/message_index.py``);
    ``summarized``: the sessions whose usage summaries were made again
    (``store/db/index/summaries.py``)."""

    sessions: int = 0
    calls: int = 0
    results: int = 0
    seconds: float = 0.0
    messages: int = 0
    summarized: int = 0

    def __add__(self, other: IndexUpdate) -> IndexUpdate:
        return IndexUpdate(self.sessions + other.sessions, self.calls + other.calls,
                           self.results + other.results, self.seconds + other.seconds,
                           self.messages + other.messages, self.summarized + other.summarized)


_PRESENT: weakref.WeakKeyDictionary[Engine, bool] = weakref.WeakKeyDictionary()


def has_search_index(conn: Connection) -> bool:
    """Whether this database has a full-text index of the call text (PostgreSQL: the trigram
    GIN; SQLite: ``search_fts``, which an SQLite library without FTS5's trigram tokenizer
    does not get: searches then scan every row exactly, as the tail is scanned)."""
    if conn.dialect.name != "sqlite":
        return True
    key = conn.engine
    known = _PRESENT.get(key)
    if known is None:
        found = conn.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
            (SEARCH_FTS,)).scalar_one()
        known = _PRESENT[key] = found == 1
    return known


def lagging(conn: Connection, *, limit: int | None = None, session_id: str | None = None
            ) -> list[tuple[str, int, int]]:
    """Sessions with messages not indexed yet: (session_id, indexed_position, next_position)
    (``ix_sessions_search_behind``); with ``session_id``, that session if it is lagging."""
    if idle_now(conn.engine) is not None:
        return []  # (this read operation found the state where a catch-up found none)
    params: tuple[str, ...] = ()
    sql = _LAGGING
    if session_id is not None:
        sql += " AND session_id = " + ("%s" if conn.dialect.name == "postgresql" else "?")
        params = (session_id,)
    sql += " ORDER BY session_id" + (f" LIMIT {int(limit)}" if limit else "")
    return [(str(s), int(i), int(n)) for s, i, n in conn.exec_driver_sql(sql, params).all()]


#: What each reader of the calls needs after (position, call_index): the text index the wire
#: text, the argument views the raw name and the queryable arguments; the catch-up also what
#: the row holds already (``stored``: a row caught up again keeps its id, its old entry leaves
#: the full-text index).
_TEXT = "{wire}"  # (the wire text: :func:`_rows` spells it for the backend)
_VIEWS = "raw_name, arguments"
_STORED = "search_body, search_id"


def _rows(cursor: Any, pg: bool, sid: str, start: int, stop: int | None,
          results: bool, columns: str, *, stored: bool = False) -> tuple[list[Any], list[Any]]:
    p = "%s" if pg else "?"
    bound = f" AND position < {p}" if stop is not None else ""
    params = (sid, start, stop) if stop is not None else (sid, start)
    if stored:
        columns += f", {_STORED}"
    columns = columns.replace(_TEXT, wire_sql(pg))
    cursor.execute(f"SELECT position, call_index, {columns} FROM tool_calls "
                   f"WHERE session_id = {p} AND position >= {p}{bound}", params)
    calls = cursor.fetchall()
    found: list[Any] = []
    if results:
        old = f", {_STORED}" if stored else ""
        cursor.execute("SELECT position, result_index, call_position, call_index, content_json"
                       f"{old} FROM tool_results WHERE session_id = {p} AND position >= {p}"
                       f"{bound}", params)
        found = cursor.fetchall()
    return calls, found


def next_search_id(cursor: Any) -> int:
    """SQLite: the first free ``search_id`` (after the largest of either table: their unique
    indexes' last entries; the writer holds the lock)."""
    # (spelt so that the partial indexes answer: a bare max() scans the table)
    last = ("coalesce((SELECT search_id FROM {} WHERE search_id IS NOT NULL "
            "ORDER BY search_id DESC LIMIT 1), 0)")
    cursor.execute(f"SELECT max({last.format('tool_calls')}, {last.format('tool_results')})")
    return int(cursor.fetchone()[0]) + 1


def nul_safe(text: str) -> str:
    """The text PostgreSQL's ``search_body`` holds (NUL made U+FFFD)."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def catch_up(write: Callable[[Callable[[Connection], Any]], Any], read_conn: Connection,
             *, progress: Callable[[IndexUpdate, int], None] | None = None,
             workers: int = 1) -> IndexUpdate:
    """Index every committed message not indexed yet, a chunk of sessions per transaction
    run through ``write`` (the store's retrying write transaction). ``progress`` gets the
    running totals and the number of sessions that were lagging at the start. ``workers``
    > 1: the texts of the chunks ahead are made in that many worker processes meanwhile
    (``store/db/index/ahead.py``; the same rows are written)."""
    total = IndexUpdate()
    with short_reads(read_conn):  # (no snapshot held while the chunks are written)
        behind = lagging(read_conn)
    waiting = len(behind)
    if not waiting:
        return total
    started = time.perf_counter()
    with short_reads(read_conn):
        present = has_search_index(read_conn)
    # (SQLite: many messages waiting, the full-text entries merged once, at the end)
    bulk = present and fts_bulk.started(write, read_conn, SEARCH_FTS, behind)
    ahead: Ahead[Any] | None = None
    if workers > 1:
        from store.db.index.ahead import start  # (multiprocessing: not on reads)

        ahead = start(workers, behind, CHUNK_SESSIONS,
                      read_briefly(read_conn, _read_ahead(read_conn)), make_items)
    try:
        while True:
            size = (ahead.next_chunk() if ahead is not None else None) or CHUNK_SESSIONS
            done: IndexUpdate = write(partial(_catch_up_chunk, ahead=ahead, size=size))
            if not done.sessions:
                break
            total = total + done
            total = IndexUpdate(total.sessions, total.calls, total.results,
                                time.perf_counter() - started)
            if progress is not None:
                progress(total, waiting)
    finally:
        if ahead is not None:
            ahead.close()
            _log.info("index texts made ahead: %d used, %d made in the transaction",
                      ahead.hits, ahead.misses)
    if bulk:  # (a catch-up that stopped leaves the settings: the next one finishes)
        fts_bulk.finish(write, SEARCH_FTS)
    return IndexUpdate(total.sessions, total.calls, total.results,
                       time.perf_counter() - started)


def settle(write: Callable[[Callable[[Connection], Any]], Any], read_conn: Connection,
           items: int, rows: int) -> None:
    """PostgreSQL after bulk indexing (``items`` calls and results, ``rows`` message index
    rows, by the catch-ups or with an import's rows): the GIN pending lists merged in one go
    past a threshold, the statistics of the tables a search joins refreshed; nothing on
    SQLite and Citus, nor when nothing was indexed."""
    from store.db.index.message_index import SETTLE_ROWS, settle_messages
    from store.db.schema.distribute import is_citus

    with short_reads(read_conn):
        if not items + rows or read_conn.dialect.name != "postgresql" or is_citus(read_conn):
            return
    if items >= SETTLE_ITEMS:
        write(merge_pending)
    if rows >= SETTLE_ROWS:
        write(settle_messages)
    write(refresh_statistics)


#: After a catch-up of this many items, PostgreSQL merges the GIN pending list in bulk.
SETTLE_ITEMS = 2000

#: The tables an import fills and a search joins: their statistics are kept current after
#: bulk work (``refresh_statistics``).
ANALYZED_TABLES = ("sessions", "messages", "tool_calls", "tool_results", CALL_VIEWS)


def merge_pending(conn: Connection) -> None:
    """Merge the pending list of the trigram GIN into the index in one go, so that the next
    search reads a built index (skipped without the rights)."""
    for index in ("ix_tool_calls_search_trgm", "ix_tool_results_search_trgm"):
        _quietly(conn, f"SELECT gin_clean_pending_list('{index}')")


def refresh_statistics(conn: Connection) -> list[str]:
    """PostgreSQL: ANALYZE each of :data:`ANALYZED_TABLES` that has no statistics yet or
    that grew by more than a tenth (and 8 pages) since its last ANALYZE (the size recorded
    then, ``relpages``, against its size now: pg_stat's change counters reach other sessions
    up to seconds late), as autovacuum would, later or never (it may be off,
    or not have run yet after a bulk load). The planner's choices (a trigram index or a
    scan, a hash join or a nested loop) rest on them. Returns the tables analyzed; a table
    the user does not own is left to autovacuum."""
    stale = [str(name) for (name,) in conn.exec_driver_sql(
        "SELECT c.relname FROM pg_class AS c "
        "WHERE c.relnamespace = to_regnamespace(current_schema())::oid AND c.relkind = 'r' "
        "AND c.relname = ANY(%(names)s) "
        "AND (c.reltuples < 0 OR pg_relation_size(c.oid) > (1.1 * c.relpages + 8) * "
        "current_setting('block_size')::int) "
        "ORDER BY c.relname", {"names": list(ANALYZED_TABLES)}).all()]
    return [name for name in stale if _quietly(conn, f"ANALYZE {name}")]


def _quietly(conn: Connection, statement: str) -> bool:
    savepoint = conn.begin_nested()
    try:
        conn.exec_driver_sql(statement)
        savepoint.commit()
    except Exception:  # noqa: BLE001 - not the owner: autovacuum will do it
        savepoint.rollback()
        return False
    return True


def _read_ahead(conn: Connection) -> Callable[[Sequence[tuple[str, int, int]]],
                                              list[tuple[Any, Any]]]:
    """The rows of a planned chunk as :class:`store.db.index.ahead.Ahead` takes them."""
    pg = conn.dialect.name == "postgresql"

    def read(chunk: Sequence[tuple[str, int, int]]) -> list[tuple[Any, Any]]:
        out: list[tuple[Any, Any]] = []
        cursor = conn.connection.cursor()
        try:
            for sid, start, stop in chunk:
                call_rows, result_rows = _rows(cursor, pg, sid, start, stop, True,
                                               f"{_VIEWS}, {_TEXT}")
                out += [((sid, KIND_CALL, pos, idx), (sid, pos, raw_name, arguments, wire))
                        for pos, idx, raw_name, arguments, wire in call_rows]
                out += [((sid, KIND_RESULT, pos, idx), (sid, pos, content))
                        for pos, idx, _cpos, _cidx, content in result_rows]
        finally:
            cursor.close()
        return out

    return read


def _catch_up_chunk(conn: Connection, ahead: Ahead[Any] | None = None,
                    size: int = CHUNK_SESSIONS) -> IndexUpdate:
    pg = conn.dialect.name == "postgresql"
    from store.db.schema.distribute import is_citus

    citus = pg and is_citus(conn)
    lock = " FOR UPDATE" if pg and not citus else ""  # SQLite: BEGIN IMMEDIATE holds the lock
    chunk = conn.exec_driver_sql(
        _LAGGING + f" ORDER BY session_id LIMIT {int(size)}{lock}").all()
    if citus:
        # Citus locks rows only in a statement routed to one shard: lock the chunk's sessions
        # one by one (in the same order), reading their positions again under the lock.
        locked = []
        for sid, _, _ in chunk:
            row = conn.exec_driver_sql(
                "SELECT session_id, indexed_position, next_position FROM sessions "
                "WHERE session_id = %(sid)s FOR UPDATE", {"sid": sid}).first()
            if row is not None and row[2] > row[1]:
                locked.append(row)
        chunk = locked
    if not chunk:
        return IndexUpdate()
    fts = not pg and has_search_index(conn)
    per_row = citus or not pg  # (a plain PostgreSQL: one UPDATE per chunk and table)
    cursor = conn.connection.cursor()
    try:
        views: list[tuple[Any, ...]] = []
        found: set[SecretRow] = set()
        key = store_key(conn)
        fetched = [(sid, _rows(cursor, pg, sid, start, stop, True, f"{_VIEWS}, {_TEXT}",
                               stored=True)) for sid, start, stop in chunk]
        calls = sum(len(c) for _, (c, _) in fetched)
        results = sum(len(r) for _, (_, r) in fetched)
        next_id = next_search_id(cursor) if not pg else 0
        bodies: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]] = ([], [])
        entries: list[tuple[int, str]] = []  # (search_fts id, text)
        stale: list[tuple[int, str]] = []  # entries of rows caught up again

        def entry(body: str, old_body: str | None, old_id: int | None) -> int | None:
            """The row's ``search_id`` (SQLite; a row caught up again keeps its own, its
            old entry taken out) and its full-text entry."""
            nonlocal next_id
            if pg:
                return None
            if old_id is None:
                old_id, next_id = next_id, next_id + 1
            elif fts and old_body is not None:
                stale.append((old_id, old_body))
            if fts:
                entries.append((old_id, body))
            return old_id

        for sid, (call_rows, result_rows) in fetched:
            for pos, idx, raw_name, arguments, wire, old_body, old_id in call_rows:
                inputs = (sid, pos, raw_name, arguments, wire)
                call = ahead.made((sid, KIND_CALL, pos, idx), inputs) if ahead else None
                body, secrets, call_views = call or call_made(inputs)
                if secrets:
                    found.update(secret_rows(key, sid, pos, KIND_CALL, idx, pos, idx, secrets))
                bodies[KIND_CALL].append((nul_safe(body) if pg else body,
                                          entry(body, old_body, old_id), sid, pos, idx))
                for view, value in call_views:
                    views.append((sid, pos, idx, view, value))
            for pos, idx, cpos, cidx, content, old_body, old_id in result_rows:
                given = (sid, pos, content)
                result = ahead.made((sid, KIND_RESULT, pos, idx), given) if ahead else None
                body, secrets = result or result_made(given)
                if secrets:
                    found.update(secret_rows(key, sid, pos, KIND_RESULT, idx, cpos, cidx,
                                             secrets))
                bodies[KIND_RESULT].append((nul_safe(body) if pg else body,
                                            entry(body, old_body, old_id), sid, pos, idx))
        mark = "%s" if pg else "?"
        # The chunk owns its sessions' rows from the watermark on: what derived rows are
        # there (a watermark lowered behind the catch-up's back) are made again, not doubled.
        lowered = [(sid, start) for sid, start, _ in chunk if start > 0]
        for table in (CALL_VIEWS, "call_secrets") if lowered else ():
            cursor.executemany(f"DELETE FROM {table} WHERE session_id = {mark} "
                               f"AND position >= {mark}", lowered)
        if stale:
            cursor.executemany(f"INSERT INTO {SEARCH_FTS} ({SEARCH_FTS}, rowid, body) "
                               "VALUES ('delete', ?, ?)", stale)
        for kind, (table, index) in enumerate((("tool_calls", "call_index"),
                                               ("tool_results", "result_index"))):
            if not bodies[kind]:
                continue
            if per_row:
                cursor.executemany(
                    f"UPDATE {table} SET search_body = {mark}, search_id = {mark} "
                    f"WHERE session_id = {mark} AND position = {mark} AND {index} = {mark}",
                    bodies[kind])
            else:  # one statement per chunk (no search_id: PostgreSQL has no FTS5)
                texts, _, sids, positions, items = zip(*bodies[kind], strict=True)
                cursor.execute(
                    f"UPDATE {table} AS t SET search_body = v.body FROM unnest("
                    "CAST(%s AS TEXT[]), CAST(%s AS VARCHAR[]), CAST(%s AS INTEGER[]), "
                    "CAST(%s AS INTEGER[])) AS v(body, session_id, position, item) "
                    "WHERE t.session_id = v.session_id AND t.position = v.position "
                    f"AND t.{index} = v.item",
                    [list(texts), list(sids), list(positions), list(items)])
        if entries:
            cursor.executemany(f"INSERT INTO {SEARCH_FTS} (rowid, body) VALUES (?, ?)",
                               entries)
        insert_secrets(cursor, pg, found)
        if views:
            cursor.executemany(f"INSERT INTO {CALL_VIEWS} (session_id, position, call_index, "
                               f"view, text) VALUES ({mark}, {mark}, {mark}, {mark}, {mark})",
                               views)
        cursor.executemany(
            f"UPDATE sessions SET indexed_position = {mark} WHERE session_id = {mark}",
            [(stop, sid) for sid, _, stop in chunk])
    finally:
        cursor.close()
    return IndexUpdate(len(chunk), calls, results)


def _tail_sessions(conn: Connection, everything: bool, session_id: str | None,
                   also: Collection[str]) -> list[tuple[str, int]]:
    """(session, first position) of what a search scans exactly: every session from its
    start (``everything``), or the lagging ones from their watermark and ``also`` (sessions
    whose index is not trusted) from their start; ``session_id``: that one only."""
    if everything and session_id is not None:
        return [(session_id, 0)]
    if everything:
        return [(str(s), 0) for (s,) in conn.exec_driver_sql(
            "SELECT session_id FROM sessions ORDER BY session_id").all()]
    starts = {s: i for s, i, _ in lagging(conn, session_id=session_id)}
    for sid in also:
        if session_id is None or sid == session_id:
            starts[sid] = 0
    return sorted(starts.items())


def tail_keys(conn: Connection, needle: str, *, results: bool,
              everything: bool = False, session_id: str | None = None,
              also: Collection[str] = ()) -> list[tuple[str, int, int]]:
    """The calls not indexed yet whose searchable text (or, with ``results``, a linked
    result's) contains ``needle`` (the exact rule of ``store.records.searchtext``). ``everything``
    scans every session from its start (a database without the index, or a search that
    trusts none). ``session_id`` confines it to one session; ``also``: sessions scanned
    from their start (their index rows do not line up with the transcript)."""
    sessions = _tail_sessions(conn, everything, session_id, also)
    if not sessions:
        return []
    pg = conn.dialect.name == "postgresql"
    keys: set[tuple[str, int, int]] = set()
    cursor = conn.connection.cursor()
    try:
        for sid, start in sessions:
            call_rows, result_rows = _rows(cursor, pg, sid, start, None, results, _TEXT)
            for pos, idx, wire in call_rows:
                if text_matches(index_text(searchable(call_search_text, wire, sid, pos))[0],
                                needle):
                    keys.add((sid, pos, idx))
            for _pos, _idx, cpos, cidx, content in result_rows:
                if cpos is not None and text_matches(index_text(
                        searchable(result_search_text, content, sid, _pos))[0], needle):
                    keys.add((sid, int(cpos), int(cidx)))
    finally:
        cursor.close()
    return sorted(keys)


def view_tail(conn: Connection, view: str, *, session_id: str | None = None,
              everything: bool = False, also: Collection[str] = ()
              ) -> list[tuple[str, int, int, str]]:
    """(session, position, call index, text) of the ``view`` of every call the catch-up has
    not reached yet (the search matches them with the same SQL condition as the indexed
    rows). ``session_id`` confines it to one session; ``everything`` and ``also`` as for
    :func:`tail_keys`."""
    sessions = _tail_sessions(conn, everything, session_id, also)
    if not sessions:
        return []
    pg = conn.dialect.name == "postgresql"
    out: list[tuple[str, int, int, str]] = []
    cursor = conn.connection.cursor()
    try:
        for sid, start in sessions:
            call_rows, _ = _rows(cursor, pg, sid, start, None, False, _VIEWS)
            for pos, idx, raw_name, arguments in call_rows:
                for name, value in view_texts(raw_name, arguments):
                    if name == view:
                        out.append((sid, int(pos), int(idx), value))
    finally:
        cursor.close()
    return out


def fts_query(needle: str) -> str:
    """An FTS5 query matching ``needle`` as a phrase: with the trigram tokenizer, a
    case-insensitive substring."""
    return '"' + needle.replace('"', '""') + '"'


def rebuild_statements(dialect: str, *, indexed: bool = True) -> Iterator[str]:
    """Forget the whole index (it is then caught up from the start), e.g. to drop rows
    edited behind the catch-up's back (``verify``). One transaction. ``indexed``: SQLite has
    ``search_fts`` (an SQLite library without FTS5 trigram has only the text and views)."""
    if indexed and dialect == "sqlite":
        # The FTS index is emptied whole ('delete-all'), not row by row through the delete
        # triggers: an index that differs from the text (edited behind the catch-up's back)
        # would make FTS5 report the file as malformed.
        yield f"INSERT INTO {SEARCH_FTS}({SEARCH_FTS}) VALUES ('delete-all')"
    for table in ("tool_calls", "tool_results"):
        yield (f"UPDATE {table} SET search_body = NULL, search_id = NULL "
               "WHERE search_body IS NOT NULL OR search_id IS NOT NULL")
    yield f"DELETE FROM {CALL_VIEWS}"
    yield "DELETE FROM call_secrets"
    yield "UPDATE sessions SET indexed_position = 0 WHERE indexed_position <> 0"


def chunks(values: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start:start + size]
