"""The session listing of an SQLite file on the stdlib driver (or of a PostgreSQL database on
psycopg alone: :mod:`store.db.reading.pgread`), for the command line's start-up (persistence;
no SQLAlchemy).

``transcript-store sessions list`` is the commonest read command, and importing SQLAlchemy
alone takes about 0.2 s, more than the whole listing of a small database.
:func:`list_sessions` (public: ``store.list_sessions``) answers it through
:func:`open_listing`, with ``sqlite3`` and SQL equal to ``TranscriptStore.list_sessions`` /
``count_sessions`` (the statements SQLAlchemy compiles for them, written out; a test compares
the two on many filter combinations, on both backends). It only takes the happy path: a plain
SQLite file that exists, or a PostgreSQL database libpq connects to, at this library's head
revision. Anything else (another URL form, a missing or older database, a server that does
not answer) goes through the store, which words every error. Like every read it opens the
database read-only and writes nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from store.core.arguments import dumps_json, loads_json
from store.core.lineage import session_link
from store.core.times import as_utc
from store.db.reading.pgread import is_pg
from store.db.schema.sqlitefile import (  # (open_lite, sqlite_file: re-exported here)
    cwd_pattern,
    escape_like,
    open_lite,
    read_time,
    sqlite_file,
    stored_time,
)

if TYPE_CHECKING:  # (made per row: the module loads when a listing is made)
    from store.core.sessioninfo import SessionInfo
    from store.db.reading.pgread import PgReader

_T = TypeVar("_T")

__all__ = ["SESSION_COLUMNS", "SessionListing", "SessionPage", "call_counts",
           "lite_session_id", "list_sessions", "open_lite", "open_listing", "open_reader",
           "read_lite",
           "session_info_of", "sqlite_file"]

#: The sort keys of ``store.db.sessions._order``, as SQLAlchemy compiles them.
_ORDER = {
    "active": "coalesce(sessions.last_activity_at, sessions.created_at)",
    "started": "coalesce(sessions.started_at, sessions.created_at)",
    "messages": "sessions.next_position",
    "calls": "(SELECT count(*) FROM tool_calls WHERE tool_calls.session_id = "
             "sessions.session_id)",
    "updated": "coalesce(sessions.last_activity_at, sessions.created_at)",  # (old name)
}

SESSION_COLUMNS = ("session_id, title, provider, model, cwd, agent, tags_json, metadata_json, "
            "created_at, updated_at, started_at, last_activity_at, next_position, "
            "parent_session_id, lineage, parent_call_id")


#: A stdlib reader's connection: an SQLite file's, or PostgreSQL's on psycopg
#: (:mod:`store.db.reading.pgread`, which runs the same SQL).
Reader = Any


def open_reader(url: str, head: Callable[[], str | None]
                ) -> sqlite3.Connection | PgReader | None:
    """A read-only connection for the stdlib readers to the database ``url`` names when it is
    at revision ``head()``: an SQLite file (:func:`open_lite`) or a PostgreSQL database
    (:func:`store.db.reading.pgread.open_pg`); ``None`` for anything else (the caller opens
    the store, which words every error)."""
    if url.startswith("postgresql"):
        from store.db.reading.pgread import is_pg_url, open_pg

        if is_pg_url(url):
            return open_pg(url, head)
    return open_lite(url, head)


class SessionListing:
    """``list_sessions`` and ``count_sessions`` of one SQLite file or PostgreSQL database,
    read-only."""

    def __init__(self, connection: Reader) -> None:
        self._conn = connection

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SessionListing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def list_sessions(self, *, provider: str | None = None, model: str | None = None,
                      tag: str | None = None, title_contains: str | None = None,
                      since: datetime | None = None, until: datetime | None = None,
                      limit: int | None = 50, offset: int = 0, agent: str | None = None,
                      cwd: str | None = None, sort: str = "active", parent: str | None = None,
                      roots: bool = False) -> list[SessionInfo]:
        pg = is_pg(self._conn)
        where, params = _where(provider, model, tag, title_contains, since, until, agent, cwd,
                               parent, roots, pg)
        if sort not in _ORDER:
            from store.core.errors import UsageError

            raise UsageError(f"unknown sort {sort!r}: use {', '.join(_ORDER)}")
        sql = (f"SELECT {SESSION_COLUMNS} FROM sessions{where} "
               f"ORDER BY {_ORDER[sort]} DESC, session_id")
        sql += " LIMIT ? OFFSET ?"
        params += [(None if pg else -1) if limit is None else limit, offset]
        self._conn.execute("BEGIN")
        try:
            rows = self._conn.execute(sql, params).fetchall()
            calls = call_counts(self._conn, [row[0] for row in rows])
        finally:
            self._conn.execute("COMMIT")
        return [session_info_of(row, calls.get(row[0], 0)) for row in rows]

    def count_sessions(self, *, provider: str | None = None, model: str | None = None,
                       tag: str | None = None, title_contains: str | None = None,
                       since: datetime | None = None, until: datetime | None = None,
                       agent: str | None = None, cwd: str | None = None,
                       parent: str | None = None, roots: bool = False) -> int:
        where, params = _where(provider, model, tag, title_contains, since, until, agent, cwd,
                               parent, roots, is_pg(self._conn))
        return int(self._conn.execute(f"SELECT count(*) FROM sessions{where}",
                                      params).fetchone()[0])


def _where(provider: str | None, model: str | None, tag: str | None,
           title_contains: str | None, since: datetime | None, until: datetime | None,
           agent: str | None, cwd: str | None = None, parent: str | None = None,
           roots: bool = False, pg: bool = False) -> tuple[str, list[Any]]:
    """The filters of ``SessionsMixin._sessions_query``, as SQLAlchemy compiles them (``pg``:
    for PostgreSQL, whose times are compared as times, not as their stored text)."""
    stamp: Callable[[datetime], Any] = as_utc if pg else stored_time
    terms: list[str] = []
    params: list[Any] = []
    if parent is not None:
        terms.append("parent_session_id = ?")
        params.append(parent)
    if roots:
        terms.append("parent_session_id IS NULL")
    for column, value in (("agent", agent), ("provider", provider), ("model", model)):
        if value is not None:
            terms.append(f"{column} = ?")
            params.append(value)
    if cwd is not None:
        folder, below = cwd_pattern(cwd)
        terms.append("(cwd = ? OR cwd LIKE ? ESCAPE '\\')")
        params += [folder, below]
    if title_contains is not None:
        terms.append("lower(title) LIKE lower(?) ESCAPE '\\'")
        params.append("%" + escape_like(title_contains) + "%")
    if tag is not None:
        terms.append("tags_json LIKE ? ESCAPE '\\'")
        params.append("%" + escape_like(dumps_json(tag)) + "%")
    # The session's own activity meets the range (revision 0016).
    if since is not None:
        terms.append("coalesce(last_activity_at, created_at) >= ?")
        params.append(stamp(since))
    if until is not None:
        terms.append("coalesce(started_at, created_at) < ?")
        params.append(stamp(until))
    return (" WHERE " + " AND ".join(terms) if terms else ""), params


def session_info_of(row: Any, calls: int | None = None) -> SessionInfo:
    """A session's info from its row (:data:`SESSION_COLUMNS`) and its number of calls
    (``None``: not counted, as the store's own session info leaves it)."""
    from store.core.sessioninfo import SessionInfo

    (sid, title, provider, model, cwd, agent, tags, meta, created, updated, started, ended,
     next_position, parent_id, lineage, parent_call) = row
    return SessionInfo(sid, title, provider, model, cwd, tuple(loads_json(tags)),
                       read_time(created), read_time(updated), next_position, loads_json(meta),
                       agent, None if started is None else read_time(started),
                       None if ended is None else read_time(ended), calls,
                       session_link({"parent_session_id": parent_id, "lineage": lineage,
                                     "parent_call_id": parent_call}))


def call_counts(conn: Reader, ids: list[str]) -> dict[str, int]:
    """Each of these sessions' number of calls (sessions without any left out)."""
    counts: dict[str, int] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        counts.update((str(sid), int(n)) for sid, n in conn.execute(
            "SELECT session_id, count(*) FROM tool_calls "
            f"WHERE session_id IN ({', '.join('?' * len(chunk))}) GROUP BY session_id", chunk))
    return counts


def lite_session_id(conn: Reader, prefix: str) -> str | None:
    """The session ``prefix`` names when that is plain: its own id, or the one id it is a
    prefix of; ``None`` otherwise (none, several: the store resolves and words it, as
    ``TranscriptStore.resolve_session_id``)."""
    if not prefix or "\x00" in prefix:
        return None
    if conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (prefix,)).fetchone():
        return prefix
    found = conn.execute(
        "SELECT session_id FROM sessions WHERE session_id LIKE ? ESCAPE '\\' "
        "AND substr(session_id, 1, ?) = ? ORDER BY session_id LIMIT 2",
        (escape_like(prefix) + "%", len(prefix), prefix)).fetchall()
    return str(found[0][0]) if len(found) == 1 else None


def open_listing(url: str, head: Callable[[], str | None]) -> SessionListing | None:
    """A listing of the SQLite file or PostgreSQL database ``url`` names when it is at
    revision ``head()``, opened read-only; ``None`` for anything else (the caller opens the
    store instead)."""
    conn = open_reader(url, head)
    return None if conn is None else SessionListing(conn)


@dataclass(frozen=True, slots=True)
class SessionPage:
    """A page of sessions and how many match in all (for "showing N of M")."""

    sessions: tuple[SessionInfo, ...]
    total: int


def list_sessions(url: str | None = None, *, provider: str | None = None,
                  model: str | None = None, tag: str | None = None,
                  title_contains: str | None = None, since: datetime | None = None,
                  until: datetime | None = None, agent: str | None = None,
                  cwd: str | None = None, sort: str = "active",
                  limit: int | None = 50, offset: int = 0, parent: str | None = None,
                  roots: bool = False) -> SessionPage:
    """Sessions of the database at ``url`` (default: ``TRANSCRIPT_STORE_URL``, else the
    user's SQLite file), by their own last activity, newest first (``sort``: see
    ``store.db.sessions.SESSION_SORTS``), as ``TranscriptStore.list_sessions``
    gives them, opened read-only, with the total that match. An SQLite file or a PostgreSQL
    database at head is read on its driver alone (no SQLAlchemy import: the command line's
    start-up); anything else through :class:`~store.TranscriptStore`, which also raises every
    error."""
    from store.core.errors import UsageError
    from store.db.schema.revisions import default_url, shipped_head

    if (limit is not None and limit < 0) or offset < 0:
        raise UsageError("limit and offset must not be negative")
    filters: dict[str, Any] = {"provider": provider, "model": model, "tag": tag,
                               "title_contains": title_contains, "since": since,
                               "until": until, "agent": agent, "cwd": cwd,
                               "parent": parent, "roots": roots}
    listing: Any = open_listing(url or default_url(), shipped_head)
    if listing is not None:
        try:
            with listing:
                return _page(listing, filters, limit, offset, sort)
        except sqlite3.Error:
            pass  # (a lock held too long, a damaged file ...): the store answers, or words it
    from store.db.store import TranscriptStore

    with TranscriptStore.open(url, read_only=True) as opened:
        return _page(opened, filters, limit, offset, sort)


def _page(listing: Any, filters: dict[str, Any], limit: int | None, offset: int,
          sort: str) -> SessionPage:
    found = listing.list_sessions(**filters, limit=limit, offset=offset, sort=sort)
    total = (len(found) + offset if limit is None or len(found) < limit
             else listing.count_sessions(**filters))
    return SessionPage(tuple(found), total)


def read_lite(url: str, session: str | None,
              work: Callable[[Reader, str | None], _T]) -> _T | None:
    """``work(connection, session id)`` in one read snapshot of the SQLite file or
    PostgreSQL database ``url`` names (:func:`open_reader`), ``session`` (a prefix) resolved
    first; ``None`` off the happy path (not a plain file or a database at head, a prefix that
    is not plain, a driver error: the caller asks the store, which answers or words the
    error). What every stdlib reader of the command line shares."""
    from store.db.schema.revisions import shipped_head

    conn = open_reader(url, shipped_head)
    if conn is None:
        return None
    try:
        conn.execute("BEGIN")
        if session is not None:
            session = lite_session_id(conn, session)
            if session is None:
                return None
        return work(conn, session)
    except sqlite3.Error:
        return None
    finally:
        conn.close()
