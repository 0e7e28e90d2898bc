"""A session's info from its row and the lineage walks (persistence; stdlib only): what
``sessions tree`` and a session's ancestors read, without the message model that loading a
transcript needs (:mod:`store.db.reading.loaded`, which re-exports these)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from store.core.arguments import loads_json
from store.core.errors import SessionNotFound
from store.core.lineage import MAX_TREE_DEPTH, session_link
from store.core.sessioninfo import SessionInfo, SessionTree
from store.core.times import as_utc

__all__ = ["MAX_TREE_DEPTH", "ancestors_of", "session_info", "tree_of"]


def _maybe_aware(value: Any) -> datetime | None:
    return None if value is None else as_utc(value)


def session_info(row: Mapping[str, Any]) -> SessionInfo:
    """A session's info from its row (times as datetimes, naive ones UTC)."""
    return SessionInfo(
        row["session_id"], row["title"], row["provider"], row["model"], row["cwd"],
        tuple(loads_json(row["tags_json"])), as_utc(row["created_at"]),
        as_utc(row["updated_at"]), row["next_position"], loads_json(row["metadata_json"]),
        row.get("agent"), started_at=_maybe_aware(row.get("started_at")),
        ended_at=_maybe_aware(row.get("last_activity_at")), parent=session_link(row),
    )


def ancestors_of(session_id: str, info: Callable[[str], SessionInfo]) -> list[SessionInfo]:
    """The stored sessions above ``session_id`` (``info``: a session's info, or
    ``SessionNotFound``), its parent first, up to the first one without a parent, or not
    stored, or already met (a loop)."""
    out: list[SessionInfo] = []
    seen = {session_id}
    current = info(session_id)
    while current.parent is not None and len(out) < MAX_TREE_DEPTH:
        parent_id = current.parent.parent_session_id
        if parent_id in seen:
            break
        seen.add(parent_id)
        try:
            current = info(parent_id)
        except SessionNotFound:
            break
        out.append(current)
    return out


def tree_of(session_id: str, info: Callable[[str], SessionInfo],
            children: Callable[[list[str]], list[SessionInfo]],
            call_counts: Callable[[list[str]], dict[str, int]],
            max_depth: int = MAX_TREE_DEPTH) -> SessionTree:
    """``session_id`` and every session below it (``children``: the sessions whose parent is
    one of these, in the order they were stored), each with its call count."""
    root = info(session_id)
    levels: list[list[SessionInfo]] = [[root]]
    known = {session_id}
    for _ in range(max_depth):
        below = [found for found in children([i.session_id for i in levels[-1]])
                 if found.session_id not in known]
        if not below:
            break
        known.update(found.session_id for found in below)
        levels.append(below)
    counts = call_counts(list(known))

    def filled(found: SessionInfo) -> SessionInfo:
        return replace(found, call_count=counts.get(found.session_id, 0))

    kids: dict[str, list[SessionTree]] = {}
    for level in reversed(levels[1:]):
        for found in level:
            node = SessionTree(filled(found), tuple(kids.pop(found.session_id, [])))
            assert found.parent is not None
            kids.setdefault(found.parent.parent_session_id, []).append(node)
    return SessionTree(filled(root), tuple(kids.get(session_id, [])))
