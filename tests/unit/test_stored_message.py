"""StoredMessage: a loaded message decoded at its first use, once, and otherwise the frozen
value it always was (equality, hashing as its fields, repr, no assignment)."""

from __future__ import annotations

import copy
from dataclasses import FrozenInstanceError
from datetime import UTC, datetime

import pytest

from store import Message, StoredMessage, TextPart

WHEN = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def _message(text: str) -> Message:
    return Message("user", (TextPart(text),))


def test_a_deferred_message_is_decoded_at_first_use_and_only_once():
    made: list[str] = []

    def decode() -> Message:
        made.append("message")
        return _message("hi")

    def read_time(raw: str) -> datetime:
        made.append(raw)
        return WHEN

    stored = StoredMessage.deferred(3, "k", decode, read_time, "2026-12-03 12:00:00")
    assert (stored.position, stored.key) == (3, "k") and made == []
    assert stored.message == _message("hi") and made == ["message"]
    assert stored.message is stored.message and made == ["message"]
    assert stored.created_at == WHEN and made == ["message", "2026-12-03 12:00:00"]
    assert stored.created_at is stored.created_at and len(made) == 2


def test_deferred_and_eager_messages_are_the_same_value():
    eager = StoredMessage(0, _message("a"), None, WHEN)
    deferred = StoredMessage.deferred(0, None, lambda: _message("a"), lambda raw: raw, WHEN)
    assert eager == deferred and deferred == eager
    assert repr(eager) == repr(deferred)
    assert eager != StoredMessage(1, _message("a"), None, WHEN)
    assert eager != StoredMessage(0, _message("b"), None, WHEN)
    assert copy.deepcopy(deferred) == eager
    match deferred:
        case StoredMessage(position, message, key, created_at):
            assert (position, message, key, created_at) == (0, _message("a"), None, WHEN)


def test_a_stored_message_refuses_assignment():
    stored = StoredMessage(0, _message("a"), None, WHEN)
    with pytest.raises(FrozenInstanceError):
        stored.position = 1  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del stored.key  # type: ignore[misc]
