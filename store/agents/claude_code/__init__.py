"""Claude Code: ``~/.claude/projects/<project>/<session id>.jsonl`` (the agent's definition).

One JSON object per line; a response's content blocks one line each, results on ``user``
lines, subagents inline (1.x), beside the session (2.0.x) or in ``subagents/`` (2.1.2+).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import LIKELY, STRONG, WEAK, AgentDefinition, Sample

#: A line with Claude Code's own envelope fields (``isSidechain``, ``userType``) beside its
#: ``uuid`` and ``sessionId``: surer than a bare ``uuid`` line, below Qwen Code's claim on
#: its own records (which carry a ``uuid`` and ``sessionId`` too).
_ENVELOPE = 0.8


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A ``summary`` line with its ``leafUuid`` or a ``file-history-snapshot`` prove it; a
    line with a ``uuid``, a ``sessionId`` and the envelope's ``isSidechain`` / ``userType``
    nearly; a line with a ``uuid`` and a ``sessionId`` or ``parentUuid`` is likely (Qwen
    Code's lines have them too, and Qwen Code's detector is surer of its own)."""
    best = 0.0
    for sample in first:
        top = sample.top
        if top is None:
            continue
        kind = top.get("type")
        if (kind == "summary" and "leaf_uuid" in top) or kind == "file-history-snapshot":
            return STRONG
        if "uuid" in top and "session_id" in top and (
                "is_sidechain" in top or "user_type" in top):
            best = max(best, _ENVELOPE)
        elif "uuid" in top and ("session_id" in top or "parent_uuid" in top):
            best = max(best, LIKELY)
        elif (kind in ("user", "assistant") and isinstance(top.get("message"), Mapping)
              and ("is_sidechain" in top or "user_type" in top)):
            # (a line without its uuid or sessionId, as other tools write them: the envelope
            # and a message are still Claude Code's; the reader needs neither id)
            best = max(best, WEAK)
    if best and path is not None and path.parent.parent.name == "projects" \
            and path.parent.parent.parent.name == ".claude":
        return max(best, STRONG)  # (in Claude Code's own projects folder)
    return best


def _kind(record: Any) -> str | None:
    if not isinstance(record, Mapping):
        return None
    kind = record.get("type")
    return kind if isinstance(kind, str) else None


def _sidecars(folder: str, files: Sequence[str]) -> set[str]:
    """A subagent's ``agent-<id>.meta.json`` sidecar (read with its transcript)."""
    return {f for f in files if f.endswith(".meta.json")}


AGENT = AgentDefinition(
    name="claude-code",
    display_name="Claude Code",
    package=__name__,
    order=10,
    aside=_sidecars,
    detect=detect,
    homes=(AgentFolders("claude-code", "CLAUDE_CONFIG_DIR", ".claude", ("projects",)),),
    lines=True,
    incremental=True,
    kind_of=_kind,
    kinds={
        "user": "message (a prompt, or a tool result line)",
        "assistant": "message (one per response: its blocks' lines merged by message.id)",
        "system": "message (a compact boundary, a local command's output)",
        "summary": "skipped: a title (older versions' compactions)",
        "progress": "skipped: a tool's progress (names a subagent's spawning call)",
        "file-history-snapshot": "skipped: the editor's undo snapshots",
        "queue-operation": "skipped: the prompt queue",
    },
    records={
        "calls": "`tool_use` blocks, one line per block → calls, one message per `message.id`",
        "results": (
            "`tool_result` lines, any order, plus the `toolUseResult` side channel → linked by "
            "id; side channel kept in the message metadata"
        ),
        "errors": (
            "`is_error` (denials, validation errors, failures) → error results; a call with no "
            "result line → no result"
        ),
        "times": "every line's `timestamp` → message times, session start and end",
        "cwd": "every line's `cwd` → session cwd",
        "model": "`message.model` → session and per-message model",
        "title": "`summary` lines (older versions) → title, else the first real prompt",
        "usage": (
            "`message.usage` repeated on every line of a response → one usage row per response "
            "(input, output, cache creation, cache read; model, request id)"
        ),
        "lineage": (
            "subagents (`isSidechain`, `agentId`, `subagents/agent-<id>.jsonl` + `.meta.json`) "
            "and the `Task`/`Agent` call that spawned them; a resume's new file, starting with "
            "the resumed session's lines → `subagent` with the parent call id; `continuation`"
        ),
        "not recorded": (
            "who approved a call (only denials show, as error results); tool definitions and "
            "system prompt; money"
        ),
    },
)
