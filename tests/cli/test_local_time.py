"""A table's local time (``store.cli._common.local_time``): the minute ``datetime.astimezone()``
gives, in every zone, across DST changes, before 1970 and at the range's ends."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest

from store.cli._common import local_time

ZONES = ["UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu",
         "America/St_Johns", "Pacific/Chatham", "Africa/Casablanca"]


@pytest.fixture(params=ZONES)
def zone(request: pytest.FixtureRequest) -> Iterator[str]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    yield request.param
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def _times() -> list[datetime]:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    # every 7 minutes 59.999999 seconds through a year: each DST change of each zone, and
    # the last microsecond before a minute turns
    every = [start + timedelta(minutes=8 * i) - timedelta(microseconds=1)
             for i in range(366 * 24 * 60 // 8)]
    odd = [datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),  # before the epoch
           datetime(1900, 3, 1, 12, 30, 0, 500000, tzinfo=UTC),
           datetime(1, 1, 2, tzinfo=UTC), datetime(9999, 12, 30, tzinfo=UTC),
           datetime(2025, 6, 1, 10, 0, tzinfo=timezone(timedelta(hours=-7))),  # not UTC
           datetime(2025, 6, 1, 10, 0, tzinfo=UTC).replace(tzinfo=None)]  # naive: as UTC
    return every + odd


def test_each_minute_is_the_one_astimezone_gives(zone: str) -> None:
    for value in _times():
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        assert local_time(value) == aware.astimezone(UTC).astimezone().strftime(
            "%Y-%m-%d %H:%M"), (zone, value)


def test_no_time_is_a_dash() -> None:
    assert local_time(None) == "-"
