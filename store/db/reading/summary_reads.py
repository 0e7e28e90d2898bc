"""``tools usage`` and the usage reports read from the per-session summaries (persistence;
driver SQL, no SQLAlchemy at run time: the command line's stdlib readers run it too).

Over the whole store, or an agent's or a folder's sessions, without a time range: the rows of
each session whose stamp matches (``store.db.index.summaries``) plus what the calls and usage
of every other session give, computed now by the same SQL that fills the summaries. So the
answer is the one the calls and usage rows give whether or not the catch-up has run; only its
cost differs (a few thousand summary rows instead of every call and usage row).

The usage reports count a response stored twice (a resumed session's file repeats its
parent's) once: the first in time order, then session and position, among the rows in scope.
Summaries hold every row; a session that holds a repeated row which is not that first one is
read from its usage rows instead, with the window over the rows of that response. Which
sessions those are is found from the sessions marked ``repeats`` (and the unsummarized
ones): of any two rows of one response, the session summarized later saw the other and is
marked, or is not summarized.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from store.core.arguments import loads_json
from store.core.times import as_utc
from store.db.index.summaries import (
    VERSION,
    context_rows_sql,
    current_sql,
    ids_param,
    in_ids,
    keeps_summaries,
    sharing_sessions,
    tool_rows_sql,
    usage_rows_sql,
)
from store.db.reading.usage import (
    UsageSums,
    repeated_sessions,
    scope_where,
    usage_groups,
    usage_sums,
)
from store.db.schema.sqlitefile import read_time, stored_time
from store.usage.prices import TIER_TOKENS

__all__ = ["DaySums", "ToolGroups", "summary_context_rows", "summary_context_totals",
           "summary_tool_groups", "summary_usage_days", "summary_usage_groups",
           "without_summarized_usage"]

def _scope(conn: Any, agent: str | None, cwd: str | None) -> tuple[str, list[Any]]:
    where, params = scope_where(conn, since=None, until=None, agent=agent, cwd=cwd)
    return ("".join(f" AND {term}" for term in where)), params


#: Read the calls and usage rows of the whole scope instead (the store-wide statements, from
#: covering indexes) when more than this share of its sessions is not summarized: a store
#: that has never been caught up (written by ``append`` only, never searched) must not read
#: slower than it did without summaries.
_MOSTLY_UNSUMMARIZED = 0.25


def without_summarized_usage(conn: Any) -> tuple[str, list[Any]]:
    """A condition (and its parameters) that the session ``s`` (``sessions AS s``) is not
    one whose summary holds and has usage rows: such a session has usage (its summary was
    made of its usage rows), known from the small summary tables rather than by a look into
    the usage rows' index per session. Always true where no summaries are kept."""
    if not keeps_summaries(conn):
        return "1 = 1", []
    return ("NOT EXISTS (SELECT 1 FROM session_summaries AS ss JOIN usage_summary AS t ON "
            "t.session_id = ss.session_id WHERE ss.session_id = s.session_id AND "
            f"{current_sql(_mark(conn))})", [VERSION])


def _mark(conn: Any) -> str:
    """The driver's parameter mark."""
    return "%s" if conn.dialect.name == "postgresql" else "?"


def _others(conn: Any, agent: str | None, cwd: str | None,
            current: dict[str, str | None] | None = None
            ) -> list[tuple[str, str | None, str | None]] | None:
    """The (session, agent, folder) of the sessions in scope not summarized (or whose
    summary no longer holds); ``None`` when they are more than :data:`_MOSTLY_UNSUMMARIZED`
    of the scope's sessions. ``current``, when given, gets the agent of each session in
    scope whose summary holds (read by the same statement)."""
    mark = _mark(conn)
    scope, params = _scope(conn, agent, cwd)
    rows = conn.exec_driver_sql(
        f"SELECT s.session_id, s.agent, s.cwd, CASE WHEN ss.session_id IS NOT NULL AND "
        f"{current_sql(mark)} THEN 1 ELSE 0 END FROM sessions AS s LEFT JOIN "
        f"session_summaries AS ss ON ss.session_id = s.session_id WHERE 1 = 1{scope}",
        (VERSION, *params)).all()
    others = [(str(sid), agent_name, folder) for sid, agent_name, folder, kept in rows
              if not kept]
    if len(others) > _MOSTLY_UNSUMMARIZED * len(rows):
        return None
    if current is not None:
        current.update((str(sid), agent_name) for sid, agent_name, _, kept in rows if kept)
    return others


#: ``tools usage --by``: what each key reads of ``ix_context_summary_totals`` (revision 0028)
#: as (key, grouping): a prefix of the index, so that the database sums in its order.
_CONTEXT_GRAIN = {"day": ("t.day", "t.day"), "week": ("t.day", "t.day"),
                  "agent": ("t.agent", ""), "model": ("t.model", "t.day, t.model")}


def summary_context_totals(conn: Any, *, by: str | None, agent: str | None
                           ) -> tuple[list[tuple[Any, ...]], list[str]] | None:
    """``tools usage --by`` over the whole store or one agent's sessions from
    ``ix_context_summary_totals`` in its order (revision 0028): rows (key, agent, raw name,
    calls, results, result size, error results), several per key and tool (the caller adds
    them up), of every summarized session; and the ids of the others (not summarized, or
    their summary no longer holds: the caller reads their calls). By model, a call whose
    message has no usage row (model NULL) takes its session's model, through a join of
    those rows only. ``None`` where no summaries are kept or most sessions are not
    summarized."""
    if not keeps_summaries(conn):
        return None
    others = _others(conn, agent, None)
    if others is None:
        return None
    pg = conn.dialect.name == "postgresql"
    ids = sorted(sid for sid, _, _ in others)
    where, params = _kept_where(pg, agent, ids)
    key, grain = _CONTEXT_GRAIN.get(by or "", ("''", ""))
    sums = "sum(t.calls), sum(t.results), sum(t.result_chars), sum(t.error_results)"

    def summed(key: str, joined: str, more: list[str], grouped: str) -> list[tuple[Any, ...]]:
        terms = [*where, *more]
        return [tuple(row) for row in conn.exec_driver_sql(
            f"SELECT {key}, t.agent, t.raw_name, {sums} FROM context_summary AS t{joined}"
            + (" WHERE " + " AND ".join(terms) if terms else "")
            + f" GROUP BY t.agent, t.raw_name{grouped}", tuple(params)).all()]

    if by != "model":
        return summed(key, "", [], f", {grain}" if grain else ""), ids
    return [*summed(key, "", ["t.model IS NOT NULL"], f", {grain}"),
            *summed("s.model", " JOIN sessions AS s ON s.session_id = t.session_id",
                    ["t.model IS NULL"], ", s.model")], ids


class ToolGroups:
    """``tools usage`` from the summaries: ``rows``, per (agent, raw name, action): calls,
    sessions, invalid, with an error result, without a result, first and last time (a
    session has one agent, and one row per raw name and action: its sessions are counted by
    adding); :meth:`pairs` the distinct (raw name, session[, action]) of some raw names."""

    def __init__(self, conn: Any, current: tuple[str, list[Any]],
                 live: list[tuple[Any, ...]], totals: tuple[str, list[Any]] | None = None
                 ) -> None:
        self._conn, self._current, self._live = conn, current, live
        grouped = [tuple(row) for row in conn.exec_driver_sql(
            totals[0], tuple(totals[1])).all()] if totals is not None else [
            tuple(row) for row in conn.exec_driver_sql(
                "SELECT s.agent, t.raw_name, t.action, sum(t.calls), count(*), "
                "sum(t.invalid_calls), sum(t.error_calls), sum(t.unanswered_calls), "
                f"min(t.first_at), max(t.last_at) {current[0]} GROUP BY s.agent, t.raw_name, "
                "t.action", tuple(current[1])).all()]
        for row in live:  # (session, agent, raw, action, counts...): one session each
            grouped.append((row[1], row[2], row[3], row[4], 1, *row[5:]))
        self.rows = grouped

    def pairs(self, raws: Sequence[str], action: bool) -> list[tuple[Any, ...]]:
        pg = self._conn.dialect.name == "postgresql"
        found = [tuple(row) for row in self._conn.exec_driver_sql(
            f"SELECT DISTINCT t.raw_name, t.session_id{', t.action' if action else ''} "
            f"{self._current[0]} AND {in_ids(pg, 't.raw_name')}",
            (*self._current[1], ids_param(pg, raws))).all()]
        wanted = set(raws)
        found += [(row[2], str(row[0]), *((row[3],) if action else ())) for row in self._live
                  if row[2] in wanted]
        return found

    def agents(self) -> dict[str, str | None]:
        return {str(sid): agent for sid, agent in self._conn.exec_driver_sql(
            "SELECT session_id, agent FROM sessions WHERE agent IS NOT NULL").all()}


def summary_context_rows(conn: Any, *, agent: str | None, cwd: str | None
                         ) -> tuple[str, list[Any]] | None:
    """The rows of ``store.db.index.summaries.context_rows_sql`` (``s``, ``day``, ``model``,
    ``raw``, ``calls``, ``results``, ``chars``, ``errors``) of the whole store, or an agent's
    or a folder's sessions: the kept rows of each session whose stamp matches and what the
    calls of every other session give now; as SQL and its parameters. ``None`` where no
    summaries are kept or most sessions are not summarized (the caller reads the calls)."""
    if not keeps_summaries(conn):
        return None
    others = _others(conn, agent, cwd)
    if others is None:
        return None
    pg = conn.dialect.name == "postgresql"
    mark = "%s" if pg else "?"
    sql = ("SELECT cs.session_id AS s, cs.day AS day, cs.model AS model, cs.raw_name AS raw, "
           "cs.calls AS calls, cs.results AS results, cs.result_chars AS chars, "
           "cs.error_results AS errors FROM context_summary AS cs JOIN session_summaries AS ss "
           "ON ss.session_id = cs.session_id JOIN sessions AS s ON s.session_id = "
           f"ss.session_id WHERE {current_sql(mark)}")
    params: list[Any] = [VERSION]
    if others:
        sql += " UNION ALL " + context_rows_sql(pg, in_ids(pg, "c.session_id"))
        params.append(ids_param(pg, sorted(sid for sid, _, _ in others)))
    return sql, params


def summary_tool_groups(conn: Any, *, agent: str | None, cwd: str | None,
                        since: datetime | None = None, until: datetime | None = None
                        ) -> ToolGroups | None:
    """``tools usage`` over the whole store (or an agent's or a folder's sessions) from
    the summaries and the calls of the sessions not summarized; ``None`` where no summaries
    are kept (the caller reads the calls). With a time range (``since`` inclusive, ``until``
    exclusive): the summaries of the sessions whose calls all fall inside it, none of those
    whose calls all fall outside, the calls in range of the others."""
    if not keeps_summaries(conn):
        return None
    pg = conn.dialect.name == "postgresql"
    mark = "%s" if pg else "?"
    scope, params = _scope(conn, agent, cwd)
    kept = (f"FROM session_summaries AS ss JOIN sessions AS s ON s.session_id = "
            f"ss.session_id JOIN tool_summary AS t ON t.session_id = ss.session_id "
            f"WHERE {current_sql(mark)}{scope}")
    current = (kept, [VERSION, *params])
    live: list[tuple[Any, ...]] = []
    held: dict[str, str | None] = {}  # (the sessions whose summary holds, and their agents)
    others = _others(conn, agent, cwd, held)
    if others is None:
        return None
    agents = {sid: agent_name for sid, agent_name, _ in others}
    timed: list[str] = []
    bounds: list[Any] = []
    if since is not None or until is not None:
        low = None if since is None else _bound(pg, since)
        high = None if until is None else _bound(pg, until)
        # Each summarized session's span of calls, read once (the statements had grouped the
        # summaries three times over): all inside the range, its summary counts; on both
        # sides of an edge, its calls in range are read; all outside, nothing.
        inside: list[str] = []
        for sid, first, last in conn.exec_driver_sql(
                "SELECT session_id, min(first_at), max(last_at) FROM tool_summary "
                "GROUP BY session_id").all():
            sid = str(sid)
            if sid not in held:
                continue
            if (low is None or first >= low) and (high is None or last < high):
                inside.append(sid)
            elif (low is None or last >= low) and (high is None or first < high):
                agents[sid] = held[sid]
        current = (f"{kept} AND {in_ids(pg, 't.session_id')}",
                   [VERSION, *params, ids_param(pg, inside)])
        timed = [*(["m.created_at >= " + mark] if low is not None else []),
                 *(["m.created_at < " + mark] if high is not None else [])]
        bounds = [v for v in (low, high) if v is not None]
    if agents:
        condition = " AND ".join([in_ids(pg, "tool_calls.session_id"), *timed])
        for row in conn.exec_driver_sql(tool_rows_sql(pg, condition),
                                        (ids_param(pg, sorted(agents)), *bounds)).all():
            live.append((str(row[0]), agents[str(row[0])], *row[1:]))
    totals = None
    if since is None and until is None and cwd is None:
        totals = _totals(pg, agent, sorted(agents))
    return ToolGroups(conn, current, live, totals)


def _totals(pg: bool, agent: str | None, others: list[str]) -> tuple[str, list[Any]]:
    """The summaries' totals per (agent, raw name, action) over the whole store or one
    agent's sessions, from ``ix_tool_summary_totals`` in its order (revision 0026): the rows
    of every session but ``others`` (not summarized, or their summary no longer holds: read
    from their calls instead), whose agent each row keeps."""
    where, params = _kept_where(pg, agent, others)
    return ("SELECT t.agent, t.raw_name, t.action, sum(t.calls), count(*), "
            "sum(t.invalid_calls), sum(t.error_calls), sum(t.unanswered_calls), "
            "min(t.first_at), max(t.last_at) FROM tool_summary AS t"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " GROUP BY t.agent, t.raw_name, t.action", params)


def _kept_where(pg: bool, agent: str | None, others: list[str]
                ) -> tuple[list[str], list[Any]]:
    """The terms (over a summary table ``t`` that keeps its session's agent) and parameters
    of the rows of one agent's sessions, or all, but ``others`` (read from their calls)."""
    mark = "%s" if pg else "?"
    where: list[str] = []
    params: list[Any] = []
    if agent is not None:
        where.append(f"t.agent = {mark}")
        params.append(agent)
    if others:
        where.append(f"NOT ({in_ids(pg, 't.session_id')})")
        params.append(ids_param(pg, others))
    return where, params


def _bound(pg: bool, value: datetime) -> Any:
    """A time as the store compares it with ``messages.created_at``."""
    return as_utc(value) if pg else stored_time(as_utc(value))


_USAGE_FROM = ("FROM session_summaries AS ss JOIN sessions AS s ON s.session_id = "
               "ss.session_id JOIN usage_summary AS t ON t.session_id = ss.session_id ")
#: A group's responses, five counts and four tiered sums (``usage_sums``' order).
_SUM_COLUMNS = ("responses", "input_tokens", "output_tokens", "cache_creation_tokens",
                "cache_read_tokens", "reasoning_tokens", "input_past", "output_past",
                "cache_creation_past", "cache_read_past")
_SUMS = ", ".join(f"t.{column}" for column in _SUM_COLUMNS)
#: The summarized groups (per session, day and model) as ``usage_sums`` reads them.
_GROUP_ROWS = (f"SELECT t.day, t.session_id, s.agent, s.cwd, t.model, {_SUMS}, t.last_at "
               f"{_USAGE_FROM}")


class _Split(NamedTuple):
    """How the sessions in scope are read: the summarized ones but ``again`` from their
    summaries, ``again`` and ``plain`` (not summarized) from their usage rows."""

    pg: bool
    where: str  # (the summarized sessions in scope, ``again`` left out)
    params: list[Any]
    again: set[str]
    plain: list[str]
    places: dict[str, tuple[Any, Any]]


def _split(conn: Any, agent: str | None, cwd: str | None) -> _Split | None:
    if not keeps_summaries(conn):
        return None
    pg = conn.dialect.name == "postgresql"
    mark = "%s" if pg else "?"
    scope, params = _scope(conn, agent, cwd)
    where = f"WHERE {current_sql(mark)}{scope}"
    marked = [str(sid) for (sid,) in conn.exec_driver_sql(
        "SELECT ss.session_id FROM session_summaries AS ss JOIN sessions AS s "
        f"ON s.session_id = ss.session_id {where} AND ss.repeats", (VERSION, *params)).all()]
    others = _others(conn, agent, cwd)
    if others is None:
        return None
    places = {sid: (agent_name, folder) for sid, agent_name, folder in others}
    # the unsummarized sessions holding a response another row holds too: as if marked
    stale = sharing_sessions(conn, sorted(places)) if places else set()
    suspects = sorted(set(marked) | stale)
    again = (repeated_sessions(conn, suspects, agent=agent, cwd=cwd) if suspects
             else set())
    all_params: list[Any] = [VERSION, *params]
    if again:
        where += f" AND NOT ({in_ids(pg, 't.session_id')})"
        all_params.append(ids_param(pg, sorted(again)))
    return _Split(pg, where, all_params, again, sorted(set(places) - again), places)


def _rest(conn: Any, split: _Split, agent: str | None, cwd: str | None) -> list[UsageSums]:
    """The groups of the sessions read from their usage rows."""
    out: list[UsageSums] = []
    if split.plain:  # every row of theirs counts: summed as the summaries sum them
        for sid, day, model, *sums in conn.exec_driver_sql(
                usage_rows_sql(split.pg, in_ids(split.pg, "u.session_id")),
                (ids_param(split.pg, split.plain),)).all():
            out.append(usage_sums((day, sid, *split.places[str(sid)], model, *sums)))
    if split.again:
        out.extend(usage_groups(conn, tier=TIER_TOKENS, agent=agent, cwd=cwd,
                                among=sorted(split.again)))
    return out


def summary_usage_groups(conn: Any, *, agent: str | None, cwd: str | None
                         ) -> list[UsageSums] | None:
    """``store.db.reading.usage.usage_groups`` over the whole store (or an agent's or a
    folder's sessions) at the shipped tier, from the summaries; ``None`` where no summaries
    are kept (the caller reads the usage rows)."""
    split = _split(conn, agent, cwd)
    if split is None:
        return None
    rows = conn.exec_driver_sql(f"{_GROUP_ROWS}{split.where}", tuple(split.params)).all()
    return [*map(usage_sums, rows), *_rest(conn, split, agent, cwd)]


class DaySums(NamedTuple):
    """The usage in scope for a report whose keys are periods, folders or agents: the
    summarized sessions' summed by the database per (day, folder or agent; model) (``sums``:
    that key, model, responses, the five counts, the four tiered sums, the last time, the
    sessions), and the groups of the sessions read from their usage rows or kept apart
    (``rest``)."""

    sums: list[tuple[str | None, str | None, int, tuple[int, int, int, int, int],
                     tuple[int, int, int, int], datetime, list[str]]]
    rest: list[UsageSums]


#: What :func:`summary_usage_days` sums per: a summary row's day, its session's folder or
#: agent.
_PER = {"day": "t.day", "project": "s.cwd", "agent": "s.agent"}


def summary_usage_days(conn: Any, *, agent: str | None, cwd: str | None, per: str = "day",
                       apart: Sequence[str] = ()) -> DaySums | None:
    """What :func:`summary_usage_groups` gives, summed per (day, model) by the database for
    the summarized sessions (660 rows at 10^6 messages instead of 9,400, each with its
    sessions as one JSON array), or per (folder, model) or (agent, model) (``per``:
    ``project`` or ``agent``: 80 rows); the sessions ``apart`` (subagents, counted under
    their root's folder or agent) are left out of the sums and given as their groups.
    ``None`` where no summaries are kept."""
    split = _split(conn, agent, cwd)
    if split is None:
        return None
    pg = split.pg
    where, params = split.where, list(split.params)
    kept: list[UsageSums] = []
    if apart:
        among = (ids_param(pg, sorted(apart)),)
        kept = [usage_sums(row) for row in conn.exec_driver_sql(
            f"{_GROUP_ROWS}{where} AND {in_ids(pg, 't.session_id')}", (*params, *among)).all()]
        where += f" AND NOT ({in_ids(pg, 't.session_id')})"
        params.extend(among)
    column = _PER[per]
    summed = ", ".join(f"sum(t.{name})" for name in _SUM_COLUMNS)
    ids = "json_agg(t.session_id)" if pg else "json_group_array(t.session_id)"
    sums = []
    for key, model, *values, last, sessions in conn.exec_driver_sql(
            f"SELECT {column}, t.model, {summed}, max(t.last_at), {ids} "
            f"{_USAGE_FROM}{where} GROUP BY {column}, t.model", tuple(params)).all():
        n = [int(v or 0) for v in values]
        sums.append((None if key is None else str(key), model, n[0],
                     (n[1], n[2], n[3], n[4], n[5]), (n[6], n[7], n[8], n[9]),
                     read_time(last),
                     loads_json(sessions) if isinstance(sessions, str) else sessions))
    return DaySums(sums, [*kept, *_rest(conn, split, agent, cwd)])
