"""Token usage rows: written beside the messages, read back for the reports (persistence).

``message_usage`` (revision 0008) holds one row per message whose response recorded a usage,
keyed like the message. :func:`record_usage` writes the rows of an import in one transaction,
after its messages are stored, by message key: a row already there is kept (``ON CONFLICT DO
NOTHING``), so a re-import stores nothing twice and fills in the usage of messages stored
before the store kept usage. A session's totals (``response_id`` :data:`SESSION_TOTALS`: an
agent that counts per session only) are replaced instead: the agent's latest count wins.
Appends never write it (the write path stays as it was).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from store.core.lineage import MAX_TREE_DEPTH
from store.db.index.summaries import forget_stamp, ids_param, in_ids, same_response
from store.db.schema.sqlitefile import cwd_pattern, read_time, stored_time
from store.usage.tokens import SESSION_TOTALS, TokenUsage

if TYPE_CHECKING:  # (the reports read the rows on a stdlib connection too)
    from sqlalchemy import Connection

__all__ = ["USAGE_COLUMNS", "UsageSums", "record_usage", "repeated_sessions", "scope_where",
           "subagent_roots", "usage_groups", "usage_sums", "write_usage"]

USAGE_COLUMNS = ("model", "request_id", "response_id", "input_tokens", "output_tokens",
                 "cache_creation_tokens", "cache_read_tokens", "reasoning_tokens")


def record_usage(conn: Connection, session_id: str, usage: Mapping[str, TokenUsage]) -> int:
    """Store the usage of the messages of ``session_id`` stored under these keys (a key with
    no stored message is passed over); the number of rows written."""
    if not usage:
        return 0
    cursor = conn.connection.cursor()
    try:
        return write_usage(cursor, conn.dialect.name == "postgresql", session_id, usage)
    finally:
        cursor.close()


def write_usage(cursor: Any, pg: bool, session_id: str, usage: Mapping[str, TokenUsage],
                *, count: bool = True) -> int:
    """:func:`record_usage` on a DBAPI cursor, in the caller's transaction (an append that
    stores a file's messages and their usage together); ``count=False``: the rows written
    are not counted (0; two reads fewer)."""
    if not usage:
        return 0
    mark = "%s" if pg else "?"
    sql = (f"INSERT INTO message_usage (session_id, position, {', '.join(USAGE_COLUMNS)}) "
           f"SELECT session_id, position, {', '.join([mark] * len(USAGE_COLUMNS))} "
           f"FROM messages WHERE session_id = {mark} AND message_key = {mark} "
           "ON CONFLICT (session_id, position) DO NOTHING")
    # (a session's totals: the agent's latest count replaces the one stored before)
    replace = sql.replace("DO NOTHING", "DO UPDATE SET " + ", ".join(
        f"{c} = excluded.{c}" for c in USAGE_COLUMNS)
        + f" WHERE message_usage.response_id = {mark}")
    rows = [(u.model, u.request_id, u.response_id, u.input_tokens, u.output_tokens,
             u.cache_creation_tokens, u.cache_read_tokens, u.reasoning_tokens, session_id, key)
            for key, u in usage.items()]
    totals = [(*row, SESSION_TOTALS) for row in rows if row[2] == SESSION_TOTALS]
    # (the session's usage summary no longer holds: store/db/index/summaries.py)
    forget_stamp(cursor, pg, session_id)
    before = _count(cursor, mark, session_id) if count else 0
    cursor.executemany(sql, [row for row in rows if row[2] != SESSION_TOTALS])
    if totals:
        cursor.executemany(replace, totals)
    return _count(cursor, mark, session_id) - before if count else 0


def _count(cursor: Any, mark: str, session_id: str) -> int:
    cursor.execute(f"SELECT count(*) FROM message_usage WHERE session_id = {mark}",
                   (session_id,))
    return int(cursor.fetchone()[0])


def scope_where(conn: Connection, *, since: datetime | None, until: datetime | None,
                agent: str | None, cwd: str | None,
                session: tuple[str, str | None] = ("", None)) -> tuple[list[str], list[Any]]:
    """The WHERE terms and parameters of the reports' filters, over a query that joins the
    messages as ``m`` and the sessions as ``s``: message time, agent, the session's folder or
    below it (as ``sessions list --cwd``), and one session (``(column, id)``)."""
    pg = conn.dialect.name == "postgresql"
    mark = "%s" if pg else "?"
    where: list[str] = []
    params: list[Any] = []
    for clause, value in (("m.created_at >= ", since), ("m.created_at < ", until),
                          (f"{session[0]} = ", session[1]), ("s.agent = ", agent)):
        if value is not None:
            where.append(clause + mark)
            params.append(stored_time(value) if not pg and isinstance(value, datetime)
                          else value)
    if cwd is not None:
        folder, below = cwd_pattern(cwd)
        where.append(f"(s.cwd = {mark} OR s.cwd LIKE {mark} ESCAPE '\\')")
        params.extend([folder, below])
    return where, params


class UsageSums(NamedTuple):
    """The stored usage of one session's responses of one model on one UTC day, summed in
    the database (a response counted once: see :func:`usage_groups`). ``tiered``: per count
    (input, output, cache creation, cache read), the tokens past a tiered price's threshold,
    summed over the responses past it (what the higher price applies to). A named tuple:
    a report makes one per group, thousands (a frozen dataclass's init costs three times as
    much)."""

    day: str
    session_id: str
    agent: str | None
    cwd: str | None
    model: str | None
    responses: int
    counts: tuple[int, int, int, int, int]  # input, output, cache creation, cache read, reasoning
    tiered: tuple[int, int, int, int]
    last_at: datetime


def usage_groups(conn: Connection, *, tier: int, since: datetime | None = None,
                 until: datetime | None = None, session_id: str | None = None,
                 agent: str | None = None, cwd: str | None = None,
                 among: Sequence[str] | None = None) -> Iterator[UsageSums]:
    """The usage rows within the filters, each response counted once (the first row of a
    ``response_id`` / ``request_id`` pair in time order, then session and position), summed
    per (UTC day, session, model): a report folds thousands of groups, not a row per
    response. ``tier``: the threshold of tiered prices (the tokens past it are summed apart,
    so that a group's cost is the sum of its responses' costs). ``among``: the groups of
    these sessions only, each of their rows numbered among the rows in scope holding its
    response (read by the response index, not a pass over every row)."""
    pg = conn.dialect.name == "postgresql"
    where, params = scope_where(conn, since=since, until=until, agent=agent, cwd=cwd,
                                session=("u.session_id", session_id))
    counts = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
    past = ", ".join(f"sum(CASE WHEN {c} > {int(tier)} THEN {c} - {int(tier)} ELSE 0 END)"
                     for c in counts)
    numbered = _numbered(pg, where, window=among is not None or _repeats(conn),
                         among=among is not None, timed=since is not None or until is not None)
    outer = "" if among is None else f" AND {in_ids(pg, 'session_id')}"
    sql = ("SELECT day, session_id, agent, cwd, model, count(*), sum(input_tokens), "
           "sum(output_tokens), sum(cache_creation_tokens), sum(cache_read_tokens), "
           f"sum(reasoning_tokens), {past}, max(created_at) FROM ({numbered}) AS counted "
           f"WHERE n = 1{outer} GROUP BY day, session_id, agent, cwd, model")
    if among is not None:
        ids = ids_param(pg, among)
        params = [ids, ids, *params, ids]
    for row in conn.exec_driver_sql(sql, tuple(params)):
        yield usage_sums(row)


def usage_sums(row: Sequence[Any]) -> UsageSums:
    """A group from its row: day, session, agent, folder, model, responses, the five token
    sums, the four sums past the tier, the last time."""
    (day_text, sid, agent_name, folder, model, responses, a, b, c, d, e, f, g, h, i,
     last) = row[:16]
    return UsageSums(str(day_text), str(sid), agent_name, folder, model, int(responses),
                     (int(a or 0), int(b or 0), int(c or 0), int(d or 0), int(e or 0)),
                     (int(f or 0), int(g or 0), int(h or 0), int(i or 0)), read_time(last))


def repeated_sessions(conn: Connection, suspects: Sequence[str], *, agent: str | None,
                      cwd: str | None) -> set[str]:
    """Of the sessions in scope, those holding a usage row that repeats an earlier one in
    scope (found from the rows of ``suspects`` and every row holding one of their
    responses: a session holding a repeat is one of them or shares a response with one)."""
    pg = conn.dialect.name == "postgresql"
    where, params = scope_where(conn, since=None, until=None, agent=agent, cwd=cwd)
    ids = ids_param(pg, suspects)
    return {str(sid) for (sid,) in conn.exec_driver_sql(
        f"SELECT DISTINCT session_id FROM ({_numbered(pg, where, window=True, among=True)}) "
        "AS counted WHERE n > 1", (ids, ids, *params)).all()}


def _numbered(pg: bool, where: Sequence[str], *, window: bool, among: bool,
              timed: bool = False) -> str:
    """The usage rows in scope (``where``), each with its UTC day, session, agent, folder,
    model, time and token counts, and ``n``: its rank among the rows of its response (1
    without ``window``). ``among``: only the rows of the sessions bound (twice) first and
    every row holding one of their responses."""
    day = ("to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')" if pg
           else "substr(m.created_at, 1, 10)")
    counts = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
              "reasoning_tokens")
    if among:
        source = ("(SELECT x.session_id AS sid, x.position AS pos FROM message_usage AS x "
                  f"WHERE {in_ids(pg, 'x.session_id')} UNION SELECT y.session_id, y.position "
                  f"FROM message_usage AS x JOIN message_usage AS y ON "
                  f"{same_response(pg, 'x', 'y')} WHERE {in_ids(pg, 'x.session_id')} AND "
                  "x.response_id IS NOT NULL) AS c JOIN message_usage AS u ON "
                  "u.session_id = c.sid AND u.position = c.pos JOIN messages AS m")
    else:
        # SQLite: the message's time from the covering index, not from the message row (past
        # its texts: most of the statement's time when read from the row), unless a time
        # range lets the time index drive the statement
        source = "message_usage u JOIN messages m" + (
            "" if pg or timed else " INDEXED BY ix_messages_time")
    return (f"SELECT {day} AS day, u.session_id AS session_id, s.agent AS agent, s.cwd AS cwd, "
            "u.model AS model, m.created_at AS created_at, "
            + ", ".join(f"u.{c} AS {c}" for c in counts)
            + (", CASE WHEN u.response_id IS NULL THEN 1 ELSE row_number() OVER ("
               "PARTITION BY u.response_id, u.request_id "
               "ORDER BY m.created_at, u.session_id, u.position) END AS n " if window
               else ", 1 AS n ")
            + f"FROM {source} ON m.session_id = u.session_id AND m.position = u.position "
              "JOIN sessions s ON s.session_id = u.session_id"
            + (" WHERE " + " AND ".join(where) if where else ""))


def _repeats(conn: Connection) -> bool:
    """Whether any response is stored twice (a resumed session's file repeats its parent's):
    only then does counting each once need the window, the costliest part of the statement
    (2.3 of its 3.7 s at a million messages, none repeated)."""
    return conn.exec_driver_sql(
        "SELECT 1 FROM message_usage WHERE response_id IS NOT NULL "
        "GROUP BY response_id, request_id HAVING count(*) > 1 LIMIT 1").first() is not None


def subagent_roots(conn: Any) -> dict[str, tuple[str, str | None, str | None]]:
    """Each subagent session (``lineage = 'subagent'``) -> its root: the first session above
    it that is not itself a subagent (or whose parent is not stored), with that root's agent
    and cwd; for the usage reports' roll-up, on the store's connection or a stdlib driver's.
    One statement for the links and one for the roots' rows; a chain that loops back stops
    where it meets itself (``MAX_TREE_DEPTH`` sessions at the most)."""
    pg = conn.dialect.name == "postgresql"
    parent_of = {str(sid): str(parent) for sid, parent in conn.exec_driver_sql(
        "SELECT session_id, parent_session_id FROM sessions WHERE lineage = 'subagent' "
        "AND parent_session_id IS NOT NULL", ()).all()}
    roots: dict[str, str] = {}
    for sid in parent_of:
        root, seen = sid, {sid}
        while root in parent_of and len(seen) <= MAX_TREE_DEPTH:
            above = parent_of[root]
            if above in seen:
                break
            seen.add(above)
            root = above
        roots[sid] = root
    info: dict[str, tuple[str | None, str | None]] = {
        str(sid): (agent, cwd) for sid, agent, cwd in conn.exec_driver_sql(
            f"SELECT session_id, agent, cwd FROM sessions WHERE {in_ids(pg, 'session_id')}",
            (ids_param(pg, sorted(set(roots.values()))),)).all()} if roots else {}
    out: dict[str, tuple[str, str | None, str | None]] = {}
    for sid, root in roots.items():
        if root == sid or root not in info:  # a loop, or a parent that is not stored
            continue
        out[sid] = (root, *info[root])
    return out
