"""Reader of GitHub Copilot CLI session logs
(``~/.copilot/session-state/<session id>/events.jsonl``; domain).

Copilot CLI is closed source. The format is learnt from what GitHub publishes about it: the
Copilot SDK's generated event types, ``nodejs/src/generated/session-events.ts`` in
``github/copilot-sdk`` (read at cc0438d6; generated from the runtime's schema, each event
saying whether it is ``ephemeral``: "not persisted to the session event log on disk"), its
docs ``docs/features/streaming-events.md``, ``session-persistence.md`` and
``agent-loop.md`` (the ``session-state/<id>/events.jsonl`` path; ``COPILOT_HOME`` in
``docs/setup/multi-tenancy.md``), and GitHub's CLI configuration-directory reference. Tool
names from public issues (github/copilot-cli#407) and Microsoft's Copilot CLI integration in
``microsoft/vscode-copilot-chat`` (``copilotCLITools.ts``).

One event a line, appended: ``{type, data, id, timestamp, parentId, agentId?}``.

* ``session.start`` gives the session id, cwd (``context.cwd``, ``branch``), CLI version and
  selected model; ``session.model_change`` the model of the messages after it;
  ``session.shutdown`` the per-model token totals of that run (kept as metadata
  ``model_metrics``, a list: one entry per run).
* ``user.message`` (``content``) becomes a user message (one with a ``source``, injected by
  the CLI, or an autopilot continuation, does not title the session).
* ``assistant.message`` becomes an assistant message: ``reasoningText``, ``content``, then
  its ``toolRequests`` as calls; its ``model``. Its ``outputTokens`` is the only token count
  persisted per response (``assistant.usage`` is ephemeral): kept as the response's usage,
  output only, once per ``apiCallId``.
* ``tool.execution_complete`` becomes a ``tool`` message: ``result.content``, or the
  ``error.message`` when it failed; ``success: false`` marks the error. A
  ``tool.execution_start`` whose call no assistant message requested (a tool the user ran)
  becomes an assistant message holding that call, so that its result has a call.
* Events with an ``agentId`` come from a subagent: they go to the session
  ``<session id>:agent-<agentId>`` (``parent_session``; ``parent_call_id`` and
  ``agent_name`` from a ``subagent.started`` event carrying that ``agentId``). Older logs
  marked them with ``data.parentToolCallId`` instead: that id names the session and is its
  ``parent_call_id``.
* Keys are the events' ``id``; everything else (turn markers, hooks, permissions,
  compaction, ``session.info`` ...) is skipped with its type as reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from store.agents.copilot_cli import is_copilot_cli_event
from store.agents.registry import FileInput
from store.core.errors import StoreError
from store.core.lineage import SessionLink
from store.core.model import Message, Part, TextPart, ThinkingPart, ToolResult
from store.importers.base import Collector, ParsedSession, Record, path_session_id
from store.importers.lines import moment, span, text_of
from store.importers.titles import prompt_title
from store.normalize.calls import read_call
from store.usage.tokens import TokenUsage, copilot_cli_usage

__all__ = ["is_copilot_cli_event", "read_copilot_cli", "read_file"]





@dataclass(slots=True)
class _Agent:
    """What ``subagent.started`` said about a subagent."""

    call_id: str | None = None
    name: str | None = None
    model: str | None = None


@dataclass(slots=True)
class _State:
    collector: Collector
    sid: str
    model: str | None = None
    requested: set[str] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)
    counted: set[str] = field(default_factory=set)
    agents: dict[str, _Agent] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)
    #: Each session's recorded event times, and its own start and end events' times.
    stamps: dict[str, list[Any]] = field(default_factory=dict)
    bounds: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The assistant messages of the current run (session, key, model), and the runs'
    #: per-model totals from their ``session.shutdown`` events.
    run: list[tuple[ParsedSession, str, str | None]] = field(default_factory=list)


def read_copilot_cli(records: list[Record], collector: Collector) -> None:
    """Copilot CLI ``events.jsonl`` (see the module docstring)."""
    path = collector.source.path
    start = next((r for _, r in records if isinstance(r, Mapping)
                  and r.get("type") == "session.start" and isinstance(r.get("data"), Mapping)),
                 None)
    data: Mapping[str, Any] = start["data"] if start is not None else {}
    sid = (text_of(data.get("sessionId"))
           or (path.parent.name if path.name == "events.jsonl" else path.stem)
           or path_session_id(path))
    found = data.get("context")
    context: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    state = _State(collector, sid, text_of(data.get("selectedModel")))
    main = collector.session(sid, provider=None, cwd=text_of(context.get("cwd")), metadata={
        k: v for k, v in (("copilot_version", text_of(data.get("copilotVersion"))),
                          ("git_branch", text_of(context.get("branch"))),
                          ("repository", text_of(context.get("repository"))))
        if v is not None})
    for _, record in records:  # subagents first: their events may come before the link
        if (isinstance(record, Mapping) and record.get("type") == "subagent.started"
                and isinstance(record.get("data"), Mapping)):
            body = record["data"]
            agent = _Agent(text_of(body.get("toolCallId")), text_of(body.get("agentName")),
                           text_of(body.get("model")))
            for key in (text_of(record.get("agentId")), agent.call_id):
                if key is not None:
                    state.agents.setdefault(key, agent)
    if start is not None:
        state.bounds.setdefault(sid, {})["start"] = data.get("startTime") or start.get(
            "timestamp")
    for line, record in records:
        if not isinstance(record, Mapping) or not is_copilot_cli_event(record):
            collector.problem(line, "not a Copilot CLI event: "
                              + (f"keys {sorted(str(k) for k in record)}"
                                 if isinstance(record, Mapping)
                                 else f"a JSON {type(record).__name__}"))
            continue
        try:
            _event(state, main, line, record)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(line, str(exc) or type(exc).__name__)
    _finish(state, main)


def _owner(state: _State, record: Mapping[str, Any]) -> str:
    """The id of the session that wrote the event (see :func:`_session`)."""
    key = text_of(record.get("agentId")) or text_of(record["data"].get("parentToolCallId"))
    return state.sid if key is None else f"{state.sid}:agent-{key}"


def _session(state: _State, main: ParsedSession, record: Mapping[str, Any]) -> ParsedSession:
    """The main session, or the subagent's that wrote the event."""
    data = record["data"]
    agent_id = text_of(record.get("agentId"))
    legacy = text_of(data.get("parentToolCallId")) if agent_id is None else None
    key = agent_id or legacy
    if key is None:
        return main
    agent = state.agents.get(key, _Agent(legacy))
    metadata = {k: v for k, v in (("parent_session", state.sid), ("agent_id", agent_id),
                                  ("parent_call_id", legacy or agent.call_id),
                                  ("agent_name", agent.name)) if v is not None}
    return state.collector.session(f"{state.sid}:agent-{key}", provider=None, cwd=main.cwd,
                                   model=agent.model, tags=("copilot-cli", "subagent"),
                                   metadata=metadata,
                                   parent=SessionLink(state.sid, "subagent",
                                                      legacy or agent.call_id))


def _event(state: _State, main: ParsedSession, line: int, record: Mapping[str, Any]) -> None:
    kind = record["type"]
    data = record["data"]
    stamp = record.get("timestamp")
    key = str(record["id"]) if record.get("id") is not None else f"{state.sid}:{line}"
    owner = main.session_id if kind.startswith("session.") else _owner(state, record)
    state.stamps.setdefault(owner, []).append(stamp)
    if kind == "session.model_change":
        state.model = text_of(data.get("newModel")) or state.model
    elif kind == "session.shutdown" and isinstance(data.get("modelMetrics"), Mapping):
        main.metadata.setdefault("model_metrics", []).append(data["modelMetrics"])
        _run_usage(state, data["modelMetrics"])
        state.bounds.setdefault(main.session_id, {})["end"] = stamp
        state.bounds[main.session_id].setdefault("start", data.get("sessionStartTime"))
    elif kind == "session.title_changed" and text_of(data.get("title")):
        main.title = data["title"]
    elif kind == "subagent.started":
        state.bounds.setdefault(owner, {})["start"] = stamp
    elif kind in ("subagent.completed", "subagent.failed"):
        state.bounds.setdefault(owner, {})["end"] = stamp
    if kind not in ("user.message", "assistant.message", "tool.execution_start",
                    "tool.execution_complete"):
        state.collector.skip(f"copilot-cli: {kind}")
        return
    session = _session(state, main, record)
    if kind == "user.message":
        content = data.get("content")
        if not isinstance(content, str):
            raise StoreError("a user.message needs its content text")
        if text_of(data.get("source")) or data.get("isAutopilotContinuation") is True:
            state.hidden.add(key)
        metadata = {"timestamp": stamp, **{k: data[k] for k in ("source", "agentMode")
                                           if text_of(data.get(k))}}
        state.collector.add(session, Message("user", (TextPart(content),), "copilot_cli",
                                             key, metadata=metadata), key, line)
    elif kind == "assistant.message":
        _assistant(state, session, line, key, stamp, data)
    elif kind == "tool.execution_start":
        call_id = text_of(data.get("toolCallId"))
        name = text_of(data.get("toolName"))
        if call_id is None or name is None:
            raise StoreError("a tool.execution_start needs toolCallId and toolName")
        state.names.setdefault(call_id, name)
        if call_id in state.requested:
            state.collector.skip("copilot-cli: tool.execution_start (its call was requested)")
            return
        state.requested.add(call_id)
        call = read_call({"id": call_id, "name": name, "arguments": data.get("arguments")})
        state.collector.add(session, Message("assistant", (call,), "copilot_cli", None,
                                             metadata={"timestamp": stamp,
                                                       "copilot_event": kind}), key, line)
    else:
        state.collector.add(session, Message("tool", (_result(state, data),), "copilot_cli",
                                             None, metadata={"timestamp": stamp}), key, line)


def _assistant(state: _State, session: ParsedSession, line: int, key: str, stamp: Any,
               data: Mapping[str, Any]) -> None:
    parts: list[Part] = []
    if text_of(data.get("reasoningText")):
        parts.append(ThinkingPart(data["reasoningText"]))
    if text_of(data.get("content")):
        parts.append(TextPart(data["content"]))
    requests = data.get("toolRequests") or []
    if not isinstance(requests, list):
        raise StoreError("toolRequests must be a list")
    for request in requests:
        if not isinstance(request, Mapping) or not text_of(request.get("toolCallId")):
            raise StoreError(f"a tool request needs a toolCallId: {request!r}")
        call_id, name = str(request["toolCallId"]), str(request.get("name") or "")
        state.requested.add(call_id)
        state.names.setdefault(call_id, name)
        parts.append(read_call({"id": call_id, "name": name,
                                "arguments": request.get("arguments")}))
    model = text_of(data.get("model")) or state.model
    if session.model is None:
        session.model = model
    api_call = text_of(data.get("apiCallId"))
    usage = None
    outputs = data.get("outputTokens")
    if (isinstance(outputs, int) and not isinstance(outputs, bool) and outputs > 0
            and (api_call is None or api_call not in state.counted)):
        usage = TokenUsage(output_tokens=outputs, model=model,
                           request_id=text_of(data.get("requestId")), response_id=api_call)
        if api_call is not None:
            state.counted.add(api_call)
    metadata = {k: v for k, v in (("timestamp", stamp), ("model", model),
                                  ("api_call_id", api_call)) if v is not None}
    message_id = text_of(data.get("messageId"))
    state.collector.add(session, Message("assistant", tuple(parts), "copilot_cli", message_id,
                                         metadata=metadata), key, line, usage=usage)
    state.run.append((session, key, model))


def _result(state: _State, data: Mapping[str, Any]) -> ToolResult:
    call_id = text_of(data.get("toolCallId"))
    if call_id is None:
        raise StoreError("a tool.execution_complete needs its toolCallId")
    result = data.get("result")
    error = data.get("error")
    content: Any = result.get("content") if isinstance(result, Mapping) else None
    extras: dict[str, Any] = {}
    if isinstance(error, Mapping):
        extras.update({f"error_{k}": error[k] for k in ("code", "message") if k in error})
        if content is None:
            content = error.get("message")
    failed = data.get("success") is False
    return ToolResult(call_id, content, failed, state.names.get(call_id), extras, "copilot_cli")


def _run_usage(state: _State, metrics: Mapping[str, Any]) -> None:
    """A run's per-model totals (its ``session.shutdown``): the only input and cache counts
    the log keeps (``assistant.usage`` is ephemeral). Each model's totals go to the run's
    last assistant message of that model (else its last one), less the output tokens its
    messages already recorded, so the run's usage adds up to what the file records."""
    run, state.run = state.run, []
    if not run:
        return
    for model, metric in metrics.items():
        total = copilot_cli_usage(metric, model=str(model))
        if total is None:
            continue
        mine = [(s, k) for s, k, m in run if m == model] or [(run[-1][0], run[-1][1])]
        counted = sum(s.usage[k].output_tokens for s, k in mine if k in s.usage)
        session, key = mine[-1]
        last = session.usage.get(key)
        output = max(total.output_tokens - counted, 0) + (last.output_tokens if last else 0)
        session.usage[key] = TokenUsage(
            total.input_tokens, output, total.cache_creation_tokens, total.cache_read_tokens,
            total.reasoning_tokens, model=str(model),
            request_id=last.request_id if last else None,
            response_id=last.response_id if last else None)


def _finish(state: _State, main: ParsedSession) -> None:
    """Titles from the first prompt a person typed; the main session's model falls back to
    the one selected at start; each session's start and end."""
    if main.model is None:
        main.model = state.model
    for session in state.collector.sessions.values():
        first, last = span(state.stamps.get(session.session_id, ()))
        bounds = state.bounds.get(session.session_id, {})
        session.started_at = moment(bounds.get("start")) or first
        session.ended_at = max((t for t in (moment(bounds.get("end")), last) if t), default=None)
    for session in state.collector.sessions.values():
        if session.title is None:
            session.title = prompt_title(m for m in session.items
                                         if m.message_id not in state.hidden)
        if session.title is None and "subagent" in session.tags:
            name = session.metadata.get("agent_name") or session.metadata.get("agent_id")
            session.title = f"{main.title or main.session_id} (subagent {name})"


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a Copilot CLI ``events.jsonl``."""
    read_copilot_cli(file.records, collector)
