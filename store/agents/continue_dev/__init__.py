"""Continue (the VS Code / JetBrains extension and its ``cn`` CLI):
``~/.continue/sessions/<session id>.json``, one session each, listed in ``sessions.json``
(the definition)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "LIST_FILE", "is_continue_session"]

#: The sessions' list (``BaseSessionMetadata``: id, title, ``dateCreated``, workspace).
LIST_FILE = "sessions.json"


def is_continue_session(value: Any) -> bool:
    """A Continue ``Session``: ``sessionId``, ``workspaceDirectory`` and a ``history`` list."""
    return (isinstance(value, Mapping) and isinstance(value.get("history"), list)
            and "sessionId" in value and "workspaceDirectory" in value)


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A ``Session`` document proves it in a ``.continue/sessions`` folder."""
    if not first or not is_continue_session(first[0].raw):
        return 0.0
    if path is not None and path.parent.name == "sessions" and path.name != LIST_FILE:
        return PROVEN
    return STRONG


def _list(folder: str, names: Sequence[str]) -> set[str]:
    """``sessions.json`` (read with each session for its creation time)."""
    return {LIST_FILE} if LIST_FILE in names and Path(folder).name == "sessions" else set()


AGENT = AgentDefinition(
    name="continue",
    display_name="Continue",
    package=__name__,
    order=210,
    detect=detect,
    aside=_list,
    # CONTINUE_GLOBAL_DIR replaces ~/.continue (core/util/paths.ts; the CLI too), on every
    # system (Windows: %USERPROFILE%\.continue).
    homes=(AgentFolders("continue", "CONTINUE_GLOBAL_DIR", ".continue", ("sessions",)),),
    records={
        "calls": "assistant `toolCalls` (OpenAI-shaped, exact arguments)",
        "results": "`tool` messages by `toolCallId`; else a call state's `output`",
        "errors": ("`toolCallStates` `errored`, `canceled` → error; `generated` / `calling` "
                   "→ no result"),
        "times": ("`sessions.json` `dateCreated` (start), thinking `reasoning.startAt` / "
                  "`endAt`; no time per message"),
        "cwd": "`workspaceDirectory`",
        "model": "`chatModelTitle`, `promptLogs` `modelTitle` (a model's title, not its id)",
        "title": "`title` (unless `New Session`), else the first prompt",
        "usage": ("assistant messages' `usage`, else the session's `usage` totals (one "
                  "row); `promptTokens` as the provider counted it"),
        "lineage": "—",
        "not recorded": ("a time per message, the session's end; model ids; subagents "
                         "(Continue has none)"),
    },
    tools={
        "read_file": "read", "read_file_range": "read", "read_currently_open_file": "read",
        "edit_existing_file": "edit", "single_find_and_replace": "edit", "multi_edit": "edit",
        "create_new_file": "write", "run_terminal_command": "bash",
        "grep_search": "grep", "file_glob_search": "glob", "ls": "list",
        "search_web": "web_search", "fetch_url_content": "web_fetch",
    },
)
