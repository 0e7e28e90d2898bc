"""Kilo Code: the VS Code extension's task folders (``api_conversation_history.json`` and
its siblings in ``<editor>/User/globalStorage/kilocode.kilo-code/tasks/<task id>/``), read
by Cline's reader (Kilo Code forked Roo Code, itself a fork of Cline), and the database of
Kilo's CLI and rebuilt extension (2026: a fork of OpenCode), ``~/.local/share/kilo/kilo.db``
in OpenCode's format, read by OpenCode's database reader (the definition).

The database's place is learnt from ``Kilo-Org/kilocode``
``packages/opencode/src/global/index.ts`` @30e1f287 (``app = "kilo"`` below xdg-basedir's
data folder: ``$XDG_DATA_HOME`` or ``~/.local/share`` on every platform) and
``packages/opencode/src/storage/db.ts`` @f10b24fc (``kilo.db``; later builds name a
development channel's ``kilo-<channel>.db`` and honour ``KILO_DB``). Its tables are
OpenCode's, so the file's name tells the two apart (:mod:`store.importers.agentdb`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from store.agents.cline import TASK_KINDS, is_task_file, task_agent
from store.agents.homes import VSCODE_HOMES, AgentFolders
from store.agents.registry import PROVEN, AgentDefinition, DatabaseLayout, Sample

#: The CLI's database (a development channel's ``kilo-<channel>.db``).
DATABASES = ("kilo.db", "kilo-*.db")


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A Kilo Code task folder's main file (told by its name and its storage folder)."""
    if path is not None and is_task_file(path, first) and task_agent(path) == "kilo":
        return PROVEN
    return 0.0


def _tables(tables: Mapping[str, set[str]]) -> bool:
    """OpenCode's tables (the file's name tells Kilo's database from OpenCode's)."""
    return {"session", "message", "part"} <= set(tables)


def _settings(folder: str, files: Sequence[str]) -> set[str]:
    """The CLI's credentials beside its database (never a transcript)."""
    if any(f == "kilo.db" or (f.startswith("kilo-") and f.endswith(".db")) for f in files):
        return {"auth.json", "mcp-auth.json"} & set(files)
    return set()


AGENT = AgentDefinition(
    name="kilo",
    display_name="Kilo Code",
    package=__name__,
    order=244,
    formats=("kilo", "kilo-code"),
    detect=detect,
    # VS Code builds (Code, Insiders, VSCodium, Cursor ...: the ``*``) on Linux, macOS and
    # Windows; VS Code writes the extension id ``kilocode.Kilo-Code`` in lower case.
    homes=(*(AgentFolders("kilo", env, home, ("*/User/globalStorage/kilocode.kilo-code/tasks",))
             for env, home in VSCODE_HOMES),
           # The CLI and the rebuilt extension: xdg-basedir's data folder on every platform
           # (%USERPROFILE%\.local\share\kilo on Windows).
           AgentFolders("kilo", None, ".local/share/kilo", DATABASES, xdg_app="kilo")),
    database=DatabaseLayout(
        {"session": "time_created, id", "message": "time_created, id",
         "part": "message_id, id"}, _tables, "read_kilo_db", file_names=DATABASES),
    aside=_settings,
    kinds=TASK_KINDS,
    records={
        "calls": "native `tool_use`, and XML tool tags in older text",
        "results": "`tool_result`; `[tool] Result:` blocks",
        "errors": "`is_error`; `{\"status\": \"error\" | \"denied\"}`, `<error>`, denied",
        "times": "message `ts`, else `ui_messages.json` requests; the task id's (uuidv7) "
                 "time; `kilo.db`: message `time.created` (ms)",
        "cwd": "environment details' `Current Workspace Directory`; `kilo.db`: session "
               "`directory`",
        "model": "environment details' `<model>`; `kilo.db`: per assistant message",
        "title": "first `<task>`; `kilo.db`: the agent's",
        "usage": "per request (`ui_messages.json` `api_req_started`: tokens, cache, cost); "
                 "`kilo.db`: per assistant message",
        "lineage": "— (`task_metadata.json` holds only `files_in_context`); `kilo.db`: "
                   "subagent sessions (`parent_session`, `parent_call_id`)",
        "not recorded": (
            "a task folder's subtask parent (`new_task` links); `kilo.db`: results of calls "
            "still running"),
    },
    tools={
        "read_command_output": "bash_io", "apply_diff": "edit", "edit_file": "edit",
        "search_and_replace": "edit", "search_replace": "edit", "insert_content": "edit",
        "search_files": "grep", "list_files": "list", "list_code_definition_names": "list",
        "codebase_search": "grep", "new_task": "task", "update_todo_list": "todo",
        "switch_mode": "plan_mode", "new_rule": "write",
        # the CLI's (OpenCode's names; those already canonical need no row)
        "multiedit": "edit", "webfetch": "web_fetch", "websearch": "web_search",
        "todowrite": "todo", "todoread": "todo", "question": "ask_user",
        "plan_enter": "plan_mode", "plan_exit": "plan_mode",
    },
)
