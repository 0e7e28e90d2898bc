"""Stored-session values: what the store returns (domain: stdlib only).

``SessionInfo`` is a session's metadata; ``StoredMessage`` a message with its position and
key; ``Transcript`` a loaded session, with each tool result linked to its call;
``AppendResult`` what one append stored and what it skipped as already stored;
``ToolDefinition`` a tool definition recorded with a session. All are frozen dataclasses
(``StoredMessage`` behaves as one, its loaded values decoded at first use).

``redact_transcript(transcript, redactor)`` is a copy of a transcript with every secret a
``store.redaction.redact.Redactor`` finds replaced: texts, thinking, call arguments (the
parsed input, its keys included, and the exact text), results, invalid calls' raw text and error,
server calls, opaque parts, extras and metadata of messages and parts, and the session's title, cwd
and metadata. Ids, tool names, roles, positions and signatures are kept, so the copy pairs
and replays as the original does. Every output that shows transcript text to a person or
another program (CLI, viewer, exports) redacts through it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import FrozenInstanceError, dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol, TypeVar

from store.core.arguments import parse_object_text
from store.core.model import (
    EMPTY_EXTRAS,
    InvalidToolCall,
    Message,
    OpaquePart,
    Part,
    ServerToolCall,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)
from store.core.sessioninfo import SessionInfo, SessionSource, SessionTree

__all__ = [
    "AppendResult",
    "CallHit",
    "CallRef",
    "LoadedCall",
    "SessionInfo",
    "SessionSource",
    "SessionTree",
    "StoredMessage",
    "ToolDefinition",
    "Transcript",
    "redact_message",
    "redact_transcript",
]

#: A call's place in its session: (message position, index within the message).
CallRef = tuple[int, int]


def _no_extras() -> Mapping[str, Any]:
    return EMPTY_EXTRAS


_set = object.__setattr__


def _fill(stored: StoredMessage, *values: Any) -> None:
    for name, value in zip(StoredMessage.__slots__, values, strict=True):
        _set(stored, name, value)


class StoredMessage:
    """A message at its position in a session; ``key`` is its idempotency key, if any.

    Immutable, compared and printed as a frozen dataclass of ``position, message, key,
    created_at`` is. A loaded one may hold its row undecoded (:meth:`deferred`): ``message``
    and ``created_at`` are then decoded at their first use, once (a load of a long session
    pays for the messages a caller reads, not for every one; issue 39).
    """

    __slots__ = ("position", "key", "_message", "_created_at", "_later", "_when")
    __match_args__ = ("position", "message", "key", "created_at")

    position: int
    key: str | None
    _message: Message | None
    _created_at: Any  # the stored value until ``_when`` made it a datetime
    _later: Callable[[], Message] | None
    _when: Callable[[Any], datetime] | None

    def __init__(self, position: int, message: Message, key: str | None,
                 created_at: datetime) -> None:
        _fill(self, position, key, message, created_at, None, None)

    @classmethod
    def deferred(cls, position: int, key: str | None, message: Callable[[], Message],
                 created_at: Callable[[Any], datetime], stored_time: Any) -> StoredMessage:
        """A stored message whose ``message`` is ``message()`` and whose ``created_at`` is
        ``created_at(stored_time)``, each computed at its first use."""
        self = object.__new__(cls)
        _fill(self, position, key, None, stored_time, message, created_at)
        return self

    @property
    def message(self) -> Message:
        later = self._later
        if later is None:
            return self._message  # type: ignore[return-value]
        message = later()
        _set(self, "_message", message)
        _set(self, "_later", None)  # (set after the value: another thread sees either)
        return message

    @property
    def created_at(self) -> datetime:
        when = self._when
        if when is None:
            return self._created_at  # type: ignore[no-any-return]
        value = when(self._created_at)
        _set(self, "_created_at", value)
        _set(self, "_when", None)
        return value

    def _fields(self) -> tuple[int, Message, str | None, datetime]:
        return self.position, self.message, self.key, self.created_at

    def __eq__(self, other: object) -> bool:
        if type(other) is not StoredMessage:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (f"StoredMessage(position={self.position!r}, message={self.message!r}, "
                f"key={self.key!r}, created_at={self.created_at!r})")

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[StoredMessage], tuple[Any, ...]]:
        return StoredMessage, self._fields()

    def __copy__(self) -> StoredMessage:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> StoredMessage:
        return self


@dataclass(frozen=True, slots=True)
class LoadedCall:
    """A call with its place in the session and its result (``None`` when it has none)."""

    position: int
    index: int
    call: ToolCall | InvalidToolCall
    result: ToolResult | None


@dataclass(frozen=True, slots=True)
class Transcript:
    """A loaded session: its metadata, its messages in order, and result-to-call links.

    ``links`` maps a result's ``(position, index)`` to its call's ``(position, index)``;
    results without a matching call (orphans) are absent from it.
    """

    session: SessionInfo
    messages: tuple[StoredMessage, ...]
    links: Mapping[CallRef, CallRef] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[StoredMessage]:
        return iter(self.messages)

    @property
    def session_id(self) -> str:
        return self.session.session_id

    def calls(self) -> Iterator[LoadedCall]:
        """Every client tool call in order, each with its (first) result."""
        by_call: dict[CallRef, ToolResult] = {}
        by_position = {m.position: m for m in self.messages}
        for (pos, idx), target in self.links.items():
            if target not in by_call:
                by_call[target] = by_position[pos].message.tool_results[idx]
        for stored in self.messages:
            for index, call in enumerate(stored.message.tool_calls):
                yield LoadedCall(stored.position, index, call,
                                 by_call.get((stored.position, index)))

    def orphan_results(self) -> Iterator[tuple[int, int, ToolResult]]:
        """Results that reference no call in the session."""
        for stored in self.messages:
            for index, result in enumerate(stored.message.tool_results):
                if (stored.position, index) not in self.links:
                    yield stored.position, index, result


@dataclass(frozen=True, slots=True)
class CallHit:
    """Where a call found by a query is: session, message position, index; its ids and names."""

    session_id: str
    position: int
    index: int
    call_id: str
    name: str
    raw_name: str


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What one ``append`` did: the messages it stored, and the keys it skipped as stored."""

    session_id: str
    stored: tuple[StoredMessage, ...]
    skipped_keys: tuple[str, ...] = ()
    created_session: bool = False


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool definition recorded with a session: name, description, parameters schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    definition: Mapping[str, Any] = field(default_factory=_no_extras, compare=False)


# -- redaction --------------------------------------------------------------------------------

V = TypeVar("V")


class SecretRedactor(Protocol):
    """What redaction needs of ``store.redaction.redact.Redactor``."""

    def redact(self, value: V) -> tuple[V, int]: ...


class _Counter:
    __slots__ = ("redactor", "count")

    def __init__(self, redactor: SecretRedactor) -> None:
        self.redactor = redactor
        self.count = 0

    def __call__(self, value: V) -> V:
        redacted, count = self.redactor.redact(value)
        self.count += count
        return redacted

    def mapping(self, value: Mapping[str, Any]) -> Mapping[str, Any]:
        return self(dict(value)) if value else value


def _redact_call(call: ToolCall | InvalidToolCall, r: _Counter) -> ToolCall | InvalidToolCall:
    text = r(call.arguments_text)
    extras = r.mapping(call.extras)
    if isinstance(call, InvalidToolCall):
        return replace(call, arguments_text=text, error_message=r(call.error_message),
                       extras=extras)
    parsed = parse_object_text(text)
    if parsed is None:
        # A pattern matched JSON syntax, so the redacted text no longer parses: the input is
        # redacted on its own (the text stays redacted as it is; each form holds no secret).
        parsed = _Counter(r.redactor)(call.input)
    return ToolCall(call.id, call.name, parsed, call.raw_name, text or "{}", extras, call.source)


def _redact_part(part: Part, r: _Counter) -> Part:
    if isinstance(part, TextPart):
        return replace(part, text=r(part.text), extras=r.mapping(part.extras))
    if isinstance(part, ThinkingPart):
        return replace(part, text=r(part.text), extras=r.mapping(part.extras))
    if isinstance(part, ToolCall | InvalidToolCall):
        return _redact_call(part, r)
    if isinstance(part, ToolResult):
        return replace(part, content=r(part.content), extras=r.mapping(part.extras))
    if isinstance(part, ServerToolCall):
        return replace(part, input=r(part.input))
    if isinstance(part, OpaquePart):
        return replace(part, data=r(part.data))
    return part  # pragma: no cover - every kind of part is listed above


def redact_message(message: Message, redactor: SecretRedactor) -> tuple[Message, int]:
    """A copy of ``message`` with its secrets replaced (see the module docstring), and the
    number of replacements."""
    r = _Counter(redactor)
    parts = tuple(_redact_part(part, r) for part in message.parts)
    copy = replace(message, parts=parts, extras=r.mapping(message.extras),
                   metadata=r.mapping(message.metadata))
    return (copy if r.count else message), r.count


def redact_transcript(transcript: Transcript, redactor: SecretRedactor
                      ) -> tuple[Transcript, int]:
    """A copy of ``transcript`` with its secrets replaced (see the module docstring), and the
    number of replacements."""
    r = _Counter(redactor)
    info = transcript.session
    session = replace(info, title=r(info.title), cwd=r(info.cwd),
                      metadata=r.mapping(info.metadata))
    messages: list[StoredMessage] = []
    for stored in transcript.messages:
        message, count = redact_message(stored.message, redactor)
        r.count += count
        messages.append(stored if message is stored.message
                        else StoredMessage(stored.position, message, stored.key,
                                           stored.created_at))
    if not r.count:
        return transcript, 0
    return replace(transcript, session=session, messages=tuple(messages)), r.count
