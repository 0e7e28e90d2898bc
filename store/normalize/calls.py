"""Tool-call records of every shape, read into one normalized call.

:func:`normalize_tool_call` reads a single tool-call record in any shape listed in
``wire-formats.md`` and any key spelling (plain, ``:symbol``, camelCase, mixed per level):

* OpenAI Chat / Mistral / Cohere / canonical wire: ``{id, type?, function: {name, arguments}}``
  (``type`` optional, ``arguments`` text, object or absent; ``index`` and other fields kept);
* Ollama native: ``{function: {name, arguments: {...}, index?}, id?}``;
* legacy ``function_call`` and Gemini parts: ``{function_call: {name, arguments | args, id?}}``
  with a sibling ``thought_signature`` kept;
* flat records: ``{id?, name | tool_name, arguments | args | input}`` (legacy ``function_call``
  bodies, Gemini ``functionCall`` bodies, Gemini CLI ``toolCalls`` entries, Kward records);
* Responses items ``function_call`` (``call_id`` is the id; the item ``id`` is kept as
  ``item_id``) and ``custom_tool_call`` (raw text input, kept as ``{"input": <raw>}`` with
  ``format: custom``);
* Anthropic ``tool_use`` blocks and Bedrock ``{tool_use: {tool_use_id, name, input}}``.

Provider-side tools (Anthropic ``server_tool_use``, Responses ``tool_search_call`` and other
``*_call`` items) are recognised and returned as :class:`ServerToolCall` by :func:`read_call`;
:func:`normalize_tool_call` refuses them, since they are not client calls.

Arguments go through the one parser; a failure gives an :class:`InvalidToolCall` with the raw
text kept. Object arguments of a symbol-keyed record lose their keys' colons (a symbol-keyed
Ruby hash); inside arguments nothing else is renamed. Aliases rename the call and keep the raw
name. The call records the shape it was read from in ``source``; everything the record carried
besides the structural keys is kept, verbatim, in ``extras``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from store.core.arguments import loads_json
from store.core.errors import AmbiguousRecord, UnrecognizedRecord
from store.core.keys import canonical_keys, strip_symbol_keys
from store.core.model import InvalidToolCall, ServerToolCall, ToolCall, make_tool_call

__all__ = ["normalize_tool_call", "parse_text_tool_calls", "read_call"]


# Structural keys of each shape; anything else on the record is an extra, kept verbatim.
_FUNCTION_WRAPPER_KEYS = frozenset({"id", "type", "function"})
_FLAT_KEYS = frozenset({"id", "name", "tool_name", "arguments", "args", "input", "type"})
_RESPONSES_KEYS = frozenset({"type", "id", "call_id", "name", "arguments", "input"})
_BLOCK_KEYS = frozenset({"type", "id", "name", "input"})
_SERVER_CALL_TYPES = frozenset({"server_tool_use", "mcp_tool_use"})
_CLIENT_ITEM_TYPES = frozenset({"function_call", "custom_tool_call", "tool_use", "tool_call"})


def normalize_tool_call(record: Mapping[str, Any]) -> ToolCall | InvalidToolCall:
    """Read one client tool-call record of any known shape, with the name as recorded.

    No alias is applied here: the store records raw names and applies its persisted alias
    table when it reads (``load``, audits, the CLI); apply one yourself with
    :meth:`AliasTable.apply <store.tools.names.AliasTable.apply>`.

    Raises ``UnrecognizedRecord`` (saying what was found) for anything that is not a client
    tool call, ``AmbiguousRecord`` when two spellings of one key disagree.
    """
    common = read_common(record) if type(record) is dict else None
    if common is not None:  # hot path: skip the general reader
        return common
    call = read_call(record)
    if isinstance(call, ServerToolCall):
        raise UnrecognizedRecord(
            f"a server-side tool call ({call.source}, name {call.name!r}), not a client tool call"
        )
    return call


def read_call(record: Mapping[str, Any]) -> ToolCall | InvalidToolCall | ServerToolCall:
    """Read one tool-call record literally (no aliasing); server-side tools included."""
    if type(record) is dict:
        fast = read_common(record)
        if fast is not None:
            return fast
    elif not isinstance(record, Mapping):
        raise UnrecognizedRecord(f"a tool call must be an object, got {type(record).__name__}")
    top, symbolic = canonical_keys(record)
    kind = top.get("type")
    if kind is not None and type(kind) is not str:
        raise UnrecognizedRecord(f"not a tool call: 'type' must be a string, got {kind!r}")
    function = top.get("function")
    if isinstance(function, Mapping):
        return _read_function_wrapper(top, function, symbolic)
    if kind in _CLIENT_ITEM_TYPES or kind is None:
        wrapped = top.get("function_call")
        if isinstance(wrapped, Mapping):
            return _read_wrapped(top, wrapped, "function_call", "gemini_function_call", symbolic)
        wrapped = top.get("tool_use")
        if isinstance(wrapped, Mapping):
            return _read_wrapped(top, wrapped, "tool_use", "bedrock_tool_use", symbolic)
        if kind == "function_call" or kind == "custom_tool_call":
            return _read_responses_item(top, kind, symbolic)
        if kind == "tool_use":
            return _read_block(top, symbolic)
        if "name" in top or "tool_name" in top:
            return _read_flat(top, "flat", symbolic, _FLAT_KEYS)
    if isinstance(kind, str) and (kind in _SERVER_CALL_TYPES or kind.endswith("_call")):
        name = top.get("name")
        return ServerToolCall(
            _optional_id(top.get("id"), "id"),
            name if isinstance(name, str) and name else kind,
            top.get("input", top.get("arguments")),
            kind,
        )
    raise UnrecognizedRecord(
        "not a tool call: found "
        + (f"type {kind!r} with " if kind is not None else "")
        + f"keys {sorted(str(k) for k in record)}"
    )


_COMMON_WRAPPER = frozenset({"id", "type", "function"})
_COMMON_FUNCTION = frozenset({"name", "arguments"})
_COMMON_BLOCK = frozenset({"type", "id", "name", "input"})


def read_common(record: dict[str, Any]) -> ToolCall | InvalidToolCall | None:
    """The two commonest shapes with nothing else on them, read without the general machinery:
    canonical/OpenAI ``{id, type, function: {name, arguments}}`` and Anthropic ``tool_use``.
    ``None`` means: use the general reader (which also produces every error message).
    """
    if record.keys() <= _COMMON_WRAPPER:
        function = record.get("function")
        call_id = record.get("id")
        if (
            type(function) is dict
            and function.keys() <= _COMMON_FUNCTION
            and (call_id is None or type(call_id) is str)
            and record.get("type") == "function"
        ):
            return make_tool_call(call_id, function.get("name"),  # type: ignore[arg-type]
                                  function.get("arguments"), source="openai_chat")
    elif record.keys() <= _COMMON_BLOCK and record.get("type") == "tool_use":
        call_id = record.get("id")
        if call_id is None or type(call_id) is str:
            return make_tool_call(call_id, record.get("name"),  # type: ignore[arg-type]
                                  record.get("input"), source="anthropic")
    return None


def _extras(level: Mapping[str, Any], structural: frozenset[str]) -> dict[str, Any] | None:
    if level.keys() <= structural:
        return None
    return {k: v for k, v in level.items() if k not in structural}


def _optional_id(value: object, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise UnrecognizedRecord(f"a tool call {key} must be a string, got {value!r}")


def _name(level: Mapping[str, Any]) -> str:
    name = level.get("name")
    other = level.get("tool_name")
    if name is None:
        name = other
    elif other is not None and other != name:
        raise AmbiguousRecord("name", ("name", "toolName"))
    if not isinstance(name, str) or not name:
        raise UnrecognizedRecord(f"a tool call needs a non-empty name, got {name!r}")
    return name


def _arguments(level: Mapping[str, Any], symbolic: bool) -> object:
    """The one argument value of a level, from ``arguments``, ``args`` or ``input``."""
    found: object = None
    where = ""
    for key in ("arguments", "args", "input"):
        value = level.get(key)
        if value is None:
            continue
        if where and value != found:
            raise AmbiguousRecord("arguments", (where, key))
        found, where = value, key
    if symbolic and isinstance(found, Mapping):
        found = strip_symbol_keys(found)
    return found


def _read_function_wrapper(
    top: Mapping[str, Any], function: Mapping[str, Any], symbolic: bool
) -> ToolCall | InvalidToolCall:
    fn, fn_symbolic = canonical_keys(function)
    extras = _extras(top, _FUNCTION_WRAPPER_KEYS)
    fn_extras = _extras(fn, _FLAT_KEYS)
    if fn_extras:
        extras = {**(extras or {}), "function": fn_extras}
    raw = _arguments(fn, symbolic or fn_symbolic)
    if top.get("type") is not None:
        source = "openai_chat"
    elif symbolic or fn_symbolic:
        source = "symbol_keyed"
    else:  # Mistral leaves out ``type``; Ollama native also sends arguments as an object
        source = "ollama" if isinstance(raw, Mapping) else "openai_chat_untyped"
    return make_tool_call(
        _optional_id(top.get("id"), "id"), _name(fn), raw, extras=extras, source=source
    )


def _read_wrapped(
    top: Mapping[str, Any], inner: Mapping[str, Any], key: str, source: str, symbolic: bool
) -> ToolCall | InvalidToolCall:
    body, body_symbolic = canonical_keys(inner)
    extras = _extras(top, frozenset({key}))
    body_extras = _extras(body, frozenset({"id", "name", "arguments", "args", "input",
                                            "tool_use_id"}))
    if body_extras:
        extras = {**(extras or {}), key: body_extras}
    call_id = body.get("tool_use_id") if key == "tool_use" else body.get("id")
    if key == "function_call" and "args" not in body and "arguments" in body:
        source = "legacy_function_call"
    return make_tool_call(
        _optional_id(call_id, "id"),
        _name(body),
        _arguments(body, symbolic or body_symbolic),
        extras=extras,
        source=source,
    )


def _read_responses_item(
    top: Mapping[str, Any], kind: str, symbolic: bool
) -> ToolCall | InvalidToolCall:
    extras = _extras(top, _RESPONSES_KEYS) or {}
    item_id = top.get("id")
    call_id = top.get("call_id")
    if call_id is None:
        call_id = item_id
    elif item_id is not None:
        extras["item_id"] = item_id
    if kind == "custom_tool_call":
        raw_input = top.get("input")
        extras["format"] = "custom"
        return make_tool_call(
            _optional_id(call_id, "call_id"),
            _name(top),
            {"input": raw_input if raw_input is not None else ""},
            extras=extras,
            source="openai_responses_custom",
        )
    return make_tool_call(
        _optional_id(call_id, "call_id"),
        _name(top),
        _arguments(top, symbolic),
        extras=extras or None,
        source="openai_responses",
    )


def _read_block(top: Mapping[str, Any], symbolic: bool) -> ToolCall | InvalidToolCall:
    return make_tool_call(
        _optional_id(top.get("id"), "id"),
        _name(top),
        _arguments(top, symbolic),
        extras=_extras(top, _BLOCK_KEYS),
        source="anthropic",
    )


def _read_flat(
    top: Mapping[str, Any], source: str, symbolic: bool, structural: frozenset[str]
) -> ToolCall | InvalidToolCall:
    call_id = top.get("id")
    if call_id is None:
        call_id = top.get("call_id")
        structural = structural | {"call_id"}
    return make_tool_call(
        _optional_id(call_id, "id"),
        _name(top),
        _arguments(top, symbolic),
        extras=_extras(top, structural),
        source=source,
    )


_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def parse_text_tool_calls(text: str) -> list[ToolCall | InvalidToolCall]:
    """Read tool calls that an open model wrote as text (inherited open-model formats).

    Accepts Hermes/Qwen ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks, or,
    when there are no tags, the whole text as one raw JSON call (Groq's ``failed_generation``).
    Calls have no id (storage mints one). A tagged block that is not JSON gives an
    ``InvalidToolCall`` with the raw text kept; untagged text that is not a call raises
    ``UnrecognizedRecord``.
    """
    blocks = _TOOL_CALL_TAG.findall(text)
    tagged = bool(blocks)
    if not tagged:
        blocks = [text.strip()]
    calls: list[ToolCall | InvalidToolCall] = []
    for block in blocks:
        try:
            record = loads_json(block)
        except ValueError as exc:
            if not tagged:
                raise UnrecognizedRecord(f"text is not a JSON tool call: {exc}") from None
            calls.append(InvalidToolCall(None, "unknown_tool", block, "invalid_json",
                                         f"tool call arguments are not valid JSON: {exc}",
                                         source="text"))
            continue
        if not isinstance(record, Mapping):
            raise UnrecognizedRecord(f"a text tool call must be a JSON object, got {block!r}")
        call = read_call(record)
        if isinstance(call, ServerToolCall):
            raise UnrecognizedRecord(f"a text tool call names a server-side tool: {block!r}")
        calls.append(replace(call, source="text"))
    return calls
