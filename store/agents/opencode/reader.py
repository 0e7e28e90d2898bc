"""Reader of OpenCode's sessions (``~/.local/share/opencode/opencode.db``; domain).

Learnt from ``sst/opencode`` (now ``anomalyco/opencode``)
``packages/opencode/src/session/session.sql.ts`` and ``message-v2.ts``. Tables ``session``
(``id``, ``parent_id``, ``directory``, ``title``, ``version``, ``time_created``,
``time_updated`` in milliseconds ...), ``message`` (``id``, ``session_id``, ``time_created``,
``data``: the message info as JSON without its ids) and ``part`` (``id``, ``message_id``,
``session_id``, ``data``: the part as JSON). A message's info is ``{role: "user", time:
{created}, agent, model: {providerID, modelID}}`` or ``{role: "assistant", time: {created,
completed?}, error?, parentID, modelID, providerID, path: {cwd, root}, cost, tokens: {input,
output, reasoning, cache: {read, write}}, finish?}``. Parts (in id order): ``text``,
``reasoning``, ``tool`` ``{callID, tool, state: {status: pending | running | completed |
error, input, output?, error?, title?, metadata?, time}}``, ``file``, ``agent``,
``subtask``, ``patch``, ``compaction``, ``retry``, and the markers ``step-start``,
``step-finish`` (with the step's tokens; the message's ``tokens`` sum them) and
``snapshot``.

* A user message keyed by its id; an assistant message keyed by its id holds its reasoning,
  text and calls in part order, followed by a ``tool`` message ``<id>:results`` with the
  results of the calls that have one (``completed``; ``error`` marked as an error). A call
  still ``pending`` or ``running`` has no result.
* An assistant message without ``time.completed`` (and no error) is still being written: it
  and the messages after it are deferred unless the database is settled; so is a user
  message that is the session's last (its parts are rows written after it: it is complete
  once the assistant's answer follows).
* Token usage per assistant message from its ``tokens``
  (:func:`store.usage.tokens.opencode_usage`).
* Child sessions (``parent_id``: the ``task`` tool's subagents) carry ``parent_session``, and
  ``parent_call_id`` when the parent's ``task`` call names the child
  (``state.metadata.sessionId``).
* The title is the session's own unless still the default ``New session - <time>``.

Versions before the database kept the same values as JSON files under
``~/.local/share/opencode/storage/``: ``session/<project>/<session id>.json`` (the session
info: ``id``, ``projectID``, ``parentID``, ``directory``, ``title``, ``version``, ``time``),
``message/<session id>/<message id>.json`` (a message's info with its ``id``) and
``part/<message id>/<part id>.json`` (a part with its ``id``). A session file is read with
the messages and parts it names (:func:`read_opencode_storage`), into the same rows, so a
session read from both stores nothing twice; current versions move these files into the
database when they first start.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from store.agents.opencode import is_opencode_session, is_session_info
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import ImportFileError, StoreError
from store.core.model import (
    Message,
    OpaquePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolResult,
    make_tool_call,
)
from store.importers.base import Collector
from store.usage.tokens import opencode_usage

__all__ = ["is_opencode_session", "read_file", "read_opencode_db", "read_opencode_storage"]

_DEFAULT_TITLE = ("New session - ", "Child session - ")
_MARKERS = frozenset({"step-start", "step-finish", "snapshot"})
_SESSION_META = ("slug", "version", "project_id", "share_url", "agent", "cost",
                 "tokens_input", "tokens_output", "tokens_reasoning", "tokens_cache_read",
                 "tokens_cache_write", "time_archived")


def _json(value: Any) -> Any:
    return loads_json(value) if isinstance(value, str | bytes) else value


def read_opencode_db(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """OpenCode's ``session``, ``message`` and ``part`` rows (see the module docstring)."""
    parts: dict[str, list[dict[str, Any]]] = {}
    spawned: dict[str, str] = {}  # child session id -> the parent's task call id
    for row in tables.get("part", ()):
        try:
            data = _json(row.get("data"))
        except ValueError as exc:
            collector.problem(None, f"opencode part {row.get('id')!r}: not JSON: {exc}")
            continue
        if not isinstance(data, Mapping):
            collector.problem(None, f"opencode part {row.get('id')!r}: not an object")
            continue
        parts.setdefault(str(row.get("message_id")), []).append({**data, "id": row.get("id")})
        state = data.get("state")
        meta = state.get("metadata") if isinstance(state, Mapping) else None
        if data.get("tool") == "task" and isinstance(meta, Mapping) \
                and isinstance(meta.get("sessionId"), str):
            spawned[meta["sessionId"]] = str(data.get("callID"))
    messages: dict[str, list[tuple[str, Any]]] = {}
    for row in tables.get("message", ()):
        try:
            info = _json(row.get("data"))
        except ValueError as exc:
            collector.problem(None, f"opencode message {row.get('id')!r}: not JSON: {exc}")
            continue
        messages.setdefault(str(row.get("session_id")), []).append((str(row.get("id")), info))
    for info in tables.get("session", ()):
        sid = str(info.get("id"))
        if sid in messages:
            _read_session(info, messages[sid], parts, spawned.get(sid), collector)


def _read_session(info: Mapping[str, Any], rows: list[tuple[str, Any]],
                  parts: Mapping[str, list[dict[str, Any]]], parent_call: str | None,
                  collector: Collector) -> None:
    sid = str(info["id"])
    parent = info.get("parent_id")
    metadata: dict[str, Any] = {k: info[k] for k in _SESSION_META
                                if info.get(k) not in (None, "", 0)}
    tags: tuple[str, ...] = (collector.format,)
    if isinstance(parent, str) and parent:
        metadata["parent_session"] = parent
        tags = (collector.format, "subagent")
        if parent_call:
            metadata["parent_call_id"] = parent_call
    infos = [i for _, i in rows if isinstance(i, Mapping)]
    assistant = next((i for i in infos if i.get("role") == "assistant"), {})
    path = assistant.get("path")
    cwd = info.get("directory") or (path.get("cwd") if isinstance(path, Mapping) else None)
    title = info.get("title")
    if not isinstance(title, str) or not title or title.startswith(_DEFAULT_TITLE):
        title = None
    session = collector.session(
        sid, title=title, provider=_text(assistant.get("providerID")),
        model=_text(assistant.get("modelID")), cwd=cwd if isinstance(cwd, str) else None,
        tags=tags, metadata=metadata)
    settled = collector.source.settled
    for index, (mid, data) in enumerate(rows):
        if not isinstance(data, Mapping):
            collector.problem(None, f"opencode message {mid!r}: not an object")
            continue
        time = _obj(data.get("time"))
        last_prompt = data.get("role") == "user" and index == len(rows) - 1
        if not settled and (last_prompt or (
                data.get("role") == "assistant" and time.get("completed") is None
                and data.get("error") is None)):
            for _ in rows[index:]:
                collector.defer(None)  # still being written: it and what follows wait
            return
        try:
            made = _messages(mid, data, parts.get(mid, []))
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"opencode message {mid!r}: {exc}")
            continue
        for number, message in enumerate(made):
            usage = None
            if number == 0 and data.get("role") == "assistant":
                usage = opencode_usage(data.get("tokens"), model=data.get("modelID"),
                                       response_id=mid)
            collector.add(session, message, mid if number == 0 else f"{mid}:results",
                          usage=usage)


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _messages(mid: str, info: Mapping[str, Any], parts: list[dict[str, Any]]) -> list[Message]:
    role = info.get("role")
    if role not in ("user", "assistant"):
        raise StoreError(f"unknown role {role!r}")
    time = _obj(info.get("time"))
    metadata: dict[str, Any] = {"timestamp": time.get("created")}
    for key in ("completed",):
        if time.get(key) is not None:
            metadata[key] = time[key]
    for key in ("agent", "modelID", "providerID", "mode", "cost", "finish", "error",
                "parentID", "summary", "model"):
        if info.get(key) not in (None, ""):
            metadata[key] = info[key]
    made: list[Part] = []
    results: list[Part] = []
    for part in parts:
        kind = part.get("type")
        if kind in _MARKERS:
            continue
        if kind == "text":
            extras = {k: part[k] for k in ("synthetic", "ignored") if part.get(k)}
            made.append(TextPart(str(part.get("text") or ""), extras))
        elif kind == "reasoning":
            made.append(ThinkingPart(str(part.get("text") or ""), None,
                                     {k: part[k] for k in ("metadata",) if part.get(k)}))
        elif kind == "tool":
            call, result = _tool(part)
            made.append(call)
            if result is not None:
                results.append(result)
        else:
            made.append(OpaquePart(f"opencode_{kind}", {
                k: v for k, v in part.items() if k not in ("id", "messageID", "sessionID")}))
    out = [Message(role, tuple(made), "opencode", mid, metadata=metadata)]
    if results:
        out.append(Message("tool", tuple(results), "opencode", None,
                           metadata={"timestamp": metadata["timestamp"]}))
    return out


def _tool(part: Mapping[str, Any]) -> tuple[Part, ToolResult | None]:
    state = _obj(part.get("state"))
    call_id = _text(part.get("callID"))
    name = str(part.get("tool") or "")
    arguments = state.get("input")
    raw = state.get("raw")
    call = make_tool_call(call_id, name, arguments if isinstance(arguments, Mapping)
                          else (raw if isinstance(raw, str) and raw else arguments),
                          source="opencode")
    status = state.get("status")
    if status not in ("completed", "error"):
        return call, None  # pending or running: no result (yet)
    extras = {k: state[k] for k in ("title", "metadata", "time", "attachments")
              if state.get(k) not in (None, "", {})}
    content = state.get("output") if status == "completed" else state.get("error")
    return call, ToolResult(call_id, content, status == "error", name, extras, "opencode")


# -- the JSON storage of versions before the database -----------------------------------------




def _load(path: Path, collector: Collector) -> Any:
    try:
        return loads_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        collector.problem(None, f"{path}: not read: {exc}")
        return None


def _folder(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
    except OSError:
        return []


def read_opencode_storage(info: Mapping[str, Any], collector: Collector) -> None:
    """A session file of OpenCode's JSON storage, with its messages and parts (see the
    module docstring): the storage folder is the session file's ``../../..``."""
    storage = collector.source.path.resolve().parent.parent.parent
    sid = str(info["id"])
    time = _obj(info.get("time"))
    session = {"id": sid, "parent_id": info.get("parentID"), "directory": info.get("directory"),
               "title": info.get("title"), "version": info.get("version"),
               "project_id": info.get("projectID"), "time_created": time.get("created")}
    messages: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for file in _folder(storage / "message" / sid):
        data = _load(file, collector)
        if not isinstance(data, Mapping) or not isinstance(data.get("id"), str):
            continue
        mid = data["id"]
        messages.append({"id": mid, "session_id": sid, "data": data,
                         "time_created": _obj(data.get("time")).get("created") or 0})
        for part_file in _folder(storage / "part" / mid):
            part = _load(part_file, collector)
            if isinstance(part, Mapping):
                parts.append({"id": part.get("id"), "message_id": mid, "data": part})
    parent = info.get("parentID")
    if isinstance(parent, str) and parent:  # the parent's task call that spawned it
        for folder in (storage / "message" / parent).glob("*"):
            for part_file in _folder(storage / "part" / folder.stem):
                part = _load(part_file, collector)
                if isinstance(part, Mapping) and part.get("tool") == "task":
                    parts.append({"id": part.get("id"), "message_id": folder.stem,
                                  "data": part})
    messages.sort(key=lambda m: (m["time_created"], m["id"]))
    parts.sort(key=lambda p: str(p["id"]))
    read_opencode_db({"session": [session], "message": messages, "part": parts}, collector)


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry for a file that is not the database: a session info file of
    the JSON storage."""
    if not (is_opencode_session(file.document) or is_session_info(file.document)):
        raise ImportFileError(file.path, "not an OpenCode session file (storage/session/"
                                         "<project>/<id>.json)")
    read_opencode_storage(file.document, collector)
