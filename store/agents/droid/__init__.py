"""Factory Droid: ``~/.factory/sessions/[<project slug>/]<session id>.jsonl`` with its
``<session id>.settings.json`` beside it (the agent's definition).

Droid's source is closed: the format is learnt from Factory's public documentation
(docs.factory.ai: the CLI reference, custom droids' tool categories) and from what open
readers of these files document about it (see the reader's docstring and
docs/agents/droid.md); only what the files show unambiguously is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "DROID_KINDS", "SETTINGS_SUFFIX", "is_droid_record"]

#: The record types a Droid session file holds.
DROID_KINDS = frozenset({"session_start", "message", "todo_state", "compaction_state"})

#: The sidecar beside each session file: the session's model, provider and token totals.
SETTINGS_SUFFIX = ".settings.json"


def is_droid_record(top: Mapping[str, Any]) -> bool:
    """A ``session_start`` header (``id`` and ``cwd`` or a title), or a ``message`` line
    ``{type: message, id, timestamp, message: {role, content: [...]}}`` with none of Claude
    Code's envelope (``uuid``, ``sessionId``)."""
    kind = top.get("type")
    if kind == "session_start":
        return isinstance(top.get("id"), str) and (
            "cwd" in top or "title" in top or "session_title" in top)
    if kind == "message" and "uuid" not in top and "session_id" not in top:
        message = top.get("message")
        return (isinstance(message, Mapping) and isinstance(message.get("content"), list)
                and isinstance(top.get("id"), str) and "timestamp" in top)
    return False


def _in_factory_sessions(path: Path) -> bool:
    parts = path.parts
    return any(a == ".factory" and b == "sessions" for a, b in zip(parts, parts[1:],
                                                                   strict=False))


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A ``session_start`` header proves it; a ``message`` line of Droid's shape does in
    ``.factory/sessions`` (elsewhere the shape alone is not enough to claim the file)."""
    for sample in first:
        top = sample.top
        if top is None or not is_droid_record(top):
            continue
        if top.get("type") == "session_start" or (path is not None
                                                  and _in_factory_sessions(path)):
            return STRONG
    return 0.0


def _settings(folder: str, files: Sequence[str]) -> set[str]:
    """Each session's ``<id>.settings.json`` (read with ``<id>.jsonl``); below
    ``.factory/sessions`` every settings file (a session that wrote no line yet)."""
    names = set(files)
    factory = _in_factory_sessions(Path(folder) / "x")
    return {n for n in names if n.endswith(SETTINGS_SUFFIX)
            and (factory or n.removesuffix(SETTINGS_SUFFIX) + ".jsonl" in names)}


AGENT = AgentDefinition(
    name="droid",
    display_name="Factory Droid",
    package=__name__,
    order=241,
    formats=("droid", "factory-droid"),
    detect=detect,
    # Droid keeps its sessions below ~/.factory on every platform (%USERPROFILE%\.factory on
    # Windows); no variable moves the folder.
    homes=(AgentFolders("droid", None, ".factory", ("sessions",)),),
    lines=True,
    aside=_settings,
    kinds={
        "session_start": "skipped: the session's header (id, title, cwd, owner -> the session)",
        "message": "message (text, thinking, `tool_use` and `tool_result` blocks)",
        "todo_state": "skipped: the todo list's state (the `TodoWrite` calls keep it)",
        "compaction_state": "message (a system message holding the compaction's summary)",
    },
    records={
        "calls": "`tool_use` blocks of `message` lines → calls",
        "results": "`tool_result` blocks of the next user line → linked by `tool_use_id`",
        "errors": "`is_error` → error results; a call with no result block → no result",
        "times": "every line's `timestamp` → message times, session start and end",
        "cwd": "`session_start.cwd` → session cwd (the project folder's slug kept in metadata)",
        "model": "`.settings.json` `model` (as recorded), else `message.model`",
        "title": "`session_start.title` / `sessionTitle`, else the first real prompt",
        "usage": (
            "session totals (`.settings.json` `tokenUsage`) -> counted once, on the first "
            "reply (also kept as recorded in the metadata)"),
        "lineage": "Task subagents' own sessions (`# Task Tool Invocation` title) tagged",
        "not recorded": (
            "per-response tokens, cost or credits; a subagent session's parent and spawning "
            "call; who approved a command (only the model's own `riskLevel`)"),
    },
    tools={
        "Read": "read", "LS": "list", "Execute": "bash", "Edit": "edit", "MultiEdit": "edit",
        "Create": "write", "Grep": "grep", "Glob": "glob", "ApplyPatch": "patch",
        "FetchUrl": "web_fetch", "WebSearch": "web_search", "TodoWrite": "todo",
        "Task": "task", "AskUser": "ask_user", "ExitSpecMode": "plan_mode",
    },
)
