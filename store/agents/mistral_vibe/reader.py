"""Reader of Mistral Vibe's sessions (``~/.vibe/logs/session``; domain).

Learnt from Vibe's own writer, ``mistralai/mistral-vibe`` at ac8f1a09 (v2.18.4):
``vibe/core/session/session_logger.py`` (``save_interaction``: the non-system messages
appended to ``messages.jsonl`` as ``model_dump(exclude_none=True)``, then ``meta.json``
rewritten), ``session_loader.py`` (``METADATA_FILENAME = "meta.json"``,
``MESSAGES_FILENAME``), ``session_migration.py`` (the 1.x single-file documents),
``vibe/core/types.py`` (``LLMMessage``, ``ToolCall``, ``AgentStats``, ``SessionMetadata``),
``vibe/core/paths/_vibe_home.py`` (``$VIBE_HOME`` / ``~/.vibe``, ``logs/session``),
``vibe/core/agent_loop.py`` (tool results, ``<tool_error>`` text, ``_reset_session`` on
compaction and rewind, ``fork``), ``vibe/core/compaction.py``
(``render_compaction_context``), ``vibe/core/utils/tags.py``, ``vibe/core/config/_settings.py``
(``active_model`` and ``models``) and ``vibe/core/tools/builtins/*.py`` (tool names: the class
name in snake case; ``task.py`` saves a subagent below ``<session>/agents``); the 1.x writer,
``vibe/core/interaction_logger.py`` at fa15fc9 (v1.0.0).

* **2.x** ``<prefix>_<time>_<id>/messages.jsonl``: ``LLMMessage`` lines ``{role, content,
  reasoning_content?, tool_calls?: [{id, index, type, function: {name, arguments}}],
  tool_call_id?, name?, message_id?, injected?, images?}``. A ``user`` line marked
  ``injected`` is the agent's (the compaction context, a middleware or hook message, a
  plan-file warning): kept as a user message of the agent's (``origin: agent``), never a
  prompt. A ``tool`` line is the result of its ``tool_call_id``; Vibe writes no error flag,
  its failures are the text ``<tool_error>...</tool_error>`` and skips/interruptions
  ``<user_cancellation>...</user_cancellation>``: both error results. Keys are the lines'
  ``message_id`` (results have none: ``<session>:<line>``).
* ``meta.json`` beside it gives the session: ``session_id``, ``parent_session_id``,
  ``start_time`` / ``end_time``, ``environment.working_directory``, ``title``, ``git_branch``,
  ``git_commit``, ``agent_profile``, ``stats`` (``AgentStats``: the running totals
  ``session_prompt_tokens``, ``session_completion_tokens``; ``session_cost``, Vibe's own
  estimate), ``config`` (``active_model``: the alias of one of ``models``, whose ``name`` is
  the model asked and ``provider`` its provider) and ``system_prompt`` (kept as the
  session's first message, a system message). Messages carry no time: the session's start
  and end are the metadata's.
* Usage: Vibe records only the session's running totals, stored as the session's totals
  (``SESSION_TOTALS``) on its first reply. A compacted session (``_reset_session``) keeps
  the loop's totals, which include its parent's: when the parent's ``meta.json`` is found
  beside it, the parent's totals are taken off, so each session counts its own.
* Lineage (``parent_session_id``): a session below its parent's ``agents/`` folder is a
  ``task`` subagent (linked to the parent's ``task`` call whose ``task`` text its first
  prompt holds, read from the parent's ``messages.jsonl``); one whose first message is the
  compaction context (``<previous_user_messages>``, ``<compaction_summary>``) continues its
  parent (``continuation``); any other (``fork``, a rewind) is a ``fork``. A subagent's
  recorded title is the start of its first prompt, which begins with the parent's
  scratchpad folder: its title is then the task's first line.
* **1.x** ``session_<time>_<id>.json``: ``{"metadata": {session_id, start_time, end_time
  (local times without a zone: read as UTC), environment, stats, agent_config, ...},
  "messages": [...]}`` with the system message first; keys ``<session>:<index>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from store.agents.mistral_vibe import MESSAGES_FILE, METADATA_FILE, VIBE_ROLES
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import StoreError
from store.core.lineage import SessionLink
from store.core.model import Message, Part, TextPart, ThinkingPart, ToolResult, make_tool_call
from store.importers.base import Collector, ParsedSession, path_session_id
from store.importers.lines import moment, record_top, text_of
from store.importers.titles import AGENT_MADE, ORIGIN, prompt_title
from store.usage.tokens import SESSION_TOTALS, TokenUsage

__all__ = ["read_file", "read_vibe_document", "read_vibe_folder"]

_SOURCE = "mistral-vibe"
#: ``utils/tags.py``: a result that is a failure or a cancelled / skipped call.
_ERROR_TAGS = ("<tool_error>", "<user_cancellation>")
#: ``compaction.py``: the blocks of the compaction context a continued session starts with.
_COMPACTION_MARKS = ("<previous_user_messages>", "<compaction_summary>")
#: ``task.py``: what a subagent's first prompt starts with when its parent has a scratchpad.
_SCRATCHPAD = re.compile(r"\AScratchpad directory: [^\n]*\nYou can read and write files here "
                         r"without permission prompts\.\n\n")
#: ``meta.json`` fields kept in the session's metadata, as recorded.
_KEPT = ("git_branch", "git_commit", "username", "title_source", "total_messages",
         "agent_profile")
_STATS_KEPT = ("steps", "session_prompt_tokens", "session_completion_tokens", "session_cost",
               "tool_calls_agreed", "tool_calls_rejected", "tool_calls_failed",
               "tool_calls_succeeded")


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a 2.x ``messages.jsonl`` or a 1.x session document."""
    if file.has_document:
        read_vibe_document(file.path, file.document, collector)
    else:
        read_vibe_folder(file, collector)


def read_vibe_folder(file: FileInput, collector: Collector) -> None:
    """A 2.x session: ``messages.jsonl`` and the ``meta.json`` beside it."""
    path = file.path
    meta = _read_meta(path.parent / METADATA_FILE, collector)
    sid = text_of(meta.get("session_id")) or path_session_id(path)
    session = _session(sid, meta, meta.get("config"), collector)
    system = meta.get("system_prompt")
    if isinstance(system, Mapping) and text_of(system.get("content")):
        collector.add(session, Message("system", (TextPart(str(system["content"])),), _SOURCE,
                                       metadata={"vibe_system_prompt": True}), f"{sid}:system")
    first_user: Mapping[str, Any] | None = None
    for line, record in file.records:
        top = record_top(record, line, collector, "Mistral Vibe")
        if top is None:
            continue
        if first_user is None and top.get("role") == "user":
            first_user = top
        message = _message(top, line, collector)
        if message is not None:
            collector.add(session, message, message.message_id or f"{sid}:{line}", line)
    _finish(session, meta, collector)
    _link(path, session, meta, first_user)


def read_vibe_document(path: Path, document: Any, collector: Collector) -> None:
    """A 1.x session file: ``{"metadata": {...}, "messages": [...]}``."""
    meta = document.get("metadata") if isinstance(document, Mapping) else None
    items = document.get("messages") if isinstance(document, Mapping) else None
    if not isinstance(meta, Mapping) or not isinstance(items, list):
        collector.problem(None, "not a Mistral Vibe session document: expected an object with "
                                "a `metadata` object and a `messages` list")
        return
    sid = text_of(meta.get("session_id")) or path_session_id(path)
    session = _session(sid, meta, meta.get("agent_config") or meta.get("config"), collector)
    session.tags = (*session.tags, "vibe-1")
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            collector.problem(None, f"not a message: a JSON {type(item).__name__}", index)
            continue
        message = _message(item, None, collector, index)
        if message is not None:
            collector.add(session, message, message.message_id or f"{sid}:{index}",
                          item=index)
    _finish(session, meta, collector)
    _totals(session, meta.get("stats"))


def _read_meta(path: Path, collector: Collector) -> Mapping[str, Any]:
    """``meta.json`` (``{}`` when it is not there yet; a broken one is a problem, the messages
    are read all the same)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        collector.problem(None, f"{path.name}: {exc.strerror or exc}")
        return {}
    try:
        meta = loads_json(text)
    except ValueError as exc:
        collector.problem(None, f"{path.name}: not JSON ({exc})")
        return {}
    if not isinstance(meta, Mapping):
        collector.problem(None, f"{path.name}: not a JSON object")
        return {}
    return meta


def _session(sid: str, meta: Mapping[str, Any], config: Any,
             collector: Collector) -> ParsedSession:
    environment = meta.get("environment")
    cwd = text_of(environment.get("working_directory")) \
        if isinstance(environment, Mapping) else None
    model, provider, alias = _model(config)
    metadata: dict[str, Any] = {k: meta[k] for k in _KEPT if meta.get(k) is not None}
    stats = meta.get("stats")
    if isinstance(stats, Mapping):
        metadata["vibe_stats"] = {k: stats[k] for k in _STATS_KEPT if k in stats}
    if alias:
        metadata["model_alias"] = alias
    session = collector.session(sid, cwd=cwd, model=model, provider=provider,
                                metadata=metadata)
    session.title = text_of(meta.get("title"))
    return session


def _model(config: Any) -> tuple[str | None, str | None, str | None]:
    """The active model's ``name`` and ``provider`` (``active_model`` is an alias of one of
    ``models``), and the alias; the alias itself when no entry names it."""
    if not isinstance(config, Mapping):
        return None, None, None
    alias = text_of(config.get("active_model"))
    models = config.get("models")
    for entry in models if isinstance(models, list) else ():
        if isinstance(entry, Mapping) and alias and entry.get("alias") == alias:
            return (text_of(entry.get("name")) or alias, text_of(entry.get("provider")),
                    alias)
    return alias, None, alias


def _message(top: Mapping[str, Any], line: int | None, collector: Collector,
             item: int | None = None) -> Message | None:
    """One ``LLMMessage`` (``None``: a problem, reported)."""
    role = top.get("role")
    if role not in VIBE_ROLES:
        collector.problem(line, f"not a Mistral Vibe message: role {role!r}", item)
        return None
    content = top.get("content")
    text = content if isinstance(content, str) else "" if content is None else str(content)
    metadata: dict[str, Any] = {}
    message_id = text_of(top.get("message_id"))
    if role == "tool":
        error = text.lstrip().startswith(_ERROR_TAGS)
        part = ToolResult(text_of(top.get("tool_call_id")), text, error,
                          text_of(top.get("name")), {}, _SOURCE)
        return Message("tool", (part,), _SOURCE, message_id)
    parts: list[Part] = []
    reasoning = text_of(top.get("reasoning_content"))
    if reasoning:
        parts.append(ThinkingPart(reasoning, text_of(top.get("reasoning_signature"))))
    if text:
        parts.append(TextPart(text))
    if role == "assistant":
        calls = top.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            try:
                parts.append(_call(call))
            except StoreError as exc:
                collector.problem(line, str(exc), item)
    if top.get("injected") is True:
        metadata.update({ORIGIN: AGENT_MADE, "injected": True})
    images = top.get("images")
    if isinstance(images, list) and images:
        metadata["images"] = images
    if not parts:
        parts.append(TextPart(""))
    return Message(role, tuple(parts), _SOURCE, message_id, metadata=metadata)


def _call(call: Any) -> Part:
    if not isinstance(call, Mapping):
        raise StoreError(f"a tool call must be an object, got {str(call)[:80]!r}")
    function = call.get("function")
    if not isinstance(function, Mapping):
        raise StoreError("a tool call without its function object")
    arguments = function.get("arguments")
    return make_tool_call(text_of(call.get("id")), str(function.get("name") or ""),
                          arguments if arguments is not None else {}, source=_SOURCE)


def _finish(session: ParsedSession, meta: Mapping[str, Any], collector: Collector) -> None:
    """Times, title and the session's totals."""
    start, end = moment(meta.get("start_time")), moment(meta.get("end_time"))
    session.started_at = start or end
    session.ended_at = end or start
    title = session.title
    if title is not None and _agent_made(title, session.items):
        # (Vibe titles a session by its first user message, even one it made itself: a
        # compacted session's own compaction context.)
        session.metadata["vibe_title"] = title
        session.title = None
    if session.title is None:
        session.title = prompt_title(session.items)


def _agent_made(title: str, items: list[Message]) -> bool:
    """True when ``title`` is the start of a user message the agent made (``injected``)."""
    start = title.removesuffix("…")
    return bool(start) and any(m.role == "user" and m.metadata.get(ORIGIN) == AGENT_MADE
                               and (m.text or "").startswith(start) for m in items)


def _totals(session: ParsedSession, stats: Any, less: Any = None) -> None:
    """``stats``' running totals (less ``less``'s, a parent's carried over) as the session's
    usage, on its first reply."""
    if not isinstance(stats, Mapping):
        return
    keys = ("session_prompt_tokens", "session_completion_tokens")
    counts = [_count(stats.get(k)) for k in keys]
    if isinstance(less, Mapping):
        carried = [_count(less.get(k)) for k in keys]
        if all(c >= p for c, p in zip(counts, carried, strict=True)):
            counts = [c - p for c, p in zip(counts, carried, strict=True)]
            session.metadata["vibe_parent_tokens"] = dict(zip(keys, carried, strict=True))
    first = next((k for k, m in zip(session.keys, session.items, strict=True)
                  if m.role == "assistant"), None)
    if first is None or not any(counts):
        return
    session.usage[first] = TokenUsage(counts[0], counts[1], 0, 0, 0, session.model, None,
                                      SESSION_TOTALS)


def _count(value: Any) -> int:
    return max(int(value), 0) if isinstance(value, int | float) and \
        not isinstance(value, bool) else 0


def _link(path: Path, session: ParsedSession, meta: Mapping[str, Any],
          first_user: Mapping[str, Any] | None) -> None:
    """The session's parent (see the module docstring) and its usage."""
    parent = text_of(meta.get("parent_session_id"))
    stats = meta.get("stats")
    if parent is None:
        _totals(session, stats)
        return
    folder = path.parent
    first = text_of(first_user.get("content")) if first_user is not None else None
    if folder.parent.name == "agents":  # <parent's folder>/agents/<agent>_<time>_<id>/
        call = _task_call(folder.parent.parent / MESSAGES_FILE, first)
        _set_parent(session, parent, "subagent", call)
        session.tags = (*session.tags, "subagent")
        task = _SCRATCHPAD.sub("", first or "", count=1)
        if session.title is not None and task != first and (first or "").startswith(
                session.title.removesuffix("…")):  # (the title is a cut of the preamble)
            session.metadata["vibe_title"] = session.title
            session.title = prompt_title([Message("user", (TextPart(task),))])
        _totals(session, stats)
        return
    compacted = first_user is not None and first_user.get("injected") is True and \
        first is not None and all(mark in first for mark in _COMPACTION_MARKS)
    if not compacted:
        _set_parent(session, parent, "fork", None)
        _totals(session, stats)
        return
    _set_parent(session, parent, "continuation", None)
    parent_meta = _parent_meta(folder.parent, parent)
    _totals(session, stats, parent_meta.get("stats"))


def _set_parent(session: ParsedSession, parent: str, kind: str, call: str | None) -> None:
    session.metadata["parent_session"] = parent
    session.metadata["lineage"] = kind
    if call:
        session.metadata["parent_call_id"] = call
    session.parent = SessionLink(parent, kind, call)


def _parent_meta(save_dir: Path, parent: str) -> Mapping[str, Any]:
    """The parent's ``meta.json`` in the same folder (``<prefix>_<time>_<its first 8>``;
    read-only; ``{}`` when it is not there)."""
    for folder in sorted(save_dir.glob(f"*_{parent[:8]}")):
        try:
            meta = loads_json((folder / METADATA_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(meta, Mapping) and meta.get("session_id") == parent:
            return meta
    return {}


def _task_call(parent_messages: Path, prompt: str | None) -> str | None:
    """The id of the parent's ``task`` call whose ``task`` text the subagent's first prompt
    holds (``task.py`` prefixes the parent's scratchpad folder to it; read-only)."""
    if prompt is None:
        return None
    try:
        text = parent_messages.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if '"task"' not in line:
            continue
        try:
            record = loads_json(line)
        except ValueError:
            continue
        calls = record.get("tool_calls") if isinstance(record, dict) else None
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or function.get("name") != "task":
                continue
            try:
                arguments = loads_json(function.get("arguments") or "{}")
            except ValueError:
                continue
            task = arguments.get("task") if isinstance(arguments, dict) else None
            if isinstance(task, str) and task and task in prompt:
                return text_of(call.get("id"))
    return None
