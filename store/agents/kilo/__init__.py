"""Kilo Code: the VS Code extension's task folders (``api_conversation_history.json`` and
its siblings in ``<editor>/User/globalStorage/kilocode.kilo-code/tasks/<task id>/``), read
by Cline's reader (Kilo Code forked Roo Code, itself a fork of Cline; the definition).

Kilo's rebuilt extension and its CLI (since 2026) keep their sessions in an OpenCode-format
database (``~/.local/share/kilo/kilo.db``): not read yet (see docs/agents/kilo.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from store.agents.cline import is_task_file, task_agent
from store.agents.homes import VSCODE_HOMES, AgentFolders
from store.agents.registry import PROVEN, AgentDefinition, Sample


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A Kilo Code task folder's main file (told by its name and its storage folder)."""
    if path is not None and is_task_file(path, first) and task_agent(path) == "kilo":
        return PROVEN
    return 0.0


AGENT = AgentDefinition(
    name="kilo",
    display_name="Kilo Code",
    package=__name__,
    order=244,
    formats=("kilo", "kilo-code"),
    detect=detect,
    # VS Code builds (Code, Insiders, VSCodium, Cursor ...: the ``*``) on Linux, macOS and
    # Windows; VS Code writes the extension id ``kilocode.Kilo-Code`` in lower case.
    homes=tuple(AgentFolders("kilo", env, home,
                             ("*/User/globalStorage/kilocode.kilo-code/tasks",))
                for env, home in VSCODE_HOMES),
    kinds={
        "user": "message (a task's API history)",
        "assistant": "message (a task's API history)",
        "say": "message, or skipped: a panel entry (a task with no API history)",
        "ask": "message, or skipped: a panel entry (a task with no API history)",
    },
    records={
        "calls": "native `tool_use`, and XML tool tags in older text",
        "results": "`tool_result`; `[tool] Result:` blocks",
        "errors": "`is_error`; `{\"status\": \"error\" | \"denied\"}`, `<error>`, denied",
        "times": "message `ts`, else `ui_messages.json` requests; the task id's (uuidv7) time",
        "cwd": "environment details' `Current Workspace Directory`",
        "model": "environment details' `<model>`",
        "title": "first `<task>`",
        "usage": "per request (`ui_messages.json` `api_req_started`: tokens, cache, cost)",
        "lineage": "— (`task_metadata.json` holds only `files_in_context`)",
        "not recorded": (
            "a subtask's parent (`new_task` links); the newer extension's and CLI's sessions "
            "(`kilo.db`, OpenCode's format) are not read yet"),
    },
    tools={
        "read_command_output": "bash_io", "apply_diff": "edit", "edit_file": "edit",
        "search_and_replace": "edit", "search_replace": "edit", "insert_content": "edit",
        "search_files": "grep", "list_files": "list", "list_code_definition_names": "list",
        "codebase_search": "grep", "new_task": "task", "update_todo_list": "todo",
        "switch_mode": "plan_mode", "new_rule": "write",
    },
)
