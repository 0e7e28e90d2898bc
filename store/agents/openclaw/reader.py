"""Reader of OpenClaw's session transcripts (pi's JSON lines) and their index (domain).

Learnt from OpenClaw's own source, ``openclaw/openclaw``: ``src/config/paths.ts``
(``resolveStateDir``, read at 009f1606), ``src/config/sessions/paths.ts``
(``resolveAgentSessionsDir``, ``resolveSessionTranscriptPathInDir``: ``<session id>.jsonl``,
``<session id>-topic-<thread>.jsonl``; ``sessions.json``; read at 00358f66),
``src/config/sessions/types.ts`` (``SessionEntry``: ``sessionId``, ``label``, ``spawnedBy``,
``model``, ``channel``) and ``docs/pi.md`` (the transcripts are pi's ``SessionManager``
files), and the ``sessions_spawn`` tool (its result names the child's ``childSessionKey``).

* The transcript is read as pi's (:func:`store.agents.pi.reader.read_pi`: header, messages,
  calls, results, usage, times, cwd, model).
* The index ``sessions.json`` beside it (session key -> entry) gives the title (``label``),
  the model when no reply names one, the channel, and the parent of a subagent
  (``spawnedBy``: the parent's session key, whose entry names its ``sessionId``), linked to
  the parent's ``sessions_spawn`` call whose result names the child's session key (read
  from the parent's transcript beside it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from store.agents.pi.reader import read_pi
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.lineage import SessionLink
from store.importers.base import Collector, ParsedSession
from store.importers.lines import text_of

__all__ = ["read_file"]

_SPAWN = "sessions_spawn"


def read_file(file: FileInput, collector: Collector) -> None:
    """An OpenClaw transcript, with what its index says of it."""
    read_pi(file.path, file.records, collector)
    index = _index(file.path.parent / "sessions.json")
    by_id = {text_of(e.get("sessionId")): (k, e) for k, e in index.items()}
    for session in collector.sessions.values():
        found = by_id.get(session.session_id)
        if found is None:
            continue
        key, entry = found
        session.metadata["session_key"] = key
        for field in ("channel", "chatType", "label"):
            if text_of(entry.get(field)):
                session.metadata[field] = entry[field]
        if text_of(entry.get("label")):
            session.title = entry["label"]
        if session.model is None and text_of(entry.get("model")):
            session.model = entry["model"]
            session.provider = text_of(entry.get("modelProvider"))
        _link(file.path.parent, key, entry, index, session)


def _index(path: Path) -> dict[str, dict[str, Any]]:
    """The sessions index (``{}`` when it is missing or unreadable: the transcript alone)."""
    try:
        value = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(value, Mapping):
        return {}
    return {str(k): dict(v) for k, v in value.items() if isinstance(v, Mapping)}


def _link(folder: Path, key: str, entry: Mapping[str, Any],
          index: Mapping[str, Mapping[str, Any]], session: ParsedSession) -> None:
    spawner = text_of(entry.get("spawnedBy"))
    parent_entry = index.get(spawner) if spawner else None
    parent = text_of(parent_entry.get("sessionId")) if parent_entry else None
    if spawner is None:
        return
    session.metadata["spawned_by"] = spawner
    if parent is None:
        return
    call = _spawn_call(folder / f"{parent}.jsonl", key)
    session.metadata["parent_session"] = parent
    if call:
        session.metadata["parent_call_id"] = call
    session.tags = (*session.tags, "subagent")
    session.parent = SessionLink(parent, "subagent", call)


def _spawn_call(parent_file: Path, child_key: str) -> str | None:
    """The id of the parent's ``sessions_spawn`` call whose result names ``child_key``."""
    try:
        text = parent_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if child_key not in line or _SPAWN not in line:
            continue
        try:
            entry = loads_json(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if (isinstance(message, dict) and message.get("role") == "toolResult"
                and message.get("toolName") == _SPAWN):
            return text_of(message.get("toolCallId"))
    return None
