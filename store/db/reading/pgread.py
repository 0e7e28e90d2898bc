"""The command line's read commands on PostgreSQL with psycopg alone (persistence; no
SQLAlchemy).

On PostgreSQL every read command paid for SQLAlchemy and the store before its first query:
0.39-0.67 s a command at 10^5 messages, of which the answer was a few milliseconds.
:func:`open_pg` gives the stdlib readers that SQLite files already have (the session listing,
``sessions show``, ``tools usage`` and the usage reports: :mod:`store.db.reading.lite`,
:mod:`store.db.reading.lite_show`, :mod:`store.audit.lite_usage`,
:mod:`store.audit.lite_costs`) a psycopg connection in the shape they read an ``sqlite3`` one:

* :meth:`PgReader.execute` takes their SQL as written for SQLite's driver (``?`` marks) and
  runs it with psycopg's (``%s``); the statements they share with PostgreSQL are plain SQL,
  and where the two differ (times as parameters, ``LIMIT``, the alias table's JSON) the
  reader asks :attr:`PgReader.pg`.
* :meth:`PgReader.driver` is the same connection as a ``DriverConnection`` of the
  ``postgresql`` dialect, for the driver-level readers the store itself runs on both backends
  (the usage summaries, the usage reports).

Only the happy path, as on SQLite: a ``postgresql+psycopg://`` (or ``postgresql://``) URL
that libpq connects to, a database at this library's head revision. Anything else, a
connection that fails included, gives ``None`` and the caller opens the store, which words
every error. Every transaction is read-only in the server (as the store's read-only engine
makes it) and one snapshot (``REPEATABLE READ``); times come back in UTC; JIT compilation is
off (as the store's usage reads turn it off). A driver error is raised as
:class:`PgReadError`, a ``sqlite3.DatabaseError``, so that the readers' fallbacks (the store
answers, or words the error) take it as they take SQLite's.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from store.db.reading.driver import DriverConnection, DriverResult

__all__ = ["PgDriver", "PgReadError", "PgReader", "driver_of", "is_pg", "is_pg_url",
           "libpq_url", "open_pg", "pg_named"]

_SCHEMES = ("postgresql+psycopg", "postgresql")
#: What the store's read-only engine and usage reads set, sent with the revision check: one
#: round trip after connecting.
_SETTINGS = ("SET default_transaction_read_only = on; "
             "SET default_transaction_isolation = 'repeatable read'; "
             "SET TimeZone = 'UTC'; SET jit = off")


class PgReadError(sqlite3.DatabaseError):
    """A psycopg error on the stdlib read path (see the module docstring)."""


def is_pg(conn: Any) -> bool:
    """Whether a stdlib reader's connection is PostgreSQL's (:class:`PgReader`), not an
    ``sqlite3`` one: where the readers' SQL differs."""
    return getattr(conn, "pg", False) is True


def driver_of(conn: Any) -> DriverConnection:
    """A stdlib reader's connection as the driver-level readers take it (``PgReader``'s
    :meth:`~PgReader.driver`, or an ``sqlite3`` connection's ``DriverConnection``)."""
    return conn.driver() if is_pg(conn) else DriverConnection(conn)


def is_pg_url(url: str) -> bool:
    """Whether ``url`` names a PostgreSQL database (the driver the store accepts)."""
    return url.partition("://")[0] in _SCHEMES


def libpq_url(url: str) -> str | None:
    """The libpq connection URI of a store URL (``postgresql+psycopg://u@h/db?k=v`` is
    ``postgresql://u@h/db?k=v``: SQLAlchemy and libpq read the rest alike); ``None`` for
    another kind of URL."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in _SCHEMES:
        return None
    return f"postgresql://{rest}"


@lru_cache(maxsize=256)
def pg_sql(sql: str) -> str:
    """SQL written for ``sqlite3`` (``?`` marks) in psycopg's spelling (``%s``, a literal
    ``%`` doubled). The readers' statements hold no ``?`` inside a literal."""
    return sql.replace("%", "%%").replace("?", "%s")


#: A named parameter as SQLAlchemy's ``text()`` finds one (``:name``, not ``::type``).
_NAMED = re.compile(r"(?<![:\w\x5c]):(\w+)(?!:)", re.UNICODE)


@lru_cache(maxsize=64)
def pg_named(sql: str) -> str:
    """SQL with ``:name`` parameters (the store's driver-level statements, bound as
    SQLAlchemy's ``text()`` binds them) in psycopg's spelling: ``%(name)s``."""
    return _NAMED.sub(r"%(\1)s", sql.replace("%", "%%"))


class PgReader:
    """A psycopg connection as the stdlib readers use an ``sqlite3`` one (``execute``,
    ``close``), plus :meth:`driver`."""

    #: What a reader asks where SQLite and PostgreSQL differ.
    pg = True

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self._cursors = 0  # (server-side cursors opened: each its own name)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run ``sql`` (``?`` marks) and give its cursor (``fetchone``, ``fetchall``, rows
        when iterated)."""
        return self._run(pg_sql(sql), params)

    def execute_named(self, sql: str, params: Mapping[str, Any]) -> Any:
        """Run ``sql`` with ``:name`` parameters; its cursor."""
        return self._run(pg_named(sql), params)

    def stream_named(self, sql: str, params: Mapping[str, Any]) -> Any:
        """:meth:`execute_named` on a server-side cursor in the read's transaction (which
        must be open), its rows fetched as they are read, planned for all of them: a cursor
        is otherwise planned for its first tenth (``cursor_tuple_fraction``, as the store's
        streaming sets it: the default looped over every message for 87 hits, 230 -> 30 ms).
        Close it when done."""
        self._run("SET LOCAL cursor_tuple_fraction = 1.0", ())
        self._cursors += 1
        cursor = self.connection.cursor(name=f"stdlib_reader_{self._cursors}")
        try:
            self._call(cursor.execute, pg_named(sql), params)
        except PgReadError:
            self.close_cursor(cursor)
            raise
        return cursor

    def close_cursor(self, cursor: Any) -> None:
        """Close a server-side cursor (its transaction may have ended with an error)."""
        import psycopg

        try:
            cursor.close()
        except psycopg.Error:
            pass

    def _run(self, sql: str, params: Sequence[Any] | Mapping[str, Any]) -> Any:
        return self._call(self.connection.execute, sql, params)

    @staticmethod
    def _call(run: Callable[..., Any], sql: str, params: Any) -> Any:
        import psycopg

        try:
            return run(sql, params)
        except psycopg.Error as exc:
            raise PgReadError(str(exc).strip()) from exc

    def end(self) -> None:
        """End the transaction a read began, if one is open (read-only: rolled back)."""
        if self.connection.info.transaction_status:  # (IDLE is 0)
            self._run("ROLLBACK", ())

    def driver(self) -> PgDriver:
        """The connection as a ``DriverConnection`` of the ``postgresql`` dialect."""
        return PgDriver(self)

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> PgReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _PgDialect:
    name = "postgresql"


class PgDriver(DriverConnection):
    """:class:`PgReader`'s connection for the driver-level readers: their SQL is written
    for each dialect already (``%s`` marks on PostgreSQL) and runs as it is."""

    dialect = _PgDialect()  # type: ignore[assignment]

    def __init__(self, reader: PgReader) -> None:
        self._reader = reader
        self.connection = reader.connection

    def exec_driver_sql(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()
                        ) -> DriverResult:
        return DriverResult(self._reader._run(sql, params))


def open_pg(url: str, head: Callable[[], str | None]) -> PgReader | None:
    """A read-only psycopg connection to the PostgreSQL database ``url`` names when it is at
    revision ``head()``; ``None`` for anything else (the caller opens the store instead)."""
    conninfo = libpq_url(url)
    if conninfo is None:
        return None
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the postgres extra is installed in tests
        return None
    try:
        connection = psycopg.connect(conninfo, autocommit=True)
    except (psycopg.Error, ValueError):
        return None  # (the store connects again and words why it cannot)
    try:
        # (the settings and the revision in one round trip: a simple-query message whose
        # last result is the revision's rows)
        cursor = connection.execute(_SETTINGS + "; SELECT version_num FROM alembic_version")
        while cursor.description is None and cursor.nextset():
            pass
        found = cursor.fetchall()
        wanted = head()
        if wanted is not None and [row[0] for row in found] == [wanted]:
            return PgReader(connection)
    except psycopg.Error:
        pass
    connection.close()
    return None
