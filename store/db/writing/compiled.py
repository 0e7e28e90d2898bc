"""The hot statements, compiled once per dialect from SQLAlchemy Core (persistence layer).

Appends and loads run a fixed handful of statements many times. Building a Core statement and
having SQLAlchemy process every row's parameters costs more than the database work itself
(measured in ``bench/storage.py``), so the hot path compiles each Core construct **once** per
dialect into SQL text with positional parameters, and runs it with ``executemany`` on the
DBAPI cursor of the connection SQLAlchemy manages (its pool, its transaction). The values are
converted here, once, the way SQLAlchemy's types would: datetimes as SQLite's DATETIME text
or aware datetimes for psycopg, the queryable arguments copy as JSON text (cast to JSONB by
the compiled SQL on PostgreSQL). Everything that is not hot keeps using Core as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    Boolean,
    ClauseElement,
    DateTime,
    Integer,
    Table,
    Text,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal_column,
    null,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import psycopg
from sqlalchemy.engine import Dialect

from store.core.arguments import dumps_json
from store.core.pairing import TURN_ROLES
from store.db.reading.loaded import (
    LOAD_ALIASES,
    LOAD_CALLS,
    LOAD_MESSAGES,
    LOAD_RESULTS,
    LOAD_SESSION,
)
from store.db.schema.sqlitefile import read_time, stored_time
from store.db.schema.tables import (
    messages,
    sessions,
    tool_aliases,
    tool_calls,
    tool_results,
    written_columns,
)
from store.db.schema.wiretext import insert_value_sql, wire_column

__all__ = ["LOAD_ALIASES", "LOAD_CALLS", "LOAD_MESSAGES", "LOAD_RESULTS", "LOAD_SESSION",
           "Compiled", "Statements", "statements"]


def _earliest(column: Any, value: Any) -> Any:
    """``column`` moved back to ``value`` when that is earlier (or ``column`` is NULL)."""
    return case((or_(column.is_(None), column > value), value), else_=column)


def _latest(column: Any, value: Any) -> Any:
    """``column`` moved on to ``value`` when that is later (or ``column`` is NULL)."""
    return case((or_(column.is_(None), column < value), value), else_=column)


@dataclass(frozen=True, slots=True)
class Compiled:
    """SQL text with positional parameters, and the parameter names in order."""

    sql: str
    names: tuple[str, ...]

    def params(self, **values: Any) -> tuple[Any, ...]:
        """The positional parameters, by name (a name may occur several times)."""
        return tuple(values[name] for name in self.names)


#: What each row of the one-statement load (``Statements.load``) is: its first column.


def _dialect(name: str) -> Dialect:
    if name == "postgresql":
        return psycopg.dialect(paramstyle="format")  # type: ignore[no-untyped-call]
    return sqlite.dialect(paramstyle="qmark")


def _pg_read_time(value: datetime) -> datetime:
    return value.astimezone(UTC)


def _json_text(value: Any) -> str | None:
    return None if value is None else dumps_json(value)  # exact for integers beyond 64 bits


class Statements:
    """The hot statements of one dialect, and its value converters."""

    def __init__(self, dialect_name: str) -> None:
        self.dialect_name = dialect_name
        self._dialect = _dialect(dialect_name)
        self.postgres = dialect_name == "postgresql"
        #: Datetime to a bound value, and a fetched value back to an aware UTC datetime.
        self.time: Callable[[datetime], Any] = (lambda v: v) if self.postgres else stored_time
        self.read_time: Callable[[Any], datetime] = (
            _pg_read_time if self.postgres else read_time
        )
        self.json = _json_text
        sid: Any = bindparam("sid")
        insert_fn: Any = postgresql.insert if self.postgres else sqlite.insert
        upsert = insert_fn(sessions).values(
            {c.name: bindparam(c.name) for c in written_columns(sessions)})
        #: Create the session if missing and lock its row (a no-op update on conflict takes the
        #: row lock on PostgreSQL; SQLite holds the write lock since BEGIN IMMEDIATE).
        self.upsert_session = self._compile(
            upsert.on_conflict_do_update(
                index_elements=[sessions.c.session_id],
                set_={"next_position": sessions.c.next_position},
            ).returning(sessions.c.next_position, sessions.c.created_at, sessions.c.chain_digest)
        )
        self.advance_session = self._compile(
            update(sessions).where(sessions.c.session_id == sid)
            .values(next_position=bindparam("next_position"), updated_at=bindparam("now"),
                    chain_digest=bindparam("chain"),
                    # The session's own activity (revision 0016): widened to the append's.
                    started_at=_earliest(sessions.c.started_at, bindparam("first")),
                    last_activity_at=_latest(sessions.c.last_activity_at, bindparam("last")))
        )
        self.insert_messages = self._compile(messages.insert())
        # (every column but the derived search text, which the catch-up fills: revision 0023)
        # (SQLite: a call's wire text is stored once, '' where its columns rebuild it exactly:
        # store/db/schema/wiretext.py)
        self.insert_calls = (self._compile(_insert(tool_calls)) if self.postgres
                             else _sqlite_calls_insert(indexed=False))
        self.insert_results = self._compile(_insert(tool_results))
        #: The same with the search text an import made (store/db/writing/indexing.py).
        self.insert_calls_indexed = (self._compile(_insert(tool_calls, indexed=True))
                                     if self.postgres else _sqlite_calls_insert(indexed=True))
        self.insert_results_indexed = self._compile(_insert(tool_results, indexed=True))
        self.existing_keys = self._compile(
            select(messages.c.message_key).where(and_(
                messages.c.session_id == sid,
                messages.c.message_key.in_(bindparam("keys", expanding=True)),
            ))
        )
        #: PostgreSQL: the same question as one probe of ``ux_messages_session_key`` per key
        #: (keys as one array; LIMIT keeps each probe a subquery the planner cannot turn into
        #: a scan of the session). With ``IN (...)``, a table without statistics (a bulk
        #: load before autovacuum) or a session grown since they were taken had the
        #: planner read the whole session through the primary key for every chunk of an
        #: import: quadratic in the session's length (issue 23).
        self.existing_keys_probe = (
            "SELECT k.key FROM unnest(CAST(%s AS VARCHAR[])) AS k(key) CROSS JOIN LATERAL "
            "(SELECT 1 FROM messages AS m WHERE m.session_id = %s AND m.message_key = k.key "
            "LIMIT 1) AS hit")
        self.stored_records = self._compile(
            select(messages.c.message_key, messages.c.position, messages.c.role,
                   messages.c.parts_json, messages.c.extras_json,
                   messages.c.metadata_json).where(and_(
                messages.c.session_id == sid,
                messages.c.message_key.in_(bindparam("keys", expanding=True)),
            ))
        )
        self.stored_calls = self._compile(
            select(tool_calls.c.position, wire_column(tool_calls, self.postgres),
                   tool_calls.c.extras_json)
            .where(and_(tool_calls.c.session_id == sid,
                        tool_calls.c.position.in_(bindparam("positions", expanding=True))))
            .order_by(tool_calls.c.position, tool_calls.c.call_index)
        )
        self.stored_results = self._compile(
            select(tool_results.c.position, tool_results.c.call_id, tool_results.c.is_error,
                   tool_results.c.name, tool_results.c.content_json,
                   tool_results.c.extras_json)
            .where(and_(tool_results.c.session_id == sid,
                        tool_results.c.position.in_(bindparam("positions", expanding=True))))
            .order_by(tool_results.c.position, tool_results.c.result_index)
        )
        self.prior_ids = self._compile(
            select(tool_calls.c.call_id, tool_calls.c.position, tool_calls.c.call_index)
            .where(and_(tool_calls.c.session_id == sid, tool_calls.c.id_minted.is_(False),
                        tool_calls.c.call_id.in_(bindparam("ids", expanding=True))))
            .order_by(tool_calls.c.position, tool_calls.c.call_index)
        )
        self.last_calls = self._compile(
            select(tool_calls.c.position, tool_calls.c.call_index, tool_calls.c.raw_name,
                   tool_calls.c.id_minted)
            .where(and_(
                tool_calls.c.session_id == sid,
                tool_calls.c.position == select(func.max(tool_calls.c.position))
                .where(tool_calls.c.session_id == sid).scalar_subquery(),
            ))
            .order_by(tool_calls.c.call_index)
        )
        # Has a new turn begun after the calling message at :position (a user, system or
        # developer message that carries no tool result)? The one pairing rule (store.core.pairing).
        later = messages.alias("later")
        self.turn_begun = self._compile(
            select(func.min(later.c.position))
            .where(and_(
                later.c.session_id == sid, later.c.position > bindparam("position"),
                or_(*(later.c.role == literal_column(f"'{role}'") for role in sorted(TURN_ROLES))),
                ~select(tool_results.c.position).where(and_(
                    tool_results.c.session_id == later.c.session_id,
                    tool_results.c.position == later.c.position)).exists(),
            ))
        )
        self.answered = self._compile(
            select(tool_results.c.call_position, tool_results.c.call_index)
            .where(and_(tool_results.c.session_id == sid,
                        tool_results.c.call_position == bindparam("position")))
        )
        #: A whole session in one statement (one snapshot on both backends, one round trip on
        #: PostgreSQL): ``load`` from the position ``start``, ``load_window`` from the start
        #: of a window (``turns``, ``since_position``, ``since``: NULL when not asked for)
        #: computed in the same statement. See :func:`_load_statement`.
        self.load = self._compile(_load_statement(self.postgres, windowed=False))
        self.load_window = self._compile(_load_statement(self.postgres, windowed=True))
        #: The alias table as one JSON text (as the load reads it): a cache hit is one
        #: comparison of the text, not a tuple of every row (two hundred with the agents').
        triple = (tool_aliases.c.agent, tool_aliases.c.raw_name, tool_aliases.c.current_name)
        self.load_aliases = self._compile(select(
            cast(func.json_agg(func.json_build_array(*triple)), Text) if self.postgres
            else func.json_group_array(func.json_array(*triple))))
        self.count_by_raw_name = self._compile(
            select(tool_calls.c.raw_name, func.count()).group_by(tool_calls.c.raw_name)
        )

    def _compile(self, statement: ClauseElement) -> Compiled:
        compiled: Any = statement.compile(dialect=self._dialect)
        return Compiled(compiled.string, tuple(compiled.positiontup or ()))

    def expand(self, compiled: Compiled, name: str, count: int) -> str:
        """The SQL with an expanding ``IN`` parameter rendered for ``count`` values."""
        marker = f"(__[POSTCOMPILE_{name}])"
        placeholder = "%s" if self.postgres else "?"
        return compiled.sql.replace(marker, "(" + ", ".join([placeholder] * count) + ")")


def _insert(table: Table, *, indexed: bool = False) -> ClauseElement:
    """An INSERT of the columns an append writes, in the table's order (``indexed``: then
    ``search_body`` and ``search_id``)."""
    names = [c.name for c in written_columns(table)]
    if indexed:
        names += ["search_body", "search_id"]
    return table.insert().values({name: bindparam(name) for name in names})


def _sqlite_calls_insert(*, indexed: bool) -> Compiled:
    """SQLite's INSERT of a call row (the columns of :func:`_insert`, numbered parameters in
    that order): ``wire_json`` is ``''`` where the row's id, name and arguments rebuild the
    given wire text exactly (the comparison made by SQLite, with the function that rebuilds
    it on read), else the text."""
    names = [c.name for c in written_columns(tool_calls)]
    if indexed:
        names += ["search_body", "search_id"]
    at = {name: f"?{i}" for i, name in enumerate(names, 1)}
    values = [insert_value_sql(at["wire_json"], at["call_id"], at["raw_name"], at["arguments"])
              if name == "wire_json" else at[name] for name in names]
    return Compiled(f"INSERT INTO tool_calls ({', '.join(names)}) VALUES ({', '.join(values)})",
                    tuple(names))


def _load_statement(postgres: bool, *, windowed: bool) -> ClauseElement:
    """One ``UNION ALL`` of the session row, its messages, calls and results from the window's
    start, and the alias table, padded to one row shape; the first column says which
    (``LOAD_SESSION`` ...). One statement reads one snapshot on both backends (SQLite: one
    statement is one read transaction; PostgreSQL: one statement is one snapshot even in READ
    COMMITTED), so a load is always a committed state, without an explicit transaction or a
    stricter isolation level; on PostgreSQL it is also one round trip instead of five.

    Rows of the session row (``LOAD_SESSION``): ints ``next_position, indexed_position,
    start``, texts ``session_id, title, provider, model, cwd, agent, tags_json,
    metadata_json``, times ``created_at, updated_at, started_at, last_activity_at``. Messages:
    int ``position``, texts ``message_key, role, source, parts_json, extras_json,
    metadata_json, message_id``, time ``created_at``. Calls: ints ``position, call_index``,
    texts ``call_id, wire_json, arguments_status, arguments_error, extras_json, source``, bool
    ``id_minted``. Results: ints ``position, result_index, call_position, call_index``, texts
    ``call_id, content_json, name, extras_json, source``, bool ``is_error``. Aliases (one row):
    the text of a JSON array of ``[agent, raw_name, current_name]``. No order is asked of the
    whole union (its sort could spill for a long session): each branch comes back by its index,
    and the caller sorts what needs an order.

    The window's start (``windowed``): the latest of the asked-for starts (the ``turns``-th
    last turn start, a turn starting at a user message whose first part is not a tool result,
    or 0 when there are fewer; ``since_position``; the first message at or after ``since``),
    then moved back, by a recursive step, to the earliest call a result from the start on
    answers, until no result in the window lacks its call.
    """
    sid: Any = bindparam("sid")
    s, m, c, r, a = (sessions.c, messages.c, tool_calls.c, tool_results.c, tool_aliases.c)
    start: Any
    if windowed:
        turns: Any = bindparam("turns", type_=Integer)
        since_position: Any = bindparam("since_position", type_=Integer)
        since: Any = bindparam("since", type_=DateTime(timezone=True))
        zero, one = literal_column("0", Integer), literal_column("1", Integer)
        turn_start = (
            select(m.position)
            .where(and_(m.session_id == sid, m.role == literal_column("'user'"),
                        m.parts_json.not_like(literal_column("""'[{"type":"tool_result"%'"""))))
            .order_by(m.position.desc()).limit(one).offset(func.coalesce(turns, one) - one)
            .scalar_subquery())
        first_since = (select(func.min(m.position))
                       .where(and_(m.session_id == sid, m.created_at >= since))
                       .scalar_subquery())
        asked = (greatest if postgres else func.max)(
            case((turns.is_(None), zero), else_=func.coalesce(turn_start, zero)),
            func.coalesce(since_position, zero),
            case((since.is_(None), zero),
                 else_=func.coalesce(first_since, literal_column(str(2**31 - 1), Integer))),
        )

        def earliest(at: Any) -> Any:
            """The earliest call answered by a result at or after ``at``."""
            return (select(func.min(r.call_position))
                    .where(and_(r.session_id == sid, r.position >= at)).scalar_subquery())

        first = select(asked.label("start")).cte("window_asked")
        steps = select(first.c.start, earliest(first.c.start).label("earliest")).cte(
            "window_steps", recursive=True)
        steps = steps.union_all(
            select(steps.c.earliest, earliest(steps.c.earliest))
            .where(steps.c.earliest < steps.c.start))
        bounds = select(func.min(steps.c.start).label("start")).cte("window_start")
        start = select(bounds.c.start).scalar_subquery()
    else:
        start = bindparam("start", type_=Integer)
    # The alias table as one JSON text, ``[[agent, raw_name, current_name], ...]``: one row
    # instead of one per alias (the seeded vocabulary has a hundred), and a cache hit is one
    # comparison of the text (see ``base.aliases_from_text``).
    # No ORDER BY: sorting a hundred texts by the database's collation was half the
    # statement's time on PostgreSQL; another order only misses the cache once.
    triple = (a.agent, a.raw_name, a.current_name)
    aliases: Any = select(
        cast(func.json_agg(func.json_build_array(*triple)), Text) if postgres
        else func.json_group_array(func.json_array(*triple))).scalar_subquery()
    shape: tuple[tuple[int, Any], ...] = (
        (4, Integer()), (11, Text()), (4, DateTime(timezone=True)), (1, Boolean()))

    def row(kind: int, *groups: list[Any]) -> list[Any]:
        out: list[Any] = [literal_column(str(kind), Integer)]
        for given, (width, kind_type) in zip(groups, shape, strict=True):
            out += [*given, *[cast(null(), kind_type)] * (width - len(given))]
        return out

    return union_all(
        select(*row(LOAD_SESSION, [s.next_position, s.indexed_position, start],
                    [s.session_id, s.title, s.provider, s.model, s.cwd, s.agent, s.tags_json,
                     s.metadata_json, s.parent_session_id, s.lineage, s.parent_call_id],
                    [s.created_at, s.updated_at, s.started_at, s.last_activity_at], []))
        .where(s.session_id == sid),
        select(*row(LOAD_MESSAGES, [m.position],
                    [m.message_key, m.role, m.source, m.parts_json, m.extras_json,
                     m.metadata_json, m.message_id], [m.created_at], []))
        .where(and_(m.session_id == sid, m.position >= start)),
        select(*row(LOAD_CALLS, [c.position, c.call_index],
                    [c.call_id, wire_column(tool_calls, postgres), c.arguments_status,
                     c.arguments_error,
                     c.extras_json, c.source], [], [c.id_minted]))
        .where(and_(c.session_id == sid, c.position >= start)),
        select(*row(LOAD_RESULTS, [r.position, r.result_index, r.call_position, r.call_index],
                    [r.call_id, r.content_json, r.name, r.extras_json, r.source], [],
                    [r.is_error]))
        .where(and_(r.session_id == sid, r.position >= start)),
        select(*row(LOAD_ALIASES, [], [aliases], [], [])),
    )


def greatest(*values: Any) -> Any:
    """PostgreSQL's ``greatest`` (SQLite's multi-argument ``max`` is the same)."""
    return func.greatest(*values)


@cache
def statements(dialect_name: str) -> Statements:
    """The compiled statements of a dialect (built once per process)."""
    return Statements(dialect_name)
