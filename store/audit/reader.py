"""``ReadOnlyStore``: a store opened for reading in a few milliseconds (persistence; no
SQLAlchemy on its common reads).

Opening :class:`~store.TranscriptStore` read-only imports SQLAlchemy and the whole store, a
third of a second before the first query, however small the question. An auditor's script,
a status line or a hook asks one or two questions: :meth:`ReadOnlyStore.open` checks the
SQLite file (it exists, at this library's head revision) on the stdlib driver and answers the
common reads there, with the SQL and the code the command line's stdlib readers share with
the store (:mod:`store.db.reading.lite`, :mod:`store.db.reading.lite_show`,
:mod:`store.audit.lite_usage`; tests compare their answers with the store's):
``list_sessions``, ``count_sessions``, ``get_session``, ``resolve_session_id``, ``load``,
``session_sources``, ``session_ancestors``, ``session_tree`` and ``tool_usage``.

On PostgreSQL the same reads run on psycopg alone (:mod:`store.db.reading.pgread`: one
read-only connection kept for the store's life, each read one snapshot in it, a read that
finds it dropped by the server run again on a new one; ``tool_usage`` from the per-session
summaries, the rest of it the store's).

Everything else, and every read off that path (a ``load`` with ``strict`` or a time window, a
prefix that needs the store's wording, a lock held too long, a server that does not
answer), goes to a ``TranscriptStore`` opened read-only on first need
(:attr:`ReadOnlyStore.store`; any other attribute is the store's own). Opening a URL that is
neither a plain SQLite file nor a PostgreSQL database at head opens that store at once, so
every error is the one ``TranscriptStore.open(read_only=True)`` raises. Like every read,
nothing is created, migrated or written: on SQLite each read opens its own read-only
connection (as the store's read-only engine does), in one snapshot.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from store.core.errors import SessionNotFound, UsageError
from store.core.lineage import MAX_TREE_DEPTH
from store.db.reading.pgread import is_pg
from store.db.schema.revisions import default_url, shipped_head
from store.db.schema.sqlitefile import connect_read_only, sqlite_file

if TYPE_CHECKING:
    from store.audit.usage_fold import ToolUsage
    from store.core.transcript import SessionInfo, SessionSource, SessionTree, Transcript
    from store.db.reading.pgread import PgReader
    from store.db.store import TranscriptStore

__all__ = ["ReadOnlyStore"]

_T = TypeVar("_T")


class _Missing:
    """What a stdlib read gives when it cannot answer (the store does)."""


_MISS = _Missing()


class ReadOnlyStore:
    """A read-only store: the common reads on the stdlib driver, the rest through a
    ``TranscriptStore`` opened read-only when first needed (see the module docstring).
    A context manager; safe to share between threads."""

    def __init__(self, url: str, path: Path | None,
                 store: TranscriptStore | None = None, pg: PgReader | None = None) -> None:
        self._url = url
        self._path = path
        self._store = store
        self._lock = threading.Lock()
        #: PostgreSQL's reader (its connection, one read at a time); ``_pg_on``: this store
        #: reads on psycopg (the reader is opened again after an error closed it).
        self._pg = pg
        self._pg_on = pg is not None
        self._pg_lock = threading.Lock()

    @classmethod
    def open(cls, url: str | None = None) -> Self:
        """The store at ``url`` (default: ``TRANSCRIPT_STORE_URL``, else the user's SQLite
        file), for reading. A plain SQLite file at this library's head is opened on the stdlib
        driver (a few milliseconds); anything else is ``TranscriptStore.open(url,
        read_only=True)``, which raises what it raises (no database, an older schema ...)."""
        from store.db.reading.lite import open_reader

        given = url or default_url()
        checked = open_reader(given, shipped_head)
        if checked is None:
            from store.db.store import TranscriptStore

            return cls(given, None, TranscriptStore.open(given, read_only=True))
        if is_pg(checked):
            return cls(given, None, pg=checked)  # type: ignore[arg-type]
        checked.close()
        return cls(given, sqlite_file(given))

    # -- the store behind it ------------------------------------------------------------------

    @property
    def store(self) -> TranscriptStore:
        """The ``TranscriptStore`` (read-only) behind this one, opened on first use: for the
        reads answered only there, and for the functions that take a store
        (``store.search_calls(reader.store, ...)``)."""
        with self._lock:
            if self._store is None:
                from store.db.store import TranscriptStore

                self._store = TranscriptStore.open(self._url, read_only=True)
            return self._store

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.store, name)

    @property
    def url(self) -> str:
        """The URL this store was opened with (a password hidden, as the store shows it)."""
        return self._store.url if self._store is not None else self._url

    def __repr__(self) -> str:
        return f"ReadOnlyStore({self.url!r})"

    @property
    def read_only(self) -> bool:
        return True

    def close(self) -> None:
        """Close the store behind it, if it was opened (the stdlib reads hold nothing; as
        with ``TranscriptStore``, a read after ``close`` opens what it needs again)."""
        with self._pg_lock:
            if self._pg is not None:
                self._pg.close()
                self._pg = None
        with self._lock:
            if self._store is not None:
                self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def _lite(self, work: Callable[[Any], _T | _Missing],
              fallback: Callable[[], _T], *, begin: bool = True) -> _T:
        """``work`` on a read-only stdlib connection in one snapshot; ``fallback()`` (the
        store) when it gives :data:`_MISS` or cannot run (not on the stdlib path, a driver
        error: the store answers, or words it)."""
        found: _T | _Missing = _MISS
        if self._pg_on:
            found = self._on_pg(work, begin)
        elif self._path is not None:
            try:
                conn = connect_read_only(self._path)
            except sqlite3.Error:
                return fallback()
            try:
                if begin:
                    conn.execute("BEGIN")
                found = work(conn)
            except sqlite3.Error:
                found = _MISS
            finally:
                conn.close()
        return fallback() if isinstance(found, _Missing) else found

    def _on_pg(self, work: Callable[[Any], _T | _Missing], begin: bool) -> _T | _Missing:
        """``work`` in one read-only snapshot of the kept psycopg connection; on a
        connection the server dropped (a restart, an idle timeout), once more on a new one;
        :data:`_MISS` on any other driver error (the store answers, or words it)."""
        with self._pg_lock:
            for attempt in (1, 2):
                reader = self._pg_reader()
                if reader is None:
                    return _MISS
                try:
                    if begin:
                        reader.execute("BEGIN")
                    return work(reader)
                except sqlite3.Error:  # (PgReadError)
                    if attempt == 2 or not reader.connection.broken:
                        return _MISS
                finally:
                    self._pg_end(reader)
            return _MISS  # pragma: no cover - (the loop returns)

    def _pg_reader(self) -> PgReader | None:
        from store.db.reading.pgread import open_pg

        if self._pg is None:
            self._pg = open_pg(self._url, shipped_head)
        return self._pg

    def _pg_end(self, reader: PgReader) -> None:
        """End the read's transaction (a store error, SessionNotFound, leaves the connection
        as it found it); a connection that cannot is closed, and the next read opens one."""
        try:
            reader.end()
        except sqlite3.Error:
            reader.close()
            self._pg = None

    # -- sessions -----------------------------------------------------------------------------

    def list_sessions(self, **filters: Any) -> list[SessionInfo]:
        """``TranscriptStore.list_sessions`` (the same filters, sort, limit and offset)."""
        from store.db.reading.lite import SessionListing

        return self._lite(lambda conn: SessionListing(conn).list_sessions(**filters),
                          lambda: self.store.list_sessions(**filters), begin=False)

    def count_sessions(self, **filters: Any) -> int:
        """``TranscriptStore.count_sessions``."""
        from store.db.reading.lite import SessionListing

        return self._lite(lambda conn: SessionListing(conn).count_sessions(**filters),
                          lambda: self.store.count_sessions(**filters))

    def get_session(self, session_id: str) -> SessionInfo:
        """``TranscriptStore.get_session``: a session's metadata (``SessionNotFound``)."""
        from store.db.reading.lite_show import LiteSession

        if "\x00" in session_id:
            raise SessionNotFound(session_id)
        return self._lite(lambda conn: LiteSession(conn).info(session_id),
                          lambda: self.store.get_session(session_id))

    def resolve_session_id(self, prefix: str) -> str:
        """``TranscriptStore.resolve_session_id``: the one session ``prefix`` names."""
        from store.db.reading.lite import lite_session_id

        def work(conn: sqlite3.Connection) -> str | _Missing:
            found = lite_session_id(conn, prefix)
            if found is None:
                return _MISS  # (none, several: the store words it)
            return found

        return self._lite(work, lambda: self.store.resolve_session_id(prefix))

    def load(self, session_id: str, *, strict: bool = False, last_turns: int | None = None,
             since_position: int | None = None, since: datetime | None = None) -> Transcript:
        """``TranscriptStore.load``: the session's transcript in one snapshot (the whole
        session, or its last turns; ``strict`` and the windows by position or time are the
        store's)."""
        if strict or since_position is not None or since is not None or "\x00" in session_id:
            return self.store.load(session_id, strict=strict, last_turns=last_turns,
                                   since_position=since_position, since=since)
        from store.db.reading.lite_show import LiteSession

        return self._lite(lambda conn: LiteSession(conn).load(session_id,
                                                              last_turns=last_turns),
                          lambda: self.store.load(session_id, last_turns=last_turns))

    def session_sources(self, session_id: str) -> list[SessionSource]:
        """``TranscriptStore.session_sources``: the files the session was read from."""
        from store.db.reading.lite_show import LiteSession

        def work(conn: sqlite3.Connection) -> list[SessionSource] | _Missing:
            if conn.execute("SELECT 1 FROM sessions WHERE session_id = ?",
                            (session_id,)).fetchone() is None:
                return _MISS  # (the store says what is not found)
            return LiteSession(conn).sources(session_id)

        return self._lite(work, lambda: self.store.session_sources(session_id))

    def session_ancestors(self, session_id: str) -> list[SessionInfo]:
        """``TranscriptStore.session_ancestors``: its parent first, up to the root."""
        from store.db.reading.lite_show import LiteSession

        return self._lite(lambda conn: LiteSession(conn).ancestors(session_id),
                          lambda: self.store.session_ancestors(session_id))

    def session_tree(self, session_id: str, *, max_depth: int = MAX_TREE_DEPTH) -> SessionTree:
        """``TranscriptStore.session_tree``: the session and its descendants."""
        from store.db.reading.lite_show import LiteSession

        if max_depth < 0:
            raise UsageError("max_depth must not be negative")
        return self._lite(lambda conn: LiteSession(conn).tree(session_id, max_depth),
                          lambda: self.store.session_tree(session_id, max_depth=max_depth))

    # -- tools --------------------------------------------------------------------------------

    @staticmethod
    def _usage_on(conn: Any, session_id: str | None, since: datetime | None,
                  until: datetime | None, agent: str | None, cwd: str | None
                  ) -> list[ToolUsage] | _Missing:
        from store.audit.lite_usage import usage_on

        if session_id is not None:
            return _MISS  # (one session: the summaries do not answer it on PostgreSQL)
        found = usage_on(conn, None, since=since, until=until, agent=agent, cwd=cwd)
        return _MISS if found is None else found

    def tool_usage(self, *, since: datetime | None = None, until: datetime | None = None,
                   session_id: str | None = None, agent: str | None = None,
                   cwd: str | None = None, limit: int | None = 100, offset: int = 0,
                   with_children: bool = False) -> list[ToolUsage]:
        """``store.tool_usage(store, ...)``: usage per current tool name, most called first."""
        from store.audit.lite_usage import lite_tool_usage

        if (limit is not None and limit < 0) or offset < 0:  # (as store.audit.sql.check_page)
            raise UsageError("limit and offset must not be negative")
        every = None
        if self._pg_on and not with_children:
            every = self._lite(lambda conn: self._usage_on(conn, session_id, since, until,
                                                           agent, cwd), lambda: None)
        elif self._path is not None and not with_children:
            every = lite_tool_usage(self._url, since=since, until=until, session=session_id,
                                    agent=agent, cwd=cwd)
        if every is None:
            from store.audit.usage import tool_usage

            return tool_usage(self.store, since=since, until=until, session_id=session_id,
                              agent=agent, cwd=cwd, limit=limit, offset=offset,
                              with_children=with_children)
        return every[offset:] if limit is None else every[offset:offset + limit]

