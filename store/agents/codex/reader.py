"""Reader of Codex rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``; domain).

``session_meta`` gives the session (id, cwd, provider, CLI version; its parent when it was
spawned by another thread or forked from one: :func:`codex_parent`), ``turn_context`` the model,
``response_item`` payloads the messages (dated by their line's ``timestamp``), a ``compacted``
record a user message holding its summary (the record kept whole in the metadata);
``event_msg``, ``ghost_snapshot`` ... are skipped with a reason. The ``token_count`` events give
the token usage: each model request's ``last_token_usage``, counted against the last message
before it; an event repeating the running total of the one before (Codex writes some twice)
is not counted again. Old rollouts without the
``{timestamp, type, payload}`` envelope (a header line, then bare items) read too. Outputs are
stored verbatim; :func:`decode_codex_output` unwraps them for display.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.keys import canonical_keys
from store.core.lineage import SessionLink
from store.core.model import Message, TextPart
from store.importers.base import Collector, Record, path_session_id
from store.importers.lines import record_top, span, text_of, with_metadata
from store.usage.tokens import TokenUsage, codex_usage

__all__ = ["decode_codex_output", "read_codex", "read_file"]


def decode_codex_output(text: Any) -> Any:
    """The display text of a Codex tool output: the inner ``output`` of the double-encoded
    ``{"output": ..., "metadata": {...}}`` envelope, else ``text`` unchanged.

    Stored content is never changed: this is for display only.
    """
    if not isinstance(text, str) or not text.startswith("{"):
        return text
    try:
        value = loads_json(text)
    except ValueError:
        return text
    if (isinstance(value, dict) and isinstance(value.get("output"), str)
            and set(value) <= {"output", "metadata"}):
        return value["output"]
    return text


_CODEX_META = ("cli_version", "originator", "source", "timestamp", "git", "instructions",
               "forked_from_id", "agent_nickname", "agent_role")


def codex_parent(meta: Mapping[str, Any]) -> SessionLink | None:
    """The thread a rollout descends from, as its ``session_meta`` says (codex-rs protocol
    ``SessionMeta``): a thread spawned by another (``source: {"subagent": {"thread_spawn":
    {"parent_thread_id": ...}}}``) is its subagent; one with ``forked_from_id`` its fork.
    Review and compaction subagents name no parent."""
    source = meta.get("source")
    spawned = source.get("subagent") if isinstance(source, Mapping) else None
    spawn = spawned.get("thread_spawn") if isinstance(spawned, Mapping) else None
    if isinstance(spawn, Mapping) and text_of(spawn.get("parent_thread_id")):
        return SessionLink(spawn["parent_thread_id"], "subagent")
    if text_of(meta.get("forked_from_id")):
        return SessionLink(meta["forked_from_id"], "fork")
    return None


def _stamp(message: Message, top: Mapping[str, Any]) -> Any:
    """The line's timestamp, unless the message carries its own."""
    return None if "timestamp" in message.metadata else top.get("timestamp")


def _codex_compacted(payload: Mapping[str, Any], top: Mapping[str, Any]) -> Message:
    """A ``compacted`` record (the summary that replaced the history before it) as a user
    message holding the summary text; the record (``replacement_history`` of a remote
    compaction included) rides verbatim in the metadata, so nothing is dropped."""
    summary = payload.get("message")
    return Message("user", (TextPart(summary if isinstance(summary, str) else ""),), "codex",
                   None, metadata={"codex_type": "compacted", "compacted": dict(payload),
                                   **({"timestamp": top["timestamp"]}
                                      if isinstance(top.get("timestamp"), str) else {})})


def read_codex(records: list[Record], collector: Collector) -> None:
    """Codex CLI rollout JSONL (see the module docstring)."""
    sid: str | None = None
    meta: dict[str, Any] = {}
    cwd = provider = model = current = None
    pending: list[tuple[int, Message]] = []
    usage: dict[int, TokenUsage] = {}  # by index in pending
    total: Any = None
    stamps: list[Any] = []
    for number, (line, record) in enumerate(records):
        top = record_top(record, line, collector, "Codex")
        if top is None:
            continue
        stamps.append(top.get("timestamp"))
        kind = top.get("type")
        payload = top.get("payload")
        if isinstance(kind, str) and "payload" in top:
            if not isinstance(payload, Mapping):
                collector.problem(line, f"a Codex {kind!r} line without a payload object")
                continue
            if kind == "session_meta":
                if sid is None:
                    body, _ = canonical_keys(payload)
                    sid = text_of(body.get("id"))
                    cwd, provider = text_of(body.get("cwd")), text_of(body.get("model_provider"))
                    meta = {k: body[k] for k in _CODEX_META if body.get(k) is not None}
                collector.skip("codex: session_meta")
            elif kind == "turn_context":
                current = text_of(payload.get("model")) or current
                model = model or current
                collector.skip("codex: turn_context")
            elif kind == "response_item":
                reason = f"codex: response_item {payload.get('type')}"
                message = collector.read(record, line, skip_reason=reason)
                if message is not None:
                    pending.append((line, with_metadata(message, model=current,
                                                timestamp=_stamp(message, top))))
            elif kind == "compacted":
                pending.append((line, _codex_compacted(payload, top)))
            elif kind == "event_msg" and payload.get("type") == "token_count":
                info = payload.get("info")
                if isinstance(info, Mapping) and info.get("total_token_usage") != total:
                    total = info.get("total_token_usage")
                    counted = codex_usage(info.get("last_token_usage"), model=current)
                    if counted is not None and pending:
                        at = len(pending) - 1
                        usage[at] = usage[at] + counted if at in usage else counted
                collector.skip(f"codex: {kind}")
            else:
                collector.skip(f"codex: {kind}")
            continue
        if "record_type" in top:  # old rollouts: {"record_type": "state"}
            collector.skip("codex: state record")
            continue
        if number == 0 and "role" not in top and "type" not in top and "id" in top:
            sid = text_of(top.get("id"))  # old rollouts: a header line, then bare items
            meta = {k: top[k] for k in _CODEX_META if top.get(k) is not None}
            collector.skip("codex: session header")
            continue
        message = collector.read(record, line)
        if message is not None:
            pending.append((line, with_metadata(message, "codex", timestamp=top.get("timestamp"))))
    sid = sid or path_session_id(collector.source.path)
    parent = codex_parent(meta)
    session = collector.session(sid, provider=provider or "openai", model=model, cwd=cwd,
                                metadata=meta,
                                parent=parent if parent and parent.parent_session_id != sid
                                else None)
    session.started_at, session.ended_at = span(stamps)  # every line is dated when written
    for at, (line, message) in enumerate(pending):
        collector.add(session, message, f"{sid}:{line}", line, usage=usage.get(at))


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a Codex rollout."""
    read_codex(file.records, collector)
