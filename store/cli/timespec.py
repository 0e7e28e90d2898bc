"""Times the way people type them on a command line: ``--since 2025-07``, ``--since
2025-07-14``, ``--since 2025-07-14T09:30Z``, ``--since 7d``, ``--since yesterday``.

Absolute times are read by ``dateutil.parser.isoparse`` (python-dateutil: every ISO 8601
form, a month alone included); a small grammar on top reads the relative ones:

- ``now``, ``today``, ``yesterday`` (midnight, local time);
- ``this-week``, ``last-week``, ``this-month``, ``last-month``, ``this-year``, ``last-year``:
  the first moment of that period (its Monday, its 1st, its 1 January; midnight, local time),
  so ``--since last-month --until this-month`` is exactly last month;
- ``N`` and a unit: ``s``, ``m``/``min``, ``h``, ``d``, ``w`` (``7d``, ``90m``, ``2w``: that
  long before now), at most 100 years (``store.trust.retention.MAX_DURATION``).

:class:`DurationSpec` reads a duration option (``prune --older-than 90d``) with
:func:`store.parse_duration`: the same bound, and a usage error naming the option.

A time without a zone is local time (``TZ``), like the tables show; ``Z`` or an offset
gives one. The result is an aware UTC ``datetime``. Anything else is a usage error naming
the option (exit 2).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import click

import store
from store import UsageError

__all__ = ["DurationSpec", "TimeSpec", "parse_time"]

#: The longest relative time: 100 years of seconds (store.trust.retention.MAX_DURATION).
_MAX_SECONDS = 36_525 * 86_400

_RELATIVE = re.compile(r"(?i)^(\d{1,9})\s*(s|sec|secs|m|min|mins|h|hr|hrs|d|day|days|w|"
                       r"week|weeks)$")
_PERIOD = re.compile(r"^(this|last)[-_ ](week|month|year)$")
#: The extended ISO 8601 forms both ``datetime.fromisoformat`` and dateutil's ``isoparse``
#: read the same way (a date; a date and time to the minute, second or microsecond, with
#: ``Z`` or an offset; not hour 24, which only dateutil reads): parsed by the standard
#: library, without importing dateutil (~15 ms).
_PLAIN_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(T([01]\d|2[0-3]):\d{2}(:\d{2}(\.\d{1,6})?)?"
                        r"(Z|[+-]\d{2}:\d{2})?)?", re.ASCII)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}

#: What the error says the option takes.
FORMS = ("2025-07, 2025-07-14, 2025-07-14T09:30Z, 7d, 12h, 2w, today, yesterday, this-week, "
         "last-week, this-month, last-month, this-year, last-year or now")


def parse_time(text: str, now: datetime | None = None) -> datetime:
    """``text`` (see the module docstring) as an aware UTC datetime; ``UsageError`` (a
    ``ValueError``) when it is none of the forms. ``now`` (aware) is the moment relative
    times count back from."""
    now = now or datetime.now(UTC)
    spoken = text.strip().lower()
    local_now = now.astimezone()
    midnight = local_now.replace(hour=0, minute=0, second=0, microsecond=0)
    if spoken == "now":
        return now.astimezone(UTC)
    if spoken == "today":
        return midnight.astimezone(UTC)
    if spoken == "yesterday":
        return (midnight - timedelta(days=1)).astimezone(UTC)
    period = _PERIOD.match(spoken)
    if period:
        return _period_start(midnight, period.group(2), back=period.group(1) == "last")
    relative = _RELATIVE.match(spoken)
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)[0]
        if amount * _UNIT_SECONDS[unit] > _MAX_SECONDS:
            raise UsageError(f"{text!r} is longer ago than 100 years (at most 36525d)")
        try:
            return (now - timedelta(seconds=amount * _UNIT_SECONDS[unit])).astimezone(UTC)
        except OverflowError as exc:
            raise UsageError(f"{text!r} reaches before year 1") from exc
    try:
        plain = _PLAIN_ISO.fullmatch(text.strip())
        if plain:
            parsed = datetime.fromisoformat(plain.group())
        else:
            from dateutil.parser import isoparse  # loaded by the other forms only

            parsed = isoparse(text.strip())
    except (ValueError, OverflowError) as exc:
        raise UsageError(f"not a time: {text!r}") from exc
    try:
        if parsed.tzinfo is None:
            parsed = parsed.astimezone()  # local time, as the tables show it
        return parsed.astimezone(UTC)
    except (OverflowError, OSError) as exc:
        raise UsageError(f"{text!r} has no UTC form within years 1-9999") from exc


def _period_start(midnight: datetime, unit: str, *, back: bool) -> datetime:
    """The first moment (local time) of the week, month or year holding ``midnight``, or of
    the one before it (``back``), in UTC."""
    if unit == "week":
        start = midnight - timedelta(days=midnight.weekday() + (7 if back else 0))
    elif unit == "month":
        start = midnight.replace(day=1)
        if back:
            start = (start - timedelta(days=1)).replace(day=1)
    else:
        start = midnight.replace(month=1, day=1)
        if back:
            start = start.replace(year=start.year - 1)
    # a local midnight at a DST change: the zone's offset of that day, not of today
    return start.replace(tzinfo=None).astimezone().astimezone(UTC)


class TimeSpec(click.ParamType):  # type: ignore[type-arg]
    """A ``--since`` / ``--until`` value (:func:`parse_time`); a bad one is a usage error that
    names the option and the forms it takes."""

    name = "TIME"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, datetime):
            return value if value.tzinfo is not None else value.astimezone().astimezone(UTC)
        try:
            return parse_time(str(value))
        except ValueError as exc:
            self.fail(f"{exc}; takes {FORMS}", param, ctx)


class DurationSpec(click.ParamType):  # type: ignore[type-arg]
    """A duration option (``90d``, ``12w``, ``36h``; :func:`store.parse_duration`, at most 100
    years) as a ``timedelta``; a bad one is a usage error naming the option (exit 2)."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, timedelta):
            return value
        option = param.opts[0] if param is not None and param.opts else "duration"
        try:
            return store.parse_duration(str(value), option)
        except ValueError as exc:
            self.fail(str(exc).removeprefix(f"{option}: "), param, ctx)
