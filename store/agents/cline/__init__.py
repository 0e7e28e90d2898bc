"""Cline: a task's ``api_conversation_history.json`` with its sibling files (the VS Code
extension, older CLI tasks) and Cline SDK ``<id>.messages.json`` sessions (definition)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import VSCODE_HOMES, AgentFolders
from store.agents.registry import PROVEN, STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "FORK_STORAGE", "HISTORY_FILE", "TASK_FILES", "TASK_KINDS", "UI_FILE",
           "is_cline_sdk_document", "is_task_file", "task_agent"]

HISTORY_FILE = "api_conversation_history.json"


UI_FILE = "ui_messages.json"


#: A task's main file: its API history, else (only ``ui_messages.json`` and
#: ``history_item.json``, as Roo Code leaves some tasks) its panel.
TASK_FILES = frozenset({HISTORY_FILE, UI_FILE})


#: Forks of Cline whose task folders Cline's reader reads, told by their extension's
#: storage folder (VS Code writes the extension id in lower case): agent name by folder.
FORK_STORAGE = {"kilocode.kilo-code": "kilo"}


def task_agent(path: Path) -> str:
    """``roo-code`` for a Roo Code task folder (``history_item.json`` beside the history, or a
    ``rooveterinaryinc.roo-cline`` storage folder), a fork's name for a task in its storage
    folder (:data:`FORK_STORAGE`: Kilo Code), else ``cline``."""
    for part in path.parts:
        fork = FORK_STORAGE.get(part.lower())
        if fork is not None:
            return fork
    if (path.parent / "history_item.json").is_file():
        return "roo-code"
    return "roo-code" if any("roo-cline" in part.lower() for part in path.parts) else "cline"


def is_cline_sdk_document(top: Mapping[str, Any]) -> bool:
    """True for a Cline SDK ``<id>.messages.json`` document (keys in snake case)."""
    return (isinstance(top.get("messages"), list) and "version" in top
            and ("agent" in top or "updated_at" in top) and "project_hash" not in top)


def is_task_file(path: Path, first: Sequence[Sample]) -> bool:
    """A task's main file: its API history (a JSON list), else its panel beside
    ``history_item.json`` (as Roo Code leaves some tasks)."""
    return (path.name in TASK_FILES and len(first) == 1 and isinstance(first[0].raw, list)
            and (path.name == HISTORY_FILE or (path.parent / "history_item.json").is_file()))


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A Cline task folder's main file (by its name and place) or an SDK session document."""
    if path is not None and is_task_file(path, first):
        return PROVEN if task_agent(path) == "cline" else 0.0
    for sample in first:
        if sample.top is not None and is_cline_sdk_document(sample.top):
            return STRONG
    return 0.0


_SIBLINGS = frozenset({"ui_messages.json", "task_metadata.json", "history_item.json",
                       "context_history.json", "settings.json"})


def task_siblings(folder: str, names: Sequence[str]) -> set[str]:
    """The files of a folder the walk leaves to their session's main file: a task's files
    beside ``api_conversation_history.json``, Roo Code's ``tasks/_index.json``, and an SDK
    session's manifest, ``hooks.jsonl`` and compaction file beside ``<id>.messages.json``."""
    found: set[str] = set()
    if HISTORY_FILE in names:
        found |= _SIBLINGS & set(names)
    elif UI_FILE in names and "history_item.json" in names:  # the panel is the main file
        found |= (_SIBLINGS - {UI_FILE}) & set(names)
    if Path(folder).name == "tasks" and "_index.json" in names:
        found.add("_index.json")
    stems = {n.removesuffix(".messages.json") for n in names if n.endswith(".messages.json")}
    if stems:
        found |= {n for n in names if n == "hooks.jsonl" or n.endswith(".compaction.json")
                  or n.removesuffix(".json") in stems}
    return found


#: What a task folder's records are and become (Cline's, and its forks' Roo Code and Kilo Code).
TASK_KINDS: Mapping[str, str] = {
    "user": "message (a task's API history)",
    "assistant": "message (a task's API history)",
    "say": "message, or skipped: a panel entry (a task with no API history)",
    "ask": "message, or skipped: a panel entry (a task with no API history)",
}


AGENT = AgentDefinition(
    name="cline",
    display_name="Cline",
    package=__name__,
    order=70,
    aside=task_siblings,
    detect=detect,
    # The CLI's data folder (SDK sessions, older CLI tasks), then the VS Code extension's
    # global storage in every VS Code build (Code, Code - Insiders, VSCodium, Cursor,
    # Windsurf ...: the ``*``) on Linux, macOS and Windows.
    homes=(AgentFolders("cline", "CLINE_DATA_DIR", ".cline/data", ("sessions", "tasks")),
           *(AgentFolders("cline", env, home,
                          ("*/User/globalStorage/saoudrizwan.claude-dev/tasks",))
             for env, home in VSCODE_HOMES)),
    kinds=TASK_KINDS,
    records={
        "calls": "native `tool_use`, and XML tool tags in older text",
        "results": "`tool_result`; `[tool] Result:` blocks",
        "errors": "`is_error`; `<error>`, denied, not executed",
        "times": "message `ts`, else `ui_messages.json` requests",
        "cwd": "environment details; SDK manifest `cwd`",
        "model": "`modelInfo`, `task_metadata.json`",
        "title": "first `<task>`",
        "usage": "per request (`ui_messages.json` / `metrics`)",
        "lineage": "SDK subagent files",
        "not recorded": (
            "cwd of native-era tasks without environment details; `new_task` links (Cline records"
            " none); the spawning call of an SDK subagent"
        ),
    },
)
