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
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from sqlalchemy import Connection

__all__ = ["end_read", "read_briefly", "short_reads"]

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
