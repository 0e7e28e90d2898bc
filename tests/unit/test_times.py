"""store.core.times: the one naive-to-UTC conversion."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from store import UsageError, as_utc
from store.core.times import iso_utc, parse_timestamp


def test_a_naive_time_is_utc_and_an_aware_one_is_converted():
    naive = datetime(2025, 9, 1, 12)  # noqa: DTZ001
    assert as_utc(naive) == datetime(2025, 9, 1, 12, tzinfo=UTC)
    paris = datetime(2025, 9, 1, 14, tzinfo=timezone(timedelta(hours=2)))
    assert as_utc(paris).tzinfo is UTC and as_utc(paris).hour == 12


def test_a_time_with_no_utc_form_is_a_usage_error():
    early = datetime.fromisoformat("0001-01-01T00:00:00+14:00")
    with pytest.raises(UsageError, match="out of range"):
        as_utc(early)
    with pytest.raises(UsageError, match="must be a datetime"):
        as_utc("2025-09-01")  # type: ignore[arg-type]


def test_timestamps_of_transcripts():
    assert parse_timestamp("2025-09-01T12:00:00Z") == datetime(2025, 9, 1, 12, tzinfo=UTC)
    assert parse_timestamp("not a time") is None
    assert parse_timestamp("0001-01-01T00:00:00+14:00") is None
    assert iso_utc(datetime(2025, 9, 1, 12)) == "2025-09-01T12:00:00Z"  # noqa: DTZ001
