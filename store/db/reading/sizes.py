"""Where a database's size goes: bytes per table and per index (persistence; ``db stats``).

SQLite: the ``dbstat`` virtual table (every b-tree's pages, FTS5 shadow tables included) when
the library is compiled with it; otherwise only the whole file is known (``PRAGMA
page_count`` x ``page_size``), reported as one object of kind ``file``. The free pages
(``PRAGMA freelist_count``) are reported as kind ``free``, and the write-ahead log beside the
file (``<file>-wal``: pages not folded into the file yet, or the log's high-water mark, which
SQLite reuses rather than shrinks; ``db compact`` truncates it) as kind ``wal``. PostgreSQL:
``pg_table_size`` per table of the schema (its heap, TOAST and maps), ``pg_relation_size``
per index. Read-only on both: nothing is created or changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text

__all__ = ["ObjectSize", "object_sizes", "wal_bytes"]


@dataclass(frozen=True, slots=True)
class ObjectSize:
    """One table, index, the free pages or (without ``dbstat``) the whole file."""

    name: str
    #: ``table`` | ``index`` | ``free`` | ``file`` | ``wal``
    kind: str
    #: the table an index (or an FTS5 shadow table) belongs to; a table's own name
    table: str | None
    bytes: int


def object_sizes(conn: Connection) -> list[ObjectSize]:
    """Every table and index of the store's database with its size, largest first."""
    if conn.dialect.name == "sqlite":
        found = _sqlite(conn)
    else:
        found = _postgresql(conn)
    return sorted(found, key=lambda s: (-s.bytes, s.name))


def _sqlite(conn: Connection) -> list[ObjectSize]:
    page = int(conn.exec_driver_sql("PRAGMA page_size").scalar_one())
    free = int(conn.exec_driver_sql("PRAGMA freelist_count").scalar_one()) * page
    objects = {name: (kind, table) for kind, name, table in conn.exec_driver_sql(
        "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')")}
    try:
        rows: list[Any] = list(conn.exec_driver_sql(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"))
    except Exception as exc:  # no dbstat in this SQLite build
        if "dbstat" not in str(exc):
            raise
        pages = int(conn.exec_driver_sql("PRAGMA page_count").scalar_one())
        return [ObjectSize("(database file)", "file", None, pages * page - free),
                ObjectSize("(free pages)", "free", None, free), _wal(conn)]
    sizes = []
    for name, size in rows:
        kind, table = objects.get(name, ("table" if name == "sqlite_schema" else "index",
                                         _owner(name, objects)))
        sizes.append(ObjectSize(name, kind, _fts_owner(name, objects) or table, int(size)))
    sizes.append(ObjectSize("(free pages)", "free", None, free))
    sizes.append(_wal(conn))
    return sizes


def _wal(conn: Connection) -> ObjectSize:
    return ObjectSize("(write-ahead log)", "wal", None, wal_bytes(conn))


def wal_bytes(conn: Connection) -> int:
    """SQLite: the write-ahead log of the main file as it is on disk (0 without one: the
    last connection to close removes it)."""
    for _, name, path in conn.exec_driver_sql("PRAGMA database_list"):
        if name == "main" and path:
            try:
                return os.stat(f"{path}-wal").st_size
            except OSError:
                return 0
    return 0


def _owner(name: str, objects: dict[str, tuple[str, str]]) -> str | None:
    """The table of an automatic index (``sqlite_autoindex_<table>_<n>``)."""
    if name.startswith("sqlite_autoindex_"):
        table = name.removeprefix("sqlite_autoindex_").rsplit("_", 1)[0]
        return table if table in objects else None
    return None


def _fts_owner(name: str, objects: dict[str, tuple[str, str]]) -> str | None:
    """The FTS5 table a shadow table (``<fts>_data``, ``_idx``, ``_docsize``, ...) serves."""
    for suffix in ("_data", "_idx", "_docsize", "_config", "_content"):
        if name.endswith(suffix) and name.removesuffix(suffix) in objects:
            return name.removesuffix(suffix)
    return None


_PG = text(
    "SELECT c.relname, c.relkind, t.relname, "
    "CASE WHEN c.relkind = 'i' THEN pg_relation_size(c.oid) ELSE pg_table_size(c.oid) END "
    "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "LEFT JOIN pg_index i ON i.indexrelid = c.oid "
    "LEFT JOIN pg_class t ON t.oid = COALESCE(i.indrelid, c.oid) "
    "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'm', 'i')")


def _postgresql(conn: Connection) -> list[ObjectSize]:
    return [ObjectSize(name, "index" if kind == "i" else "table", table, int(size))
            for name, kind, table, size in conn.execute(_PG)]
