"""Per-session summaries of tool usage and token usage (persistence; derived data, kept off
the write path; driver SQL, no SQLAlchemy at run time: the command line's stdlib readers run
it too).

``tools usage`` and the ``usage`` reports fold, over the whole store (or an agent's or a
folder's sessions), what every call and every usage row gives; at 10^6 messages reading them
took 1.3 s and 1.7 s. Revision 0022 keeps that fold per session:

* ``tool_summary``: per (session, raw name, action): calls, invalid calls, calls with an error
  result, calls without a result, first and last call time (:func:`tool_rows_sql`), and
  the session's agent (revision 0026: ``ix_tool_summary_totals`` sums them without a join);
* ``usage_summary``: per (session, UTC day, model): responses, token sums, the tokens past
  the tiered-price threshold, the last response time (:func:`usage_rows_sql`);
* ``context_summary`` (revision 0027): per (session, UTC day, model, raw name): calls, their
  results, error results and the results' stored size (:func:`context_rows_sql`, for
  ``tools usage --by``), and the session's agent (revision 0028: ``ix_context_summary_totals``
  sums them without a join);
* ``session_summaries``: the stamp: the session's ``next_position`` and ``chain_digest``
  when summarized (every append, truncation or rewrite changes one of them; the chain covers
  every column the summaries read), :data:`VERSION` (what the rows mean: the editor tools'
  action arguments, the tier), and ``repeats``: whether one of its usage rows shares its
  response with another stored row.

:func:`catch_up_summaries` (the search catch-up, ``TranscriptStore.update_search_index``)
summarizes the sessions whose stamp does not match, a chunk per transaction under the
sessions' row locks. ``record_usage`` deletes a session's stamp (usage arrives after the
messages). A reader (:mod:`store.db.reading.summary_reads`) takes the rows of the sessions
whose stamp matches and reads the others' calls and usage as before, so an answer never
depends on whether the catch-up has run. ``verify`` recomputes every used row
(:func:`check_summaries`). Not on Citus (the stamp's repeats check joins usage rows across
shards): there nothing is kept and every report reads as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from store.core.arguments import dumps_json
from store.db.index.reads import short_reads
from store.db.reading.actions_sql import action_sql
from store.usage.prices import TIER_TOKENS

if TYPE_CHECKING:
    from sqlalchemy import Connection

__all__ = ["SUMMARY_TABLES", "VERSION", "action_sql", "catch_up_summaries", "check_summaries",
           "context_rows_sql", "current_sql", "forget_stamp", "forget_summaries", "ids_param",
           "in_ids", "keeps_summaries", "same_response", "sharing_sessions", "tool_rows_sql",
           "usage_rows_sql", "version_of"]

#: What the rows mean: a change of the editor tools' action arguments or of the tier makes
#: every stamp old (the sessions are summarized again, read as before meanwhile). It is
#: :func:`version_of` those two, written out so that a read does not import ``hashlib``
#: (OpenSSL: ~3-5 ms of a command); a test fails while it is not.
VERSION = "1:27aabc523baa4c67"


def version_of(actions: Mapping[str, str], tier: int) -> str:
    """The stamp version the summaries' meaning gives (:data:`VERSION` for this release's)."""
    import hashlib

    return "1:" + hashlib.sha256(dumps_json([sorted(actions.items()), tier]).encode()
                                 ).hexdigest()[:16]


SUMMARY_TABLES = ("session_summaries", "tool_summary", "usage_summary", "context_summary")
#: Sessions per catch-up transaction.
_CHUNK = 200
_COUNTS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
_USAGE_COLUMNS = (*_COUNTS, "reasoning_tokens", "input_past", "output_past",
                  "cache_creation_past", "cache_read_past")


def _pg(conn: Any) -> bool:
    return bool(conn.dialect.name == "postgresql")


def in_ids(pg: bool, column: str) -> str:
    """``column`` is one of the ids bound as one parameter (:func:`ids_param`)."""
    return f"{column} = ANY(%s)" if pg else f"{column} IN (SELECT value FROM json_each(?))"


def ids_param(pg: bool, ids: Sequence[str]) -> Any:
    return list(ids) if pg else dumps_json(list(ids))


def tool_rows_sql(pg: bool, condition: str) -> str:
    """Per (session, raw name, action) of the calls ``condition`` selects (over
    ``tool_calls``): ``s`` session, ``raw``, ``action``, ``calls``, ``invalid``, ``errors``
    (with an error result), ``unanswered`` (without a result), ``first_at`` and ``last_at``
    (the message's time)."""
    linked = ("r.session_id = tool_calls.session_id AND r.call_position = tool_calls.position "
              "AND r.call_index = tool_calls.call_index")
    error = "r.is_error" if pg else "r.is_error = 1"
    action = action_sql(pg)
    return ("SELECT tool_calls.session_id AS s, tool_calls.raw_name AS raw, "
            f"{action} AS action, count(*) AS calls, "
            "sum(CASE WHEN tool_calls.arguments_status IN ('ok', 'empty') THEN 0 ELSE 1 END) "
            f"AS invalid, sum(CASE WHEN EXISTS (SELECT 1 FROM tool_results AS r WHERE {linked} "
            f"AND {error}) THEN 1 ELSE 0 END) AS errors, "
            f"sum(CASE WHEN EXISTS (SELECT 1 FROM tool_results AS r WHERE {linked}) "
            "THEN 0 ELSE 1 END) AS unanswered, min(m.created_at) AS first_at, "
            "max(m.created_at) AS last_at "
            "FROM tool_calls JOIN messages AS m ON m.session_id = tool_calls.session_id "
            f"AND m.position = tool_calls.position WHERE {condition} "
            f"GROUP BY tool_calls.session_id, tool_calls.raw_name, {action}")


def day_sql(pg: bool) -> str:
    """The UTC day of ``m.created_at`` (as the reports group it)."""
    return ("to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')" if pg
            else "substr(m.created_at, 1, 10)")


def usage_rows_sql(pg: bool, condition: str) -> str:
    """Per (session, UTC day, model) of the usage rows ``condition`` selects (over ``u``):
    ``s`` session, ``day``, ``model``, ``n`` rows, ``c0``-``c4`` the five token sums,
    ``c5``-``c8`` the four sums past the tier, ``last_at``. Every row counts (a response stored
    twice is the reader's to count once)."""
    tier = int(TIER_TOKENS)
    sums = [f"sum(u.{c}) AS c{i}" for i, c in enumerate((*_COUNTS, "reasoning_tokens"))]
    past = [f"sum(CASE WHEN u.{c} > {tier} THEN u.{c} - {tier} ELSE 0 END) AS c{i + 5}"
            for i, c in enumerate(_COUNTS)]
    return (f"SELECT u.session_id AS s, {day_sql(pg)} AS day, u.model AS model, "
            f"count(*) AS n, {', '.join(sums + past)}, max(m.created_at) AS last_at "
            "FROM message_usage AS u JOIN messages AS m ON m.session_id = u.session_id "
            f"AND m.position = u.position WHERE {condition} "
            f"GROUP BY u.session_id, {day_sql(pg)}, u.model")


def context_rows_sql(pg: bool, condition: str) -> str:
    """Per (session, UTC day, model, raw name) of the calls ``condition`` selects (over ``c``
    and its message ``m``): ``s`` session, ``day``, ``model`` (of the call's message's usage
    row, else NULL), ``raw``, ``calls``, ``results``, ``chars`` (the results' stored JSON, in
    characters) and ``errors`` (error results). Each call's results are summed first, so a
    call answered twice is one call with two results (``tools usage --by``)."""
    error = "CASE WHEN r.is_error THEN 1 ELSE 0 END" if pg else "r.is_error"
    lookup = "messages AS m" if pg else "messages AS m INDEXED BY ix_messages_time"
    day = day_sql(pg)
    per_call = (f"SELECT c.session_id AS s, {day} AS day, u.model AS model, c.raw_name AS raw, "
                "count(r.session_id) AS results, sum(length(r.content_json)) AS chars, "
                f"sum({error}) AS errors FROM tool_calls AS c JOIN {lookup} "
                "ON m.session_id = c.session_id AND m.position = c.position "
                "LEFT JOIN message_usage AS u ON u.session_id = c.session_id "
                "AND u.position = c.position LEFT JOIN tool_results AS r "
                "ON r.session_id = c.session_id AND r.call_position = c.position "
                f"AND r.call_index = c.call_index WHERE {condition} "
                "GROUP BY c.session_id, c.position, c.call_index"
                + (f", {day}, u.model, c.raw_name" if pg else ""))
    return ("SELECT s, day, model, raw, count(*) AS calls, coalesce(sum(results), 0) AS results, "
            "coalesce(sum(chars), 0) AS chars, coalesce(sum(errors), 0) AS errors "
            f"FROM ({per_call}) AS per_call GROUP BY s, day, model, raw")


def same_response(pg: bool, a: str, b: str) -> str:
    """Rows ``a`` and ``b`` of ``message_usage`` hold the same response (the reports'
    ``PARTITION BY response_id, request_id``: NULL request ids alike)."""
    same = "IS NOT DISTINCT FROM" if pg else "IS"
    return (f"{b}.response_id = {a}.response_id AND {b}.request_id {same} {a}.request_id")


def _repeats_sql(pg: bool) -> str:
    """Whether a usage row of session ``s`` shares its response with another stored row."""
    return ("CASE WHEN EXISTS (SELECT 1 FROM message_usage AS x JOIN message_usage AS y ON "
            f"{same_response(pg, 'x', 'y')} AND (y.session_id <> x.session_id "
            "OR y.position <> x.position) WHERE x.session_id = s.session_id "
            "AND x.response_id IS NOT NULL) THEN 1 ELSE 0 END")


def current_sql(mark: str) -> str:
    """A session ``s`` whose stamp ``ss`` still matches (``mark``: :data:`VERSION`)."""
    return ("ss.next_position = s.next_position AND ss.chain_digest = s.chain_digest "
            f"AND ss.version = {mark}")


def _kept_sql(pg: bool) -> str:
    if pg:
        return ("SELECT to_regclass('session_summaries') IS NOT NULL AND NOT EXISTS ("
                "SELECT 1 FROM pg_extension WHERE extname = 'citus')")
    return ("SELECT count(*) = 1 FROM sqlite_master WHERE type = 'table' "
            "AND name = 'session_summaries'")


def keeps_summaries(conn: Any) -> bool:
    """Whether summaries are kept and read here: the tables are there, not on Citus (one
    statement, asked each time: a reader's statements do not depend on what it read before)."""
    return bool(conn.exec_driver_sql(_kept_sql(_pg(conn))).scalar())


def forget_stamp(cursor: Any, pg: bool, session_id: str) -> None:
    """:func:`forget_summaries` of one session on a DBAPI cursor (an append's transaction
    that stores the session's token usage)."""
    cursor.execute(_kept_sql(pg))
    if not cursor.fetchone()[0]:
        return
    mark = "%s" if pg else "?"
    if pg:  # (a catch-up summarizing it holds its row: wait for it, then drop its stamp)
        cursor.execute(f"SELECT 1 FROM sessions WHERE session_id = {mark} FOR SHARE",
                       (session_id,))
        cursor.fetchall()
    cursor.execute(f"DELETE FROM session_summaries WHERE session_id = {mark}", (session_id,))


def _lagging(pg: bool) -> str:
    mark = "%s" if pg else "?"
    return ("SELECT s.session_id FROM sessions AS s LEFT JOIN session_summaries AS ss "
            "ON ss.session_id = s.session_id WHERE s.chain_digest IS NOT NULL "
            f"AND (ss.session_id IS NULL OR NOT ({current_sql(mark)}))")


def catch_up_summaries(write: Callable[[Callable[[Connection], Any]], Any],
                       read_conn: Connection) -> int:
    """Summarize every session whose stamp does not match, a chunk of sessions per
    transaction run through ``write`` (the store's retrying write transaction); returns the
    sessions summarized."""
    with short_reads(read_conn):  # (no snapshot held while the chunks are written)
        if not keeps_summaries(read_conn):
            return 0
        pg = _pg(read_conn)
        if not read_conn.exec_driver_sql(_lagging(pg) + " LIMIT 1", (VERSION,)).first():
            return 0
    done = 0
    while True:
        count: int = write(_summarize_chunk)
        if not count:
            return done
        done += count


def _summarize_chunk(conn: Connection) -> int:
    pg = _pg(conn)
    mark = "%s" if pg else "?"
    lock = " FOR UPDATE OF s" if pg else ""  # SQLite: BEGIN IMMEDIATE holds the lock
    ids = [str(sid) for (sid,) in conn.exec_driver_sql(
        _lagging(pg) + f" ORDER BY s.session_id LIMIT {_CHUNK}{lock}", (VERSION,)).all()]
    if not ids:
        return 0
    summarize(conn, ids)
    conn.exec_driver_sql(
        "INSERT INTO session_summaries (session_id, next_position, chain_digest, version, "
        f"repeats) SELECT s.session_id, s.next_position, s.chain_digest, {mark}, "
        f"{'CAST(' + _repeats_sql(pg) + ' AS BOOLEAN)' if pg else _repeats_sql(pg)} "
        f"FROM sessions AS s WHERE {in_ids(pg, 's.session_id')}",
        (VERSION, ids_param(pg, ids)))
    return len(ids)


def summarize(conn: Connection, ids: Sequence[str]) -> None:
    """Replace the summary rows and stamps of these sessions (left without a stamp: the
    caller writes it) by what their calls and usage give now."""
    pg = _pg(conn)
    param = (ids_param(pg, ids),)
    for table in SUMMARY_TABLES:
        conn.exec_driver_sql(f"DELETE FROM {table} WHERE {in_ids(pg, 'session_id')}", param)
    conn.exec_driver_sql(
        "INSERT INTO tool_summary (session_id, item, raw_name, action, calls, invalid_calls, "
        "error_calls, unanswered_calls, first_at, last_at, agent) SELECT t.s, row_number() "
        "OVER (PARTITION BY t.s ORDER BY t.raw, t.action), t.raw, t.action, t.calls, "
        "t.invalid, t.errors, t.unanswered, t.first_at, t.last_at, a.agent FROM ("
        + tool_rows_sql(pg, in_ids(pg, "tool_calls.session_id")) + ") AS t JOIN sessions AS a "
        "ON a.session_id = t.s", param)
    columns = ", ".join(_USAGE_COLUMNS)
    conn.exec_driver_sql(
        f"INSERT INTO usage_summary (session_id, item, day, model, responses, {columns}, "
        "last_at) SELECT g.s, row_number() OVER (PARTITION BY g.s ORDER BY g.day, g.model), "
        f"g.day, g.model, g.n, {', '.join(f'g.c{i}' for i in range(len(_USAGE_COLUMNS)))}, "
        "g.last_at FROM (" + usage_rows_sql(pg, in_ids(pg, "u.session_id")) + ") AS g", param)
    conn.exec_driver_sql(
        "INSERT INTO context_summary (session_id, item, day, model, raw_name, calls, results, "
        "error_results, result_chars, agent) SELECT g.s, row_number() OVER (PARTITION BY g.s "
        "ORDER BY g.day, g.model, g.raw), g.day, g.model, g.raw, g.calls, g.results, g.errors, "
        "g.chars, a.agent FROM (" + context_rows_sql(pg, in_ids(pg, "c.session_id"))
        + ") AS g JOIN sessions AS a ON a.session_id = g.s", param)


def forget_summaries(conn: Connection, session_id: str | None = None) -> None:
    """Drop the stamp of one session (its usage changed) or of all (a rebuild): their
    rows are unused until summarized again."""
    if session_id is None:
        if keeps_summaries(conn):
            for table in SUMMARY_TABLES:
                conn.exec_driver_sql(f"DELETE FROM {table}")
        return
    cursor = conn.connection.cursor()  # (forget_stamp asks whether summaries are kept)
    try:
        forget_stamp(cursor, _pg(conn), session_id)
    finally:
        cursor.close()


def check_summaries(conn: Connection, session_id: str | None = None
                    ) -> list[tuple[str, str]]:
    """The sessions (all, or one) whose summary rows are used but are not what their calls
    and usage give: (session, what). Reads only."""
    if not keeps_summaries(conn):
        return []
    pg = _pg(conn)
    mark = "%s" if pg else "?"
    sql = ("SELECT s.session_id, ss.repeats FROM sessions AS s JOIN session_summaries AS ss "
           f"ON ss.session_id = s.session_id WHERE {current_sql(mark)}")
    params: tuple[Any, ...] = (VERSION,)
    if session_id is not None:
        sql += f" AND s.session_id = {mark}"
        params += (session_id,)
    current = {str(sid): bool(flag) for sid, flag in
               conn.exec_driver_sql(sql + " ORDER BY s.session_id", params).all()}
    ids = sorted(current)
    out: list[tuple[str, str]] = []
    for at in range(0, len(ids), _CHUNK):
        chunk = ids[at:at + _CHUNK]
        param = (ids_param(pg, chunk),)
        for what, stored, live in (
            ("tool usage", "SELECT session_id, raw_name, action, calls, invalid_calls, "
                           "error_calls, unanswered_calls, first_at, last_at FROM tool_summary "
                           f"WHERE {in_ids(pg, 'session_id')}",
             tool_rows_sql(pg, in_ids(pg, "tool_calls.session_id"))),
            ("token usage", f"SELECT session_id, day, model, responses, {', '.join(_USAGE_COLUMNS)}"
                            f", last_at FROM usage_summary WHERE {in_ids(pg, 'session_id')}",
             usage_rows_sql(pg, in_ids(pg, "u.session_id"))),
            ("tool context", "SELECT session_id, day, model, raw_name, calls, results, "
                             "result_chars, error_results FROM context_summary WHERE "
                             f"{in_ids(pg, 'session_id')}",
             context_rows_sql(pg, in_ids(pg, "c.session_id"))),
        ):
            kept = _by_session(conn.exec_driver_sql(stored, param).all())
            given = _by_session(conn.exec_driver_sql(live, param).all())
            for sid in chunk:
                if kept.get(sid, []) != given.get(sid, []):
                    out.append((sid, f"the {what} summary is not what its rows give"))
        for table, what in (("tool_summary", "tool usage"), ("context_summary", "tool context")):
            for (sid,) in conn.exec_driver_sql(
                    f"SELECT DISTINCT t.session_id FROM {table} AS t JOIN sessions AS s ON "
                    f"s.session_id = t.session_id WHERE {in_ids(pg, 't.session_id')} AND "
                    f"t.agent IS {'DISTINCT FROM' if pg else 'NOT'} s.agent", param).all():
                out.append((str(sid), f"the {what} summary does not name its session's agent"))
        for sid in sorted(sharing_sessions(conn, chunk)):
            if not current[sid]:
                out.append((sid, "a response stored twice is not marked (repeats)"))
    return out


def sharing_sessions(conn: Any, ids: Sequence[str]) -> set[str]:
    """Of these sessions, those holding a usage row whose response another stored row holds
    (what ``session_summaries.repeats`` says of a summarized one)."""
    pg = _pg(conn)
    return {str(sid) for (sid,) in conn.exec_driver_sql(
        f"SELECT s.session_id FROM sessions AS s WHERE {in_ids(pg, 's.session_id')} AND "
        f"{_repeats_sql(pg)} = 1", (ids_param(pg, ids),)).all()}


def _by_session(rows: Sequence[Any]) -> dict[str, list[tuple[Any, ...]]]:
    out: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        out.setdefault(str(row[0]), []).append(tuple(row))
    for found in out.values():
        found.sort(key=lambda r: tuple((v is None, "" if v is None else str(v)) for v in r))
    return out
