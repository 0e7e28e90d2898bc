"""Message records of every shape, read into one typed :class:`~store.core.model.Message`.

:func:`normalize_message` reads one message-bearing record:

* chat messages ``{role, content, tool_calls?, function_call?, tool_call_id?}``: OpenAI Chat,
  Mistral, Cohere v2 (``tool_plan``), Ollama native, legacy ``function_call`` and
  ``role: "function"`` results, and older symbol-/camelCase-keyed records of the same;
* typed-block messages ``{role, content: [{type, ...}]}``: Anthropic (``tool_use``,
  ``tool_result``, ``thinking``, ``server_tool_use``), pi/Kward blocks (``toolCall``);
* Responses items (``message``, ``function_call``, ``function_call_output``,
  ``custom_tool_call[_output]``, ``reasoning``, server ``*_call`` items);
* Gemini contents ``{role, parts: [...]}`` in camelCase or snake_case;
* Bedrock Converse messages ``{role, content: [{text} | {toolUse} | {toolResult} ...]}``;
* transcript lines: Claude Code project JSONL, Codex rollout JSONL, Kward JSONL records.

Records of a known kind that carry no message (a Codex ``session_meta`` line, a Kward header)
raise :class:`NotAMessage`; anything unrecognised raises ``UnrecognizedRecord`` saying what was
found. :func:`normalize_payload` reads whole response or request bodies (``choices``,
``output``, ``candidates``, ``messages``, ``input``, ``contents``) into a list of messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.core.errors import NotAMessage, UnrecognizedRecord
from store.core.keys import canonical_keys
from store.core.model import (
    Message,
    OpaquePart,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolResult,
)
from store.normalize.calls import read_call

__all__ = ["NotAMessage", "normalize_message", "normalize_payload"]


_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "tool_result": "tool",
    "toolresult": "tool",
    "ipython": "tool",
}
_CHAT_STRUCTURAL = frozenset(
    {"role", "content", "tool_calls", "function_call", "tool_call_id", "name", "tool_name", "id"}
)
_RESPONSES_RESULT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
_CLAUDE_CODE_KEYS = ("uuid", "parent_uuid", "is_sidechain", "session_id", "timestamp",
                     "request_id", "cwd", "version", "git_branch", "user_type", "tool_use_result",
                     "is_meta", "is_compact_summary")


def normalize_message(record: Mapping[str, Any]) -> Message:
    """Read one message record of any known shape (see the module docstring); tool names
    stay as recorded (aliases apply on read: :meth:`AliasTable.apply_message`)."""
    if type(record) is not dict and not isinstance(record, Mapping):
        raise UnrecognizedRecord(f"a message must be an object, got {type(record).__name__}")
    return _read_message(record)


def _read_message(record: Mapping[str, Any]) -> Message:
    top, _ = canonical_keys(record)
    kind = top.get("type")
    if "payload" in top and isinstance(kind, str) and "timestamp" in top:
        return _read_codex_line(top)
    inner = top.get("message")
    if inner is not None and isinstance(inner, Mapping) and "role" not in top:
        if kind in ("user", "assistant", "system") or "uuid" in top or "session_id" in top:
            return _read_claude_code_line(top, inner)
        if kind == "message":
            return _read_kward_message(top, inner)
        if kind is None:  # a response envelope such as Cohere v2 or Ollama native
            return _read_message(inner)
    if isinstance(kind, str) and "role" not in top:
        special = _read_typed_record(top, kind)
        if special is not None:
            return special
    role = top.get("role")
    if role is None:
        if "parts" in top:
            return _read_gemini(top, "user")
        raise UnrecognizedRecord(
            f"not a message: found {'type ' + repr(kind) + ' with ' if kind else ''}"
            f"keys {sorted(str(k) for k in record)}"
        )
    if not isinstance(role, str) or role.lower() not in _ROLES:
        raise UnrecognizedRecord(f"unknown message role {role!r}")
    norm = _ROLES[role.lower()]
    if "parts" in top and "content" not in top:
        return _read_gemini(top, norm)
    content = top.get("content")
    if isinstance(content, list) and content and _is_bedrock_blocks(content):
        return _read_bedrock(top, norm)
    if role == "toolResult":
        return _read_pi_tool_result(top)
    return _read_chat(top, norm)


# -- chat-shaped messages (OpenAI Chat family, Anthropic / Responses typed blocks) ---------------


def _read_chat(top: Mapping[str, Any], role: Role) -> Message:
    parts: list[Part] = []
    extras: dict[str, Any] = {}
    source = "openai_chat"
    content = top.get("content")
    if role == "tool":
        return _read_chat_result(top, content)
    if isinstance(content, str):
        if content:
            parts.append(TextPart(content))
    elif isinstance(content, list):
        source = _read_blocks(content, parts)
    elif content is not None:
        raise UnrecognizedRecord(f"message content must be text or a list, got {content!r}")
    calls = top.get("tool_calls")
    if calls is not None:
        if isinstance(calls, Mapping):  # a single call object, as some older writers stored it
            calls = [calls]
        if not isinstance(calls, list):
            raise UnrecognizedRecord(f"tool_calls must be a list, got {type(calls).__name__}")
        for call in calls:
            parts.append(read_call(call))
    legacy = top.get("function_call")
    if legacy is not None and isinstance(legacy, Mapping):
        legacy_keys, _ = canonical_keys(legacy)
        if legacy_keys.get("name"):
            parts.append(read_call({"function_call": legacy}))
            source = "legacy_function_call"
        else:  # Snowflake sends an empty legacy object beside real calls: keep it, don't call it
            extras["function_call"] = legacy
    for key, value in top.items():
        if key not in _CHAT_STRUCTURAL or key == "name":
            extras[key] = value
    if role == "assistant" and "tool_plan" in top:
        source = "cohere"
    return Message(role, tuple(parts), source, _message_id(top), extras)


def _read_chat_result(top: Mapping[str, Any], content: Any) -> Message:
    """A ``tool``/``function`` role message: one result, its content kept as recorded."""
    call_id = top.get("tool_call_id")
    name = top.get("name")
    if name is None:
        name = top.get("tool_name")
    source = "openai_chat"
    if call_id is None and top.get("role") == "function":
        source = "legacy_function_call"
    elif call_id is None and name is not None:
        source = "ollama"
    extras = {k: v for k, v in top.items() if k not in _CHAT_STRUCTURAL and k != "is_error"}
    result = ToolResult(call_id, content, bool(top.get("is_error", False)), name, extras, source)
    return Message("tool", (result,), source, _message_id(top))


def _message_id(top: Mapping[str, Any]) -> str | None:
    value = top.get("id")
    return value if isinstance(value, str) and value else None


def _read_blocks(blocks: list[Any], parts: list[Part]) -> str:
    """Read typed content blocks into parts; returns the source shape recognised."""
    source = "openai_chat"
    for block in blocks:
        if isinstance(block, str):
            parts.append(TextPart(block))
            continue
        if not isinstance(block, Mapping):
            raise UnrecognizedRecord(f"a content block must be an object, got {block!r}")
        b, _ = canonical_keys(block)
        kind = b.get("type")
        if kind == "toolCall":  # pi/Kward spell the block type in camelCase
            kind = "tool_call"
        if kind in ("text", "input_text", "output_text"):
            text = b.get("text")
            parts.append(TextPart(text if isinstance(text, str) else ""))
            if kind != "text":
                source = "openai_responses"
        elif kind in ("thinking", "redacted_thinking", "reasoning"):
            thinking = b.get("thinking", b.get("text", b.get("data", "")))
            signature = b.get("signature")
            parts.append(ThinkingPart(
                thinking if isinstance(thinking, str) else "",
                signature if isinstance(signature, str) else None,
                {k: v for k, v in b.items() if k not in ("thinking", "signature", "text")},
            ))
        elif kind in ("tool_use", "tool_call", "server_tool_use", "mcp_tool_use"):
            if kind == "tool_call":  # pi/Kward blocks: {type: toolCall, id, name, arguments}
                b = {k: v for k, v in b.items() if k != "type"}
            parts.append(read_call(b))
            source = "anthropic" if kind != "tool_call" else "kward"
        elif kind == "tool_result":
            parts.append(ToolResult(
                b.get("tool_use_id"), b.get("content"), bool(b.get("is_error", False)),
                extras={k: v for k, v in b.items()
                        if k not in ("type", "tool_use_id", "content", "is_error")},
                source="anthropic",
            ))
            source = "anthropic"
        elif isinstance(kind, str):
            parts.append(OpaquePart(kind, block))
        else:
            raise UnrecognizedRecord(f"a content block without a type: keys {sorted(b)}")
    return source


# -- Responses items and typed transcript records ------------------------------------------------


def _read_typed_record(top: Mapping[str, Any], kind: str) -> Message | None:
    if kind in ("function_call", "custom_tool_call"):
        return Message("assistant", (read_call(top),), "openai_responses", None)
    if kind in _RESPONSES_RESULT_TYPES:
        extras = {k: v for k, v in top.items() if k not in ("type", "call_id", "output")}
        result = ToolResult(
            top.get("call_id"), top.get("output"), False, None, extras, "openai_responses"
        )
        return Message("tool", (result,), "openai_responses", _message_id(top))
    if kind == "reasoning":
        return Message("assistant", (OpaquePart("reasoning", dict(top)),), "openai_responses",
                       _message_id(top))
    if kind == "message":  # a Responses message item (no role would be odd: reject below)
        return None
    if kind == "tool_execution_end":  # Kward: the result of a call, with display name and args
        result = ToolResult(
            top.get("tool_call_id"), top.get("result"), bool(top.get("is_error", False)),
            top.get("tool_name"),
            {k: v for k, v in top.items()
             if k not in ("type", "tool_call_id", "result", "is_error", "tool_name")},
            "kward",
        )
        return Message("tool", (result,), "kward", _message_id(top))
    if kind in ("compaction", "branch_summary"):  # Kward: a summary fed back as a user message
        summary = top.get("summary")
        return Message("user", (TextPart(summary if isinstance(summary, str) else ""),),
                       "kward", _message_id(top), metadata={"kward_type": kind})
    if kind == "system" and "uuid" in top:  # a Claude Code system line (hook output, notices)
        content = top.get("content")
        metadata = {key: top[key] for key in _CLAUDE_CODE_KEYS if key in top}
        return Message("system", (TextPart(content if isinstance(content, str) else ""),),
                       "claude_code", top.get("uuid"), metadata=metadata)
    if kind in ("session", "leaf", "label", "session_info", "summary", "session_meta",
                "turn_context", "event_msg", "file-history-snapshot"):
        raise NotAMessage(f"a {kind!r} record carries no message")
    if kind.endswith("_call") or kind.endswith("_output") or kind.endswith("_result"):
        call = read_call(top) if kind.endswith("_call") else None
        part: Part = call if call is not None else OpaquePart(kind, dict(top))
        return Message("assistant", (part,), "openai_responses", _message_id(top))
    return None


def _read_codex_line(top: Mapping[str, Any]) -> Message:
    kind = top.get("type")
    payload = top.get("payload")
    if kind != "response_item" or not isinstance(payload, Mapping):
        raise NotAMessage(f"a Codex {kind!r} line carries no message")
    try:
        inner = _read_message(payload)
    except NotAMessage:
        raise
    except UnrecognizedRecord as exc:
        item = payload.get("type")
        raise NotAMessage(f"a Codex {item!r} response item carries no message ({exc})") from None
    metadata = {"timestamp": top.get("timestamp")}
    return Message(inner.role, inner.parts, "codex", inner.message_id, inner.extras, metadata)


def _read_claude_code_line(top: Mapping[str, Any], inner: Mapping[str, Any]) -> Message:
    msg = _read_message(inner)
    metadata = {key: top[key] for key in _CLAUDE_CODE_KEYS if key in top}
    provider_id = msg.message_id
    if provider_id is not None:
        metadata["provider_message_id"] = provider_id
    uuid = top.get("uuid")
    return Message(msg.role, msg.parts, "claude_code",
                   uuid if isinstance(uuid, str) else provider_id, msg.extras, metadata)


def _read_kward_message(top: Mapping[str, Any], inner: Mapping[str, Any]) -> Message:
    msg = _read_message(inner)
    metadata = {k: top[k] for k in ("parent_id", "timestamp") if k in top}
    return Message(msg.role, msg.parts, "kward", _message_id(top) or msg.message_id,
                   msg.extras, metadata)


def _read_pi_tool_result(top: Mapping[str, Any]) -> Message:
    result = ToolResult(
        top.get("tool_call_id"), top.get("content"), bool(top.get("is_error", False)),
        top.get("tool_name"), source="kward",
    )
    return Message("tool", (result,), "kward", _message_id(top))


# -- Gemini and Bedrock ---------------------------------------------------------------------------


def _read_gemini(top: Mapping[str, Any], role: Role) -> Message:
    raw_parts = top.get("parts")
    if not isinstance(raw_parts, list):
        raise UnrecognizedRecord(f"Gemini content parts must be a list, got {raw_parts!r}")
    parts: list[Part] = []
    for raw in raw_parts:
        if not isinstance(raw, Mapping):
            raise UnrecognizedRecord(f"a Gemini part must be an object, got {raw!r}")
        p, _ = canonical_keys(raw)
        if "function_call" in p:
            parts.append(read_call(raw))
        elif "function_response" in p:
            body = _result_body(p["function_response"], "a Gemini functionResponse")
            parts.append(ToolResult(
                body.get("id"), body.get("response"), False, body.get("name"),
                {k: v for k, v in p.items() if k != "function_response"}, "gemini",
            ))
        elif "text" in p:
            text = p["text"] if isinstance(p["text"], str) else ""
            if p.get("thought"):
                parts.append(ThinkingPart(text, p.get("thought_signature"), dict(p)))
            else:
                # a signature on a text part must be echoed too: keep every sibling key
                parts.append(TextPart(text, {k: v for k, v in p.items() if k != "text"}))
        else:
            parts.append(OpaquePart(next(iter(p), "empty"), dict(raw)))
    return Message(role, tuple(parts), "gemini", None,
                   {k: v for k, v in top.items() if k not in ("role", "parts")})


def _result_body(value: Any, what: str) -> Mapping[str, Any]:
    """A provider's result object, keys in snake_case; anything else is unrecognized."""
    if not isinstance(value, Mapping):
        raise UnrecognizedRecord(f"{what} must be an object, got {value!r}")
    body, _ = canonical_keys(value)
    return body


def _is_bedrock_blocks(content: list[Any]) -> bool:
    first = content[0]
    return isinstance(first, Mapping) and "type" not in first and bool(
        first.keys() & {"text", "toolUse", "toolResult", "reasoningContent", "tool_use",
                        "tool_result", "reasoning_content", "image", "document"}
    )


def _read_bedrock(top: Mapping[str, Any], role: Role) -> Message:
    parts: list[Part] = []
    for raw in top["content"]:
        if not isinstance(raw, Mapping):
            raise UnrecognizedRecord(f"a Bedrock content block must be an object, got {raw!r}")
        b, _ = canonical_keys(raw)
        if "tool_use" in b:
            parts.append(read_call(raw))
        elif "tool_result" in b:
            body = _result_body(b["tool_result"], "a Bedrock toolResult")
            parts.append(ToolResult(
                body.get("tool_use_id"), body.get("content"), body.get("status") == "error",
                None, {k: v for k, v in body.items() if k not in ("tool_use_id", "content")},
                "bedrock",
            ))
        elif "text" in b and isinstance(b["text"], str):
            parts.append(TextPart(b["text"]))
        elif "reasoning_content" in b:
            parts.append(OpaquePart("reasoning_content", dict(raw)))
        else:
            parts.append(OpaquePart(next(iter(b), "empty"), dict(raw)))
    return Message(role, tuple(parts), "bedrock", None,
                   {k: v for k, v in top.items() if k not in ("role", "content")})


# -- whole bodies ---------------------------------------------------------------------------------


def normalize_payload(payload: Any) -> list[Message]:
    """Read a whole response or request body (or a list of records) into messages.

    Accepts OpenAI Chat completions (``choices``), Responses (``output`` / ``input`` items),
    Anthropic and Gemini (``candidates`` / ``contents``) bodies, Bedrock (``output.message``),
    Cohere v2 and Ollama (``message``), request bodies with ``messages`` (plus an optional
    ``system``), and plain lists of message records. Records of a known kind that carry no
    message are skipped; anything unrecognised raises.
    """
    if isinstance(payload, list):
        out: list[Message] = []
        for record in payload:
            try:
                out.append(normalize_message(record))
            except NotAMessage:
                continue
        return out
    if not isinstance(payload, Mapping):
        raise UnrecognizedRecord(f"a payload must be an object or a list, got {payload!r}")
    body, _ = canonical_keys(payload)
    for key, inner in (("choices", "message"), ("candidates", "content")):
        if key not in body:
            continue
        entries = body[key]
        if not isinstance(entries, list):
            raise UnrecognizedRecord(f"{key!r} must be a list, got {type(entries).__name__}")
        out = []
        for entry in entries:
            if not isinstance(entry, Mapping) or not isinstance(entry.get(inner), Mapping):
                raise UnrecognizedRecord(f"each of {key!r} needs a {inner!r} object, got {entry!r}")
            record = entry[inner]
            if key == "candidates" and "role" not in record:
                record = {"role": "model", **record}
            out.append(normalize_message(record))
        return out
    for key in ("output", "input", "contents", "messages"):
        items = body.get(key)
        if isinstance(items, list):
            return normalize_payload(items)
        if key == "output" and isinstance(items, Mapping) and "message" in items:
            return [normalize_message(items["message"])]
    if "error" in body and "role" not in body:
        raise NotAMessage("an API error body carries no message")
    return [normalize_message(payload)]
