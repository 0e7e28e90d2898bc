"""Reader of Claude Code project transcripts (``~/.claude/projects/<project>/<id>.jsonl``; domain).

Assistant lines sharing ``message.id`` (one content block each) become one message, parts in
line order, keyed by the ``message.id``, the lines' ``uuid``\\ s kept in metadata. A turn that
ends the file with no ``stop_reason`` may still be growing: it is deferred unless the file is
settled. Subagent lines (``isSidechain`` with an ``agentId``; files
``<session>/subagents/agent-<id>.jsonl`` or, 2.0.x, ``agent-<id>.jsonl``) go to their own
session ``<sessionId>:agent-<agentId>``, linked to the parent session and to the parent's
``Task`` / ``Agent`` call (the session's ``parent``, kind ``subagent``; metadata
``parent_session``, ``parent_call_id``); 1.x inline sidechain lines (no ``agentId``) to
``<sessionId>:sidechain``. A resume writes a new file that starts with the resumed
session's lines (under its ``sessionId``) and goes on under a new ``sessionId``: that
session's parent is the resumed one (kind ``continuation``). Results are separate lines,
paired to calls by id when stored, whatever their order. A turn's token usage (each of its lines
repeats the response's ``usage``, growing while it streams) is counted once, from its line with
the most tokens (as ccusage does). ``summary`` lines give the title; other
lines carrying no message are skipped with their type as reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.lineage import SessionLink
from store.core.model import Message, Part, ToolCall, ToolResult, content_text
from store.importers.base import Collector, Record, path_session_id
from store.importers.lines import record_top, span, text_of
from store.usage.tokens import TokenUsage, anthropic_usage

__all__ = ["read_claude_code", "read_file"]


@dataclass(slots=True)
class _Turn:
    """An assistant turn split over several lines (one content block per line)."""

    message_id: str
    lines: list[int] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    uuids: list[str] = field(default_factory=list)
    stopped: bool = False
    #: The response's usage: every line repeats it, the counts growing while it streams, so
    #: the line with the most tokens (the last of equals) holds the final count (as ccusage).
    usage: TokenUsage | None = None

    def count(self, usage: TokenUsage | None) -> None:
        if usage is not None and (self.usage is None or usage.total >= self.usage.total):
            self.usage = usage

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
    owner: dict[str, str] = {}  # line uuid -> the chain it first appeared in
    order: list[str] = []  # chains in the order the file shows them
    first_parent: dict[str, str | None] = {}  # chain -> its first line's parentUuid
    side_root: dict[str, str] = {}  # 1.x inline sidechain line uuid -> its chain's root
    roots: dict[str, int] = {}  # 1.x inline sidechains' roots -> number, in file order
    for line, record in records:
        top = record_top(record, line, collector, "Claude Code")
        if top is None:
            continue
        kind = top.get("type")
        inner = top.get("message")
        root = None
        if top.get("is_sidechain") is True and not text_of(top.get("agent_id")):
            root = side_root.get(text_of(top.get("parent_uuid")) or "")
            if root is None:  # a subagent's first line (its prompt): a sidechain of its own
                root = text_of(top.get("uuid")) or f"line{line}"
                roots[root] = len(roots) + 1
            if text_of(top.get("uuid")):
                side_root[top["uuid"]] = root
        if kind == "summary":
            if text_of(top.get("summary")):
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
        sid = text_of(top.get("session_id")) or default_sid or path_session_id(
            collector.source.path)
        default_sid = default_sid or sid
        agent_id = text_of(top.get("agent_id"))
        if top.get("is_sidechain") is not True:
            chain = sid
        elif agent_id:  # a subagent: its own session, one per agent id
            chain = f"{sid}:agent-{agent_id}"
        else:  # 1.x inline rows: one session per subagent (per root of the parentUuid chain)
            number = roots.get(root or "", 1)
            chain = f"{sid}:sidechain" + (f"-{number}" if number > 1 else "")
        uuid = text_of(top.get("uuid"))
        if uuid is not None:
            uuids.add(uuid)
            owner.setdefault(uuid, chain)
        if chain not in info:
            order.append(chain)
            first_parent[chain] = text_of(top.get("parent_uuid"))
        meta = info.setdefault(chain, {"parent": sid, "agent_id": agent_id, "stamps": []})
        meta["stamps"].append(top.get("timestamp"))
        if "cwd" not in meta and text_of(top.get("cwd")):
            meta["cwd"] = top["cwd"]
        for name in _CLAUDE_SESSION_KEYS:
            if name not in meta and text_of(top.get(name)):
                meta[name] = top[name]
        provider_id = text_of(message.metadata.get("provider_message_id"))
        chain_entries = entries.setdefault(chain, [])
        if message.role != "assistant" or provider_id is None or not isinstance(inner, Mapping):
            chain_entries.append((line, message, uuid or f"{chain}:{line}"))
            continue
        model = inner.get("model")
        if "model" not in meta and text_of(model) and model != "<synthetic>":
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
        turn.count(anthropic_usage(inner.get("usage"), model=model,
                                   request_id=top.get("request_id"), response_id=provider_id))
    spawned = _sidechain_calls(entries, info)
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
        elif side and chain in spawned:
            link = {"parent_call_id": spawned[chain][0], "agent_type": spawned[chain][1]}
        kind = "subagent" if agent_id is not None else "sidechain"
        label = link.get("agent_type")
        parent = (SessionLink(meta["parent"], "subagent", link.get("parent_call_id")) if side
                  else _continued(chain, order, info, owner, first_parent))
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
            parent=parent,
        )
        session.started_at, session.ended_at = span(meta["stamps"])
        for line, value, key in items:
            if isinstance(value, _Turn):
                if not (value.stopped or settled or value.lines[-1] < last_line):
                    for turn_line in value.lines:  # the turn may still be growing
                        collector.defer(turn_line)
                    continue
                collector.add(session, value.message(), key, line, usage=value.usage)
            else:
                collector.add(session, value, key, line)


_SPAWNING_TOOLS = frozenset({"Task", "Agent"})


def _sidechain_calls(entries: dict[str, list[tuple[int, Message | _Turn, str]]],
                     info: dict[str, dict[str, Any]]) -> dict[str, tuple[str, str | None]]:
    """The ``Task`` / ``Agent`` call that spawned each 1.x inline sidechain, with its
    ``subagent_type``: Claude Code writes the call's ``prompt`` as the sidechain's first user
    line, and the call's result is the sidechain's last answer; parallel calls each have
    their own prompt (a prompt given twice is told apart by the result). Read from the
    messages already parsed for the main chains (every key spelling the loop reads)."""
    def messages(items: list[tuple[int, Message | _Turn, str]]) -> list[Message]:
        return [m for _, v, _ in items for m in (v.messages if isinstance(v, _Turn) else [v])]

    calls: list[tuple[str, str, str | None]] = []  # id, prompt, subagent type
    results: dict[str, str] = {}
    for chain, items in entries.items():
        if chain != info[chain]["parent"]:
            continue
        for message in messages(items):
            for part in message.parts:
                if isinstance(part, ToolCall) and part.name in _SPAWNING_TOOLS and part.id:
                    calls.append((part.id, str(part.input.get("prompt") or ""),
                                  text_of(part.input.get("subagent_type"))))
                elif isinstance(part, ToolResult) and part.call_id:
                    results[part.call_id] = content_text(part.content).strip()
    found: dict[str, tuple[str, str | None]] = {}
    taken: set[str] = set()
    for chain, items in entries.items():
        if chain == info[chain]["parent"] or info[chain]["agent_id"] is not None or not items:
            continue
        first = items[0][1]
        prompt = (first.text or "") if isinstance(first, Message) else ""
        answers = [m.text for m in messages(items) if m.role == "assistant" and m.text]
        answer = answers[-1].strip() if answers else None
        matches = [c for c in calls if c[0] not in taken and c[1] and c[1] == prompt]
        if len(matches) > 1 and answer:
            matches = [c for c in matches if results.get(c[0]) == answer] or matches
        if not matches and answer:
            matches = [c for c in calls if c[0] not in taken and results.get(c[0]) == answer]
        if matches:
            taken.add(matches[0][0])
            found[chain] = (matches[0][0], matches[0][2])
    return found


def _continued(chain: str, order: list[str], info: dict[str, dict[str, Any]],
               owner: dict[str, str], first_parent: dict[str, str | None]) -> SessionLink | None:
    """The session a main chain continues, when the file holds several: a resumed session's
    file starts with the earlier session's lines (under the earlier ``sessionId``), then the
    new id's; the new one continues the chain its first line's ``parentUuid`` belongs to,
    else the main chain before it in the file."""
    mains = [c for c in order if c == info[c]["parent"]]
    if chain not in mains or mains.index(chain) == 0:
        return None
    parent = owner.get(first_parent.get(chain) or "")
    if parent is None or parent == chain or parent not in mains:
        parent = mains[mains.index(chain) - 1]
    return SessionLink(parent, "continuation")


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


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a Claude Code JSON-lines file."""
    read_claude_code(file.records, file.last_line, collector)
