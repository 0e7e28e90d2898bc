"""Tool definitions in the shape of a provider's request, and a history under the names its
calls were recorded with (domain).

:func:`render_tools` gives the request field that declares the tools for each target
(``tools`` for OpenAI Chat, Responses, Anthropic and Gemini; ``toolConfig`` for Bedrock
Converse), from the definitions recorded with a session. :func:`recorded_names` undoes the
alias table on a history, for an export that must replay exactly what the agent called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from store.core.errors import UsageError
from store.core.model import InvalidToolCall, Message, ToolCall
from store.core.transcript import ToolDefinition
from store.replay.targets import TARGETS, Target

__all__ = ["TOOLS_FIELD", "recorded_names", "render_tools"]

#: The request field each target declares its tools in.
TOOLS_FIELD: dict[Target, str] = {
    "openai-chat": "tools", "openai-responses": "tools", "anthropic": "tools",
    "gemini": "tools", "bedrock": "toolConfig",
}


def render_tools(definitions: Iterable[ToolDefinition], target: Target,
                 rename: Callable[[str], str] | None = None) -> Any:
    """The value of ``TOOLS_FIELD[target]`` declaring ``definitions`` (``rename`` maps each
    recorded name to the name the history uses, e.g. the current name of an alias)."""
    if target not in TARGETS:
        raise UsageError(f"unknown render target {target!r}; expected one of {TARGETS}")
    named = [(rename(d.name) if rename else d.name, d) for d in definitions]
    schema = {"type": "object", "properties": {}}
    if target == "openai-chat":
        return [{"type": "function", "function": {
            "name": n, "description": d.description, "parameters": dict(d.parameters) or schema}}
            for n, d in named]
    if target == "openai-responses":
        return [{"type": "function", "name": n, "description": d.description,
                 "parameters": dict(d.parameters) or schema} for n, d in named]
    if target == "anthropic":
        return [{"name": n, "description": d.description,
                 "input_schema": dict(d.parameters) or schema} for n, d in named]
    if target == "gemini":
        return [{"functionDeclarations": [
            {"name": n, "description": d.description, "parameters": dict(d.parameters) or schema}
            for n, d in named]}]
    return {"tools": [{"toolSpec": {"name": n, "description": d.description,
                                    "inputSchema": {"json": dict(d.parameters) or schema}}}
                      for n, d in named]}


def recorded_names(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every tool call under the name it was recorded with (the alias
    table's renames undone; ``raw_name`` cleared)."""
    out: list[Message] = []
    for message in messages:
        if not any(isinstance(p, ToolCall | InvalidToolCall) and p.raw_name is not None
                   for p in message.parts):
            out.append(message)
            continue
        parts = tuple(replace(p, name=p.recorded_name, raw_name=None)
                      if isinstance(p, ToolCall | InvalidToolCall) and p.raw_name is not None
                      else p for p in message.parts)
        out.append(replace(message, parts=parts))
    return out
