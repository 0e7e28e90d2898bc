"""Reader of Auggie sessions (``~/.augment/sessions/<session id>.json``; domain).

Augment's CLI is closed source. Learnt from the published ``@augmentcode/auggie`` 0.36.0
package's bundled ``augment.mjs`` (its ``SessionStore`` / ``SessionManager.saveSession``, the
agent state's ``addExchangeToHistory``, the request and response node types its token counter
and cost code read) and Augment's public docs (``auggie session list|resume``); other archives
that read these files say the same of ``chatHistory`` / ``request_message`` /
``response_nodes`` / ``token_usage``.

A session is ``{sessionId, created, modified, chatHistory, agentState: {modelId, ...},
title?, customTitle?, workspaceId?, parentConversationId?, subAgents?, summarizations?,
subAgentCreditsUsed?, subAgentCostUsd?}``, written whole (``JSON.stringify(.., 2)`` to a
temporary file, renamed) after each exchange. ``chatHistory`` holds one item per model request,
``{exchange, completed, sequenceId, finishedAt, isHistorySummary?, source?}``, and an exchange
is ``{request_id, request_message, response_text, request_nodes, response_nodes, model_id?}``:

* ``request_message`` (else the text nodes, type 0) is what the user typed; a request's
  ``tool_result_node`` nodes (type 1: ``tool_use_id``, ``content`` or ``content_nodes``,
  ``is_error``) are the results of the previous exchange's calls; the IDE state node (type 4)
  names the workspace (the session's cwd, as ``auggie session list`` reads it);
* ``response_text`` (else the raw text nodes, type 0) is the answer, thinking nodes (type 8)
  its reasoning, ``tool_use`` nodes (type 5: ``tool_use_id``, ``tool_name``, ``input_json``)
  its calls; a token usage node (type 10: ``input_tokens``, ``output_tokens``,
  ``cache_read_input_tokens``, ``cache_creation_input_tokens``) that request's usage (an
  exchange's own ``token_usage`` in the API's shape too); billing nodes (type 9:
  ``credits_consumed``, ``cost_usd``) are kept in the message's metadata as recorded.

History summary items (``isHistorySummary``) are Auggie's compaction of earlier exchanges:
skipped. Sub-agents run by a ``sub-agent`` / ``sub-agent-<name>`` call are recorded inline, when
Auggie records them, as ``subAgents: [{name, model, finishedAt, chatHistory,
tool_call_request_id}]``: each becomes a session ``<session id>:subagent-<n>`` linked to the
parent's call of that name in the exchange ``tool_call_request_id`` names. A session run as a
sub-agent of another names it in ``parentConversationId``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from store.agents.augment import is_augment_session
from store.agents.registry import FileInput
from store.core.errors import StoreError
from store.core.lineage import SessionLink
from store.core.model import (
    InvalidToolCall,
    Message,
    Part,
    ServerToolCall,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)
from store.importers.base import Collector, ParsedSession
from store.importers.lines import moment, span, text_of
from store.normalize.calls import read_call
from store.usage.tokens import TokenUsage

__all__ = ["read_file"]

_SOURCE = "augment"
# Request node types (the bundle's token counter): text, tool result, IDE state.
_TEXT, _RESULT, _IDE_STATE = 0, 1, 4
# Response node types: raw text, tool use, thinking, billing, token usage.
_RAW, _TOOL_USE, _THINKING, _BILLING, _USAGE = 0, 5, 8, 9, 10
_SUB_AGENT = "sub-agent"


@dataclass(slots=True)
class _Read:
    """What a chat history gave: its calls by the exchange's request id, models, times."""

    calls: dict[str, list[ToolCall | InvalidToolCall]] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    stamps: list[Any] = field(default_factory=list)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _nodes(exchange: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    nodes = exchange.get(name)
    return [n for n in nodes if isinstance(n, Mapping)] if isinstance(nodes, list) else []


def workspace(history: Sequence[Any]) -> str | None:
    """The first IDE state node's first workspace folder (``repository_root``, else
    ``folder_root``), as Auggie's own session list reads it."""
    for item in history:
        exchange = item.get("exchange") if isinstance(item, Mapping) else None
        for node in _nodes(exchange, "request_nodes") if isinstance(exchange, Mapping) else ():
            state = node.get("ide_state_node")
            folders = state.get("workspace_folders") if isinstance(state, Mapping) else None
            if node.get("type") == _IDE_STATE and isinstance(folders, list) and folders \
                    and isinstance(folders[0], Mapping):
                found = text_of(folders[0].get("repository_root")) or text_of(
                    folders[0].get("folder_root"))
                if found:
                    return found
    return None


def _usage(exchange: Mapping[str, Any], model: str | None, request: str | None
           ) -> TokenUsage | None:
    """The request's token usage: its usage node with the most tokens (the final count),
    else the exchange's own ``token_usage``."""
    found: TokenUsage | None = None
    recorded = [n.get("token_usage") for n in _nodes(exchange, "response_nodes")
                if n.get("type") == _USAGE] or [exchange.get("token_usage")]
    for usage in recorded:
        if not isinstance(usage, Mapping):
            continue
        one = TokenUsage(_count(usage.get("input_tokens")), _count(usage.get("output_tokens")),
                         _count(usage.get("cache_creation_input_tokens")),
                         _count(usage.get("cache_read_input_tokens")), model=model,
                         request_id=request)
        if one.total and (found is None or one.total >= found.total):
            found = one
    return found


def _billing(exchange: Mapping[str, Any]) -> dict[str, Any]:
    """Credits and USD as the billing nodes record them (never converted)."""
    credits: float = 0
    usd: float = 0
    seen = False
    for node in _nodes(exchange, "response_nodes"):
        billing = node.get("billing_metadata")
        if node.get("type") != _BILLING or not isinstance(billing, Mapping):
            continue
        seen = True
        if isinstance(billing.get("credits_consumed"), int | float):
            credits += billing["credits_consumed"]
        try:
            usd += float(billing.get("cost_usd") or 0)
        except (TypeError, ValueError):
            pass
    if not seen:
        return {}
    return {k: v for k, v in (("credits_consumed", credits), ("cost_usd", usd)) if v}


def _result(node: Mapping[str, Any]) -> ToolResult:
    result = node.get("tool_result_node")
    if not isinstance(result, Mapping) or not text_of(result.get("tool_use_id")):
        raise StoreError("a tool result node needs its tool_use_id")
    content: Any = result.get("content")
    if not content and isinstance(result.get("content_nodes"), list):
        content = result["content_nodes"]
    extras = {k: result[k] for k in ("duration_ms", "start_time_ms", "metadata")
              if result.get(k) is not None}
    return ToolResult(result["tool_use_id"], content if content is not None else "",
                      result.get("is_error") is True, None, extras, _SOURCE)


def _request(exchange: Mapping[str, Any]) -> tuple[str, list[ToolResult]]:
    text = text_of(exchange.get("request_message"))
    results: list[ToolResult] = []
    texts: list[str] = []
    for node in _nodes(exchange, "request_nodes"):
        if node.get("type") == _RESULT:
            results.append(_result(node))
        elif node.get("type") == _TEXT and isinstance(node.get("text_node"), Mapping):
            texts.append(text_of(node["text_node"].get("content")) or "")
    return text or "".join(texts), results


def _response(exchange: Mapping[str, Any]) -> list[Part]:
    parts: list[Part] = []
    raw: list[str] = []
    calls: list[Part] = []
    for node in _nodes(exchange, "response_nodes"):
        kind = node.get("type")
        if kind == _THINKING and isinstance(node.get("thinking"), Mapping):
            thought = node["thinking"]
            text = text_of(thought.get("content")) or text_of(thought.get("summary"))
            if text:
                parts.append(ThinkingPart(text))
        elif kind == _RAW and isinstance(node.get("content"), str):
            raw.append(node["content"])
        elif kind == _TOOL_USE and isinstance(node.get("tool_use"), Mapping):
            use = node["tool_use"]
            if not text_of(use.get("tool_use_id")) or not text_of(use.get("tool_name")):
                raise StoreError(f"a tool_use node needs its tool_use_id and tool_name: {use!r}")
            call = read_call({"id": use["tool_use_id"], "name": use["tool_name"],
                              "arguments": use.get("input_json") or "{}"})
            if isinstance(call, ServerToolCall):
                raise StoreError(f"not a client tool call: {use!r}")
            calls.append(call)
    text = text_of(exchange.get("response_text")) or "".join(raw)
    if text.strip():
        parts.append(TextPart(text))
    return parts + calls


def _read_history(collector: Collector, session: ParsedSession, prefix: str,
                  history: Sequence[Any], default_model: str | None) -> _Read:
    """Add a chat history's messages to ``session`` (keys ``<prefix>:<request id>``)."""
    read = _Read()
    for index, item in enumerate(history):
        exchange = item.get("exchange") if isinstance(item, Mapping) else None
        if not isinstance(exchange, Mapping):
            collector.problem(None, f"chat history item {index}: no exchange", index)
            continue
        if item.get("isHistorySummary") is True:
            collector.skip("augment: a history summary (Auggie's compaction)")
            continue
        finished = item.get("finishedAt")
        read.stamps.append(finished)
        request = text_of(exchange.get("request_id"))
        key = f"{prefix}:{request or f'#{index}'}"
        model = text_of(exchange.get("model_id")) or default_model
        try:
            prompt, results = _request(exchange)
            parts = _response(exchange)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"chat history item {index}: {exc}", index)
            continue
        if results:
            collector.add(session, Message("tool", tuple(results), _SOURCE, None),
                          f"{key}:results", item=index)
        if prompt.strip():
            collector.add(session, Message("user", (TextPart(prompt),), _SOURCE, None),
                          f"{key}:request", item=index)
        if model and model not in read.models:
            read.models.append(model)
        calls = [p for p in parts if isinstance(p, ToolCall | InvalidToolCall)]
        if request and calls:
            read.calls.setdefault(request, []).extend(calls)
        if not parts:
            if not results and not prompt.strip():
                collector.skip("augment: an exchange with no text, call or result")
            continue
        metadata = {k: v for k, v in (("timestamp", finished), ("model", model),
                                      ("request_id", request),
                                      ("completed", item.get("completed")))
                    if v is not None}
        metadata.update(_billing(exchange))
        collector.add(session, Message("assistant", tuple(parts), _SOURCE, request,
                                       metadata=metadata),
                      f"{key}:response", item=index, usage=_usage(exchange, model, request))
    return read


def _slug(name: str) -> str:
    """A sub-agent's name as its tool names it (``sub-agent-<slug>``)."""
    return re.sub(r"-+", "-", re.sub(r"[^a-zA-Z0-9_-]", "-", re.sub(r"\s+", "-",
                                                                      name.strip())))


def _spawning_call(calls: Sequence[ToolCall | InvalidToolCall], name: str | None,
                   claimed: set[str]) -> str | None:
    """The first unclaimed ``sub-agent`` call of ``calls`` that ran the sub-agent ``name``."""
    for call in calls:
        raw = call.raw_name or call.name
        arguments = call.input if isinstance(call, ToolCall) else None
        named = arguments.get("name") if isinstance(arguments, Mapping) else None
        if not call.id or call.id in claimed:
            continue
        if (name and raw == f"{_SUB_AGENT}-{_slug(name)}") or (
                raw == _SUB_AGENT and (name is None or named in (None, name))):
            claimed.add(call.id)
            return call.id
    return None


def _times(session: ParsedSession, start: Any, end: Any, stamps: Sequence[Any]) -> None:
    first, last = span(stamps)
    started: datetime | None = moment(start) or first
    ended: datetime | None = moment(end) or last
    session.started_at = started
    session.ended_at = max(t for t in (ended, last) if t is not None) if ended or last else None


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: one Auggie session document (see the module docstring)."""
    data = file.document
    if not is_augment_session(data):
        collector.problem(None, "not an Auggie session (no sessionId, created, modified and "
                                "chatHistory)")
        return
    sid = data["sessionId"]
    state = data.get("agentState") if isinstance(data.get("agentState"), Mapping) else {}
    default_model = text_of(state.get("modelId"))
    parent_id = text_of(data.get("parentConversationId"))
    metadata = {k: data[k] for k in ("workspaceId", "rootTaskUuid", "remoteCreatedAt",
                                     "subAgentCreditsUsed", "subAgentCostUsd",
                                     "summarizations", "isCloudAgent")
                if data.get(k) not in (None, "", [], 0)}
    if parent_id:
        metadata["parent_session"] = parent_id
    session = collector.session(
        sid, provider=None, model=default_model, cwd=workspace(data["chatHistory"]),
        metadata=metadata,
        parent=SessionLink(parent_id, "subagent") if parent_id else None)
    read = _read_history(collector, session, sid, data["chatHistory"], default_model)
    if read.models:
        session.model = read.models[0]
    _times(session, data.get("created"), data.get("modified"), read.stamps)
    session.title = text_of(data.get("customTitle")) or text_of(data.get("title"))
    agents = data.get("subAgents")
    claimed: set[str] = set()
    for number, sub in enumerate(agents if isinstance(agents, list) else (), start=1):
        if not isinstance(sub, Mapping) or not isinstance(sub.get("chatHistory"), list):
            collector.problem(None, f"subAgents[{number - 1}]: no chatHistory")
            continue
        name = text_of(sub.get("name"))
        request = text_of(sub.get("tool_call_request_id"))
        call_id = _spawning_call(read.calls.get(request or "", ()), name, claimed)
        child_id = f"{sid}:subagent-{number}"
        model = text_of(sub.get("model")) or default_model
        child = collector.session(
            child_id, provider=None, model=model,
            cwd=workspace(sub["chatHistory"]) or session.cwd,
            metadata={k: v for k, v in (("parent_session", sid), ("parent_call_id", call_id),
                                        ("agent_type", name)) if v is not None},
            parent=SessionLink(sid, "subagent", call_id))
        got = _read_history(collector, child, child_id, sub["chatHistory"], model)
        if got.models:
            child.model = got.models[0]
        _times(child, None, sub.get("finishedAt"), got.stamps)
