"""Reader of VS Code's chat sessions (GitHub Copilot Chat; domain).

Learnt from the editor's own writer, ``microsoft/vscode``
``src/vs/workbench/contrib/chat/common/model/chatModel.ts`` (``ISerializableChatData`` 1-3,
``ISerializableChatRequestData``; read at 8c035459), ``chatSessionOperationLog.ts`` (the
``.jsonl`` form's ``storageSchema``; at 03d43368), ``objectMutationLog.ts`` (its entries; at
047238f9) and ``chatService/chatService.ts`` (``IChatToolInvocationSerialized``,
``ConfirmedReason``; at c3c6e234); and from the Copilot extension, ``microsoft/vscode-copilot-chat``
``src/extension/prompt/common/conversation.ts`` (``IResultMetadata``), ``intents.ts``
(``IToolCallRound``), ``prompt/node/defaultIntentRequestHandler.ts`` (which fills
``toolCallRounds`` and ``toolCallResults``) and ``tools/common/toolNames.ts`` (at 31acd00a).

**Files.** ``<id>.json`` is one ``ISerializableChatData`` document (rewritten on every save).
``<id>.jsonl`` is a mutation log: its first line ``{"kind": 0, "v": <the data>}``, then
``{"kind": 1, "k": [path], "v": value}`` (set), ``{"kind": 2, "k": [path], "v": [items],
"i": cut}`` (cut the list at ``i`` when given, then append) and ``{"kind": 3, "k": [path]}``
(delete); the log is replayed and the resulting state read as a document. A line that does
not apply (no initial entry, a path that is not there) is a problem; the rest is read.

**Requests.** Each request is a user message (``message.text``; its ``requestId`` the key,
its ``timestamp`` the time, its ``modelId`` the model) followed by the response:

* with the Copilot extension's ``result.metadata.toolCallRounds``, one assistant message per
  round (thinking, ``response`` text, ``toolCalls`` with their exact ``arguments``), each
  followed by a ``tool`` message holding the results of its calls: the text of
  ``toolCallResults[id]``, an error when the matching ``toolInvocationSerialized`` part
  (its ``toolCallId`` is the call's id before any ``__vscode`` suffix) says
  ``resultDetails.isError`` or was denied or skipped (``isConfirmed``); a call with neither
  has no result;
* without it (another participant, older versions), one assistant message: the response's
  markdown and thinking parts and its ``toolInvocationSerialized`` parts as calls (tool id;
  arguments from ``resultDetails.input``, a terminal's ``commandLine``, an input's
  ``rawInput``, a subagent's prompt, else none recorded: ``{}``), then their results
  (``resultDetails.output``, a terminal's output, a subagent's result).

Invocations made by a subagent (``subAgentInvocationId``: the ``runSubagent`` call's id) go
to the session ``<session id>:subagent-<that id>``, linked to the parent and the call.
Usage: ``result.metadata.promptTokens`` / ``outputTokens`` (one row per request), else the
rounds' ``usage`` (OpenAI counts: ``prompt_tokens`` includes the cached part). The session's
start is ``creationDate``; its end the latest of ``lastMessageDate``, the requests' and
rounds' times and ``modelState.completedAt``. The cwd is the ``folder`` of the
``workspace.json`` beside ``chatSessions``; the title ``customTitle`` (v2:
``computedTitle``), else the first prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from store.agents.registry import FileInput
from store.agents.vscode_copilot_chat import LOG_KINDS, is_chat_data
from store.core.arguments import dumps_json, loads_json
from store.core.errors import StoreError
from store.core.lineage import SessionLink
from store.core.model import Message, Part, TextPart, ThinkingPart, ToolResult
from store.importers.base import Collector, ParsedSession, Record, path_session_id
from store.importers.lines import moment, text_of
from store.importers.titles import prompt_title
from store.normalize.calls import read_call
from store.usage.tokens import TokenUsage

__all__ = ["read_chat", "read_file", "replay_log"]

_SOURCE = "vscode_chat"
#: ``ConfirmedReason.type`` values that mean the call did not run (``ToolConfirmKind``).
_DENIED, _SKIPPED = 0, 5


def replay_log(records: list[Record], collector: Collector) -> Any:
    """The state a mutation log leaves (``None`` when it has no initial entry)."""
    state: Any = None
    for line, record in records:
        kind = record.get("kind") if isinstance(record, Mapping) else None
        if kind not in LOG_KINDS:
            collector.problem(line, f"not a chat mutation log entry: kind {kind!r}")
            continue
        if kind == 0:
            state = record.get("v")
            continue
        if state is None:
            collector.problem(line, "a change before the log's initial entry")
            continue
        try:
            _apply(state, kind, record)
        except (StoreError, KeyError, IndexError, TypeError) as exc:
            collector.problem(line, f"a change that does not apply: {exc!r}")
    return state


def _apply(state: Any, kind: int, record: Mapping[str, Any]) -> None:
    path = record.get("k")
    if not isinstance(path, list) or not path:
        raise StoreError(f"path {path!r}")
    holder = state
    for step in path[:-1]:
        holder = holder[step]
    last = path[-1]
    if kind == 1:
        if isinstance(holder, list) and last == len(holder):
            holder.append(record.get("v"))
        else:
            holder[last] = record.get("v")
    elif kind == 3:
        if isinstance(holder, dict):
            holder.pop(last, None)
        else:
            holder[last] = None
    else:
        items = holder.get(last) if isinstance(holder, dict) else holder[last]
        items = items if isinstance(items, list) else []
        cut = record.get("i")
        if isinstance(cut, int) and not isinstance(cut, bool):
            del items[cut:]
        values = record.get("v")
        if isinstance(values, list):
            items.extend(values)
        holder[last] = items


@dataclass(slots=True)
class _Chat:
    collector: Collector
    main: ParsedSession
    stamps: list[Any] = field(default_factory=list)
    #: invocation id (``toolCallId``) -> the stored call id, for subagent links.
    stored: dict[str, str] = field(default_factory=dict)
    subagents: dict[str, ParsedSession] = field(default_factory=dict)
    #: a ``runSubagent`` invocation's id -> its description (the subagent's title).
    described: dict[str, str] = field(default_factory=dict)


def read_chat(data: Any, collector: Collector, path: Path) -> None:
    """One session's chat data (see the module docstring)."""
    if not is_chat_data(data):
        collector.problem(None, "not VS Code chat data (no requests list and session id)")
        return
    sid = text_of(data.get("sessionId")) or path.stem or path_session_id(path)
    main = collector.session(sid, provider=None, cwd=_workspace_folder(path), metadata={
        k: v for k, v in (("responder", text_of(data.get("responderUsername"))),
                          ("format_version", data.get("version")),
                          ("initial_location", data.get("initialLocation"))) if v is not None})
    chat = _Chat(collector, main)
    chat.stamps += [data.get("creationDate"), data.get("lastMessageDate")]
    title = text_of(data.get("customTitle")) or text_of(data.get("computedTitle"))
    for index, request in enumerate(data["requests"]):
        if not isinstance(request, Mapping):
            collector.problem(None, f"request {index} is not an object", index)
            continue
        try:
            _request(chat, request, index)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"request {index}: {exc}", index)
    main.started_at = moment(data.get("creationDate"))
    found = [t for t in (moment(s) for s in chat.stamps) if t is not None]
    main.ended_at = max(found) if found else None
    if main.started_at is None and found:
        main.started_at = min(found)
    main.title = title or prompt_title(main.items)
    for agent in chat.subagents.values():
        call = agent.metadata.get("parent_call_id")
        if isinstance(call, str) and call in chat.stored:
            agent.metadata["parent_call_id"] = chat.stored[call]
        agent.parent = SessionLink(sid, "subagent", agent.metadata.get("parent_call_id"))
        name = chat.described.get(str(agent.metadata.get("invocation_id")))
        agent.title = f"{main.title or sid} (subagent{': ' + str(name) if name else ''})"
        times = [t for t in (moment(m.metadata.get("timestamp")) for m in agent.items) if t]
        agent.started_at, agent.ended_at = (min(times), max(times)) if times else (None, None)


def _workspace_folder(path: Path) -> str | None:
    """The folder of the workspace a ``chatSessions`` folder belongs to (``workspace.json``
    ``folder``, a ``file://`` URI), as a local path."""
    if path.parent.name != "chatSessions":
        return None
    try:
        found = loads_json((path.parent.parent / "workspace.json").read_text("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    folder = found.get("folder") if isinstance(found, Mapping) else None
    if not isinstance(folder, str) or not folder.startswith("file://"):
        return None
    local = unquote(urlparse(folder).path)
    if len(local) > 2 and local[0] == "/" and local[2] == ":":  # /c:/Users/... (Windows)
        local = local[1:]
    return local or None


def _text(value: Any) -> str | None:
    """A string or an ``IMarkdownString`` (``{value}``) as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("value"), str):
        return str(value["value"])
    return None


def _request(chat: _Chat, request: Mapping[str, Any], index: int) -> None:
    rid = text_of(request.get("requestId")) or f"{chat.main.session_id}:request{index}"
    stamp = request.get("timestamp")
    result = request.get("result")
    result = result if isinstance(result, Mapping) else {}
    meta = result.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    state = request.get("modelState")
    completed = state.get("completedAt") if isinstance(state, Mapping) else None
    chat.stamps += [stamp, completed]
    model = text_of(request.get("modelId")) or text_of(meta.get("resolvedModel"))
    if model is not None:
        chat.main.model = chat.main.model or model
    agent = request.get("agent")
    agent_id = text_of(agent.get("id")) if isinstance(agent, Mapping) else None
    message = request.get("message")
    text = _text(message) if not isinstance(message, Mapping) else text_of(message.get("text"))
    if text is not None:
        metadata = {k: v for k, v in (("timestamp", stamp), ("model", model),
                                      ("agent", agent_id)) if v is not None}
        chat.collector.add(chat.main, Message("user", (TextPart(text),), _SOURCE, rid,
                                              metadata=metadata), rid, item=index)
    parts = request.get("response")
    parts = [p for p in parts if p is not None] if isinstance(parts, list) else []
    invocations = [p for p in parts if isinstance(p, Mapping)
                   and p.get("kind") == "toolInvocationSerialized"
                   and text_of(p.get("toolCallId")) and text_of(p.get("toolId"))]
    own = [p for p in invocations if not _from_subagent(p)]
    rounds = meta.get("toolCallRounds")
    usage = _request_usage(meta, model)
    if isinstance(rounds, list) and rounds:
        _rounds(chat, rid, index, rounds, meta, own, stamp, model, usage)
    else:
        _response(chat, rid, index, parts, own, stamp, model, usage)
    error = result.get("errorDetails")
    if isinstance(error, Mapping) and text_of(error.get("message")) and chat.main.items:
        chat.main.metadata.setdefault("errors", []).append(
            {"request": rid, "message": error["message"], "code": error.get("code")})
    for part in own:
        data = part.get("toolSpecificData")
        if isinstance(data, Mapping) and data.get("kind") == "subagent":
            name = text_of(data.get("description")) or text_of(data.get("agentName"))
            if name is not None:
                chat.described[str(part["toolCallId"])] = name
    for part in invocations:
        if _from_subagent(part):
            _subagent_call(chat, rid, index, part, stamp)


def _from_subagent(part: Mapping[str, Any]) -> bool:
    return bool(text_of(part.get("subAgentInvocationId")))


def _request_usage(meta: Mapping[str, Any], model: str | None) -> TokenUsage | None:
    prompt, output = meta.get("promptTokens"), meta.get("outputTokens")
    if not any(isinstance(v, int) and not isinstance(v, bool) and v > 0
               for v in (prompt, output)):
        return None
    return TokenUsage(_count(prompt), _count(output), model=model,
                      response_id=text_of(meta.get("responseId")))


def _round_usage(usage: Any, model: str | None, round_id: str | None) -> TokenUsage | None:
    """An older round's ``usage`` (OpenAI's: ``prompt_tokens`` includes the cached part)."""
    if not isinstance(usage, Mapping):
        return None
    details = usage.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    prompt, output = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    if not prompt and not output:
        return None
    return TokenUsage(max(prompt - cached, 0), output, 0, cached, model=model,
                      response_id=round_id)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _bare(call_id: str) -> str:
    return call_id.split("__vscode")[0]


def _rounds(chat: _Chat, rid: str, index: int, rounds: list[Any], meta: Mapping[str, Any],
            own: list[Mapping[str, Any]], stamp: Any, model: str | None,
            usage: TokenUsage | None) -> None:
    by_id = {str(p["toolCallId"]): p for p in own}
    outputs = meta.get("toolCallResults")
    outputs = outputs if isinstance(outputs, Mapping) else {}
    used: set[str] = set()
    last_key: str | None = None
    for number, turn in enumerate(rounds):
        if not isinstance(turn, Mapping):
            raise StoreError(f"round {number} is not an object")
        round_id = text_of(turn.get("id"))
        when = turn.get("timestamp", stamp)
        chat.stamps.append(turn.get("timestamp"))
        body: list[Part] = []
        thinking = turn.get("thinking")
        thought = thinking.get("text") if isinstance(thinking, Mapping) else None
        if isinstance(thought, list):
            thought = "".join(t for t in thought if isinstance(t, str))
        if isinstance(thought, str) and thought:
            body.append(ThinkingPart(thought))
        if text_of(turn.get("response")):
            body.append(TextPart(turn["response"]))
        results: list[Part] = []
        calls = turn.get("toolCalls")
        for call in calls if isinstance(calls, list) else ():
            if not isinstance(call, Mapping) or not text_of(call.get("id")):
                raise StoreError(f"a tool call of round {number} has no id")
            call_id, name = str(call["id"]), str(call.get("name") or "")
            body.append(read_call({"id": call_id, "name": name,
                                   "arguments": call.get("arguments")}))
            part = by_id.get(call_id) or by_id.get(_bare(call_id))
            if part is not None:
                used.add(str(part["toolCallId"]))
                chat.stored[str(part["toolCallId"])] = call_id
            outcome = _outcome(part, outputs.get(call_id), call_id, name)
            if outcome is not None:
                results.append(outcome)
        key = f"{rid}:round:{round_id or number}"
        metadata = {k: v for k, v in (("timestamp", when), ("model", model),
                                      ("round_id", round_id)) if v is not None}
        turn_usage = _round_usage(turn.get("usage"), model, round_id)
        chat.collector.add(chat.main, Message("assistant", tuple(body), _SOURCE, round_id,
                                              metadata=metadata), key, item=index,
                           usage=turn_usage)
        last_key = key
        if results:
            chat.collector.add(chat.main, Message("tool", tuple(results), _SOURCE, None,
                                                  metadata={"timestamp": when}),
                               f"{key}:results", item=index)
    rest = [p for p in own if str(p["toolCallId"]) not in used]
    if rest:  # invocations no round names (tools the user referenced): kept as calls
        last_key = _invocations(chat, chat.main, f"{rid}:invocations", index, rest, stamp,
                                model, ())
    if usage is not None and last_key is not None and last_key not in chat.main.usage:
        chat.main.usage[last_key] = usage


def _response(chat: _Chat, rid: str, index: int, parts: Sequence[Any],
              own: list[Mapping[str, Any]], stamp: Any, model: str | None,
              usage: TokenUsage | None) -> None:
    """A response without tool call rounds: its text and its invocation parts."""
    body: list[Part] = []
    for part in parts:
        kind = part.get("kind") if isinstance(part, Mapping) else None
        if kind == "thinking":
            value = part.get("value")
            text = "".join(v for v in value if isinstance(v, str)) if isinstance(
                value, list) else value
            if isinstance(text, str) and text:
                body.append(ThinkingPart(text))
        elif kind in (None, "markdownContent") and not part.get("fromSubagent"):
            text = _text(part.get("content")) if kind else _text(part)
            if text:
                if body and isinstance(body[-1], TextPart):
                    body[-1] = TextPart(body[-1].text + text)
                else:
                    body.append(TextPart(text))
    if not body and not own:
        return
    key = _invocations(chat, chat.main, f"{rid}:response", index, own, stamp, model,
                       tuple(body))
    if usage is not None:
        chat.main.usage[key] = usage


def _invocations(chat: _Chat, session: ParsedSession, key: str, index: int,
                 parts: Sequence[Mapping[str, Any]], stamp: Any, model: str | None,
                 body: tuple[Part, ...]) -> str:
    """An assistant message holding ``parts`` as calls (after ``body``), then their results."""
    calls: list[Part] = list(body)
    results: list[Part] = []
    for part in parts:
        call_id, name = str(part["toolCallId"]), str(part["toolId"])
        chat.stored.setdefault(call_id, call_id)
        calls.append(read_call({"id": call_id, "name": name, "arguments": _arguments(part)}))
        outcome = _outcome(part, None, call_id, name)
        if outcome is not None:
            results.append(outcome)
    metadata = {k: v for k, v in (("timestamp", stamp), ("model", model)) if v is not None}
    chat.collector.add(session, Message("assistant", tuple(calls), _SOURCE, None,
                                        metadata=metadata), key, item=index)
    if results:
        chat.collector.add(session, Message("tool", tuple(results), _SOURCE, None,
                                            metadata=dict(metadata)), f"{key}:results",
                           item=index)
    return key


def _arguments(part: Mapping[str, Any]) -> Any:
    """What an invocation part records of its call's arguments (``{}``: nothing)."""
    details = part.get("resultDetails")
    if isinstance(details, Mapping) and isinstance(details.get("input"), str):
        return details["input"]
    data = part.get("toolSpecificData")
    kind = data.get("kind") if isinstance(data, Mapping) else None
    if kind == "terminal" and isinstance(data, Mapping):
        line = data.get("commandLine")
        command = (line.get("userEdited") or line.get("toolEdited") or line.get("original")
                   if isinstance(line, Mapping) else data.get("command"))
        if isinstance(command, str):
            return {"command": command}
    if kind == "input" and isinstance(data, Mapping) and isinstance(data.get("rawInput"),
                                                                     Mapping):
        return data["rawInput"]
    if kind == "subagent" and isinstance(data, Mapping):
        return {k: data[k] for k in ("description", "agentName", "prompt")
                if isinstance(data.get(k), str)}
    return {}


def _outcome(part: Mapping[str, Any] | None, output: Any, call_id: str,
             name: str) -> ToolResult | None:
    """A call's result: ``output`` (``toolCallResults``), else what its invocation part
    shows; ``None`` when neither records one."""
    content: Any = _result_text(output) if output is not None else None
    failed = False
    extras: dict[str, Any] = {}
    if part is not None:
        confirmed = part.get("isConfirmed")
        kind = confirmed.get("type") if isinstance(confirmed, Mapping) else None
        if confirmed is False or kind in (_DENIED, _SKIPPED):
            extras["confirmation"] = "skipped" if kind == _SKIPPED else "denied"
            return ToolResult(call_id, content or f"tool call {extras['confirmation']}", True,
                              name, extras, _SOURCE)
        if part.get("isComplete") is False and output is None:
            return None
        details = part.get("resultDetails")
        if isinstance(details, Mapping):
            failed = details.get("isError") is True
            if content is None:
                content = _output_text(details.get("output"))
        elif isinstance(details, list) and content is None:
            content = [d.get("path") if isinstance(d, Mapping) else d for d in details]
        data = part.get("toolSpecificData")
        if isinstance(data, Mapping) and data.get("kind") == "terminal":
            state = data.get("terminalCommandState")
            if isinstance(state, Mapping) and isinstance(state.get("exitCode"), int):
                extras["exit_code"] = state["exitCode"]
            shown = data.get("terminalCommandOutput")
            if content is None and isinstance(shown, Mapping):
                content = shown.get("text")
        if isinstance(data, Mapping) and data.get("kind") == "subagent" and content is None:
            content = data.get("result")
        if content is None:
            content = _text(part.get("pastTenseMessage")) or ""
    elif output is None:
        return None
    return ToolResult(call_id, content, failed, name, extras, _SOURCE)


def _result_text(output: Any) -> Any:
    """A ``LanguageModelToolResult`` as text (its parts' ``value``), else as recorded."""
    parts = output.get("content") if isinstance(output, Mapping) else None
    if isinstance(parts, list):
        texts = [p.get("value") for p in parts if isinstance(p, Mapping)]
        if texts and all(isinstance(t, str) for t in texts):
            return "".join(str(t) for t in texts)
        return [p.get("value", p) if isinstance(p, Mapping) else p for p in parts]
    return output


def _output_text(output: Any) -> Any:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        texts = [o.get("value") for o in output if isinstance(o, Mapping) and o.get("isText")
                 is not False]
        if texts and all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
        return dumps_json(output)
    return None


def _subagent_call(chat: _Chat, rid: str, index: int, part: Mapping[str, Any],
                   stamp: Any) -> None:
    parent_call = str(part["subAgentInvocationId"])
    sid = f"{chat.main.session_id}:subagent-{parent_call}"
    session = chat.subagents.get(sid)
    if session is None:
        session = chat.collector.session(
            sid, provider=None, cwd=chat.main.cwd, tags=("vscode-copilot-chat", "subagent"),
            metadata={"parent_session": chat.main.session_id, "parent_call_id": parent_call,
                      "invocation_id": parent_call})
        chat.subagents[sid] = session
        session.model = chat.main.model
    _invocations(chat, session, f"{rid}:{part['toolCallId']}", index, [part], stamp,
                 session.model, ())


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a ``.json`` chat document or a ``.jsonl`` mutation log."""
    data = file.document if file.has_document else replay_log(file.records, collector)
    if data is None:
        return
    read_chat(data, collector, file.path)
