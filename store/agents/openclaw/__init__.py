"""OpenClaw (openclaw/openclaw, formerly Clawdbot / Moltbot): a personal agent whose sessions
are pi's JSON-lines session files, one per session in each agent's sessions folder (the
agent's definition).

OpenClaw runs its agents on pi's SDK (``@mariozechner/pi-coding-agent``): pi's
``SessionManager`` writes ``<state dir>/agents/<agent id>/sessions/<session id>.jsonl``
(a ``session`` header, then ``message``, ``model_change``, ``compaction``, ``custom`` ...
entries; pi's format, read by pi's reader) and OpenClaw keeps the index
``sessions.json`` beside them (session key -> ``sessionId``, ``label``, ``spawnedBy``,
``model``, ``channel`` ...). The state dir is ``$OPENCLAW_STATE_DIR`` (or the older
``$CLAWDBOT_STATE_DIR``), else ``~/.openclaw`` (the older ``~/.clawdbot``, ``~/.moltbot``,
``~/.moldbot`` when only they exist); ``~`` is the user's home on every platform
(``%USERPROFILE%`` on Windows).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from store.agents.homes import AgentFolders
from store.agents.pi import AGENT as PI
from store.agents.registry import PROVEN, AgentDefinition, Sample

__all__ = ["AGENT", "STATE_DIRS"]

#: The state dirs' names, the current first (src/config/paths.ts).
STATE_DIRS = (".openclaw", ".clawdbot", ".moltbot", ".moldbot")


def in_sessions_folder(path: Path | None) -> bool:
    """``<state dir>/agents/<agent id>/sessions/<file>``."""
    if path is None:
        return False
    parts = path.parts
    return (len(parts) >= 5 and parts[-2] == "sessions" and parts[-4] == "agents"
            and (parts[-5] in STATE_DIRS or (path.parent / "sessions.json").is_file()))


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A pi session file (its ``session`` header) in an OpenClaw agent's sessions folder."""
    if not in_sessions_folder(path):
        return 0.0
    header = any(s.top is not None and s.top.get("type") == "session" and "id" in s.top
                 for s in first)
    return PROVEN if header else 0.0


def _index(folder: str, files: Sequence[str]) -> set[str]:
    """The sessions index beside the transcripts (read with each of them)."""
    place = Path(folder)
    if place.name != "sessions" or place.parent.parent.name != "agents":
        return set()
    return {"sessions.json"} & set(files)


AGENT = AgentDefinition(
    name="openclaw",
    display_name="OpenClaw",
    package=__name__,
    order=282,
    detect=detect,
    # src/config/paths.ts resolveStateDir, src/config/sessions/paths.ts
    # resolveAgentSessionsDir: <state dir>/agents/<agent id>/sessions.
    homes=(AgentFolders("openclaw", ("OPENCLAW_STATE_DIR", "CLAWDBOT_STATE_DIR"), ".openclaw",
                        ("agents/*/sessions",)),
           AgentFolders("openclaw", None, ".clawdbot", ("agents/*/sessions",)),
           AgentFolders("openclaw", None, ".moltbot", ("agents/*/sessions",))),
    lines=True,
    kinds=PI.kinds,
    aside=_index,
    records={
        "calls": "pi's assistant `toolCall` blocks → calls",
        "results": "`toolResult` messages by `toolCallId` → linked (`details` kept)",
        "errors": "`isError` → error results; a call with no result → no result",
        "times": "header `timestamp` → session start; every entry's `timestamp` → message"
                 " times and session end",
        "cwd": "header `cwd` (the agent's workspace)",
        "model": "assistant `model` (and `provider`), else `model_change`, else the index's"
                 " `model`",
        "title": "the index's `label`, else `session_info` name, else the first prompt",
        "usage": "assistant `usage` (input, output, cache read and write; `cost` in the"
                 " message metadata) → one usage row per reply",
        "lineage": "the index's `spawnedBy` (a `sessions_spawn` subagent) → `subagent`, with"
                   " the parent's call whose result names the child's session key; header"
                   " `parentSession` → `fork`",
        "not recorded": "the channel's own message ids and senders beyond the prompt text;"
                        " the system prompt and tool definitions",
    },
    tools={"exec": "bash", "bash": "bash", "process": "bash_io", "read": "read",
           "write": "write", "edit": "edit", "apply_patch": "patch", "browser": "browser",
           "web_search": "web_search", "web_fetch": "web_fetch", "sessions_spawn": "task",
           "memory_search": "memory", "memory_get": "memory"},
)
