"""Where each source file's read stopped, and which sessions it fed (persistence).

The store's side of :mod:`store.capture`: :func:`write_source` stores a
:class:`~store.capture.files.FileState` on the driver cursor of the transaction that stored
the file's rows (an append passes it: ``TranscriptStore.append(source=...)``), so that the
state never says more was read than is stored; a kill between two transactions leaves an
older state, and the next read stores nothing twice (keys). :class:`SourcesMixin` gives the
store the states (:meth:`~SourcesMixin.source_states`), marks deleted files
(:meth:`~SourcesMixin.mark_sources_gone`) and tells where a session came from
(:meth:`~SourcesMixin.session_sources`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update

from store.capture.files import FileState, SessionSource
from store.core.arguments import dumps_json, loads_json
from store.db.base import StoreBase, reads_once
from store.db.schema.tables import session_sources, source_files
from store.db.writing.compiled import statements

__all__ = ["SourcesMixin", "write_source"]

_UPSERT = (
    "INSERT INTO source_files (path, identity, size, mtime_ns, read_offset, read_lines, digest, "
    "format, context_json, pending, read_at, gone_at, kinds_json) VALUES (?, ?, ?, ?, ?, ?, ?, "
    "?, ?, ?, ?, NULL, ?) ON CONFLICT (path) DO UPDATE SET identity = excluded.identity, "
    "size = excluded.size, "
    "mtime_ns = excluded.mtime_ns, read_offset = excluded.read_offset, "
    "read_lines = excluded.read_lines, digest = excluded.digest, format = excluded.format, "
    "context_json = excluded.context_json, pending = excluded.pending, "
    "read_at = excluded.read_at, gone_at = NULL, kinds_json = excluded.kinds_json"
)
# Only sessions that exist are linked (a session of which nothing was stored is not kept).
_LINK = (
    "INSERT INTO session_sources (session_id, path) SELECT session_id, ? FROM sessions "
    "WHERE session_id = ? ON CONFLICT (session_id, path) DO NOTHING"
)


def _sql(text: str, dialect: str) -> str:
    return text.replace("?", "%s") if dialect == "postgresql" else text


def write_source(cursor: Any, dialect: str, state: FileState) -> None:
    """Store ``state`` (and its links to its sessions) in the caller's transaction."""
    st = statements(dialect)
    cursor.execute(_sql(_UPSERT, dialect), (
        state.path, state.identity, state.size, state.mtime_ns, state.offset, state.lines,
        state.digest, state.format, dumps_json([list(r) for r in state.context]),
        bool(state.pending), st.time(datetime.now(UTC)),
        None if state.kinds is None else dumps_json(state.kinds)))
    if state.sessions:
        cursor.executemany(_sql(_LINK, dialect), [(state.path, sid) for sid in state.sessions])


class SourcesMixin(StoreBase):
    """The source-file states of a store (see the module docstring)."""

    @reads_once
    def source_states(self) -> dict[str, FileState]:
        """Every stored source-file state, by path."""
        with self._read() as conn:
            rows = conn.execute(select(source_files)).mappings().all()
        return {row["path"]: FileState(
            row["path"], row["identity"], int(row["size"]), int(row["mtime_ns"]),
            int(row["read_offset"]), int(row["read_lines"]), row["digest"], row["format"],
            tuple((int(line), record) for line, record in loads_json(row["context_json"])),
            bool(row["pending"]), _utc(row["gone_at"]),
            kinds=_kinds(row["kinds_json"])) for row in rows}

    def save_source(self, state: FileState) -> None:
        """Store ``state`` in a transaction of its own (when no rows went with it)."""
        dialect = self.dialect
        self._retrying_cursor(lambda cursor: write_source(cursor, dialect, state))

    def mark_sources_gone(self, paths: Iterable[str], when: datetime | None = None) -> int:
        """Record that these source files were found deleted (those not already marked);
        how many were marked. Their sessions stay: the store is the archive."""
        wanted = sorted(set(paths))
        if not wanted:
            return 0
        moment = when or datetime.now(UTC)

        def work(conn: Any) -> int:
            marked = 0
            for start in range(0, len(wanted), 500):
                result = conn.execute(
                    update(source_files)
                    .where(source_files.c.path.in_(wanted[start:start + 500]),
                           source_files.c.gone_at.is_(None))
                    .values(gone_at=moment))
                marked += result.rowcount or 0
            return marked

        return self._retrying(work)

    @reads_once
    def session_sources(self, session_id: str) -> list[SessionSource]:
        """The files a session's messages were read from, each with when it was last read
        and since when it is gone (``None`` while it exists); ``[]`` when none is known."""
        query = (select(source_files.c.path, source_files.c.read_at, source_files.c.gone_at)
                 .join(session_sources, session_sources.c.path == source_files.c.path)
                 .where(session_sources.c.session_id == session_id)
                 .order_by(source_files.c.path))
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [SessionSource(path, _utc(read_at) or datetime.now(UTC), _utc(gone_at))
                for path, read_at, gone_at in rows]


def _kinds(text: str | None) -> dict[str, dict[str, int]] | None:
    """A stored per-kind account (``None``: not kept for that file)."""
    if text is None:
        return None
    found = loads_json(text)
    return found if isinstance(found, dict) else None


def _utc(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(str(value)).replace(tzinfo=UTC)
