"""Audits over every stored session: tool usage, call search, schema audit (persistence layer).

Every function takes a :class:`~store.db.store.TranscriptStore` and returns small frozen
dataclasses, paged with ``limit`` / ``offset``. Tool names are **current** names: the alias
table as stored now applies at read time, so adding an alias regroups the usage summary and
widens a tool filter without rewriting a row (``raw_name`` keeps the recorded name).

* :func:`tool_usage`: per current tool name, calls, sessions, invalid calls, calls with an
  error result, calls without a result, first and last seen. Grouped by raw name in SQL from
  covering indexes (the argument JSON is never read), folded into current names here.
* :func:`search_calls` (:func:`iter_calls` streams): calls matching a :class:`CallQuery`:
  tool (alias-aware) or raw name, session, time range (the time of the call's message),
  status, argument conditions (:class:`ArgumentCondition`: a JSON path equal to, or a string
  there containing, a value) and full text over arguments and results; all combinable (AND).
  Oldest first; each match carries its first result's preview.
* :func:`schema_audit`: stored calls validated against the tool definitions recorded with
  their session, or against a schema the caller gives (:func:`load_schema_file`), with the
  ``Parameters`` validator; one :class:`SchemaViolation` per offending call.

Audit output can be redacted (``redactor=``, see ``store.redact``): argument texts, result
previews and problem messages. Which index serves which query is listed in
``store/db/search_schema.py``. Times are aware UTC datetimes; ``since`` is inclusive, ``until``
exclusive, naive datetimes are taken as UTC.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import orjson
from sqlalchemy import (
    Connection,
    and_,
    case,
    distinct,
    func,
    literal_column,
    not_,
    or_,
    select,
    text,
    true,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import ColumnElement, TextClause
from sqlalchemy.sql.selectable import Alias, Exists

from store.arguments import CALL_STATUSES, loads_json
from store.audit.conditions import ArgumentCondition, ViewCondition, sql_condition, view_sql
from store.codec import decode_call
from store.db.base import alias_table, driver_reason
from store.db.search_index import KIND_CALL, has_search_index, tail_keys
from store.db.search_schema import (
    MIN_TEXT,
    fts_phrase,
    like_pattern,
)
from store.db.tables import messages, sessions, tool_calls, tool_results
from store.errors import DatabaseError, UsageError
from store.model import content_text
from store.names import AliasTable
from store.redact import Redactor
from store.times import as_utc

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = [
    "CALL_STATUSES",
    "ArgumentCondition",
    "CallMatch",
    "CallQuery",
    "SchemaViolation",
    "ViewCondition",
    "ToolUsage",
    "iter_calls",
    "search_calls",
    "tool_usage",
]

_VALID = ("ok", "empty")
_CHUNK = 250  # calls per follow-up query for their results (3 bound values each)


# -- values -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolUsage:
    """Usage of one current tool name. ``raw_names``: the recorded names folded into it."""

    name: str
    raw_names: tuple[str, ...]
    calls: int
    sessions: int
    invalid_calls: int
    error_results: int  # calls with an error result
    calls_without_result: int
    first_seen: datetime | None
    last_seen: datetime | None


@dataclass(frozen=True, slots=True)
class CallQuery:
    """The filters of a call search; every one given must hold (``status``: any of them)."""

    tool: str | None = None
    raw_name: str | None = None
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    status: str | tuple[str, ...] | None = None
    where: tuple[ArgumentCondition, ...] = ()
    text: str | None = None
    views: tuple[ViewCondition, ...] = ()

    def __post_init__(self) -> None:
        statuses = (self.status,) if isinstance(self.status, str) else self.status
        if statuses is not None:
            statuses = tuple(statuses)
            unknown = [s for s in statuses if s not in CALL_STATUSES]
            if unknown or not statuses:
                raise UsageError(
                    f"unknown call status {unknown or statuses!r}: use {', '.join(CALL_STATUSES)}"
                )
        object.__setattr__(self, "status", statuses)
        conditions = tuple(self.where)
        if not all(isinstance(c, ArgumentCondition) for c in conditions):
            raise UsageError("CallQuery.where takes ArgumentCondition values")
        object.__setattr__(self, "where", conditions)
        views = tuple(self.views)
        if not all(isinstance(c, ViewCondition) for c in views):
            raise UsageError("CallQuery.views takes ViewCondition values")
        object.__setattr__(self, "views", views)
        if self.text is not None and len(self.text) < MIN_TEXT:
            raise UsageError(f"a full-text search needs at least {MIN_TEXT} characters")


@dataclass(frozen=True, slots=True)
class CallMatch:
    """A call found by a search, with the time of its message and its first result.

    ``arguments_text`` is the argument text as recorded; ``result_preview`` the first result as
    text (cut to the preview length, ``None`` when the call has no result). ``redactions``
    counts the secrets replaced in this match.
    """

    session_id: str
    position: int
    index: int
    call_id: str
    name: str
    raw_name: str
    status: str
    arguments_text: str
    arguments_error: str | None
    created_at: datetime
    result_preview: str | None
    result_is_error: bool | None
    redactions: int = 0


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    """A stored call that its tool's schema rejects.

    ``kind``: ``schema`` (the validator's problems), ``invalid_arguments`` (the arguments are not
    a JSON object; the parser's error), ``undefined_tool`` (the session recorded definitions,
    none for this tool), ``unreadable_schema`` (the definition's schema is outside what
    ``Parameters.from_json_schema`` reads). ``source``: ``session`` or ``given``.
    """

    session_id: str
    position: int
    index: int
    call_id: str
    name: str
    raw_name: str
    kind: Literal["schema", "invalid_arguments", "undefined_tool", "unreadable_schema"]
    problems: tuple[str, ...]
    arguments_text: str
    source: Literal["session", "given"]
    redactions: int = field(default=0, compare=False)


# -- tool usage -------------------------------------------------------------------------------


def tool_usage(
    store: TranscriptStore,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    session_id: str | None = None,
    limit: int | None = 100,
    offset: int = 0,
) -> list[ToolUsage]:
    """Usage per current tool name, most called first (then by name), paged (``limit=None``:
    every tool; :func:`count_tools` gives the total).

    A bounded number of statements whatever the number of tools (at most six), none reading
    argument JSON (``store/db/search_schema.py``). Over the whole store: calls, sessions and
    invalid calls per raw name from one scan of ``ix_tool_calls_usage``; calls with an error
    result from ``ix_tool_results_errors``; calls without a result by an anti-join with
    ``ix_tool_results_call``; first and last seen in one grouped join with
    ``ix_messages_time``. With a time range or a session: one grouped join. Raw names that an
    alias scoped to an agent renames are counted again per (agent, raw name) in one grouped
    join with the sessions; the distinct sessions of a current name with several raw names
    are counted exactly from the distinct (raw name, session) pairs of those names.
    """
    _check_page(limit, offset)
    with _connect(store) as conn:
        _no_jit(conn)
        out = _usage(conn, since, until, session_id)
        conn.rollback()
    out.sort(key=lambda u: (-u.calls, u.name))
    return out[offset:] if limit is None else out[offset:offset + limit]


def count_tools(
    store: TranscriptStore,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    session_id: str | None = None,
) -> int:
    """How many current tool names :func:`tool_usage` reports (for "showing N of M")."""
    return len(tool_usage(store, since=since, until=until, session_id=session_id, limit=None))


_Key = tuple[str | None, str]  # (agent, raw name); agent None: calls of any agent


def _usage(conn: Connection, since: datetime | None, until: datetime | None,
           session_id: str | None) -> list[ToolUsage]:
    whole = since is None and until is None and session_id is None
    stats: dict[_Key, list[Any]] = {}
    if whole:
        for raw, row in _usage_whole_store(conn).items():
            stats[(None, raw)] = row
    else:
        for found in conn.execute(_usage_statement(since, until, session_id)):
            stats[(None, found[0])] = list(found[1:])
    aliases = alias_table(conn)
    scoped_raws = sorted({raw for _, raw in aliases.scoped} & {raw for _, raw in stats})
    if scoped_raws:  # count those again per agent
        for raw in scoped_raws:
            del stats[(None, raw)]
        for found in conn.execute(_usage_statement(since, until, session_id, scoped_raws)):
            stats[(found[0], found[1])] = list(found[2:])
    groups: dict[str, list[_Key]] = {}
    for key in stats:
        groups.setdefault(aliases.display_name(key[1], key[0]), []).append(key)
    shared = {name: keys for name, keys in groups.items() if len(keys) > 1}
    sessions_of = _shared_sessions(conn, aliases, shared, since, until, session_id)
    out = []
    for name, keys in groups.items():
        rows = [stats[key] for key in keys]
        firsts = [row[5] for row in rows if row[5] is not None]
        lasts = [row[6] for row in rows if row[6] is not None]
        out.append(ToolUsage(
            name, tuple(sorted({raw for _, raw in keys})),
            sum(int(row[0]) for row in rows),
            sessions_of[name] if name in sessions_of else int(rows[0][1]),
            sum(int(row[2] or 0) for row in rows),
            sum(int(row[3] or 0) for row in rows),
            sum(int(row[4] or 0) for row in rows),
            min(_aware(t) for t in firsts) if firsts else None,
            max(_aware(t) for t in lasts) if lasts else None,
        ))
    return out


def _shared_sessions(
    conn: Connection, aliases: AliasTable, shared: dict[str, list[_Key]],
    since: datetime | None, until: datetime | None, session_id: str | None,
) -> dict[str, int]:
    """Distinct sessions of each current name made of several (agent, raw) keys: one query
    for the distinct (raw name, session) pairs of their raw names (and, when a scoped alias is
    among them, one for those sessions' agents)."""
    if not shared:
        return {}
    c = tool_calls
    raws = sorted({raw for keys in shared.values() for _, raw in keys})
    pairs = select(c.c.raw_name, c.c.session_id).where(c.c.raw_name.in_(raws))
    if session_id is not None:
        pairs = pairs.where(c.c.session_id == session_id)
    if since is not None or until is not None:
        pairs = pairs.select_from(_calls_with_time(messages)).where(
            *_time_filters(since, until))
    rows = conn.execute(pairs.group_by(c.c.raw_name, c.c.session_id)).all()
    agents: dict[str, str | None] = {}
    if any(agent is not None for keys in shared.values() for agent, _ in keys):
        agents = {str(row[0]): row[1] for row in conn.execute(
            select(sessions.c.session_id, sessions.c.agent)
            .where(sessions.c.agent.is_not(None)))}
    found: dict[str, set[str]] = {name: set() for name in shared}
    for raw, sid in rows:
        name = aliases.display_name(raw, agents.get(sid))
        if name in found:
            found[name].add(sid)
    return {name: len(sids) for name, sids in found.items()}


def _usage_whole_store(conn: Connection) -> dict[str, list[Any]]:
    """[calls, sessions, invalid, errors, without result, None, None] per raw name."""
    counts, errors, unanswered = _usage_statements(conn.dialect.name)
    stats: dict[str, list[Any]] = {}
    for raw, calls, session_count, invalid in conn.execute(counts):
        stats[raw] = [calls, session_count, invalid, 0, 0, None, None]
    for raw, count in conn.execute(errors):
        stats[raw][3] = count
    for raw, count in conn.execute(unanswered):
        stats[raw][4] = count
    for raw, first, last in conn.execute(_seen_statement()):
        if raw in stats:
            stats[raw][5], stats[raw][6] = first, last
    return stats


def _usage_statements(dialect: str) -> tuple[Any, Any, Any]:
    """The whole-store usage statements: counts, calls with an error result, calls without a
    result, each per raw name."""
    c = tool_calls
    r = tool_results.alias("r")
    invalid = func.sum(case((c.c.arguments_status.in_(_VALID), 0), else_=1))
    # One scan of ix_tool_calls_usage (covering): calls, sessions, invalid calls.
    if dialect == "postgresql":  # grouped by (raw name, session) first: no sort for DISTINCT
        per_session = (
            select(c.c.raw_name, func.count().label("calls"), invalid.label("invalid"))
            .group_by(c.c.raw_name, c.c.session_id).subquery("per_session")
        )
        p = per_session.c
        counts = (select(p.raw_name, func.sum(p.calls), func.count(), func.sum(p.invalid))
                  .group_by(p.raw_name))
    else:
        counts = (select(c.c.raw_name, func.count(), func.count(distinct(c.c.session_id)),
                         invalid).group_by(c.c.raw_name))
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
        .group_by(c.c.raw_name)
    )
    # An anti-join of ix_tool_calls_usage with ix_tool_results_call.
    unanswered = (
        select(c.c.raw_name, func.count()).where(not_(_exists(r, _linked(r))))
        .group_by(c.c.raw_name)
    )
    return counts, errors, unanswered


def _no_jit(conn: Connection) -> None:
    """PostgreSQL: no JIT compilation for this transaction (it costs more than it saves on
    these index scans)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SET LOCAL jit = off")


def _usage_statement(
    since: datetime | None, until: datetime | None, session_id: str | None,
    scoped_raws: Sequence[str] | None = None,
) -> Any:
    """One grouped join: [raw, calls, sessions, invalid, errors, without result, first, last]
    (for a time range or a session); with ``scoped_raws``: those raw names only, grouped by
    (the session's agent, raw name), the agent first."""
    c, m = tool_calls, _message_side(timed=since is not None or until is not None)
    r = tool_results.alias("r")
    linked = _linked(r)
    filters = _time_filters(since, until, m)
    if session_id is not None:
        filters.append(c.c.session_id == session_id)
    source = _calls_with_time(m)
    keys: list[Any] = [c.c.raw_name]
    if scoped_raws is not None:
        filters.append(c.c.raw_name.in_(list(scoped_raws)))
        source = source.join(sessions, sessions.c.session_id == c.c.session_id)
        keys = [sessions.c.agent, c.c.raw_name]
    return (
        select(
            *keys,
            func.count(),
            func.count(distinct(c.c.session_id)),
            func.sum(case((c.c.arguments_status.in_(_VALID), 0), else_=1)),
            func.sum(case((_exists(r, linked, r.c.is_error == true()), 1), else_=0)),
            func.sum(case((_exists(r, linked), 0), else_=1)),
            func.min(m.c.created_at),
            func.max(m.c.created_at),
        )
        .select_from(source)
        .where(*filters)
        .group_by(*keys)
    )


def _seen_statement() -> Any:
    """First and last seen per raw name: one grouped join of ``ix_tool_calls_usage`` with
    ``ix_messages_time`` (covering)."""
    c, m = tool_calls, _message_side(timed=False)
    return (select(c.c.raw_name, func.min(m.c.created_at), func.max(m.c.created_at))
            .select_from(_calls_with_time(m)).group_by(c.c.raw_name))


# -- call search ------------------------------------------------------------------------------


def search_calls(
    store: TranscriptStore,
    query: CallQuery | None = None,
    *,
    limit: int = 50,
    offset: int = 0,
    preview_chars: int | None = 200,
    redactor: Redactor | None = None,
) -> list[CallMatch]:
    """The calls matching ``query`` (every call without one), oldest first, paged.

    ``preview_chars`` cuts each result preview (``None``: the whole result as text);
    ``redactor`` redacts argument texts and previews.
    """
    _check_page(limit, offset)
    query = query or CallQuery()
    _catch_up(store, query)
    with _connect(store) as conn:
        return list(_matches(conn, query, limit, offset, preview_chars, redactor))


def count_calls(store: TranscriptStore, query: CallQuery | None = None) -> int:
    """How many calls match ``query`` (for "showing N of M")."""
    with _connect(store) as conn:
        statement = _search_statement(conn, alias_table(conn), query or CallQuery())
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
) -> Iterator[CallMatch]:
    """Every call matching ``query``, oldest first, streamed (for exports)."""
    query = query or CallQuery()
    _catch_up(store, query)
    with _connect(store) as conn:
        yield from _matches(conn, query, None, 0, preview_chars, redactor)


def _catch_up(store: TranscriptStore, query: CallQuery) -> None:
    """Before a search that uses the search index: bring it up to date when the store may
    write (a read-only store scans what is not indexed yet instead; see
    ``store/db/search_index.py``)."""
    if (query.text is not None or query.where) and not store.read_only:
        store.update_search_index()


def _matches(
    conn: Connection,
    query: CallQuery,
    limit: int | None,
    offset: int,
    preview_chars: int | None,
    redactor: Redactor | None,
) -> Iterator[CallMatch]:
    aliases = alias_table(conn)
    statement = _search_statement(conn, aliases, query)
    if statement is None:
        return
    if limit is not None:
        statement = statement.limit(limit).offset(offset)
    if conn.dialect.name == "postgresql" and (query.text is not None or query.where):
        # The decoded texts are TOASTed: the planner prices a scan of search_items by its small
        # main heap, not by the text it would decompress and match (measured: a scan 18x slower
        # than the trigram index on 12 MB of text), so it is told to prefer the indexes.
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
    rows = conn.execution_options(stream_results=limit is None, yield_per=_CHUNK).execute(
        statement
    )
    try:
        scoped = {raw for _, raw in aliases.scoped}
        for chunk in _chunks(rows, _CHUNK):
            results = _first_results(conn, [(r[0], r[1], r[2]) for r in chunk])
            agents = _agents(conn, {r[0] for r in chunk if r[4] in scoped})
            for row in chunk:
                yield _match(row, aliases, results.get((row[0], row[1], row[2])),
                             preview_chars, redactor, agents.get(row[0]))
    finally:
        rows.close()


def _search_statement(conn: Connection, aliases: AliasTable, query: CallQuery) -> Any:
    """The SELECT of the matching calls, oldest first; ``None`` when nothing can match."""
    c = tool_calls
    m = _message_side(timed=query.since is not None or query.until is not None)
    conditions: list[ColumnElement[bool] | TextClause] = []
    if query.tool is not None:
        tool_condition = _tool_condition(aliases, query.tool)
        if tool_condition is None:
            return None
        conditions.append(tool_condition)
    if query.raw_name is not None:
        conditions.append(c.c.raw_name == query.raw_name)
    if query.session_id is not None:
        conditions.append(c.c.session_id == query.session_id)
    conditions.extend(_time_filters(query.since, query.until, m))
    if query.status:
        conditions.append(or_(*(_status_condition(s) for s in query.status)))
    for number, condition in enumerate(query.where):
        conditions.append(_argument_condition(conn, number, condition))
    for number, view in enumerate(query.views):  # ix_tool_calls_<view> (partial, covering)
        conditions.append(view_sql(conn.dialect.name, number, view))
    source = _calls_with_time(m)
    if query.text is not None:
        # The keys of the calls the text index finds drive the join (not a scan of calls).
        found = _text_hits(conn, query.text, results=True, prefix="text")
        if found is None:
            return None
        hits = found.subquery("hits")
        source = hits.join(c, and_(c.c.session_id == hits.c.session_id,
                                   c.c.position == hits.c.position,
                                   c.c.call_index == hits.c.call_index)).join(
            m, and_(m.c.session_id == c.c.session_id, m.c.position == c.c.position))
    return (
        select(c.c.session_id, c.c.position, c.c.call_index, c.c.call_id, c.c.raw_name,
               c.c.arguments_status, c.c.arguments_error, c.c.wire_json, c.c.extras_json,
               c.c.source, c.c.id_minted, m.c.created_at)
        .select_from(source)
        .where(*conditions)
        .order_by(m.c.created_at, c.c.session_id, c.c.position, c.c.call_index)
    )


def _tool_condition(aliases: AliasTable, tool: str) -> ColumnElement[bool] | None:
    """Alias-aware: calls whose current name is ``tool`` (``ix_tool_calls_usage``): raw names
    whose global name is the tool, less the sessions of agents whose scoped alias renames them
    otherwise, plus (agent, raw name) pairs scoped to the tool."""
    c = tool_calls
    parts: list[ColumnElement[bool]] = []
    plain = [raw for agent, raw in aliases.sources(tool) if agent is None]
    simple: list[str] = []
    for raw in sorted(set(plain)):
        others = sorted(agent for (agent, name), current in aliases.scoped.items()
                        if name == raw and current != tool)
        if others:
            parts.append(and_(c.c.raw_name == raw, c.c.session_id.not_in(
                select(sessions.c.session_id).where(sessions.c.agent.in_(others)))))
        else:
            simple.append(raw)
    if simple:
        parts.append(c.c.raw_name.in_(simple))
    scoped: dict[str, list[str]] = {}
    for agent, raw in aliases.sources(tool):
        if agent is not None and raw not in plain:  # (else the global name covers it)
            scoped.setdefault(raw, []).append(agent)
    for raw, agents in sorted(scoped.items()):
        parts.append(and_(c.c.raw_name == raw, c.c.session_id.in_(
            select(sessions.c.session_id).where(sessions.c.agent.in_(sorted(agents))))))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else or_(*parts)


def _status_condition(status: str) -> ColumnElement[bool]:
    c = tool_calls
    r = tool_results.alias("r")
    if status == "invalid":
        return c.c.arguments_status.not_in(_VALID)
    if status == "error":  # ix_tool_results_errors (partial: error results only)
        return _exists(r, _linked(r), r.c.is_error == true())
    if status == "no_result":  # ix_tool_results_call
        return not_(_exists(r, _linked(r)))
    return c.c.arguments_status == status


def _argument_condition(conn: Connection, number: int, condition: ArgumentCondition) -> Any:
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
    guard = _prefilter(conn, needle, f"arg_value_{number}_hit", params)
    return and_(text(guard.removesuffix(" AND ")).bindparams(**params), sql)


def _prefilter(conn: Connection, needle: str, prefix: str, params: dict[str, Any]) -> str:
    """``(call key) IN (the calls whose decoded text holds needle) AND `` (index + tail)."""
    sql, hit_params = _hits_sql(conn, needle, results=False, prefix=prefix)
    params.update(hit_params)
    if sql is None:
        return "1 = 0 AND "
    return ("(tool_calls.session_id, tool_calls.position, tool_calls.call_index) IN "
            f"({sql}) AND ")


def _hits_sql(conn: Connection, needle: str, *, results: bool, prefix: str
              ) -> tuple[str | None, dict[str, Any]]:
    """SQL selecting (session_id, position, call_index) of the calls whose decoded text holds
    ``needle`` (with ``results``: or one of whose linked results' does), case-insensitively:
    the search index's hits and an exact scan of what it has not caught up with yet."""
    dialect = conn.dialect.name
    indexed = has_search_index(conn)
    tail = tail_keys(conn, needle, results=results, everything=not indexed)
    parts: list[str] = []
    params: dict[str, Any] = {}
    kind = "" if results else f" AND kind = {KIND_CALL}"
    if indexed and dialect == "postgresql":  # ix_search_items_body_trgm
        parts.append("SELECT DISTINCT session_id, call_position AS position, call_index "
                     f"FROM search_items WHERE body ILIKE :{prefix}_like{kind}")
        params[f"{prefix}_like"] = like_pattern(needle)
    elif indexed:  # search_fts (FTS5 trigram)
        parts.append("SELECT DISTINCT session_id, call_position AS position, call_index "
                     "FROM search_items WHERE id IN (SELECT rowid FROM search_fts "
                     f"WHERE search_fts MATCH :{prefix}_fts){kind}")
        params[f"{prefix}_fts"] = fts_phrase(needle)
    if tail:
        if dialect == "postgresql":
            parts.append(f"SELECT * FROM unnest(CAST(:{prefix}_s AS TEXT[]), "
                         f"CAST(:{prefix}_p AS INTEGER[]), CAST(:{prefix}_i AS INTEGER[])) "
                         "AS tail(session_id, position, call_index)")
            params[f"{prefix}_s"] = [k[0] for k in tail]
            params[f"{prefix}_p"] = [k[1] for k in tail]
            params[f"{prefix}_i"] = [k[2] for k in tail]
        else:
            parts.append("SELECT value ->> 0 AS session_id, value ->> 1 AS position, "
                         "value ->> 2 AS call_index "
                         f"FROM json_each(:{prefix}_tail)")
            params[f"{prefix}_tail"] = orjson.dumps(tail).decode()
    if not parts:
        return None, params
    return " UNION ".join(parts), params


def _text_hits(conn: Connection, needle: str, *, results: bool, prefix: str) -> Any:
    """Full text: the keys of the calls whose decoded argument text, or a linked result's,
    holds ``needle`` case-insensitively; ``None`` when nothing can match."""
    sql, params = _hits_sql(conn, needle, results=results, prefix=prefix)
    if sql is None:
        return None
    from sqlalchemy import Integer, String

    # Orphan results (no linked call: NULL position) drop out at the join with the calls.
    return text(sql).bindparams(**params).columns(
        session_id=String, position=Integer, call_index=Integer)


def _agents(conn: Connection, session_ids: set[str]) -> dict[str, str | None]:
    """The agents of these sessions (for aliases scoped by agent)."""
    if not session_ids:
        return {}
    return {str(row[0]): row[1] for row in conn.execute(
        select(sessions.c.session_id, sessions.c.agent)
        .where(sessions.c.session_id.in_(sorted(session_ids))))}


def _first_results(
    conn: Connection, keys: Sequence[tuple[str, int, int]]
) -> dict[tuple[str, int, int], tuple[bool, str]]:
    """The first linked result (is_error, content_json) of each call (ix_tool_results_call)."""
    out: dict[tuple[str, int, int], tuple[bool, str]] = {}
    if not keys:
        return out
    # OR of the keys, not a row-value IN list (which SQLite answers with a scan); driver SQL,
    # because building it as a Core construct cost more than running it.
    mark = "%s" if conn.dialect.name == "postgresql" else "?"
    condition = " OR ".join(
        [f"(session_id = {mark} AND call_position = {mark} AND call_index = {mark})"] * len(keys))
    rows = conn.exec_driver_sql(
        "SELECT session_id, call_position, call_index, is_error, content_json FROM tool_results "
        f"WHERE {condition} ORDER BY session_id, position, result_index",
        tuple(value for key in keys for value in key))
    for sid, pos, idx, is_error, content in rows:
        out.setdefault((sid, pos, idx), (bool(is_error), content))
    return out


def _match(
    row: Any,
    aliases: AliasTable,
    result: tuple[bool, str] | None,
    preview_chars: int | None,
    redactor: Redactor | None,
    agent: str | None = None,
) -> CallMatch:
    sid, pos, idx, call_id, raw, status, error, wire, extras, source, minted, created = row
    call = decode_call(call_id, wire, status, error, extras, source, bool(minted))
    arguments = call.arguments_text
    redactions = 0
    preview: str | None = None
    if result is not None:
        preview = content_text(loads_json(result[1]))
    if redactor is not None:
        arguments, count = redactor.redact_text(arguments)
        redactions += count
        if error is not None:
            error, count = redactor.redact_text(error)
            redactions += count
        if preview is not None:
            preview, count = redactor.redact_text(preview)
            redactions += count
    if preview is not None and preview_chars is not None and len(preview) > preview_chars:
        preview = preview[:preview_chars] + "…"
    return CallMatch(sid, pos, idx, call_id, aliases.display_name(raw, agent), raw, status,
                     arguments,
                     error, _aware(created), preview,
                     None if result is None else result[0], redactions)


# -- helpers ----------------------------------------------------------------------------------


class _connect:
    """A read connection whose database errors surface as ``DatabaseError``."""

    def __init__(self, store: TranscriptStore) -> None:
        self._store = store
        self._conn: Connection | None = None

    def __enter__(self) -> Connection:
        from sqlalchemy.exc import SQLAlchemyError

        try:
            self._conn = self._store.engine.connect()
        except SQLAlchemyError as exc:
            raise DatabaseError(f"{self._store.url}: {driver_reason(exc)}") from exc
        return self._conn

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        from sqlalchemy.exc import SQLAlchemyError

        assert self._conn is not None
        self._conn.close()
        if isinstance(exc, SQLAlchemyError):
            raise DatabaseError(f"{self._store.url}: {driver_reason(exc)}") from exc


@functools.cache
def _calls_with_time(m: Any) -> Any:
    """tool_calls joined to its message ``m`` (for the time)."""
    c = tool_calls
    return c.join(m, and_(m.c.session_id == c.c.session_id, m.c.position == c.c.position))


@functools.cache
def _message_side(timed: bool) -> Any:
    """The messages to join to calls: the table when a time range may drive the query (from
    ``ix_messages_created_at``), else an alias that SQLite looks up in the covering
    ``ix_messages_time`` (without statistics it would take the primary key and read the
    message rows)."""
    if timed:
        return messages
    return _LookupAlias._construct(messages, name="m")


class _LookupAlias(Alias):
    """``messages AS m``; on SQLite ``... INDEXED BY ix_messages_time``."""

    inherit_cache = True


@compiles(_LookupAlias, "sqlite")
def _compile_lookup(element: _LookupAlias, compiler: Any, **kw: Any) -> str:
    sql = str(compiler.visit_alias(element, **kw))
    return sql + " INDEXED BY ix_messages_time" if kw.get("asfrom") else sql


def _exists(table: Any, *conditions: ColumnElement[bool]) -> Exists:
    """``EXISTS (SELECT 1 FROM table WHERE ...)``: a constant, so SQLite answers from the
    index alone."""
    return select(literal_column("1")).select_from(table).where(*conditions).exists()


def _linked(r: Any) -> ColumnElement[bool]:
    c = tool_calls
    return and_(r.c.session_id == c.c.session_id, r.c.call_position == c.c.position,
                r.c.call_index == c.c.call_index)


def _time_filters(
    since: datetime | None, until: datetime | None, m: Any = messages
) -> list[ColumnElement[bool]]:
    out: list[ColumnElement[bool]] = []
    if since is not None:
        out.append(m.c.created_at >= as_utc(since))
    if until is not None:
        out.append(m.c.created_at < as_utc(until))
    return out


def _aware(value: Any) -> datetime:
    if isinstance(value, str):  # SQLite min()/max() may hand back the stored text
        value = datetime.fromisoformat(value)
    return as_utc(value)


def _check_page(limit: int | None, offset: int) -> None:
    if (limit is not None and limit < 0) or offset < 0:
        raise UsageError("limit and offset must not be negative")


def _chunks(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
