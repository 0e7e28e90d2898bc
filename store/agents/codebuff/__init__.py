"""Codebuff: a chat's ``chat-messages.json`` (the CLI) or ``messages.json`` (the older
``npm-app``) in ``~/.config/manicode[-<env>]/projects/<project>/chats/<chat id>/`` (the
agent's definition; learnt from ``CodebuffAI/codebuff``, see the reader's docstring).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import LIKELY, PROVEN, STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "CHAT_FILE", "LEGACY_FILE", "in_chat_folder", "is_chat_list",
           "is_legacy_chat"]

#: The CLI's chat file, and the ``npm-app``'s before it.
CHAT_FILE = "chat-messages.json"
LEGACY_FILE = "messages.json"
#: Files beside them that are not a transcript (the SDK's run state, a mid-turn checkpoint).
_BESIDE = ("run-state.json", "turn-checkpoint.json")
#: A ``ChatMessage``'s ``variant``.
VARIANTS = frozenset({"ai", "user", "agent", "error"})
#: The config folders (``manicode``, and ``manicode-<env>`` of a development stack).
CONFIG_FOLDERS = ("manicode", "manicode-dev", "manicode-staging")


def in_chat_folder(path: Path) -> bool:
    """``.../manicode*/projects/<project>/chats/<chat id>/<file>``."""
    parts = path.parts
    return (len(parts) >= 6 and parts[-3] == "chats" and parts[-5] == "projects"
            and parts[-6].startswith("manicode"))


def is_chat_list(document: Any) -> bool:
    """A list of ``ChatMessage`` objects ``{id, variant, content, timestamp, ...}``."""
    if not isinstance(document, list) or not document:
        return False
    first = document[0]
    return (isinstance(first, Mapping) and first.get("variant") in VARIANTS
            and isinstance(first.get("id"), str) and "timestamp" in first
            and "content" in first)


def is_legacy_chat(document: Any) -> bool:
    """The ``npm-app``'s ``{id, messages: [...], updatedAt}``."""
    return (isinstance(document, Mapping) and isinstance(document.get("id"), str)
            and isinstance(document.get("messages"), list) and "updatedAt" in document)


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A chat list proves it in a chat folder and is Codebuff's own shape elsewhere; the
    ``npm-app``'s document only in a chat folder (its shape alone is generic)."""
    chat_folder = path is not None and in_chat_folder(path)
    for sample in first:
        if is_chat_list(sample.raw):
            return PROVEN if chat_folder else STRONG
        if is_legacy_chat(sample.raw):
            return PROVEN if chat_folder and path is not None \
                and path.name == LEGACY_FILE else (LIKELY if chat_folder else 0.0)
    return 0.0


def _aside(folder: str, files: Sequence[str]) -> set[str]:
    """The run state and checkpoint beside a chat file (read with it, or not a transcript)."""
    if CHAT_FILE in files or (LEGACY_FILE in files and in_chat_folder(Path(folder) / "x")):
        return {f for f in files if f in _BESIDE or f.startswith("turn-checkpoint.json.tmp")}
    return set()


def _kind(record: Any) -> str | None:
    if is_chat_list(record):
        return "chat-messages"
    if is_legacy_chat(record):
        return "messages"
    return None


AGENT = AgentDefinition(
    name="codebuff",
    display_name="Codebuff",
    package=__name__,
    order=281,
    detect=detect,
    # ``path.join(os.homedir(), '.config', 'manicode')`` on every platform (Windows too:
    # %USERPROFILE%\.config\manicode); ``manicode-<env>`` on a development stack. No variable
    # moves it (XDG_CONFIG_HOME is not followed).
    homes=tuple(AgentFolders("codebuff", None, f".config/{name}", ("projects/*/chats",))
                for name in CONFIG_FOLDERS),
    kind_of=_kind,
    kinds={
        "chat-messages": "messages (each `ChatMessage`: its blocks; `agent` blocks → "
                         "subagent sessions)",
        "messages": "messages (the npm-app's model messages)",
    },
    aside=_aside,
    records={
        "calls": "`tool` blocks `{toolCallId, toolName, input}` of `ai` messages (npm-app: "
                 "`tool-call` parts) → calls; `agent` blocks without their `spawn_agents` "
                 "block → that call; `ask-user` blocks → `ask_user` calls",
        "results": "the block's `output` (`outputRaw` kept) → linked; npm-app `tool` "
                   "messages by `toolCallId`",
        "errors": "an `errorMessage` in the output → error results; an agent `failed` / "
                  "`cancelled` → error; a block without `output` → no result",
        "times": "ISO `timestamp` (newer builds), else the epoch in the message id "
                 "(`ai-<ms>-…`); the chat folder's name (its creation time, UTC) → start; "
                 "npm-app `updatedAt` → end",
        "cwd": "`run-state.json` `sessionState.fileContext.cwd` (else `projectRoot`)",
        "model": "— (only the agent type: `agentType`, kept in metadata)",
        "title": "— → the first real prompt",
        "usage": "— (no tokens; `credits` per message and the run state's `creditsUsed` "
                 "kept as recorded in metadata, never converted)",
        "lineage": "`agent` blocks (nested) → subagent sessions `<chat>:<agent id>`, linked "
                   "to the `spawnToolCallId` call",
        "not recorded": "model, token usage, cwd of npm-app chats (only the project's folder "
                        "name), the date of older builds' `h:mm AM` times",
    },
    tools={
        "read_files": "read", "read_subtree": "read", "write_file": "write",
        "str_replace": "edit", "propose_str_replace": "edit", "propose_write_file": "write",
        "run_terminal_command": "bash", "code_search": "grep", "glob": "glob",
        "list_directory": "list", "spawn_agents": "task", "spawn_agent_inline": "task",
        "spawn_agents_async": "task", "web_search": "web_search", "think_deeply": "think",
        "write_todos": "todo", "create_plan": "todo", "ask_user": "ask_user",
        "end_turn": "finish", "task_completed": "finish", "browser_logs": "browser",
        "apply_patch": "patch",
    },
)
