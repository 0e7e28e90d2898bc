"""What an append refuses before any transaction (persistence): a call's argument text or a
message larger than the store's limits (``TooLargeError``), JSON nested deeper than every
reader can walk (``NestingTooDeep``)."""

from __future__ import annotations

from dataclasses import dataclass

from store.core.depth import MAX_DEPTH, text_depth, text_within
from store.core.errors import NestingTooDeep, TooLargeError
from store.records.codec import EncodedMessage

__all__ = ["DEFAULT_MAX_ARGUMENT_BYTES", "DEFAULT_MAX_MESSAGE_BYTES", "Limits", "check_limits"]

#: Default limits (bytes of UTF-8): one call's argument text, and one message as stored.
#: Both are set per store (``TranscriptStore.open(max_argument_bytes=..., max_message_bytes=...)``).
DEFAULT_MAX_ARGUMENT_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES


def _utf8_size(text: str, limit: int) -> int:
    """The UTF-8 size of text, computed only when it could be over ``limit``."""
    if len(text) * 4 <= limit:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def check_limits(number: int, encoded: EncodedMessage, limits: Limits) -> None:
    total = len(encoded.parts_json)
    max_argument = limits.max_argument_bytes
    for call in encoded.calls:
        text = call.call.arguments_text
        if len(text) * 4 > max_argument:
            size = _utf8_size(text, max_argument)
            if size > max_argument:
                raise TooLargeError(f"message {number}: the arguments of call {call.index}",
                                    size, max_argument)
        total += len(call.wire_json)
    for res in encoded.results:
        total += len(res.content_json)
    if total * 4 > limits.max_message_bytes:
        size = sum(_utf8_size(t, 0) for t in (
            encoded.parts_json, *(c.wire_json for c in encoded.calls),
            *(r.content_json for r in encoded.results)))
        if size > limits.max_message_bytes:
            raise TooLargeError(f"message {number}", size, limits.max_message_bytes)
    _check_depth(number, encoded)


def _check_depth(number: int, encoded: EncodedMessage) -> None:
    """Refuse JSON nested deeper than ``store.core.depth.MAX_DEPTH`` (every reader could not
    walk it): a call's arguments (as parsed from their text), a result's content, the parts,
    extras and metadata. A count of brackets answers for almost every message."""
    def check(what: str, text: str | None) -> None:
        if text is not None and not text_within(text):
            raise NestingTooDeep(f"message {number}: {what}", text_depth(text), MAX_DEPTH)

    for call in encoded.calls:
        check(f"the wire record of call {call.index}", call.wire_json)
        if call.status in ("ok", "empty", "non_object_json"):  # the text parses as JSON
            check(f"the arguments of call {call.index}", call.call.arguments_text)
        check(f"the extras of call {call.index}", call.extras_json)
    for res in encoded.results:
        check(f"the content of result {res.index}", res.content_json)
        check(f"the extras of result {res.index}", res.extras_json)
    check("its parts", encoded.parts_json)
    check("its extras", encoded.extras_json)
    check("its metadata", encoded.metadata_json)
