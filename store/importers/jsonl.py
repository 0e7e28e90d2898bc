"""Readers of coding-agent JSON-lines transcripts: Claude Code, Codex, Kward (domain).

Each reader takes a file's parsed lines and fills a :class:`~store.importers.base.Collector`.
Keys are the record's own id when it has one (Claude Code ``uuid``, or ``message.id`` for a
regrouped assistant turn; Kward record ``id``), else ``<session id>:<line number>``: files are
append-only, so keys are stable and a re-import stores only what is new.

* **Claude Code**: assistant lines sharing ``message.id`` (one content block each) become one
  message, parts in line order, keyed by the ``message.id``, the lines' ``uuid``\\ s kept in
  metadata. A turn that ends the file with no ``stop_reason`` may still be growing: it is
  deferred unless the file is settled. Subagent lines (``isSidechain`` with an ``agentId``;
  files ``<session>/subagents/agent-<id>.jsonl`` or, 2.0.x, ``agent-<id>.jsonl``) go to
  their own session ``<sessionId>:agent-<agentId>``, linked to the parent session and to the
  parent's ``Task`` / ``Agent`` call (metadata ``parent_session``, ``parent_call_id``);
  1.x inline sidechain lines (no ``agentId``) to ``<sessionId>:sidechain``. Results are
  separate lines, paired to calls by id when stored,
  whatever their order. ``summary`` lines give the title; other lines carrying no message are
  skipped with their type as reason.
* **Codex**: ``session_meta`` gives the session (id, cwd, provider, CLI version),
  ``turn_context`` the model, ``response_item`` payloads the messages (dated by their line's
  ``timestamp``), a ``compacted`` record a user message holding its summary (the record
  kept whole in the metadata); ``event_msg``,
  ``ghost_snapshot`` ... are skipped with a reason. Old rollouts without the
  ``{timestamp, type, payload}`` envelope (a header line, then bare items) read too. Outputs
  are stored verbatim; :func:`decode_codex_output` unwraps them for display.
* **Kward**: the ``session`` header gives the session; ``message``, ``compaction``,
  ``branch_summary`` and ``tool_execution_end`` records are messages (any key spelling);
  ``leaf``, ``label`` and ``session_info`` are skipped with a reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from store.arguments import loads_json
from store.errors import AmbiguousRecord
from store.importers.base import Collector, Record, path_session_id
from store.keys import canonical_keys
from store.model import Message, Part, TextPart

__all__ = ["decode_codex_output", "read_claude_code", "read_codex", "read_kward"]


def _top(record: Any, line: int, collector: Collector, what: str) -> Mapping[str, Any] | None:
    """A record's top level in plain keys, or ``None`` after reporting why it is unusable."""
    if not isinstance(record, Mapping):
        collector.problem(line, f"not a {what} record: a JSON {type(record).__name__}")
        return None
    try:
        top, _ = canonical_keys(record)
    except AmbiguousRecord as exc:
        collector.problem(line, str(exc))
        return None
    return top


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _with(message: Message, source: str | None = None, **metadata: Any) -> Message:
    """The message with another source and more metadata (``None`` values left out)."""
    extra = {k: v for k, v in metadata.items() if v is not None}
    if not extra and (source is None or source == message.source):
        return message
    return Message(message.role, message.parts, source or message.source, message.message_id,
                   message.extras, {**message.metadata, **extra})


# -- Claude Code ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Turn:
    """An assistant turn split over several lines (one content block per line)."""

    message_id: str
    lines: list[int] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    uuids: list[str] = field(default_factory=list)
    stopped: bool = False

    def message(self) -> Message:
        first, last = self.messages[0], self.messages[-1]
        parts: list[Part] = [p for m in self.messages for p in m.parts]
        metadata = {**first.metadata, "uuids": self.uuids, "lines": self.lines}
        return Message("assistant", tuple(parts), "claude_code", self.message_id, last.extras,
                       metadata)


_CLAUDE_SESSION_KEYS = ("version", "git_branch")


def read_claude_code(records: list[Record], last_line: int, collector: Collector) -> None:
    """Claude Code project JSONL (see the module docstring)."""
    default_sid: str | None = None
    entries: dict[str, list[tuple[int, Message | _Turn, str]]] = {}
    turns: dict[tuple[str, str], _Turn] = {}
    info: dict[str, dict[str, Any]] = {}
    summaries: list[tuple[str, Any]] = []
    uuids: set[str] = set()
    for line, record in records:
        top = _top(record, line, collector, "Claude Code")
        if top is None:
            continue
        kind = top.get("type")
        inner = top.get("message")
        if kind == "summary":
            if _text(top.get("summary")):
                summaries.append((top["summary"], top.get("leaf_uuid")))
            collector.skip("claude-code: summary line")
            continue
        if not isinstance(inner, Mapping) and not (kind == "system" and "uuid" in top):
            if isinstance(kind, str):
                collector.skip(f"claude-code: {kind} line")
            else:
                collector.problem(line, "not a Claude Code line: keys "
                                        f"{sorted(str(k) for k in record)}")
            continue
        message = collector.read(record, line)
        if message is None:
            continue
        sid = _text(top.get("session_id")) or default_sid or path_session_id(
            collector.source.path)
        default_sid = default_sid or sid
        agent_id = _text(top.get("agent_id"))
        if top.get("is_sidechain") is not True:
            chain = sid
        else:  # a subagent: its own session (one per agent id; 1.x inline rows: one sidechain)
            chain = f"{sid}:agent-{agent_id}" if agent_id else f"{sid}:sidechain"
        uuid = _text(top.get("uuid"))
        if uuid is not None:
            uuids.add(uuid)
        meta = info.setdefault(chain, {"parent": sid, "agent_id": agent_id})
        if "cwd" not in meta and _text(top.get("cwd")):
            meta["cwd"] = top["cwd"]
        for name in _CLAUDE_SESSION_KEYS:
            if name not in meta and _text(top.get(name)):
                meta[name] = top[name]
        provider_id = _text(message.metadata.get("provider_message_id"))
        chain_entries = entries.setdefault(chain, [])
        if message.role != "assistant" or provider_id is None or not isinstance(inner, Mapping):
            chain_entries.append((line, message, uuid or f"{chain}:{line}"))
            continue
        model = inner.get("model")
        if "model" not in meta and _text(model) and model != "<synthetic>":
            meta["model"] = model
        turn = turns.get((chain, provider_id))
        if turn is None:
            turn = turns[(chain, provider_id)] = _Turn(provider_id)
            chain_entries.append((line, turn, provider_id))
        elif uuid is not None and uuid in turn.uuids:
            collector.skip("claude-code: repeated line")
            continue
        turn.lines.append(line)
        turn.messages.append(message)
        if uuid is not None:
            turn.uuids.append(uuid)
        turn.stopped = turn.stopped or inner.get("stop_reason") is not None
    title = next((s for s, leaf in summaries if leaf in uuids), None)
    title = title or next((s for s, _ in summaries), None)
    settled = collector.source.settled
    for chain, items in entries.items():
        meta = info[chain]
        side = chain != meta["parent"]
        agent_id = meta["agent_id"] if side else None
        link: dict[str, Any] = {}
        if agent_id is not None:
            link = _subagent_link(collector.source.path, records, meta["parent"], agent_id)
        kind = "subagent" if agent_id is not None else "sidechain"
        label = link.get("agent_type")
        session = collector.session(
            chain, title=(f"{title or meta['parent']} ({kind}"
                          + (f" {label})" if label else ")") if side else title),
            provider="anthropic", model=meta.get("model"), cwd=meta.get("cwd"),
            tags=("claude-code", kind) if side else ("claude-code",),
            metadata={k: v for k, v in (("version", meta.get("version")),
                                        ("git_branch", meta.get("git_branch")),
                                        ("parent_session", meta["parent"] if side else None),
                                        ("agent_id", agent_id),
                                        ("parent_call_id", link.get("parent_call_id")),
                                        ("agent_type", label),
                                        ("spawn_depth", link.get("spawn_depth")))
                      if v is not None},
        )
        for line, value, key in items:
            if isinstance(value, _Turn):
                if not (value.stopped or settled or value.lines[-1] < last_line):
                    for turn_line in value.lines:  # the turn may still be growing
                        collector.defer(turn_line)
                    continue
                collector.add(session, value.message(), key, line)
            else:
                collector.add(session, value, key, line)


def _subagent_link(path: Any, records: list[Record], parent: str,
                   agent_id: str) -> dict[str, Any]:
    """Where a Claude Code subagent came from: the id of the parent's ``Task`` / ``Agent``
    call (``parent_call_id``: from the result row whose ``toolUseResult.agentId`` is the agent,
    else a ``progress`` row's ``parentToolUseID``) and the sidecar ``agent-<id>.meta.json``
    (``agent_type``, ``spawn_depth``). The parent is this file's own rows (1.x), else
    ``<project>/<parent>.jsonl`` next to ``<parent>/subagents/agent-<id>.jsonl`` (2.1.2+) or
    next to ``agent-<id>.jsonl`` (2.0.x)."""
    from pathlib import Path

    found: dict[str, Any] = {}
    file = Path(path)
    sidecar = file.with_name(file.name.removesuffix(".jsonl") + ".meta.json")
    try:
        info = loads_json(sidecar.read_text(encoding="utf-8"))
        if isinstance(info, Mapping):
            if isinstance(info.get("agentType"), str):
                found["agent_type"] = info["agentType"]
            if isinstance(info.get("spawnDepth"), int):
                found["spawn_depth"] = info["spawnDepth"]
    except (OSError, ValueError):
        pass
    call = _parent_call((r for _, r in records), agent_id)
    candidates = [file.parent / f"{parent}.jsonl"]
    if file.parent.name == "subagents":
        candidates.insert(0, file.parent.parent.parent / f"{parent}.jsonl")
    for candidate in candidates:
        if call is not None:
            break
        try:
            with candidate.open(encoding="utf-8", errors="replace") as handle:
                call = _parent_call(_rows_naming(handle, agent_id), agent_id)
        except OSError:
            continue
    if call is not None:
        found["parent_call_id"] = call
    return found


def _rows_naming(lines: Any, agent_id: str) -> Any:
    for text in lines:
        if agent_id in text:
            try:
                yield loads_json(text)
            except ValueError:
                continue


def _parent_call(rows: Any, agent_id: str) -> str | None:
    progress: str | None = None
    for row in rows:
        if not isinstance(row, Mapping):
            continue
        outcome = row.get("toolUseResult")
        message = row.get("message")
        if (isinstance(outcome, Mapping) and outcome.get("agentId") == agent_id
                and isinstance(message, Mapping) and isinstance(message.get("content"), list)):
            for block in message["content"]:
                if (isinstance(block, Mapping) and block.get("type") == "tool_result"
                        and isinstance(block.get("tool_use_id"), str)):
                    return str(block["tool_use_id"])
        data = row.get("data")
        if (progress is None and row.get("type") == "progress" and isinstance(data, Mapping)
                and data.get("agentId") == agent_id
                and isinstance(row.get("parentToolUseID"), str)):
            progress = str(row["parentToolUseID"])
    return progress


# -- Codex ---------------------------------------------------------------------------------------


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


_CODEX_META = ("cli_version", "originator", "source", "timestamp", "git", "instructions")


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
    for number, (line, record) in enumerate(records):
        top = _top(record, line, collector, "Codex")
        if top is None:
            continue
        kind = top.get("type")
        payload = top.get("payload")
        if isinstance(kind, str) and "payload" in top:
            if not isinstance(payload, Mapping):
                collector.problem(line, f"a Codex {kind!r} line without a payload object")
                continue
            if kind == "session_meta":
                if sid is None:
                    body, _ = canonical_keys(payload)
                    sid = _text(body.get("id"))
                    cwd, provider = _text(body.get("cwd")), _text(body.get("model_provider"))
                    meta = {k: body[k] for k in _CODEX_META if body.get(k) is not None}
                collector.skip("codex: session_meta")
            elif kind == "turn_context":
                current = _text(payload.get("model")) or current
                model = model or current
                collector.skip("codex: turn_context")
            elif kind == "response_item":
                reason = f"codex: response_item {payload.get('type')}"
                message = collector.read(record, line, skip_reason=reason)
                if message is not None:
                    pending.append((line, _with(message, model=current,
                                                timestamp=_stamp(message, top))))
            elif kind == "compacted":
                pending.append((line, _codex_compacted(payload, top)))
            else:
                collector.skip(f"codex: {kind}")
            continue
        if "record_type" in top:  # old rollouts: {"record_type": "state"}
            collector.skip("codex: state record")
            continue
        if number == 0 and "role" not in top and "type" not in top and "id" in top:
            sid = _text(top.get("id"))  # old rollouts: a header line, then bare items
            meta = {k: top[k] for k in _CODEX_META if top.get(k) is not None}
            collector.skip("codex: session header")
            continue
        message = collector.read(record, line)
        if message is not None:
            pending.append((line, _with(message, "codex", timestamp=top.get("timestamp"))))
    sid = sid or path_session_id(collector.source.path)
    session = collector.session(sid, provider=provider or "openai", model=model, cwd=cwd,
                                metadata=meta)
    for line, message in pending:
        collector.add(session, message, f"{sid}:{line}", line)


# -- Kward ---------------------------------------------------------------------------------------


_KWARD_SKIPPED = frozenset({"leaf", "label", "session_info"})
_KWARD_HEADER = ("version", "timestamp")


def read_kward(records: list[Record], collector: Collector) -> None:
    """Kward JSONL sessions (see the module docstring)."""
    header: Mapping[str, Any] | None = None
    title: str | None = None
    pending: list[tuple[int, Message, str | None]] = []
    for line, record in records:
        top = _top(record, line, collector, "Kward")
        if top is None:
            continue
        kind = top.get("type")
        if kind == "session":
            if header is None:
                header = top
                collector.skip("kward: session header")
            else:
                collector.skip("kward: another session header")
            continue
        if kind in _KWARD_SKIPPED:
            if kind == "session_info" and title is None:
                title = _text(top.get("name")) or _text(top.get("title"))
            collector.skip(f"kward: {kind} record")
            continue
        message = collector.read(record, line)
        if message is not None:
            pending.append((line, message, _text(top.get("id"))))
    head = header or {}
    sid = _text(head.get("id")) or path_session_id(collector.source.path)
    session = collector.session(
        sid, title=title, provider=_text(head.get("provider")), model=_text(head.get("model")),
        cwd=_text(head.get("cwd")),
        metadata={k: head[k] for k in _KWARD_HEADER if head.get(k) is not None},
    )
    for line, message, record_id in pending:
        collector.add(session, message, record_id or f"{sid}:{line}", line)
