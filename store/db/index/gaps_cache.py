"""The derived rows' key check, once per database state (persistence; reads only).

:func:`store.db.index.index_check.index_gaps` anti-joins the key of every derived row (search
items, argument views) against the transcript before a search trusts them: its cost grows with
the store, so in a long-lived process (the library, the MCP server, the viewer) it was most of
every search's time, while its answer can only change when something is committed.
:func:`cached_gaps` keeps the answer per engine and per session asked, with the database's
state read *before* the check (a commit racing the check only makes the next search check
again):

* SQLite: the connection's ``PRAGMA data_version`` (it changes when any other connection, in
  this process or another, commits to the file) and the number of commits made through this
  engine (which ``data_version`` does not count for the connection that made them);
* PostgreSQL: ``pg_current_wal_insert_lsn()``, which moves with every write to the cluster
  (any database: a conservative test). Not on a standby, and not on Citus (writes to a
  worker's shards do not move the coordinator's WAL): there every search checks, as before.

Nothing is written: the state is kept in memory, the check is the same SQL. A tampering
process commits like any other writer, so it moves the state and the next search checks.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from sqlalchemy import event

from store.db.index.index_check import index_gaps
from store.db.schema.distribute import is_citus

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

__all__ = ["cached_gaps"]

#: Sessions (or the whole store, ``None``) whose answer an engine remembers.
_KEPT = 64
_LSN = ("SELECT CASE WHEN pg_is_in_recovery() THEN NULL "
        "ELSE pg_current_wal_insert_lsn()::text END")


class _EngineGaps:
    """One engine's remembered answers and its commit count."""

    def __init__(self, engine: Engine, cacheable: bool) -> None:
        self.commits = 0
        self.cacheable = cacheable
        self.answers: dict[tuple[str | None, Any], dict[str, str]] = {}
        self.lock = threading.Lock()
        event.listen(engine, "commit", self._committed)

    def _committed(self, conn: Any) -> None:
        with self.lock:
            self.commits += 1
            self.answers.clear()


_engines: WeakKeyDictionary[Any, _EngineGaps] = WeakKeyDictionary()
_engines_lock = threading.Lock()


def _state(conn: Connection, kept: _EngineGaps) -> Any:
    """The database's state as this connection sees it, or None when it cannot be told."""
    if conn.dialect.name == "sqlite":
        version = conn.exec_driver_sql("PRAGMA data_version").scalar()
        # the connection itself, held by the key: an id could be a later connection's
        return (conn.connection.dbapi_connection, version, kept.commits)
    return conn.exec_driver_sql(_LSN).scalar()


def cached_gaps(conn: Connection, session_id: str | None) -> dict[str, str]:
    """:func:`index_gaps` of ``session_id`` (or of every session), checked again only when
    the database may have changed since this engine last checked it."""
    engine = conn.engine
    with _engines_lock:
        kept = _engines.get(engine)
        if kept is None:
            cacheable = conn.dialect.name == "sqlite" or (
                conn.dialect.name == "postgresql" and not is_citus(conn))
            kept = _engines[engine] = _EngineGaps(engine, cacheable)
    if not kept.cacheable:
        return index_gaps(conn, session_id)
    state = _state(conn, kept)
    if state is None:
        return index_gaps(conn, session_id)
    key = (session_id, state)
    with kept.lock:
        found = kept.answers.get(key)
    if found is not None:
        return dict(found)
    gaps = index_gaps(conn, session_id)
    with kept.lock:
        if len(kept.answers) >= _KEPT:
            kept.answers.clear()
        kept.answers[key] = dict(gaps)
    return gaps
