"""Reading an agent's own SQLite database, read-only, while the agent may be writing (domain).

Crush (``.crush/crush.db``), OpenCode (``opencode.db``) and Goose (``sessions.db``) keep their
sessions in SQLite. This module is the only one of the importers that speaks SQL: it uses the
standard library's :mod:`sqlite3` (no SQLAlchemy: the agent's database is an input file, not
a store), reads the tables a reader needs in one read transaction, and hands plain rows
(``dict`` per row) to the agent's reader (:mod:`~store.agents.crush.reader`,
:mod:`~store.agents.opencode.reader`, :mod:`~store.agents.goose.reader`).

**Never writing, never leaving files behind.** The database is opened through a
``file:...?mode=ro`` URI with ``PRAGMA query_only``: nothing is created or written. A WAL
database needs its ``-shm`` index to be read consistently, and SQLite creates ``-wal`` and
``-shm`` files (and leaves them) when a read-only connection opens a WAL database that has
none. So:

* a WAL database whose ``-wal`` and ``-shm`` both exist (the agent has it open) is opened
  with ``mode=ro``: it shares the agent's index, sees every committed transaction, and one
  ``BEGIN ... COMMIT`` gives a consistent snapshot while the agent goes on writing;
* a WAL database without them (the agent closed it: everything is in the main file) and a
  database in rollback-journal mode are opened with ``immutable=1`` / ``mode=ro``
  respectively, which create no file. Should the agent open a WAL database while it is being
  read as immutable, its files then exist and the read is made again with ``mode=ro``.

A busy timeout (:data:`BUSY_TIMEOUT`) waits out a writer that holds the database (rollback
mode, WAL recovery); a database still busy after it is an :class:`ImportFileError` (the next
import or watch pass reads it). Rows are keyed by the agent's own ids, so a database read
again (it changed: the whole database is read again) stores nothing twice.

**Only what the reader needs.** A layout names the tables read and, for a key-value table
of which the reader needs a few keys (Cursor's ``state.vscdb``), the rows (``where``): the
rest of the database is never read, so the import limit (``max_file_bytes``) counts the
bytes of the rows read, not the file's size (a terminal's history database holding a few
agent tables is read, a table of rows over the limit is refused). Values of the columns a
layout names as zstd-compressed (Zed's thread payloads) are decompressed as they are read,
with the ``zstandard`` library (the ``zstd`` extra); without it, such a database is an
:class:`ImportFileError` that names the extra.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from store.agents.registry import agent, agents, database_agent
from store.core.errors import ImportFileError
from store.importers.base import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_SETTLE_SECONDS,
    Collector,
    ParsedFile,
    Source,
)

__all__ = ["AGENT_DATABASES", "BUSY_TIMEOUT", "DB_FORMATS", "SQLITE_HEADER",
           "database_format", "database_signature", "is_agent_database", "is_sqlite_file",
           "read_agent_db"]

#: Agents' SQLite databases, found by name (each agent's ``database.file_names``; the plain
#: names here): other ``.db`` files are not walked into (a folder may hold any database).
AGENT_DATABASES = frozenset(n for a in agents() if a.database is not None
                            for n in a.database.file_names if "*" not in n)


def is_agent_database(name: str) -> bool:
    """A file name of an agent's database (OpenCode's per-channel ``opencode-<channel>.db``
    too: the registry's patterns)."""
    return database_agent(name)


SQLITE_HEADER = b"SQLite format 3\x00"
#: Seconds a read waits for a writer that holds the database.
BUSY_TIMEOUT = 10.0

#: Agent formats kept in a SQLite database (the registry's agents with a ``database``).
DB_FORMATS = frozenset(a.name for a in agents() if a.database is not None)


def is_sqlite_file(path: Path) -> bool:
    """True when the file starts with SQLite's header (read with one small read)."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; only a regular file counts.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.pread(fd, 16, 0) == SQLITE_HEADER
    except OSError:
        return False
    finally:
        os.close(fd)


def _companions(path: Path) -> tuple[os.stat_result | None, os.stat_result | None]:
    found: list[os.stat_result | None] = []
    for suffix in ("-wal", "-shm"):
        try:
            found.append(os.stat(f"{path}{suffix}"))
        except OSError:
            found.append(None)
    return found[0], found[1]


def _head(path: str, size: int) -> bytes:
    """The first ``size`` bytes of a regular file (empty when it cannot be read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return b""
    try:
        return os.pread(fd, size, 0) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    except OSError:
        return b""
    finally:
        os.close(fd)


def database_signature(path: Path) -> tuple[str, float]:
    """A digest of what says the database changed beyond its main file's size and time, and
    the newest modification time of it and its ``-wal`` (seconds), for the settle rule.

    The digest covers the main file's 100-byte header (its change counter), the ``-wal``
    file's identity, size and time, and the WAL index header at the start of ``-shm`` (its
    change counter, last frame and that frame's checksum move with every commit, even one
    that leaves the ``-wal`` size and time as they were: a rewound WAL, a commit within the
    file system's time granularity). It is taken before the database is read, so a commit
    made during or after the read changes it for the next read."""
    wal, _ = _companions(path)
    h = hashlib.sha256(_head(str(path), 100))
    newest = os.stat(path).st_mtime
    if wal is not None:
        h.update(f"{wal.st_dev}:{wal.st_ino}:{wal.st_size}:{wal.st_mtime_ns}".encode())
        newest = max(newest, wal.st_mtime)
    h.update(_head(f"{path}-shm", 136))
    return h.hexdigest()[:32], newest


def _is_wal(path: Path) -> bool:
    with open(path, "rb") as handle:
        header = handle.read(20)
    return len(header) == 20 and header[18] == 2 and header[19] == 2


def _connect(path: Path, immutable: bool) -> sqlite3.Connection:
    uri = path.resolve().as_uri() + ("?immutable=1" if immutable else "?mode=ro")
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA query_only = ON")
    return conn


@contextmanager
def _snapshot(path: Path, immutable: bool) -> Iterator[sqlite3.Connection]:
    conn = _connect(path, immutable)
    try:
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("ROLLBACK")
    finally:
        conn.close()


def _tables(conn: sqlite3.Connection) -> dict[str, set[str]]:
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()]
    return {name: {r[1] for r in conn.execute(f'PRAGMA table_info("{name}")').fetchall()}
            for name in names}


def detect_db_format(tables: Mapping[str, set[str]], name: str | None = None) -> str | None:
    """The agent whose schema the tables are (``None``: none of them). Among the agents whose
    tables fit, one whose database is called ``name`` (the file's name) wins: a fork keeps
    its parent's schema under its own file name (Kilo's ``kilo.db``, OpenCode's tables);
    else the first listed."""
    fitting = [a for a in agents() if a.database is not None and a.database.claims(tables)]
    named = [a for a in fitting if name is not None and a.names_file(name)]
    found = named or fitting
    return found[0].name if found else None


def database_format(path: Path) -> str | None:
    """The agent whose database ``path`` is (``None``: none, or it cannot be read); opened
    as a read opens it, so nothing is created or written."""
    try:
        shared = _is_wal(path) and all(_companions(path))
        with _snapshot(path, not shared and _is_wal(path)) as conn:
            return detect_db_format(_tables(conn), path.name)
    except (sqlite3.Error, OSError):
        return None


#: The first four bytes of a zstd frame (RFC 8878).
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _unzstd(path: Path, value: Any) -> Any:
    """A value of a zstd column: decompressed when it is a zstd frame, else as it is."""
    if not isinstance(value, bytes) or not value.startswith(ZSTD_MAGIC):
        return value
    try:
        import zstandard
    except ImportError:
        raise ImportFileError(path, "holds zstd-compressed rows: install the zstd extra "
                                    "(pip install 'transcript-store[zstd]') to read them"
                              ) from None
    try:
        with zstandard.ZstdDecompressor().stream_reader(value) as reader:
            return reader.read()
    except zstandard.ZstdError as exc:
        raise ImportFileError(path, f"a zstd-compressed row cannot be read: {exc}") from exc


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes) else 8


def _read_rows(path: Path, immutable: bool, fmt: str | None, limit: int | None = None
               ) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    with _snapshot(path, immutable) as conn:
        tables = _tables(conn)
        found = detect_db_format(tables, path.name)
        layout = agent(found).database if found is not None else None
        if found is None or layout is None:
            raise ImportFileError(path, "a SQLite database, but not one of an agent this "
                                        f"store reads ({', '.join(sorted(DB_FORMATS))})")
        forced = agent(fmt).database if fmt is not None and fmt != found else None
        if forced is not None and forced.claims(tables):  # (a fork's file read as its parent's)
            found, layout = str(fmt), forced
        elif fmt is not None and fmt != found:
            raise ImportFileError(path, f"--format {fmt} does not fit it: it looks like "
                                        f"{found} (give --format {found}, or no --format)")
        rows: dict[str, list[dict[str, Any]]] = {}
        read = 0
        for table, order in layout.tables.items():
            if table not in tables and table in layout.optional:
                rows[table] = []
                continue
            if not all(c.strip().split()[0] in tables[table] | {"rowid"}
                       for c in order.split(",")):
                order = "rowid"
            where = f" WHERE {layout.where[table]}" if table in layout.where else ""
            packed = layout.zstd.get(table)
            found_rows: list[dict[str, Any]] = []
            rows[table] = found_rows
            for r in conn.execute(f'SELECT * FROM "{table}"{where} ORDER BY {order}'):
                row = dict(r)
                read += sum(_size(v) for v in row.values())
                if limit is not None and read > limit:
                    raise ImportFileError(path, (
                        f"holds more than {limit} bytes of {fmt or found} rows, over the "
                        "import limit: raise the limit (--max-file-mib, max_file_bytes=)"))
                if packed is not None and packed in row:
                    row[packed] = _unzstd(path, row[packed])
                found_rows.append(row)
    return found, rows


def read_agent_db(path: Path, format: str | None = None, *,
                  settle: float = DEFAULT_SETTLE_SECONDS,
                  max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
                  now: float | None = None) -> ParsedFile:
    """Read an agent's SQLite database whole into sessions (see the module docstring).

    ``format`` (one of :data:`DB_FORMATS`) must fit the database, else it is detected by its
    tables. The database is *settled* when neither it nor its ``-wal`` changed for
    ``settle`` seconds; until then a message the agent is still writing (an assistant turn
    without its end) is deferred, and read once finished. Raises :class:`ImportFileError`
    when the file cannot be read, is no agent's database, or the rows read hold more than
    ``max_file_bytes`` bytes.
    """
    if not is_sqlite_file(path):
        raise ImportFileError(path, f"not a SQLite database (format {format or 'detected'}), "
                                    "or not a regular file")
    if format is not None and format not in DB_FORMATS:
        raise ImportFileError(path, f"--format {format} does not fit it: it is a SQLite "
                                    f"database (formats {', '.join(sorted(DB_FORMATS))})")
    try:
        wal, shm = _companions(path)
        _, newest = database_signature(path)
        shared = _is_wal(path) and wal is not None and shm is not None
        fmt, rows = _read_rows(path, not shared and _is_wal(path), format, max_file_bytes)
        if not shared and _is_wal(path) and all(_companions(path)):
            # the agent opened it meanwhile
            fmt, rows = _read_rows(path, False, format, max_file_bytes)
    except sqlite3.Error as exc:
        raise ImportFileError(path, f"cannot read the database: {exc}") from exc
    except OSError as exc:
        raise ImportFileError(path, f"cannot read: {exc.strerror or exc}") from exc
    current = time.time() if now is None else now
    settled = settle <= 0 or current - newest >= settle
    collector = Collector(Source(path, "", settled), fmt)
    agent(fmt).database_reader()(rows, collector)
    return collector.result()
