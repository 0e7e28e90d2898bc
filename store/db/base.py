"""The store's base: engine, connections, transactions, retries, row helpers (persistence).

:class:`StoreBase` owns the engine and hands out read connections and write transactions
(``BEGIN IMMEDIATE`` on SQLite), retrying a whole write transaction on a lock or
serialization conflict; driver errors become :class:`~store.core.errors.DatabaseError`.
"""

from __future__ import annotations

import functools
import random
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ParamSpec, Self, TypeVar, cast

from sqlalchemy import Connection, Engine, event
from sqlalchemy.exc import SQLAlchemyError

from store.core.arguments import dumps_json, loads_json
from store.core.depth import MAX_DEPTH, text_depth, text_within
from store.core.errors import ConnectionLost, DatabaseError
from store.core.lineage import SessionLink
from store.core.logs import logger
from store.core.paths import expand_home
from store.core.times import as_utc
from store.core.transcript import (
    SessionInfo,
)
from store.db.index.reads import idle_now, statement_by_statement
from store.db.reading.walks import session_info
from store.db.schema.engine import redact_url
from store.db.writing.checkpoint import Checkpointer
from store.db.writing.compiled import Statements, statements
from store.db.writing.flight import STALE_SQLSTATES, Flight, LostFlight, SessionState, StaleState
from store.db.writing.limits import Limits
from store.db.writing.presence import Presence
from store.tools.names import AliasTable

if TYPE_CHECKING:  # (an import's appends only)
    from store.db.writing.indexing import InlineIndex

__all__ = ["MAX_SESSION_ID_LENGTH", "StoreBase", "check_new_session", "check_session_id", "dropped",
           "reads_once"]

T = TypeVar("T")

#: The longest session id accepted (ids are keys on every table).
MAX_SESSION_ID_LENGTH = 512


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes: they were stored as UTC, so say so."""
    return as_utc(value)


def check_session_id(session_id: object) -> str:
    """A usable session id, or a ``ValueError``-typed ``StoreError`` naming the problem."""
    from store.core.errors import RecordError

    if not isinstance(session_id, str) or not session_id:
        raise RecordError(f"a session id must be a non-empty string, got {session_id!r}")
    if len(session_id) > MAX_SESSION_ID_LENGTH:
        raise RecordError(
            f"a session id must be at most {MAX_SESSION_ID_LENGTH} characters, "
            f"got {len(session_id)}"
        )
    if "\x00" in session_id:
        raise RecordError("a session id must not contain NUL characters")
    return session_id



P = ParamSpec("P")


def reads_once(method: Callable[P, T]) -> Callable[P, T]:
    """A read (a method or function that changes nothing) run once more when the connection
    it used died under it (:class:`~store.core.errors.ConnectionLost`, raised by
    ``StoreBase._read`` and the audit's ``connect``): the dead connection was invalidated, so
    the second run gets a live one."""

    @functools.wraps(method)
    def read(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except ConnectionLost as exc:
            _log.info("%s; reading again on a new connection", exc)
            return method(*args, **kwargs)

    return read


def dropped(engine: Engine, exc: BaseException, conn: Connection) -> bool:
    """Whether ``exc`` (met on ``conn``) says the connection to the database is gone: the
    dialect's own test, on SQLAlchemy's error or on the driver's (the hot reads run on the
    driver's cursor, where SQLAlchemy does not see the error)."""
    if getattr(exc, "connection_invalidated", False):
        return True
    if conn.invalidated or conn.closed:
        return False
    orig = getattr(exc, "orig", None) or exc
    try:
        dbapi = conn.connection.dbapi_connection
    except Exception:  # noqa: BLE001 - a connection SQLAlchemy cannot hand out is gone
        return True
    return bool(engine.dialect.is_disconnect(orig, dbapi, None))  # type: ignore[arg-type]


class StoreBase:
    """Engine, connections and transactions shared by the parts of ``TranscriptStore``."""

    def __init__(self, engine: Engine, *, limits: Limits | None = None,
                 read_only: bool = False) -> None:
        self._engine = engine
        self._limits = limits or Limits()
        self.read_only = read_only
        self._closed = False
        self._given_url: str | None = None  # the URL as the caller gave it (see ``url``)
        # Writes take SQLite's write lock up front (BEGIN IMMEDIATE): no lock-upgrade deadlocks.
        self._write_engine = engine.execution_options(sqlite_begin="IMMEDIATE")
        # The hot paths run on the DBAPI cursor, so the driver's own errors surface there too.
        dbapi = engine.dialect.dbapi
        self._errors: tuple[type[BaseException], ...] = (
            (SQLAlchemyError, dbapi.Error) if dbapi is not None else (SQLAlchemyError,)
        )
        #: PostgreSQL: each session's state after this store's last append to it (one-flight
        #: appends; store.db.writing.writer.SessionState), least recently appended first.
        self._session_states: OrderedDict[str, SessionState] = OrderedDict()
        self._states_lock = threading.Lock()
        #: Sessions another writer appended to behind this store's back (a stale remembered
        #: state): 0 once, then, at a second stale state, how many appends go on reading the
        #: session first. While two writers share a session a remembered state is mostly
        #: stale, and each stale one costs a failed flight (issue 39); once is only a cost
        #: of one flight.
        self._contended: OrderedDict[str, int] = OrderedDict()
        self._citus: bool | None = None  # asked when a session is first contended
        #: What the database holds of the indexes, for an import's appends that carry their
        #: index texts (store/db/writing/indexing.py): read at the first one.
        self._inline: InlineIndex | None = None
        #: Calls, results and messages indexed with their rows since the last catch-up
        #: (reported by ``update_search_index`` beside its own).
        self._inline_counts = [0, 0, 0]
        # SQLite: WAL checkpoints in a thread of their own, off the appends (db/checkpoint.py).
        self._checkpointer: Checkpointer | None = None
        self._presence: Presence | None = None
        database = engine.url.database
        if (engine.dialect.name == "sqlite" and not read_only and database
                and database != ":memory:" and not database.startswith("file:")):
            path = expand_home(database).resolve()
            self._checkpointer = Checkpointer(path)
            # Held while the store is open: no close() elsewhere in the process can let
            # another process delete the WAL under it (db/presence.py, issue 37).
            self._presence = Presence(path)
            event.listen(engine, "commit", self._committed)

    def _forget(self, session_ids: Iterable[str]) -> None:
        """Drop what this store remembers of these sessions (PostgreSQL one-flight appends):
        after a delete, an erase, a prune, a truncate or a failed append the next append
        reads the session again (an empty one then recreates a removed session)."""
        with self._states_lock:
            for sid in session_ids:
                self._session_states.pop(sid, None)

    def _committed(self, conn: Any) -> None:
        if self._checkpointer is not None:
            self._checkpointer.committed()


    @property
    def engine(self) -> Engine:
        return self._engine

    @property
    def url(self) -> str:
        """The database URL as given to :meth:`open` (not the engine's rewritten form, such as
        SQLite's ``file:...?mode=ro`` of a read-only open), with any password hidden."""
        return self._given_url or redact_url(self._engine.url)

    @property
    def dialect(self) -> str:
        return self._engine.dialect.name

    def close(self) -> None:
        """Release every connection."""
        if not self._closed:
            if self._checkpointer is not None:
                self._checkpointer.close()
            if self._presence is not None:
                self._presence.release()
            self._engine.dispose()
            if self._presence is not None:
                self._presence.close()
            self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TranscriptStore({self.url!r})"

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """A pooled connection for reads. A connection that died under them (the server
        dropped it) is invalidated, so that the pool closes it rather than resetting it (no
        "Exception during reset"), and :class:`~store.core.errors.ConnectionLost` is raised:
        the read methods (:func:`reads`) run once more on a new connection. On PostgreSQL
        its statements run one by one, without a ``BEGIN`` and a ``ROLLBACK`` round trip
        around them (``store.db.index.reads.statement_by_statement``: none of these reads
        streams or sets ``SET LOCAL``)."""
        try:
            with self._engine.connect() as conn:
                try:
                    yield statement_by_statement(conn)
                except self._errors as exc:
                    if self._dropped(exc, conn):
                        conn.invalidate(exc)
                        raise ConnectionLost(f"{self.url}: {driver_reason(exc)}") from exc
                    raise
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    def _dropped(self, exc: BaseException, conn: Connection) -> bool:
        """Whether ``exc`` says that ``conn``'s connection to the database is gone."""
        return dropped(self._engine, exc, conn)

    @reads_once
    def _read_rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """The rows of one read statement on the driver cursor. On PostgreSQL it runs in
        autocommit (one statement is one snapshot anyway): one round trip, no BEGIN before it
        and no ROLLBACK after. Once more on a new connection when the server dropped this
        one."""
        with self._read() as conn:
            dbapi: Any = conn.connection.dbapi_connection
            postgres = self._engine.dialect.name == "postgresql"
            if postgres:
                dbapi.autocommit = True
            cursor = dbapi.cursor()
            try:
                cursor.execute(sql, params)
                return list(cursor.fetchall())
            finally:
                with suppress(*self._errors):
                    cursor.close()
                if postgres:
                    with suppress(*self._errors):
                        dbapi.autocommit = False

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        try:
            with self._write_engine.connect() as conn, conn.begin():
                yield conn
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    def _alias_table_now(self, conn: Connection) -> AliasTable:
        """The alias table as stored now (through a Core connection)."""
        return alias_table(conn)

    def _retrying(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in a write transaction, retrying (bounded, with backoff) when the
        database reports a lock or serialization conflict; the transaction is rolled back
        before each retry, so nothing is applied twice."""
        def once() -> T:
            with self._write_engine.connect() as conn, conn.begin():
                return work(conn)

        return self._with_retries(once)

    def _retrying_cursor(self, work: Callable[[Any], T]) -> T:
        """:meth:`_retrying` on the driver's own connection and cursor: the hot write path
        (one append) skips SQLAlchemy's per-transaction work (Connection, events, the
        transaction object); same lock (``BEGIN IMMEDIATE`` on SQLite), retries and errors."""
        sqlite = self._engine.dialect.name == "sqlite"
        dialect = self._engine.dialect

        def attempt() -> tuple[bool, T | None]:
            """(True, result), or (False, None) when the connection turned out to be dead
            before COMMIT was sent: nothing was committed, so the caller may run it again."""
            fairy = self._engine.raw_connection()
            try:
                dbapi: Any = fairy.dbapi_connection
                cursor = dbapi.cursor()
                try:
                    if sqlite:
                        cursor.execute("BEGIN IMMEDIATE")
                        try:
                            result = work(cursor)
                        except BaseException:
                            dbapi.rollback()
                            raise
                        dbapi.commit()
                        if self._checkpointer is not None:
                            self._checkpointer.committed()
                        return True, result
                    # PostgreSQL: the transaction in two round trips (store.db.writing.flight).
                    flight = Flight(dbapi, fairy.info)
                    try:
                        result = work(flight)
                        flight.commit()
                        return True, result
                    except BaseException as exc:
                        if isinstance(exc, self._errors) and dialect.is_disconnect(
                                getattr(exc, "orig", None) or exc, dbapi, cursor):  # type: ignore[arg-type]
                            fairy.invalidate(exc)
                            if not flight.commit_sent:
                                # Lost before COMMIT was sent: nothing was committed.
                                return False, None
                            # After: it may have committed; the caller finds out (LostFlight).
                            raise LostFlight() from exc
                        with suppress(*self._errors):
                            dbapi.rollback()
                        if flight.optimistic and getattr(
                                getattr(exc, "orig", None) or exc, "sqlstate", None) in (
                                STALE_SQLSTATES):
                            raise StaleState() from exc
                        raise
                    finally:
                        with suppress(*self._errors):
                            flight.finish()
                finally:
                    with suppress(*self._errors):  # a dead connection's cursor may refuse
                        cursor.close()
            finally:
                fairy.close()

        def once() -> T:
            # A pooled connection that died (the pool pings only connections idle for a
            # while: one round trip saved per append) is met by the first statement: the
            # transaction runs again on the next connection (after a server restart every
            # pooled one may be dead: at most the pool's size of them are thrown away).
            for _ in range(_LOST_CONNECTION_TRIES):
                done, result = attempt()
                if done:
                    return cast(T, result)
            raise DatabaseError(f"{self.url}: the connection to the database was lost")

        return self._with_retries(once)

    def _with_retries(self, once: Callable[[], T]) -> T:
        """``once()`` (one whole transaction), again after a lock or serialization conflict,
        at most ``_RETRIES`` times with backoff; driver errors become ``DatabaseError``."""
        for attempt in range(_RETRIES + 1):
            try:
                return once()
            except self._errors as exc:
                if attempt < _RETRIES and _is_transient(exc):
                    pause = min(_BACKOFF * 2**attempt, 1.0) * (0.5 + random.random())
                    _log.info("%s: %s; retrying the transaction in %.0f ms (retry %d of %d)",
                              self.url, driver_reason(exc), pause * 1000, attempt + 1, _RETRIES)
                    time.sleep(pause)
                    continue
                raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _aliases_from(self, cursor: Any, st: Statements) -> AliasTable:
        """The alias table as stored now, rebuilt only when its rows changed."""
        return _read_aliases(self._engine, cursor, st)

_log = logger(__name__)
_RETRIES = 8
#: Connections a write may find dead in a row before it gives up (the pool's size + overflow).
_LOST_CONNECTION_TRIES = 16
_BACKOFF = 0.02
_TRANSIENT_SQLSTATES = {"40001", "40P01", "55P03"}  # serialization, deadlock, lock not available


def _is_transient(exc: BaseException) -> bool:
    """A lock or serialization conflict that a retry of the whole transaction can get past."""
    orig = getattr(exc, "orig", None) or exc
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate in _TRANSIENT_SQLSTATES:
        return True
    message = str(orig).lower()
    return "database is locked" in message or "database is busy" in message


def driver_reason(exc: BaseException) -> str:
    """The driver's message (without SQLAlchemy's statement dump, which may hold data)."""
    orig = getattr(exc, "orig", None)
    return str(orig if orig is not None else exc).strip()


def alias_table(conn: Connection) -> AliasTable:
    """The persisted alias table (``tool_aliases``: global and per-agent rows), read on
    ``conn`` (one compiled statement on the driver cursor; the table is rebuilt only when its
    rows changed)."""
    state = idle_now(conn.engine)  # (PostgreSQL, in a read operation: store.db.index.reads)
    if state is not None:
        kept = _ALIASES_AT.get(conn.engine)
        if kept is not None and kept[0] == state:
            return kept[1]
    cursor = conn.connection.cursor()
    try:
        table = _read_aliases(conn.engine, cursor, statements(conn.dialect.name))
    finally:
        cursor.close()
    if state is not None:
        _ALIASES_AT[conn.engine] = (state, table)
    return table


def _read_aliases(engine: Engine, cursor: Any, st: Statements) -> AliasTable:
    cursor.execute(st.load_aliases.sql)
    return aliases_from_text(engine, cursor.fetchone()[0])


#: The alias table last read per engine at a known database state (PostgreSQL's WAL
#: position: it moves with every write, an alias's too).
_ALIASES_AT: weakref.WeakKeyDictionary[Engine, tuple[Any, AliasTable]] = (
    weakref.WeakKeyDictionary())
#: The alias table last built per engine from the JSON text a load reads.
_ALIASES_TEXT: weakref.WeakKeyDictionary[Engine, tuple[str | None, AliasTable]] = (
    weakref.WeakKeyDictionary())


def aliases_from_text(engine: Engine, text: str | None) -> AliasTable:
    """The alias table from the JSON text of its rows (``[[agent, raw_name, current_name],
    ...]``, as a load reads it on ``engine``), rebuilt only when the text changed."""
    cached = _ALIASES_TEXT.get(engine)
    if cached is not None and cached[0] == text:
        return cached[1]
    table = AliasTable.from_rows(tuple(row) for row in loads_json(text or "[]"))
    _ALIASES_TEXT[engine] = (text, table)
    return table


def check_new_session(sid: str, title: str | None, provider: str | None, model: str | None,
                      cwd: str | None, tags: Iterable[str], metadata: Mapping[str, Any] | None,
                      agent: str | None = None, parent: SessionLink | None = None) -> None:
    """Raise what ``create_session`` raises for these values (a bad id, tags that are not
    strings, metadata nested too deep), without the database: an importer judges a new
    session before its first append creates it."""
    _session_row(check_session_id(sid), title, provider, model, cwd, tags, metadata,
                 datetime.now(UTC), agent, parent)


def _session_row(
    sid: str,
    title: str | None,
    provider: str | None,
    model: str | None,
    cwd: str | None,
    tags: Iterable[str],
    metadata: Mapping[str, Any] | None,
    now: datetime,
    agent: str | None = None,
    parent: SessionLink | None = None,
) -> dict[str, Any]:
    tag_list = list(tags)
    if not all(isinstance(t, str) for t in tag_list):
        from store.core.errors import RecordError

        raise RecordError(f"session tags must be strings, got {tag_list!r}")
    metadata_json = dumps_json(dict(metadata)) if metadata else "{}"
    if not text_within(metadata_json):
        from store.core.errors import NestingTooDeep

        raise NestingTooDeep(f"session {sid!r}: its metadata", text_depth(metadata_json),
                             MAX_DEPTH)
    return {
        "session_id": sid, "title": title, "provider": provider, "model": model, "cwd": cwd,
        "agent": agent,
        "tags_json": dumps_json(tag_list) if tag_list else "[]",
        "metadata_json": metadata_json,
        "created_at": now, "updated_at": now, "started_at": None, "last_activity_at": None,
        "next_position": 0, "indexed_position": 0, "message_indexed_position": 0,
        "logged_position": 0,
        "chain_digest": None,
        "parent_session_id": parent.parent_session_id if parent else None,
        "lineage": parent.kind if parent else None,
        "parent_call_id": parent.parent_call_id if parent else None,
    }


def _session_info(row: Any) -> SessionInfo:
    return session_info(row)


def _maybe_aware(value: Any) -> datetime | None:
    return None if value is None else _aware(value)

