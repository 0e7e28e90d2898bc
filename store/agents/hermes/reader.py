"""Reader of Hermes Agent's sessions: its ``state.db`` and the JSON copies older versions
wrote (domain).

Learnt from Hermes's own writer, ``NousResearch/hermes-agent``: ``hermes_state.py``
(``SessionDB``: ``SCHEMA_SQL``, ``create_session``, ``end_session``, ``append_message``,
``update_token_counts``, ``get_compression_tip``; read at a5b9a462 in a fork's copy of schema
version 7, and at 00025f69), ``hermes_state_common.py`` (schema version 30: the columns added
since, the lineage markers ``_branched_from`` / ``_delegate_from`` / ``_reset_from``;
00704d08), ``hermes_state_messages.py`` (``_encode_content``: list content stored as
``\\x00json:`` / ``\\x01json:`` + JSON; 01e8a2d0), ``run_agent.py``
(``_build_assistant_message``, ``_flush_messages_to_session_db``, ``_save_session_log``) and
``gateway/session.py`` (``append_to_transcript``: the legacy ``<id>.jsonl``).

**state.db.** ``sessions``: ``id``, ``source`` (cli, telegram, ...), ``model``,
``model_config`` (JSON), ``parent_session_id``, ``started_at`` / ``ended_at`` (epoch seconds),
``end_reason`` (``compression`` when the context was compressed into a new session),
``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``,
``reasoning_tokens`` (the session's totals), ``estimated_cost_usd`` / ``actual_cost_usd``,
``title``, and in newer versions ``cwd``, ``git_branch``, ``last_activity_at``.
``messages``: ``role`` (user, assistant, tool, system), ``content`` (text, or a JSON list of
parts behind the prefix), ``tool_calls`` (JSON: ``[{id, type, function: {name,
arguments}}]``, newer ones with ``call_id`` / ``response_item_id``), ``tool_call_id`` and
``tool_name`` (on results), ``timestamp``, ``finish_reason``, ``reasoning`` /
``reasoning_content``; newer versions keep compacted messages (``active = 0, compacted = 1``)
beside the live ones.

* Every message row becomes a message in row order (compacted ones too, flagged in the
  metadata), keyed ``<session>:<row id>``; a ``tool`` row a tool message with its result,
  paired by ``tool_call_id``. Hermes records no error flag: a result whose JSON is an object
  with a non-empty ``error`` or ``success: false`` (its tools' convention) is an error.
* The session's totals are its usage (``SESSION_TOTALS``, on the first reply); the cost is
  kept in the session's metadata.
* A child session (``parent_session_id``): ``_branched_from`` -> ``fork``; ``_delegate_from``
  (or a ``delegate`` / ``subagent`` / ``tool`` source) -> ``subagent``, with the parent's
  ``delegate_task`` call that ran when it started; a parent ended by ``compression`` (or a
  ``_reset_from``) -> ``continuation``; any other child (older versions wrote no marker) ->
  ``subagent``.

**JSON copies** (read by :func:`read_file`, only where no ``state.db`` is beside them: see the
definition's ``aside``): ``session_<id>.json`` ``{session_id, model, base_url, platform,
session_start, last_updated, message_count, messages}`` (local times without a zone: read as
UTC) and the gateway's ``<id>.jsonl`` (one message a line; a ``session_meta`` line first).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import ImportFileError, StoreError
from store.core.lineage import SessionLink
from store.core.model import Message, Part, TextPart, ThinkingPart, ToolResult, make_tool_call
from store.importers.base import Collector, ParsedSession, path_session_id
from store.importers.lines import moment, text_of
from store.normalize.messages import normalize_message
from store.usage.tokens import SESSION_TOTALS, TokenUsage

__all__ = ["read_file", "read_hermes_db"]

_SOURCE = "hermes"
_JSON_PREFIXES = ("\x00json:", "\x01json:")
_SESSION_KEYS = ("source", "end_reason", "billing_provider", "billing_mode",
                 "estimated_cost_usd", "actual_cost_usd", "cost_status", "cost_source",
                 "api_call_count", "git_branch", "git_repo_root", "profile_name")
_CHILD_SOURCES = ("delegate", "subagent", "tool")
_DELEGATE = "delegate_task"


def read_hermes_db(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """Hermes's ``sessions`` and ``messages`` rows (see the module docstring)."""
    sessions = {str(r["id"]): r for r in tables.get("sessions", ()) if r.get("id")}
    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in tables.get("messages", ()):
        by_session.setdefault(str(row.get("session_id")), []).append(row)
    for sid in [s for s in by_session if s not in sessions]:
        collector.problem(None, f"hermes: {len(by_session[sid])} messages of session {sid!r}, "
                                "which has no sessions row: read without it")
        sessions[sid] = {"id": sid}
    for sid, row in sessions.items():
        try:
            _read_session(row, by_session.get(sid, []), sessions, by_session, collector)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"hermes session {sid!r}: {exc}")


def _config(row: Mapping[str, Any]) -> dict[str, Any]:
    raw = row.get("model_config")
    try:
        value = loads_json(raw) if isinstance(raw, str) and raw else raw
    except ValueError:
        return {}
    return dict(value) if isinstance(value, Mapping) else {}


def _read_session(row: Mapping[str, Any], rows: list[dict[str, Any]],
                  sessions: Mapping[str, Mapping[str, Any]],
                  by_session: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    sid = str(row["id"])
    metadata = {k: row[k] for k in _SESSION_KEYS if row.get(k) not in (None, "", 0)}
    source = text_of(row.get("source"))
    session = collector.session(
        sid, title=text_of(row.get("title")), cwd=text_of(row.get("cwd")),
        model=text_of(row.get("model")), tags=("hermes", source) if source else ("hermes",),
        metadata=metadata, provider=text_of(row.get("billing_provider")))
    _link(row, session, sessions, by_session)
    first_reply: str | None = None
    for message_row in rows:
        message = _row_message(message_row)
        if message is None:
            collector.skip(f"hermes: {message_row.get('role')!r} row without content")
            continue
        key = f"{sid}:{message_row.get('id')}"
        collector.add(session, message, key)
        if message.role == "assistant" and first_reply is None:
            first_reply = key
    usage = _totals(row, session.model)
    if usage is not None and first_reply is not None:
        session.usage[first_reply] = usage
    stamps = [m.get("timestamp") for m in rows]
    start = moment(row.get("started_at"))
    ends = [t for t in (moment(v) for v in (row.get("ended_at"), row.get("last_activity_at"),
                                             *stamps)) if t is not None]
    session.started_at = start or (min(ends) if ends else None)
    session.ended_at = max(ends) if ends else start


def _row_message(row: Mapping[str, Any]) -> Message | None:
    role = row.get("role")
    meta: dict[str, Any] = {"timestamp": row.get("timestamp")}
    for key in ("finish_reason", "platform_message_id", "display_kind", "effect_disposition"):
        if row.get(key) not in (None, ""):
            meta[key] = row[key]
    if row.get("active") == 0:
        meta["active"] = False
    if row.get("compacted"):
        meta["compacted"] = True
    content = _content(row.get("content"))
    return _message({"role": role, "content": content, "tool_calls": _json(row.get("tool_calls")),
                     "tool_call_id": row.get("tool_call_id"), "tool_name": row.get("tool_name"),
                     "reasoning": row.get("reasoning") or row.get("reasoning_content")}, meta)


def _content(value: Any) -> Any:
    if isinstance(value, str):
        for prefix in _JSON_PREFIXES:
            if value.startswith(prefix):
                try:
                    return loads_json(value[len(prefix):])
                except ValueError:
                    return value
    return value


def _json(value: Any) -> Any:
    if isinstance(value, str) and value:
        try:
            return loads_json(value)
        except ValueError:
            raise StoreError(f"tool_calls is not JSON: {value[:80]!r}") from None
    return value


def _message(record: Mapping[str, Any], meta: dict[str, Any]) -> Message | None:
    """One Hermes message (a row's columns, or a JSON copy's message object)."""
    role = record.get("role")
    content = record.get("content")
    if role == "tool":
        return Message("tool", (_result(record, content),), _SOURCE, None, metadata=meta)
    if role == "assistant":
        parts: list[Part] = []
        reasoning = text_of(record.get("reasoning"))
        if reasoning:
            parts.append(ThinkingPart(reasoning))
        parts += _content_parts(content)
        calls = record.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            parts.append(_call(call))
        return Message("assistant", tuple(parts), _SOURCE, None, metadata=meta)
    if role in ("user", "system"):
        parts = _content_parts(content)
        if not parts:
            return None
        return Message(role, tuple(parts), _SOURCE, None, metadata=meta)
    raise StoreError(f"unknown role {role!r}")


def _content_parts(content: Any) -> list[Part]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [TextPart(content)]
    if isinstance(content, list):
        return list(normalize_message({"role": "user", "content": content}).parts)
    return [TextPart(str(content))]


def _call(call: Any) -> Part:
    if not isinstance(call, Mapping):
        raise StoreError(f"a tool call must be an object, got {str(call)[:80]!r}")
    inner = call.get("function")
    function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else call
    arguments = function.get("arguments")
    extras = {k: call[k] for k in ("call_id", "response_item_id") if call.get(k)}
    return make_tool_call(text_of(call.get("id")) or text_of(call.get("call_id")),
                          str(function.get("name") or ""),
                          arguments if arguments is not None else {}, extras=extras or None,
                          source=_SOURCE)


def _result(record: Mapping[str, Any], content: Any) -> ToolResult:
    text = content if isinstance(content, str) else None
    return ToolResult(text_of(record.get("tool_call_id")),
                      content if content is not None else "", _is_error(text),
                      text_of(record.get("tool_name")), {}, _SOURCE)


def _is_error(text: str | None) -> bool:
    """The tools' own convention: a JSON object with a non-empty ``error`` or
    ``success: false`` (Hermes writes no error flag)."""
    if not text or not text.lstrip().startswith("{"):
        return False
    try:
        value = loads_json(text)
    except ValueError:
        return False
    return isinstance(value, Mapping) and (bool(value.get("error"))
                                           or value.get("success") is False)


def _totals(row: Mapping[str, Any], model: str | None) -> TokenUsage | None:
    def count(key: str) -> int:
        value = row.get(key)
        return max(int(value), 0) if isinstance(value, int) and not isinstance(value, bool) \
            else 0

    usage = TokenUsage(count("input_tokens"), count("output_tokens"),
                       count("cache_write_tokens"), count("cache_read_tokens"),
                       count("reasoning_tokens"), model, None, SESSION_TOTALS)
    return usage if usage.total or usage.reasoning_tokens else None


def _link(row: Mapping[str, Any], session: ParsedSession,
          sessions: Mapping[str, Mapping[str, Any]],
          by_session: Mapping[str, list[dict[str, Any]]]) -> None:
    parent = text_of(row.get("parent_session_id"))
    if parent is None:
        return
    config = _config(row)
    parent_row = sessions.get(parent, {})
    call: str | None = None
    if config.get("_branched_from"):
        kind = "fork"
    elif config.get("_delegate_from") or row.get("source") in _CHILD_SOURCES:
        kind = "subagent"
    elif config.get("_reset_from") or parent_row.get("end_reason") == "compression":
        kind = "continuation"
    else:
        kind = "subagent"
    if kind == "subagent":
        call = _spawning_call(moment(row.get("started_at")), by_session.get(parent, []))
    session.metadata["parent_session"] = parent
    session.metadata["lineage"] = kind
    if call:
        session.metadata["parent_call_id"] = call
    if kind == "subagent":
        session.tags = (*session.tags, "subagent")
    session.parent = SessionLink(parent, kind, call)


def _spawning_call(started: datetime | None, rows: list[dict[str, Any]]) -> str | None:
    """The parent's last ``delegate_task`` call made before the child started."""
    found: str | None = None
    for row in rows:
        stamp = moment(row.get("timestamp"))
        if started is not None and stamp is not None and stamp > started:
            break
        if row.get("role") != "assistant":
            continue
        try:
            calls = _json(row.get("tool_calls"))
        except StoreError:
            continue
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping) and function.get("name") == _DELEGATE:
                found = text_of(call.get("id")) or found
    return found


def read_file(file: FileInput, collector: Collector) -> None:
    """A JSON copy: ``session_<id>.json`` (a document) or a gateway ``<id>.jsonl``."""
    if file.has_document:
        _read_log(file, collector)
    elif file.records:
        _read_transcript(file, collector)
    else:
        raise ImportFileError(file.path, "not a Hermes session log or transcript")


def _read_log(file: FileInput, collector: Collector) -> None:
    document = file.document
    if not isinstance(document, Mapping) or not isinstance(document.get("messages"), list):
        raise ImportFileError(file.path, "not a Hermes session log (no messages list)")
    sid = text_of(document.get("session_id")) or path_session_id(file.path)
    platform = text_of(document.get("platform"))
    session = collector.session(
        sid, model=text_of(document.get("model")),
        tags=("hermes", platform) if platform else ("hermes",),
        metadata={k: document[k] for k in ("platform", "base_url", "message_count")
                  if document.get(k) is not None})
    for index, record in enumerate(document["messages"]):
        _add_record(session, record, f"{sid}:log:{index}", collector, None, index)
    session.started_at = moment(document.get("session_start"))
    session.ended_at = moment(document.get("last_updated")) or session.started_at


def _read_transcript(file: FileInput, collector: Collector) -> None:
    sid = file.path.stem
    session = collector.session(sid, tags=("hermes", "gateway"))
    stamps: list[Any] = []
    for line, record in file.records:
        if isinstance(record, Mapping) and record.get("role") == "session_meta":
            collector.skip("hermes: gateway session header")
            for key, field in (("model", "model"), ("platform", "platform")):
                if text_of(record.get(key)) and key == "model" and session.model is None:
                    session.model = record[key]
                elif text_of(record.get(key)):
                    session.metadata[field] = record[key]
            stamps.append(record.get("timestamp"))
            continue
        if isinstance(record, Mapping):
            stamps.append(record.get("timestamp"))
        _add_record(session, record, f"{sid}:line:{line}", collector, line, None)
    times = [t for t in (moment(s) for s in stamps) if t is not None]
    if times:
        session.started_at, session.ended_at = min(times), max(times)


def _add_record(session: ParsedSession, record: Any, key: str, collector: Collector,
                line: int | None, item: int | None) -> None:
    if not isinstance(record, Mapping):
        collector.problem(line, "a Hermes message must be an object", item)
        return
    meta = {k: record[k] for k in ("timestamp", "finish_reason") if record.get(k) is not None}
    try:
        message = _message(record, meta)
    except (StoreError, TypeError, ValueError) as exc:
        collector.problem(line, str(exc), item)
        return
    if message is None:
        collector.skip(f"hermes: {record.get('role')!r} message without content")
        return
    collector.add(session, message, key, line, item)
