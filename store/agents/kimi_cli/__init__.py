"""Kimi CLI: ``~/.kimi/sessions/<project>/<session>/wire.jsonl`` and ``context.jsonl``
(the agent's definition)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "KIMI_CONTEXT_ROLES", "is_kimi_wire_record"]

#: ``context.jsonl`` bookkeeping lines (not messages).
KIMI_CONTEXT_ROLES = frozenset({"_system_prompt", "_checkpoint", "_usage"})


def is_kimi_wire_record(top: Mapping[str, Any]) -> bool:
    """A wire header or a ``{timestamp, message: {type, payload}}`` record."""
    if top.get("type") == "metadata" and "protocol_version" in top:
        return True
    message = top.get("message")
    return (isinstance(top.get("timestamp"), int | float) and isinstance(message, Mapping)
            and isinstance(message.get("type"), str) and "payload" in message
            and "role" not in message)


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A wire record or a ``context.jsonl`` bookkeeping line proves it."""
    for sample in first:
        top = sample.top
        if top is not None and (is_kimi_wire_record(top)
                                or top.get("role") in KIMI_CONTEXT_ROLES):
            return STRONG
    return 0.0


def _kind(record: Any) -> str | None:
    """A wire record's message type, a context line's role."""
    if not isinstance(record, Mapping):
        return None
    message = record.get("message")
    kind = message.get("type") if isinstance(message, Mapping) else record.get(
        "type", record.get("role"))
    return kind if isinstance(kind, str) else None


def _sidecars(folder: str, files: Sequence[str]) -> set[str]:
    """A session's (or subagent's) ``state.json`` / ``meta.json`` beside its logs."""
    if {"wire.jsonl", "context.jsonl"} & set(files):
        return {"state.json", "meta.json"} & set(files)
    return set()


AGENT = AgentDefinition(
    name="kimi-cli",
    display_name="Kimi CLI",
    package=__name__,
    order=50,
    aside=_sidecars,
    detect=detect,
    # KIMI_SHARE_DIR replaces ~/.kimi (share.py get_share_dir).
    homes=(AgentFolders("kimi-cli", "KIMI_SHARE_DIR", ".kimi", ("sessions",)),),
    lines=True,
    kind_of=_kind,
    kinds={
        "metadata": "skipped: the wire header (protocol version)",
        "TurnBegin": "message (a prompt)",
        "SteerInput": "message (a prompt given while the agent ran)",
        "StepBegin": "skipped: a step's start (closes the assistant message)",
        "StepInterrupted": "skipped: a step cut short",
        "ContentPart": "message part (text and thinking of the step's assistant message)",
        "ToolCall": "message part (a call of the step's assistant message)",
        "ToolResult": "message (a tool result)",
        "StatusUpdate": "skipped: the step's token usage (read into its message)",
        "TurnEnd": "skipped: a turn's end",
        "CompactionBegin": "skipped: a compaction's start",
        "CompactionEnd": "skipped: a compaction's end",
        "SubagentEvent": "skipped: a subagent's event (its own files are read)",
        "_system_prompt": "skipped: context.jsonl's system prompt",
        "_checkpoint": "skipped: context.jsonl's checkpoint",
        "_usage": "skipped: context.jsonl's token count",
        "user": "skipped, or message: context.jsonl (read only without a wire.jsonl)",
        "assistant": "skipped, or message: context.jsonl (read only without wire.jsonl)",
        "tool": "skipped, or message: context.jsonl (read only without a wire.jsonl)",
    },
    records={
        "calls": "yes",
        "results": "yes",
        "errors": "yes (`return_value.is_error`)",
        "times": "yes (wire)",
        "cwd": "yes (`kimi.json`)",
        "model": "subagents only (`meta.json`)",
        "title": "custom title, else first prompt",
        "usage": "yes (`StatusUpdate.token_usage`)",
        "lineage": "subagents (`subagents/<id>/`, with the parent's call)",
        "not recorded": (
            "main agent's model, system prompt (only in `context.jsonl`), tool definitions"
        ),
    },
)
