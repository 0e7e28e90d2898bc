"""OpenAI renderers of :mod:`store.replay.render`: Chat Completions and Responses (domain)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from store.core.model import (
    InvalidToolCall,
    Message,
    OpaquePart,
    TextPart,
    ToolCall,
    ToolResult,
    content_text,
)
from store.replay.common import AnyCall, Block, Native, Pairs, result_call_id

__all__ = ["render_openai_chat", "render_openai_responses"]


def render_openai_chat(messages: Sequence[Message], native: Native) -> dict[str, Any]:
    """``{"messages": [...]}``: one chat message per message, one ``tool`` message per result.

    A message with calls is an assistant message with ``content`` (its text, or null) and
    ``tool_calls`` whose ``arguments`` is the stored argument text, byte for byte. Thinking,
    server-side calls and opaque parts are not sent (Chat has no request form for them).
    """
    out: list[dict[str, Any]] = []
    pairs = Pairs(messages)
    for i, message in enumerate(messages):
        calls = message.tool_calls
        has_text = any(type(p) is TextPart for p in message.parts)
        for j, result in enumerate(message.tool_results):
            out.append({"role": "tool", "tool_call_id": result_call_id(pairs.find(i, j), result),
                        "content": content_text(result.content)})
        if calls:
            out.append({
                "role": "assistant",
                "content": message.text if has_text else None,
                "tool_calls": [
                    {"id": call.id or "", "type": "function",
                     "function": {"name": call.name, "arguments": call.arguments_text}}
                    for call in calls
                ],
            })
        elif has_text:
            out.append({"role": "user" if message.role == "tool" else message.role,
                        "content": message.text})
    return {"messages": out}


def render_openai_responses(messages: Sequence[Message], native: Native) -> dict[str, Any]:
    """``{"input": [...]}``: message, function_call and function_call_output items.

    Text parts become ``input_text`` (``output_text`` for the assistant) inside message items;
    each call a ``function_call`` item with the stored argument text; each result a
    ``function_call_output`` item with its text. Replayed to the same provider, calls carry
    their item ``id``, custom tool calls stay ``custom_tool_call`` items, and ``reasoning``
    items are echoed as stored (each only when an item it produced follows it).
    """
    items: list[dict[str, Any]] = []
    pairs = Pairs(messages)
    custom: set[str] = set()
    for i, message in enumerate(messages):
        j = 0
        own = native(message)
        role = "user" if message.role == "tool" else message.role
        kind = "output_text" if role == "assistant" else "input_text"
        texts: list[Block] = []
        for part in message.parts:
            if type(part) is TextPart:
                if part.text:
                    texts.append({"type": kind, "text": part.text})
                continue
            if type(part) is ToolCall or type(part) is InvalidToolCall:
                _flush(items, role, texts)
                items.append(_call_item(part, own, custom))
            elif type(part) is ToolResult:
                _flush(items, role, texts)
                call_id = result_call_id(pairs.find(i, j), part)
                j += 1
                item_type = ("custom_tool_call_output" if call_id in custom
                             else "function_call_output")
                items.append({"type": item_type, "call_id": call_id,
                              "output": content_text(part.content)})
            elif (type(part) is OpaquePart and part.kind == "reasoning" and own
                  and isinstance(part.data, Mapping)):
                _flush(items, role, texts)
                items.append(dict(part.data))
        _flush(items, role, texts)
    kept = [item for n, item in enumerate(items)
            if item.get("type") != "reasoning" or _produced(items[n + 1:])]
    return {"input": kept}


def _flush(items: list[dict[str, Any]], role: str, texts: list[Block]) -> None:
    if texts:
        items.append({"type": "message", "role": role, "content": list(texts)})
        texts.clear()


def _produced(after: list[dict[str, Any]]) -> bool:
    """Whether a reasoning item is followed by what it produced: a call or assistant text."""
    for item in after:
        if item.get("type") == "reasoning":
            continue
        return item.get("type") in ("function_call", "custom_tool_call") or (
            item.get("type") == "message" and item.get("role") == "assistant")
    return False


def _call_item(call: AnyCall, own: bool, custom: set[str]) -> dict[str, Any]:
    call_id = call.id or ""
    item: dict[str, Any]
    if own and isinstance(call, ToolCall) and call.extras.get("format") == "custom":
        custom.add(call_id)
        raw = call.input.get("input", "")
        item = {"type": "custom_tool_call", "call_id": call_id, "name": call.name,
                "input": raw if isinstance(raw, str) else content_text(raw)}
    else:
        item = {"type": "function_call", "call_id": call_id, "name": call.name,
                "arguments": call.arguments_text}
    item_id = call.extras.get("item_id")
    if own and isinstance(item_id, str) and item_id:
        item["id"] = item_id
    return item
