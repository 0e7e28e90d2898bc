"""Qwen Code: ``~/.qwen/projects/<cwd>/chats/<session id>.jsonl`` (the agent's definition).

``ChatRecord`` lines: a ``uuid`` and ``parentUuid`` (as Claude Code's), a Gemini ``Content``
message, Qwen's own ``tool_result``, ``systemPayload``, ``usageMetadata``, ``toolCallResult``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "QWEN_CODE_KINDS", "is_qwen_code_record"]

#: The record types Qwen Code writes.
QWEN_CODE_KINDS = frozenset({"user", "assistant", "tool_result", "system"})


def is_qwen_code_record(top: Mapping[str, Any]) -> bool:
    """Whether a record (top level in plain keys) is a Qwen Code ``ChatRecord``: a ``uuid``
    and a Gemini ``Content`` message (``parts``), or Qwen's own fields (``tool_result``
    type, ``systemPayload``, ``usageMetadata``, ``toolCallResult``)."""
    if "uuid" not in top or top.get("type") not in QWEN_CODE_KINDS:
        return False
    message = top.get("message")
    if isinstance(message, Mapping) and isinstance(message.get("parts"), list):
        return True
    return (top.get("type") == "tool_result" or "system_payload" in top
            or "usage_metadata" in top or "tool_call_result" in top)


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A ``ChatRecord`` proves it (above Claude Code's claim on a ``uuid`` line)."""
    for sample in first:
        if sample.top is not None and is_qwen_code_record(sample.top):
            return STRONG
    return 0.0


AGENT = AgentDefinition(
    name="qwen-code",
    display_name="Qwen Code",
    package=__name__,
    order=40,
    detect=detect,
    # QWEN_RUNTIME_DIR replaces ~/.qwen for runtime output (storage.ts getRuntimeBaseDir);
    # chats are in projects/<cwd>/chats, in tmp/<hash>/chats before that.
    homes=(AgentFolders("qwen-code", "QWEN_RUNTIME_DIR", ".qwen",
                        ("projects/*/chats", "tmp/*/chats")),),
    lines=True,
    kinds={
        "user": "message",
        "assistant": "message",
        "tool_result": "message (a tool result, with its status)",
        "system": "skipped: system records (a compression's history, a custom title)",
    },
    records={
        "calls": "yes",
        "results": "yes",
        "errors": "yes (`toolCallResult.status`)",
        "times": "yes",
        "cwd": "yes",
        "model": "yes",
        "title": "custom title, else first prompt",
        "usage": "yes (`usageMetadata`)",
        "lineage": "subagents (`agentId`), sub-sessions (`parent_session`)",
        "not recorded": (
            "system prompt, tool definitions, compressed history (kept only as a skipped record)"
        ),
    },
)
