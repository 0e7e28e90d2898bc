"""Reader of Goose's session database (``~/.local/share/goose/sessions/sessions.db``; domain).

Learnt from ``block/goose`` ``crates/goose/src/session/session_manager.rs`` (schema and its
migrations) and ``crates/goose/src/conversation/message.rs``. Table ``sessions`` (``id``
``YYYYMMDD_N``, ``name`` (``description`` before schema 4), ``user_set_name``,
``session_type`` ``user | scheduled | sub_agent | hidden``, ``working_dir``, ``created_at``,
``updated_at``, ``total_tokens``, ``input_tokens``, ``output_tokens``,
``accumulated_*_tokens``, ``provider_name``, ``model_config_json``, ``diverged_from`` ...)
and ``messages`` (``id`` autoincrement, ``session_id``, ``role`` ``user | assistant``,
``content_json``, ``created_timestamp`` in Unix seconds, ``metadata_json``). ``content_json``
is a list of items tagged by ``type``: ``text``, ``image``, ``toolRequest`` ``{id,
toolCall: {status: success, value: {name, arguments}} | {status: error, error}}``,
``toolResponse`` ``{id, toolResult: {status: success, value: [content] | {content,
isError}} | {status: error, error}}``, ``thinking``, ``redactedThinking``,
``frontendToolRequest``, ``toolConfirmationRequest``, ``actionRequired``,
``systemNotification``.

* Goose renumbers its rows when it rewrites a conversation (compaction deletes and inserts
  them again), so a message's key is made from what it holds: ``<session>:<created>:<digest
  of role and content>`` (``#2``, ``#3`` ... for a repeat), stable across rewrites.
* A user row holding only tool responses becomes a ``tool`` message; a response whose
  ``status`` is ``error`` or whose result says ``isError`` is marked as an error. A request
  without a response has none.
* Goose counts tokens per session (``accumulated_*`` over the session's life, else the
  last turn's ``input_tokens``/``output_tokens``): they are kept in the session's metadata
  and stored as the session's totals (``SESSION_TOTALS``) on its first response, replaced by
  each later read, so ``usage`` counts them once (on the day of that response).
* A row's ``metadata_json`` (``userVisible``, ``agentVisible``) is not kept (a compaction
  changes ``agentVisible`` on rows that stay the same messages), except that a text row
  never shown to the user (``userVisible: false``: a compaction's summary, made for the
  model) is the agent's own system text (``origin: agent``), neither a prompt nor a reply.
* A session's ``parent_session_id`` (when its row or header has one) links it to its parent.
* Sub-agent sessions are tagged ``subagent``; Goose does not record their parent. A branched
  session keeps ``diverged_from`` in its metadata.

Before the database (and still in the same folder: Goose imports them into the database when
it creates it), a session was a ``<name>.jsonl`` file: a metadata line (``working_dir``,
``description``, ``schedule_id``, ``message_count``, token counts), then one message per
line ``{role, created, content, metadata?}`` (:func:`read_goose_lines`). The session id is
the file's name, as Goose's import keeps it, and the keys are made the same way, so a
session found in both stores nothing twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from store.agents.goose import is_goose_header
from store.agents.registry import FileInput
from store.core.arguments import dumps_json, loads_json
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
from store.importers.base import Collector
from store.importers.titles import AGENT_MADE, ORIGIN
from store.usage.tokens import SESSION_TOTALS, TokenUsage

__all__ = ["is_goose_header", "read_file", "read_goose_db", "read_goose_lines"]

_SESSION_META = ("session_type", "user_set_name", "schedule_id", "total_tokens",
                 "input_tokens", "output_tokens", "accumulated_total_tokens",
                 "accumulated_input_tokens", "accumulated_output_tokens", "created_at",
                 "updated_at", "diverged_from")


def _json(value: Any) -> Any:
    return loads_json(value) if isinstance(value, str | bytes) and value else value


def read_goose_db(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """Goose's ``sessions`` and ``messages`` rows (see the module docstring)."""
    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in tables.get("messages", ()):
        by_session.setdefault(str(row.get("session_id")), []).append(row)
    for info in tables.get("sessions", ()):
        sid = str(info.get("id"))
        if sid in by_session:
            _read_session(info, by_session[sid], collector)






def read_goose_lines(records: list[tuple[int, Any]], collector: Collector) -> None:
    """A legacy Goose session file (see the module docstring)."""
    path = collector.source.path
    info: dict[str, Any] = {"id": path.name.removesuffix(".jsonl")}
    rows: list[dict[str, Any]] = []
    for number, (line, record) in enumerate(records):
        if not isinstance(record, Mapping):
            collector.problem(line, "not a Goose record: a JSON "
                                    f"{type(record).__name__}")
        elif number == 0 and is_goose_header(record):
            info.update(record)
        elif "role" in record and "content" in record:
            rows.append({"id": line, "role": record.get("role"),
                         "content_json": record.get("content"),
                         "created_timestamp": record.get("created")})
        else:
            collector.problem(line, "not a Goose message: keys "
                                    f"{sorted(str(k) for k in record)}")
    if rows:
        _read_session(info, rows, collector)


def _read_session(info: Mapping[str, Any], rows: list[dict[str, Any]],
                  collector: Collector) -> None:
    sid = str(info["id"])
    metadata: dict[str, Any] = {k: info[k] for k in _SESSION_META
                                if info.get(k) not in (None, "")}
    model = None
    try:
        config = _json(info.get("model_config_json"))
    except ValueError:
        config = None
    if isinstance(config, Mapping) and isinstance(config.get("model_name"), str):
        model = config["model_name"]
    title = next((t for t in (info.get("name"), info.get("description"))
                  if isinstance(t, str) and t.strip()), None)
    kind = info.get("session_type")
    parent = info.get("parent_session_id")
    if isinstance(parent, str) and parent:
        metadata["parent_session"] = parent
    session = collector.session(
        sid, title=title, provider=info.get("provider_name") or None, model=model,
        cwd=info.get("working_dir") or None,
        tags=("goose", "subagent") if kind == "sub_agent" or metadata.get("parent_session")
        else ("goose",), metadata=metadata)
    seen: dict[str, int] = {}
    first_reply: str | None = None
    for row in rows:
        try:
            content = _json(row.get("content_json"))
            if not isinstance(content, list):
                raise StoreError("content_json must be a JSON list")
            message = _message(row, content)
        except (StoreError, TypeError, ValueError) as exc:
            where = row.get("id") if isinstance(row.get("content_json"), list) else None
            collector.problem(where if isinstance(where, int) else None,
                              f"goose message {row.get('id')!r}: {exc}")
            continue
        digest = hashlib.sha256(dumps_json([row.get("role"), content]).encode(
            "utf-8", "surrogatepass")).hexdigest()[:16]
        key = f"{sid}:{row.get('created_timestamp')}:{digest}"
        seen[key] = seen.get(key, 0) + 1
        line = row.get("id") if isinstance(row.get("content_json"), list) else None
        stored = key if seen[key] == 1 else f"{key}#{seen[key]}"
        collector.add(session, message, stored, line if isinstance(line, int) else None)
        if first_reply is None and message.role == "assistant":
            first_reply = stored
    totals = _totals(info, model)
    if totals is not None and first_reply is not None:
        session.usage[first_reply] = totals


def _totals(info: Mapping[str, Any], model: str | None) -> TokenUsage | None:
    """The session's token totals (``accumulated_*``, else the last turn's counts)."""
    for prefix in ("accumulated_", ""):
        inputs, outputs = info.get(f"{prefix}input_tokens"), info.get(f"{prefix}output_tokens")
        if isinstance(inputs, int) and isinstance(outputs, int) and (inputs or outputs):
            return TokenUsage(inputs, outputs, model=model, response_id=SESSION_TOTALS)
    return None


def _message(row: Mapping[str, Any], content: list[Any]) -> Message:
    recorded = row.get("role")
    if recorded not in ("user", "assistant"):
        raise StoreError(f"unknown role {recorded!r}")
    parts = [_part(item) for item in content]
    role: Role = "assistant" if recorded == "assistant" else "user"
    if role == "user" and parts and all(isinstance(p, ToolResult) for p in parts):
        role = "tool"
    metadata: dict[str, Any] = {"timestamp": row.get("created_timestamp")}
    try:
        shown = _json(row.get("metadata_json"))
    except ValueError:
        shown = None
    if isinstance(shown, Mapping) and shown.get("userVisible") is False and all(
            isinstance(p, TextPart) for p in parts):
        # Context Goose made for the model only (a compaction's summary): never shown to
        # the user, neither a prompt nor a reply: the agent's own system text.
        role = "system"
        metadata.update({ORIGIN: AGENT_MADE, "user_visible": False})
    return Message(role, tuple(parts), "goose", None, metadata=metadata)


def _part(item: Any) -> Part:
    if not isinstance(item, Mapping):
        raise StoreError(f"a content item must be an object, got {item!r}")
    kind = item.get("type")
    if kind == "text":
        return TextPart(str(item.get("text") or ""))
    if kind == "thinking":
        signature = item.get("signature")
        return ThinkingPart(str(item.get("thinking") or ""),
                            signature if isinstance(signature, str) and signature else None)
    if kind in ("toolRequest", "frontendToolRequest"):
        call = item.get("toolCall")
        if isinstance(call, Mapping) and call.get("status") == "success" \
                and isinstance(call.get("value"), Mapping):
            value = call["value"]
            extras = {"frontend": True} if kind == "frontendToolRequest" else None
            return make_tool_call(_text(item.get("id")), str(value.get("name") or ""),
                                  value.get("arguments") or {}, extras=extras, source="goose")
    if kind == "toolResponse":
        return _response(item)
    return OpaquePart(f"goose_{kind}", dict(item))


def _response(item: Mapping[str, Any]) -> ToolResult:
    result = item.get("toolResult")
    call_id = _text(item.get("id"))
    if not isinstance(result, Mapping) or result.get("status") != "success":
        error = result.get("error") if isinstance(result, Mapping) else result
        return ToolResult(call_id, error, True, None, {}, "goose")
    value = result.get("value")
    is_error = False
    extras: dict[str, Any] = {}
    if isinstance(value, Mapping):  # a CallToolResult: {content, isError, structuredContent}
        is_error = value.get("isError") is True
        extras = {k: v for k, v in value.items() if k not in ("content", "isError")}
        value = value.get("content")
    content: Any = value
    if (isinstance(value, list) and len(value) == 1 and isinstance(value[0], Mapping)
            and value[0].get("type") == "text" and set(value[0]) <= {"type", "text"}):
        content = value[0].get("text")
    return ToolResult(call_id, content, is_error, None, extras, "goose")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry for a file that is not the database: a legacy session file."""
    if file.has_document and not file.records:
        raise ImportFileError(file.path, "not a Goose session file (legacy JSON lines)")
    read_goose_lines(file.records, collector)
