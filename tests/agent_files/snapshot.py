"""What a user sees of an agent's sessions once imported, as plain JSON values: the exact
reading each agent's fixtures are held to (tests/agent_files/<agent>/expected.json).

Per session: its id, agent, title, cwd, model, own start and end (ISO, UTC), parent link,
the prompts the user typed (``typed_prompt``: never tool results, command output or the
agent's wrappers; the first 80 characters of each, spaces folded), how many
assistant messages, every call (raw name, canonical name, arguments' status, result status,
its canonical argument view: command, path, pattern or url) and its token usage.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import store
from store.core.arguments import argument_status, result_status
from store.core.model import InvalidToolCall
from store.importers.titles import typed_prompt
from store.tools.vocabulary import VIEW_NAMES, argument_views


def _time(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else None


def _view(name: str, arguments: Any) -> str | None:
    for view, value in zip(VIEW_NAMES, argument_views(name, arguments), strict=True):
        if value is not None:
            return f"{view}: {value[:120]}"
    return None


def session_snapshot(db: store.TranscriptStore, session_id: str) -> dict[str, Any]:
    info = db.get_session(session_id)
    transcript = db.load(session_id)
    listed = next(s for s in db.list_sessions(limit=None) if s.session_id == session_id)
    prompts = []
    assistant = 0
    for stored in transcript.messages:
        message = stored.message
        if message.role == "assistant":
            assistant += 1
        text = typed_prompt(message)
        if text is not None:
            prompts.append(" ".join(text.split())[:80])
    calls = []
    for loaded in transcript.calls():
        call = loaded.call
        raw = call.raw_name or call.name
        arguments = None if isinstance(call, InvalidToolCall) else call.input
        calls.append([raw, call.name, argument_status(call.arguments_text),
                      result_status(None if loaded.result is None else loaded.result.is_error),
                      _view(raw, arguments)])
    usage = store.usage_report(db, by="session", session_id=session_id)
    tokens = None
    if usage:
        row = usage[0]
        tokens = {"input": row.input_tokens, "output": row.output_tokens,
                  "cache_read": row.cache_read_tokens,
                  "cache_creation": row.cache_creation_tokens}
    parent = info.metadata.get("parent_session")
    return {
        "id": session_id,
        "agent": info.agent,
        "title": info.title,
        "cwd": info.cwd,
        "model": info.model,
        "started_at": _time(listed.started_at),
        "ended_at": _time(listed.ended_at),
        "parent": [parent, info.metadata.get("parent_call_id")] if parent else None,
        "prompts": prompts,
        "assistant_messages": assistant,
        "calls": calls,
        "usage": tokens,
    }


def store_snapshot(db: store.TranscriptStore) -> list[dict[str, Any]]:
    """Every session of the store, by id."""
    return [session_snapshot(db, s.session_id)
            for s in sorted(db.list_sessions(limit=None), key=lambda s: s.session_id)]
