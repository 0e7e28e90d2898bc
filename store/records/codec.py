"""Messages to stored rows and back (domain: stdlib + orjson only).

Contract: a message is stored as its ordered parts, each written as canonical JSON, except
that tool calls and tool results are written as references (``{"type": "tool_call",
"index": i}``) to their own rows, because audits query those rows. Decoding the same rows
gives back an equal message (``decode_parts(encode_message(m).parts_json, calls, results)``
has the parts of ``m`` in order), with each call rebuilt from its stored wire text.

A tool call's row keeps the canonical wire record as exact text (the recorded id, even when
empty or missing, and the recorded name), the parser's status and error, and the provider
extras; the id used in the session (a minted one when the provider gave none) lives beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from store.core.arguments import dumps_json, loads_json
from store.core.errors import RecordError, ToolArgumentsError
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
    make_tool_call,
)
from store.normalize.calls import read_call, read_common

__all__ = [
    "EncodedCall",
    "EncodedMessage",
    "EncodedResult",
    "decode_call",
    "decode_parts",
    "decode_result",
    "encode_call",
    "encode_chat_record",
    "encode_message",
    "part_from_record",
    "part_record",
    "minted_call_id",
]


def minted_call_id(position: int, index: int) -> str:
    """The deterministic id of a call whose provider gave none: unique in its session."""
    return f"call_ts{position}x{index}"


@dataclass(frozen=True, slots=True)
class EncodedCall:
    index: int
    call: ToolCall | InvalidToolCall
    wire_json: str
    status: str
    error: str | None
    arguments: dict[str, Any] | None
    extras_json: str | None


@dataclass(frozen=True, slots=True)
class EncodedResult:
    index: int
    result: ToolResult
    content_json: str
    extras_json: str | None


@dataclass(frozen=True, slots=True)
class EncodedMessage:
    text: str
    parts_json: str
    extras_json: str | None
    metadata_json: str | None
    calls: tuple[EncodedCall, ...]
    results: tuple[EncodedResult, ...]


def _optional_json(value: Mapping[str, Any]) -> str | None:
    return dumps_json(dict(value)) if value else None


def encode_call(index: int, call: ToolCall | InvalidToolCall) -> EncodedCall:
    """One call's row values; raises ``RecordError`` when a value cannot be stored exactly."""
    wire = dumps_json(call.to_wire())
    if isinstance(call, ToolCall):
        return EncodedCall(index, call, wire, call.status, None, call.input,
                           _optional_json(call.extras))
    return EncodedCall(index, call, wire, call.error_kind, call.error_message, None,
                       _optional_json(call.extras))


def encode_message(parts: Sequence[Part], extras: Mapping[str, Any],
                   metadata: Mapping[str, Any]) -> EncodedMessage:
    """Row values of a message (see the module docstring)."""
    try:
        return _encode(parts, extras, metadata)
    except ToolArgumentsError as exc:
        detail = str(exc).split(", got ", 1)[-1]
        raise RecordError(f"message cannot be stored exactly: it holds {detail}") from exc


_CHAT_KEYS = frozenset({"role", "content", "tool_calls"})
_TOOL_KEYS = frozenset({"role", "content", "tool_call_id"})
_CHAT_ROLES = frozenset({"user", "assistant", "system"})


def encode_chat_record(record: dict[str, Any]) -> tuple[Message, EncodedMessage] | None:
    """The commonest records (OpenAI Chat ``{role, content[, tool_calls]}`` with text content
    and canonical calls, and ``{role: "tool", tool_call_id, content}``) straight to the message
    and its row values: exactly what ``normalize_message`` then :func:`encode_message` give
    (a test holds them equal), without the general reader's shape detection. ``None``: not
    such a record, or one the general path must judge (it also words every error)."""
    role = record.get("role")
    keys = record.keys()
    try:
        if role == "tool":
            if not keys <= _TOOL_KEYS:
                return None
            call_id = record.get("tool_call_id")
            if call_id is not None and type(call_id) is not str:
                return None
            content = record.get("content")
            result = ToolResult(call_id, content, False, None, EMPTY_EXTRAS, "openai_chat")
            encoded = EncodedMessage("", _RESULT_PARTS, None, None, (), (
                EncodedResult(0, result, dumps_json(content), None),))
            return Message("tool", (result,), "openai_chat", None, EMPTY_EXTRAS,
                           EMPTY_EXTRAS), encoded
        if isinstance(role, dict | list) or role not in _CHAT_ROLES or not keys <= _CHAT_KEYS:
            return None
        content = record.get("content")
        parts: list[Part] = []
        records: list[dict[str, Any]] = []
        text = ""
        if type(content) is str:
            if content:
                parts.append(TextPart(content))
                records.append({"type": "text", "text": content})
                text = content
        elif content is not None:
            return None
        calls: list[EncodedCall] = []
        listed = record.get("tool_calls")
        if listed is not None:
            if type(listed) is not list:
                return None
            for item in listed:
                call = read_common(item) if type(item) is dict else None
                if call is None:
                    return None
                parts.append(call)
                records.append({"type": "tool_call", "index": len(calls)})
                calls.append(encode_call(len(calls), call))
        encoded = EncodedMessage(text, dumps_json(records), None, None, tuple(calls), ())
        return Message(role, tuple(parts), "openai_chat", None, EMPTY_EXTRAS,
                       EMPTY_EXTRAS), encoded
    except ToolArgumentsError:
        return None  # the general path raises the worded error


_RESULT_PARTS = '[{"type":"tool_result","index":0}]'


def _encode(parts: Sequence[Part], extras: Mapping[str, Any],
            metadata: Mapping[str, Any]) -> EncodedMessage:
    encoded: list[dict[str, Any]] = []
    calls: list[EncodedCall] = []
    results: list[EncodedResult] = []
    texts: list[str] = []
    for part in parts:
        if isinstance(part, ToolCall | InvalidToolCall):
            calls.append(encode_call(len(calls), part))
            encoded.append({"type": "tool_call", "index": len(calls) - 1})
        elif isinstance(part, ToolResult):
            results.append(EncodedResult(
                len(results), part, dumps_json(part.content), _optional_json(part.extras)
            ))
            encoded.append({"type": "tool_result", "index": len(results) - 1})
        else:
            if isinstance(part, TextPart):
                texts.append(part.text)
            encoded.append(part_record(part))
    return EncodedMessage(
        "\n".join(texts), dumps_json(encoded), _optional_json(extras), _optional_json(metadata),
        tuple(calls), tuple(results),
    )


def decode_call(
    call_id: str,
    wire_json: str,
    status: str,
    error: str | None,
    extras_json: str | None,
    source: str | None,
    minted: bool,
) -> ToolCall | InvalidToolCall:
    """Rebuild a call from its row: the stored wire text is the source of truth.

    No aliasing here (the caller applies its table). A minted id replaces the recorded one,
    which stays in ``extras["provider_id"]``. Rows that older writers stored with other key
    spellings, or with arguments as an object, are read through the normalizer.
    """
    wire = loads_json(wire_json)
    function = wire.get("function") if type(wire) is dict else None
    if (
        type(function) is dict
        and wire.keys() <= _WIRE_KEYS
        and function.keys() <= _FUNCTION_KEYS
        and type(function.get("name")) is str
    ):
        name: str = function["name"]
        raw: object = function.get("arguments")
        recorded_id = wire.get("id")
        extras_seen: dict[str, Any] = {}
    else:
        legacy = read_call(wire)
        if isinstance(legacy, ServerToolCall):
            raise RecordError(f"stored call {call_id!r} is a server-side tool call")
        name = legacy.recorded_name
        raw = legacy.input if isinstance(legacy, ToolCall) else legacy.arguments_text
        recorded_id = legacy.id
        extras_seen = dict(legacy.extras)
    extras: dict[str, Any] | None = loads_json(extras_json) if extras_json else None
    if extras_seen:
        extras = {**extras_seen, **(extras or {})}
    if not minted and isinstance(recorded_id, str):
        call_id = recorded_id  # exact (the PostgreSQL column holds NUL as U+FFFD)
    if minted:
        extras = dict(extras or {})
        extras["provider_id"] = recorded_id
        extras["id_minted"] = True
    frozen = extras or EMPTY_EXTRAS
    if status in ("ok", "empty") or not isinstance(raw, str):
        return make_tool_call(call_id, name, raw, extras=frozen, source=source)
    return InvalidToolCall(call_id, name, raw, status, error or "", None, frozen,  # type: ignore[arg-type]
                           source)


_WIRE_KEYS = frozenset({"id", "type", "function"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})


def decode_result(call_id: str | None, content_json: str, is_error: bool, name: str | None,
                  extras_json: str | None, source: str | None) -> ToolResult:
    extras = loads_json(extras_json) if extras_json else EMPTY_EXTRAS
    if _NUL_EXACT in extras:  # the exact id and name of a PostgreSQL row (store.db.writing.writer)
        extras = dict(extras)
        exact = extras.pop(_NUL_EXACT)
        call_id, name = exact["call_id"], exact["name"]
    return ToolResult(call_id, loads_json(content_json), is_error, name, extras, source)


_NUL_EXACT = "\x00exact"


def decode_parts(
    parts_json: str,
    calls: Mapping[int, ToolCall | InvalidToolCall],
    results: Mapping[int, ToolResult],
) -> tuple[Part, ...]:
    """The ordered parts of a stored message, with its call and result rows put back."""
    out: list[Part] = []
    for item in loads_json(parts_json):
        kind = item["type"]
        if kind == "tool_call":
            out.append(calls[item["index"]])
        elif kind == "tool_result":
            out.append(results[item["index"]])
        else:
            out.append(part_from_record(item))
    return tuple(out)


def part_record(part: TextPart | ThinkingPart | ServerToolCall | OpaquePart) -> dict[str, Any]:
    """The one record form of a part that has no row of its own (text, thinking, server
    calls, opaque parts): stored in ``messages.parts_json`` and written by the JSONL export."""
    if isinstance(part, TextPart):
        item: dict[str, Any] = {"type": "text", "text": part.text}
    elif isinstance(part, ThinkingPart):
        item = {"type": "thinking", "text": part.text, "signature": part.signature}
    elif isinstance(part, ServerToolCall):
        return {"type": "server_tool_call", "id": part.id, "name": part.name,
                "input": part.input, "source": part.source}
    else:
        return {"type": "opaque", "kind": part.kind, "data": part.data}
    if part.extras:
        item["extras"] = dict(part.extras)
    return item


def part_from_record(item: Mapping[str, Any]) -> TextPart | ThinkingPart | ServerToolCall | \
        OpaquePart:
    """The part a :func:`part_record` describes."""
    kind = item["type"]
    if kind == "text":
        return TextPart(item["text"], item.get("extras") or EMPTY_EXTRAS)
    if kind == "thinking":
        return ThinkingPart(item["text"], item.get("signature"),
                            item.get("extras") or EMPTY_EXTRAS)
    if kind == "server_tool_call":
        return ServerToolCall(item["id"], item["name"], item["input"], item["source"])
    return OpaquePart(item["kind"], item["data"])
