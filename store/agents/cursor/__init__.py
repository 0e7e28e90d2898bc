"""Cursor (the editor): its agent's chats ("composers") in the editor's global key-value
store, ``User/globalStorage/state.vscdb``, table ``cursorDiskKV`` (the agent's definition;
closed source, read as far as the rows show unambiguously). The ``cursor-agent`` command
line keeps its chats elsewhere: :mod:`store.agents.cursor_cli`."""

from __future__ import annotations

from collections.abc import Mapping

from store.agents.homes import VSCODE_HOMES, AgentFolders
from store.agents.registry import AgentDefinition, DatabaseLayout

__all__ = ["AGENT", "KEY_RANGES"]

#: The rows read of ``cursorDiskKV``: the chats and their messages, by key range (the
#: table's unique index on ``key`` answers a range; ``LIKE`` is case-blind in SQLite and
#: would scan a store that can hold gigabytes of other keys).
KEY_RANGES = ("(key >= 'composerData:' AND key < 'composerData;') OR "
              "(key >= 'bubbleId:' AND key < 'bubbleId;')")


def _tables(tables: Mapping[str, set[str]]) -> bool:
    # VS Code and its other forks keep ``ItemTable`` only; ``cursorDiskKV`` is Cursor's.
    return {"key", "value"} <= tables.get("cursorDiskKV", set())


AGENT = AgentDefinition(
    name="cursor",
    display_name="Cursor",
    package=__name__,
    order=250,
    # The editor's user data: ~/.config/Cursor (Linux; $XDG_CONFIG_HOME), ~/Library/
    # Application Support/Cursor (macOS), %APPDATA%\Cursor (Windows).
    homes=tuple(AgentFolders("cursor", env, home, ("Cursor/User/globalStorage/state.vscdb",))
                for env, home in VSCODE_HOMES),
    database=DatabaseLayout({"cursorDiskKV": "key"}, _tables, "read_cursor",
                            file_names=("state.vscdb",), where={"cursorDiskKV": KEY_RANGES}),
    records={
        "calls": "a bubble's `toolFormerData` (`name`, `toolCallId`, `rawArgs` / `params`)",
        "results": "`toolFormerData.result`",
        "errors": "`toolFormerData.status` (`error`, `cancelled` ...); a call still "
                  "`loading` has no result",
        "times": "composer `createdAt` / `lastUpdatedAt`; each bubble's `createdAt`",
        "cwd": "a bubble's `workspaceProjectDir`, else its first `workspaceUris` folder",
        "model": "composer `modelConfig.modelName`",
        "title": "composer `name`",
        "usage": "each bubble's `tokenCount` (input and output only)",
        "lineage": "`subComposerIds` (a subagent's composer; its `task` call when the call "
                   "names it)",
        "not recorded": "cache tokens, cost; the system prompt; what the editor's own "
                        "secrets keys hold (never read)",
    },
    # The tool names of `toolFormerData.name` (model-facing names of the agent's prompts,
    # and the editor's `_v2` names).
    tools={
        "run_terminal_cmd": "bash", "run_terminal_command": "bash",
        "run_terminal_command_v2": "bash", "read_file": "read", "read_file_v2": "read",
        "edit_file": "edit", "edit_file_v2": "edit", "search_replace": "edit",
        "reapply": "edit", "write": "write", "list_dir": "list", "list_dir_v2": "list",
        "grep": "grep", "grep_search": "grep", "ripgrep_search": "grep",
        "ripgrep_raw_search": "grep", "codebase_search": "grep", "file_search": "glob",
        "glob_file_search": "glob", "web_search": "web_search", "fetch": "web_fetch",
        "todo_write": "todo", "todo_read": "todo", "create_plan": "todo", "task": "task",
        "task_v2": "task", "edit_notebook": "notebook", "ask_question": "ask_user",
        "switch_mode": "plan_mode",
    },
)
