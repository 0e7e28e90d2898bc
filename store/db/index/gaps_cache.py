"""What holds until the next commit, kept per database state (persistence; reads only): the
derived rows' key check, and that the search indexes have nothing to catch up.

:func:`store.db.index.index_check.index_gaps` anti-joins the key of every derived row (search
items, argument views) against the transcript before a search trusts them: its cost grows with
the store, so in a long-lived process (the library, the MCP server, the viewer) it was most of
every search's time, while its answer can only change when something is committed.
:func:`cached_gaps` keeps the answer per engine and per session asked, with the database's
state read *before* the check (a commit racing the check only makes the next search check
again):

* SQLite: the connection's ``PRAGMA data_version`` (it changes when any other connection, in
  this process or another, commits to the file), its ``total_changes`` (its own writes, which
  ``data_version`` does not count: an append commits on the driver connection, past the
  engine's events) and the number of commits made through this engine;
* PostgreSQL: ``pg_current_wal_insert_lsn()``, which moves with every write to the cluster
  (any database: a conservative test). Not on a standby, and not on Citus (writes to a
  worker's shards do not move the coordinator's WAL): there every search checks, as before.

Nothing is written: the state is kept in memory, the check is the same SQL. A tampering
process commits like any other writer, so it moves the state and the next search checks.

A long-lived process asks the same searches again (an agent over MCP, the viewer's pages):
:func:`database_state`, :func:`built` and :func:`keep_built` keep what a search built from the
database (its statement, the alias table it resolved names with, the warnings its key check
gave) per engine and per state, so that the same query at the same state runs the statement
it built before instead of building it again (``store.audit.search``).

A writable store brings its indexes up to date before each search
(``TranscriptStore.update_search_index``); with nothing to do, the statements that find it out
(the calls' and the messages' watermarks, the summaries' stamps) took 3.5 ms a search at 10^6
messages. :func:`idle_state` and :func:`remember_idle` keep the state at which a catch-up last
found nothing to do: while the state is the same, the next one has nothing to do either.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from sqlalchemy import event

from store.db.index.index_check import index_gaps
from store.db.index.reads import idle_now, note_idle
from store.db.schema.distribute import is_citus

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

__all__ = ["built", "cached_gaps", "database_state", "idle_state", "keep_built",
           "remember_idle"]

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
        self.idle: Any = None  # the state at which a catch-up last found nothing to do
        self.built: dict[Any, Any] = {}  # what searches built, by (what was asked, state)
        self.lock = threading.Lock()
        event.listen(engine, "commit", self._committed)

    def _committed(self, conn: Any) -> None:
        with self.lock:
            self.commits += 1
            self.answers.clear()
            self.built.clear()
            self.idle = None


_engines: WeakKeyDictionary[Any, _EngineGaps] = WeakKeyDictionary()
_engines_lock = threading.Lock()


def _state(conn: Connection, kept: _EngineGaps) -> Any:
    """The database's state as this connection sees it, or None when it cannot be told."""
    if conn.dialect.name == "sqlite":
        version = conn.exec_driver_sql("PRAGMA data_version").scalar()
        dbapi = conn.connection.dbapi_connection
        # the connection itself, held by the key: an id could be a later connection's
        return (dbapi, version, getattr(dbapi, "total_changes", None), kept.commits)
    known = idle_now(conn.engine)  # (this read operation found it a moment ago)
    return known if known is not None else conn.exec_driver_sql(_LSN).scalar()


def _kept(conn: Connection) -> _EngineGaps:
    engine = conn.engine
    with _engines_lock:
        kept = _engines.get(engine)
        if kept is None:
            cacheable = conn.dialect.name == "sqlite" or (
                conn.dialect.name == "postgresql" and not is_citus(conn))
            kept = _engines[engine] = _EngineGaps(engine, cacheable)
    return kept


def idle_state(conn: Connection) -> tuple[bool, Any]:
    """(whether the database is at the state where a catch-up last found nothing to do, the
    state now: ``None`` where it cannot be told, Citus or a standby)."""
    kept = _kept(conn)
    if not kept.cacheable:
        return False, None
    state = _state(conn, kept)
    with kept.lock:
        unchanged = state is not None and kept.idle == state
    if unchanged and conn.dialect.name == "postgresql":
        note_idle(conn.engine, state)
    return unchanged, state


def remember_idle(conn: Connection, state: Any) -> None:
    """A catch-up that began at ``state`` (:func:`idle_state`) found nothing to do."""
    if state is None:
        return
    kept = _kept(conn)
    with kept.lock:
        kept.idle = state


def cached_gaps(conn: Connection, session_id: str | None) -> dict[str, str]:
    """:func:`index_gaps` of ``session_id`` (or of every session), checked again only when
    the database may have changed since this engine last checked it."""
    kept = _kept(conn)
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


def database_state(conn: Connection) -> Any:
    """The database's state as ``conn`` sees it (what :func:`built` is kept by), or ``None``
    where it cannot be told (Citus, a standby): then nothing is kept."""
    kept = _kept(conn)
    return _state(conn, kept) if kept.cacheable else None


def built(conn: Connection, key: Any) -> Any:
    """What :func:`keep_built` kept under ``key`` (which holds a :func:`database_state`), or
    ``None``."""
    kept = _kept(conn)
    with kept.lock:
        return kept.built.get(key)


def keep_built(conn: Connection, key: Any, value: Any) -> None:
    """Keep ``value`` (built from the database at the state ``key`` holds) until a commit
    through this engine (a commit elsewhere moves the state: the key is not asked again)."""
    kept = _kept(conn)
    with kept.lock:
        if len(kept.built) >= _KEPT:
            kept.built.clear()
        kept.built[key] = value
