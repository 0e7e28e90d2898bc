"""Where a database's size goes: bytes per table and per index (persistence; ``db stats``).

SQLite: the ``dbstat`` virtual table (every b-tree's pages, FTS5 shadow tables included) when
the library is compiled with it; otherwise only the whole file is known (``PRAGMA
page_count`` x ``page_size``), reported as one object of kind ``file``. The free pages
(``PRAGMA freelist_count``) are reported as kind ``free``, and the write-ahead log beside the
file (``<file>-wal``: pages not folded into the file yet, or the log's high-water mark, which
SQLite reuses rather than shrinks; ``db compact`` truncates it) as kind ``wal``. PostgreSQL:
``pg_table_size`` per table of the schema (its heap, TOAST and maps), ``pg_relation_size``
per index; on Citus, a distributed or reference table's shards on the workers (its
coordinator's table is an empty shell). Read-only on both: nothing is created or changed.
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
        # (its aggregated mode: a b-tree's pages summed by dbstat, not a row per page
        # summed by SQL: at 10^6 messages 3.1 -> 1.4 s; the same sums)
        rows: list[Any] = list(conn.exec_driver_sql(
            "SELECT name, pgsize FROM dbstat WHERE aggregate = TRUE"))
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
    found = [ObjectSize(name, "index" if kind == "i" else "table", table, int(size))
             for name, kind, table, size in conn.execute(_PG)]
    from store.db.schema.citusprobe import is_citus

    return _citus(conn, found) if is_citus(conn) else found


#: Citus: a distributed or reference table's rows live in its shards on the workers (the
#: coordinator's table is an empty shell): its size and each of its indexes' are the sums
#: over its placements (every replica of a reference table counts: bytes on disk), asked of
#: each table's placements in one command (a shard's index is ``<index>_<shard id>``).
_CITUS_TABLES = text("SELECT logicalrelid::regclass::text FROM pg_dist_partition")
_PLACEMENT = ("SELECT json_build_array(pg_table_size('%1$s'), (SELECT coalesce(json_agg("
              "json_build_array(c.relname, pg_relation_size(i.indexrelid))), '[]') FROM "
              "pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
              "WHERE i.indrelid = '%1$s'::regclass))")


def _citus(conn: Connection, found: list[ObjectSize]) -> list[ObjectSize]:
    import orjson

    sizes: dict[str, int] = {}
    tables = {str(name).strip('"') for (name,) in conn.execute(_CITUS_TABLES)}
    for table in tables:
        for (answer,) in conn.execute(text(
                "SELECT result FROM run_command_on_placements(CAST(:t AS regclass), :c) "
                "WHERE success"), {"t": table, "c": _PLACEMENT}):
            size, shard_indexes = orjson.loads(answer)
            sizes[table] = sizes.get(table, 0) + int(size)
            for shard_index, index_size in shard_indexes:
                name = str(shard_index).rpartition("_")[0]  # (<index>_<shard id>)
                sizes[name] = sizes.get(name, 0) + int(index_size)
    out = []
    for o in found:
        if o.table in tables and o.name in sizes:
            o = ObjectSize(o.name, o.kind, o.table, sizes[o.name])
        out.append(o)
    return out
