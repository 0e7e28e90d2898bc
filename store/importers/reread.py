"""What the current reader gives for a stored session, against what is stored (domain).

``transcript-store import --reread --diff`` reads the source files still on disk again and
reports, per session and field, where what is stored differs from what the current reader
gives: the number of messages and calls, the title, the model. Readers improve (a call
format learnt, a record kind read): this says which stored sessions an improved reader would
change. The comparison is here, on plain values; the command reads the store through the
public API. (Times are left out while their storage changes.)
"""

from __future__ import annotations

from dataclasses import dataclass

from store.core.model import InvalidToolCall, ToolCall
from store.importers.base import ParsedSession

__all__ = ["FieldChange", "StoredSession", "session_changes"]


@dataclass(frozen=True, slots=True)
class StoredSession:
    """What the store holds of a session, for the comparison."""

    messages: int
    calls: int
    title: str | None
    model: str | None


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of a session that the current reader gives otherwise than stored."""

    session_id: str
    field: str
    stored: object
    read: object

    def __str__(self) -> str:
        return f"{self.session_id}: {self.field}: stored {self.stored!r}, read {self.read!r}"


def count_calls(session: ParsedSession) -> int:
    """The tool calls (valid or not) in a parsed session's messages."""
    return sum(1 for m in session.items for p in m.parts
               if isinstance(p, ToolCall | InvalidToolCall))


def session_changes(parsed: ParsedSession, stored: StoredSession | None) -> list[FieldChange]:
    """The fields where ``parsed`` (the current reader's) differs from ``stored`` (``None``:
    the session is not stored at all)."""
    sid = parsed.session_id
    read = StoredSession(len(parsed.items), count_calls(parsed), parsed.title, parsed.model)
    if stored is None:
        return [FieldChange(sid, "session", None, f"{read.messages} messages")]
    found = []
    for name in ("messages", "calls", "title", "model"):
        before, after = getattr(stored, name), getattr(read, name)
        if name in ("title", "model") and after is None:
            continue  # the reader gives none: what is stored stays
        if before != after:
            found.append(FieldChange(sid, name, before, after))
    return found
