"""How sessions descend from one another: :class:`SessionLink` (domain: stdlib only).

A session may have a parent: the session that spawned it as a **subagent** (a Claude Code
``Task`` / ``Agent`` sidechain, a Codex ``spawn_agent`` thread, a Gemini CLI subagent), the
session it was **forked** from (``TranscriptStore.fork``, a Codex fork), or the session it
**continues** (a Claude Code resume, which writes a new session file). The link is stored in
the session's row (``sessions.parent_session_id``, ``lineage``, ``parent_call_id``; revision
0015) so that listings, trees and audits can follow it; the parent need not be stored (yet).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from store.core.errors import UsageError

__all__ = ["LINEAGE_KINDS", "MAX_TREE_DEPTH", "SessionLink", "session_link"]

#: How many levels below a session a tree, a ``--with-children`` audit or the usage
#: reports' roll-up follows (Claude Code limits subagents to a few levels; a deeper chain is
#: a loop or a mistake).
MAX_TREE_DEPTH = 64

#: The kinds of link, in the words ``sessions show`` and the JSON use: ``subagent`` (spawned
#: by a call of the parent: ``parent_call_id`` names it when the files say), ``fork`` (a copy
#: of the parent's first messages that went on its own way), ``continuation`` (the parent
#: resumed, or compacted, under a new session id).
LINEAGE_KINDS = ("subagent", "fork", "continuation")


@dataclass(frozen=True, slots=True)
class SessionLink:
    """A session's parent: its id, the kind of link (:data:`LINEAGE_KINDS`) and, for a
    subagent, the id of the parent's call that spawned it (when recorded)."""

    parent_session_id: str
    kind: str
    parent_call_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.parent_session_id, str) or not self.parent_session_id:
            raise UsageError("a session link needs the parent's session id")
        if self.kind not in LINEAGE_KINDS:
            raise UsageError(f"unknown lineage kind {self.kind!r}: use "
                             f"{', '.join(LINEAGE_KINDS)}")
        if self.parent_call_id is not None and not isinstance(self.parent_call_id, str):
            raise UsageError("parent_call_id must be a string")


def session_link(row: Mapping[str, Any]) -> SessionLink | None:
    """The parent of a stored session row (its ``parent_session_id``, ``lineage`` and
    ``parent_call_id``); ``None`` without one, or with a kind this version does not know (the
    row is still read)."""
    parent = row.get("parent_session_id")
    if not parent:
        return None
    try:
        return SessionLink(parent, row.get("lineage") or "subagent", row.get("parent_call_id"))
    except UsageError:
        return None
