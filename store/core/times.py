"""Times (domain): every datetime the store takes or gives is aware UTC; a naive one is read
as UTC. The one place that converts."""

from __future__ import annotations

from datetime import UTC, datetime

from store.core.errors import UsageError

__all__ = ["as_utc", "aware", "iso_utc", "parse_timestamp"]


def as_utc(value: datetime) -> datetime:
    """``value`` in UTC; a naive datetime is taken to be UTC already.

    Raises :class:`~store.core.errors.UsageError` for a value that is not a datetime, or one that
    has no UTC form (``0001-01-01T00:00:00+14:00`` falls before year 1).
    """
    if not isinstance(value, datetime):
        raise UsageError(f"a time must be a datetime, got {value!r}")
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise UsageError(f"time {value.isoformat()} is out of range in UTC") from None


def aware(value: datetime | str) -> datetime:
    """A stored time (a datetime, or the text SQLite's min()/max() hand back) as aware UTC."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return as_utc(value)


def iso_utc(value: datetime) -> str:
    """ISO 8601 in UTC with a ``Z`` (``2025-09-01T12:00:00Z``)."""
    return as_utc(value).isoformat().replace("+00:00", "Z")


def parse_timestamp(text: str) -> datetime | None:
    """A transcript's ISO 8601 timestamp (``Z`` allowed) in UTC, or ``None`` when it is not
    one or has no UTC form."""
    try:
        return as_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except (ValueError, UsageError):
        return None
