"""Reader of Qwen Code chats (``~/.qwen/projects/<cwd>/chats/<session id>.jsonl``; domain).

Learnt from Qwen Code's own writer, ``packages/core/src/services/chatRecordingService.ts`` of
``QwenLM/qwen-code`` (read at 015346f1 and the early JSON-lines version at 1ef51670) and
``packages/core/src/config/storage.ts`` (at 96a2647e and 013e660f): the file is append-only,
one ``ChatRecord`` a line, ``{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd,
version, gitBranch?, message?, usageMetadata?, model?, toolCallResult?, systemPayload?,
agentId?, agentName?, isSidechain?}``. ``message`` is a Gemini API ``Content`` (``role``,
``parts``: text, ``thought`` text, ``functionCall``, ``functionResponse``): Qwen Code is a
Gemini CLI fork that kept the API shape but writes one record per message instead of Gemini
CLI's rewritten document.

* ``user`` records become user messages (a ``subtype`` such as ``notification``, ``cron`` or
  ``mid_turn_user_message`` is kept in the metadata; only a plain ``user`` record titles the
  session), ``assistant`` records assistant messages (thoughts, text, then the calls) with
  their ``model`` and token usage (``usageMetadata``:
  :func:`store.usage.tokens.qwen_code_usage`), ``tool_result`` records ``tool`` messages whose
  ``functionResponse`` parts are paired to the calls by id when stored. A result is an error
  when its ``toolCallResult.status`` is ``"error"`` (else when its response holds only an
  ``error``). A call without a ``tool_result`` has no result: none is invented.
* ``system`` records carry no message: ``custom_title`` gives the title (the last one wins),
  ``parent_session`` the session that spawned this one (metadata ``parent_session``),
  ``session_model`` the model when no assistant record names one; the others
  (``chat_compression``, ``ui_telemetry``, ``slash_command`` ...) are skipped with a reason.
* A record with an ``agentId`` was written by a subagent: it goes to the session
  ``<session id>:agent-<agentId>``, linked by ``parent_session`` (and ``agent_name``); its
  ``agent_session_ready`` system record, when present, names the parent's call
  (``parent_call_id``).
* Keys are the records' ``uuid``; each record's ``parentUuid`` is kept in the metadata.
  Records that a rewind left on an abandoned branch stay, in file order (the store keeps
  what the file holds; ``parent_uuid`` lets the tree be rebuilt).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from store.agents.qwen_code import QWEN_CODE_KINDS, is_qwen_code_record
from store.agents.registry import FileInput
from store.core.errors import StoreError
from store.core.lineage import SessionLink
from store.core.model import Message, Role, ToolResult
from store.importers.base import Collector, ParsedSession, Record, path_session_id
from store.importers.lines import record_top, span, text_of
from store.importers.titles import prompt_title
from store.normalize.messages import normalize_message
from store.usage.tokens import qwen_code_usage

__all__ = ["QWEN_CODE_KINDS", "is_qwen_code_record", "read_file", "read_qwen_code"]





def read_qwen_code(records: list[Record], collector: Collector) -> None:
    """Qwen Code chat JSONL (see the module docstring)."""
    state = _State(collector)
    for line, record in records:
        top = record_top(record, line, collector, "Qwen Code")
        if top is None:
            continue
        kind = top.get("type")
        if kind not in QWEN_CODE_KINDS or not text_of(top.get("uuid")):
            collector.problem(line, "not a Qwen Code chat record: "
                                    f"type {kind!r}, keys {sorted(str(k) for k in record)}")
            continue
        session = state.session_of(top)
        state.stamps.setdefault(session.session_id, []).append(top.get("timestamp"))
        if kind == "system":
            state.system(session, top)
            continue
        try:
            message = _message(top)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(line, str(exc) or type(exc).__name__)
            continue
        if message is None:
            collector.skip(f"qwen-code: {kind} record without a message")
            continue
        if kind == "assistant" and session.model is None:
            session.model = text_of(top.get("model"))
        usage = (qwen_code_usage(top.get("usage_metadata"), model=top.get("model"),
                                 response_id=top.get("uuid"))
                 if kind == "assistant" else None)
        collector.add(session, message, str(top["uuid"]), line, usage=usage)
    state.finish()


class _State:
    """The sessions of one file: the main one and its subagents'."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.titles: dict[str, str] = {}
        self.models: dict[str, str] = {}
        self.stamps: dict[str, list[Any]] = {}

    def session_of(self, top: Mapping[str, Any]) -> ParsedSession:
        sid = text_of(top.get("session_id")) or path_session_id(self.collector.source.path)
        agent = text_of(top.get("agent_id"))
        fields: dict[str, Any] = {"provider": None, "cwd": text_of(top.get("cwd"))}
        metadata = {k: top[k] for k in ("version", "git_branch") if text_of(top.get(k))}
        if agent is None:
            return self.collector.session(sid, **fields, metadata=metadata)
        metadata.update(parent_session=sid, agent_id=agent)
        if text_of(top.get("agent_name")):
            metadata["agent_name"] = top["agent_name"]
        return self.collector.session(f"{sid}:agent-{agent}", **fields,
                                      tags=("qwen-code", "subagent"), metadata=metadata)

    def system(self, session: ParsedSession, top: Mapping[str, Any]) -> None:
        subtype = top.get("subtype")
        payload = top.get("system_payload")
        payload = payload if isinstance(payload, Mapping) else {}
        if subtype == "custom_title" and text_of(payload.get("customTitle")):
            self.titles[session.session_id] = payload["customTitle"]
        elif subtype == "parent_session" and text_of(payload.get("parentSessionId")):
            session.metadata.setdefault("parent_session", payload["parentSessionId"])
        elif subtype == "session_model" and text_of(payload.get("modelId")):
            self.models[session.session_id] = payload["modelId"]
        elif (subtype == "agent_session_ready" and "subagent" in session.tags
              and text_of(payload.get("callId"))):
            session.metadata.setdefault("parent_call_id", payload["callId"])
        self.collector.skip(f"qwen-code: system {subtype or 'record'}")

    def finish(self) -> None:
        """Titles (the custom title, else the first plain user prompt; a subagent's without
        one: its parent's, marked) and fallback models."""
        sessions = self.collector.sessions
        for session in sessions.values():
            session.started_at, session.ended_at = span(self.stamps.get(session.session_id, ()))
            parent = session.metadata.get("parent_session")
            if isinstance(parent, str) and parent and "subagent" in session.tags:
                session.parent = SessionLink(parent, "subagent",
                                             session.metadata.get("parent_call_id"))
            if session.model is None:
                session.model = self.models.get(session.session_id)
            session.title = self.titles.get(session.session_id) or prompt_title(
                m for m in session.items if "qwen_subtype" not in m.metadata)
        for session in sessions.values():
            parent = sessions.get(str(session.metadata.get("parent_session")))
            if "subagent" in session.tags and session.title is None and parent is not None:
                name = session.metadata.get("agent_name") or session.metadata["agent_id"]
                session.title = f"{parent.title or parent.session_id} (subagent {name})"


def _message(top: Mapping[str, Any]) -> Message | None:
    """A user, assistant or tool_result record's message, dated by its ``timestamp``."""
    content = top.get("message")
    if content is None:
        return None
    if not isinstance(content, Mapping):
        raise StoreError(f"message must be a Gemini Content object, got "
                         f"{type(content).__name__}")
    kind = top["type"]
    role = "model" if kind == "assistant" else "user"
    normalized = normalize_message({"role": role, "parts": content.get("parts") or []})
    parts = normalized.parts
    if kind == "tool_result":
        parts = tuple(_result(p, top.get("tool_call_result")) if isinstance(p, ToolResult)
                      else p for p in parts)
    metadata = {k: v for k, v in (("timestamp", top.get("timestamp")),
                                  ("parent_uuid", top.get("parent_uuid")),
                                  ("model", top.get("model") if kind == "assistant" else None),
                                  ("qwen_subtype", top.get("subtype")),
                                  ("forked_from", top.get("forked_from")))
                if v is not None}
    message_role: Role = ("assistant" if kind == "assistant"
                          else "tool" if kind == "tool_result" else "user")
    return Message(message_role, parts, "qwen_code", str(top["uuid"]), metadata=metadata)


def _result(result: ToolResult, outcome: Any) -> ToolResult:
    """A ``functionResponse`` marked as an error from its record's ``toolCallResult``."""
    extras: dict[str, Any] = dict(result.extras)
    if isinstance(outcome, Mapping) and outcome.get("callId") in (None, result.call_id):
        status = outcome.get("status")
        if isinstance(status, str):
            extras["status"] = status
        error = outcome.get("error")
        if isinstance(error, Mapping) and text_of(error.get("message")):
            extras["error"] = error["message"]
        failed = status == "error" or (status is None and error is not None)
    else:
        content = result.content
        failed = isinstance(content, Mapping) and set(content) == {"error"}
    return replace(result, is_error=failed or result.is_error, extras=extras,
                   source="qwen_code")


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a Qwen Code chat file."""
    read_qwen_code(file.records, collector)
