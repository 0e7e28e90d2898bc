"""What the audit queries share (persistence): the connection guard, the call/message join,
time filters and paging checks."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Connection,
    and_,
    literal_column,
    select,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import Alias, Exists

from store.core.errors import ConnectionLost, DatabaseError, UsageError
from store.core.times import as_utc
from store.db.base import driver_reason, dropped
from store.db.schema.tables import messages, tool_calls

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["LookupAlias", "action_column", "aware", "calls_with_time", "check_page",
           "connect", "exists_row", "linked", "message_side", "time_filters"]


class connect:
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
        dbapi = self._store.engine.dialect.dbapi
        errors = (SQLAlchemyError, dbapi.Error) if dbapi is not None else (SQLAlchemyError,)
        if isinstance(exc, errors) and dropped(self._store.engine, exc, self._conn):
            # Closed, not reset (no "Exception during reset"); the read runs once more
            # (store.db.base.reads_once).
            self._conn.invalidate(exc)
            self._conn.close()
            raise ConnectionLost(f"{self._store.url}: {driver_reason(exc)}") from exc
        self._conn.close()
        if isinstance(exc, errors):
            raise DatabaseError(f"{self._store.url}: {driver_reason(exc)}") from exc


@functools.cache
def calls_with_time(m: Any) -> Any:
    """tool_calls joined to its message ``m`` (for the time)."""
    c = tool_calls
    return c.join(m, and_(m.c.session_id == c.c.session_id, m.c.position == c.c.position))


@functools.cache
def message_side(timed: bool) -> Any:
    """The messages to join to calls: the table when a time range may drive the query (from
    ``ix_messages_created_at``), else an alias that SQLite looks up in the covering
    ``ix_messages_time`` (without statistics it would take the primary key and read the
    message rows)."""
    if timed:
        return messages
    return LookupAlias._construct(messages, name="m")


class LookupAlias(Alias):
    """``messages AS m``; on SQLite ``... INDEXED BY ix_messages_time``."""

    inherit_cache = True


@compiles(LookupAlias, "sqlite")
def _compile_lookup(element: LookupAlias, compiler: Any, **kw: Any) -> str:
    sql = str(compiler.visit_alias(element, **kw))
    return sql + " INDEXED BY ix_messages_time" if kw.get("asfrom") else sql


def exists_row(table: Any, *conditions: ColumnElement[bool]) -> Exists:
    """``EXISTS (SELECT 1 FROM table WHERE ...)``: a constant, so SQLite answers from the
    index alone."""
    return select(literal_column("1")).select_from(table).where(*conditions).exists()


def linked(r: Any) -> ColumnElement[bool]:
    c = tool_calls
    return and_(r.c.session_id == c.c.session_id, r.c.call_position == c.c.position,
                r.c.call_index == c.c.call_index)


def time_filters(
    since: datetime | None, until: datetime | None, m: Any = messages
) -> list[ColumnElement[bool]]:
    out: list[ColumnElement[bool]] = []
    if since is not None:
        out.append(m.c.created_at >= as_utc(since))
    if until is not None:
        out.append(m.c.created_at < as_utc(until))
    return out


def aware(value: Any) -> datetime:
    if isinstance(value, str):  # SQLite min()/max() may hand back the stored text
        value = datetime.fromisoformat(value)
    return as_utc(value)


def check_page(limit: int | None, offset: int) -> None:
    if (limit is not None and limit < 0) or offset < 0:
        raise UsageError("limit and offset must not be negative")


def action_column() -> ColumnElement[Any]:
    """A call's action (:mod:`store.tools.actions`: the sub-command its arguments name) in
    SQL: the argument read from the queryable copy (``json_extract`` / ``->>``); NULL for a
    call whose arguments are invalid or name none. Only asked of the editor tools' calls."""
    from sqlalchemy import case

    from store.tools.actions import ACTION_ARGUMENT

    keys = sorted(set(ACTION_ARGUMENT.values()))
    c = tool_calls
    if len(keys) == 1:
        column: ColumnElement[Any] = c.c.arguments[keys[0]].as_string()
        return column
    return case(*((c.c.raw_name == raw, c.c.arguments[key].as_string())
                  for raw, key in sorted(ACTION_ARGUMENT.items())), else_=None)
