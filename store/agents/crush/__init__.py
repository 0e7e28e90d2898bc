"""Crush: one SQLite database per project (``<project>/.crush/crush.db``), listed in its
global data folder's ``projects.json`` (the agent's definition)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from store.agents.homes import AgentFolders
from store.agents.registry import AgentDefinition, DatabaseLayout


def _tables(tables: Mapping[str, set[str]]) -> bool:
    return "parts" in tables.get("messages", set()) and "sessions" in tables


def _settings(folder: str, files: Sequence[str]) -> set[str]:
    """Crush's configuration beside its database or its projects list."""
    if "crush.db" in files or "projects.json" in files:
        return {"crush.json", "projects.json"} & set(files)
    return set()


AGENT = AgentDefinition(
    name="crush",
    display_name="Crush",
    package=__name__,
    order=110,
    homes=(AgentFolders("crush", "CRUSH_GLOBAL_DATA", ".local/share/crush", (),
                        xdg_app="crush", project_list="projects.json",
                        project_database="crush.db"),),
    database=DatabaseLayout({"sessions": "created_at, rowid", "messages": "created_at, rowid"},
                            _tables, "read_crush", file_names=("crush.db",)),
    aside=_settings,
    records={
        "calls": "yes",
        "results": "yes (own `tool` rows)",
        "errors": "`is_error`",
        "times": "message `created_at` (s)",
        "cwd": "project folder",
        "model": "per message",
        "title": "the agent's",
        "usage": ("the last request's context (`prompt_tokens`, `completion_tokens`: set, "
                  "not summed) and the session's `cost` -> metadata only"),
        "lineage": "subagent sessions (`parent_session`, `parent_call_id`)",
        "not recorded": "per-message tokens, cache tokens",
    },
)
