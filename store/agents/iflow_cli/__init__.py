"""iFlow CLI (a Gemini CLI fork by iFlow AI): ``~/.iflow/projects/<project>/session-<uuid>.jsonl``,
one JSON object per line in Claude Code's envelope (the definition).

Closed source (the ``iflow-ai/iflow-cli`` repository holds only its README and installers;
the service closed on 2026-04-17). Learnt from the published CLI's bundle as
``The-Sunder-islands/iflow-cli-ce`` keeps it split into modules (``modules/app/auth/
vUi_iflow-auth.js``: the history manager and its JSON-lines storage; ``entry_code.js``: what
is recorded when), @be76597; see docs/agents/iflow-cli.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "is_iflow_line"]


def is_iflow_line(top: Mapping[str, Any] | None) -> bool:
    """A line of iFlow's history: Claude Code's envelope (``uuid``, ``sessionId``,
    ``userType``) with iFlow's own session ids, ``session-<uuid>``."""
    if top is None or "uuid" not in top or "user_type" not in top:
        return False
    sid = top.get("session_id")
    return isinstance(sid, str) and sid.startswith("session-")


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """iFlow's lines prove it below ``.iflow/projects`` (``$IFLOW_HOME/projects``); elsewhere
    their ``session-`` ids are still surer than Claude Code's envelope rule."""
    if not any(is_iflow_line(s.top) for s in first):
        return 0.0
    if path is not None and path.parent.parent.name == "projects":
        return PROVEN
    return STRONG


def _kind(record: Any) -> str | None:
    if not isinstance(record, Mapping):
        return None
    if record.get("isMeta") is True:
        return "meta"
    if record.get("isCompactSummary") is True:
        return "compact-summary"
    kind = record.get("type")
    return kind if isinstance(kind, str) else None


AGENT = AgentDefinition(
    name="iflow-cli",
    display_name="iFlow CLI",
    package=__name__,
    order=282,
    formats=("iflow-cli", "iflow"),
    detect=detect,
    # $IFLOW_HOME, else <home>/.iflow on every system (Windows: %USERPROFILE%\.iflow).
    homes=(AgentFolders("iflow-cli", "IFLOW_HOME", ".iflow", ("projects",)),),
    lines=True,
    # Read whole each time (not from where the last read stopped): a line repeating the calls
    # of earlier lines is told only by having read those lines.
    kind_of=_kind,
    kinds={
        "user": "message (a prompt, or a tool result line)",
        "assistant": "message (its text and tool_use blocks; a call written again is read once)",
        "compact-summary": "message (iFlow's compression summary, kept as a system message)",
        "meta": "skipped: a caveat written for the model after a compression",
    },
    records={
        "calls": "assistant `tool_use` blocks (Gemini CLI's tool names, exact arguments)",
        "results": "`tool_result` lines by `tool_use_id` (`toolUseResult` kept beside them)",
        "errors": ("not recorded: iFlow writes only successful results, so a failed or "
                   "cancelled call has no result"),
        "times": "every line's `timestamp` → message times, session start and end",
        "cwd": "the lines' `cwd`",
        "model": "`message.model` (iFlow's model ids: `qwen3-coder-plus`, `glm-4.6` ...)",
        "title": "the first prompt (no title is recorded)",
        "usage": ("`message.usage` in non-interactive runs (`iflow -p`); interactive runs "
                  "write zeros: no usage"),
        "lineage": "— (subagents' conversations are not written to the history)",
        "not recorded": ("errors; usage of interactive runs; the system prompt; a title; "
                         "subagents' own messages"),
    },
    tools={
        "run_shell_command": "bash", "read_file": "read", "read_many_files": "read",
        "image_read": "read", "write_file": "write", "replace": "edit", "multi_edit": "edit",
        "glob": "glob", "search_file_content": "grep", "list_directory": "list",
        "web_fetch": "web_fetch", "web_search": "web_search", "todo_write": "todo",
        "todo_read": "todo", "task": "task", "ask_user_question": "ask_user",
        "save_memory": "memory", "exit_plan_mode": "plan_mode",
    },
)
