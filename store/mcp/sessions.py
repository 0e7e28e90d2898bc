"""A session as an agent reads it over MCP (edge layer; public API only).

A window, never the whole session: the last N turns (``store.TranscriptStore.load``'s
``last_turns``), or the messages around a position (``since_position``, cut after it). Each
message shows its text and its calls, each call with its result beside it (the messages
that only carry results of calls shown are left out: their results are under the calls);
every text redacted when the server redacts, then cut to ``max_chars``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import store
from store.mcp.shapes import Shaper, iso, session_summary

#: What to ask for more of a text that was cut.
_MORE = "get_session with around=POSITION and a larger max_chars shows more"


def session_window(opened: store.TranscriptStore, session_id: str, shaper: Shaper, *,
                   last_turns: int | None = 2, around: int | None = None, before: int = 5,
                   after: int = 10, limit: int = 40, max_chars: int = 500) -> dict[str, Any]:
    """The JSON answer of ``get_session`` (see the module docstring); ``session_id`` is a
    full id (the caller resolved a prefix)."""
    if around is not None:
        transcript = opened.load(session_id, since_position=max(0, around - before))
        shown = [m for m in transcript.messages if m.position <= around + after]
        # The start may reach back (a result is never separated from its call): keep the
        # messages nearest the position when that makes the window too long.
        if len(shown) > limit:
            near = sorted(shown, key=lambda m: abs(m.position - around))[:limit]
            keep = {m.position for m in near}
            shown = [m for m in shown if m.position in keep]
    else:
        transcript = opened.load(session_id, last_turns=last_turns)
        shown = list(transcript.messages)[-limit:]
    started, ended = opened.session_span(session_id)
    info = replace(opened.get_session(session_id), started_at=started, ended_at=ended,
                   call_count=opened.count_session_calls(session_id))
    total = info.message_count
    messages = _messages(transcript, shown, shaper, max_chars)
    first = shown[0].position if shown else None
    last = shown[-1].position if shown else None
    out: dict[str, Any] = {"session": session_summary(info, shaper),
                           "first_position": first, "last_position": last,
                           "total_messages": total, "messages": messages}
    # (the window of the hint ends just before this one / starts just after it, with the same
    # before and after)
    hints = []
    if first is not None and first > 0:
        hints.append(f"earlier: get_session with around={max(0, first - 1 - after)}")
    if last is not None and last < total - 1:
        hints.append(f"later: get_session with around={last + 1 + before}")
    if hints:
        out["more"] = hints
    return out


def _messages(transcript: store.Transcript, shown: list[store.StoredMessage], shaper: Shaper,
              max_chars: int) -> list[dict[str, Any]]:
    positions = {m.position for m in shown}
    results: dict[tuple[int, int], tuple[int, store.ToolResult]] = {}
    by_position = {m.position: m for m in transcript.messages}
    for (pos, idx), (cpos, cidx) in transcript.links.items():
        if (cpos, cidx) not in results and pos in by_position:
            results[(cpos, cidx)] = (pos, by_position[pos].message.tool_results[idx])
    placed = {(pos, idx) for (pos, idx), target in transcript.links.items()
              if target[0] in positions}
    out: list[dict[str, Any]] = []
    for stored in shown:
        message = stored.message
        entry: dict[str, Any] = {"position": stored.position, "role": message.role,
                                 "at": iso(stored.created_at)}
        text = message.text
        if text:
            entry["text"] = shaper.text(text, max_chars, more=_MORE)
        calls = [_call(stored.position, index, call, results.get((stored.position, index)),
                       shaper, max_chars)
                 for index, call in enumerate(message.tool_calls)]
        if calls:
            entry["calls"] = calls
        loose = [{"call_id": result.call_id, "is_error": result.is_error,
                  "text": shaper.text(result.text, max_chars, more=_MORE)}
                 for index, result in enumerate(message.tool_results)
                 if (stored.position, index) not in placed]
        if loose:
            entry["results"] = loose
        if len(entry) > 3 or not message.tool_results:
            out.append(entry)
    return out


def _call(position: int, index: int, call: store.ToolCall | store.InvalidToolCall,
          answered: tuple[int, store.ToolResult] | None, shaper: Shaper,
          max_chars: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"index": index, "call_id": call.id, "tool": call.name,
                             "arguments": shaper.text(call.arguments_text, max_chars,
                                                      more=_MORE)}
    if isinstance(call, store.InvalidToolCall):
        entry["invalid"] = shaper.text(call.error_message, 300)
    if answered is None:
        entry["result"] = None
    else:
        at, result = answered
        entry["result"] = {"position": at, "is_error": result.is_error,
                           "text": shaper.text(result.text, max_chars, more=_MORE)}
    return entry
