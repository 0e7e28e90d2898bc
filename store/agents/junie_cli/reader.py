"""Reader of Junie CLI sessions (``~/.junie/sessions/<session id>/events.jsonl``; domain).

Junie's CLI is closed source: the format is read from what its files show, as documented by
another archive's investigation of them (``Haehnchen/idea-de-espend-ml-llm``,
``JUNIE_SESSION_ADAPTER.md`` @14f1bb4b and ``.../adapter/junie/JunieSessionParser.kt``,
``JunieSessionFinder.kt`` @3dd95389; read to learn, nothing copied), and only what it shows
unambiguously is read:

* ``{"kind": "UserPromptEvent", "prompt"}``: what the user typed (a user message).
* ``{"kind": "SessionA2uxEvent", "event": {"state", "agentEvent": {"kind", ...}}}``: the
  agent's events. Step blocks carry a ``stepId`` and are written again as they change
  (``IN_PROGRESS`` ... ``COMPLETED``): ``TerminalBlockUpdatedEvent`` (``command``,
  ``output``), ``ViewFilesBlockUpdatedEvent`` (``files[].relativePath``),
  ``FileChangesBlockUpdatedEvent`` (``changes[].beforeRelativePath/afterRelativePath``),
  ``ToolBlockUpdatedEvent`` (``text``, ``details``). Each step is one call (``terminal`` →
  ``bash`` with its ``command``; ``view_files`` → ``read``; ``file_changes`` → ``edit``, with
  the first ``path`` and every path in ``paths``; ``tool``, its ``text``), placed where the
  step first appears, with the id of its step; its result is its last update when that
  says ``COMPLETED`` (an error when the status names a failure or an error), else none.
  ``ResultBlockUpdatedEvent`` (``result``, ``cancelled``) is the agent's answer;
  ``AgentFailureEvent`` (``message``) a system message; ``LlmResponseMetadataEvent``
  (``modelUsage[]``: ``model``, ``cost``, ``inputTokens``, ``cacheInputTokens``,
  ``cacheCreateTokens``, ``outputTokens``) a usage row per entry, on the next message of the
  agent (the last one when none follows), the model the session's, the cost summed in the
  session's metadata (``cost_usd``) as recorded. Status lines, the agent's serialized state,
  task names and patches are skipped by kind.
* The session's id is its folder's name (``session-YYMMDD-HHMMSS-xxxx``); ``index.jsonl``
  beside the session folders gives its title (``taskName``) and its start and end
  (``createdAt``, ``updatedAt``, ms). Without an index line, the folder's name gives the start
  (local time, no zone: read as UTC). Events carry no times and no working folder.
* Keys are ``<session>:<line>`` for prompts and answers, ``<session>:<stepId>`` for a step:
  a step rewritten later keeps its key, and an import of a growing file holds a step back
  until it is ``COMPLETED`` or the file settles.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store.agents.junie_cli import JUNIE_KINDS, event_kind
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.model import Message, Part, TextPart, ToolResult, make_tool_call
from store.importers.base import Collector, ParsedSession
from store.importers.lines import moment, text_of
from store.usage.tokens import TokenUsage

__all__ = ["read_file"]

_STEPS = {"TerminalBlockUpdatedEvent": "terminal", "ViewFilesBlockUpdatedEvent": "view_files",
          "FileChangesBlockUpdatedEvent": "file_changes", "ToolBlockUpdatedEvent": "tool"}


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a Junie CLI ``events.jsonl`` (see the module docstring)."""
    sid = file.path.parent.name
    index = _index_entry(file.path.parent.parent / "index.jsonl", sid)
    session = collector.session(sid, provider=None, title=text_of(index.get("taskName")))
    session.started_at = moment(index.get("createdAt")) or _folder_time(sid)
    session.ended_at = moment(index.get("updatedAt"))
    # Steps: the last update of each, by stepId, and where each first appears.
    last: dict[str, tuple[int, Mapping[str, Any], Mapping[str, Any]]] = {}
    for line, record in file.records:
        agent_event, event = _agent_event(record)
        step = text_of(agent_event.get("stepId")) if agent_event else None
        if step and agent_event and agent_event.get("kind") in _STEPS:
            last[step] = (line, event, agent_event)
    placed: set[str] = set()
    pending: list[TokenUsage] = []
    cost = 0.0
    previous: tuple[Message, str, int] | None = None  # the agent's last message (for usage)

    def add(message: Message, key: str, line: int) -> None:
        nonlocal previous, pending
        usage = _sum(pending) if message.role == "assistant" and pending else None
        if usage is not None:
            pending = []
        collector.add(session, message, key, line, usage=usage)
        if message.role == "assistant":
            previous = (message, key, line)

    for line, record in file.records:
        kind = event_kind(record)
        if not isinstance(record, Mapping) or kind not in JUNIE_KINDS:
            collector.problem(line, f"not a Junie CLI event: kind {kind!r}")
            continue
        if kind == "UserPromptEvent":
            prompt = record.get("prompt")
            if isinstance(prompt, str) and prompt:
                add(Message("user", (TextPart(prompt),), "junie_cli", None), f"{sid}:{line}",
                    line)
            continue
        agent_event, event = _agent_event(record)
        if agent_event is None:  # (TaskState, SendToAgentEvent: the task's bookkeeping)
            collector.skip(f"junie-cli: {kind}")
            continue
        step = text_of(agent_event.get("stepId"))
        if kind in _STEPS and step:
            if step in placed:
                continue  # (an update of a step already placed: its last one was read)
            placed.add(step)
            end_line, end_event, final = last[step]
            if not collector.source.settled and _status(end_event, final) != "COMPLETED" \
                    and end_line == file.last_line:
                collector.defer(line)
                continue
            call, result = _step(step, kind, end_event, final)
            add(Message("assistant", (call,), "junie_cli", None), f"{sid}:{step}", line)
            if result is not None:
                add(Message("tool", (result,), "junie_cli", None), f"{sid}:{step}:result",
                    end_line)
        elif kind == "ResultBlockUpdatedEvent":
            result = agent_event.get("result")
            if isinstance(result, str) and result and agent_event.get("cancelled") is not True:
                add(Message("assistant", (TextPart(result),), "junie_cli", None,
                            metadata={"junie_error_code": agent_event["errorCode"]}
                            if agent_event.get("errorCode") else {}), f"{sid}:{line}", line)
            else:
                collector.skip("junie-cli: a cancelled or empty result")
        elif kind == "AgentFailureEvent" and text_of(agent_event.get("message")):
            add(Message("system", (TextPart(agent_event["message"]),), "junie_cli", None,
                        metadata={"junie_failure": True}), f"{sid}:{line}", line)
        elif kind == "LlmResponseMetadataEvent":
            for entry in agent_event.get("modelUsage") or ():
                usage = _usage(entry)
                if usage is not None:
                    pending.append(usage)
                    session.model = session.model or usage.model
                if isinstance(entry, Mapping) and isinstance(entry.get("cost"), int | float):
                    cost += float(entry["cost"])
            collector.skip("junie-cli: LlmResponseMetadataEvent (usage)")
        else:
            collector.skip(f"junie-cli: {kind}")
    if pending and previous is not None:
        _late_usage(session, previous[1], _sum(pending))
    if cost:
        session.metadata["cost_usd"] = round(cost, 6)
    if not session.items:
        del collector.sessions[sid]


def _late_usage(session: ParsedSession, key: str, usage: TokenUsage) -> None:
    """Usage recorded after the agent's last message: that message's."""
    earlier = session.usage.get(key)
    session.usage[key] = usage if earlier is None else earlier + usage


def _agent_event(record: Any) -> tuple[Mapping[str, Any] | None, Mapping[str, Any]]:
    event = record.get("event") if isinstance(record, Mapping) else None
    if not isinstance(event, Mapping):
        return None, {}
    agent_event = event.get("agentEvent")
    return (agent_event if isinstance(agent_event, Mapping) else None), event


def _status(event: Mapping[str, Any], agent_event: Mapping[str, Any]) -> str:
    status = agent_event.get("status") or event.get("state")
    return status.upper() if isinstance(status, str) else ""


def _step(step: str, kind: str, event: Mapping[str, Any], final: Mapping[str, Any]
          ) -> tuple[Part, ToolResult | None]:
    name = _STEPS[kind]
    arguments: dict[str, Any]
    output: Any = None
    if name == "terminal":
        arguments = {"command": final.get("command")}
        output = final.get("output")
    elif name == "view_files":
        paths = [f.get("relativePath") for f in final.get("files") or ()
                 if isinstance(f, Mapping) and f.get("relativePath")]
        arguments = {"path": paths[0] if paths else None, "paths": paths}
        output = ", ".join(str(p) for p in paths)
    elif name == "file_changes":
        paths = [c.get("afterRelativePath") or c.get("beforeRelativePath")
                 for c in final.get("changes") or () if isinstance(c, Mapping)]
        paths = [p for p in paths if p]
        arguments = {"path": paths[0] if paths else None, "paths": paths}
        output = ", ".join(str(p) for p in paths)
    else:
        arguments = {"text": final.get("text")}
        output = final.get("details")
    call = make_tool_call(step, name, {k: v for k, v in arguments.items() if v is not None},
                          source="junie_cli")
    status = _status(event, final)
    failed = any(word in status for word in ("FAIL", "ERROR"))
    if status != "COMPLETED" and not failed:
        return call, None
    return call, ToolResult(step, output if output is not None else "", failed, None,
                            {"status": status}, "junie_cli")


def _usage(entry: Any) -> TokenUsage | None:
    if not isinstance(entry, Mapping):
        return None

    def count(key: str) -> int:
        value = entry.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
            else 0

    return TokenUsage(input_tokens=count("inputTokens"), output_tokens=count("outputTokens"),
                      cache_creation_tokens=count("cacheCreateTokens"),
                      cache_read_tokens=count("cacheInputTokens"),
                      model=text_of(entry.get("model")))


def _sum(usages: list[TokenUsage]) -> TokenUsage:
    total = usages[0]
    for usage in usages[1:]:
        total = total + usage
    return total


def _index_entry(index: Path, sid: str) -> Mapping[str, Any]:
    """The session's line of ``index.jsonl`` (the last one naming it), or ``{}``."""
    try:
        text = index.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found: Mapping[str, Any] = {}
    for line in text.splitlines():
        try:
            entry = loads_json(line) if line.strip() else None
        except ValueError:
            continue
        if isinstance(entry, Mapping) and entry.get("sessionId") == sid:
            found = entry
    return found


def _folder_time(sid: str) -> datetime | None:
    """``session-YYMMDD-HHMMSS-xxxx``: its creation (local time, read as UTC)."""
    parts = sid.split("-")
    if len(parts) < 3 or parts[0] != "session":
        return None
    try:
        return datetime.strptime(parts[1] + parts[2], "%y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None
