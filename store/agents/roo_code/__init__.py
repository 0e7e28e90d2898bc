"""Roo Code: a task's ``api_conversation_history.json`` (or panel) in the VS Code extension's
global storage, read by Cline's reader (Roo Code is a fork of Cline; the definition)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from store.agents.cline import TASK_KINDS, is_task_file, task_agent
from store.agents.homes import VSCODE_HOMES, AgentFolders
from store.agents.registry import PROVEN, AgentDefinition, Sample


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A Roo Code task folder's main file (told by its name and place)."""
    if path is not None and is_task_file(path, first) and task_agent(path) == "roo-code":
        return PROVEN
    return 0.0


AGENT = AgentDefinition(
    name="roo-code",
    display_name="Roo Code",
    package=__name__,
    order=75,
    detect=detect,
    homes=tuple(AgentFolders("roo-code", env, home,
                             ("*/User/globalStorage/rooveterinaryinc.roo-cline/tasks",))
                for env, home in VSCODE_HOMES),
    kinds=TASK_KINDS,
    records={
        "calls": "native `tool_use` (XML tags in older text)",
        "results": "`tool_result`; `[tool] Result:` blocks",
        "errors": "`is_error`; `{\"status\": \"error\" | \"denied\"}`, `<error>`",
        "times": "message `ts`, else `ui_messages.json` requests",
        "cwd": "`history_item.json` `workspace`, environment details",
        "model": "environment details' `<model>`",
        "title": "`history_item.json` `task`",
        "usage": "per request (`ui_messages.json`)",
        "lineage": (
            "`parentTaskId` -> `parent_session`, the parent's `new_task` call -> `parent_call_id`"
        ),
        "not recorded": "the spawning call of a subtask imported while it ran",
    },
)
