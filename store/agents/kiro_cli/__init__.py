"""Kiro CLI (AWS; the successor of Amazon Q Developer CLI): its conversations in the SQLite
``data.sqlite3`` of its data folder, and the session logs newer builds write below
``~/.kiro/sessions/cli`` (the agent's definition).

One agent reads both products: Kiro CLI is Amazon Q Developer CLI renamed (the same
``chat-cli`` crate, the same conversation state, the same tools), it carries the old
conversations over (migration 008 copies ``conversations`` into ``conversations_v2``;
``v1_export`` turns them into session logs under the same conversation id), so a user
upgrading sees one history, not two agents' copies of it. Sessions of the Amazon Q database
(``amazon-q/data.sqlite3``, which has no ``conversations_v2`` table) are tagged ``amazon-q``.

Sources: ``aws/amazon-q-developer-cli`` @15cc8f3c (Amazon Q: ``crates/chat-cli``:
``database/sqlite_migrations/007_conversations_table.sql``, ``database/mod.rs``,
``cli/chat/conversation.rs``, ``message.rs``, ``parser.rs``, ``util/paths.rs``) and the
Kiro CLI sources published on its ``sync-prod-from-main`` branch @7bc6d258
(``crates/chat-cli-v2/src/database/sqlite_migrations/008_multiple_conversations_per_path.sql``,
``database/mod.rs``, ``util/paths.rs``; ``crates/chat-cli-v2/src/agent/session/mod.rs``;
``crates/agent/src/agent/event_log.rs``, ``agent_loop/types.rs``, ``tools/mod.rs``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, STRONG, AgentDefinition, DatabaseLayout, Sample

__all__ = ["AGENT", "LOG_KINDS", "is_log_entry"]

#: The kinds of a session log's entries (``LogEntryV1``).
LOG_KINDS = frozenset({"Prompt", "AssistantMessage", "ToolResults", "Compaction", "ResetTo",
                       "CancelledPrompt", "Clear"})


def is_log_entry(top: Mapping[str, Any]) -> bool:
    """A session log line: ``{"version": "v1", "kind": <LogEntryV1>, "data": ...}``."""
    return top.get("version") == "v1" and top.get("kind") in LOG_KINDS and set(top) <= {
        "version", "kind", "data"}


def _tables(tables: Mapping[str, set[str]]) -> bool:
    kv = {"key", "value"}
    return ("auth_kv" in tables and kv <= tables.get("state", set())
            and ({"key", "conversation_id", "value", "created_at", "updated_at"}
                 <= tables.get("conversations_v2", set())
                 or kv <= tables.get("conversations", set())))


def _in_sessions(path: Path | None) -> bool:
    return path is not None and path.parent.name == "cli" and (
        path.parent.parent.name == "sessions" and path.parent.parent.parent.name == ".kiro")


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A session log's lines (``version``/``kind``/``data``, nothing else) are Kiro's own
    shape; in ``.kiro/sessions/cli`` they are Kiro's for sure."""
    for sample in first:
        if sample.top is not None and is_log_entry(sample.top):
            return PROVEN if _in_sessions(path) else STRONG
    return 0.0


def _kind(record: Any) -> str | None:
    kind = record.get("kind") if isinstance(record, Mapping) else None
    return kind if isinstance(kind, str) else None


def _sidecars(folder: str, files: Sequence[str]) -> set[str]:
    """A session's ``<id>.json`` (its metadata, read with its log) in the sessions folder."""
    if not _in_sessions(Path(folder) / "x"):
        return set()
    return {f for f in files if f.endswith(".json")}


def _task_folders(folders: Sequence[str], files: Sequence[str]) -> set[str]:
    """A session's ``<id>/tasks`` folder (its task list, not a transcript): beside the
    session's ``<id>.jsonl`` and ``<id>.json`` (the pair only Kiro writes)."""
    names = set(files)
    return {d for d in folders if f"{d}.jsonl" in names and f"{d}.json" in names}


_DB = "data.sqlite3"

AGENT = AgentDefinition(
    name="kiro-cli",
    display_name="Kiro CLI",
    package=__name__,
    order=283,
    formats=("kiro-cli", "kiro", "amazon-q"),
    detect=detect,
    # util/paths.rs database_path_static(): dirs::data_local_dir()/kiro-cli/data.sqlite3
    # (Amazon Q: .../amazon-q/data.sqlite3): $XDG_DATA_HOME or ~/.local/share on Linux,
    # ~/Library/Application Support on macOS, %LOCALAPPDATA% on Windows. sessions_dir():
    # ~/.kiro/sessions/cli (%USERPROFILE%\.kiro on Windows).
    homes=(AgentFolders("kiro-cli", None, ".local/share/kiro-cli", (_DB,), xdg_app="kiro-cli"),
           AgentFolders("kiro-cli", None, ".local/share/amazon-q", (_DB,), xdg_app="amazon-q"),
           AgentFolders("kiro-cli", None, "Library/Application Support",
                        (f"kiro-cli/{_DB}", f"amazon-q/{_DB}")),
           AgentFolders("kiro-cli", "LOCALAPPDATA", "AppData/Local",
                        (f"kiro-cli/{_DB}", f"amazon-q/{_DB}")),
           AgentFolders("kiro-cli", None, ".kiro", ("sessions/cli",))),
    lines=True,
    database=DatabaseLayout({"conversations_v2": "created_at, conversation_id",
                             "conversations": "key"},
                            _tables, "read_kiro_db", file_names=(_DB,),
                            optional=frozenset({"conversations_v2", "conversations"})),
    kind_of=_kind,
    aside=_sidecars,
    aside_folders=_task_folders,
    kinds={
        "Prompt": "message (the user's prompt; `meta.timestamp`)",
        "AssistantMessage": "message (text, thinking, `toolUse` blocks → calls)",
        "ToolResults": "message (`toolResult` blocks → results, by `toolUseId`)",
        "Compaction": "skipped: the compacted snapshot (every message is in the log before"
                      " it); its summary kept in the session's metadata",
        "ResetTo": "skipped: the conversation rewound (the log keeps what happened)",
        "CancelledPrompt": "skipped: the last prompt cancelled",
        "Clear": "skipped: the conversation cleared",
    },
    records={
        "calls": "database: the assistant's `ToolUse` `tool_uses`; logs: `toolUse` blocks",
        "results": "database: the next user message's `ToolUseResults` / `CancelledToolUses`"
                   " (by `tool_use_id`); logs: `toolResult` blocks",
        "errors": "result `status` (`Error` / `error`; a cancelled tool is an error)",
        "times": "database: each prompt's `timestamp`, each request's start and stream end"
                 " (ms), the row's `created_at` / `updated_at`; logs: the prompt's"
                 " `meta.timestamp`, the session's `created_at` / `updated_at`",
        "cwd": "database: the row's `key` (the folder); logs: the session's `cwd`",
        "model": "database: each request's `model_id`, else `model_info`; logs:"
                 " `rts_model_state.model_info`",
        "title": "logs: the session's `title`; database: the first prompt",
        "usage": "logs: each turn's `input_token_count` / `output_token_count` (on its last"
                 " reply); the database records none (credits only)",
        "lineage": "— (subagents are not recorded as sessions)",
        "not recorded": "database: tokens, reply times apart from each request's stream end;"
                        " logs: reply times",
    },
    tools={
        "fs_read": "read", "fs_write": "write", "execute_bash": "bash", "execute_cmd": "bash",
        "todo_list": "todo", "thinking": "think", "delegate": "task", "use_subagent": "task",
        "subagent": "task", "read": "read", "write": "write", "shell": "bash", "glob": "glob",
        "grep": "grep", "ls": "list", "web_fetch": "web_fetch", "web_search": "web_search",
        "task": "todo", "todo": "todo", "fsRead": "read", "fsWrite": "write",
        "executeCmd": "bash",
    },
)
