"""Call search across every stored session (persistence).

:func:`search_calls` (:func:`iter_calls` streams, :func:`count_calls` counts): calls matching
a :class:`CallQuery`: tool (alias-aware) or raw name, session, time range (the time of the
call's message), status, argument conditions (:class:`~store.audit.conditions.ArgumentCondition`),
canonical argument views (:class:`~store.audit.conditions.ViewCondition`) and full text over
arguments and results; all combinable (AND). Oldest first; each match carries its first
result's preview. Output can be redacted (``redactor=``). Which index serves which query is
listed in ``store/db/index/search_schema.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Connection,
    and_,
    exists,
    func,
    not_,
    or_,
    select,
    text,
    true,
    tuple_,
)
from sqlalchemy.sql.elements import ColumnElement, TextClause

from store.audit.call_rows import CallMatch, CallQuery, first_results, match_row
from store.audit.conditions import (
    ArgumentCondition,
    sql_condition,
)
from store.audit.hits import Trust, prefilter_sql, text_hits, trust_for, view_condition
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
from store.core.logs import logger
from store.db.base import alias_table, reads_once
from store.db.index.gaps_cache import built, cached_gaps, database_state, keep_built
from store.db.index.reads import one_read, statement_by_statement
from store.db.index.search_index import (
    has_search_index,
)
from store.db.index.search_schema import (
    MIN_TEXT,
)
from store.db.reading.lineage import descendant_ids
from store.db.schema.tables import sessions, tool_calls, tool_results
from store.db.schema.wiretext import wire_column
from store.db.sessions import sessions_where
from store.redaction.redact import Redactor
from store.tools.actions import ACTION_ARGUMENT, split_action_key
from store.tools.names import AliasTable

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["CallMatch", "CallQuery", "count_calls", "iter_calls", "search_calls"]

_VALID = ("ok", "empty")
#: The key check's log (``store.audit.hits_sql``), where a reused statement's warnings go again.
_log = logger("store.audit.hits")
_CHUNK = 250  # calls per follow-up query for their results (3 bound values each)


@reads_once
def search_calls(
    store: TranscriptStore,
    query: CallQuery | None = None,
    *,
    limit: int = 50,
    offset: int = 0,
    preview_chars: int | None = 200,
    redactor: Redactor | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[CallMatch]:
    """The calls matching ``query`` (every call without one), oldest first, paged.

    ``preview_chars`` cuts each result preview (``None``: the whole result as text);
    ``redactor`` redacts argument texts and previews; ``warn`` is told of each session whose
    search index does not line up with the transcript (scanned exactly instead,
    ``store.audit.hits``).
    """
    check_page(limit, offset)
    query = query or CallQuery()
    with one_read():
        catch_up(store, query)
        with connect(store) as conn:
            return list(_matches(statement_by_statement(conn), query, limit, offset,
                                 preview_chars, redactor, warn))


@reads_once
def count_calls(store: TranscriptStore, query: CallQuery | None = None) -> int:
    """How many calls match ``query`` (for "showing N of M")."""
    with connect(store) as conn:
        statement_by_statement(conn)
        _, statement = _statement(conn, query or CallQuery(), None, counting=True)
        if statement is None:
            return 0
        counted = select(func.count()).select_from(statement.order_by(None).subquery())
        return int(conn.execute(counted).scalar_one())


def iter_calls(
    store: TranscriptStore,
    query: CallQuery | None = None,
    *,
    preview_chars: int | None = None,
    redactor: Redactor | None = None,
    warn: Callable[[str], None] | None = None,
) -> Iterator[CallMatch]:
    """Every call matching ``query``, oldest first, streamed (for exports); ``warn`` as for
    :func:`search_calls`."""
    query = query or CallQuery()
    catch_up(store, query)
    with connect(store) as conn:
        yield from _matches(conn, query, None, 0, preview_chars, redactor, warn)


def catch_up(store: TranscriptStore, query: CallQuery) -> None:
    """Before a search that uses the search index: bring it up to date when the store may
    write (a read-only store scans what is not indexed yet instead; see
    ``store/db/index/search_index.py``)."""
    if (query.text is not None or query.where or query.views) and not store.read_only \
            and not query.exact \
            and (query.session_id is None or query.with_children):
        # (a search of one session scans its own unindexed tail exactly instead: it never
        # pays for a catch-up of the whole store, and on Citus stays on the session's shard)
        store.update_search_index()


def _matches(
    conn: Connection,
    query: CallQuery,
    limit: int | None,
    offset: int,
    preview_chars: int | None,
    redactor: Redactor | None,
    warn: Callable[[str], None] | None = None,
) -> Iterator[CallMatch]:
    aliases, statement = _statement(conn, query, warn,
                                    page=None if limit is None else (limit, offset))
    if statement is None:
        return
    if conn.dialect.name == "postgresql" and limit is None:
        # Every row is read: the planner must not pick a fast-start plan for the cursor
        # (its default prices only the first 10%: a nested loop of 61k x 29k, issue 23).
        # No plan is forced otherwise: the catch-up keeps the statistics current.
        conn.exec_driver_sql("SET LOCAL cursor_tuple_fraction = 1.0")
    # A page (limit) is read whole; only an unbounded listing streams (yield_per turns on a
    # server-side cursor on PostgreSQL: a round trip per chunk, too costly for one page).
    rows = (conn.execution_options(stream_results=True, yield_per=_CHUNK) if limit is None
            else conn).execute(statement)
    try:
        scoped = aliases.scoped_names  # (built once per alias table, not per search)
        while chunk := rows.fetchmany(_CHUNK):  # (a driver fetch per chunk, not per row)
            results = first_results(conn, [(r[0], r[1], r[2]) for r in chunk])
            places = _places(conn, {r[0] for r in chunk})
            for row in chunk:
                agent, cwd = places.get(row[0], (None, None))
                yield match_row(row, aliases, results.get((row[0], row[1], row[2])),
                             preview_chars, redactor, agent, cwd, row[4] in scoped)
    finally:
        rows.close()


def _statement(conn: Connection, query: CallQuery, warn: Callable[[str], None] | None, *,
               counting: bool = False, page: tuple[int, int] | None = None
               ) -> tuple[AliasTable, Any]:
    """The alias table and :func:`search_statement` of ``query`` (``page``: its limit and
    offset applied), built once per database state (``store.db.index.gaps_cache.built``):
    building it (the SQLAlchemy constructs, the alias table, the trust and tail reads) was
    most of a search that finds little, 0.86 ms of a zero-hit full-text search against the
    raw driver's 0.05 ms. The warnings its key check gave are given again (logged and told
    to ``warn``) each time it is reused. Queries with argument conditions are built each
    time (a value's hash does not tell ``1`` from ``True``)."""
    state = None if query.where else database_state(conn)
    key = None if state is None else (query, counting, page, state)
    if key is not None:
        kept = built(conn, key)
        if kept is not None:
            aliases, statement, warnings = kept
            for message in warnings:
                _log.warning("%s", message)
                if warn is not None:
                    warn(message)
            return aliases, statement
    told: list[str] = []

    def told_to(message: str) -> None:
        told.append(message)
        if warn is not None:
            warn(message)

    aliases = alias_table(conn)
    statement = search_statement(conn, aliases, query, warn=told_to, counting=counting)
    if statement is not None and page is not None:
        statement = statement.limit(page[0]).offset(page[1])
    if key is not None:
        keep_built(conn, key, (aliases, statement, tuple(told)))
    return aliases, statement


def search_statement(conn: Connection, aliases: AliasTable, query: CallQuery, *,
                     warn: Callable[[str], None] | None = None, counting: bool = False) -> Any:
    """The SELECT of the matching calls, oldest first; ``None`` when nothing can match.
    ``warn``: told of each session whose derived rows are not trusted (``store.audit.hits``).
    ``counting``: only the calls' keys, unordered, for a count; without a time range the
    messages are not joined (each call has its message: the foreign key), so PostgreSQL does
    not probe every message for a call (0.26 s of a count of 17k calls at 10^5 messages)."""
    c = tool_calls
    timed = query.since is not None or query.until is not None
    m = message_side(timed=timed)
    bare = counting and not timed
    conditions: list[ColumnElement[bool] | TextClause] = []
    if query.tool is not None:
        if query.session_id is not None and not query.with_children:
            # One session: its agent decides which raw names are the tool (a plain IN list,
            # routed to the session's shard on Citus; no per-agent subquery).
            agent = conn.execute(select(sessions.c.agent).where(
                sessions.c.session_id == query.session_id)).scalar_one_or_none()
            names = _tool_names_for(aliases, query.tool, agent)
            tool_condition: ColumnElement[bool] | None = _names_condition(
                aliases, query.tool, names, agent)
        else:
            tool_condition = _tool_condition(aliases, query.tool)
        if tool_condition is None:
            return None
        conditions.append(tool_condition)
    if query.raw_name is not None:
        conditions.append(c.c.raw_name == query.raw_name)
    one = query.session_id  # the search helpers scope to one session's index tail
    if query.session_id is not None and query.with_children:
        conditions.append(c.c.session_id.in_(descendant_ids(conn, query.session_id)))
        one = None
    elif query.session_id is not None:
        conditions.append(c.c.session_id == query.session_id)
    if query.agent is not None or query.cwd is not None:
        conditions.append(c.c.session_id.in_(sessions_where(agent=query.agent, cwd=query.cwd)))
    conditions.extend(time_filters(query.since, query.until, m))
    trust = (trust_for(conn, one, exact=query.exact, warn=warn, gaps=cached_gaps)
             if query.text is not None or query.where or query.views else Trust())
    if query.status:
        conditions.append(or_(*(_status_condition(s) for s in query.status)))
    for number, condition in enumerate(query.where):
        conditions.append(_argument_condition(conn, number, condition, trust, one))
    for number, view in enumerate(query.views):
        conditions.append(view_condition(conn, number, view, one, trust))
    source = c if bare else calls_with_time(m)
    if query.text is not None:
        # The keys of the calls the text index finds drive the join (not a scan of calls).
        found = text_hits(conn, query.text, results=True, prefix="text", trust=trust,
                          session_id=one)
        if found is None:
            return None
        hits = found.subquery("hits")
        source = hits.join(c, and_(c.c.session_id == hits.c.session_id,
                                   c.c.position == hits.c.position,
                                   c.c.call_index == hits.c.call_index))
        if not bare:
            source = source.join(m, and_(m.c.session_id == c.c.session_id,
                                         m.c.position == c.c.position))
    if counting:
        return select(c.c.session_id, c.c.position, c.c.call_index).select_from(
            source).where(*conditions)
    return (
        select(c.c.session_id, c.c.position, c.c.call_index, c.c.call_id, c.c.raw_name,
               c.c.arguments_status, c.c.arguments_error,
               wire_column(c, conn.dialect.name == "postgresql"), c.c.extras_json,
               c.c.source, c.c.id_minted, m.c.created_at)
        .select_from(source)
        .where(*conditions)
        .order_by(m.c.created_at, c.c.session_id, c.c.position, c.c.call_index)
    )


def _tool_names_for(aliases: AliasTable, tool: str, agent: str | None) -> list[str]:
    """The raw names (and ``<raw>#<action>`` keys) that are ``tool`` in a session of
    ``agent`` (as a load names them)."""
    return sorted({raw for _, raw in aliases.sources(tool) if aliases.resolve(raw, agent) == tool})


def _names_condition(aliases: AliasTable, tool: str, names: Sequence[str],
                     agent: str | None = None) -> ColumnElement[bool] | None:
    """Calls whose raw name is one of ``names`` (an IN list), where a name of an editor tool
    (:mod:`store.tools.actions`) counts only for the actions named ``tool`` (``<raw>#<action>``
    keys: that action; a plain raw name: its calls less the actions named otherwise)."""
    c = tool_calls
    plain = sorted({n for n in names if split_action_key(n)[1] is None})
    keyed = sorted({split_action_key(n) for n in names if split_action_key(n)[1] is not None})
    simple = [n for n in plain if n not in ACTION_ARGUMENT]
    parts: list[ColumnElement[bool]] = [c.c.raw_name.in_(simple)] if simple else []
    action = action_column()
    for raw in sorted(set(plain) & set(ACTION_ARGUMENT)):
        others = sorted({a for a in aliases.actions(raw) if aliases.resolve(raw, agent, a) != tool})
        parts.append(and_(c.c.raw_name == raw, or_(action.is_(None), action.not_in(others)))
                     if others else c.c.raw_name == raw)
    for raw, act in keyed:
        parts.append(and_(c.c.raw_name == raw, action == act))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else or_(*parts)


def _tool_condition(aliases: AliasTable, tool: str) -> ColumnElement[bool] | None:
    """Alias-aware: calls whose current name is ``tool`` (``ix_tool_calls_usage``): raw names
    whose global name is the tool, less the sessions of agents whose scoped alias renames them
    otherwise, plus (agent, raw name) pairs scoped to the tool. Each side is one IN list of
    raw names (the raw-name index) and at most one check of the session's agent against a
    list of pairs: a subquery per name made PostgreSQL give up the index for a filtered scan
    once a dozen agents had scoped names. An editor tool's calls count by their action
    (:func:`_names_condition`)."""
    c = tool_calls

    def agent_pair(pairs: list[tuple[str, str]]) -> ColumnElement[bool]:
        return exists(select(sessions.c.session_id).where(
            sessions.c.session_id == c.c.session_id,
            tuple_(sessions.c.agent, c.c.raw_name).in_(pairs)))

    plain = sorted({raw for agent, raw in aliases.sources(tool) if agent is None})
    keyed = [raw for raw in plain if split_action_key(raw)[1] is not None]
    plain = [raw for raw in plain if raw not in keyed]
    renamed = sorted((agent, raw) for (agent, raw), current in aliases.scoped.items()
                     if raw in plain and current != tool)
    scoped = sorted((agent, raw) for agent, raw in aliases.sources(tool)
                    if agent is not None and raw not in plain)  # (else the global covers it)
    parts: list[ColumnElement[bool]] = []
    named = _names_condition(aliases, tool, plain)
    if named is not None:
        parts.append(and_(named, not_(agent_pair(renamed))) if renamed else named)
    named = _names_condition(aliases, tool, keyed)  # (an action's row wins over a scoped one)
    if named is not None:
        parts.append(named)
    simple = [(agent, raw) for agent, raw in scoped if raw not in ACTION_ARGUMENT
              and split_action_key(raw)[1] is None]
    if simple:
        parts.append(and_(c.c.raw_name.in_(sorted({raw for _, raw in simple})),
                          agent_pair(simple)))
    for raw in sorted({split_action_key(r)[0] for _, r in scoped if (_, r) not in simple}):
        mine = [(agent, r) for agent, r in scoped if split_action_key(r)[0] == raw]
        named = _names_condition(aliases, tool, [r for _, r in mine])
        if named is not None:  # (an editor tool scoped to an agent: by its action)
            parts.append(and_(named, agent_pair([(agent, raw) for agent, _ in mine])))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else or_(*parts)


def _status_condition(status: str) -> ColumnElement[bool]:
    c = tool_calls
    r = tool_results.alias("r")
    if status == "invalid":
        return c.c.arguments_status.not_in(_VALID)
    if status == "error":  # ix_tool_results_errors (partial: error results only)
        return exists_row(r, linked(r), r.c.is_error == true())
    if status == "no_result":  # ix_tool_results_call
        return not_(exists_row(r, linked(r)))
    return c.c.arguments_status == status


def _argument_condition(conn: Connection, number: int, condition: ArgumentCondition,
                        trust: Trust, session_id: str | None = None) -> Any:
    """``store.audit.conditions.sql_condition``, pre-filtered by the search index where the
    condition implies a string in the call's decoded text (each string value of the
    arguments is a line of it): a ``contains`` of MIN_TEXT+ characters, or an ``eq`` of a
    string (that string between two line breaks)."""
    dialect = conn.dialect.name
    sql = sql_condition(dialect, number, condition)
    value = condition.value
    needle: str | None = None
    if isinstance(value, str):
        if condition.op == "eq" and value and "\n" not in value:
            needle = f"\n{value}\n"
        elif condition.op == "contains" and len(value) >= MIN_TEXT:
            needle = value
    if needle is None or "\x00" in needle:
        return sql
    if dialect == "postgresql" and condition.op == "eq":
        return sql  # ix_tool_calls_arguments_gin (@>) serves it
    if dialect != "postgresql" and not has_search_index(conn):
        return sql
    params: dict[str, Any] = {}
    guard = prefilter_sql(conn, needle, f"arg_value_{number}_hit", params, trust, session_id)
    return and_(text(guard.removesuffix(" AND ")).bindparams(**params), sql)


def _places(conn: Connection, session_ids: set[str]
            ) -> dict[str, tuple[str | None, str | None]]:
    """The agent and working folder of these sessions (shown with each call; the agent also
    picks the aliases scoped to it)."""
    if not session_ids:
        return {}
    return {str(row[0]): (row[1], row[2]) for row in conn.execute(
        select(sessions.c.session_id, sessions.c.agent, sessions.c.cwd)
        .where(sessions.c.session_id.in_(sorted(session_ids)))).fetchall()}
