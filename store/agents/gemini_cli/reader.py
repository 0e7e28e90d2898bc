"""Reader of Gemini CLI chat files (``~/.gemini/tmp/<project>/chats/session-*.json[l]``)
(domain).

Two layouts: the legacy JSON document (below), and, since v0.39.0, JSON lines
(:func:`gemini_cli_lines_document` folds them into the same document first).

One JSON document ``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}``, each
message ``{id, timestamp, type: "user" | "gemini" | "info" | "error" | "warning", content,
thoughts?, toolCalls?, model?, tokens?}``. The CLI rewrites the whole file as the chat goes on.

* ``user`` messages become user messages; ``gemini`` messages assistant messages (thoughts,
  text, then the calls). A ``gemini`` message with ``toolCalls`` is followed by a ``tool``
  message with their results, taken from each call's ``result`` (``functionResponse`` parts:
  the response when there is one part, else the parts as recorded); ``status: "error"`` marks
  the result as an error. A call with neither result nor final status has no result yet.
* A ``gemini`` message's ``tokens`` are its response's token usage
  (:func:`store.usage.tokens.gemini_cli_usage`).
* Keys: the message ``id`` (``<id>:results`` for the results), else ``<session id>:<index>``.
* A subagent's chat (``kind: "subagent"``) is written to ``chats/<parent session id>/<its
  id>.jsonl``: its parent is that folder's name (kind ``subagent``).
* ``info`` / ``error`` / ``warning`` entries are CLI notices, not conversation: skipped with
  a reason. The last message, when it is the model's, may still gain tool calls or results
  while the CLI runs: it is deferred unless the file is settled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.agents.registry import FileInput
from store.core.errors import AmbiguousRecord, ImportFileError, StoreError
from store.core.keys import canonical_keys, snake_key
from store.core.lineage import SessionLink
from store.core.model import Message, Part, ServerToolCall, TextPart, ThinkingPart, ToolResult
from store.importers.base import Collector, path_session_id
from store.importers.lines import moment, span
from store.normalize.calls import read_call
from store.normalize.messages import normalize_message
from store.usage.tokens import gemini_cli_usage

__all__ = ["gemini_cli_lines_document", "read_file", "read_gemini_cli"]

_NOTICES = frozenset({"info", "error", "warning"})
_FINAL_STATUSES = frozenset({"success", "error", "cancelled"})
_CALL_KEYS = frozenset({"result", "result_display", "status"})


def gemini_cli_lines_document(records: list[tuple[int, Any]],
                              collector: Collector) -> dict[str, Any] | None:
    """The conversation a Gemini CLI JSON-lines chat (v0.39.0+) holds, as one legacy document.

    The file is append-only (``chatRecordingService.ts``): a metadata line (``sessionId``,
    ``projectHash``, ``startTime`` ...), then message records upserted by ``id`` (the last
    version of an id wins, in first-insertion order), ``{"$set": {...}}`` metadata updates
    (``$set.messages`` replaces the whole list: a checkpoint) and ``{"$rewindTo": id}``
    (that message and every later one are dropped; an unknown id clears all). ``None`` when
    no line is a chat record.
    """
    meta: dict[str, Any] = {}
    entries: dict[str, Any] = {}
    found = False
    for line, record in records:
        if not isinstance(record, Mapping):
            collector.problem(line, f"not a Gemini CLI chat record: a JSON "
                                    f"{type(record).__name__}")
            continue
        if "$rewindTo" in record:
            found = True
            target = record["$rewindTo"]
            kept: dict[str, Any] = {}
            for key, value in entries.items():
                if key == target:
                    break
                kept[key] = value
            entries = kept if target in entries else {}
        elif isinstance(record.get("id"), str):
            found = True
            entries[record["id"]] = record  # an update keeps the first position (a JS Map)
        elif isinstance(record.get("$set"), Mapping):
            found = True
            update = dict(record["$set"])
            checkpoint = update.pop("messages", None)
            if isinstance(checkpoint, list):
                entries = {m["id"] if isinstance(m, Mapping) and isinstance(m.get("id"), str)
                           else f"#{line}:{i}": m for i, m in enumerate(checkpoint)}
            meta.update(update)
        elif "sessionId" in record or "session_id" in record:
            found = True
            header = dict(record)
            listed = header.pop("messages", None)
            if isinstance(listed, list):  # a whole legacy record on one line
                for i, m in enumerate(listed):
                    key = m["id"] if isinstance(m, Mapping) and isinstance(m.get("id"), str) \
                        else f"#{line}:{i}"
                    entries[key] = m
            meta.update(header)
        else:
            collector.problem(line, "not a Gemini CLI chat record: keys "
                                    f"{sorted(str(k) for k in record)}")
    if not found:
        return None
    return {**meta, "messages": list(entries.values())}


def read_gemini_cli(document: Any, collector: Collector) -> None:
    """A Gemini CLI chat document (see the module docstring)."""
    if not isinstance(document, Mapping):
        collector.problem(1, "a Gemini CLI chat must be a JSON object")
        return
    try:
        top, _ = canonical_keys(document)
    except AmbiguousRecord as exc:
        collector.problem(1, str(exc))
        return
    messages = top.get("messages")
    if not isinstance(messages, list):
        collector.problem(1, "a Gemini CLI chat needs a 'messages' list")
        return
    sid = top.get("session_id")
    if not isinstance(sid, str) or not sid:
        sid = path_session_id(collector.source.path)
    model = next((m.get("model") for m in messages if isinstance(m, Mapping)
                  and m.get("type") == "gemini" and isinstance(m.get("model"), str)), None)
    parent = None
    folder = collector.source.path.parent.name
    if top.get("kind") == "subagent" and folder not in ("chats", "", sid):
        parent = SessionLink(folder, "subagent")  # chats/<parent session id>/<id>.jsonl
    session = collector.session(
        sid, provider="google", model=model, parent=parent,
        tags=("gemini-cli", "subagent") if top.get("kind") == "subagent" else (),
        metadata={k: top[k] for k in ("project_hash", "start_time", "kind", "summary")
                  if top.get(k) is not None},
    )
    first, last = span(m.get("timestamp") for m in messages if isinstance(m, Mapping))
    session.started_at = moment(top.get("start_time")) or first
    session.ended_at = max((t for t in (moment(top.get("last_updated")), last) if t),
                           default=None)
    settled = collector.source.settled
    for index, raw in enumerate(messages):
        if (index == len(messages) - 1 and not settled and isinstance(raw, Mapping)
                and raw.get("type") == "gemini"):
            collector.defer(None, index)  # it may still gain calls or results
            return
        _read_entry(raw, index, sid, session, collector)


def _read_entry(raw: Any, index: int, sid: str, session: Any, collector: Collector) -> None:
    if not isinstance(raw, Mapping):
        collector.problem(None, "a Gemini CLI message must be an object", index)
        return
    try:
        entry, _ = canonical_keys(raw)
        kind = entry.get("type")
        if kind in _NOTICES:
            collector.skip(f"gemini-cli: {kind} message")
            return
        if kind not in ("user", "gemini"):
            collector.problem(None, f"unknown Gemini CLI message type {kind!r}", index)
            return
        entry_id = entry.get("id")
        key = entry_id if isinstance(entry_id, str) and entry_id else f"{sid}:{index}"
        metadata = {k: entry[k] for k in ("timestamp", "model", "tokens") if k in entry}
        parts = _content_parts(entry.get("content"))
        if kind == "user":
            collector.add(session, Message("user", parts, "gemini_cli", _id(entry_id),
                                           metadata=metadata), key, item=index)
            return
        thoughts = [_thought(t) for t in entry.get("thoughts") or () if isinstance(t, Mapping)]
        calls = entry.get("tool_calls") or []
        if not isinstance(calls, list):
            raise StoreError(f"toolCalls must be a list, got {type(calls).__name__}")
        call_parts: list[Part] = []
        results: list[Part] = []
        for call in calls:
            made, result = _read_tool_call(call)
            call_parts.append(made)
            if result is not None:
                results.append(result)
    except (StoreError, TypeError, ValueError) as exc:
        collector.problem(None, str(exc), index)
        return
    assistant = Message("assistant", (*thoughts, *parts, *call_parts), "gemini_cli",
                        _id(entry_id), metadata=metadata)
    collector.add(session, assistant, key, item=index,
                  usage=gemini_cli_usage(entry.get("tokens"), model=entry.get("model"),
                                         response_id=_id(entry_id)))
    if results:
        collector.add(session, Message("tool", tuple(results), "gemini_cli", None,
                                       metadata=metadata), f"{key}:results", item=index)


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _content_parts(content: Any) -> tuple[Part, ...]:
    """A message's ``content``: text, or a list of Gemini parts (strings allowed)."""
    if content is None or content == "":
        return ()
    if isinstance(content, str):
        return (TextPart(content),)
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        raise StoreError(f"message content must be text or parts, got {type(content).__name__}")
    parts = [{"text": p} if isinstance(p, str) else p for p in content]
    return normalize_message({"role": "user", "parts": parts}).parts


def _thought(raw: Mapping[str, Any]) -> ThinkingPart:
    description = raw.get("description")
    return ThinkingPart(description if isinstance(description, str) else "", None,
                        {k: v for k, v in raw.items() if k != "description"})


def _read_tool_call(raw: Any) -> tuple[Part, ToolResult | None]:
    """A ``toolCalls`` entry: the call, and its result when it has one."""
    if not isinstance(raw, Mapping):
        raise StoreError(f"a Gemini CLI tool call must be an object, got {raw!r}")
    call_record = {k: v for k, v in raw.items()
                   if not isinstance(k, str) or snake_key(k) not in _CALL_KEYS}
    call = read_call(call_record)
    if isinstance(call, ServerToolCall):
        raise StoreError(f"not a client tool call: {call.name!r}")
    body, _ = canonical_keys(raw)
    status = body.get("status")
    result = body.get("result")
    if result is None and status not in _FINAL_STATUSES:
        return call, None
    content: Any = result
    if isinstance(result, list) and len(result) == 1 and isinstance(result[0], Mapping):
        part, _ = canonical_keys(result[0])
        response = part.get("function_response")
        if isinstance(response, Mapping) and "response" in response:
            content = response["response"]
    extras = {k: v for k, v in (("status", status), ("resultDisplay", body.get("result_display")))
              if v is not None}
    if content is None and "resultDisplay" in extras:
        content = extras["resultDisplay"]
    return call, ToolResult(call.id, content, status == "error", call.name, extras, "gemini_cli")


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a chat document, or its JSON-lines layout (v0.39.0+)."""
    document: Any = file.document if file.has_document else None
    records = file.records
    if (document is None and len(records) == 1 and isinstance(records[0][1], Mapping)
            and isinstance(records[0][1].get("messages"), list)):
        document = records[0][1]
    if document is None and records:
        document = gemini_cli_lines_document(records, collector)
        if document is None:
            raise ImportFileError(file.path, "no Gemini CLI chat record in "
                                             f"{len(records)} JSON lines")
    if document is not None or file.has_document:
        read_gemini_cli(document, collector)
