"""The catch-ups' reads between their write transactions (persistence).

A catch-up (the call index, the message index, the usage summaries, the transparency log:
``store/db/proofs/tlog.py``) plans on a read connection of its own (which sessions lag) and
reads the next chunks' rows on it while it writes the chunk before on the store's write
connection. SQLAlchemy begins a transaction at
a connection's first statement and holds it until told otherwise; on SQLite that read
transaction is a snapshot, and no checkpoint can copy into the database a page written after
the oldest snapshot still open. Held over a whole catch-up, it kept every checkpoint from
copying anything the catch-up wrote: the write-ahead log grew by all of it (5.6 GB beside a
3.3 GB database after an import of 10^6 messages, where the log otherwise stays at a few
megabytes). So each read here is its own short transaction, ended as soon as its rows are
in hand (the rows read ahead are checked again in the write transaction: a newer snapshot
changes nothing written).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

__all__ = ["end_read", "idle_now", "note_idle", "one_read", "read_briefly", "short_reads",
           "statement_by_statement"]

#: Per read operation (:func:`one_read`): the PostgreSQL state at which each engine's store
#: found nothing to catch up, for the operation's later statements.
_IDLE_AT: ContextVar[dict[Engine, Any] | None] = ContextVar("transcript_store_idle_at",
                                                            default=None)

_T = TypeVar("_T")


def end_read(conn: Connection) -> None:
    """End ``conn``'s transaction, if a statement began one (a read: nothing to keep)."""
    if conn.in_transaction():
        conn.rollback()


@contextmanager
def short_reads(conn: Connection) -> Iterator[None]:
    """Whatever ran on ``conn`` in the block, its transaction is ended after it."""
    try:
        yield
    finally:
        end_read(conn)


def read_briefly(conn: Connection, read: Callable[[Any], _T]) -> Callable[[Any], _T]:
    """``read`` (a read-ahead of a chunk's rows on ``conn``'s driver connection) run in a
    transaction of its own, ended when it returns."""

    def briefly(chunk: Any) -> _T:
        end_read(conn)
        with conn.begin():
            return read(chunk)

    return briefly


def statement_by_statement(conn: Connection) -> Connection:
    """``conn``, on PostgreSQL with each statement a transaction of its own (autocommit): no
    ``BEGIN`` round trip before its first statement and no ``ROLLBACK`` after its last, two of
    a short read's three or four (a search of every call found nothing in 6.8 ms against the
    raw driver's 0.5 ms, most of it such round trips). For reads that need no transaction
    around their statements: under READ COMMITTED each statement takes its own snapshot
    anyway. Not for a server-side cursor or ``SET LOCAL``, which need one. The pool gives
    the connection back to others in its default mode. SQLite: unchanged (a read's
    transaction there is its snapshot, and costs no round trip)."""
    if conn.dialect.name == "postgresql":
        conn.execution_options(isolation_level="AUTOCOMMIT")
    return conn


@contextmanager
def one_read() -> Iterator[None]:
    """One read operation (a search): when its writable store's first statement finds the
    database at the state where a catch-up last found nothing to do
    (``store.db.index.gaps_cache.idle_state``), what holds at that state is taken as known
    for the rest of the operation instead of being asked again, one round trip each: the
    state itself (the derived rows' key check is kept per state), the alias table (kept per
    state), and that no session lags behind the call index (that catch-up found none).
    PostgreSQL only, where the state is the server's WAL position (it moves with every
    write); a search of every call then takes two round trips (the state, the search), from
    nine."""
    token = _IDLE_AT.set({})
    try:
        yield
    finally:
        _IDLE_AT.reset(token)


def note_idle(engine: Engine, state: Any) -> None:
    """Within :func:`one_read`: ``engine``'s database was found at ``state``, where nothing
    is to catch up."""
    held = _IDLE_AT.get()
    if held is not None and state is not None:
        held[engine] = state


def idle_now(engine: Engine) -> Any | None:
    """The state noted by :func:`note_idle` for ``engine`` in this read operation, if any."""
    held = _IDLE_AT.get()
    return None if held is None else held.get(engine)
