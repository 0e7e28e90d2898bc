"""Anthropic Messages and Bedrock Converse renderers of :mod:`store.replay.render` (domain).

Both are block lists in strictly alternating user/assistant messages, opening with a user
message; each assistant turn's ``tool_use`` / ``toolUse`` blocks are answered by
``tool_result`` / ``toolResult`` blocks at the start of the next user message, in call order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from store.core.model import (
    InvalidToolCall,
    Message,
    OpaquePart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    content_text,
)
from store.replay.common import (
    PLACEHOLDER_USER_TEXT,
    AnyCall,
    Block,
    Native,
    Pairs,
    Turns,
    call_input,
    result_call_id,
    split_system,
)

__all__ = ["render_anthropic", "render_bedrock"]


def render_anthropic(messages: Sequence[Message], native: Native) -> dict[str, Any]:
    """``{"system"?: str, "messages": [...]}`` for the Anthropic Messages API.

    Blocks: ``text`` (never empty), ``tool_use {id, name, input}`` (the parsed object),
    ``tool_result {tool_use_id, content, is_error?}`` (text, or a list of text blocks as
    recorded); replayed to Anthropic itself, ``thinking`` with its signature,
    ``redacted_thinking`` and ``image``/``document`` blocks. Everything else is not sent.
    """
    return _render(messages, native, bedrock=False)


def render_bedrock(messages: Sequence[Message], native: Native) -> dict[str, Any]:
    """``{"system"?: [{"text"}], "messages": [...]}`` for the Bedrock Converse API.

    Blocks: ``text`` (never blank), ``toolUse {toolUseId, name, input}``, ``toolResult
    {toolUseId, content: [{"text"}] | [{"json"}], status}``; replayed to Bedrock itself,
    ``reasoningContent`` and ``image``/``document`` blocks as recorded.
    """
    return _render(messages, native, bedrock=True)


def _anthropic_result(content: Any) -> Any:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in content
    ):
        return [{"type": "text", "text": b["text"]} for b in content]
    return content_text(content)


def _bedrock_result(content: Any) -> list[Block]:
    if isinstance(content, Mapping):
        return [{"json": dict(content)}]
    if isinstance(content, list) and content and all(
        isinstance(b, Mapping) and len(b) == 1 and (
            (isinstance(b.get("text"), str) and bool(b["text"].strip()))
            or isinstance(b.get("json"), Mapping))
        for b in content
    ):
        return [dict(b) for b in content]
    text = content_text(content)
    return [{"text": text if text.strip() else "(no output)"}]


def _render(messages: Sequence[Message], native: Native, bedrock: bool) -> dict[str, Any]:
    system, rest = split_system(messages)
    turns = Turns("user", "assistant")
    pairs = Pairs(rest)
    for i, message in enumerate(rest):
        own = native(message)
        role = "assistant" if message.role == "assistant" else "user"
        j = 0
        for part in message.parts:
            if type(part) is TextPart:
                if part.text.strip() if bedrock else part.text:
                    turns.add(role, {"text": part.text} if bedrock
                              else {"type": "text", "text": part.text})
            elif type(part) is ToolCall or type(part) is InvalidToolCall:
                call_id, arguments = part.id or "", call_input(part)
                turns.add("assistant", {"toolUse": {
                    "toolUseId": call_id, "name": part.name, "input": arguments}} if bedrock
                    else {"type": "tool_use", "id": call_id, "name": part.name,
                          "input": arguments})
            elif type(part) is ToolResult:
                turns.add("user", _result_block(part, pairs.find(i, j), bedrock))
                j += 1
            elif own and type(part) is ThinkingPart and not bedrock:
                if part.extras.get("type") == "redacted_thinking" and part.extras.get("data"):
                    turns.add("assistant", {"type": "redacted_thinking",
                                            "data": part.extras["data"]})
                elif part.signature:
                    turns.add("assistant", {"type": "thinking", "thinking": part.text,
                                            "signature": part.signature})
            elif own and type(part) is OpaquePart and isinstance(part.data, Mapping):
                if bedrock and part.kind == "reasoning_content":
                    turns.add("assistant", dict(part.data))
                elif part.kind in ("image", "document"):
                    turns.add(role, dict(part.data))
    body: dict[str, Any] = {}
    if system:
        body["system"] = [{"text": t} for t in system] if bedrock else "\n\n".join(system)
    if bedrock:
        finished = turns.finish({"text": PLACEHOLDER_USER_TEXT}, lambda b: "toolResult" in b)
    else:
        finished = turns.finish({"type": "text", "text": PLACEHOLDER_USER_TEXT},
                                lambda b: b.get("type") == "tool_result")
    body["messages"] = [{"role": role, "content": blocks} for role, blocks in finished]
    return body


def _result_block(result: ToolResult, call: AnyCall | None, bedrock: bool) -> Block:
    call_id = result_call_id(call, result)
    if bedrock:
        return {"toolResult": {"toolUseId": call_id,
                               "content": _bedrock_result(result.content),
                               "status": "error" if result.is_error else "success"}}
    block: Block = {"type": "tool_result", "tool_use_id": call_id,
                    "content": _anthropic_result(result.content)}
    if result.is_error:
        block["is_error"] = True
    return block
