"""Reader of Crush's database (``<project>/.crush/crush.db``; domain).

Learnt from ``charmbracelet/crush`` ``internal/db/migrations/*.sql`` and
``internal/message/{content,message}.go``. Table ``sessions`` (``id``, ``parent_session_id``,
``title``, ``prompt_tokens``, ``completion_tokens``, ``cost``, ``created_at``,
``updated_at``, ``summary_message_id``) and ``messages`` (``id``, ``session_id``, ``role``
``user | assistant | tool``, ``parts`` JSON, ``model``, ``provider``, ``created_at``,
``updated_at``, ``finished_at``, ``is_summary_message``); times are Unix seconds. ``parts``
is a list of ``{"type", "data"}``: ``text`` ``{text}``, ``reasoning`` ``{thinking,
signature ...}``, ``tool_call`` ``{id, name, input (JSON text), provider_executed,
finished}``, ``tool_result`` ``{tool_call_id, name, content, data, mime_type, metadata,
is_error}``, ``finish`` ``{reason, time, message, details}``, ``image_url``, ``binary``,
``shell_command`` (kept as recorded).

* Each row is one message keyed by its ``id``; each tool result is a ``tool`` row of its own,
  paired to its call by ``tool_call_id`` when stored. A call without a result has none.
* An assistant row without its ``finish`` part is still being written: it and the rows
  after it are deferred unless the database is settled.
* Crush keeps per session the last request's context (``prompt_tokens``,
  ``completion_tokens``: set on each response, not summed; zeroed by a summary) and the
  session's running ``cost`` (``charmbracelet/crush`` ``internal/agent/agent.go``
  ``updateSessionUsage``): kept in the session's metadata; no token total exists to store
  as usage.
* Subagent sessions (the ``agent`` tool) have ``parent_session_id`` and the id
  ``<message id>$$<tool call id>``: metadata ``parent_session`` and ``parent_call_id``.
  Title-generation sessions (``title-<id>``) are not a conversation: skipped.
* The working directory is the project folder the database belongs to (the parent of the
  ``.crush`` data directory), when it is one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import ImportFileError, StoreError
from store.core.model import (
    Message,
    OpaquePart,
    Part,
    ServerToolCall,
    TextPart,
    ThinkingPart,
    ToolResult,
    make_tool_call,
)
from store.importers.base import Collector

__all__ = ["read_crush", "read_file"]

_DEFAULT_TITLES = frozenset({"", "New Session", "Untitled Session"})
_ROLES = frozenset({"user", "assistant", "tool", "system"})


def read_crush(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """Crush's ``sessions`` and ``messages`` rows (see the module docstring)."""
    by_session: dict[str, list[dict[str, Any]]] = {}
    for row in tables.get("messages", ()):
        by_session.setdefault(str(row.get("session_id")), []).append(row)
    path = collector.source.path
    cwd = str(path.parent.parent) if path.parent.name == ".crush" else None
    for info in tables.get("sessions", ()):
        sid = str(info.get("id"))
        rows = by_session.get(sid, [])
        if sid.startswith("title-"):
            collector.skip("crush: title-generation session")
            continue
        if not rows:
            continue
        _read_session(info, rows, cwd, collector)


def _read_session(info: Mapping[str, Any], rows: list[dict[str, Any]], cwd: str | None,
                  collector: Collector) -> None:
    sid = str(info["id"])
    parent = info.get("parent_session_id")
    metadata: dict[str, Any] = {k: info[k] for k in (
        "prompt_tokens", "completion_tokens", "cost", "created_at", "updated_at",
        "summary_message_id") if info.get(k) not in (None, "")}
    tags: tuple[str, ...] = ("crush",)
    if isinstance(parent, str) and parent:
        metadata["parent_session"] = parent
        tags = ("crush", "subagent")
        message_id, sep, call_id = sid.partition("$$")
        if sep and call_id:
            metadata["parent_call_id"] = call_id
            metadata["parent_message_id"] = message_id
    title = info.get("title")
    model = next((r.get("model") for r in rows if r.get("role") == "assistant"
                  and isinstance(r.get("model"), str) and r.get("model")), None)
    provider = next((r.get("provider") for r in rows if r.get("role") == "assistant"
                     and isinstance(r.get("provider"), str) and r.get("provider")), None)
    session = collector.session(
        sid, title=title if isinstance(title, str) and title not in _DEFAULT_TITLES else None,
        provider=provider, model=model, cwd=cwd, tags=tags, metadata=metadata)
    settled = collector.source.settled
    for index, row in enumerate(rows):
        key = str(row.get("id"))
        try:
            message, finished = _message(row)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"crush message {key!r}: {exc}")
            continue
        if not finished and not settled:
            for _ in rows[index:]:
                collector.defer(None)  # still being written: it and what follows wait
            return
        collector.add(session, message, key)


def _message(row: Mapping[str, Any]) -> tuple[Message, bool]:
    """A message row, and whether it is complete (an assistant row has its ``finish``)."""
    role = row.get("role")
    if role not in _ROLES:
        raise StoreError(f"unknown role {role!r}")
    raw = row.get("parts")
    parts_list = loads_json(raw) if isinstance(raw, str) else raw
    if not isinstance(parts_list, list):
        raise StoreError("'parts' must be a JSON list")
    parts: list[Part] = []
    metadata: dict[str, Any] = {"timestamp": row.get("created_at")}
    for name in ("model", "provider", "finished_at"):
        if row.get(name) not in (None, ""):
            metadata[name] = row[name]
    if row.get("is_summary_message"):
        metadata["summary"] = True
    finished = role != "assistant"
    for wrapper in parts_list:
        if not isinstance(wrapper, Mapping) or not isinstance(wrapper.get("data"), Mapping):
            raise StoreError(f"a part must be {{type, data}}, got {wrapper!r}")
        kind, data = wrapper.get("type"), wrapper["data"]
        if kind == "finish":
            finished = True
            metadata["finish"] = dict(data)
            continue
        parts.append(_part(kind, data))
    return Message(role, tuple(parts), "crush", str(row.get("id")),
                   metadata=metadata), finished


def _part(kind: Any, data: Mapping[str, Any]) -> Part:
    if kind == "text":
        return TextPart(str(data.get("text") or ""))
    if kind == "reasoning":
        signature = data.get("signature")
        return ThinkingPart(str(data.get("thinking") or ""),
                            signature if isinstance(signature, str) and signature else None,
                            {k: v for k, v in data.items()
                             if k not in ("thinking", "signature") and v not in (None, "", 0)})
    if kind == "tool_call":
        call_id, name = data.get("id"), data.get("name")
        extras = {"finished": data.get("finished")} if data.get("finished") is False else None
        if data.get("provider_executed"):
            return ServerToolCall(call_id if isinstance(call_id, str) else None, str(name),
                                  data.get("input"), "crush")
        arguments = data.get("input")
        return make_tool_call(call_id if isinstance(call_id, str) else None, str(name),
                              arguments if arguments not in (None, "") else "{}",
                              extras=extras, source="crush")
    if kind == "tool_result":
        extras = {k: data[k] for k in ("data", "mime_type", "metadata")
                  if data.get(k) not in (None, "")}
        call_id, name = data.get("tool_call_id"), data.get("name")
        return ToolResult(call_id if isinstance(call_id, str) else None, data.get("content"),
                          data.get("is_error") is True,
                          name if isinstance(name, str) and name else None, extras, "crush")
    return OpaquePart(f"crush_{kind}", dict(data))


def read_file(file: FileInput, collector: Collector) -> None:
    """Crush keeps only a database: any other file is not Crush's."""
    raise ImportFileError(file.path, "not a Crush database (<project>/.crush/crush.db)")
