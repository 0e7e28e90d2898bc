"""What every answer of the MCP server looks like (edge layer).

* **Small**: every list is a page (``limit`` at most :data:`MAX_LIMIT`, ``offset``; the page
  says ``next_offset`` when there is more), every long text is cut to ``max_chars`` with a
  note saying how much was left out and how to read more.
* **Redacted** when the server redacts: every text passes through the :class:`store.Redactor`
  *before* it is cut (a secret cut in half would no longer be recognised).
* **JSON**: times as ISO 8601 UTC, ``None`` kept; one compact text (what the agent reads).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson

import store

T = TypeVar("T")

#: The most items one page may hold; the default page.
MAX_LIMIT = 100
DEFAULT_LIMIT = 20
#: The longest text one field may show (``max_chars``), and the default.
MAX_CHARS = 20_000
DEFAULT_CHARS = 500


def iso(at: datetime | None) -> str | None:
    """``at`` as ISO 8601 UTC (``2025-09-03T10:00:00Z``)."""
    if at is None:
        return None
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def dumps(value: Any) -> str:
    """The JSON text an agent reads (compact; datetimes ISO 8601)."""
    return orjson.dumps(value, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    return str(value)  # (no other value reaches here: every answer is built of JSON values)


class Shaper:
    """Cuts and redacts the texts of one server's answers; counts what it redacted."""

    def __init__(self, redactor: store.Redactor | None) -> None:
        self.redactor = redactor

    @property
    def redacting(self) -> bool:
        return self.redactor is not None

    def redact(self, value: T) -> T:
        """``value`` (a string or a JSON value) with its secrets replaced, when redacting."""
        if self.redactor is None or value is None:
            return value
        redacted, _ = self.redactor.redact(value)
        return redacted

    def text(self, value: str | None, max_chars: int, *, more: str = "") -> str | None:
        """``value`` redacted, then cut to ``max_chars`` with a note of what was left out
        (``more``: how to read the rest)."""
        if value is None:
            return None
        shown = self.redact(value)
        return cut(shown, max_chars, more=more)


def cut(text: str, max_chars: int, *, more: str = "") -> str:
    """``text`` cut to ``max_chars`` characters with a note of what was left out."""
    if len(text) <= max_chars:
        return text
    hint = f"; {more}" if more else ""
    return f"{text[:max_chars]}…[truncated: {len(text) - max_chars} more characters{hint}]"


def page(items: Sequence[Any], limit: int, offset: int, *, total: int | None = None,
         **extra: Any) -> dict[str, Any]:
    """A page of ``items``: ``items`` holds up to ``limit + 1`` rows (one more than shown
    says there is a next page)."""
    shown = list(items[:limit])
    more = len(items) > limit if total is None else offset + len(shown) < total
    out: dict[str, Any] = {"items": shown, "offset": offset, "limit": limit,
                           "next_offset": offset + len(shown) if more else None}
    if total is not None:
        out["total"] = total
    out.update(extra)
    return out


def session_summary(info: store.SessionInfo, shaper: Shaper) -> dict[str, Any]:
    """A session in a list: id, title, agent, project, model, times, sizes, parent."""
    return {
        "session_id": info.session_id,
        "title": shaper.text(info.title, 200),
        "agent": info.agent,
        "cwd": shaper.redact(info.cwd),
        "model": info.model,
        "provider": info.provider,
        "started_at": iso(info.started_at),
        "last_active_at": iso(info.last_active_at),
        "messages": info.message_count,
        "calls": info.call_count,
        "parent_session_id": info.parent.parent_session_id if info.parent else None,
        "lineage": info.parent.kind if info.parent else None,
    }
