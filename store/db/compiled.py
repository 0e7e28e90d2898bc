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

from sqlalchemy import ClauseElement, and_, bindparam, func, literal_column, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import psycopg
from sqlalchemy.engine import Dialect

from store.core.arguments import dumps_json
from store.core.pairing import TURN_ROLES
from store.db.sqlitefile import read_time, stored_time
from store.db.tables import (
    messages,
    sessions,
    tool_aliases,
    tool_calls,
    tool_results,
)

__all__ = ["Compiled", "Statements", "statements"]


@dataclass(frozen=True, slots=True)
class Compiled:
    """SQL text with positional parameters, and the parameter names in order."""

    sql: str
    names: tuple[str, ...]


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
        start: Any = bindparam("start")
        insert_fn: Any = postgresql.insert if self.postgres else sqlite.insert
        upsert = insert_fn(sessions)
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
                    chain_digest=bindparam("chain"))
        )
        self.insert_messages = self._compile(messages.insert())
        self.insert_calls = self._compile(tool_calls.insert())
        self.insert_results = self._compile(tool_results.insert())
        self.existing_keys = self._compile(
            select(messages.c.message_key).where(and_(
                messages.c.session_id == sid,
                messages.c.message_key.in_(bindparam("keys", expanding=True)),
            ))
        )
        self.stored_records = self._compile(
            select(messages.c.message_key, messages.c.position, messages.c.role,
                   messages.c.parts_json, messages.c.extras_json,
                   messages.c.metadata_json).where(and_(
                messages.c.session_id == sid,
                messages.c.message_key.in_(bindparam("keys", expanding=True)),
            ))
        )
        self.stored_calls = self._compile(
            select(tool_calls.c.position, tool_calls.c.wire_json, tool_calls.c.extras_json)
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
        self.load_session = self._compile(select(sessions).where(sessions.c.session_id == sid))
        self.load_messages = self._compile(
            select(messages.c.position, messages.c.message_key, messages.c.role,
                   messages.c.source, messages.c.parts_json, messages.c.extras_json,
                   messages.c.metadata_json, messages.c.created_at, messages.c.message_id)
            .where(and_(messages.c.session_id == sid, messages.c.position >= start))
            .order_by(messages.c.position)
        )
        self.load_calls = self._compile(
            select(tool_calls.c.position, tool_calls.c.call_index, tool_calls.c.call_id,
                   tool_calls.c.wire_json, tool_calls.c.arguments_status,
                   tool_calls.c.arguments_error, tool_calls.c.extras_json, tool_calls.c.source,
                   tool_calls.c.id_minted)
            .where(and_(tool_calls.c.session_id == sid, tool_calls.c.position >= start))
            .order_by(tool_calls.c.position, tool_calls.c.call_index)
        )
        self.load_results = self._compile(
            select(tool_results.c.position, tool_results.c.result_index, tool_results.c.call_id,
                   tool_results.c.content_json, tool_results.c.is_error, tool_results.c.name,
                   tool_results.c.extras_json, tool_results.c.source,
                   tool_results.c.call_position, tool_results.c.call_index)
            .where(and_(tool_results.c.session_id == sid, tool_results.c.position >= start))
            .order_by(tool_results.c.position, tool_results.c.result_index)
        )
        self.load_aliases = self._compile(
            select(tool_aliases.c.agent, tool_aliases.c.raw_name, tool_aliases.c.current_name)
            .order_by(tool_aliases.c.agent, tool_aliases.c.raw_name)
        )
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


@cache
def statements(dialect_name: str) -> Statements:
    """The compiled statements of a dialect (built once per process)."""
    return Statements(dialect_name)
