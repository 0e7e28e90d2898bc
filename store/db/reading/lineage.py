"""Lineage: a session's parent, children and the tree below it (persistence).

The links are the ``sessions`` columns ``parent_session_id``, ``lineage`` and
``parent_call_id`` (revision 0015; ``store.core.lineage``), set when a session is created
(``create_session(parent=...)``, ``append(parent=...)``, the importers, ``fork``) or later
(:meth:`LineageMixin.link_session`). Children are found by ``ix_sessions_parent``, one
statement per level of the tree (no recursive SQL: a Citus coordinator routes each level as
one plain query); a chain of links that loops back is followed once.
"""

from __future__ import annotations

from functools import partial

from sqlalchemy import Connection, and_, func, select, update

from store.core.errors import SessionNotFound, UsageError
from store.core.lineage import SessionLink
from store.core.transcript import SessionInfo, SessionTree
from store.db.base import StoreBase, _now, _session_info, reads_once
from store.db.reading.walks import MAX_TREE_DEPTH, ancestors_of, tree_of
from store.db.schema.tables import sessions, tool_calls

__all__ = ["MAX_TREE_DEPTH", "LineageMixin", "descendant_ids"]


#: Ids per ``IN`` list of one statement (SQLite's bound-parameter limit is far above it).
_CHUNK = 500


def _children_of(conn: Connection, parents: list[str]) -> list[SessionInfo]:
    found = []
    for start in range(0, len(parents), _CHUNK):
        chunk = parents[start:start + _CHUNK]
        found += [_session_info(row._mapping) for row in conn.execute(
            select(sessions).where(sessions.c.parent_session_id.in_(chunk))
            .order_by(sessions.c.created_at, sessions.c.session_id))]
    return found


def descendant_ids(conn: Connection, session_id: str,
                   max_depth: int = MAX_TREE_DEPTH) -> list[str]:
    """The ids of ``session_id`` and of every session below it (level by level)."""
    seen = [session_id]
    known = {session_id}
    level = [session_id]
    for _ in range(max_depth):
        if not level:
            break
        below = []
        for start in range(0, len(level), _CHUNK):
            chunk = level[start:start + _CHUNK]
            below += [str(sid) for sid in conn.execute(
                select(sessions.c.session_id).where(sessions.c.parent_session_id.in_(chunk))
                .order_by(sessions.c.session_id)).scalars() if sid not in known]
        known.update(below)
        seen += below
        level = below
    return seen


def _call_counts(conn: Connection, ids: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start:start + _CHUNK]
        counts.update((sid, int(n)) for sid, n in conn.execute(
            select(tool_calls.c.session_id, func.count())
            .where(tool_calls.c.session_id.in_(chunk)).group_by(tool_calls.c.session_id)))
    return counts


class LineageMixin(StoreBase):
    """Parents, children and trees of sessions."""

    @reads_once
    def session_children(self, session_id: str) -> list[SessionInfo]:
        """The sessions whose parent is ``session_id`` (subagents, forks, continuations), in
        the order they were stored; the session itself need not be stored."""
        with self._read() as conn:
            return _children_of(conn, [session_id])

    @reads_once
    def session_ancestors(self, session_id: str) -> list[SessionInfo]:
        """The stored sessions above ``session_id``, its parent first, up to the first one
        without a parent, or not stored, or already met (a loop)."""
        with self._read() as conn:
            return ancestors_of(session_id, partial(self._info, conn))

    @reads_once
    def session_tree(self, session_id: str, *, max_depth: int = MAX_TREE_DEPTH) -> SessionTree:
        """``session_id`` and every session below it, each with its call count."""
        if max_depth < 0:
            raise UsageError("max_depth must not be negative")
        with self._read() as conn:
            return tree_of(session_id, partial(self._info, conn), partial(_children_of, conn),
                           partial(_call_counts, conn), max_depth)

    @reads_once
    def session_family(self, session_id: str, *, max_depth: int = MAX_TREE_DEPTH) -> list[str]:
        """The ids of ``session_id`` and of every session below it (what ``--with-children``
        audits); ``SessionNotFound`` when the session is not stored."""
        with self._read() as conn:
            self._info(conn, session_id)
            return descendant_ids(conn, session_id, max_depth)

    def link_session(self, session_id: str, parent: SessionLink | None) -> SessionInfo:
        """Set (or, with ``None``, remove) a session's parent. A session cannot be its own
        parent, nor the parent of a session above it (``UsageError``)."""
        with self._write() as conn:
            self._info(conn, session_id)
            if parent is not None:
                if parent.parent_session_id in descendant_ids(conn, session_id):
                    raise UsageError(f"session {parent.parent_session_id!r} is "
                                     f"{session_id!r} or below it: a session cannot descend "
                                     "from itself")
            conn.execute(update(sessions).where(sessions.c.session_id == session_id).values(
                parent_session_id=parent.parent_session_id if parent else None,
                lineage=parent.kind if parent else None,
                parent_call_id=parent.parent_call_id if parent else None,
                updated_at=_now()))
            return self._info(conn, session_id)

    @reads_once
    def count_session_calls(self, session_id: str, *, with_children: bool = False) -> int:
        """How many tool calls ``session_id`` holds, with those of every session below it
        when ``with_children``."""
        with self._read() as conn:
            self._info(conn, session_id)
            ids = descendant_ids(conn, session_id) if with_children else [session_id]
            return sum(_call_counts(conn, ids).values())

    def _info(self, conn: Connection, session_id: str) -> SessionInfo:
        if "\x00" in session_id:
            raise SessionNotFound(session_id)
        row = conn.execute(select(sessions).where(and_(
            sessions.c.session_id == session_id))).first()
        if row is None:
            raise SessionNotFound(session_id)
        return _session_info(row._mapping)
