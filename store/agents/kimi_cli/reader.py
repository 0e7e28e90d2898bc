"""Reader of Kimi CLI sessions (``~/.kimi/sessions/<md5 of cwd>/<session id>/wire.jsonl``;
domain).

Learnt from Kimi CLI's own writers in ``MoonshotAI/kimi-cli`` (read at 4a550eff, v1.49.0):
``src/kimi_cli/wire/file.py`` and ``wire/__init__.py`` (the wire recorder), ``wire/types.py``
(the events), ``soul/context.py`` (``context.jsonl``), ``session.py``, ``metadata.py``,
``share.py``, ``session_state.py`` and ``subagents/store.py`` (the folders and sidecars),
``packages/kosong`` (``message.py``, ``tooling``, ``chat_provider``: parts, results, usage).

A session folder holds ``context.jsonl`` (the model's message history, rewritten on a
revert, no times), ``wire.jsonl`` (every event of the session, appended, each with its
time) and ``state.json`` (``custom_title`` ...). The store reads the **wire**: a header
``{"type": "metadata", "protocol_version"}``, then ``{"timestamp": <epoch seconds>,
"message": {"type", "payload"}}`` records, streamed parts already merged:

* ``TurnBegin`` / ``SteerInput`` (``user_input``: text or parts) become user messages;
* after a ``StepBegin``, ``ContentPart`` (``text``, ``think``) and ``ToolCall`` records make
  one assistant message, closed by the step's ``StatusUpdate`` (whose ``token_usage``,
  ``input_other`` / ``output`` / ``input_cache_read`` / ``input_cache_creation``, is the
  step's usage, counted once per ``message_id``) or by any later step, result or turn;
* ``ToolResult`` (``tool_call_id``, ``return_value``: ``is_error``, ``output``,
  ``message``) becomes a ``tool`` message holding the ``output`` (the ``message`` when the
  output is empty; both kept in the result's extras); ``is_error`` marks the error;
* ``SubagentEvent`` records repeat a subagent's events, which its own
  ``subagents/<agent id>/wire.jsonl`` holds: skipped here, read there as the session
  ``<session id>:agent-<agent id>`` linked by ``parent_session`` and, from the parent's
  ``SubagentEvent`` naming it, ``parent_call_id``; its ``meta.json`` gives
  ``subagent_type`` and the model (``launch_spec.effective_model``);
* other events (``TurnEnd``, ``StepRetry``, ``CompactionBegin``, approvals ...) are skipped
  with their type as reason.

The session's cwd comes from ``<share dir>/kimi.json``, whose ``work_dirs`` paths hash (MD5)
to the folder names; its title from ``state.json``'s ``custom_title``, else the first prompt.
The wire names no model for the main agent. A ``context.jsonl`` beside a ``wire.jsonl`` is
skipped (the same conversation, without times); one without is read as messages. An
assistant message that ends an unsettled file without its ``StatusUpdate`` is deferred.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from store.agents.kimi_cli import KIMI_CONTEXT_ROLES, is_kimi_wire_record
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import StoreError
from store.core.model import Message, OpaquePart, Part, TextPart, ThinkingPart, ToolResult
from store.importers.base import Collector, ParsedSession, Record
from store.importers.lines import text_of
from store.normalize.calls import read_call
from store.usage.tokens import kimi_cli_usage

__all__ = ["KIMI_CONTEXT_ROLES", "is_kimi_wire_record", "read_file", "read_kimi_cli"]


#: Events that close the assistant message of a step.
_CLOSERS = frozenset({"StatusUpdate", "StepBegin", "StepInterrupted", "TurnBegin",
                      "SteerInput", "TurnEnd", "ToolResult", "CompactionBegin"})




def read_kimi_cli(records: list[Record], collector: Collector) -> None:
    """A Kimi CLI ``wire.jsonl`` or ``context.jsonl`` (see the module docstring)."""
    path = collector.source.path
    if path.name.startswith("context"):
        _read_context(records, collector)
        return
    session = _session(collector)
    _Wire(session, collector).read(records)


def _read_context(records: list[Record], collector: Collector) -> None:
    path = collector.source.path
    if (path.parent / "wire.jsonl").is_file():
        collector.skip("kimi-cli: context.jsonl (the session is read from its wire.jsonl)")
        return
    session = _session(collector)
    for line, record in records:
        if isinstance(record, Mapping) and record.get("role") in KIMI_CONTEXT_ROLES:
            collector.skip(f"kimi-cli: context {record['role']} line")
            continue
        message = collector.read(record, line)
        if message is not None:
            collector.add(session, message, f"{session.session_id}:context:{line}", line)


def _session(collector: Collector) -> ParsedSession:
    """The session of a file from its folders: ``<sid>/`` or ``<sid>/subagents/<agent>/``."""
    folder = collector.source.path.resolve().parent
    if folder.parent.name == "subagents":
        parent = folder.parent.parent
        meta = _json(folder / "meta.json")
        spec = meta.get("launch_spec")
        model = text_of(spec.get("effective_model")) if isinstance(spec, Mapping) else None
        metadata = {k: v for k, v in (("parent_session", parent.name),
                                      ("agent_id", folder.name),
                                      ("agent_type", text_of(meta.get("subagent_type"))),
                                      ("description", text_of(meta.get("description"))),
                                      ("parent_call_id", _parent_call(parent, folder.name)))
                    if v is not None}
        return collector.session(f"{parent.name}:agent-{folder.name}", provider=None,
                                 model=model,
                                 cwd=_cwd(parent.parent), tags=("kimi-cli", "subagent"),
                                 metadata=metadata)
    state = _json(folder / "state.json")
    return collector.session(folder.name, provider=None, cwd=_cwd(folder.parent),
                             title=text_of(state.get("custom_title")))


def _json(path: Path) -> Mapping[str, Any]:
    try:
        value = loads_json(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, Mapping) else {}


def _cwd(hashed: Path) -> str | None:
    """The work directory whose MD5 names ``hashed`` (``<kaos>_<md5>`` off the local
    machine), from ``kimi.json`` in the share folder above ``sessions``."""
    work_dirs = _json(hashed.parent.parent / "kimi.json").get("work_dirs")
    for entry in work_dirs if isinstance(work_dirs, list) else ():
        if not isinstance(entry, Mapping) or not text_of(entry.get("path")):
            continue
        digest = hashlib.md5(entry["path"].encode("utf-8"), usedforsecurity=False).hexdigest()
        kaos = entry.get("kaos")
        if hashed.name in (digest, f"{kaos}_{digest}"):
            return str(entry["path"])
    return None


def _parent_call(parent: Path, agent_id: str) -> str | None:
    """The parent's tool call that ran the subagent: a ``SubagentEvent`` naming it."""
    try:
        with (parent / "wire.jsonl").open(encoding="utf-8", errors="replace") as handle:
            for text in handle:
                if agent_id not in text:
                    continue
                try:
                    record = loads_json(text)
                except ValueError:
                    continue
                message = record.get("message") if isinstance(record, Mapping) else None
                payload = message.get("payload") if isinstance(message, Mapping) else None
                if (isinstance(payload, Mapping) and payload.get("agent_id") == agent_id
                        and text_of(payload.get("parent_tool_call_id"))):
                    return str(payload["parent_tool_call_id"])
    except OSError:
        return None
    return None


class _Wire:
    """One wire file's events folded into messages."""

    def __init__(self, session: ParsedSession, collector: Collector) -> None:
        self.session = session
        self.collector = collector
        self.parts: list[Part] = []
        self.lines: list[int] = []
        self.stamp: Any = None
        self.usage_ids: set[str] = set()

    def read(self, records: list[Record]) -> None:
        for line, record in records:
            if not isinstance(record, Mapping):
                self.collector.problem(line, f"not a Kimi CLI wire record: a JSON "
                                             f"{type(record).__name__}")
                continue
            if record.get("type") == "metadata":
                self.session.metadata.setdefault("protocol_version",
                                                 record.get("protocol_version"))
                self.collector.skip("kimi-cli: wire metadata")
                continue
            message = record.get("message")
            if not is_kimi_wire_record(record) or not isinstance(message, Mapping):
                self.collector.problem(line, "not a Kimi CLI wire record: keys "
                                             f"{sorted(str(k) for k in record)}")
                continue
            payload = message["payload"]
            try:
                self.event(line, record["timestamp"], message["type"],
                           payload if isinstance(payload, Mapping) else {})
            except (StoreError, TypeError, ValueError) as exc:
                self.collector.problem(line, str(exc) or type(exc).__name__)
        if self.parts and not self.collector.source.settled:
            for line in self.lines:  # the step may still gain parts or its usage
                self.collector.defer(line)
            return
        self.close()

    def event(self, line: int, stamp: Any, kind: str, payload: Mapping[str, Any]) -> None:
        if kind in _CLOSERS and kind != "StatusUpdate":
            self.close()
        if kind in ("TurnBegin", "SteerInput"):
            self.add(line, "user", _user_parts(payload.get("user_input")), stamp,
                     {"kimi_event": kind} if kind != "TurnBegin" else {})
        elif kind == "ContentPart" or kind == "ToolCall":
            if not self.parts:
                self.stamp = stamp
            self.parts.append(_assistant_part(kind, payload))
            self.lines.append(line)
        elif kind == "StatusUpdate":
            self.close(payload)
            self.collector.skip("kimi-cli: StatusUpdate")
        elif kind == "ToolResult":
            self.add(line, "tool", (_result(payload),), stamp, {})
        else:
            self.collector.skip(f"kimi-cli: {kind}")

    def add(self, line: int, role: Any, parts: tuple[Part, ...], stamp: Any,
            metadata: dict[str, Any], usage: Any = None) -> None:
        message = Message(role, parts, "kimi_cli", None, metadata={"timestamp": stamp,
                                                                    **metadata})
        self.collector.add(self.session, message, f"{self.session.session_id}:{line}", line,
                           usage=usage)

    def close(self, status: Mapping[str, Any] | None = None) -> None:
        """The step's assistant message, with the usage of its ``StatusUpdate``."""
        if not self.parts:
            return
        usage = None
        metadata: dict[str, Any] = {}
        if status is not None:
            message_id = text_of(status.get("message_id"))
            if message_id is not None:
                metadata["message_id"] = message_id
            if message_id is None or message_id not in self.usage_ids:
                usage = kimi_cli_usage(status.get("token_usage"), model=self.session.model,
                                       response_id=message_id)
            if message_id is not None:
                self.usage_ids.add(message_id)
        parts, self.parts = tuple(self.parts), []
        self.add(self.lines[0], "assistant", parts, self.stamp, metadata, usage)
        self.lines = []


def _user_parts(value: Any) -> tuple[Part, ...]:
    if isinstance(value, str):
        return (TextPart(value),)
    if not isinstance(value, list):
        raise StoreError(f"user_input must be text or parts, got {type(value).__name__}")
    return tuple(TextPart(p["text"]) if isinstance(p, Mapping) and p.get("type") == "text"
                 and isinstance(p.get("text"), str) else _opaque(p) for p in value)


def _opaque(value: Any) -> Part:
    kind = value.get("type") if isinstance(value, Mapping) else None
    return OpaquePart(str(kind or "unknown"), value)


def _assistant_part(kind: str, payload: Mapping[str, Any]) -> Part:
    if kind == "ToolCall":
        return read_call(dict(payload))
    if payload.get("type") == "text" and isinstance(payload.get("text"), str):
        return TextPart(payload["text"])
    if payload.get("type") == "think" and isinstance(payload.get("think"), str):
        encrypted = payload.get("encrypted")
        return ThinkingPart(payload["think"], encrypted if isinstance(encrypted, str) else None)
    return _opaque(payload)


def _result(payload: Mapping[str, Any]) -> ToolResult:
    call_id = text_of(payload.get("tool_call_id"))
    value = payload.get("return_value")
    if call_id is None or not isinstance(value, Mapping):
        raise StoreError("a Kimi CLI ToolResult needs tool_call_id and return_value")
    output = value.get("output")
    message = text_of(value.get("message"))
    extras = {"message": message} if message is not None else {}
    if output in (None, "", []) and message is not None:  # the explanation is all there is
        output, extras = message, {"output": output, **extras}
    return ToolResult(call_id, output, value.get("is_error") is True, None, extras,
                      "kimi_cli")


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a Kimi CLI ``wire.jsonl`` or ``context.jsonl``."""
    read_kimi_cli(file.records, collector)
