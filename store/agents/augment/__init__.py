"""Augment's Auggie CLI: ``~/.augment/sessions/<session id>.json``, one session each, the
document rewritten whole after every exchange (the definition).

Closed source: learnt from the published ``@augmentcode/auggie`` 0.36.0 package (its bundled
``augment.mjs``: the session store and the agent state it saves) and Augment's public docs
(docs.augmentcode.com, ``auggie session``); see docs/agents/augment.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "BACKUP", "BUILTIN_SUBAGENTS", "is_augment_session"]

#: Auggie's built-in sub-agents (each one's tool is ``sub-agent-<name>``).
BUILTIN_SUBAGENTS = ("general-purpose", "research", "explore", "plan", "code",
                     "context-gathering", "validate", "auggie-guide")

#: ``<session id>-backup<n>.json``: a copy Auggie saves before rewriting a session (the
#: ``SessionBackupStore``), not a session of its own.
BACKUP = re.compile(r"^.+-backup\d+\.json$")


def is_augment_session(value: Any) -> bool:
    """An Auggie session: ``sessionId``, ``created``, ``modified`` and a ``chatHistory`` list
    (what Auggie's own loader requires of it)."""
    return (isinstance(value, Mapping) and isinstance(value.get("chatHistory"), list)
            and isinstance(value.get("sessionId"), str) and "created" in value
            and "modified" in value)


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A session document proves it in a ``sessions`` folder (``~/.augment/sessions``)."""
    if not first or not is_augment_session(first[0].raw):
        return 0.0
    if path is not None and path.parent.name == "sessions" and not BACKUP.match(path.name):
        return PROVEN
    return STRONG


def _backups(folder: str, names: Sequence[str]) -> set[str]:
    """A session's backups beside it (``<id>-backup<n>.json``: older copies of one session)."""
    if Path(folder).name != "sessions":
        return set()
    return {n for n in names if BACKUP.match(n) and f"{n.rsplit('-backup', 1)[0]}.json" in names}


AGENT = AgentDefinition(
    name="augment",
    display_name="Augment (Auggie CLI)",
    package=__name__,
    order=281,
    formats=("augment", "auggie"),
    detect=detect,
    aside=_backups,
    # os.homedir()/.augment on every system (Windows: %USERPROFILE%\.augment); only the
    # `--augment-cache-dir` option moves it, no variable does.
    homes=(AgentFolders("augment", None, ".augment", ("sessions",)),),
    records={
        "calls": ("response nodes of type 5 (`tool_use`: `tool_use_id`, `tool_name`, "
                  "`input_json`, exact arguments)"),
        "results": "the next exchange's request nodes of type 1 (`tool_result_node`) by id",
        "errors": "`tool_result_node.is_error`; a call no later exchange answers → no result",
        "times": ("`created` / `modified` → session start and end; each exchange's "
                  "`finishedAt` → its messages' time"),
        "cwd": ("the first request's IDE state node (`workspace_folders[0]` "
                "`repository_root` / `folder_root`), as `auggie session list` reads it"),
        "model": "each exchange's `model_id`, else `agentState.modelId`",
        "title": "`customTitle`, `title`, else the first prompt",
        "usage": ("response nodes of type 10 (`token_usage`: input, output, cache read, cache "
                  "creation) per exchange; credits / USD of type 9 nodes kept in metadata"),
        "lineage": ("`subAgents` (recorded inline when enabled) → a session each, linked to "
                    "the `sub-agent-*` call; `parentConversationId` → parent session"),
        "not recorded": ("tool definitions and the system prompt; a time per tool call in "
                         "older files; a subagent's own session id"),
    },
    tools={
        "launch-process": "bash", "bash": "bash",
        "read-process": "bash_io", "write-process": "bash_io", "kill-process": "bash_io",
        "list-processes": "bash_io",
        "view": "read", "read": "read", "view-range-untruncated": "read",
        "search-untruncated": "grep",
        "save-file": "write", "write": "write",
        "str-replace-editor": "edit", "edit": "edit", "remove-files": "edit",
        "apply_patch": "patch",
        "grep-search": "grep", "grep": "grep", "codebase-retrieval": "grep",
        "find": "glob", "ls": "list",
        "web-fetch": "web_fetch", "web-search": "web_search",
        "view_tasklist": "todo", "add_tasks": "todo", "update_tasks": "todo",
        "reorganize_tasklist": "todo",
        # The sub-agent tools: `sub-agent` and `sub-agent-<name>` for the built-in agents
        # (a user's own agents' tools keep their names).
        "sub-agent": "task", **{f"sub-agent-{n}": "task" for n in BUILTIN_SUBAGENTS},
        "ask-user": "ask_user",
        "enter-plan-mode": "plan_mode", "exit-plan-mode": "plan_mode",
        "remember": "memory",
    },
)
