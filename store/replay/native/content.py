"""Parts both writers share: a result's content in each agent's form, JSON text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from store.core.model import Message, OpaquePart, ServerToolCall, ThinkingPart, ToolResult
from store.replay.native.fidelity import Fidelity

__all__ = ["claude_result", "codex_output", "drop_part", "dumps"]


def dumps(value: Any) -> str:
    """Compact JSON text (orjson; the stdlib for integers past 64 bits)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def claude_result(result: ToolResult, fidelity: Fidelity) -> Any:
    """A result's content as a ``tool_result`` block's ``content``: text stays text, text and
    image blocks stay blocks (Responses ``input_text`` becomes ``text``), anything else its
    JSON text."""
    content = result.content
    if content is None or isinstance(content, str):
        return content if isinstance(content, str) else ""
    if isinstance(content, list) and all(isinstance(b, Mapping) for b in content):
        blocks = []
        for block in content:
            kind = block.get("type")
            if kind in ("text", "image"):
                blocks.append(dict(block))
            elif kind in ("input_text", "output_text") and isinstance(block.get("text"), str):
                blocks.append({"type": "text", "text": block["text"]})
            else:
                fidelity.translated[f"a result's {kind} block as JSON text"] += 1
                blocks.append({"type": "text", "text": dumps(block)})
        return blocks
    fidelity.translated["a structured result as JSON text"] += 1
    return dumps(content)


def codex_output(result: ToolResult, fidelity: Fidelity) -> str:
    """A result's content as a ``function_call_output``'s ``output`` (a string): text as it
    is, text blocks joined, anything else its JSON text; images are dropped."""
    content = result.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, Mapping) for b in content):
        texts = []
        for block in content:
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
            else:
                fidelity.dropped[f"a result's {block.get('type')} block (a Codex output "
                                 "is text)"] += 1
        if len(content) > 1:
            fidelity.translated["a result's text blocks joined into one output"] += 1
        return "\n".join(texts)
    fidelity.translated["a structured result as JSON text"] += 1
    return dumps(content)


def drop_part(part: object, message: Message, target: str, fidelity: Fidelity) -> None:
    """Report a part the target's format cannot hold."""
    if isinstance(part, ThinkingPart):
        why = ("its signature is Anthropic's, Codex cannot replay it" if part.signature
               else "reasoning of another provider cannot be replayed")
        fidelity.dropped[f"thinking part ({why})"] += 1
    elif isinstance(part, ServerToolCall):
        fidelity.dropped[f"provider-side tool call {part.name} ({target} cannot run "
                         "another provider's server tools)"] += 1
    elif isinstance(part, OpaquePart):
        fidelity.dropped[f"{part.kind} part of a {message.source or 'stored'} message "
                         f"({target}'s format has no place for it)"] += 1
    else:
        fidelity.dropped[f"{type(part).__name__} part"] += 1
