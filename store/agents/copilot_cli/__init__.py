"""GitHub Copilot CLI: ``~/.copilot/session-state/<session id>/events.jsonl`` (definition)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "is_copilot_cli_event"]

_PREFIXES = ("session.", "user.", "assistant.", "tool.", "subagent.", "hook.", "skill.",
             "permission.", "system.", "abort")


def is_copilot_cli_event(top: Mapping[str, Any]) -> bool:
    """A Copilot CLI event: a dotted ``type`` of the CLI's families, a ``data`` object and
    one of the envelope's ``id``, ``timestamp``, ``parentId`` (the schema has all three in
    every event; a writer that leaves one out is still read)."""
    kind = top.get("type")
    return (isinstance(kind, str) and kind.startswith(_PREFIXES)
            and isinstance(top.get("data"), Mapping)
            and any(k in top for k in ("id", "timestamp", "parent_id", "parentId")))


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """An event of the CLI's families proves it."""
    for sample in first:
        if sample.top is not None and is_copilot_cli_event(sample.top):
            return STRONG
    return 0.0


def _snapshots(dirs: Sequence[str], files: Sequence[str]) -> set[str]:
    """A session's ``checkpoints`` and ``files`` folders beside its ``events.jsonl``."""
    return {"checkpoints", "files"} & set(dirs) if "events.jsonl" in files else set()


AGENT = AgentDefinition(
    name="copilot-cli",
    display_name="GitHub Copilot CLI",
    package=__name__,
    order=60,
    aside_folders=_snapshots,
    detect=detect,
    # COPILOT_HOME replaces ~/.copilot (the Copilot SDK sets it for the CLI it runs);
    # history-session-state is where versions before 0.0.342 kept sessions.
    homes=(AgentFolders("copilot-cli", "COPILOT_HOME", ".copilot",
                        ("session-state", "history-session-state")),),
    lines=True,
    kinds={
        "session.start": "skipped: the session's id, cwd, model, version (read into it)",
        "session.info": "skipped: the CLI's notices",
        "session.model_change": "skipped: the model (read into the session)",
        "session.title_changed": "skipped: the title (read into the session)",
        "session.shutdown": "skipped: per-model usage totals (read into the session)",
        "user.message": "message",
        "assistant.turn_start": "skipped: a turn's start",
        "assistant.message": "message",
        "assistant.turn_end": "skipped: a turn's end",
        "tool.execution_start": "message part (the call, in the assistant message)",
        "tool.execution_complete": "message (a tool result)",
        "subagent.started": "skipped: a subagent's start (links its session)",
        "subagent.completed": "skipped: a subagent's end",
        "subagent.failed": "skipped: a subagent's failure",
    },
    records={
        "calls": "yes",
        "results": "yes",
        "errors": "yes (`success: false`)",
        "times": "yes",
        "cwd": "yes",
        "model": "yes",
        "title": "first prompt",
        "usage": "output tokens only (`outputTokens`); per-model totals per run in metadata",
        "lineage": "subagents (`agentId`, with the parent's call)",
        "not recorded": (
            "input and cache tokens per response (`assistant.usage` is not persisted), system "
            "prompt, tool definitions"
        ),
    },
)
