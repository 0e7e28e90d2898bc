"""Reader of OpenHands conversations (an event file per event; domain).

A conversation is a folder of event files, read whole from its main file (the walk reads the
main file only: :func:`conversation_siblings`); keys are the event ids, so reading it again
after it grew stores only the new events.

**V1** (the OpenHands SDK, CLI and app server: ``~/.openhands/conversations/<id hex>/``):
``base_state.json`` (the conversation state: ``id``, ``agent.llm.model``,
``workspace.working_dir``, ``stats.usage_to_metrics.*.token_usages``) and
``events/event-<index>-<event id>.json``, each an event with ``kind``, ``id``, ``timestamp``:

* ``MessageEvent``: ``llm_message`` (``role``, ``content`` text items) is a message;
* ``ActionEvent``: an assistant message with ``thought`` and the call (``tool_call``: ``id``,
  ``name``, ``arguments`` text, kept verbatim); ``ObservationEvent``: its result
  (``observation.content``, ``observation.is_error``), ``UserRejectObservation`` (rejected) and
  ``AgentErrorEvent`` are error results;
* other kinds (system prompt, state updates, condensations, pauses ...) are skipped.

Token usage: each response's entry in ``token_usages`` (by ``response_id``) goes with the first
event naming it (``llm_response_id``); input is ``prompt_tokens`` less ``cache_read_tokens``.
A delegated sub-agent's conversation, ``<parent>/subagents/<id>/``, is linked to its parent
(``parent_session``).

**V0** (``~/.openhands/sessions/<id>/``): ``metadata.json`` (``title``, ``llm_model``,
``selected_repository``, ``created_at``) and ``events/<n>.json``: actions with
``tool_call_metadata`` (``function_name``, ``tool_call_id``, ``model_response``: the call's
arguments as the model wrote them, and the response's ``usage``) are calls; observations with
it are their results (``observation: "error"`` or ``success: false`` an error); ``message``
actions are user or assistant messages; the rest (state changes, recalls, condensations) is
skipped. V0 delegates share their parent's event stream (one session).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from store.agents.openhands import conversation_main, conversation_siblings
from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import StoreError
from store.core.model import Message, Part, TextPart, ThinkingPart, ToolResult, make_tool_call
from store.importers.base import Collector
from store.importers.lines import text_of
from store.usage.tokens import TokenUsage

__all__ = ["conversation_main", "conversation_siblings", "read_file", "read_openhands"]

_V1_EVENT = re.compile(r"^event-(\d+)(?:-[^/]*)?\.json$")  # (-<event id>, or -<kind>: any suffix)




def _event(path: Path, index: int, collector: Collector,
           last: bool) -> Mapping[str, Any] | None:
    """An event file's object, else ``None`` after reporting why (the rest is read). The
    last event of a conversation still being written may be cut short: held back (deferred)
    until the conversation settles, not reported."""
    try:
        event = loads_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        collector.problem(None, f"event {path.name}: cannot read: {exc.strerror or exc}", index)
        return None
    except ValueError as exc:
        if last and not collector.source.settled:
            collector.defer(None, index)
        else:
            collector.problem(None, f"event {path.name}: not JSON: {exc}", index)
        return None
    if not isinstance(event, Mapping):
        collector.problem(None, f"event {path.name}: not a JSON object", index)
        return None
    return event


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int:
    return max(int(value), 0) if isinstance(value, int | float) and not isinstance(
        value, bool) and value == value else 0


def read_openhands(document: Any, collector: Collector) -> None:
    """A conversation from its main file (see the module docstring)."""
    path = collector.source.path
    if not isinstance(document, Mapping):
        collector.problem(None, "an OpenHands conversation file must be a JSON object")
        return
    if path.name == "base_state.json":
        _read_v1(document, path, collector)
    else:
        _read_v0(document, path, collector)


# -- V1 ----------------------------------------------------------------------------------------


def _read_v1(state: Mapping[str, Any], path: Path, collector: Collector) -> None:
    sid = text_of(state.get("id")) or path.parent.name
    llm = _mapping(_mapping(state.get("agent")).get("llm"))
    model = text_of(llm.get("model"))
    usages: dict[str, TokenUsage] = {}
    for metrics in _mapping(_mapping(state.get("stats")).get("usage_to_metrics")).values():
        for entry in _mapping(metrics).get("token_usages") or ():
            usage = _v1_usage(entry, model)
            if usage is not None and usage.response_id:
                usages.setdefault(usage.response_id, usage)
    parent = (path.parent.parent.parent.name if path.parent.parent.name == "subagents"
              else None)
    tags = state.get("tags")
    session = collector.session(
        sid, model=model, cwd=text_of(_mapping(state.get("workspace")).get("working_dir")),
        provider=None, tags=("openhands", "subagent") if parent else ("openhands",),
        metadata={k: v for k, v in (("parent_session", parent),
                                    ("execution_status", state.get("execution_status")),
                                    ("tags", tags if isinstance(tags, Mapping) and tags
                                     else None)) if v is not None})
    files = sorted(((int(m.group(1)), p) for p in (path.parent / "events").iterdir()
                    if (m := _V1_EVENT.match(p.name))), key=lambda pair: pair[0])
    counted: set[str] = set()
    for index, file in files:
        event = _event(file, index, collector, file == files[-1][1])
        if event is None:
            continue
        try:
            message = _v1_message(event)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"event {file.name}: {exc}", index)
            continue
        if message is None:
            collector.skip(f"openhands: {event.get('kind')} event")
            continue
        response = text_of(event.get("llm_response_id"))
        usage = usages.get(response) if response and response not in counted else None
        if usage is not None and response is not None:
            counted.add(response)
        collector.add(session, message, text_of(event.get("id")) or f"{sid}:{index}",
                      item=index, usage=usage)


def _v1_usage(entry: Any, model: str | None) -> TokenUsage | None:
    if not isinstance(entry, Mapping):
        return None
    cached = _count(entry.get("cache_read_tokens"))
    usage = TokenUsage(max(_count(entry.get("prompt_tokens")) - cached, 0),
                       _count(entry.get("completion_tokens")),
                       _count(entry.get("cache_write_tokens")), cached,
                       _count(entry.get("reasoning_tokens")),
                       text_of(entry.get("model")) or model,
                       response_id=text_of(entry.get("response_id")))
    return usage if usage.total else None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [c["text"] for c in content if isinstance(c, Mapping) and isinstance(c.get("text"), str)]


def _v1_message(event: Mapping[str, Any]) -> Message | None:
    kind = event.get("kind")
    stamp = {"timestamp": event["timestamp"]} if event.get("timestamp") is not None else {}
    meta = {**stamp, "openhands_kind": kind}
    if kind == "MessageEvent":
        llm = _mapping(event.get("llm_message"))
        role = llm.get("role")
        if role not in ("user", "assistant"):
            return None
        parts: list[Part] = [TextPart(t) for t in _texts(llm.get("content"))]
        return Message(role, tuple(parts), "openhands", None, metadata=meta)
    if kind == "ActionEvent":
        call = _mapping(event.get("tool_call"))
        name = text_of(call.get("name")) or text_of(event.get("tool_name"))
        if name is None:
            raise StoreError("an ActionEvent without a tool name")
        arguments = call.get("arguments")
        if arguments is None:  # no recorded call: the parsed action, as recorded
            arguments = {k: v for k, v in _mapping(event.get("action")).items() if k != "kind"}
        parts = [ThinkingPart(event["reasoning_content"])] if text_of(
            event.get("reasoning_content")) else []
        parts += [TextPart(t) for t in _texts(event.get("thought"))]
        parts.append(make_tool_call(text_of(call.get("id")) or text_of(event.get("tool_call_id")),
                                    name, arguments, source="openhands"))
        return Message("assistant", tuple(parts), "openhands", None, metadata=meta)
    if kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
        observation = _mapping(event.get("observation"))
        if kind == "ObservationEvent":
            content: Any = "\n".join(_texts(observation.get("content")))
            failed = observation.get("is_error") is True
        elif kind == "UserRejectObservation":
            content, failed = event.get("rejection_reason") or "rejected", True
        else:
            content, failed = event.get("error"), True
        extras = {"observation": observation.get("kind")} if observation.get("kind") else {}
        result = ToolResult(text_of(event.get("tool_call_id")), content, failed,
                            text_of(event.get("tool_name")), extras, "openhands")
        return Message("tool", (result,), "openhands", None, metadata=meta)
    return None


# -- V0 ----------------------------------------------------------------------------------------


def _read_v0(meta: Mapping[str, Any], path: Path, collector: Collector) -> None:
    sid = text_of(meta.get("conversation_id")) or path.parent.name
    session = collector.session(
        sid, title=text_of(meta.get("title")), model=text_of(meta.get("llm_model")),
        provider=None, tags=("openhands",),
        metadata={k: meta[k] for k in ("selected_repository", "selected_branch", "created_at",
                                       "trigger", "accumulated_cost")
                  if meta.get(k) is not None})
    files = sorted((int(p.stem), p) for p in (path.parent / "events").iterdir()
                   if p.suffix == ".json" and p.stem.isdigit())
    counted: set[str] = set()
    for index, file in files:
        event = _event(file, index, collector, file == files[-1][1])
        if event is None:
            continue
        try:
            message, usage = _v0_message(event, counted)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"event {file.name}: {exc}", index)
            continue
        if message is None:
            collector.skip(f"openhands: {event.get('action') or event.get('observation')} "
                           "event")
            continue
        collector.add(session, message, f"{sid}:{event.get('id', index)}", item=index,
                      usage=usage)


def _recorded_arguments(response: Mapping[str, Any], call_id: str) -> Any:
    for choice in response.get("choices") or ():
        for call in _mapping(_mapping(choice).get("message")).get("tool_calls") or ():
            if isinstance(call, Mapping) and call.get("id") == call_id:
                return _mapping(call.get("function")).get("arguments")
    return None


def _v0_message(event: Mapping[str, Any],
                counted: set[str]) -> tuple[Message | None, TokenUsage | None]:
    meta = {"timestamp": event["timestamp"]} if event.get("timestamp") is not None else {}
    tool = _mapping(event.get("tool_call_metadata"))
    call_id = text_of(tool.get("tool_call_id"))
    args = _mapping(event.get("args"))
    if "action" in event:
        if event["action"] == "message":
            text = args.get("content")
            part = TextPart(text if isinstance(text, str) else "")
            return (Message("user" if event.get("source") == "user" else "assistant", (part,),
                            "openhands", None, metadata=meta), None)
        name = text_of(tool.get("function_name"))
        if name is None or call_id is None:
            return None, None
        response = _mapping(tool.get("model_response"))
        arguments = _recorded_arguments(response, call_id)
        if arguments is None:
            arguments = {k: v for k, v in args.items() if k != "thought"}
        parts: list[Part] = [TextPart(args["thought"])] if text_of(args.get("thought")) else []
        parts.append(make_tool_call(call_id, name, arguments, source="openhands"))
        usage = None
        response_id = text_of(response.get("id"))
        if response_id is not None and response_id not in counted:
            counted.add(response_id)
            raw = _mapping(response.get("usage"))
            cached = _count(_mapping(raw.get("prompt_tokens_details")).get("cached_tokens"))
            usage = TokenUsage(max(_count(raw.get("prompt_tokens")) - cached, 0),
                               _count(raw.get("completion_tokens")),
                               _count(raw.get("cache_creation_input_tokens")), cached,
                               model=text_of(response.get("model")), response_id=response_id)
            usage = usage if usage.total else None
        return Message("assistant", tuple(parts), "openhands", None, metadata=meta), usage
    if "observation" in event and call_id is not None:
        failed = event["observation"] == "error" or event.get("success") is False
        result = ToolResult(call_id, event.get("content"), failed,
                            text_of(tool.get("function_name")),
                            {"observation": event["observation"]}, "openhands")
        return Message("tool", (result,), "openhands", None, metadata=meta), None
    return None, None


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a conversation's main file, read with its events."""
    read_openhands(file.document if file.has_document else None, collector)
