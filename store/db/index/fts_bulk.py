"""SQLite's full-text indexes written in bulk by a large catch-up (persistence; FTS5 only).

FTS5 writes a segment per transaction (and one per megabyte of text within one) and, with its
defaults (``automerge`` 4, ``crisismerge`` 16), merges the segments of a level as soon as four
wait there: a catch-up of many chunks (an import's, ``db index``) writes each entry again at
every level it climbs, about log4 of its chunks times (4-5 at 10^6 messages). When a catch-up
has at least :data:`BULK_MESSAGES` messages to index, :func:`begin` has the index merge only
when 64 segments wait on a level (``automerge`` 0, ``crisismerge`` 64) while the chunks are
written; :func:`finish` then restores the defaults and merges what waits, :data:`MERGE_PAGES`
pages per write transaction (other writers get the lock between them), until no level holds
four segments: the index the defaults would have made, or fewer segments.

Measured on the texts of the scale benchmark's 10^6 home, chunks of 2,000 messages: the call
index 56.5 -> 36.2 s and its merge 6.5 s (13 segments -> 2), the message index 30.3 -> 16.3 s
and 4.7 s (12 -> 1). The entries are the same: a search gives the same answers.

The two settings live in the index's ``_config`` table. A catch-up that stops in its bulk (an
error, a kill) leaves them: the next catch-up of that index, whatever its size, finds them
(:func:`left_in_bulk`) and finishes the job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from store.db.index.reads import short_reads

if TYPE_CHECKING:  # (imported by the readers' modules: no SQLAlchemy on a read path)
    from sqlalchemy import Connection

__all__ = ["BULK_MESSAGES", "MERGE_PAGES", "begin", "finish", "left_in_bulk", "started",
           "wanted"]

#: Messages waiting from which a catch-up writes its index in bulk (ten of the workers'
#: chunks: below, the defaults' merges cost little).
BULK_MESSAGES = 20_000
#: Pages of merge work per write transaction of :func:`finish`.
MERGE_PAGES = 2000
#: FTS5's defaults, restored by :func:`finish`.
DEFAULT_AUTOMERGE = 4
DEFAULT_CRISISMERGE = 16
#: Segments on one level before FTS5 merges them during the bulk.
BULK_CRISISMERGE = 64
#: The row of an FTS5 index's ``_data`` table holding its structure (FTS5_STRUCTURE_ROWID):
#: a merge that did work changed it.
_STRUCTURE = 10
#: A catch-up's write: runs a function in a write transaction and gives its value.
Write = Callable[[Callable[["Connection"], Any]], Any]
#: At most this many merge steps (a bound, never reached: each step merges or stops).
_MOST_STEPS = 100_000


def _set(conn: Connection, table: str, name: str, value: int) -> None:
    conn.exec_driver_sql(f"INSERT INTO {table} ({table}, rank) VALUES ('{name}', {int(value)})")


def left_in_bulk(conn: Connection, table: str) -> bool:
    """Whether ``table`` still holds a bulk's settings (a catch-up stopped before its end)."""
    found = conn.exec_driver_sql(
        f"SELECT v FROM {table}_config WHERE k = 'automerge'").first()
    return found is not None and str(found[0]) == "0"


def wanted(conn: Connection, table: str, behind: Sequence[tuple[str, int, int]]) -> bool:
    """Whether a catch-up of the lagging sessions ``behind`` (session, first position, end)
    writes ``table`` in bulk: SQLite, enough messages waiting, or a bulk left unfinished."""
    if conn.dialect.name != "sqlite":
        return False
    waiting = sum(stop - start for _, start, stop in behind)
    return waiting >= BULK_MESSAGES or left_in_bulk(conn, table)


def begin(conn: Connection, table: str) -> None:
    """In a write transaction: ``table`` merges only when 64 segments wait on a level."""
    _set(conn, table, "automerge", 0)
    _set(conn, table, "crisismerge", BULK_CRISISMERGE)


def _restore(conn: Connection, table: str) -> None:
    _set(conn, table, "automerge", DEFAULT_AUTOMERGE)
    _set(conn, table, "crisismerge", DEFAULT_CRISISMERGE)


def _merge_step(conn: Connection, table: str) -> bool:
    """One step of merge work; whether it merged anything (the structure changed)."""
    structure = f"SELECT block FROM {table}_data WHERE id = {_STRUCTURE}"
    before = conn.exec_driver_sql(structure).scalar()
    conn.exec_driver_sql(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', {MERGE_PAGES})")
    return bool(conn.exec_driver_sql(structure).scalar() != before)


def finish(write: Write, table: str) -> int:
    """After the bulk: FTS5's defaults back, and what waits merged, a write transaction per
    :data:`MERGE_PAGES` pages, until no level holds four segments; the steps that merged."""
    write(partial(_restore, table=table))
    steps = 0
    while steps < _MOST_STEPS and write(partial(_merge_step, table=table)):
        steps += 1
    return steps


def started(write: Write, read_conn: Connection, table: str,
            behind: Sequence[tuple[str, int, int]]) -> bool:
    """Whether a catch-up of the lagging sessions ``behind`` writes ``table`` in bulk
    (:func:`wanted`, asked in a short read); if so its settings are set (:func:`begin`), and
    the caller runs :func:`finish` after its last chunk."""
    with short_reads(read_conn):
        bulk = wanted(read_conn, table, behind)
    if bulk:
        write(partial(begin, table=table))
    return bulk
