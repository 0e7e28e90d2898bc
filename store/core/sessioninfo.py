"""A session's metadata, its sources and its tree of sessions: what a session listing returns
(domain: stdlib only).

Their own module, apart from the message types (``store.core.model``) and the loaded
transcript (``store.core.transcript``, which re-exports them): listing sessions, the
commonest read, loads only these three classes (``store.ReadOnlyStore`` answers its first
``list_sessions`` without creating the message classes).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from store.core.lineage import SessionLink

__all__ = ["SessionInfo", "SessionSource", "SessionTree"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _no_extras() -> Mapping[str, Any]:
    return _EMPTY


@dataclass(frozen=True, slots=True)
class SessionSource:
    """A file a session came from: where it is (was), when it was last read, and since when
    it is gone (``None`` while it exists)."""

    path: str
    read_at: datetime
    gone_at: datetime | None


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session's metadata. Times are aware UTC datetimes on every backend."""

    session_id: str
    title: str | None
    provider: str | None
    model: str | None
    cwd: str | None
    tags: tuple[str, ...]
    #: When the store first stored the session and last wrote its row: the store's clock
    #: (an import's time), never the session's own (``started_at`` / ``ended_at``).
    created_at: datetime
    updated_at: datetime
    message_count: int
    metadata: Mapping[str, Any] = field(default_factory=_no_extras)
    #: The agent that recorded the session (``claude-code``, ``codex``, ``gemini-cli`` ...):
    #: aliases scoped to it apply to its calls.
    agent: str | None = None
    #: The session's own first and last activity (revision 0016): the agent's start and end
    #: records, else its first and last message's recorded times (the append's time only
    #: for messages that carry none); ``None`` before its first message.
    started_at: datetime | None = None
    ended_at: datetime | None = None
    #: How many tool calls the session holds, when the listing counted them.
    call_count: int | None = None
    #: Its parent session, when it descends from one (store.core.lineage).
    parent: SessionLink | None = None

    @property
    def last_active_at(self) -> datetime:
        """The session's own last activity: its last message time, else when it was stored
        (what ``sessions list`` orders by)."""
        return self.ended_at or self.created_at


@dataclass(frozen=True, slots=True)
class SessionTree:
    """A session and the sessions below it (subagents, forks, continuations), each with its
    call count (``session.call_count``), children ordered by when they were stored."""

    session: SessionInfo
    children: tuple[SessionTree, ...] = ()

    def walk(self, depth: int = 0) -> Iterator[tuple[int, SessionTree]]:
        """Every node, depth first, with its depth (this one: ``depth``)."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)

    def session_ids(self) -> list[str]:
        """The ids of this session and of every session below it."""
        return [node.session.session_id for _, node in self.walk()]
