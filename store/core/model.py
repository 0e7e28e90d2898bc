"""Pure values: tool calls, tool results, message parts and messages.

These are values, not rows: identity in a database (session, position, minted ids) lives in the
persistence layer. Everything here is a frozen dataclass.

The canonical wire form of a tool call is::

    {"id": <str | null>, "type": "function", "function": {"name": <str>, "arguments": <JSON text>}}

``ToolCall.to_wire()`` always writes ``id`` and writes ``arguments`` as ``arguments_text``: the
text exactly as the model emitted it when the call was read from a record, else the compact
raw-UTF-8 JSON of ``input`` in key order. ``ToolCall.from_wire(tc.to_wire()) == tc`` for every
valid call. A call whose arguments fail the parser is an :class:`InvalidToolCall`, which keeps
the raw text and the error and re-emits the text verbatim; it is never a ``ToolCall`` with
``input={}``.

Equality: a ``ToolCall`` equals another when ``id``, ``name`` and ``input`` are equal (the
inherited contract); ``raw_name``, ``arguments_text``, ``extras`` and ``source`` are carried
along but do not take part. A call is hashable by ``(id, name)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import orjson

from store.core.arguments import dumps_arguments, dumps_json, parse_arguments, parse_object_text
from store.core.depth import MAX_DEPTH, deep_dumps, json_depth
from store.core.errors import ArgumentErrorKind, ToolArgumentsError, UnrecognizedRecord
from store.core.keys import canonical_keys
from store.core.pickling import pickled_by_fields

__all__ = [
    "EMPTY_EXTRAS",
    "DecodedOnUse",
    "InvalidToolCall",
    "Message",
    "OpaquePart",
    "Part",
    "Role",
    "ServerToolCall",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "ToolResult",
    "content_text",
    "make_tool_call",
    "read_wire",
    "renamed",
]

#: The shared empty mapping used when a value carries no provider extras.
EMPTY_EXTRAS: Mapping[str, Any] = MappingProxyType({})

Role = Literal["system", "developer", "user", "assistant", "tool"]

def _no_extras() -> Mapping[str, Any]:
    return EMPTY_EXTRAS


def _freeze(extras: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if type(extras) is DecodedOnUse:  # (frozen already; its truth would decode it)
        return extras
    if not extras:
        return EMPTY_EXTRAS
    if isinstance(extras, MappingProxyType):
        return extras
    return MappingProxyType(dict(extras))


class DecodedOnUse(Mapping[str, Any]):
    """A read-only mapping decoded at its first use: a stored message's envelope (its
    ``metadata`` and ``extras``), which a reader of its parts never looks at. ``decode``
    gives the mapping (called once; the decoded value is kept, frozen as ``Message``
    freezes one). Equal to any mapping with the same items; pickles and copies as the
    frozen mapping it decodes to."""

    __slots__ = ("_decode", "_value")

    def __init__(self, decode: Callable[[], Any]) -> None:
        self._decode: Callable[[], Any] | None = decode
        self._value: Mapping[str, Any] | None = None

    def _mapping(self) -> Mapping[str, Any]:
        value = self._value
        if value is None:
            assert self._decode is not None
            decoded = self._decode()
            # (a dict nothing else holds is frozen without a copy)
            value = _frozen(decoded) if type(decoded) is dict else _freeze(decoded)
            self._value, self._decode = value, None
        return value

    def __getitem__(self, key: str) -> Any:
        return self._mapping()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._mapping())

    def __contains__(self, key: object) -> bool:
        return key in self._mapping()

    def __eq__(self, other: object) -> bool:
        return self._mapping() == other

    def __repr__(self) -> str:
        return repr(self._mapping())

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        return _frozen, (dict(self._mapping()),)


def _frozen(values: dict[str, Any]) -> Mapping[str, Any]:
    """``values``, owned by the caller, frozen as they are (also a pickled
    :class:`DecodedOnUse` read back: the mapping it had decoded to)."""
    return MappingProxyType(values) if values else EMPTY_EXTRAS


#: The mapping types a value keeps as they are (read-only already).
_FROZEN = (MappingProxyType, DecodedOnUse)


@pickled_by_fields
@dataclass(frozen=True, slots=True, eq=False)
class ToolCall:
    """A normalized client tool call: ``id``, ``name`` and the parsed ``input`` dict.

    ``raw_name`` is the name as recorded when an alias renamed it (else ``None``).
    ``arguments_text`` is the exact argument text to re-emit; built from ``input`` when not
    given. ``extras`` holds opaque provider fields that a replay may need to echo (Gemini
    ``thought_signature``, Responses item ``id``, ``index``, ``caller`` ...). ``source`` names
    the record shape the call was read from.
    """

    id: str | None
    name: str
    input: dict[str, Any]
    raw_name: str | None = None
    arguments_text: str = ""
    extras: Mapping[str, Any] = field(default_factory=_no_extras)
    source: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise UnrecognizedRecord(f"a tool call needs a non-empty name, got {self.name!r}")
        if type(self.input) is not dict:
            object.__setattr__(self, "input", parse_arguments(self.input))
        if not self.arguments_text:
            object.__setattr__(self, "arguments_text", dumps_arguments(self.input))
        if type(self.extras) is not MappingProxyType:
            object.__setattr__(self, "extras", _freeze(self.extras))

    def __eq__(self, other: object) -> bool:
        if type(other) is not ToolCall:
            return NotImplemented
        return self.id == other.id and self.name == other.name and self.input == other.input

    def __hash__(self) -> int:
        return hash((self.id, self.name))

    @property
    def display_name(self) -> str:
        """The name to show: the current (aliased) name."""
        return self.name

    @property
    def recorded_name(self) -> str:
        """The name exactly as the record gave it (``raw_name`` when an alias renamed it)."""
        return self.raw_name if self.raw_name is not None else self.name

    @property
    def is_valid(self) -> bool:
        return True

    @property
    def status(self) -> str:
        """The argument status stored and shown for the call: ``ok``, or ``empty`` for ``{}``
        (an invalid call's status is its error kind)."""
        return "ok" if self.input else "empty"

    def to_wire(self) -> dict[str, Any]:
        """The canonical wire record (``name`` is the recorded name, so nothing is lost)."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.recorded_name, "arguments": self.arguments_text},
        }

    @classmethod
    def from_wire(cls, record: Mapping[str, Any]) -> ToolCall:
        """Read a canonical wire record literally (no aliasing), in any key spelling.

        Raises ``UnrecognizedRecord`` when the record is not a canonical tool call and
        ``ToolArgumentsError`` when its arguments fail the parser (see :meth:`read_wire` for
        a reader that returns an :class:`InvalidToolCall` instead).
        """
        call = read_wire(record)
        if isinstance(call, InvalidToolCall):
            raise call.error
        return call


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class InvalidToolCall:
    """A tool call whose arguments fail the parser: raw text and the error, kept verbatim."""

    id: str | None
    name: str
    arguments_text: str
    error_kind: ArgumentErrorKind
    error_message: str
    raw_name: str | None = None
    extras: Mapping[str, Any] = field(default_factory=_no_extras, compare=False)
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if type(self.extras) is not MappingProxyType:
            object.__setattr__(self, "extras", _freeze(self.extras))

    def __hash__(self) -> int:
        return hash((self.id, self.name, self.arguments_text))

    @property
    def display_name(self) -> str:
        return self.name

    @property
    def recorded_name(self) -> str:
        return self.raw_name if self.raw_name is not None else self.name

    @property
    def is_valid(self) -> bool:
        return False

    @property
    def status(self) -> str:
        """The error kind: ``unsupported_type``, ``non_object_json`` or ``invalid_json``."""
        return self.error_kind

    @property
    def error(self) -> ToolArgumentsError:
        """The parser error, as an exception to raise."""
        return ToolArgumentsError(self.error_kind, self.error_message)

    def to_wire(self) -> dict[str, Any]:
        """The canonical wire record with the raw argument text re-emitted verbatim."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.recorded_name, "arguments": self.arguments_text},
        }


def _raw_text(raw: object) -> str:
    """The argument text to keep for raw arguments that are not valid: text as is, anything
    else as its JSON. A value with no exact JSON form (a cycle, NaN, a non-string key, a
    foreign object) has no text to keep: ``ToolArgumentsError`` says what it holds."""
    if raw is None:
        return "{}"
    if isinstance(raw, str):
        return raw
    if isinstance(raw, bytes | bytearray):
        return bytes(raw).decode("utf-8", "surrogateescape")
    return dumps_json(raw)


def make_tool_call(
    call_id: str | None,
    name: str,
    raw_arguments: object,
    *,
    raw_name: str | None = None,
    extras: Mapping[str, Any] | None = None,
    source: str | None = None,
) -> ToolCall | InvalidToolCall:
    """Build a call from raw arguments: a ``ToolCall``, or an ``InvalidToolCall`` on failure.

    Text arguments are kept verbatim as ``arguments_text`` (absent arguments become ``"{}"``);
    mapping arguments are written as canonical compact text.
    """
    if type(name) is not str or not name:
        raise UnrecognizedRecord(f"a tool call needs a non-empty name, got {name!r}")
    frozen = EMPTY_EXTRAS if extras is None else _freeze(extras)
    kind = type(raw_arguments)
    if kind is str:
        # Hot path: text arguments (most providers). One exact decode, then a trusted build.
        parsed_fast = parse_object_text(raw_arguments)  # type: ignore[arg-type]
        if parsed_fast is not None:
            return _trusted_call(call_id, name, parsed_fast, raw_name,
                                 raw_arguments, frozen, source)  # type: ignore[arg-type]
    elif kind is dict:
        # Hot path: object arguments. orjson refuses non-str keys, big ints, surrogates and
        # cycles (the slow path below then says which); NaN it would write as null.
        try:
            dumped = orjson.dumps(raw_arguments)
        except TypeError:
            pass
        else:
            if b"null" not in dumped:
                return _trusted_call(call_id, name, raw_arguments, raw_name,  # type: ignore[arg-type]
                                     dumped.decode(), frozen, source)
    try:
        parsed = parse_arguments(raw_arguments)
    except ToolArgumentsError as exc:
        return InvalidToolCall(
            call_id, name, _raw_text(raw_arguments), exc.kind, str(exc), raw_name, frozen, source
        )
    if isinstance(raw_arguments, str):
        text = raw_arguments
    elif raw_arguments is None:
        text = "{}"
    elif isinstance(raw_arguments, bytes | bytearray):
        text = bytes(raw_arguments).decode("utf-8")
    else:
        try:
            text = dumps_arguments(parsed)
        except ToolArgumentsError as exc:
            return InvalidToolCall(
                call_id, name, _raw_text(raw_arguments), exc.kind, str(exc), raw_name, frozen,
                source,
            )
    return _trusted_call(call_id, name, parsed, raw_name, text or "{}", frozen, source)


_new = object.__new__
_SLOT_SETTERS = tuple(
    ToolCall.__dict__[f].__set__
    for f in ("id", "name", "input", "raw_name", "arguments_text", "extras", "source")
)


def _trusted_call(
    call_id: str | None,
    name: str,
    parsed: dict[str, Any],
    raw_name: str | None,
    text: str,
    extras: Mapping[str, Any],
    source: str | None,
) -> ToolCall:
    """Build a ``ToolCall`` from values already checked here, skipping ``__post_init__``.

    The normalizer's hot path: the name is a non-empty str, ``parsed`` came from the one
    parser, ``text`` is its source text and ``extras`` is frozen.
    """
    call: ToolCall = _new(ToolCall)
    set_id, set_name, set_input, set_raw, set_text, set_extras, set_source = _SLOT_SETTERS
    set_id(call, call_id)
    set_name(call, name)
    set_input(call, parsed)
    set_raw(call, raw_name)
    set_text(call, text)
    set_extras(call, extras)
    set_source(call, source)
    return call


def renamed(call: ToolCall, name: str, raw_name: str | None) -> ToolCall:
    """``call`` under another ``name`` (``raw_name``: the name it was recorded with, or
    ``None``), its other values shared: what ``dataclasses.replace`` gives, without running
    ``__post_init__`` again over values it checked already (a loaded session renames most
    of its calls)."""
    if type(name) is not str or not name:
        raise UnrecognizedRecord(f"a tool call needs a non-empty name, got {name!r}")
    return _trusted_call(call.id, name, call.input, raw_name, call.arguments_text, call.extras,
                         call.source)


def read_wire(record: Mapping[str, Any]) -> ToolCall | InvalidToolCall:
    """Read a canonical wire record literally, in any key spelling, keeping invalid arguments.

    Raises ``UnrecognizedRecord`` naming what was found when the record has no ``function``
    object with a non-empty ``name``.
    """
    if not isinstance(record, Mapping):
        raise UnrecognizedRecord(f"a wire tool call must be an object, got {type(record).__name__}")
    top, _ = canonical_keys(record)
    function = top.get("function")
    if not isinstance(function, Mapping):
        raise UnrecognizedRecord(
            "not a wire tool call: expected a 'function' object, found keys "
            f"{sorted(str(k) for k in record)}"
        )
    fn, _ = canonical_keys(function)
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise UnrecognizedRecord(f"a wire tool call needs a non-empty function.name, got {name!r}")
    call_id = top.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise UnrecognizedRecord(f"a wire tool call id must be a string, got {call_id!r}")
    return make_tool_call(call_id, name, fn.get("arguments"), source="wire")


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of a tool call, as a part of a ``tool``/``user`` message.

    ``call_id`` references the call (``None`` when the format pairs by name or position);
    ``name`` is the tool name where the format gives one; ``content`` is the result exactly as
    recorded (text or provider parts); ``is_error`` flags a failed call.
    """

    call_id: str | None
    content: Any
    is_error: bool = False
    name: str | None = None
    extras: Mapping[str, Any] = field(default_factory=_no_extras, compare=False)
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if type(self.extras) is not MappingProxyType:
            object.__setattr__(self, "extras", _freeze(self.extras))

    @property
    def text(self) -> str:
        """The result as text: a string as is, provider text parts joined, else compact JSON."""
        return content_text(self.content)


def content_text(content: Any) -> str:
    """Flatten recorded content (a string, or a list of text parts) to text for display."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, Mapping):
                text = part.get("text")
                if isinstance(text, str):
                    pieces.append(text)
                else:
                    pieces.append(_json_text(part))
            else:
                pieces.append(_json_text(part))
        return "\n".join(pieces)
    return _json_text(content)


def _json_text(value: Any) -> str:
    try:
        return dumps_json(value)
    except ToolArgumentsError:
        if json_depth(value, MAX_DEPTH) > MAX_DEPTH:  # stored before the depth limit
            return deep_dumps(value)
        return repr(value)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class TextPart:
    """Visible text; ``extras`` keeps sibling fields a replay must echo (a Gemini signature)."""

    text: str
    extras: Mapping[str, Any] = field(default_factory=_no_extras, compare=False)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """Model reasoning, with its opaque signature when the provider gave one."""

    text: str
    signature: str | None = None
    extras: Mapping[str, Any] = field(default_factory=_no_extras, compare=False)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ServerToolCall:
    """A provider-side tool invocation (Anthropic ``server_tool_use``, Responses
    ``tool_search_call``, Bedrock server tools): recognised, kept, never a client call."""

    id: str | None
    name: str
    input: Any
    source: str | None = None


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class OpaquePart:
    """Any other part (images, server tool results, reasoning items, ...) kept as recorded."""

    kind: str
    data: Any


Part = (
    TextPart | ThinkingPart | ToolCall | InvalidToolCall | ToolResult | ServerToolCall | OpaquePart
)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Message:
    """One normalized message: a role and its ordered parts.

    ``source`` names the record shape recognised (``openai_chat``, ``anthropic`` ...);
    ``message_id`` is the provider's or transcript's id for the message when it had one (the
    idempotency key of appends); ``extras`` keeps message-level opaque fields for replay and
    ``metadata`` the transcript envelope (timestamps, sidechain flags, parent ids ...).
    """

    role: Role
    parts: tuple[Part, ...] = ()
    source: str | None = field(default=None, compare=False)
    message_id: str | None = None
    extras: Mapping[str, Any] = field(default_factory=_no_extras, compare=False)
    metadata: Mapping[str, Any] = field(default_factory=_no_extras, compare=False)

    def __post_init__(self) -> None:
        if type(self.parts) is not tuple:
            object.__setattr__(self, "parts", tuple(self.parts))
        if type(self.extras) not in _FROZEN:
            object.__setattr__(self, "extras", _freeze(self.extras))
        if type(self.metadata) not in _FROZEN:
            object.__setattr__(self, "metadata", _freeze(self.metadata))

    @property
    def text(self) -> str:
        """The visible text parts joined by newlines."""
        return "\n".join(p.text for p in self.parts if type(p) is TextPart)

    @property
    def tool_calls(self) -> tuple[ToolCall | InvalidToolCall, ...]:
        """The client tool calls, valid and invalid, in order."""
        return tuple(p for p in self.parts if type(p) is ToolCall or type(p) is InvalidToolCall)

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        return tuple(p for p in self.parts if type(p) is ToolResult)

    @property
    def server_tool_calls(self) -> tuple[ServerToolCall, ...]:
        return tuple(p for p in self.parts if type(p) is ServerToolCall)
