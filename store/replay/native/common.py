"""A repaired message ready for a writer: its time and its calls in the target's vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from store.core.model import Message
from store.core.times import as_utc
from store.replay.native.tools import Translated

__all__ = ["Dated", "stamp"]


@dataclass(frozen=True, slots=True)
class Dated:
    """A repaired message, its time, and its calls in the target's vocabulary (by part
    index)."""

    message: Message
    at: datetime
    calls: dict[int, Translated]


def stamp(at: datetime) -> str:
    """``2025-09-10T09:00:00.000Z``: the agents' own timestamp form."""
    return as_utc(at).strftime("%Y-%m-%dT%H:%M:%S.") + f"{as_utc(at).microsecond // 1000:03d}Z"
