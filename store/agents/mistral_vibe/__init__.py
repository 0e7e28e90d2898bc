"""Mistral Vibe (``mistralai/mistral-vibe``): one folder per session below
``~/.vibe/logs/session`` (the agent's definition).

Vibe 2.x writes ``<save_dir>/<prefix>_<YYYYmmdd_HHMMSS>_<first 8 of the id>/`` holding
``messages.jsonl`` (the session's non-system ``LLMMessage`` objects, one a line, appended)
and ``meta.json`` (the session's metadata, rewritten after each turn: id, parent, times,
cwd, title, ``stats`` with the running token totals, the ``config`` naming the model, the
system prompt). A subagent (the ``task`` tool) is a session folder of its own below its
parent's, in ``agents/<agent>_<time>_<id>/``. Vibe 1.x wrote one JSON document per session,
``<save_dir>/session_<time>_<id>.json`` (``{"metadata": {...}, "messages": [...]}``), which
2.0 migrates into folders on start: a 1.x file still there is read too.

The home is ``$VIBE_HOME``, else ``~/.vibe`` (``Path.home()``: ``%USERPROFILE%\\.vibe`` on
Windows, ``~/.vibe`` on macOS); ``session_logging.save_dir`` in its ``config.toml`` may move
the sessions elsewhere (then give that folder to ``import``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from store.agents.homes import AgentFolders
from store.agents.registry import LIKELY, PROVEN, STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "MESSAGES_FILE", "METADATA_FILE", "VIBE_ROLES"]

#: ``session_loader.py`` ``MESSAGES_FILENAME`` and ``METADATA_FILENAME``.
MESSAGES_FILE = "messages.jsonl"
METADATA_FILE = "meta.json"
#: ``types.py`` ``Role``.
VIBE_ROLES = frozenset({"system", "user", "assistant", "tool"})
#: Keys only Vibe's ``LLMMessage`` dump writes beside ``role``.
_OWN_KEYS = frozenset({"message_id", "injected", "reasoning_message_id", "reasoning_state",
                       "user_display_content"})
#: A 1.x session file's name: ``<prefix>_<YYYYmmdd_HHMMSS>_<8 characters>.json``.
_V1_NAME = re.compile(r"^[^/\\]+_\d{8}_\d{6}_[0-9a-f]{8}\.json$")


def _in_session_logs(path: Path) -> bool:
    parts = path.parts
    return any(a == ".vibe" and b == "logs" and c == "session"
               for a, b, c in zip(parts, parts[1:], parts[2:], strict=False))


def _is_v1_document(top: Mapping[str, object]) -> bool:
    metadata = top.get("metadata")
    return (isinstance(metadata, Mapping) and isinstance(top.get("messages"), list)
            and isinstance(metadata.get("session_id"), str) and "start_time" in metadata
            and ("environment" in metadata or "stats" in metadata))


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A ``messages.jsonl`` of ``LLMMessage`` lines with ``meta.json`` beside it is proven; a
    1.x session document (``metadata`` with ``session_id``, ``start_time``, ``environment``
    or ``stats``, and ``messages``) is strong, proven in Vibe's session logs; a line with
    Vibe's own ``LLMMessage`` keys (``message_id``, ``injected`` ...) is likely."""
    own = False
    for sample in first:
        top = sample.top
        if top is None:
            continue
        if _is_v1_document(top):
            return PROVEN if path is not None and (
                _in_session_logs(path) and _V1_NAME.match(path.name)) else STRONG
        if top.get("role") not in VIBE_ROLES:
            continue
        if path is not None and path.name == MESSAGES_FILE \
                and (path.parent / METADATA_FILE).is_file():
            return PROVEN
        own = own or bool(top.keys() & _OWN_KEYS)
    return LIKELY if own else 0.0


def _metadata(folder: str, files: Sequence[str]) -> set[str]:
    """A session folder's ``meta.json``: read with its ``messages.jsonl``."""
    names = set(files)
    return {METADATA_FILE} if {METADATA_FILE, MESSAGES_FILE} <= names else set()


AGENT = AgentDefinition(
    name="mistral-vibe",
    display_name="Mistral Vibe",
    package=__name__,
    order=297,
    formats=("mistral-vibe", "vibe"),
    detect=detect,
    # vibe/core/paths/_vibe_home.py: $VIBE_HOME, else Path.home() / ".vibe" (every
    # platform); SESSION_LOG_DIR = <home>/logs/session.
    homes=(AgentFolders("mistral-vibe", "VIBE_HOME", ".vibe", ("logs/session",)),),
    # (Not ``lines``: a 1.x session is one indented JSON document; ``messages.jsonl`` is
    # read as lines by its suffix.)
    aside=_metadata,
    kinds={
        "user": "message (a prompt; `injected` ones are the agent's: compaction context,"
                " middleware and hook messages)",
        "assistant": "message (`content`, `reasoning_content`, `tool_calls`)",
        "tool": "message (a result, by `tool_call_id`; `<tool_error>` or"
                " `<user_cancellation>` → error)",
        "system": "message (the system prompt: 1.x documents, and 2.x `meta.json`"
                  " `system_prompt`)",
    },
    records={
        "calls": "assistant `tool_calls` (OpenAI-shaped, arguments as JSON text) → calls",
        "results": "`tool` messages by `tool_call_id` (`name`) → linked",
        "errors": "a result wrapped in `<tool_error>` (a failure) or `<user_cancellation>`"
                  " (skipped, interrupted) → error; a call with no `tool` line → no result",
        "times": "`meta.json` `start_time` / `end_time` → session start and end (1.x: local"
                 " times without a zone, read as UTC); messages carry no time",
        "cwd": "`environment.working_directory`",
        "model": "`config.active_model` (an alias) → its `models` entry's `name` and"
                 " `provider` (1.x: `agent_config`)",
        "title": "`title` (the agent's or the user's), else the first prompt",
        "usage": "session totals (`stats.session_prompt_tokens`,"
                 " `session_completion_tokens`) → counted once, on the first reply (a"
                 " compacted session's totals less its parent's); `session_cost` kept in"
                 " metadata",
        "lineage": "`parent_session_id`: a folder below the parent's `agents/` → `subagent`"
                   " (with the parent's `task` call); a first message holding the compaction"
                   " context → `continuation`; otherwise → `fork` (a fork, a rewind)",
        "not recorded": "message times; per-reply tokens; cache tokens; who approved a call;"
                        " a rewind's carried token totals are not told from a fork's own",
    },
    tools={
        "bash": "bash", "read": "read", "read_file": "read", "write_file": "write",
        "edit": "edit", "search_replace": "edit", "grep": "grep", "todo": "todo",
        "task": "task", "web_fetch": "web_fetch", "web_search": "web_search",
        "ask_user_question": "ask_user", "exit_plan_mode": "plan_mode",
    },
)
