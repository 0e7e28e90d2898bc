"""What the JSON-lines readers share (Claude Code, Codex, Kward; domain).

Each reader takes a file's parsed lines and fills a :class:`~store.importers.base.Collector`.
Keys are the record's own id when it has one (Claude Code ``uuid``, or ``message.id`` for a
regrouped assistant turn; Kward record ``id``), else ``<session id>:<line number>``: files are
append-only, so keys are stable and a re-import stores only what is new.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from store.core.errors import AmbiguousRecord
from store.core.keys import canonical_keys
from store.core.model import Message
from store.core.times import parse_timestamp
from store.importers.base import Collector

__all__ = ["moment", "record_top", "span", "text_of", "with_metadata"]


def record_top(record: Any, line: int, collector: Collector, what: str) -> Mapping[str, Any] | None:
    """A record's top level in plain keys, or ``None`` after reporting why it is unusable."""
    if not isinstance(record, Mapping):
        collector.problem(line, f"not a {what} record: a JSON {type(record).__name__}")
        return None
    try:
        top, _ = canonical_keys(record)
    except AmbiguousRecord as exc:
        collector.problem(line, str(exc))
        return None
    return top


def text_of(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def with_metadata(message: Message, source: str | None = None, **metadata: Any) -> Message:
    """The message with another source and more metadata (``None`` values left out)."""
    extra = {k: v for k, v in metadata.items() if v is not None}
    if not extra and (source is None or source == message.source):
        return message
    return Message(message.role, message.parts, source or message.source, message.message_id,
                   message.extras, {**message.metadata, **extra})


def moment(value: Any) -> datetime | None:
    """A recorded time as an aware UTC datetime: ISO 8601 text (``Z`` allowed), or epoch
    seconds or milliseconds (JavaScript ``Date.now()``); ``None`` for anything else."""
    if isinstance(value, str):
        return parse_timestamp(value) if value else None
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        try:
            return datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC)
        except (ValueError, OverflowError, OSError):
            return None
    return None


def span(values: Iterable[Any]) -> tuple[datetime | None, datetime | None]:
    """The earliest and latest of the readable times among ``values`` (``None, None``: none
    is readable)."""
    times = [t for t in (moment(v) for v in values) if t is not None]
    return (min(times), max(times)) if times else (None, None)
