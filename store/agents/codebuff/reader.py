"""Reader of Codebuff chats (``~/.config/manicode/projects/<project>/chats/<chat id>/``;
domain).

Learnt from ``CodebuffAI/codebuff``, read to learn, never copied:
``cli/src/utils/run-state-storage.ts`` @0b40fb03 (``saveChatState`` writes
``run-state.json``, the SDK's ``RunState``, and ``chat-messages.json``, the CLI's
``ChatMessage[]``, into the chat folder), ``cli/src/types/chat.ts`` @03cb53dc
(``ChatMessage {id, variant: ai | user | agent | error, content, blocks?, timestamp,
parentId?, agent?, credits?, completionTime?, isComplete?, metadata?, userError?}`` and the
blocks ``text {content, textType?: reasoning | text}``, ``tool {toolCallId, toolName,
input, output?, outputRaw?, agentId?}``, ``agent {agentId, agentName, agentType, content,
status: running | complete | failed | cancelled, blocks?, initialPrompt?, params?,
spawnToolCallId?, spawnIndex?}``, ``ask-user {toolCallId, questions, answers?, skipped?}``,
``mode-divider``, ``plan``, ``gate-state``, ``image``, ``agent-list``),
``cli/src/project-files.ts`` @0794d3f3 (the chat id is ``new Date().toISOString()`` with
``:`` as ``-``; the project folder is the project root's base name),
``cli/src/utils/config-dir.ts`` @ce10b6ee (``~/.config/manicode``, ``manicode-<env>`` off
prod) and ``cli/src/utils/send-message-helpers.ts`` @e0686cd8 (message ids
``ai-<Date.now()>-<hex>``, ``error-<ms>``, ``divider-<ms>``; ``timestamp:
formatTimestamp()``, a wall-clock ``h:mm AM`` in older builds, ISO in newer ones);
``sdk/src/run-state.ts`` and ``common/src/types/session-state.ts`` @da0d5711 (``RunState
{sessionState: {fileContext: {projectRoot, cwd, ...}, mainAgentState: {agentType,
creditsUsed, ...}}, output}``); the older ``npm-app/src/chat-storage.ts`` @da0d5711
(``messages.json``: ``{id, messages, updatedAt}``, model messages of
``common/src/types/messages/codebuff-message.ts``: ``tool-call`` parts ``{toolCallId,
toolName, input}``, ``tool`` messages ``{content: {type: tool-result, toolCallId, toolName,
output: [{type: json, value}]}}``).

* One session per chat folder, its id the chat id (the folder's name); its start is that
  name read as the UTC time it is. A message's time is its ISO ``timestamp``, else the epoch
  in its id (``ai-<ms>-…``); an older build's wall clock (``2:41 PM``, no date, no zone) is
  kept in the message's metadata and gives no time (the date and zone are not recorded).
* ``user`` messages are prompts; ``ai`` and ``agent`` messages are the assistant's (their
  blocks in order: text, reasoning, calls); ``error`` messages are kept as system messages.
* A ``tool`` block is a call; its ``output`` the result (``outputRaw`` kept in the result's
  extras), an error when the output holds an ``errorMessage``; a block without ``output``
  has no result.
* An ``agent`` block is a subagent: a session ``<chat id>:<agent id>`` (its prompt, its own
  blocks, its final text), linked to the ``spawn_agents`` call ``spawnToolCallId``. The CLI
  shows a spawn as its agent blocks, not as a ``tool`` block: a spawn whose call has no
  block is kept as that call, from the agent blocks (``agents``: their type and prompt), its
  result their final texts (an error when one failed or was cancelled, none while one runs).
* ``credits`` per message and the run state's ``creditsUsed`` are kept as recorded in the
  metadata: Codebuff records no token counts, and credits are never converted.
* ``run-state.json`` gives the cwd (``fileContext.cwd``, else ``projectRoot``) and the main
  agent's type and credits; a broken one is a problem, the chat is read all the same.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store.agents.codebuff import is_chat_list, is_legacy_chat
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import StoreError
from store.core.lineage import SessionLink
from store.core.model import (
    Message,
    OpaquePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolResult,
    make_tool_call,
)
from store.importers.base import Collector, ParsedSession
from store.importers.lines import moment, span, text_of
from store.importers.titles import prompt_title

__all__ = ["read_file"]

_SOURCE = "codebuff"
_ID_EPOCH = re.compile(r"\A[a-z]+-(\d{12,14})(?:-|\Z)")
_CHAT_ID = re.compile(r"\A(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2}(?:\.\d+)?)Z\Z")
_WALL_CLOCK = re.compile(r"\A\d{1,2}:\d{2}(?::\d{2})?\s*[AaPp][Mm]\Z")
_FAILED = frozenset({"failed", "cancelled"})


def chat_started(chat_id: str) -> datetime | None:
    """The chat id's time (``2025-11-20T14-32-05.123Z``: an ISO time with ``-`` for ``:``)."""
    found = _CHAT_ID.match(chat_id)
    if not found:
        return None
    return moment(f"{found.group(1)}T{found.group(2)}:{found.group(3)}:{found.group(4)}Z")


def _message_time(raw: Mapping[str, Any]) -> datetime | None:
    stamp = raw.get("timestamp")
    if isinstance(stamp, str) and not _WALL_CLOCK.match(stamp.strip()):
        found = moment(stamp)
        if found is not None:
            return found
    epoch = _ID_EPOCH.match(str(raw.get("id") or ""))
    return moment(int(epoch.group(1))) if epoch else None


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else None


@dataclass
class _Spawn:
    """A ``spawn_agents`` call known only from its agent blocks."""

    blocks: list[Mapping[str, Any]] = field(default_factory=list)


class _Chat:
    """One chat file being read: its session and the subagent sessions below it."""

    def __init__(self, collector: Collector, chat_id: str) -> None:
        self.collector = collector
        self.chat_id = chat_id

    # -- the CLI's ChatMessage list -----------------------------------------------------------

    def read_messages(self, session: ParsedSession, messages: list[Any]) -> list[Any]:
        stamps: list[Any] = []
        for index, raw in enumerate(messages):
            if not isinstance(raw, Mapping):
                self.collector.problem(None, f"codebuff message {index}: not an object",
                                       item=index)
                continue
            when = _message_time(raw)
            stamps.append(_iso(when))
            key = f"{self.chat_id}:{text_of(raw.get('id')) or index}"
            metadata = {k: v for k, v in (
                ("timestamp", _iso(when)), ("recorded_time", raw.get("timestamp")),
                ("credits", raw.get("credits")), ("completion_time", raw.get("completionTime")),
                ("agent", raw.get("agent")), ("parent_id", raw.get("parentId")),
                ("user_error", raw.get("userError")),
                ("validation_errors", raw.get("validationErrors"))) if v is not None}
            variant = raw.get("variant")
            if variant == "user":
                parts: list[Part] = [TextPart(str(raw.get("content") or ""))]
                for name in ("attachments", "textAttachments", "fileAttachments"):
                    if raw.get(name):
                        parts.append(OpaquePart(f"codebuff_{name}", raw[name]))
                self.collector.add(session, Message("user", tuple(parts), _SOURCE, key,
                                                    metadata=metadata), key, item=index)
            elif variant in ("ai", "agent"):
                self.assistant(session, key, raw, metadata, index)
            elif variant == "error":
                self.collector.add(session, Message(
                    "system", (TextPart(str(raw.get("content") or "")),), _SOURCE, key,
                    metadata={**metadata, "codebuff_error": True}), key, item=index)
            else:
                self.collector.problem(None, f"codebuff message {index}: variant "
                                             f"{variant!r} is not one the CLI writes",
                                       item=index)
        return stamps

    def assistant(self, session: ParsedSession, key: str, raw: Mapping[str, Any],
                  metadata: Mapping[str, Any], index: int | None) -> None:
        blocks = raw.get("blocks")
        blocks = [b for b in blocks if isinstance(b, Mapping)] if isinstance(blocks, list) \
            else []
        parts, results = self.blocks(session, blocks, metadata)
        content = text_of(raw.get("content"))
        if content and not any(isinstance(p, TextPart) for p in parts):
            parts.append(TextPart(content))
        self.collector.add(session, Message("assistant", tuple(parts), _SOURCE, key,
                                            metadata=metadata), key, item=index)
        if results:
            self.collector.add(session, Message(
                "tool", tuple(results), _SOURCE, None,
                metadata={k: metadata[k] for k in ("timestamp",) if k in metadata}),
                f"{key}:results", item=index)

    def blocks(self, session: ParsedSession, blocks: list[Mapping[str, Any]],
               metadata: Mapping[str, Any]) -> tuple[list[Part], list[Part]]:
        """The parts of an assistant message and the results of its calls; each agent block
        becomes a subagent session."""
        parts: list[Part] = []
        results: list[Part] = []
        called = {text_of(b.get("toolCallId")) for b in blocks if b.get("type") == "tool"}
        spawns: dict[str, _Spawn] = {}
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                text = str(block.get("content") or "")
                if block.get("textType") == "reasoning":
                    parts.append(ThinkingPart(text))
                elif text:
                    parts.append(TextPart(text))
            elif kind == "tool":
                call_id = text_of(block.get("toolCallId"))
                name = str(block.get("toolName") or "")
                extras = {k: block[k] for k in ("agentId",) if block.get(k)}
                parts.append(make_tool_call(call_id, name, block.get("input") or {},
                                            extras=extras, source=_SOURCE))
                if "output" in block:
                    results.append(ToolResult(
                        call_id, block.get("output"), _is_error(block), name,
                        {k: block[k] for k in ("outputRaw",) if k in block}, _SOURCE))
            elif kind == "ask-user":
                call_id = text_of(block.get("toolCallId"))
                parts.append(make_tool_call(call_id, "ask_user",
                                            {"questions": block.get("questions") or []},
                                            source=_SOURCE))
                if block.get("answers") is not None or block.get("skipped"):
                    results.append(ToolResult(
                        call_id, block.get("answers") if not block.get("skipped")
                        else "skipped", False, "ask_user", {}, _SOURCE))
            elif kind == "agent":
                spawn = text_of(block.get("spawnToolCallId"))
                if spawn is not None and spawn not in called:
                    if spawn not in spawns:
                        spawns[spawn] = _Spawn()
                        parts.append(OpaquePart("codebuff_spawn", spawn))  # (its place)
                    spawns[spawn].blocks.append(block)
                self.subagent(session, block, spawn, metadata)
            elif kind == "html":
                continue  # (rendered UI; never serialized with content)
            else:
                parts.append(OpaquePart(f"codebuff_{kind}", dict(block)))
        for spawn, found in spawns.items():  # the spawn calls known from their agent blocks
            place = parts.index(OpaquePart("codebuff_spawn", spawn))
            ordered = sorted(found.blocks, key=lambda b: b.get("spawnIndex") or 0)
            arguments = {"agents": [{k: v for k, v in (
                ("agent_type", b.get("agentType")), ("prompt", b.get("initialPrompt")),
                ("params", b.get("params"))) if v is not None} for b in ordered]}
            parts[place] = make_tool_call(spawn, "spawn_agents", arguments, source=_SOURCE,
                                          extras={"codebuff_from_agent_blocks": True})
            statuses = [b.get("status") for b in ordered]
            if all(s in ("complete", *_FAILED) for s in statuses):
                results.append(ToolResult(
                    spawn, [{"agentName": b.get("agentName"), "agentType": b.get("agentType"),
                             "status": b.get("status"), "value": b.get("content")}
                            for b in ordered],
                    any(s in _FAILED for s in statuses), "spawn_agents", {}, _SOURCE))
        return parts, results

    def subagent(self, parent: ParsedSession, block: Mapping[str, Any], spawn: str | None,
                 metadata: Mapping[str, Any]) -> None:
        agent_id = text_of(block.get("agentId")) or f"agent{len(self.collector.sessions)}"
        sid = f"{self.chat_id}:{agent_id}"
        info = {k: block[k] for k in ("agentName", "agentType", "status", "params",
                                      "spawnIndex") if block.get(k) is not None}
        child = self.collector.session(
            sid, cwd=parent.cwd, tags=(_SOURCE, "subagent"),
            metadata={"parent_session": parent.session_id, "codebuff_agent": info,
                      **({"parent_call_id": spawn} if spawn else {})})
        child.parent = SessionLink(parent.session_id, "subagent", spawn)
        child.title = text_of(block.get("agentName")) or text_of(block.get("agentType"))
        stamp = {k: metadata[k] for k in ("timestamp",) if k in metadata}
        prompt = text_of(block.get("initialPrompt"))
        if prompt:
            self.collector.add(child, Message("user", (TextPart(prompt),), _SOURCE,
                                              f"{sid}:prompt", metadata=stamp),
                               f"{sid}:prompt")
        self.assistant(child, f"{sid}:reply", {"blocks": block.get("blocks"),
                                               "content": block.get("content")},
                       {**stamp, "status": block.get("status")}, None)
        child.started_at, child.ended_at = span([metadata.get("timestamp")])

    # -- the npm-app's messages.json ---------------------------------------------------------

    def read_legacy(self, session: ParsedSession, document: Mapping[str, Any]) -> None:
        for index, raw in enumerate(document["messages"]):
            if not isinstance(raw, Mapping):
                self.collector.problem(None, f"codebuff message {index}: not an object",
                                       item=index)
                continue
            key = f"{self.chat_id}:{index}"
            try:
                message = _model_message(raw, key)
            except (StoreError, TypeError, ValueError) as exc:
                self.collector.problem(None, f"codebuff message {index}: {exc}", item=index)
                continue
            if message is None:
                found = self.collector.read(raw, None, index)
                if found is None:
                    continue
                message = Message(found.role, found.parts, _SOURCE, key, found.extras)
            self.collector.add(session, message, key, item=index)


def _model_message(raw: Mapping[str, Any], key: str) -> Message | None:
    """A Codebuff model message (``tool-call`` parts, ``tool-result`` content); ``None`` for
    any other shape (left to the normalizer)."""
    role = raw.get("role")
    content = raw.get("content")
    extras = {k: raw[k] for k in ("timeToLive", "keepDuringTruncation") if k in raw}
    if role == "tool" and isinstance(content, Mapping) and content.get("type") == "tool-result":
        call_id = text_of(content.get("toolCallId"))
        name = text_of(content.get("toolName"))
        output = content.get("output")
        return Message("tool", (ToolResult(call_id, output, _has_error_message(output), name,
                                           {}, _SOURCE),), _SOURCE, key, extras)
    if role not in ("user", "assistant", "system"):
        return None
    if isinstance(content, str):
        return Message(role, (TextPart(content),), _SOURCE, key, extras)
    if not isinstance(content, list):
        return None
    parts: list[Part] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            parts.append(TextPart(str(part.get("text") or "")))
        elif kind == "reasoning":
            parts.append(ThinkingPart(str(part.get("text") or "")))
        elif kind == "tool-call":
            parts.append(make_tool_call(text_of(part.get("toolCallId")),
                                        str(part.get("toolName") or ""),
                                        part.get("input") or {}, source=_SOURCE))
        elif isinstance(part, Mapping):
            parts.append(OpaquePart(f"codebuff_{kind}", dict(part)))
        else:
            return None
    return Message(role, tuple(parts), _SOURCE, key, extras)


def _has_error_message(value: Any) -> bool:
    """An output that holds an ``errorMessage`` (Codebuff's tools report failures so)."""
    if isinstance(value, Mapping):
        return "errorMessage" in value or _has_error_message(value.get("value"))
    if isinstance(value, list):
        return any(_has_error_message(v) for v in value)
    return False


def _is_error(block: Mapping[str, Any]) -> bool:
    if "outputRaw" in block:
        return _has_error_message(block["outputRaw"])
    output = block.get("output")
    if isinstance(output, str) and output.lstrip().startswith(("{", "[")):
        try:
            return _has_error_message(loads_json(output))
        except ValueError:
            return False
    return False


def _run_state(folder: Path, collector: Collector) -> Mapping[str, Any]:
    """``run-state.json`` beside the chat (``{}`` when absent; a broken one is a problem)."""
    path = folder / "run-state.json"
    try:
        state = loads_json(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        collector.problem(None, f"{path.name}: not read: {exc}")
        return {}
    if not isinstance(state, Mapping):
        collector.problem(None, f"{path.name}: not a JSON object")
        return {}
    return state


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a chat's ``chat-messages.json`` or ``messages.json``."""
    document = file.document
    legacy = is_legacy_chat(document)
    if not legacy and not is_chat_list(document) and document != []:
        collector.problem(None, "not a Codebuff chat: a list of chat messages or "
                                "{id, messages, updatedAt} expected")
        return
    chat_id = file.path.parent.name
    if legacy:
        chat_id = text_of(document.get("id")) or chat_id
    state = _run_state(file.path.parent, collector)
    session_state = _mapping(state.get("sessionState"))
    context = _mapping(session_state.get("fileContext"))
    main = _mapping(session_state.get("mainAgentState"))
    metadata: dict[str, Any] = {"project_folder": file.path.parent.parent.parent.name}
    for key, value in (("agent_type", main.get("agentType")),
                       ("credits_used", main.get("creditsUsed")),
                       ("project_root", context.get("projectRoot"))):
        if value is not None:
            metadata[key] = value
    session = collector.session(chat_id, cwd=text_of(context.get("cwd")) or text_of(
        context.get("projectRoot")), metadata=metadata)
    chat = _Chat(collector, chat_id)
    started = chat_started(file.path.parent.name) or chat_started(chat_id)
    stamps: list[Any] = [_iso(started)]
    if legacy:
        chat.read_legacy(session, document)
        stamps.append(document.get("updatedAt"))
    else:
        stamps.extend(chat.read_messages(session, list(document)))
    session.started_at, session.ended_at = span(stamps)
    if started is not None:
        session.started_at = started
    session.title = prompt_title(session.items)
