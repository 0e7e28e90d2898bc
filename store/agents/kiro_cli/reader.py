"""Reader of Kiro CLI's and Amazon Q Developer CLI's conversations (domain).

**The database** (``data.sqlite3``; see the definition for the sources). Amazon Q keeps one
conversation per folder: ``conversations(key TEXT PRIMARY KEY, value TEXT)``, the key the
folder, the value the ``ConversationState`` as JSON. Kiro CLI keeps several:
``conversations_v2(key, conversation_id, value, created_at, updated_at)`` (times in ms),
and still has the old table (its rows copied into the new one by migration 008). The state:
``conversation_id``, ``history``, ``model`` (older) / ``model_info {model_id}``,
``latest_summary``, ``transcript`` (the screen's text, not read). ``history`` is a list of
``{user, assistant, request_metadata}`` (before July 2025: ``[user, assistant]`` pairs):

* ``user``: ``{content, timestamp, env_context: {env_state: {current_working_directory}},
  additional_context, images}``; ``content`` is ``{"Prompt": {prompt}}``,
  ``{"ToolUseResults": {tool_use_results}}`` or ``{"CancelledToolUses": {prompt,
  tool_use_results}}``; a result is ``{tool_use_id, content: [{"Text": s} | {"Json": v}],
  status: "Success" | "Error"}``.
* ``assistant``: ``{"Response": {message_id, content}}`` or ``{"ToolUse": {message_id,
  content, tool_uses: [{id, name, orig_name, args, orig_args}]}}``.
* ``request_metadata``: ``request_id``, ``request_start_timestamp_ms``,
  ``stream_end_timestamp_ms``, ``model_id`` ... (no tokens).

Each entry becomes its user message (a prompt; results a ``tool`` message; a cancelled
tool's prompt both), then its assistant message, keyed ``<conversation>:<index>:user`` /
``:assistant``. The session is the conversation id; its cwd the row's key. A row of the old
table whose conversation the new one holds is left out (the same conversation).

**Session logs** (``~/.kiro/sessions/cli/<id>.jsonl``, with ``<id>.json`` beside it): one
``LogEntry`` a line, ``{"version": "v1", "kind": ..., "data": ...}``; ``Prompt {message_id,
content, meta: {timestamp (epoch s)}}``, ``AssistantMessage {message_id, content}``,
``ToolResults {message_id, content, results}``, and the events ``Compaction``, ``ResetTo``,
``CancelledPrompt``, ``Clear`` (the log keeps every message: they are counted, not applied).
Content blocks are ``{"kind": "text" | "toolUse" | "toolResult" | "image" | "thinking",
"data": ...}``; a ``toolUse`` is ``{toolUseId, name, input}``, a ``toolResult`` ``{toolUseId,
content: [{kind, data}], status: "success" | "error"}``. The ``.json`` (``SessionData``):
``session_id``, ``cwd``, ``created_at``, ``updated_at``, ``title``, ``session_state``
``{version: v1, conversation_metadata: {user_turn_metadatas: [{message_ids,
input_token_count, output_token_count, end_timestamp}]}, rts_model_state: {model_info}}``;
each turn's tokens go on its last reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import ImportFileError, StoreError
from store.core.model import (
    Message,
    OpaquePart,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolResult,
    make_tool_call,
)
from store.importers.base import Collector, ParsedSession
from store.importers.lines import span, text_of
from store.usage.tokens import TokenUsage

__all__ = ["read_file", "read_kiro_db"]

_SOURCE = "kiro-cli"


# -- the database ------------------------------------------------------------------------

def read_kiro_db(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """The ``conversations_v2`` rows (Kiro CLI), then the ``conversations`` rows no newer row
    holds: Amazon Q's (Kiro writes only the new table), tagged ``amazon-q``."""
    seen: set[str] = set()
    for row in tables.get("conversations_v2", ()):
        if _read_row(row, collector, ("kiro-cli",)):
            seen.add(str(row.get("conversation_id")))
    for row in tables.get("conversations", ()):
        state = _state(row, collector)
        if state is None:
            continue
        if str(state.get("conversation_id")) in seen:
            collector.skip("kiro-cli: a conversation its conversations_v2 row holds")
            continue
        _read_state(state, row, collector, ("kiro-cli", "amazon-q"))


def _state(row: Mapping[str, Any], collector: Collector) -> Mapping[str, Any] | None:
    raw = row.get("value")
    try:
        state = loads_json(raw) if isinstance(raw, str | bytes) else raw
    except ValueError as exc:
        collector.problem(None, f"kiro-cli conversation of {row.get('key')!r}: not JSON ({exc})")
        return None
    if not isinstance(state, Mapping) or not isinstance(state.get("history"), list):
        collector.problem(None, f"kiro-cli conversation of {row.get('key')!r}: not a "
                                "conversation state (no history list)")
        return None
    return state


def _read_row(row: Mapping[str, Any], collector: Collector, tags: tuple[str, ...]) -> bool:
    state = _state(row, collector)
    if state is None:
        return False
    _read_state(state, row, collector, tags)
    return True


def _read_state(state: Mapping[str, Any], row: Mapping[str, Any], collector: Collector,
                tags: tuple[str, ...]) -> None:
    sid = text_of(state.get("conversation_id")) or text_of(row.get("conversation_id"))
    if sid is None:
        collector.problem(None, f"kiro-cli conversation of {row.get('key')!r}: no id")
        return
    info = state.get("model_info")
    model = (text_of(info.get("model_id")) if isinstance(info, Mapping) else None) \
        or text_of(state.get("model"))
    metadata: dict[str, Any] = {}
    summary = state.get("latest_summary")
    if summary:
        metadata["latest_summary"] = summary[0] if isinstance(summary, list) else summary
    session = collector.session(sid, cwd=text_of(row.get("key")), tags=tags,
                                metadata=metadata)
    times: list[Any] = [row.get("created_at"), row.get("updated_at")]
    models: list[str] = []
    for index, entry in enumerate(state["history"]):
        try:
            user, assistant, request = _entry(entry)
            times += _add_entry(session, f"{sid}:{index}", user, assistant, request, collector)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"kiro-cli conversation {sid!r} entry {index}: {exc}")
            continue
        if isinstance(request, Mapping) and text_of(request.get("model_id")):
            models.append(str(request["model_id"]))
    if state.get("next_message"):
        collector.skip("kiro-cli: a prompt not sent yet (next_message)")
    session.model = models[-1] if models else model
    session.started_at, session.ended_at = span(times)


def _entry(entry: Any) -> tuple[Mapping[str, Any], Any, Any]:
    if isinstance(entry, Mapping):
        user, assistant, request = entry.get("user"), entry.get("assistant"), \
            entry.get("request_metadata")
    elif isinstance(entry, list) and len(entry) == 2:
        (user, assistant), request = entry, None
    else:
        raise StoreError("not a history entry ({user, assistant} or a [user, assistant] pair)")
    if not isinstance(user, Mapping):
        raise StoreError("the entry has no user message")
    return user, assistant, request


def _variant(value: Any) -> tuple[str, Mapping[str, Any]]:
    """An externally tagged enum value: ``{"Name": {...}}``."""
    if isinstance(value, Mapping) and len(value) == 1:
        ((name, body),) = value.items()
        if isinstance(body, Mapping):
            return str(name), body
    raise StoreError(f"not a tagged value: {str(value)[:80]!r}")


def _add_entry(session: ParsedSession, key: str, user: Mapping[str, Any], assistant: Any,
               request: Any, collector: Collector) -> list[Any]:
    stamp = user.get("timestamp")
    meta = {"timestamp": stamp}
    kind, body = _variant(user.get("content"))
    env = user.get("env_context")
    state = env.get("env_state") if isinstance(env, Mapping) else None
    if session.cwd is None and isinstance(state, Mapping):
        session.cwd = text_of(state.get("current_working_directory"))
    results = body.get("tool_use_results")
    if kind in ("ToolUseResults", "CancelledToolUses") and isinstance(results, list):
        answers = tuple(_v1_result(r, kind == "CancelledToolUses") for r in results)
        collector.add(session, Message("tool", answers, _SOURCE, None, metadata=meta),
                      f"{key}:results")
    elif kind != "Prompt":
        raise StoreError(f"unknown user content {kind!r}")
    prompt = text_of(body.get("prompt"))
    if prompt is not None:
        collector.add(session, Message("user", (TextPart(prompt),), _SOURCE, None,
                                       metadata=meta), f"{key}:user")
    times = [stamp]
    request = request if isinstance(request, Mapping) else {}
    times += [request.get("request_start_timestamp_ms"), request.get("stream_end_timestamp_ms")]
    if assistant is None:
        return times
    kind, body = _variant(assistant)
    if kind not in ("Response", "ToolUse"):
        raise StoreError(f"unknown assistant message {kind!r}")
    parts: list[Part] = []
    text = body.get("content")
    if isinstance(text, str) and text.strip():
        parts.append(TextPart(text))
    for use in body.get("tool_uses") or ():
        if not isinstance(use, Mapping):
            raise StoreError("a tool use must be an object")
        extras = {"orig_name": use["orig_name"]} if use.get("orig_name") not in (
            None, "", use.get("name")) else None
        parts.append(make_tool_call(text_of(use.get("id")), str(use.get("name") or ""),
                                    use.get("args") if use.get("args") is not None else {},
                                    extras=extras, source=_SOURCE))
    reply = {"timestamp": request.get("stream_end_timestamp_ms"),
             "request_id": request.get("request_id"), "model_id": request.get("model_id")}
    collector.add(session, Message("assistant", tuple(parts), _SOURCE,
                                   text_of(body.get("message_id")),
                                   metadata={k: v for k, v in reply.items() if v is not None}),
                  f"{key}:assistant")
    return times


def _v1_result(result: Any, cancelled: bool) -> ToolResult:
    if not isinstance(result, Mapping):
        raise StoreError("a tool result must be an object")
    blocks = result.get("content")
    content: Any = blocks
    if isinstance(blocks, list):  # [{"Text": s} | {"Json": v}]: the values
        values = [next(iter(b.values())) if isinstance(b, Mapping) and len(b) == 1 else b
                  for b in blocks]
        content = values[0] if len(values) == 1 else values
    extras = {"cancelled": True} if cancelled else {}
    return ToolResult(text_of(result.get("tool_use_id")), content,
                      result.get("status") == "Error", None, extras, _SOURCE)


# -- session logs ------------------------------------------------------------------------

def read_file(file: FileInput, collector: Collector) -> None:
    """A session log ``<id>.jsonl`` and its ``<id>.json``."""
    if file.has_document and not file.records:
        raise ImportFileError(file.path, "not a Kiro CLI session log (JSON lines)")
    data = _sidecar(file.path, collector)
    sid = text_of(data.get("session_id")) or file.path.name.removesuffix(".jsonl")
    state = data.get("session_state")
    state = state if isinstance(state, Mapping) else {}
    rts = state.get("rts_model_state")
    info = rts.get("model_info") if isinstance(rts, Mapping) else None
    model = text_of(info.get("model_id")) if isinstance(info, Mapping) else None
    metadata = {k: data[k] for k in ("exported_from_v1", "imported_from") if data.get(k)}
    if text_of(state.get("agent_name")):
        metadata["agent_name"] = state["agent_name"]
    session = collector.session(sid, title=text_of(data.get("title")),
                                cwd=text_of(data.get("cwd")), model=model, metadata=metadata)
    keys: dict[str, str] = {}
    times: list[Any] = [data.get("created_at"), data.get("updated_at")]
    for line, record in file.records:
        if not isinstance(record, Mapping) or record.get("version") != "v1":
            collector.problem(line, "not a Kiro CLI log entry (no version v1)")
            continue
        kind, body = record.get("kind"), record.get("data")
        if kind in ("ResetTo", "CancelledPrompt", "Clear"):
            collector.skip(f"kiro-cli: {kind}")
            continue
        if kind == "Compaction":
            if isinstance(body, Mapping) and text_of(body.get("summary")):
                session.metadata["compaction_summary"] = body["summary"]
            collector.skip("kiro-cli: Compaction")
            continue
        if kind not in ("Prompt", "AssistantMessage", "ToolResults") or not isinstance(
                body, Mapping):
            collector.problem(line, f"unknown Kiro CLI log entry {kind!r}")
            continue
        try:
            message = _log_message(str(kind), body)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(line, f"kiro-cli {kind}: {exc}")
            continue
        mid = text_of(body.get("message_id")) or f"line-{line}"
        key = f"{sid}:{mid}"
        keys[mid] = key
        times.append(message.metadata.get("timestamp"))
        collector.add(session, message, key, line)
    _turn_usage(state, keys, session)
    session.started_at, session.ended_at = span(times)


def _sidecar(path: Path, collector: Collector) -> Mapping[str, Any]:
    sidecar = path.with_name(path.name.removesuffix(".jsonl") + ".json")
    try:
        data = loads_json(sidecar.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        collector.problem(None, f"{sidecar.name}: {exc}")
        return {}
    if not isinstance(data, Mapping):
        collector.problem(None, f"{sidecar.name}: not a JSON object")
        return {}
    return data


def _log_message(kind: str, body: Mapping[str, Any]) -> Message:
    blocks = body.get("content")
    if not isinstance(blocks, list):
        raise StoreError("content must be a list of blocks")
    parts = tuple(_block(b) for b in blocks)
    meta: dict[str, Any] = {}
    recorded = body.get("meta")
    if isinstance(recorded, Mapping) and recorded.get("timestamp") is not None:
        meta["timestamp"] = recorded["timestamp"]
    if kind == "AssistantMessage":
        return Message("assistant", parts, _SOURCE, text_of(body.get("message_id")),
                       metadata=meta)
    role: Role = "tool" if kind == "ToolResults" else "user"
    return Message(role, parts, _SOURCE, text_of(body.get("message_id")), metadata=meta)


def _block(block: Any) -> Part:
    if not isinstance(block, Mapping):
        raise StoreError(f"a content block must be an object, got {block!r}")
    kind, data = block.get("kind"), block.get("data")
    if kind == "text" and isinstance(data, str):
        return TextPart(data)
    if kind == "thinking" and isinstance(data, Mapping):
        return ThinkingPart(str(data.get("text") or ""), text_of(data.get("signature")))
    if kind == "toolUse" and isinstance(data, Mapping):
        return make_tool_call(text_of(data.get("toolUseId")), str(data.get("name") or ""),
                              data.get("input") if data.get("input") is not None else {},
                              source=_SOURCE)
    if kind == "toolResult" and isinstance(data, Mapping):
        items = data.get("content")
        values = [i.get("data") if isinstance(i, Mapping) else i
                  for i in (items if isinstance(items, list) else [])]
        return ToolResult(text_of(data.get("toolUseId")),
                          values[0] if len(values) == 1 else values,
                          data.get("status") == "error", None, {}, _SOURCE)
    return OpaquePart(f"kiro_{kind}", dict(block))


def _turn_usage(state: Mapping[str, Any], keys: Mapping[str, str],
                session: ParsedSession) -> None:
    """Each user turn's tokens, on the turn's last reply the log holds."""
    meta = state.get("conversation_metadata")
    turns = meta.get("user_turn_metadatas") if isinstance(meta, Mapping) else None
    replies = {k for k, m in zip(session.keys, session.items, strict=True)
               if m.role == "assistant"}
    for turn in turns if isinstance(turns, list) else ():
        if not isinstance(turn, Mapping):
            continue
        inputs, outputs = turn.get("input_token_count"), turn.get("output_token_count")
        if not isinstance(inputs, int) or not isinstance(outputs, int) or not inputs + outputs:
            continue
        ids = [keys.get(str(i)) for i in turn.get("message_ids") or ()]
        last = next((k for k in reversed(ids) if k in replies), None)
        if last is not None:
            session.usage[last] = TokenUsage(inputs, outputs, model=session.model)
