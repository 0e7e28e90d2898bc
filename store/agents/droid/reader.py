"""Reader of Factory Droid sessions (``~/.factory/sessions/[<slug>/]<id>.jsonl``; domain).

Droid's source is closed. What its files hold was learnt from Factory's documentation
(docs.factory.ai: ``droid`` CLI reference, custom droids' tool categories ``read-only``
Read/LS/Grep/Glob, ``edit`` Create/Edit/ApplyPatch, ``execute`` Execute, ``web``
WebSearch/FetchUrl) and from open readers of these files, read to learn, never copied:
ccusage ``rust/crates/ccusage/src/adapter/droid/parser.rs`` @5816e640 (the
``.settings.json`` sidecar: ``model``, ``providerLock``, ``providerLockTimestamp``,
``tokenUsage`` with ``inputTokens``, ``outputTokens``, ``cacheCreationTokens``,
``cacheReadTokens``, ``thinkingTokens``), cass ``src/connectors/factory.rs`` @1be41cdb
(``session_start`` ``{id, title, owner, cwd}``, ``message`` lines, the project slug folder)
and specstory's ``droidcli`` parser (``sessionTitle``, ``todo_state``, ``compaction_state``
with its ``summary``, ``is_error`` on results, ``riskLevel`` on ``Execute`` calls).

* ``session_start`` names the session (``id``; else the file's stem), its title (``title``,
  else ``sessionTitle``), cwd and owner; the header itself is skipped (no message).
* ``message`` lines ``{id, timestamp, parentId?, message: {role, content: [...]}}`` hold
  Anthropic blocks: text, thinking, ``tool_use`` (a call), ``tool_result`` (linked to its
  call by ``tool_use_id``; ``is_error`` marks an error). A call with no result block has no
  result: none is invented. A user line whose text block is only a ``<system-reminder>``
  (context Droid adds) is kept as a system message, not as a prompt the user typed.
* ``compaction_state`` keeps its summary as a system message; ``todo_state`` is skipped
  (the ``TodoWrite`` call that set it is kept).
* The sidecar ``<id>.settings.json``: ``model`` is the session's model (as recorded: a
  ``custom:`` BYOK name stays as it is); ``tokenUsage`` (the session's running totals) and
  the provider, reasoning effort and autonomy settings are kept in the session's metadata
  as recorded. Droid records no per-response usage, cost or credits: the running totals are
  stored as the session's totals (``SESSION_TOTALS``) on its first reply, replaced by each
  later read, so ``usage`` counts them once.
* A Task subagent runs as a session of its own whose title starts ``# Task Tool
  Invocation`` (with ``Subagent type: <name>``): tagged ``subagent``; its parent session and
  spawning call are not recorded in it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from store.agents.droid import DROID_KINDS, SETTINGS_SUFFIX
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import StoreError
from store.core.model import Message, TextPart
from store.importers.base import Collector, ParsedSession, Record
from store.importers.lines import record_top, span, text_of
from store.importers.titles import prompt_title
from store.normalize.messages import normalize_message
from store.usage.tokens import SESSION_TOTALS, TokenUsage

__all__ = ["read_droid", "read_file"]

_REMINDER = re.compile(r"\A\s*<system-reminder>.*</system-reminder>\s*\Z", re.DOTALL)
_SUBAGENT_TITLE = "# Task Tool Invocation"
_SUBAGENT_TYPE = re.compile(r"Subagent type:\s*([A-Za-z0-9_.-]+)")
#: The sidecar's fields kept in the session's metadata, as recorded.
_SETTINGS_KEPT = ("model", "reasoningEffort", "autonomyMode", "autonomyLevel", "providerLock",
                  "providerLockTimestamp", "apiProviderLock", "tokenUsage",
                  "assistantActiveTimeMs")


def read_droid(path: Path, records: list[Record], collector: Collector) -> None:
    """A Droid session file (see the module docstring)."""
    stem = path.name.removesuffix(".jsonl")
    session: ParsedSession | None = None
    stamps: list[Any] = []
    header: Mapping[str, Any] = {}
    for line, record in records:
        top = record_top(record, line, collector, "Droid")
        if top is None:
            continue
        kind = top.get("type")
        if kind not in DROID_KINDS:
            collector.problem(line, f"not a Droid session record: type {kind!r}, keys "
                                    f"{sorted(str(k) for k in record)}")
            continue
        if session is None:
            header = top if kind == "session_start" else {}
            session = _session(path, stem, header, collector)
        stamps.append(top.get("timestamp"))
        if kind == "session_start":
            stamps.append(top.get("created_at"))
            collector.skip("droid: session_start (read into the session)")
        elif kind == "todo_state":
            collector.skip("droid: todo_state (the TodoWrite calls keep the list)")
        elif kind == "compaction_state":
            _compaction(session, top, line, collector)
        else:
            _message(session, top, line, collector)
    if session is None:
        return
    session.started_at, session.ended_at = span(stamps)
    if session.title is None:
        session.title = prompt_title(session.items)
    _totals(session, (session.metadata.get("droid_settings") or {}).get("tokenUsage"))


def _session(path: Path, stem: str, header: Mapping[str, Any],
             collector: Collector) -> ParsedSession:
    sid = text_of(header.get("id")) or stem
    title = text_of(header.get("title")) or text_of(header.get("session_title"))
    metadata: dict[str, Any] = {}
    for key in ("owner", "version"):
        if header.get(key) is not None:
            metadata[key] = header[key]
    if path.parent.name.startswith("-"):  # the project's folder: its path, "/" as "-"
        metadata["project_slug"] = path.parent.name
    settings = _read_settings(path, stem, collector)
    if settings:
        metadata["droid_settings"] = {k: settings[k] for k in _SETTINGS_KEPT if k in settings}
    tags: tuple[str, ...] = ("droid",)
    if title is not None and title.startswith(_SUBAGENT_TITLE):
        tags = ("droid", "subagent")
        found = _SUBAGENT_TYPE.search(title)
        metadata["subagent_title"] = title
        if found:
            metadata["subagent_type"] = found.group(1)
        title = f"subagent {found.group(1)}" if found else "subagent"
    session = collector.session(sid, provider=text_of(settings.get("providerLock")),
                                cwd=text_of(header.get("cwd")), tags=tags,
                                metadata=metadata)
    session.title = title
    session.model = text_of(settings.get("model"))
    return session


def _read_settings(path: Path, stem: str, collector: Collector) -> Mapping[str, Any]:
    """The sidecar ``<id>.settings.json`` (``{}`` when there is none; a broken one is a
    problem, the session is read all the same)."""
    sidecar = path.with_name(stem + SETTINGS_SUFFIX)
    try:
        text = sidecar.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        collector.problem(None, f"{sidecar.name}: {exc.strerror or exc}")
        return {}
    try:
        settings = loads_json(text)
    except ValueError as exc:
        collector.problem(None, f"{sidecar.name}: not JSON ({exc})")
        return {}
    if not isinstance(settings, Mapping):
        collector.problem(None, f"{sidecar.name}: not a JSON object")
        return {}
    return settings


def _message(session: ParsedSession, top: Mapping[str, Any], line: int,
             collector: Collector) -> None:
    inner = top.get("message")
    key = text_of(top.get("id")) or f"line{line}"
    if not isinstance(inner, Mapping):
        collector.problem(line, "a Droid message line without a message object")
        return
    role = inner.get("role")
    try:
        message = normalize_message({"role": role, "content": inner.get("content") or []})
    except (StoreError, TypeError, ValueError) as exc:
        collector.problem(line, str(exc) or type(exc).__name__)
        return
    model = text_of(inner.get("model"))
    metadata = {k: v for k, v in (("timestamp", top.get("timestamp")),
                                  ("parent_id", top.get("parent_id")),
                                  ("model", model)) if v is not None}
    if role == "assistant" and session.model is None and model is not None:
        session.model = model
    parts = message.parts
    if message.role == "user":  # context Droid added to a prompt, not typed by the user
        reminders = tuple(p for p in parts if isinstance(p, TextPart) and _REMINDER.match(p.text))
        if reminders:
            parts = tuple(p for p in parts if p not in reminders)
            collector.add(session, Message("system", reminders, "droid", key,
                                           metadata={**metadata, "droid_reminder": True}),
                          f"{key}:reminder" if parts else key, line)
            if not parts:
                return
    collector.add(session, Message(message.role, parts, "droid", key, message.extras,
                                   metadata), key, line)


def _compaction(session: ParsedSession, top: Mapping[str, Any], line: int,
                collector: Collector) -> None:
    summary = top.get("summary")
    body = summary.get("body") if isinstance(summary, Mapping) else summary
    if not text_of(body):
        collector.skip("droid: compaction_state without a summary")
        return
    key = text_of(top.get("id")) or f"compaction:line{line}"
    metadata = {"timestamp": top.get("timestamp"), "droid_compaction": True}
    collector.add(session, Message("system", (TextPart(str(body)),), "droid", key,
                                   metadata={k: v for k, v in metadata.items()
                                             if v is not None}), key, line)


def _totals(session: ParsedSession, usage: Any) -> None:
    """The sidecar's running totals as the session's usage, on its first reply."""
    if not isinstance(usage, Mapping):
        return
    counts = [usage.get(k) for k in ("inputTokens", "outputTokens", "cacheCreationTokens",
                                     "cacheReadTokens", "thinkingTokens")]
    numbers = [c if isinstance(c, int) and not isinstance(c, bool) and c >= 0 else 0
               for c in counts]
    first = next((k for k, m in zip(session.keys, session.items, strict=False)
                  if m.role == "assistant"), None)
    if first is None or not any(numbers):
        return
    inputs, outputs, creation, read, thinking = numbers
    session.usage[first] = TokenUsage(inputs, outputs, creation, read, thinking,
                                      model=session.model, response_id=SESSION_TOTALS)


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a Droid session file."""
    read_droid(file.path, file.records, collector)
