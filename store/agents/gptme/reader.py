"""Reader of gptme's conversations (``<logs>/<name>/conversation.jsonl``; domain).

Learnt from gptme's own writer, ``gptme/gptme`` at d27f98d3 (August 2026):
``gptme/message.py`` (``Message.to_dict``: ``role`` system/user/assistant, ``content`` text,
``timestamp`` ``datetime.now().isoformat()``: local time with no zone, ``files``,
``file_hashes``, ``pinned``, ``hide``, ``ephemeral_ttl``, ``call_id``, ``metadata`` with
``model``, ``cost``, ``usage`` {``input_tokens`` (without the cached ones),
``output_tokens``, ``cache_read_tokens``, ``cache_creation_tokens``}, ``timings``, ``tool``;
``_migrate_metadata``: older logs put the counts beside ``model``),
``gptme/logmanager/manager.py`` (``Log.write_jsonl`` rewrites the file whole, one message a
line; ``conversation.jsonl`` is the main branch, ``branches/*.jsonl`` the others),
``gptme/config/chat.py`` (``config.toml`` ``[chat]``: ``name``, ``model``, ``workspace``),
``gptme/tools/base.py`` (calls, :mod:`store.agents.gptme.calls`; in the tool format the last
output of a call carries its ``call_id``) and ``gptme/tools/subagent/api.py`` (a subagent's
conversation is ``subagent-<agent id>-<4 characters>``, beside its parent's; a planner's
``subagent-<agent id>``).

* A conversation's folder is a session, ``gptme:<folder name>``; ``config.toml`` beside the
  file gives its title (``name``), model and cwd (``workspace``; else the ``workspace`` link's
  target). Its start and end are its messages' first and last ``timestamp`` (local time with
  no zone, read as UTC, as every naive time is; a time with an offset as written).
* Keys are ``<session>:<timestamp>`` (the file is rewritten whole, so a line's place is not
  stable after an undo; ``#n`` for a second message of the same time).
* Replies: their text kept verbatim, with the calls written in it as calls (fenced tool blocks
  get ids ``<message key>#<n>``; the tool format's ids as written). Each reply's
  ``metadata.usage`` is one usage row (its model the reply's ``metadata.model``); ``cost`` and
  ``timings`` are kept in the metadata.
* Results: a ``system`` message with the ``call_id`` of a call -> a ``tool`` message holding
  its result. The fenced calls have no ids: the ``system`` messages after the reply (before
  the next user or assistant message) are their results in order, one each (a call runs
  before the next; hook and warning outputs after them stay ``system`` messages). Errors are
  told by the output's words (:func:`~store.agents.gptme.calls.is_error_output`).
* A ``hide`` user message (one gptme adds, never shown) is marked as the agent's, not a
  prompt.
* A subagent's conversation (``subagent-<id>-xxxx``) is linked to the sibling conversation
  whose call ``subagent("<id>", ...)`` (an ``ipython`` block, or the tool format's
  ``subagent`` call) came last before the subagent's first message: a ``subagent`` link with
  that call's id.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from store.agents.gptme.calls import FoundCall, calls_in, is_error_output
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.lineage import SessionLink
from store.core.model import Message, Part, TextPart, ToolResult, make_tool_call
from store.core.times import parse_timestamp
from store.importers.base import Collector, Record
from store.importers.lines import record_top, text_of
from store.importers.titles import AGENT_MADE, ORIGIN
from store.usage.tokens import TokenUsage

__all__ = ["read_file"]

_ROLES = ("system", "user", "assistant")
_KEPT = ("timestamp", "files", "file_hashes", "pinned", "hide", "ephemeral_ttl", "call_id")
_SUBAGENT_FOLDER = re.compile(r"subagent-(.+?)(?:-[a-z0-9]{4})?")
_TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a gptme conversation (see the module docstring)."""
    path = file.path
    folder = path.parent
    name = folder.name if path.name == "conversation.jsonl" else f"{folder.name}/{path.stem}"
    sid = f"gptme:{name}"
    chat = _config(folder, collector)
    messages = _messages(file.records, collector)
    keys = _keys(sid, messages)
    session = collector.session(sid, cwd=text_of(chat.get("workspace")) or _linked(folder),
                                model=text_of(chat.get("model")),
                                title=text_of(chat.get("name")),
                                metadata={"gptme_name": name})
    if text_of(chat.get("tool_format")):
        session.metadata["tool_format"] = chat["tool_format"]
    pending: list[tuple[str, str]] = []  # fenced calls waiting for output: (id, tool)
    by_id: dict[str, str] = {}  # tool-format call id -> tool
    for (line, top), key in zip(messages, keys, strict=True):
        role = top["role"]
        content: str = top["content"]
        metadata = {k: top[k] for k in _KEPT if top.get(k) is not None}
        recorded = top.get("metadata")
        usage = None
        if role == "assistant":
            pending = []
            parts: list[Part] = [TextPart(content)] if content else []
            for index, found in enumerate(calls_in(content)):
                call_id = found.call_id or f"{key}#{index + 1}"
                parts.append(make_tool_call(call_id, found.tool, found.arguments,
                                            source="gptme"))
                if found.call_id is None:
                    pending.append((call_id, found.tool))
                else:
                    by_id[call_id] = found.tool
            if isinstance(recorded, Mapping):
                metadata.update({k: v for k, v in recorded.items()
                                 if k not in ("usage", *_TOKEN_KEYS)})
                usage = _usage(recorded, key)
            if session.model is None and text_of(metadata.get("model")):
                session.model = metadata["model"]
            message = Message("assistant", tuple(parts), "gptme", None, metadata=metadata)
        elif role == "system":
            if isinstance(recorded, Mapping) and recorded:
                metadata["gptme_metadata"] = dict(recorded)
            answered = text_of(top.get("call_id"))
            tool = by_id.pop(answered, None) if answered else None
            if tool is None and answered is None and pending:
                answered, tool = pending.pop(0)
            if tool is not None and answered is not None:
                result = ToolResult(answered, content, is_error_output(content), tool,
                                    source="gptme")
                message = Message("tool", (result,), "gptme", None,
                                  metadata={**metadata, "gptme_role": "system"})
            else:
                message = Message("system", (TextPart(content),), "gptme", None,
                                  metadata=metadata)
        else:
            pending = []
            if top.get("hide") is True:
                metadata[ORIGIN] = AGENT_MADE
            message = Message("user", (TextPart(content),), "gptme", None, metadata=metadata)
        collector.add(session, message, key, line, usage=usage)
    times = [t for t in (parse_timestamp(top["timestamp"]) for _, top in messages
                         if isinstance(top.get("timestamp"), str)) if t is not None]
    if times:
        session.started_at, session.ended_at = min(times), max(times)
    _link(path, folder, session, messages)


def _messages(records: list[Record], collector: Collector
              ) -> list[tuple[int, Mapping[str, Any]]]:
    """The file's messages (a record that is not one is a problem)."""
    found = []
    for line, record in records:
        top = record_top(record, line, collector, "gptme")
        if top is None:
            continue
        if top.get("role") not in _ROLES or not isinstance(top.get("content"), str):
            collector.problem(line, "not a gptme message: a role of system, user or "
                                    "assistant and a text content are needed")
            continue
        found.append((line, top))
    return found


def _keys(sid: str, messages: list[tuple[int, Mapping[str, Any]]]) -> list[str]:
    """Each message's key: its time (``#n`` for a repeated one), else its line."""
    keys = []
    seen: dict[str, int] = {}
    for line, top in messages:
        stamp = text_of(top.get("timestamp"))
        key = f"{sid}:{stamp}" if stamp else f"{sid}:line{line}"
        seen[key] = seen.get(key, 0) + 1
        keys.append(key if seen[key] == 1 else f"{key}#{seen[key]}")
    return keys


def _usage(recorded: Mapping[str, Any], key: str) -> TokenUsage | None:
    """A reply's tokens: ``metadata.usage``, or the counts beside the model (older logs)."""
    counts = recorded.get("usage")
    if not isinstance(counts, Mapping):
        counts = recorded
    values = [counts.get(k) for k in _TOKEN_KEYS]
    if not any(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None

    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return TokenUsage(input_tokens=count(values[0]), output_tokens=count(values[1]),
                      cache_read_tokens=count(values[2]), cache_creation_tokens=count(values[3]),
                      model=text_of(recorded.get("model")), response_id=key)


def _config(folder: Path, collector: Collector) -> Mapping[str, Any]:
    """The ``[chat]`` table of the conversation's ``config.toml`` (empty without one)."""
    place = folder / "config.toml"
    try:
        text = place.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        collector.problem(None, f"config.toml beside it not read: {exc}")
        return {}
    try:
        chat = tomllib.loads(text).get("chat")
    except tomllib.TOMLDecodeError as exc:
        collector.problem(None, f"config.toml beside it is not TOML: {exc}")
        return {}
    return chat if isinstance(chat, Mapping) else {}


def _linked(folder: Path) -> str | None:
    """The target of the conversation's ``workspace`` link (read, not followed)."""
    try:
        return os.readlink(folder / "workspace")
    except OSError:
        return None


# -- subagents -------------------------------------------------------------------------------

_SPAWN = r"""subagent\(\s*(?:agent_id\s*=\s*)?(["']){}\1"""


def _link(path: Path, folder: Path, session: Any,
          messages: list[tuple[int, Mapping[str, Any]]]) -> None:
    """A subagent's conversation: its parent (the sibling conversation that spawned it)."""
    found = _SUBAGENT_FOLDER.fullmatch(folder.name)
    if path.name != "conversation.jsonl" or found is None or session.started_at is None:
        return
    agent_id = found.group(1)
    spawn = re.compile(_SPAWN.format(re.escape(agent_id)))
    best: tuple[datetime, str, str] | None = None
    try:
        siblings = sorted(p for p in folder.parent.iterdir() if p != folder)
    except OSError:
        return
    for sibling in siblings:
        for at, parent, call_id in _spawns(sibling, agent_id, spawn):
            if at <= session.started_at and (best is None or at > best[0]):
                best = (at, parent, call_id)
    if best is None:
        return
    _, parent, call_id = best
    session.parent = SessionLink(parent, "subagent", call_id)
    session.metadata.update({"parent_session": parent, "parent_call_id": call_id,
                             "agent_id": agent_id})


def _spawns(folder: Path, agent_id: str, spawn: re.Pattern[str]
            ) -> Iterable[tuple[datetime, str, str]]:
    """The calls of ``folder``'s conversation that start subagent ``agent_id``: (time of the
    reply, the conversation's session id, the call's id)."""
    try:
        data = (folder / "conversation.jsonl").read_bytes()
    except OSError:
        return
    if agent_id.encode() not in data or b"subagent" not in data:
        return
    sid = f"gptme:{folder.name}"
    messages: list[tuple[int, Mapping[str, Any]]] = []
    for number, line in enumerate(data.splitlines(), 1):
        try:
            top = loads_json(line)
        except ValueError:
            continue
        if isinstance(top, dict) and top.get("role") in _ROLES \
                and isinstance(top.get("content"), str):
            messages.append((number, top))
    for (_, top), key in zip(messages, _keys(sid, messages), strict=True):
        at = parse_timestamp(top["timestamp"]) if isinstance(top.get("timestamp"), str) \
            else None
        if top["role"] != "assistant" or at is None or agent_id not in top["content"]:
            continue
        for index, found in enumerate(calls_in(top["content"])):
            if _spawns_agent(found, agent_id, spawn):
                yield at, sid, found.call_id or f"{key}#{index + 1}"


def _spawns_agent(found: FoundCall, agent_id: str, spawn: re.Pattern[str]) -> bool:
    arguments = found.arguments
    if not isinstance(arguments, dict):
        return False
    if found.tool == "ipython":
        return bool(spawn.search(str(arguments.get("code", ""))))
    return found.tool in ("subagent", "subagent.subagent") \
        and arguments.get("agent_id") == agent_id
