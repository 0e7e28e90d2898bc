"""Tool usage across every stored session (persistence).

:func:`tool_usage`: per current tool name (the alias table as stored now applies at read
time), calls, sessions, invalid calls, calls with an error result, calls without a result,
first and last seen. Grouped by raw name in SQL from covering indexes (the argument JSON is
never read) in a bounded number of queries, folded into current names here. Times are aware
UTC; ``since`` inclusive, ``until`` exclusive, naive taken as UTC.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Connection,
    and_,
    case,
    distinct,
    func,
    not_,
    select,
    true,
)

from store.audit.sql import (
    action_column,
    calls_with_time,
    check_page,
    connect,
    exists_row,
    linked,
    message_side,
    time_filters,
)
from store.audit.usage_fold import SummarySource, ToolUsage, fold_usage
from store.core.errors import UsageError
from store.db.base import alias_table, reads_once
from store.db.reading.lineage import descendant_ids
from store.db.reading.summary_reads import summary_tool_groups
from store.db.schema.tables import messages, sessions, tool_calls, tool_results
from store.db.sessions import sessions_where

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["ToolUsage", "count_tools", "tool_usage"]

_VALID = ("ok", "empty")


@reads_once
def tool_usage(
    store: TranscriptStore,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    session_id: str | None = None,
    agent: str | None = None,
    cwd: str | None = None,
    limit: int | None = 100,
    offset: int = 0,
    with_children: bool = False,
) -> list[ToolUsage]:
    """Usage per current tool name, most called first (then by name), paged (``limit=None``:
    every tool; :func:`count_tools` gives the total).

    A bounded number of statements whatever the number of tools (at most six), none reading
    argument JSON (``store/db/index/search_schema.py``). Over the whole store: calls, sessions and
    invalid calls per raw name from one scan of ``ix_tool_calls_usage``; calls with an error
    result from ``ix_tool_results_errors``; calls without a result by an anti-join with
    ``ix_tool_results_call``; first and last seen in one grouped join with
    ``ix_messages_time``. With a time range or a session: one grouped join. Raw names that an
    alias scoped to an agent renames are counted again per (agent, raw name) in one grouped
    join with the sessions; the distinct sessions of a current name with several raw names
    are counted exactly from the distinct (raw name, session) pairs of those names.
    ``agent`` / ``cwd``: only the sessions of that agent, run in that folder or below it.
    ``with_children`` (with ``session_id``): that session and every session below it (its
    subagents, forks and continuations).
    """
    check_page(limit, offset)
    if with_children and session_id is None:
        raise UsageError("with_children needs a session_id")
    scope: Any = sessions_where(agent=agent, cwd=cwd) if agent or cwd else None
    one = session_id
    with connect(store) as conn:
        no_jit(conn)
        summed = None
        if with_children and session_id is not None:
            family = descendant_ids(conn, session_id)
            scope = _family_scope(scope, family)
            one = None
        elif session_id is None:
            # (the per-session summaries: store/db/index/summaries.py)
            summed = summary_tool_groups(conn, agent=agent, cwd=cwd, since=since, until=until)
        out = (_usage(conn, since, until, one, scope) if summed is None
               else fold_usage(SummarySource(summed), alias_table(conn)))
        conn.rollback()
    out.sort(key=lambda u: (-u.calls, u.name))
    return out[offset:] if limit is None else out[offset:offset + limit]


def _family_scope(scope: Any, family: list[str]) -> Any:
    """The ids of ``family`` (within ``scope``, a subquery of session ids, when given)."""
    base: Any = sessions_where() if scope is None else scope
    return base.where(sessions.c.session_id.in_(family))


def count_tools(
    store: TranscriptStore,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    session_id: str | None = None,
    agent: str | None = None,
    cwd: str | None = None,
) -> int:
    """How many current tool names :func:`tool_usage` reports (for "showing N of M")."""
    return len(tool_usage(store, since=since, until=until, session_id=session_id, agent=agent,
                          cwd=cwd, limit=None))


def _usage(conn: Connection, since: datetime | None, until: datetime | None,
           session_id: str | None, scope: Any = None) -> list[ToolUsage]:
    return fold_usage(_CoreSource(conn, since, until, session_id, scope), alias_table(conn))


class _CoreSource:
    """The grouped rows of :func:`store.audit.usage_fold.fold_usage`, from Core statements."""

    def __init__(self, conn: Connection, since: datetime | None, until: datetime | None,
                 session_id: str | None, scope: Any) -> None:
        self.conn, self.since, self.until = conn, since, until
        self.session_id, self.scope = session_id, scope
        self.whole_store = (since is None and until is None and session_id is None
                            and scope is None)

    def raw_names(self) -> set[str]:
        return {str(raw) for (raw,) in self.conn.execute(
            select(tool_calls.c.raw_name).group_by(tool_calls.c.raw_name))}

    def whole(self, raws: Sequence[str]) -> dict[str, list[Any]]:
        return _usage_whole_store(self.conn, raws)

    def grouped(self, raws: Sequence[str] | None, actions: bool) -> Iterable[Sequence[Any]]:
        return self.conn.execute(usage_statement(self.since, self.until, self.session_id, raws,
                                                 scope=self.scope, actions=actions)).all()

    def pairs(self, raws: Sequence[str], action: bool) -> Iterable[Sequence[Any]]:
        c = tool_calls
        column = action_column() if action else None
        pairs = select(c.c.raw_name, c.c.session_id,
                       *([column] if column is not None else [])).where(c.c.raw_name.in_(raws))
        if self.session_id is not None:
            pairs = pairs.where(c.c.session_id == self.session_id)
        if self.scope is not None:
            pairs = pairs.where(c.c.session_id.in_(self.scope))
        if self.since is not None or self.until is not None:
            pairs = pairs.select_from(calls_with_time(messages)).where(
                *time_filters(self.since, self.until))
        return self.conn.execute(pairs.group_by(
            c.c.raw_name, c.c.session_id, *([column] if column is not None else []))).all()

    def agents(self) -> dict[str, str | None]:
        return {str(row[0]): row[1] for row in self.conn.execute(
            select(sessions.c.session_id, sessions.c.agent)
            .where(sessions.c.agent.is_not(None)))}


def _usage_whole_store(conn: Connection, raws: Sequence[str]) -> dict[str, list[Any]]:
    """[calls, sessions, invalid, errors, without result, first, last] per raw name of
    ``raws``."""
    counts, errors, unanswered = usage_statements(conn.dialect.name, raws)
    stats: dict[str, list[Any]] = {}
    for raw, calls, session_count, invalid in conn.execute(counts):
        stats[raw] = [calls, session_count, invalid, 0, 0, None, None]
    for raw, count in conn.execute(errors):
        stats[raw][3] = count
    for raw, count in conn.execute(unanswered):
        stats[raw][4] = count
    for raw, first, last in conn.execute(seen_statement(raws)):
        if raw in stats:
            stats[raw][5], stats[raw][6] = first, last
    return stats


def usage_statements(dialect: str, raws: Sequence[str] | None = None
                     ) -> tuple[Any, Any, Any]:
    """The whole-store usage statements: counts, calls with an error result, calls without a
    result, each per raw name (of ``raws`` only, when given: a range of the covering index)."""
    c = tool_calls
    r = tool_results.alias("r")
    only = [c.c.raw_name.in_(raws)] if raws is not None else []
    invalid = func.sum(case((c.c.arguments_status.in_(_VALID), 0), else_=1))
    # One scan of ix_tool_calls_usage (covering): calls, sessions, invalid calls.
    if dialect == "postgresql":  # grouped by (raw name, session) first: no sort for DISTINCT
        per_session = (
            select(c.c.raw_name, func.count().label("calls"), invalid.label("invalid"))
            .where(*only).group_by(c.c.raw_name, c.c.session_id).subquery("per_session")
        )
        p = per_session.c
        counts = (select(p.raw_name, func.sum(p.calls), func.count(), func.sum(p.invalid))
                  .group_by(p.raw_name))
    else:
        counts = (select(c.c.raw_name, func.count(), func.count(distinct(c.c.session_id)),
                         invalid).where(*only).group_by(c.c.raw_name))
    # Error results are few: start from them (ix_tool_results_errors), look up their calls.
    failed = (
        select(r.c.session_id, r.c.call_position, r.c.call_index)
        .where(r.c.is_error == true()).distinct().subquery("errors")
    )
    errors = (
        select(c.c.raw_name, func.count())
        .select_from(failed.join(c, and_(c.c.session_id == failed.c.session_id,
                                         c.c.position == failed.c.call_position,
                                         c.c.call_index == failed.c.call_index)))
        .where(*only).group_by(c.c.raw_name)
    )
    # An anti-join of ix_tool_calls_usage with ix_tool_results_call.
    unanswered = (
        select(c.c.raw_name, func.count()).where(*only, not_(exists_row(r, linked(r))))
        .group_by(c.c.raw_name)
    )
    return counts, errors, unanswered


def no_jit(conn: Connection) -> None:
    """PostgreSQL: no JIT compilation for this transaction (it costs more than it saves on
    these index scans)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SET LOCAL jit = off")


def usage_statement(
    since: datetime | None, until: datetime | None, session_id: str | None,
    scoped_raws: Sequence[str] | None = None, *, scope: Any = None, actions: bool = False,
) -> Any:
    """One grouped join: [raw, calls, sessions, invalid, errors, without result, first, last]
    (for a time range or a session); with ``scoped_raws``: those raw names only, grouped by
    (the session's agent, raw name), the agent first (``actions``: and the call's action,
    :mod:`store.tools.actions`); ``scope``: a subquery of the session ids
    to count (``sessions_where``)."""
    c, m = tool_calls, message_side(timed=since is not None or until is not None)
    r = tool_results.alias("r")
    joined = linked(r)
    filters = time_filters(since, until, m)
    if session_id is not None:
        # on every table of the query (the joined messages, the results of the EXISTS): Citus
        # routes it to one shard only when each distributed table is filtered by the session
        joined = and_(joined, r.c.session_id == session_id)
        filters.extend([c.c.session_id == session_id, m.c.session_id == session_id])
    if scope is not None:
        filters.append(c.c.session_id.in_(scope))
    source = calls_with_time(m)
    keys: list[Any] = [c.c.raw_name]
    if scoped_raws is not None:
        filters.append(c.c.raw_name.in_(list(scoped_raws)))
        source = source.join(sessions, sessions.c.session_id == c.c.session_id)
        keys = [sessions.c.agent, c.c.raw_name]
        if actions:  # (the editor tools' calls: by action too)
            keys.append(action_column())
    return (
        select(
            *keys,
            func.count(),
            func.count(distinct(c.c.session_id)),
            func.sum(case((c.c.arguments_status.in_(_VALID), 0), else_=1)),
            func.sum(case((exists_row(r, joined, r.c.is_error == true()), 1), else_=0)),
            func.sum(case((exists_row(r, joined), 0), else_=1)),
            func.min(m.c.created_at),
            func.max(m.c.created_at),
        )
        .select_from(source)
        .where(*filters)
        .group_by(*keys)
    )


def seen_statement(raws: Sequence[str] | None = None) -> Any:
    """First and last seen per raw name (of ``raws`` only, when given): one grouped join of
    ``ix_tool_calls_usage`` with ``ix_messages_time`` (covering)."""
    c, m = tool_calls, message_side(timed=False)
    return (select(c.c.raw_name, func.min(m.c.created_at), func.max(m.c.created_at))
            .select_from(calls_with_time(m))
            .where(*([c.c.raw_name.in_(raws)] if raws is not None else []))
            .group_by(c.c.raw_name))
