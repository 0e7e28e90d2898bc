"""``calls search`` of an SQLite file on the stdlib driver (or of a PostgreSQL database on
psycopg alone: :mod:`store.db.reading.pgread`), for the command line's start-up
(persistence; no SQLAlchemy).

:class:`LiteCalls` answers :func:`store.audit.search.iter_calls` / ``search_calls`` /
``count_calls`` of a read-only store with ``sqlite3`` and the statement SQLAlchemy compiles
for ``search_statement`` on SQLite, written out here for the common filters (tool, raw name,
one session, agent, folder, time range, status, full text, argument views); the derived rows'
SQL and trust (``store.audit.hits_sql``, ``store.db.index``), each call's first result and the
match of a row (``store.audit.call_rows``) are the store's own code, run on a
``DriverConnection``. A test compares both answers on many filter combinations, on both
backends. On PostgreSQL the statement is the same text but where the backends differ (times
as times, no ``INDEXED BY``, the action's JSON, a boolean); its named parameters are bound as
SQLAlchemy's ``text()`` binds them, and every hit is streamed from a server-side cursor, as
the store streams them. Only the happy path: a plain SQLite file or a PostgreSQL database at
head (:func:`open_calls`, else ``None``), a query without
argument conditions, ``exact`` or ``with_children`` (:func:`lite_query`, else the caller asks
the store, which also words every error).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from store.audit.call_rows import CallMatch, CallQuery, first_results, match_row
from store.audit.hits_sql import Trust, hits_sql, trust_for, view_condition_sql
from store.audit.lite_scope import lite_aliases, scope_sql
from store.core.times import as_utc
from store.db.reading.actions_sql import action_sql
from store.db.reading.lite import Reader, lite_session_id, open_reader
from store.db.reading.pgread import driver_of, is_pg
from store.db.schema.sqlitefile import register_functions, stored_time
from store.db.schema.wiretext import wire_sql
from store.tools.actions import ACTION_ARGUMENT, split_action_key
from store.tools.names import AliasTable

if TYPE_CHECKING:  # (redaction is imported by --redact only)
    from store.redaction.redact import Redactor

__all__ = ["LiteCalls", "lite_query", "open_calls", "tool_names_for"]

_CHUNK = 250  # calls per follow-up query for their results (as store.audit.search)
_VALID = "('ok', 'empty')"
_LINKED = ("r.session_id = tool_calls.session_id AND r.call_position = tool_calls.position "
           "AND r.call_index = tool_calls.call_index")


def _columns(pg: bool) -> str:
    """A page's call columns (SQLite: the wire text rebuilt where it is stored once)."""
    return ("tool_calls.session_id, tool_calls.position, tool_calls.call_index, "
            "tool_calls.call_id, tool_calls.raw_name, tool_calls.arguments_status, "
            f"tool_calls.arguments_error, {wire_sql(pg, 'tool_calls')}, tool_calls.extras_json, "
            "tool_calls.source, tool_calls.id_minted")


#: The keys of a page's matches: what the page is read by, and what counts them.
_KEYS = "tool_calls.session_id, tool_calls.position, tool_calls.call_index"
#: The most matches whose keys a page reads (their count is then known); past it, the page
#: is read by ``LIMIT``/``OFFSET`` and its count by ``count(*)``, as before.
_KEYED = 5_000
#: Keys per statement of a page's rows (three parameters each, within SQLite's 32,766).
_IN_KEYS = 500


class _Rows:
    """Rows already read, served as a cursor's ``fetchmany`` serves them."""

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows, self._at = rows, 0

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        chunk = self._rows[self._at:self._at + size]
        self._at += len(chunk)
        return chunk


def lite_query(query: CallQuery) -> bool:
    """Whether the stdlib search answers ``query`` (else the store does)."""
    return not query.where and not query.exact and not query.with_children


def tool_names_for(aliases: AliasTable, tool: str, agent: str | None) -> list[str]:
    """The raw names (and ``<raw>#<action>`` keys) that are ``tool`` in a session of
    ``agent`` (as a load names them)."""
    return sorted({raw for _, raw in aliases.sources(tool)
                   if aliases.resolve(raw, agent) == tool})


class _Params(dict[str, Any]):
    """Named parameters, each value given a fresh name (``pg``: for PostgreSQL)."""

    def __init__(self, pg: bool = False) -> None:
        super().__init__()
        self.pg = pg

    def bind(self, value: Any) -> str:
        name = f"lite_{len(self)}"
        self[name] = value
        return f":{name}"

    def marks(self, values: Sequence[Any]) -> str:
        return ", ".join(self.bind(v) for v in values)


def _names_sql(aliases: AliasTable, tool: str, names: Sequence[str], p: _Params,
               agent: str | None = None) -> str | None:
    """``store.audit.search._names_condition`` as SQL text."""
    plain = sorted({n for n in names if split_action_key(n)[1] is None})
    keyed = sorted({split_action_key(n) for n in names if split_action_key(n)[1] is not None})
    simple = [n for n in plain if n not in ACTION_ARGUMENT]
    parts = [f"tool_calls.raw_name IN ({p.marks(simple)})"] if simple else []
    action = action_sql(p.pg)
    for raw in sorted(set(plain) & set(ACTION_ARGUMENT)):
        others = sorted({a for a in aliases.actions(raw)
                         if aliases.resolve(raw, agent, a) != tool})
        if others:
            parts.append(f"tool_calls.raw_name = {p.bind(raw)} AND ({action} IS NULL OR "
                         f"({action} NOT IN ({p.marks(others)})))")
        else:
            parts.append(f"tool_calls.raw_name = {p.bind(raw)}")
    for raw, act in keyed:
        parts.append(f"tool_calls.raw_name = {p.bind(raw)} AND {action} = {p.bind(act)}")
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def _agent_pair(pairs: Sequence[tuple[str, str]], p: _Params) -> str:
    rows = ", ".join(f"({p.bind(a)}, {p.bind(r)})" for a, r in pairs)
    return ("(EXISTS (SELECT sessions.session_id FROM sessions WHERE sessions.session_id = "
            f"tool_calls.session_id AND (sessions.agent, tool_calls.raw_name) IN "
            f"(VALUES {rows})))")


def _tool_sql(aliases: AliasTable, tool: str, p: _Params) -> str | None:
    """``store.audit.search._tool_condition`` as SQL text."""
    plain = sorted({raw for agent, raw in aliases.sources(tool) if agent is None})
    keyed = [raw for raw in plain if split_action_key(raw)[1] is not None]
    plain = [raw for raw in plain if raw not in keyed]
    renamed = sorted((agent, raw) for (agent, raw), current in aliases.scoped.items()
                     if raw in plain and current != tool)
    scoped = sorted((agent, raw) for agent, raw in aliases.sources(tool)
                    if agent is not None and raw not in plain)
    parts: list[str] = []
    named = _names_sql(aliases, tool, plain, p)
    if named is not None:
        parts.append(f"{named} AND NOT {_agent_pair(renamed, p)}" if renamed else named)
    named = _names_sql(aliases, tool, keyed, p)
    if named is not None:
        parts.append(named)
    simple = [(agent, raw) for agent, raw in scoped if raw not in ACTION_ARGUMENT
              and split_action_key(raw)[1] is None]
    if simple:
        parts.append(f"tool_calls.raw_name IN ({p.marks(sorted({r for _, r in simple}))}) "
                     f"AND {_agent_pair(simple, p)}")
    for raw in sorted({split_action_key(r)[0] for _, r in scoped if (_, r) not in simple}):
        mine = [(agent, r) for agent, r in scoped if split_action_key(r)[0] == raw]
        named = _names_sql(aliases, tool, [r for _, r in mine], p)
        if named is not None:
            parts.append(f"{named} AND {_agent_pair([(a, raw) for a, _ in mine], p)}")
    if not parts:
        return None
    return "(" + " OR ".join(f"({part})" for part in parts) + ")"


def _status_sql(status: str, p: _Params) -> str:
    if status == "invalid":
        return f"tool_calls.arguments_status NOT IN {_VALID}"
    if status == "error":
        return (f"EXISTS (SELECT 1 FROM tool_results AS r WHERE {_LINKED} AND "
                f"r.is_error = {'true' if p.pg else '1'})")
    if status == "no_result":
        return f"NOT (EXISTS (SELECT 1 FROM tool_results AS r WHERE {_LINKED}))"
    return f"tool_calls.arguments_status = {p.bind(status)}"


class LiteCalls:
    """The call search of one SQLite file or PostgreSQL database, read-only, on its driver
    alone."""

    def __init__(self, connection: Reader) -> None:
        self._pg = is_pg(connection)
        #: ``?`` statements run here (PostgreSQL's reader turns the marks into psycopg's).
        self._reader = connection
        self._conn = driver_of(connection)
        self._aliases: AliasTable | None = None
        self._trusted: dict[str | None, Trust] = {}
        #: The last page's query and its number of matches (when it counted them).
        self._counted: tuple[CallQuery, int] | None = None

    def _trust(self, one: str | None, warn: Callable[[str], None] | None) -> Trust:
        """The key check (``trust_for``) once per scope: the connection holds one snapshot
        (``open_calls``), so a page and its count ask the same state (it was run twice)."""
        found = self._trusted.get(one)
        if found is None:
            found = self._trusted[one] = trust_for(self._conn, one, warn=warn)
        return found

    def close(self) -> None:
        self._reader.close()

    def _named(self, sql: str, params: dict[str, Any]) -> Any:
        """Run a statement with ``:name`` parameters; its cursor."""
        return (self._reader.execute_named if self._pg else self._reader.execute)(sql, params)

    def _stamp(self, value: Any) -> Any:
        """A time as a parameter: SQLite compares its stored text, PostgreSQL the time."""
        return as_utc(value) if self._pg else stored_time(as_utc(value))

    def __enter__(self) -> LiteCalls:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def _by_time(self) -> str:
        """The messages' covering index by time, named where SQLite's planner needs it."""
        return "" if self._pg else " INDEXED BY ix_messages_time"

    def aliases(self) -> AliasTable:
        if self._aliases is None:
            self._aliases = lite_aliases(self._reader)
        return self._aliases

    def agents(self) -> list[str]:
        return sorted(str(a) for (a,) in self._reader.execute(
            "SELECT DISTINCT agent FROM sessions WHERE agent IS NOT NULL"))

    def session_id(self, prefix: str) -> str | None:
        return lite_session_id(self._reader, prefix)

    def statement(self, query: CallQuery, warn: Callable[[str], None] | None = None,
                  columns: str | None = None, counting: bool = False
                  ) -> tuple[str, _Params] | None:
        """``store.audit.search.search_statement`` as SQL text (``None``: nothing can
        match); ``columns``: the calls' columns selected (before the message's time);
        ``counting``: the keys alone, unordered (no messages joined without a time range)."""
        conn, aliases, p = self._conn, self.aliases(), _Params(self._pg)
        columns = _columns(self._pg) if columns is None else columns
        timed = query.since is not None or query.until is not None
        m = "messages" if timed else "m"
        where: list[str] = []
        if query.tool is not None:
            if query.session_id is not None:
                found = self._reader.execute(
                    "SELECT agent FROM sessions WHERE session_id = ?",
                    (query.session_id,)).fetchone()
                agent = None if found is None else found[0]
                tool = _names_sql(aliases, query.tool,
                                  tool_names_for(aliases, query.tool, agent), p, agent)
            else:
                tool = _tool_sql(aliases, query.tool, p)
            if tool is None:
                return None
            where.append(tool)
        if query.raw_name is not None:
            where.append(f"tool_calls.raw_name = {p.bind(query.raw_name)}")
        one = query.session_id
        if one is not None:
            where.append(f"tool_calls.session_id = {p.bind(one)}")
        if query.agent is not None or query.cwd is not None:
            sql, values = scope_sql(query.agent, query.cwd)
            for value in values:
                sql = sql.replace("?", p.bind(value), 1)
            where.append(f"tool_calls.session_id IN ({sql})")
        if query.since is not None:
            where.append(f"{m}.created_at >= {p.bind(self._stamp(query.since))}")
        if query.until is not None:
            where.append(f"{m}.created_at < {p.bind(self._stamp(query.until))}")
        trust = self._trust(one, warn) if query.text is not None or query.views else Trust()
        if query.status:
            where.append("(" + " OR ".join(f"({_status_sql(s, p)})"
                                           for s in query.status) + ")")
        for number, view in enumerate(query.views):
            sql, bound = view_condition_sql(conn, number, view, one, trust)
            where.append(sql)
            p.update(bound)
        messages = "messages" if timed else f"messages AS m{self._by_time}"
        join = (f" JOIN {messages} ON {m}.session_id = tool_calls.session_id AND "
                f"{m}.position = tool_calls.position")
        if counting and not timed:
            join = ""
        source = f"tool_calls{join}"
        if query.text is not None:
            hits, found_params = hits_sql(conn, query.text, results=True, prefix="text",
                                        trust=trust, session_id=one)
            if hits is None:
                return None
            p.update(found_params)
            source = (f"({hits}) AS hits JOIN tool_calls ON tool_calls.session_id = "
                      "hits.session_id AND tool_calls.position = hits.position AND "
                      f"tool_calls.call_index = hits.call_index{join}")
        if counting:
            return (f"SELECT {_KEYS} FROM {source}"
                    + (" WHERE " + " AND ".join(where) if where else "")), p
        sql = (f"SELECT {columns}, {m}.created_at FROM {source}"
               + (" WHERE " + " AND ".join(where) if where else "")
               + f" ORDER BY {m}.created_at, tool_calls.session_id, tool_calls.position, "
                 "tool_calls.call_index")
        return sql, p

    def iter_calls(self, query: CallQuery, *, limit: int | None = None, offset: int = 0,
                   preview_chars: int | None = None, redactor: Redactor | None = None,
                   warn: Callable[[str], None] | None = None) -> Iterator[CallMatch]:
        """``store.audit.search`` ``iter_calls`` (``limit``: ``search_calls``'s page)."""
        rows: Any
        if limit is not None:
            rows = self._page(query, limit, offset, warn)
            if rows is None:
                return
        else:
            built = self.statement(query, warn)
            if built is None:
                return
            sql, params = built
            rows = (self._reader.stream_named(sql, params) if self._pg
                    else self._reader.execute(sql, params))
        conn = self._conn
        aliases = self.aliases()
        scoped = aliases.scoped_names
        try:
            while chunk := rows.fetchmany(_CHUNK):
                results = first_results(conn, [(r[0], r[1], r[2]) for r in chunk])
                places = self._places({r[0] for r in chunk})
                for row in chunk:
                    agent, cwd = places.get(row[0], (None, None))
                    yield match_row(row, aliases, results.get((row[0], row[1], row[2])),
                                    preview_chars, redactor, agent, cwd, row[4] in scoped)
        finally:
            if self._pg and limit is None:
                self._reader.close_cursor(rows)

    def _page(self, query: CallQuery, limit: int, offset: int,
              warn: Callable[[str], None] | None) -> Any:
        """A page of the matches: the keys of every match in order first (the statement with
        the keys for columns: the search itself, which a page and its count both cost, run
        once), which count them (:meth:`count_calls` then asks nothing, unless there were
        more than :data:`_KEYED`), then the page's rows by their keys, in that order."""
        built = self.statement(query, warn, columns=_KEYS)
        if built is None:
            return None
        sql, params = built
        keys = self._named(f"{sql} LIMIT {params.bind(_KEYED + 1)}", params).fetchall()
        if len(keys) > _KEYED and offset + limit > _KEYED:  # (a far page of a large answer)
            full = self.statement(query, warn)
            if full is None:
                return None
            sql, params = full
            return self._named(
                f"{sql} LIMIT {params.bind(limit)} OFFSET {params.bind(offset)}", params)
        if len(keys) <= _KEYED:
            self._counted = (query, len(keys))
        page = [(str(k[0]), int(k[1]), int(k[2])) for k in keys[offset:offset + limit]]
        found: dict[tuple[str, int, int], tuple[Any, ...]] = {}
        for start in range(0, len(page), _IN_KEYS):
            part = page[start:start + _IN_KEYS]
            condition = " OR ".join(["(tool_calls.session_id = ? AND tool_calls.position = ? "
                                     "AND tool_calls.call_index = ?)"] * len(part))
            for row in self._reader.execute(
                    f"SELECT {_columns(self._pg)}, m.created_at FROM tool_calls JOIN messages AS m"
                    f"{self._by_time} ON m.session_id = tool_calls.session_id "
                    f"AND m.position = tool_calls.position WHERE {condition}",
                    [value for key in part for value in key]):
                found[(str(row[0]), int(row[1]), int(row[2]))] = tuple(row)
        return _Rows([found[key] for key in page if key in found])

    def count_calls(self, query: CallQuery) -> int:
        counted = self._counted
        if counted is not None and counted[0] is query:
            return counted[1]
        built = self.statement(query, counting=True)
        if built is None:
            return 0
        sql, params = built
        return int(self._named(f"SELECT count(*) FROM ({sql}) AS anon_1",
                               params).fetchone()[0])

    def _places(self, session_ids: set[str]) -> dict[str, tuple[str | None, str | None]]:
        ids = sorted(session_ids)
        out: dict[str, tuple[str | None, str | None]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            out.update({str(sid): (agent, cwd) for sid, agent, cwd in self._reader.execute(
                "SELECT session_id, agent, cwd FROM sessions WHERE session_id IN "
                f"({', '.join('?' * len(chunk))})", chunk)})
        return out


def open_calls(url: str) -> LiteCalls | None:
    """The stdlib call search of the SQLite file or PostgreSQL database ``url`` names, at
    head; ``None`` for anything else."""
    from store.db.schema.revisions import shipped_head

    conn = open_reader(url, shipped_head)
    if conn is None:
        return None
    if not is_pg(conn):
        register_functions(conn)
    try:
        conn.execute("BEGIN")  # (one snapshot: the trust check, the hits and their rows)
    except sqlite3.Error:
        conn.close()
        return None
    return LiteCalls(conn)
