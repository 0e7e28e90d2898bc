"""Zed: the agent panel's threads, one row each in ``threads/threads.db`` below Zed's data
folder, their payloads zstd-compressed JSON (the agent's definition)."""

from __future__ import annotations

from collections.abc import Mapping

from store.agents.homes import AgentFolders
from store.agents.registry import AgentDefinition, DatabaseLayout

__all__ = ["AGENT"]


def _tables(tables: Mapping[str, set[str]]) -> bool:
    return {"id", "summary", "updated_at", "data_type", "data"} <= tables.get("threads", set())


AGENT = AgentDefinition(
    name="zed",
    display_name="Zed",
    package=__name__,
    order=242,
    # paths::data_dir(): $XDG_DATA_HOME/zed (~/.local/share/zed) on Linux,
    # ~/Library/Application Support/Zed on macOS, %LOCALAPPDATA%\Zed on Windows.
    homes=(AgentFolders("zed", None, ".local/share/zed", ("threads/threads.db",), xdg_app="zed"),
           AgentFolders("zed", None, "Library/Application Support/Zed",
                        ("threads/threads.db",)),
           AgentFolders("zed", "LOCALAPPDATA", "AppData/Local", ("Zed/threads/threads.db",))),
    database=DatabaseLayout({"threads": "created_at, updated_at, id"}, _tables, "read_zed",
                            file_names=("threads.db",), zstd={"threads": "data"}),
    records={
        "calls": "yes (`ToolUse`)",
        "results": "yes (the agent message's `tool_results`)",
        "errors": "`is_error`",
        "times": "thread `created_at` / `updated_at` only",
        "cwd": "thread `folder_paths` (the first project folder)",
        "model": "thread `model`",
        "title": "the agent's (`summary`)",
        "usage": "thread `cumulative_token_usage` (on its last reply)",
        "lineage": "subagent threads (`parent_id`; the `spawn_agent` call from its result)",
        "not recorded": "per-message times, per-request usage beyond each prompt's last "
                        "request (kept in metadata)",
    },
    tools={
        "terminal": "bash", "read_file": "read", "edit_file": "edit",
        "streaming_edit_file": "edit", "write_file": "write", "grep": "grep",
        "find_path": "glob", "list_directory": "list", "fetch": "web_fetch",
        "web_search": "web_search", "spawn_agent": "task", "subagent": "task",
        "thinking": "think", "update_plan": "todo",
    },
)
