"""Compaction (persistence; SQLite): pack what was written before packing, give the space back.

Since revision 0025 the writer packs a message's metadata and extras (``store/db/packing.py``);
rows written before stay text, and a file never shrinks by itself (SQLite keeps freed pages
for later rows). :func:`compact_database` packs those rows, a chunk of messages per write
transaction (a writer such as ``watch`` goes on between chunks), then ``VACUUM`` rewrites the
file without its free pages. Digests are over the text, so every chain verifies as before.
Since revision 0030 a call's wire text is stored once where the row's own columns rebuild it
(``store/db/schema/wiretext.py``); the calls written before keep theirs, and
:func:`compact_database` stores those once too (a chunk of calls per transaction, each row
elided only when SQLite rebuilds its text byte for byte). ``transcript-store db compact``
runs it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.core.collecting import fewer_collections
from store.core.errors import DatabaseError, UsageError
from store.db.packing import packed
from store.db.reading.sizes import wal_bytes
from store.db.schema.sqlitefile import SQLITE_BUSY_TIMEOUT_MS
from store.db.schema.wiretext import ELIDE_SQL

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["CompactReport", "compact_database"]

#: Messages read and rewritten per write transaction.
CHUNK = 2000
#: Calls whose wire text is stored once per write transaction.
CALL_CHUNK = 20000
#: How long VACUUM waits for another process's write to end (ms) before it gives up.
VACUUM_WAIT_MS = SQLITE_BUSY_TIMEOUT_MS


@dataclass(frozen=True, slots=True)
class CompactReport:
    """What :func:`compact_database` did: the values it packed (metadata and extras) of how
    many messages, the database's size on disk (its pages and its write-ahead log) before and
    after, whether it vacuumed; ``wires``: the calls whose wire text it stored once (their
    own columns rebuild it: revision 0030)."""

    url: str
    messages: int
    packed: int
    bytes_before: int
    bytes_after: int
    vacuumed: bool
    seconds: float
    wires: int = 0


def _size(conn: Any) -> int:
    """The file and its write-ahead log, as they take the disk."""
    return int(conn.exec_driver_sql("PRAGMA page_count").scalar()) * int(
        conn.exec_driver_sql("PRAGMA page_size").scalar()) + wal_bytes(conn)


@fewer_collections()
def compact_database(store: TranscriptStore, *, vacuum: bool = True,
                     progress: Callable[[int, int], None] | None = None) -> CompactReport:
    """Pack every message's metadata and extras still stored as text (when packing makes
    them shorter) and store once each call's wire text its row's columns rebuild, then, with
    ``vacuum``, ``VACUUM`` the file (it needs as much free disk as the database, and holds the
    file's write lock while it runs). ``progress(messages read, values packed)`` after each
    chunk. SQLite only: PostgreSQL stores these columns as text (``UsageError``); a read-only
    store refuses (``UsageError``)."""
    if store.dialect != "sqlite":
        raise UsageError("db compact packs SQLite files; PostgreSQL keeps these columns as text "
                         "(its VACUUM FULL gives space back)")
    if store.read_only:
        raise UsageError("db compact writes: open the store writable")
    started = time.perf_counter()
    engine = store.engine
    with engine.connect() as conn:
        before = _size(conn)
    writing = engine.execution_options(sqlite_begin="IMMEDIATE")
    wires = _elide_wires(writing)  # (first: ``progress`` is called after the last write)
    last, seen, count = -1, 0, 0
    while True:
        with writing.begin() as conn:
            rows = conn.exec_driver_sql(
                "SELECT rowid, metadata_json, extras_json FROM messages WHERE rowid > ? "
                "AND (typeof(metadata_json) = 'text' OR typeof(extras_json) = 'text') "
                f"ORDER BY rowid LIMIT {CHUNK}", (last,)).all()
            if not rows:
                break
            changed = []
            for rowid, meta, extras in rows:
                new_meta = packed(meta) if isinstance(meta, str) else meta
                new_extras = packed(extras) if isinstance(extras, str) else extras
                done = (new_meta is not meta) + (new_extras is not extras)
                if done:
                    changed.append((new_meta, new_extras, rowid))
                    count += done
            if changed:
                conn.exec_driver_sql("UPDATE messages SET metadata_json = ?, extras_json = ? "
                                     "WHERE rowid = ?", changed)
            last = int(rows[-1][0])
            seen += len(rows)
        if progress is not None:
            progress(seen, count)
        if len(rows) < CHUNK:  # (the last chunk: no transaction to find nothing more)
            break
    if vacuum:
        with engine.connect() as conn:
            # On the driver: SQLAlchemy would begin a transaction, which VACUUM refuses. In WAL
            # mode the rewritten pages go through the WAL: truncate it after.
            raw = conn.connection.dbapi_connection
            assert raw is not None
            raw.execute(f"PRAGMA busy_timeout={VACUUM_WAIT_MS}")
            try:
                raw.execute("VACUUM")
            except sqlite3.OperationalError as exc:  # (the file is busy)
                raise DatabaseError(
                    f"db compact: VACUUM could not have the file ({exc}); the values are "
                    f"packed ({count} this run): run it again when no other process writes, "
                    "or use --no-vacuum") from exc
            finally:
                raw.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    with engine.connect() as conn:
        # Fold the write-ahead log into the file and truncate it (what VACUUM rewrote went
        # through it; and a log grown large stays that large on disk until truncated).
        raw = conn.connection.dbapi_connection
        assert raw is not None
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after = _size(conn)
    return CompactReport(store.url, seen, count, before, after, vacuum,
                         time.perf_counter() - started, wires)


def _elide_wires(writing: Any) -> int:
    """Store once the wire text of every call written before revision 0030 that its row's
    columns rebuild exactly (a chunk of calls per write transaction); how many."""
    last, elided = -1, 0
    while True:
        with writing.begin() as conn:
            bounds = conn.exec_driver_sql(
                "SELECT max(rowid), count(*) FROM (SELECT rowid FROM tool_calls WHERE rowid > ? "
                f"ORDER BY rowid LIMIT {CALL_CHUNK})", (last,)).one()
            if not bounds[1]:
                break
            elided += conn.exec_driver_sql(
                f"UPDATE tool_calls SET wire_json = '' WHERE rowid > ? AND rowid <= ? AND "
                f"{ELIDE_SQL}", (last, int(bounds[0]))).rowcount
            last = int(bounds[0])
        if bounds[1] < CALL_CHUNK:
            break
    return elided
