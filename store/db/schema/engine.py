"""Engine set-up for the two backends (persistence layer).

SQLite (the embedded default): every connection runs with ``foreign_keys=ON`` (SQLite's default
is off), ``journal_mode=WAL`` (readers never block the writer), ``busy_timeout`` (a writer waits
for the lock instead of failing at once) and ``synchronous=NORMAL``: in WAL mode that is safe
against a process crash, the default durability; ``durability="power"`` selects
``synchronous=FULL``, safe against power loss too. The driver's own transaction handling is
turned off and SQLAlchemy emits ``BEGIN`` itself, so that writes can ask for
``BEGIN IMMEDIATE`` (the write lock up front, no lock upgrade deadlocks) with the
``sqlite_begin`` execution option. A new database file is created readable by its owner only
(0600; SQLite gives its -wal and -shm files the same mode), and the folders the store creates
for it are 0700, whatever the umask and whatever URL form names the file (a path or an
``sqlite:///file:...?uri=true`` URI).

PostgreSQL (``postgresql+psycopg://``): a connection pool that pings a connection only when
it has been idle for more than :data:`IDLE_PING_SECONDS` (a ping on every checkout is one
more round trip per operation, issue 28), and checks every checkout's socket without a round
trip: a connection the server closed (``pg_terminate_backend``, a restart) has something to
read while idle, and is replaced (:func:`closed_by_server`). One that dies in use is met by the
operation: the write path runs its transaction again on a new connection (after a lost
COMMIT reply, once it knows that it had not committed); a read runs once more
(``store.db.base.reads_once``).

Both use orjson as the JSON serializer of JSON/JSONB columns.
"""

from __future__ import annotations

import os
import random
import re
import select
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

import orjson
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.pool import ConnectionPoolEntry

from store.core.errors import ConfigurationError, DatabaseError
from store.core.paths import expand_home
from store.db.schema.revisions import default_url
from store.db.schema.sqlitefile import (
    SQLITE_BUSY_TIMEOUT_MS,
    connect_read_only,
    register_functions,
)
from store.db.writing.checkpoint import SAFETY_NET_PAGES
from store.redaction.redact import hide_passwords

__all__ = [
    "Durability",
    "create_private_file",
    "create_store_engine",
    "database_url",
    "default_url",
    "make_private_dirs",
    "redact_url",
]

Durability = Literal["process", "power"]



def _json_dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


#: Query parameters of a database URL whose values are secrets (libpq's ``password`` and
#: ``sslpassword``, and anything else named like a password, secret or token).
_SECRET_PARAMETER = re.compile(r"(?i)pass(?:word|wd|phrase)?$|pwd$|secret|token|api_?key")


def redact_url(url: str | URL) -> str:
    """The URL with any password hidden, for messages and logs: the user-info password and
    the values of query parameters such as ``password`` and ``sslpassword`` become ``***``.
    A plain file path (``--db ./audit.sqlite``) holds no password: it is shown as given (not
    one with ``=``, which may be a libpq ``key=value`` string with a password in it)."""
    if isinstance(url, str) and "://" not in url and "=" not in url and url.strip():
        return url
    try:
        parsed = make_url(url)
        query = {key: ("***" if _SECRET_PARAMETER.search(key) else value)
                 for key, value in parsed.query.items()}
        shown = parsed.set(query=query).render_as_string(hide_password=True)
        return hide_passwords(shown.replace("%2A%2A%2A", "***"))
    except Exception:  # an unparseable URL: show nothing of it that could hold a secret
        return "<unparseable database URL>"


def make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and any missing parents as 0700 (owner only), whatever the umask;
    folders that exist already are left as they are."""
    missing: list[Path] = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue  # created meanwhile by another process
        path.chmod(0o700)  # mkdir's mode is masked by the umask


def create_private_file(path: Path) -> None:
    """Create an empty ``path`` readable by its owner only (0600, whatever the umask), and
    its missing folders 0700; an existing file is left as it is."""
    make_private_dirs(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _uri_file(database: str, query: Mapping[str, Any]) -> Path | None:
    """The file an ``sqlite:///file:...`` URI opens and may create, or ``None`` (in memory,
    read-only or read-write without create)."""
    rest = database[len("file:"):]
    rest, _, inline = rest.partition("?")
    rest = rest.partition("#")[0]
    options = dict(query)
    for pair in inline.split("&"):
        key, _, value = pair.partition("=")
        options.setdefault(key, value)
    if str(options.get("mode", "rwc")) != "rwc" or options.get("vfs") == "memdb":
        return None
    if rest.startswith("//"):  # file://host/path: only an empty host or localhost is local
        host, slash, path = rest[2:].partition("/")
        if host not in ("", "localhost"):
            return None
        rest = slash + path
    name = unquote(rest)
    if not name or name == ":memory:":
        return None
    return expand_home(name)


def create_store_engine(
    url: str | URL,
    *,
    durability: Durability = "process",
    engine_options: Mapping[str, Any] | None = None,
    read_only: bool = False,
) -> Engine:
    """An engine configured for the store (see the module docstring)."""
    url = database_url(url)
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise ConfigurationError(
            f"not a database URL: {redact_url(url)} (expected sqlite:///path, "
            "postgresql+psycopg://user@host/db, or a plain file path)") from exc
    options: dict[str, Any] = {
        "json_serializer": _json_dumps,
        "json_deserializer": orjson.loads,
        **(engine_options or {}),
    }
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(parsed, durability, options, read_only)
    if backend == "postgresql":
        if parsed.get_driver_name() not in ("psycopg", ""):
            raise ConfigurationError(
                f"PostgreSQL needs the psycopg 3 driver (postgresql+psycopg://), got "
                f"{redact_url(parsed)}"
            )
        if parsed.get_driver_name() == "":
            parsed = parsed.set(drivername="postgresql+psycopg")
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            raise ConfigurationError(
                "PostgreSQL support needs the 'postgres' extra: "
                "pip install 'transcript-store[postgres]'"
            ) from exc
        if read_only:
            # Every transaction read-only: writes fail in the server, whatever the role.
            connect_args = options.setdefault("connect_args", {})
            connect_args["options"] = (
                connect_args.get("options", "") + " -c default_transaction_read_only=on"
            ).strip()
        options.setdefault("pool_pre_ping", False)
        options.setdefault("pool_size", 5)
        options.setdefault("max_overflow", 10)
        engine = create_engine(parsed, **options)
        if not options["pool_pre_ping"]:
            _ping_when_idle(engine, IDLE_PING_SECONDS)
        return engine
    raise ConfigurationError(
        f"unsupported database {backend!r}: use sqlite:/// or postgresql+psycopg://"
    )


#: A pooled PostgreSQL connection idle for longer than this is pinged before it is handed out.
IDLE_PING_SECONDS = 5.0


def _ping_when_idle(engine: Engine, idle: float) -> None:
    """Ping a pooled connection on checkout only when it was last checked in more than
    ``idle`` seconds ago; a failed ping makes the pool replace it (``DisconnectionError`` is
    the pool's signal to try a fresh connection)."""

    @event.listens_for(engine, "checkin")
    def _checkin(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info["store_checked_in"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection: Any, record: ConnectionPoolEntry, proxy: Any) -> None:
        if closed_by_server(dbapi_connection):
            raise DisconnectionError("the server closed the pooled connection")
        last = record.info.get("store_checked_in")
        if last is None or time.monotonic() - last <= idle:
            return  # a new connection, or one in use a moment ago
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except Exception:  # noqa: BLE001 - any failure of the ping means: not usable
            alive = False
        if not alive:
            raise DisconnectionError("the pooled connection did not answer a ping")


def closed_by_server(dbapi_connection: Any) -> bool:
    """Whether an idle pooled connection has heard from the server: an idle connection is
    sent nothing, so a readable socket is the server's goodbye (``pg_terminate_backend``, a
    restart, an idle timeout: an error message, then the end of the stream). No round trip:
    one poll of the socket, so that a connection the server dropped is replaced on checkout
    instead of failing the read or write that gets it."""
    try:
        fd = dbapi_connection.fileno()
    except Exception:  # noqa: BLE001 - a closed or broken connection has no socket
        return True
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))
    readable, _, failed = select.select([fd], [], [fd], 0)  # pragma: no cover - Windows
    return bool(readable or failed)


_BEGIN = {mode: f"BEGIN {mode}" for mode in ("DEFERRED", "IMMEDIATE", "EXCLUSIVE")}


def database_url(value: str | URL) -> str | URL:
    """A URL as given, or a plain file path as an SQLite URL (``--db ./audit.sqlite``).
    ``ConfigurationError`` with a hint for an SQLite URL with a host (``sqlite://x``: two
    slashes)."""
    if isinstance(value, URL):
        return value
    if "://" not in value:
        if not value.strip():
            raise ConfigurationError(
                f"not a database URL or file path: {value!r} (use sqlite:///path/to/file, "
                "postgresql+psycopg://user@host/db, or a plain file path)")
        return f"sqlite:///{expand_home(value).resolve()}"
    scheme, _, rest = value.partition("://")
    if scheme.startswith("sqlite") and rest and not rest.startswith("/") and rest != ":memory:":
        raise ConfigurationError(
            f"{value!r} is not an SQLite file URL: it needs three slashes "
            f"(sqlite:///{rest} for a relative path, sqlite:////abs/path) or give a plain path")
    return value


def _sqlite_read_only_engine(url: URL, path: Path, options: dict[str, Any]) -> Engine:
    """A read-only SQLite engine that creates nothing and needs no write permission.

    SQLite's ``mode=ro`` still creates the ``-wal`` and ``-shm`` files of a WAL database (and
    leaves them behind), and fails when it may not create them (a reader who cannot write the
    folder). So each connection looks first: while a writer has the database open its ``-wal``
    file exists and ``mode=ro`` reads through it (creating nothing); otherwise the file holds
    every committed write and is read with ``immutable=1`` (no lock, no side file). Connections
    are not pooled, so that each read decides afresh.
    """

    from sqlalchemy.pool import NullPool

    if not path.is_file():
        raise ConfigurationError(
            f"no database at {path}: a read never creates one (check the path; a write or "
            "`transcript-store db upgrade` creates it)"
        )
    def connect() -> sqlite3.Connection:
        connection = connect_read_only(path, SQLITE_BUSY_TIMEOUT_MS)
        register_functions(connection)
        return connection

    options.pop("connect_args", None)
    options["poolclass"] = NullPool
    engine = create_engine(url.set(database=str(path)), creator=connect, **options)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.connection.dbapi_connection.execute("BEGIN")  # type: ignore[union-attr]

    return engine


def _sqlite_engine(url: URL, durability: Durability, options: dict[str, Any],
                   read_only: bool) -> Engine:
    database = url.database
    if read_only and database and database != ":memory:" and not database.startswith("file:"):
        return _sqlite_read_only_engine(url, expand_home(database).resolve(), options)
    if not read_only and database and database != ":memory:":
        # Create it readable by its owner only (0600, folders 0700): transcripts hold secrets.
        target = (_uri_file(database, url.query) if database.startswith("file:")
                  else expand_home(database))
        try:
            if target is not None and not target.exists():
                create_private_file(target)
        except OSError as exc:
            raise DatabaseError(f"cannot create the database {target}: "
                                f"{exc.strerror or exc}") from exc
    options.setdefault("connect_args", {})
    options["connect_args"].setdefault("timeout", SQLITE_BUSY_TIMEOUT_MS / 1000)
    options["connect_args"].setdefault("check_same_thread", False)
    if (database and database != ":memory:" and not database.startswith("file:")
            and "poolclass" not in options):
        # (the file's pool: the connection given back last is the one handed out next, its
        # page cache warm and the state the searches' index check kept read on it,
        # store/db/index/gaps_cache.py)
        options.setdefault("pool_use_lifo", True)
    engine = create_engine(url, **options)
    synchronous = "FULL" if durability == "power" else "NORMAL"

    def _wal(cursor: Any) -> None:
        """WAL mode, once per file (it persists). Switching needs an exclusive lock that
        SQLite does not wait for with the busy handler, so several first connections to a new
        file retry briefly instead of failing with "database is locked"."""
        for attempt in range(100):
            try:
                if cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                    return
                cursor.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or attempt == 99:
                    raise
                time.sleep(0.02 + random.random() * 0.03)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        # Let SQLAlchemy emit BEGIN itself (the pysqlite recipe in SQLAlchemy's SQLite docs).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            if database and database != ":memory:" and not read_only:
                _wal(cursor)
                # Checkpoints run in the store's own thread (db/checkpoint.py); this one is a
                # safety net for when that thread falls behind.
                cursor.execute(f"PRAGMA wal_autocheckpoint={SAFETY_NET_PAGES}")
            cursor.execute(f"PRAGMA synchronous={synchronous}")
        finally:
            cursor.close()
        register_functions(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        # Straight to the driver: this runs once per transaction, on the hot path.
        conn.connection.dbapi_connection.execute(_BEGIN[mode])  # type: ignore[union-attr]

    return engine
