"""VS Code's chat (GitHub Copilot Chat and the editor's built-in agent): one session per file,
``User/workspaceStorage/<hash>/chatSessions/<session id>.json`` (a JSON document) or
``.jsonl`` (VS Code's mutation log), and ``User/globalStorage/emptyWindowChatSessions`` for
windows without a folder (the definition)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import VSCODE_HOMES, AgentFolders
from store.agents.registry import PROVEN, STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "LOG_KINDS", "SESSION_FOLDERS", "is_chat_data", "log_kind"]

#: The folders VS Code keeps chat sessions in (``chatSessionStore.ts``).
SESSION_FOLDERS = frozenset({"chatSessions", "emptyWindowChatSessions",
                             "transferredChatSessions"})

#: The mutation log's entry kinds (``objectMutationLog.ts`` ``EntryKind``).
LOG_KINDS = {0: "initial", 1: "set", 2: "push", 3: "delete"}


def is_chat_data(value: Any) -> bool:
    """VS Code's serialized chat data (``ISerializableChatData``, versions 1 to 3): a
    ``requests`` list with the session's ``sessionId`` or ``creationDate``."""
    return (isinstance(value, Mapping) and isinstance(value.get("requests"), list)
            and ("sessionId" in value or "creationDate" in value)
            and ("responderUsername" in value or "version" in value
                 or "initialLocation" in value))


def _chat_data(sample: Sample) -> bool:
    raw = sample.raw
    if isinstance(raw, Mapping) and raw.get("kind") == 0 and "v" in raw:  # the log's first
        return is_chat_data(raw["v"])
    return is_chat_data(raw)


def log_kind(record: Any) -> str | None:
    """A mutation log line's kind (``initial``, ``set``, ``push``, ``delete``)."""
    if isinstance(record, Mapping):
        kind = record.get("kind")
        if isinstance(kind, int) and not isinstance(kind, bool):
            return LOG_KINDS.get(kind, str(kind))
    return None


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """VS Code's chat data (a document, or a log's initial entry) proves it in a chat
    session folder; elsewhere its shape is still the editor's own."""
    if not first or not _chat_data(first[0]):
        return 0.0
    return PROVEN if path is not None and path.parent.name in SESSION_FOLDERS else STRONG


def _not_sessions(folder: str, names: Sequence[str]) -> set[str]:
    """``workspace.json`` beside ``chatSessions`` (read for the cwd, not a session)."""
    return {"workspace.json"} if "workspace.json" in names and Path(folder).parent.name == \
        "workspaceStorage" else set()


AGENT = AgentDefinition(
    name="vscode-copilot-chat",
    display_name="VS Code Copilot Chat",
    package=__name__,
    order=200,
    detect=detect,
    aside=_not_sessions,
    # Every VS Code build's user data (Code, Code - Insiders, VSCodium ...: the ``*``) on
    # Linux, macOS and Windows: a workspace's sessions, and those of windows with no folder.
    homes=tuple(AgentFolders("vscode-copilot-chat", env, home,
                             ("*/User/workspaceStorage/*/chatSessions",
                              "*/User/globalStorage/emptyWindowChatSessions"))
                for env, home in VSCODE_HOMES),
    kind_of=log_kind,
    kinds={
        "initial": "read: the session's whole state (a `.jsonl` log's first entry)",
        "set": "read: a change to the state (a property replaced)",
        "push": "read: a change to the state (items appended to a list, or a list cut)",
        "delete": "read: a change to the state (a property removed)",
    },
    records={
        "calls": ("Copilot's `result.metadata.toolCallRounds` (model-facing names, exact "
                  "arguments); else the `toolInvocationSerialized` response parts (tool id, "
                  "arguments from `resultDetails.input` / `toolSpecificData`)"),
        "results": "`result.metadata.toolCallResults` by call id; else `resultDetails.output`",
        "errors": ("`resultDetails.isError`; a denied or skipped call (`isConfirmed`) → "
                   "error; an incomplete invocation → no result"),
        "times": ("`creationDate`, each request's `timestamp`, rounds' `timestamp`, "
                  "`modelState.completedAt`, `lastMessageDate` → session start and end"),
        "cwd": "`workspace.json` `folder` beside `chatSessions` (none for empty windows)",
        "model": "each request's `modelId`; `result.metadata.resolvedModel`",
        "title": "`customTitle` (v2 `computedTitle`), else the first prompt",
        "usage": ("`result.metadata.promptTokens` / `outputTokens` per request; older "
                  "rounds' `usage`"),
        "lineage": ("subagent tool invocations (`subAgentInvocationId`) → a session per "
                    "`runSubagent` call, linked to it"),
        "not recorded": ("the system prompt and tool definitions; token usage in most "
                         "versions; a subagent's text (only its tool invocations are kept)"),
    },
    tools={
        "run_in_terminal": "bash", "get_terminal_output": "bash_io",
        "read_file": "read", "copilot_readFile": "read",
        "create_file": "write", "copilot_createFile": "write",
        "replace_string_in_file": "edit", "copilot_replaceString": "edit",
        "multi_replace_string_in_file": "edit", "copilot_multiReplaceString": "edit",
        "insert_edit_into_file": "edit", "copilot_insertEdit": "edit",
        "apply_patch": "patch", "copilot_applyPatch": "patch",
        "file_search": "glob", "copilot_findFiles": "glob",
        "grep_search": "grep", "copilot_findTextInFiles": "grep",
        "list_dir": "list", "copilot_listDirectory": "list",
        "fetch_webpage": "web_fetch", "copilot_fetchWebPage": "web_fetch",
        "manage_todo_list": "todo", "runSubagent": "task",
        "vscode_askQuestions": "ask_user", "memory": "memory", "copilot_memory": "memory",
        "edit_notebook_file": "notebook", "copilot_editNotebook": "notebook",
    },
)
