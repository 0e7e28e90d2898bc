"""Whether a database has Citus (persistence; no SQLAlchemy): asked with driver SQL on a
SQLAlchemy ``Connection`` or a ``store.db.reading.driver.DriverConnection`` alike, so that
the stdlib readers (the call search's first results on PostgreSQL) ask it without loading the
distribution code (:mod:`store.db.schema.distribute`, which re-exports both)."""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["citus_version", "is_citus"]


def citus_version(conn: Any) -> str | None:
    """The installed Citus extension's version in this database, else ``None``."""
    if conn.dialect.name != "postgresql":
        return None
    found = conn.exec_driver_sql(
        "SELECT extversion FROM pg_extension WHERE extname = 'citus'").scalar()
    return None if found is None else str(found)


_CITUS: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def is_citus(conn: Any) -> bool:
    """Whether ``conn``'s database has Citus (asked once per engine)."""
    known = _CITUS.get(conn.engine)
    if known is None:
        known = _CITUS[conn.engine] = citus_version(conn) is not None
    return known
