"""Hermes Agent (NousResearch/hermes-agent): sessions in the SQLite ``state.db`` of its home,
and the JSON copies older versions wrote beside it (the agent's definition).

The home is ``get_hermes_home()``: ``$HERMES_HOME``, else ``~/.hermes`` (Linux, macOS) or
``%LOCALAPPDATA%\\hermes`` (Windows); each named profile has its own home
``<home>/profiles/<name>`` with its own ``state.db``. ``state.db`` holds ``sessions`` (one row
per session: source, model, ``model_config``, ``parent_session_id``, times, token totals,
cost, title, cwd) and ``messages`` (OpenAI-shaped rows: ``role``, ``content``,
``tool_calls`` JSON, ``tool_call_id``, ``tool_name``, ``timestamp``). Older versions also wrote
``sessions/session_<id>.json`` (a CLI session's whole message list) and the gateway
``sessions/<id>.jsonl`` (one message a line, with ``sessions.json`` as their index): copies
of what the database holds, read only where no ``state.db`` is beside them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, STRONG, AgentDefinition, DatabaseLayout, Sample

__all__ = ["AGENT"]

_LOG_KEYS = frozenset({"session_id", "messages", "session_start", "last_updated"})


def _tables(tables: Mapping[str, set[str]]) -> bool:
    return ({"id", "source", "started_at", "parent_session_id", "model_config"}
            <= tables.get("sessions", set())
            and {"session_id", "role", "content", "tool_calls", "tool_call_id", "tool_name",
                 "timestamp"} <= tables.get("messages", set()))


def _in_sessions_folder(path: Path | None) -> bool:
    if path is None or path.parent.name != "sessions":
        return False
    home = path.parent.parent
    return home.name in (".hermes", "hermes") or home.parent.name == "profiles" or (
        home / "config.yaml").is_file()


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A session log (``session_id``, ``session_start``, ``last_updated``, ``messages``) is
    Hermes's own document; a gateway transcript line is a plain chat message, Hermes's only
    in its sessions folder."""
    for sample in first:
        top = sample.top
        if top is not None and _LOG_KEYS <= top.keys():
            return PROVEN if _in_sessions_folder(path) else STRONG
    if _in_sessions_folder(path) and path is not None and path.suffix == ".jsonl" and any(
            s.top is not None and s.top.get("role") in ("user", "assistant", "tool",
                                                        "session_meta") for s in first):
        return PROVEN
    return 0.0


def _copies(folder: str, files: Sequence[str]) -> set[str]:
    """A home's ``sessions`` folder: the gateway's index always; the JSON copies of sessions
    when the database beside them holds the sessions."""
    place = Path(folder)
    if place.name != "sessions" or not (place.parent / "state.db").is_file():
        return {"sessions.json"} & set(files) if place.name == "sessions" else set()
    return {f for f in files if f == "sessions.json" or f.endswith(".jsonl")
            or (f.startswith("session_") and f.endswith(".json"))}


_FOLDERS = ("state.db", "sessions", "profiles/*/state.db", "profiles/*/sessions")

AGENT = AgentDefinition(
    name="hermes",
    display_name="Hermes Agent",
    package=__name__,
    order=281,
    detect=detect,
    # hermes_constants.py get_hermes_home(): $HERMES_HOME, else ~/.hermes; on Windows
    # %LOCALAPPDATA%\hermes. Named profiles: <home>/profiles/<name>.
    homes=(AgentFolders("hermes", "HERMES_HOME", ".hermes", _FOLDERS),
           AgentFolders("hermes", "LOCALAPPDATA", "AppData/Local",
                        tuple(f"hermes/{f}" for f in _FOLDERS))),
    database=DatabaseLayout({"sessions": "started_at, id",
                             "messages": "session_id, timestamp, id"},
                            _tables, "read_hermes_db", file_names=("state.db",)),
    aside=_copies,
    kinds={
        "user": "message (a session log's or gateway transcript's user message)",
        "assistant": "message (with its `tool_calls`)",
        "tool": "message (a result, by `tool_call_id`)",
        "system": "message (an injected system note)",
        "session_meta": "skipped: the gateway transcript's session header (tools, model)",
    },
    records={
        "calls": "assistant rows' `tool_calls` (OpenAI-shaped JSON) → calls",
        "results": "`tool` rows by `tool_call_id` (`tool_name`) → linked",
        "errors": "— (no flag: a result whose JSON has a non-empty `error` or `success:"
                  " false`, the tools' own convention) → error results; a call with no"
                  " `tool` row → no result",
        "times": "session `started_at` / `ended_at` (epoch s), each row's `timestamp` →"
                 " session start and end, message times",
        "cwd": "session `cwd` (newer versions) → cwd",
        "model": "session `model`",
        "title": "session `title` (the agent's or the user's), else the first prompt",
        "usage": "session totals (`input_tokens`, `output_tokens`, `cache_read_tokens`,"
                 " `cache_write_tokens`, `reasoning_tokens`) → counted once, on the first"
                 " reply; `estimated_cost_usd` / `actual_cost_usd` kept in metadata",
        "lineage": "`parent_session_id`: `_delegate_from` (a `delegate_task` subagent, with"
                   " the parent's call), `_branched_from` → `fork`, a parent ended by"
                   " `compression` → `continuation`",
        "not recorded": "per-reply tokens; error flags on results; the spawning call's id"
                        " of a subagent (read from the parent's calls by time)",
    },
    tools={
        "terminal": "bash", "process": "bash_io", "read_file": "read", "write_file": "write",
        "patch": "edit", "search_files": "grep", "web_search": "web_search",
        "web_extract": "web_fetch", "browser_navigate": "browser", "browser_click": "browser",
        "browser_type": "browser", "browser_snapshot": "browser", "browser_scroll": "browser",
        "todo": "todo", "memory": "memory", "delegate_task": "task", "execute_code": "python",
        "clarify": "ask_user",
    },
)
