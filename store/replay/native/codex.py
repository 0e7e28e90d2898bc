"""A repaired history as a Codex rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

``{timestamp, type, payload}`` lines: a ``session_meta`` (the new id, cwd, provider), a
``turn_context`` (cwd, model), then ``response_item`` payloads: ``message`` items (user
``input_text``, assistant ``output_text``, system text as a ``developer`` message),
``function_call`` items (arguments as JSON text) and ``function_call_output`` items, each
dated by its message's time; text messages are echoed as ``event_msg`` (``user_message``,
``agent_message``) lines, which Codex's own view of a resumed session shows. A session that
Codex recorded keeps its reasoning items and compaction records. What
:mod:`store.importers.codex` reads back.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from store.core.model import OpaquePart, TextPart, ToolCall, ToolResult
from store.core.sessioninfo import SessionInfo
from store.replay.native.common import Dated, stamp
from store.replay.native.content import codex_output, drop_part, dumps
from store.replay.native.fidelity import Fidelity

__all__ = ["codex_lines"]

_ORIGINATOR = "transcript-store"


def codex_lines(dated: list[Dated], info: SessionInfo, session_id: str, same: bool,
                fidelity: Fidelity, written: datetime) -> list[str]:
    """The rollout's lines (see the module docstring)."""
    first = stamp(dated[0].at) if dated else stamp(written)
    cwd = info.cwd or "/"
    provider = info.provider if same and info.provider else "openai"
    lines = [_line(first, "session_meta", {
        "id": session_id, "timestamp": stamp(written), "cwd": cwd, "originator": _ORIGINATOR,
        "cli_version": str(info.metadata.get("cli_version", "")) if same else "",
        "instructions": None, "source": "cli", "model_provider": provider})]
    context: dict[str, Any] = {"cwd": cwd, "approval_policy": "on-request",
                               "sandbox_policy": {"mode": "read-only"}, "summary": "auto"}
    if info.model:
        context["model"] = info.model
    lines.append(_line(first, "turn_context", context))
    for item in dated:
        lines += _message_lines(item, same, fidelity)
    return lines


def _line(at: str, kind: str, payload: Mapping[str, Any]) -> str:
    return dumps({"timestamp": at, "type": kind, "payload": payload})


def _message_lines(item: Dated, same: bool, fidelity: Fidelity) -> list[str]:
    message, at = item.message, stamp(item.at)
    compacted = message.metadata.get("compacted")
    if same and isinstance(compacted, Mapping):
        fidelity.exact["compaction records"] += 1
        return [_line(at, "compacted", compacted)]
    role = {"assistant": "assistant", "system": "developer"}.get(message.role, "user")
    if message.role == "system":
        fidelity.translated["system message as a developer message"] += 1
    out: list[str] = []
    texts: list[str] = []

    def flush() -> None:
        if not texts:
            return
        kind = "output_text" if role == "assistant" else "input_text"
        out.append(_line(at, "response_item", {
            "type": "message", "role": role,
            "content": [{"type": kind, "text": text} for text in texts]}))
        if role != "developer":
            event = "agent_message" if role == "assistant" else "user_message"
            out.append(_line(at, "event_msg", {"type": event, "message": "\n".join(texts)}))
            fidelity.exact[f"{message.role} messages"] += 1
        texts.clear()

    for index, part in enumerate(message.parts):
        if isinstance(part, TextPart):
            if part.text or len(message.parts) > 1:
                texts.append(part.text)
            else:
                fidelity.dropped[f"empty {message.role} message"] += 1
            continue
        flush()
        if isinstance(part, ToolCall):
            done = item.calls[index]
            arguments = (part.arguments_text if done.exact and part.arguments_text
                         else dumps(done.input))
            out.append(_line(at, "response_item", {
                "type": "function_call", "name": done.name, "arguments": arguments,
                "call_id": part.id}))
        elif isinstance(part, ToolResult):
            if part.is_error:
                fidelity.dropped["error flag of a result (a Codex function_call_output has "
                                 "none; its text stays)"] += 1
            out.append(_line(at, "response_item", {
                "type": "function_call_output", "call_id": part.call_id,
                "output": codex_output(part, fidelity)}))
            fidelity.exact["tool results"] += 1
        elif same and isinstance(part, OpaquePart) and isinstance(part.data, dict):
            out.append(_line(at, "response_item", part.data))
            fidelity.exact[f"{part.kind} items"] += 1
        else:
            drop_part(part, message, "Codex", fidelity)
    flush()
    return out
