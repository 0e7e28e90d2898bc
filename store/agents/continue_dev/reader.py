"""Reader of Continue sessions (``~/.continue/sessions/<session id>.json``; domain).

Learnt from Continue's own writer, ``continuedev/continue`` ``core/util/history.ts``
(``HistoryManager.save``: the session file and ``sessions.json``), ``core/util/paths.ts``
(``CONTINUE_GLOBAL_DIR``, ``sessions/``) and ``core/index.d.ts`` (``Session``,
``BaseSessionMetadata``, ``ChatHistoryItem``, ``ChatMessage``, ``ToolCallState``,
``ToolStatus``, ``Usage``), read at d0a3c0b6; the CLI (``extensions/cli/src/session.ts``)
writes the same files.

A session is ``{sessionId, title, workspaceDirectory, history, mode?, chatModelTitle?,
usage?}``; each history item holds one ``message`` (``user``, ``assistant``, ``thinking``,
``tool``, ``system``) with, on an assistant item, its ``toolCallStates``:

* user messages are prompts (text parts joined); ``thinking`` messages are the assistant's
  thinking (kept as a message of its own, as Continue keeps them); ``system`` messages are
  kept as such;
* an assistant message's ``toolCalls`` (``{id, type, function: {name, arguments}}``) are
  its calls, arguments as written; ``tool`` messages (``toolCallId``) their results; a call
  whose state is ``errored`` or ``canceled`` has an error result (its ``output`` when no
  ``tool`` message answers it), one still ``generated``, ``generating`` or ``calling`` has
  none unless a ``tool`` message answers it;
* ``usage`` on an assistant message is that response's (``promptTokens``,
  ``completionTokens``, ``promptTokensDetails.cachedTokens`` / ``cacheWriteTokens``, kept as
  the provider counted them); without any, the session's ``usage`` totals are one row on
  the last assistant message.

Keys are ``<session id>:<index>``: the file is rewritten whole, items are only appended (an
edit that truncates the history makes later items new). No message has a time: the
session's start is ``sessions.json``'s ``dateCreated`` (milliseconds), its end the latest of
that and the thinking times (``reasoning.startAt`` / ``endAt``). The model is
``chatModelTitle`` (a configured model's title), else the first prompt log's ``modelTitle``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from store.agents.continue_dev import LIST_FILE, is_continue_session
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import StoreError
from store.core.model import Message, Part, TextPart, ThinkingPart, ToolResult
from store.importers.base import Collector, path_session_id
from store.importers.lines import moment, text_of
from store.importers.titles import prompt_title
from store.normalize.calls import read_call
from store.usage.tokens import TokenUsage

__all__ = ["read_file"]

_SOURCE = "continue"
_NEW_SESSION = "New Session"  # core/util/constants.ts NEW_SESSION_TITLE
_FAILED = {"errored": "errored", "canceled": "canceled"}


def _listed(path: Path, sid: str) -> Mapping[str, Any]:
    """The session's entry in ``sessions.json`` beside it (``{}`` when none)."""
    try:
        listing = loads_json((path.parent / LIST_FILE).read_text("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    for entry in listing if isinstance(listing, list) else ():
        if isinstance(entry, Mapping) and entry.get("sessionId") == sid:
            return entry
    return {}


def _local(folder: Any) -> str | None:
    if not isinstance(folder, str) or not folder:
        return None
    if not folder.startswith("file://"):
        return folder
    local = unquote(urlparse(folder).path)
    return local[1:] if len(local) > 2 and local[0] == "/" and local[2] == ":" else local


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return ""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage(usage: Any, model: str | None) -> TokenUsage | None:
    if not isinstance(usage, Mapping):
        return None
    details = usage.get("promptTokensDetails")
    details = details if isinstance(details, Mapping) else {}
    found = TokenUsage(_count(usage.get("promptTokens")), _count(usage.get("completionTokens")),
                       _count(details.get("cacheWriteTokens")),
                       _count(details.get("cachedTokens")), model=model)
    return found if found.total else None


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: one Continue session document (see the module docstring)."""
    data = file.document
    if not is_continue_session(data):
        collector.problem(None, "not a Continue session (no sessionId, workspaceDirectory "
                                "and history)")
        return
    sid = text_of(data.get("sessionId")) or file.path.stem or path_session_id(file.path)
    listed = _listed(file.path, sid)
    prompt_log_model = None
    for item in data["history"]:
        logs = item.get("promptLogs") if isinstance(item, Mapping) else None
        for log in logs if isinstance(logs, list) else ():
            if isinstance(log, Mapping) and text_of(log.get("modelTitle")):
                prompt_log_model = prompt_log_model or log["modelTitle"]
    model = text_of(data.get("chatModelTitle")) or prompt_log_model
    session = collector.session(
        sid, provider=None, model=model,
        cwd=_local(data.get("workspaceDirectory") or listed.get("workspaceDirectory")),
        metadata={k: v for k, v in (("mode", text_of(data.get("mode"))),
                                    ("session_usage", data.get("usage"))) if v})
    stamps: list[Any] = []
    created = listed.get("dateCreated")
    if isinstance(created, str) and created.isdigit():
        created = int(created)
    stamps.append(created)
    answered: set[str] = set()
    states: dict[str, Mapping[str, Any]] = {}
    for item in data["history"]:
        message = item.get("message") if isinstance(item, Mapping) else None
        if isinstance(message, Mapping) and message.get("role") == "tool":
            answered.add(str(message.get("toolCallId")))
        found = item.get("toolCallStates") if isinstance(item, Mapping) else None
        for state in found if isinstance(found, list) else ():
            if isinstance(state, Mapping) and text_of(state.get("toolCallId")):
                states[state["toolCallId"]] = state
    last_assistant: str | None = None
    recorded_usage = False
    for index, item in enumerate(data["history"]):
        key = f"{sid}:{index}"
        try:
            message, usage = _message(item, index, states, answered, model)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"history item {index}: {exc}", index)
            continue
        reasoning = item.get("reasoning") if isinstance(item, Mapping) else None
        if isinstance(reasoning, Mapping):
            stamps += [reasoning.get("startAt"), reasoning.get("endAt")]
        if message is None:
            collector.skip("continue: an empty history item")
            continue
        collector.add(session, message, key, item=index, usage=usage)
        if message.role == "assistant":
            last_assistant = key
            recorded_usage = recorded_usage or usage is not None
            for state in _unanswered(item, states, answered):
                collector.add(session, Message("tool", (state,), _SOURCE, None),
                              f"{key}:result:{state.call_id}", item=index)
    total = _usage(data.get("usage"), model)
    if not recorded_usage and total is not None and last_assistant is not None:
        session.usage[last_assistant] = total
    times = [t for t in (moment(s) for s in stamps) if t is not None]
    session.started_at = moment(created) or (min(times) if times else None)
    session.ended_at = max(times) if times else None
    title = text_of(data.get("title")) or text_of(listed.get("title"))
    session.title = title if title and title != _NEW_SESSION else prompt_title(session.items)


def _message(item: Any, index: int, states: Mapping[str, Mapping[str, Any]],
             answered: set[str], model: str | None) -> tuple[Message | None, TokenUsage | None]:
    if not isinstance(item, Mapping) or not isinstance(item.get("message"), Mapping):
        raise StoreError("no message")
    message = item["message"]
    role = message.get("role")
    text = _text(message.get("content"))
    if role == "user" or role == "system":
        return (Message(role, (TextPart(text),), _SOURCE, None) if text else None), None
    if role == "thinking":
        return (Message("assistant", (ThinkingPart(text),), _SOURCE, None,
                        metadata={"continue_role": "thinking"}) if text else None), None
    if role == "tool":
        call_id = text_of(message.get("toolCallId"))
        if call_id is None:
            raise StoreError("a tool message needs its toolCallId")
        state = states.get(call_id, {})
        failed = state.get("status") in _FAILED
        extras = {"status": state["status"]} if text_of(state.get("status")) else {}
        return Message("tool", (ToolResult(call_id, message.get("content"), failed, None,
                                           extras, _SOURCE),), _SOURCE, None), None
    if role != "assistant":
        raise StoreError(f"unknown message role {role!r}")
    parts: list[Part] = [TextPart(text)] if text else []
    calls = message.get("toolCalls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not text_of(call.get("id")):
            raise StoreError(f"a tool call needs an id and a function: {call!r}")
        parts.append(read_call({"id": call["id"], "name": function.get("name") or "",
                                "arguments": function.get("arguments") or "{}"}))
    if not parts:
        return None, None
    metadata = {"model": model} if model else {}
    return (Message("assistant", tuple(parts), _SOURCE, None, metadata=metadata),
            _usage(message.get("usage"), model))


def _unanswered(item: Mapping[str, Any], states: Mapping[str, Mapping[str, Any]],
                answered: set[str]) -> list[ToolResult]:
    """Results from the states of calls no ``tool`` message answers: an error for a failed
    or cancelled call, the output of a finished one."""
    found: list[ToolResult] = []
    listed = item.get("toolCallStates")
    for state in listed if isinstance(listed, list) else ():
        if not isinstance(state, Mapping) or state.get("toolCallId") in answered:
            continue
        status = state.get("status")
        if status not in ("done", *_FAILED):
            continue
        output = state.get("output")
        content = "\n".join(o.get("content", "") for o in output if isinstance(o, Mapping)
                            and isinstance(o.get("content"), str)) if isinstance(
                                output, list) else None
        found.append(ToolResult(str(state["toolCallId"]), content or f"tool call {status}",
                                status in _FAILED, None, {"status": status}, _SOURCE))
    return found
