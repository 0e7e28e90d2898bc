"""Repair a transcript and write it as a target agent's session (see the package docstring)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from store.core.errors import UsageError
from store.core.model import Message, ToolCall
from store.core.times import as_utc, parse_timestamp
from store.core.transcript import Transcript
from store.replay.native.claude_code import claude_code_lines, project_folder
from store.replay.native.codex import codex_lines
from store.replay.native.common import Dated
from store.replay.native.fidelity import AGENT_TARGETS, AgentTarget, Fidelity, NativeSession
from store.replay.native.tools import Translated, translate_call
from store.replay.repair import repair
from store.replay.targets import Target
from store.tools.names import AliasTable

__all__ = ["native_session"]

_PROVIDER: dict[AgentTarget, Target] = {"claude-code": "anthropic", "codex": "openai-responses"}
_LABEL: dict[AgentTarget, str] = {"claude-code": "Claude Code", "codex": "Codex"}


def native_session(transcript: Transcript, target: AgentTarget, *,
                   dangling: Literal["synthesize", "drop"] = "synthesize",
                   tools: Iterable[str] | None = None, aliases: AliasTable | None = None,
                   session_id: str | None = None, now: datetime | None = None) -> NativeSession:
    """``transcript`` as ``target``'s session files under a new id (``session_id``, else a
    uuid4), repaired for the agent's provider, its calls in the agent's own vocabulary; the
    messages keep their times, the session its cwd and model. ``now`` dates the file name
    (Codex)."""
    if target not in AGENT_TARGETS:
        raise UsageError(f"unknown agent {target!r}; expected one of {AGENT_TARGETS}")
    if session_id is None:
        session_id = str(uuid.uuid4())
    else:
        try:
            session_id = str(uuid.UUID(session_id))
        except ValueError:
            raise UsageError(f"not a session id (a UUID): {session_id!r}") from None
    info = transcript.session
    same = info.agent == target
    fidelity = Fidelity()
    repaired = repair(transcript, _PROVIDER[target], dangling=dangling, tools=tools,
                      aliases=aliases)
    for change in repaired.changes:
        if change.kind != "renamed_tool":
            where = f"message {change.position}" if change.position is not None else "-"
            fidelity.repaired.append(f"{change.kind} ({where}): {change.detail}")
    stored = {m.position: m for m in transcript}
    dated: list[Dated] = []
    last = info.started_at or info.created_at
    for message, position in zip(repaired.messages, repaired.source_positions, strict=True):
        at = _time(message, stored[position].created_at if position in stored else last)
        last = at
        calls = {}
        for index, part in enumerate(message.parts):
            if isinstance(part, ToolCall):
                calls[index] = done = translate_call(part, target, same_agent=same,
                                                     cwd=info.cwd)
                _report_call(fidelity, part, done, target, same)
        dated.append(Dated(message, at, calls))
    written = as_utc(now or datetime.now(UTC))
    if target == "claude-code":
        lines = claude_code_lines(dated, info, session_id, same, fidelity)
        folder: tuple[str, ...] = ("projects", project_folder(info.cwd or "/"))
        filename = f"{session_id}.jsonl"
        resume = f"claude --resume {session_id}"
    else:
        lines = codex_lines(dated, info, session_id, same, fidelity, written)
        folder = ("sessions", f"{written:%Y}", f"{written:%m}", f"{written:%d}")
        filename = f"rollout-{written:%Y-%m-%dT%H-%M-%S}-{session_id}.jsonl"
        resume = f"codex resume {session_id}"
    if info.model and not same:
        fidelity.translated[f"model {info.model} recorded as the session's model ("
                            f"{_LABEL[target]} continues with the model it is configured "
                            "for)"] += 1
    return NativeSession(target, session_id, info.cwd, folder, filename, tuple(lines), resume,
                         fidelity)


def _time(message: Message, fallback: datetime) -> datetime:
    value: Any = message.metadata.get("timestamp")
    if isinstance(value, str):
        parsed = parse_timestamp(value)
        if parsed is not None:
            return parsed
    return fallback


def _report_call(fidelity: Fidelity, call: ToolCall, done: Translated, target: AgentTarget,
                 same: bool) -> None:
    recorded = call.raw_name or call.name
    if same:
        fidelity.exact[f"{recorded} calls"] += 1
    elif done.exact and done.name == recorded and _native(recorded, target):
        fidelity.exact[f"{recorded} calls"] += 1
    elif done.exact:
        fidelity.exact[f"{recorded} calls, kept as recorded ({_LABEL[target]} has no "
                       f"counterpart of {call.name})"] += 1
    else:
        fidelity.translated[f"{recorded} -> {done.name} calls (arguments reshaped)"] += 1
        for key in done.dropped:
            fidelity.dropped[f"argument {key!r} of {recorded} ({_LABEL[target]}'s "
                             f"{done.name} has no such argument)"] += 1


def _native(name: str, target: AgentTarget) -> bool:
    from store.replay.native.tools import own_names

    return name in own_names(target)
