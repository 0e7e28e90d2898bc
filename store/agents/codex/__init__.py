"""Codex: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`` (definition).

Lines ``{timestamp, type, payload}`` (before October 2025 a header line, then bare items).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from store.agents.homes import AgentFolders
from store.agents.registry import LIKELY, STRONG, AgentDefinition, Sample

_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """The ``{type, payload}`` envelope of a rollout proves it; the older header (a
    ``record_type``, or ``instructions`` with an id and a time) is likely."""
    best = 0.0
    for sample in first:
        top = sample.top
        if top is None:
            continue
        kind = top.get("type")
        if "payload" in top and kind in _TYPES:
            return STRONG
        if "record_type" in top or (kind is None and "instructions" in top and "id" in top
                                    and "timestamp" in top and "output" not in top):
            best = LIKELY
    return best


AGENT = AgentDefinition(
    name="codex",
    display_name="Codex",
    package=__name__,
    order=20,
    detect=detect,
    homes=(AgentFolders("codex", "CODEX_HOME", ".codex", ("sessions", "archived_sessions")),),
    lines=True,
    incremental=True,
    kinds={
        "session_meta": "skipped: the session's id, cwd, source, lineage (read into it)",
        "turn_context": "skipped: a turn's cwd, model and policies (read into it)",
        "response_item": "a conversation item: message, call, output (reasoning kept)",
        "event_msg": "skipped: the UI's events (token_count gives the usage)",
        "compacted": "message (a compaction's summary)",
        "message": "message (before October 2025: a bare item)",
        "function_call": "message (before October 2025: a bare item)",
        "function_call_output": "message (before October 2025: a bare item)",
        "reasoning": "message (before October 2025: a bare item)",
        "local_shell_call": "message (before October 2025: a bare item)",
        "custom_tool_call": "message (before October 2025: a bare item)",
        "custom_tool_call_output": "message (before October 2025: a bare item)",
        "web_search_call": "message (before October 2025: a bare item)",
    },
    records={
        "calls": "`function_call`, `custom_tool_call`, `local_shell_call` items → calls",
        "results": (
            "`*_output` items by `call_id` → linked; outputs kept verbatim (the JSON envelope "
            "unwrapped for display)"
        ),
        "errors": (
            "— (no error flag: only an exit code inside the output text) → results are not marked"
            " as errors; a call with no output → no result"
        ),
        "times": "every line's `timestamp` → message times",
        "cwd": "`session_meta.cwd` (and per turn in `turn_context`) → session cwd",
        "model": "`turn_context.model` → session and per-message model",
        "title": "— (thread names live outside the rollout) → the first real prompt",
        "usage": (
            "`event_msg` `token_count` (`last_token_usage` per request, running totals repeated) "
            "→ one usage row per request"
        ),
        "lineage": (
            "`session_meta.source.subagent.thread_spawn.parent_thread_id` (a spawned agent), "
            "`forked_from_id` (a fork) → `subagent`, `fork`; review and compaction subagents name"
            " no parent"
        ),
        "not recorded": (
            "who approved a command (only the turn's `approval_policy`); the sandbox's decisions "
            "per command; tool definitions"
        ),
    },
)
