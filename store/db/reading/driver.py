"""A stdlib ``sqlite3`` connection in the few shapes of a SQLAlchemy ``Connection`` that the
driver-level readers use (persistence; no SQLAlchemy).

The search index's read side (``store.db.index.search_index``: ``has_search_index``,
``lagging``, ``tail_keys``, ``view_tail``; ``store.db.index.index_check``:
``index_gaps``) runs its own SQL text on the driver (``conn.exec_driver_sql``, the DBAPI
cursor of ``conn.connection``). :class:`DriverConnection` gives them exactly that over a
read-only ``sqlite3`` connection, so the stdlib call search (``store.audit.lite_search``)
runs the very same code, not a copy of it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["DriverConnection", "DriverResult"]


class _Dialect:
    name = "sqlite"


class DriverResult:
    """The rows of one statement, read as SQLAlchemy's ``CursorResult`` offers them."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cursor)

    def all(self) -> list[Any]:
        return self._cursor.fetchall()

    def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    def first(self) -> Any:
        row = self._cursor.fetchone()
        self._cursor.close()
        return row

    def scalar(self) -> Any:
        row = self.first()
        return None if row is None else row[0]

    def scalar_one(self) -> Any:
        rows = self._cursor.fetchall()
        if len(rows) != 1:
            from store.core.errors import DatabaseError

            raise DatabaseError(f"expected one row, got {len(rows)}")
        return rows[0][0]


class DriverConnection:
    """``dialect.name``, ``engine`` (itself: the key of the per-database caches),
    ``connection`` (the DBAPI connection) and ``exec_driver_sql`` of a ``sqlite3``
    connection."""

    dialect = _Dialect()

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    @property
    def engine(self) -> DriverConnection:
        return self

    def exec_driver_sql(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()
                        ) -> DriverResult:
        return DriverResult(self.connection.execute(sql, params))

    def close(self) -> None:
        self.connection.close()
