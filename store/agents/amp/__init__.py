"""Amp (Sourcegraph): the thread files older versions of the CLI and editor extension wrote
locally, ``~/.local/share/amp/threads/T-<uuid>.json`` (the agent's definition).

Amp's client is published only as a bundled package (``@sourcegraph/amp`` on npm); the
thread format is learnt from its documentation and from open readers of these files (see the
reader's docstring and docs/agents/amp.md); only what the files show unambiguously is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "is_amp_thread"]

_THREAD_ID = re.compile(r"\AT-[0-9a-fA-F-]{8,}\Z")


def is_amp_thread(document: Any) -> bool:
    """A thread document: ``{id: "T-<uuid>", messages: [...], created | v}``."""
    return (isinstance(document, Mapping) and isinstance(document.get("id"), str)
            and bool(_THREAD_ID.match(document["id"]))
            and isinstance(document.get("messages"), list)
            and ("created" in document or "v" in document))


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A thread document proves it."""
    return STRONG if any(is_amp_thread(s.raw) for s in first) else 0.0


def _kind(record: Any) -> str | None:
    return "thread" if is_amp_thread(record) else None


AGENT = AgentDefinition(
    name="amp",
    display_name="Amp",
    package=__name__,
    order=243,
    detect=detect,
    # XDG data folder on Linux and macOS; %USERPROFILE%\.local\share\amp on Windows.
    homes=(AgentFolders("amp", "AMP_DATA_DIR", ".local/share/amp", ("threads",),
                        xdg_app="amp"),),
    kind_of=_kind,
    kinds={"thread": "messages (each `messages[]` entry; `usage` per assistant message)"},
    records={
        "calls": "`tool_use` blocks of assistant messages → calls",
        "results": "`tool_result` blocks (`toolUseID`, `run.result`) → linked by id",
        "errors": "`run.status` `error` / `cancelled` / `rejected-by-user` → error results; "
                  "no `run` result → no result",
        "times": "thread `created` (ms), messages' `meta.sentAt`, `usage.timestamp`",
        "cwd": "`env.initial.trees[0].uri` (`file://`)",
        "model": "`usage.model` per assistant message",
        "title": "the thread's `title`, else the first prompt",
        "usage": "per assistant message (`usage`: input, output, cache creation and read; "
                 "`credits` kept as recorded in the message metadata)",
        "lineage": "— (the Task tool's subagent runs inside the call: its result)",
        "not recorded": "threads kept only on Amp's server (newer versions); the subagent's "
                        "own steps",
    },
    tools={
        "Bash": "bash", "Read": "read", "edit_file": "edit", "create_file": "write",
        "Grep": "grep", "glob": "glob", "list_directory": "list", "read_web_page": "web_fetch",
        "web_search": "web_search", "todo_write": "todo", "todo_read": "todo", "Task": "task",
        "undo_edit": "edit", "codebase_search_agent": "grep",
    },
)
