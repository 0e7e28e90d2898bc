"""Reader of Cline and Roo Code tasks (VS Code extensions and the Cline CLI; domain).

**Task folders** (``<globalStorage>/saoudrizwan.claude-dev/tasks/<taskId>/``,
``.../rooveterinaryinc.roo-cline/tasks/<taskId>/``): the conversation is
``api_conversation_history.json``, a JSON array of Anthropic messages (Cline may add ``ts``,
``id``, ``modelInfo`` and ``metrics`` to each; Roo Code ``ts``); the task's other files are
read with it: ``ui_messages.json`` (what the panel showed, each entry with ``ts``; an
``api_req_started`` entry's ``text`` holds the request's ``tokensIn``, ``tokensOut``,
``cacheWrites``, ``cacheReads`` and ``cost``), ``task_metadata.json`` (Cline: ``model_usage``,
``environment_history``) and ``history_item.json`` (Roo Code: ``task``, ``workspace``,
``parentTaskId``, ``mode``). The walk reads the history file only (:func:`task_siblings`);
a task with no history file is read from its panel (:func:`_panel_history`). Learnt from
``cline/cline`` v3.89.2 (``core/task/index.ts``, ``tools/utils/ToolResultUtils.ts``,
``assistant-message/parse-assistant-message.ts``) and ``RooCodeInc/Roo-Code`` at cb836567
(``src/core/task/Task.ts``, ``src/core/tools/*``).

* The session id is the task folder's name (the task id); each message's key is
  ``<task id>:<index>`` (the file is rewritten whole as the task goes on: indexes are stable).
* Tool calls: native ``tool_use`` / ``tool_result`` blocks as recorded; older versions wrote
  calls as XML in the assistant's text (``<read_file><path>a.py</path></read_file>``): each
  known tool tag becomes a call (id ``<task id>:<index>:<n>``, the text kept as it was), and
  its result is the user message's text block ``[<tool> for '...'] Result:`` and the blocks
  after it; a tag the response left open at its end is a call too (Cline runs it). A result
  saying the tool failed (``<error>``; Roo Code's ``{"status": "error"}``), the user denied
  it or it was not executed is an error; a call with no result has none. A user message of
  only results (and environment details) is a ``tool`` message: the user typed none of it.
* Times: a message's own ``ts``, else the ``ui_messages.json`` requests: the n-th assistant
  message answers the n-th request that recorded tokens (its time: the last panel entry
  before the next request), the user message before it is that request's input (its time:
  the request's). Token usage pairs the same way; ``metrics`` on the message (Cline) when no
  request recorded tokens; else the time before it, from the task's creation
  (:func:`task_created`), which is also the session's start; its end is the last ``ts``.
* cwd: Roo Code's ``workspace``, else the environment details' ``Current Working
  Directory (...)`` / ``Current Workspace Directory (...)``; model: the message's
  ``modelInfo``, Cline's ``model_usage``, else the environment details' ``<model>``.
* Title: Roo Code's ``task``, else the first prompt (``<task>``, ``<user_message>`` unwrapped by
  :mod:`store.importers.titles`). Lineage: Roo Code's ``parentTaskId`` (``parent_session``),
  and the parent's ``new_task`` call whose result names the subtask (``parent_call_id``).
  Cline's ``new_task`` starts an unrelated task (no link is recorded).

**Cline SDK sessions** (``~/.cline/data/sessions/<id>/<id>.messages.json``, the Cline CLI and
newer extensions): ``{version, sessionId, agent, messages: [...]}``, messages keyed by their
``id``, ``ts`` and ``modelInfo`` on assistant messages, ``metrics`` (``inputTokens``,
``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens``) on the last one of a turn (a
message without ``ts`` is dated by the one before it, the first by the manifest's
``started_at``); the manifest ``<id>.json`` beside it gives ``cwd``, the model and the
title. A child file (``<root>/<stem>.messages.json`` with another stem: a subagent or team
task) is linked to the root session (``parent_session``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from store.agents.cline import HISTORY_FILE, UI_FILE, task_siblings
from store.agents.registry import FileInput
from store.core.arguments import loads_json, parse_object_text
from store.core.errors import AmbiguousRecord, ImportFileError, StoreError
from store.core.keys import canonical_keys
from store.core.lineage import SessionLink
from store.core.model import (
    Message,
    Part,
    TextPart,
    ToolResult,
    content_text,
    make_tool_call,
)
from store.importers.base import Collector, ParsedSession
from store.importers.lines import moment, span, text_of
from store.usage.tokens import TokenUsage

__all__ = ["read_cline_sdk", "read_file", "read_vscode_task", "task_created", "task_siblings"]

_STORAGE_KEYS = ("ts", "modelInfo", "metrics", "isSummary", "condenseId", "condenseParent",
                 "truncationId", "truncationParent", "isTruncationMarker")

#: Tools Cline and Roo Code wrote as XML tags (Cline ``src/shared/tools.ts``, Roo Code
#: ``packages/types/src/tool.ts`` and older releases).
XML_TOOLS = frozenset({
    "execute_command", "read_file", "write_to_file", "replace_in_file", "search_files",
    "list_files", "list_code_definition_names", "browser_action", "use_mcp_tool",
    "access_mcp_resource", "load_mcp_documentation", "ask_followup_question",
    "attempt_completion", "plan_mode_respond", "act_mode_respond", "new_task", "new_rule",
    "condense", "summarize_task", "report_bug", "web_fetch", "web_search", "focus_chain",
    "apply_patch", "use_skill", "use_subagents", "apply_diff", "insert_content",
    "search_and_replace", "search_replace", "edit_file", "switch_mode", "codebase_search",
    "update_todo_list", "run_slash_command", "fetch_instructions", "generate_image",
    "read_command_output", "skill", "generate_explanation",
})
_TOOL_TAG = re.compile(r"<(" + "|".join(sorted(XML_TOOLS)) + r")>(.*?)</\1>", re.DOTALL)
#: A tool tag the response left open at its end: Cline's parser (``parseAssistantMessageV2``)
#: keeps it as a partial tool use and, once the stream ends, runs it (``block.partial =
#: false`` in ``Task.recursivelyMakeClineRequests``).
_OPEN_TOOL_TAG = re.compile(r"<(" + "|".join(sorted(XML_TOOLS)) + r")>((?:(?!</\1>).)*)\Z",
                            re.DOTALL)
_ENVIRONMENT = re.compile(r"\s*<environment_details>.*?</environment_details>\s*", re.DOTALL)
_PARAM_OPEN = re.compile(r"<([a-z_]+)>")
_GREEDY_PARAMS = frozenset({"content", "diff"})  # may hold tags of their own
_RESULT_HEADER = re.compile(r"^\[([a-z_]+)(?: for [^\n]*)?\] Result:")
_NOT_EXECUTED = re.compile(r"^Tool \[([a-z_]+)\] was not executed")
_FAILED = ("The tool execution failed with the following error:", "The user denied this "
           "operation.")
_CWD = re.compile(r"# Current (?:Working|Workspace) Directory \(([^)\n]+)\)")
_MODEL = re.compile(r"<model>([^<\n]+)</model>")




def _sibling(path: Path, name: str) -> Any:
    try:
        return loads_json((path.parent / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# -- task folders ----------------------------------------------------------------------------


def read_vscode_task(document: Any, collector: Collector) -> None:
    """A task's ``api_conversation_history.json`` and its siblings (module docstring); a task
    that has only its ``ui_messages.json`` is read from that (:func:`_read_panel`)."""
    path = collector.source.path
    if path.name == UI_FILE:
        if (path.parent / HISTORY_FILE).is_file():
            collector.skip(f"{collector.format}: {UI_FILE} (read with {HISTORY_FILE})")
            return
        document = _panel_history(document, path.parent.name, collector)
    if not isinstance(document, list):
        collector.problem(None, f"a {collector.format} task history must be a JSON array")
        return
    sid = path.parent.name
    item = _mapping(_sibling(path, "history_item.json"))
    meta = _mapping(_sibling(path, "task_metadata.json"))
    ui = _sibling(path, "ui_messages.json")
    requests = _requests(ui if isinstance(ui, list) else [])
    env_text = "\n".join(_texts(document[:2]))
    model_usage = meta.get("model_usage")
    model = next((text_of(m.get("model_id")) for m in reversed(model_usage)
                  if isinstance(m, Mapping) and text_of(m.get("model_id"))), None) \
        if isinstance(model_usage, list) else None
    found_model = _MODEL.search(env_text)
    found_cwd = _CWD.search(env_text)
    parent = text_of(item.get("parentTaskId"))
    metadata = {k: v for k, v in (
        ("parent_session", parent),
        ("parent_call_id", _delegating_call(path, parent, sid) if parent else None),
        ("root_task", text_of(item.get("rootTaskId"))),
        ("mode", text_of(item.get("mode"))), ("status", text_of(item.get("status"))),
        ("total_cost", item.get("totalCost")),
        ("version", _version(meta.get("environment_history")))) if v is not None}
    session = collector.session(
        sid, provider=None, title=_title(item.get("task")),
        model=model or (found_model.group(1).strip() if found_model else None),
        cwd=text_of(item.get("workspace")) or (found_cwd.group(1) if found_cwd else None),
        metadata=metadata,
        tags=(collector.format, "subtask") if "parent_session" in metadata else ())
    if parent:
        session.parent = SessionLink(parent, "subagent", metadata.get("parent_call_id"))
    created = task_created(path.parent.name, item)
    last_stamp: Any = created.timestamp() * 1000 if created else None
    calls: dict[str, list[str]] = {}  # XML calls waiting for a result, by tool name
    answered = 0
    for index, raw in enumerate(document):
        key = f"{sid}:{index}"
        message = _task_message(raw, index, key, calls, collector)
        if message is None:
            continue
        stamp, usage = message.metadata.get("timestamp"), None
        if message.role == "assistant":
            request = requests[answered] if answered < len(requests) else None
            answered += 1
            if request is not None:
                usage, done = request["usage"], request["done"]
                stamp = stamp if stamp is not None else done
            usage = usage or _metrics_usage(_mapping(raw).get("metrics"))
            model_id = text_of(_mapping(_mapping(raw).get("modelInfo")).get("modelId"))
            if model_id and session.model is None:
                session.model = model_id
            if usage is not None and (model_id or session.model):
                usage = TokenUsage(usage.input_tokens, usage.output_tokens,
                                   usage.cache_creation_tokens, usage.cache_read_tokens,
                                   model=model_id or session.model)
        elif stamp is None and answered < len(requests):
            stamp = requests[answered]["ts"]
        stamp = last_stamp = stamp if stamp is not None else last_stamp  # (as dated as known)
        if stamp is not None and "timestamp" not in message.metadata:
            message = Message(message.role, message.parts, message.source, message.message_id,
                              message.extras, {**message.metadata, "timestamp": stamp})
        collector.add(session, message, key, item=index, usage=usage)
    _task_times(session, created, document, ui)


def task_created(folder: str, item: Mapping[str, Any]) -> datetime | None:
    """When a task was created: Roo Code's ``history_item.json`` ``ts``, else the task
    folder's name: Cline makes it from ``Date.now()`` (milliseconds; ``Controller.initTask``:
    ``historyItem?.id || Date.now().toString()``), Roo Code is a ``uuidv7()``, whose first 48
    bits are the milliseconds (``Task`` constructor)."""
    recorded = moment(item.get("ts"))
    if recorded is not None:
        return recorded
    if folder.isdigit() and 12 <= len(folder) <= 14:
        return moment(int(folder))
    if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", folder):
        return moment(int(folder[:8] + folder[9:13], 16))  # Roo Code's uuidv7: its ms time
    return None


def _task_times(session: ParsedSession, created: datetime | None, document: list[Any],
                ui: Any) -> None:
    """A task's start (its creation, else its first recorded time) and end (its last
    recorded time: a message's or a panel entry's ``ts``, else its creation)."""
    stamps = [_mapping(m).get("ts") for m in document]
    stamps += [_mapping(e).get("ts") for e in ui] if isinstance(ui, list) else []
    first, last = span(stamps)
    session.started_at = min((t for t in (created, first) if t), default=None)
    session.ended_at = max((t for t in (created, last) if t), default=None)


def _panel_history(ui: Any, sid: str, collector: Collector) -> list[dict[str, Any]] | None:
    """A panel's (``ui_messages.json``: ``{ts, type, say | ask, text}``) conversation as API
    messages: the first ``text`` and ``user_feedback`` are prompts, ``text``, ``reasoning``,
    ``completion_result``, ``followup`` replies; ``tool`` (JSON), ``command`` and
    ``use_mcp_server`` asks calls (only a command has a result: its ``command_output``)."""
    if not isinstance(ui, list):
        return None
    out: list[dict[str, Any]] = []
    command: str | None = None

    def add(role: str, block: dict[str, Any], ts: Any) -> None:
        same = out and out[-1]["role"] == role
        out[-1]["content"].append(block) if same else out.append(
            {"role": role, "content": [block], "ts": ts})

    for index, entry in enumerate(ui):
        entry = _mapping(entry)
        kind = entry.get("say") or entry.get("ask")
        text, ts = entry.get("text"), entry.get("ts")
        text = text if isinstance(text, str) else ""
        call_id = f"{sid}:ui{index}"
        if kind == "text" and not out or kind == "user_feedback":
            add("user", {"type": "text", "text": text}, ts)
        elif kind in ("text", "completion_result", "followup") and text:
            add("assistant", {"type": "text", "text": text}, ts)
        elif kind == "reasoning" and text:
            add("assistant", {"type": "thinking", "thinking": text}, ts)
        elif kind in ("tool", "use_mcp_server") or (kind == "command" and entry.get("ask")):
            args = {"command": text} if kind == "command" else parse_object_text(text)
            if args is None:  # no arguments to read: counted, never invented
                collector.skip(f"{collector.format}: panel {kind} entry that is not a JSON object")
                continue
            name = str(args.pop("tool", None) or ("use_mcp_tool" if kind == "use_mcp_server"
                                                  else "execute_command"))
            add("assistant", {"type": "tool_use", "id": call_id, "name": name, "input": args},
                ts)
            command = call_id if kind == "command" else None
        elif kind == "command_output" and command is not None:
            add("user", {"type": "tool_result", "tool_use_id": command, "content": text}, ts)
            command = None
        else:
            collector.skip(f"{collector.format}: panel entry {kind or 'without a kind'}")
    return out


def _delegating_call(path: Path, parent: str, child: str) -> str | None:
    """The id of the parent's ``new_task`` call that started a Roo Code subtask: the call
    whose result says ``Subtask <child id> completed`` (Roo Code writes it into the parent's
    history when the subtask ends); ``None`` while it runs or when the parent is gone."""
    history = _sibling(path.parent.parent / parent / HISTORY_FILE, HISTORY_FILE)
    prefix = f"Subtask {child} completed"
    for message in history if isinstance(history, list) else ():
        content = _mapping(message).get("content")
        for block in content if isinstance(content, list) else ():
            if (isinstance(block, Mapping) and block.get("type") == "tool_result"
                    and content_text(block.get("content")).startswith(prefix)
                    and text_of(block.get("tool_use_id"))):
                return str(block["tool_use_id"])
    return None


def _title(task: Any) -> str | None:
    text = text_of(task)
    if text is None:
        return None
    from store.importers.titles import prompt_title

    return prompt_title([Message("user", (TextPart(text),))])


def _version(history: Any) -> str | None:
    if isinstance(history, list):
        for entry in reversed(history):
            if isinstance(entry, Mapping) and text_of(entry.get("cline_version")):
                return str(entry["cline_version"])
    return None


def _texts(messages: list[Any]) -> list[str]:
    out: list[str] = []
    for raw in messages:
        content = _mapping(raw).get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [b["text"] for b in content if isinstance(b, Mapping)
                    and isinstance(b.get("text"), str)]
    return out


def _requests(ui: list[Any]) -> list[dict[str, Any]]:
    """The API requests the panel recorded, in order: ``ts`` (when the request was made),
    ``done`` (the panel's last entry before the next request) and ``usage``; only those that
    recorded tokens, unless none did."""
    found: list[dict[str, Any]] = []
    for entry in ui:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("ts"), int | float):
            continue
        if entry.get("say") == "api_req_started":
            info: Any = None
            if isinstance(entry.get("text"), str):
                try:
                    info = loads_json(entry["text"])
                except ValueError:
                    info = None
            found.append({"ts": entry["ts"], "done": entry["ts"], "usage": _ui_usage(info)})
        elif found:
            found[-1]["done"] = entry["ts"]
    counted = [r for r in found if r["usage"] is not None]
    return counted or found


def _count(value: Any) -> int:
    return max(int(value), 0) if isinstance(value, int | float) and not isinstance(
        value, bool) and value == value else 0


def _ui_usage(info: Any) -> TokenUsage | None:
    if not isinstance(info, Mapping):
        return None
    usage = TokenUsage(_count(info.get("tokensIn")), _count(info.get("tokensOut")),
                       _count(info.get("cacheWrites")), _count(info.get("cacheReads")))
    return usage if usage.total else None


def _metrics_usage(metrics: Any) -> TokenUsage | None:
    tokens = _mapping(_mapping(metrics).get("tokens"))
    cached = _count(tokens.get("cached"))
    usage = TokenUsage(max(_count(tokens.get("prompt")) - cached, 0),
                       _count(tokens.get("completion")), 0, cached)
    return usage if usage.total else None


def _task_message(raw: Any, index: int, key: str, calls: dict[str, list[str]],
                  collector: Collector) -> Message | None:
    if not isinstance(raw, Mapping):
        collector.problem(None, "a task message must be an object", index)
        return None
    record = {k: v for k, v in raw.items() if k not in _STORAGE_KEYS}
    if record.get("type") == "reasoning" and "role" not in record:  # Roo Code reasoning items
        collector.skip(f"{collector.format}: reasoning item")
        return None
    message = collector.read(record, None, index)
    if message is None:
        return None
    stamp = raw.get("ts")
    metadata = {**message.metadata,
                **({"timestamp": stamp} if isinstance(stamp, int | float) else {}),
                **{k: raw[k] for k in ("isSummary", "condenseParent", "truncationParent")
                   if k in raw}}
    try:
        if message.role == "assistant" and not message.tool_calls:
            parts = _xml_calls(message.parts, key, calls)
        elif message.role == "user" and calls:
            parts = _xml_results(message.parts, calls)
        else:
            parts = _failed_results(message.parts)
    except (StoreError, TypeError, ValueError) as exc:
        collector.problem(None, f"tool call in text not read: {exc}", index)
        parts = message.parts
    return _not_a_prompt(Message(message.role, parts, message.source or collector.format,
                                 message.message_id, message.extras, metadata))


def _failed(text: str) -> bool:
    """A result text saying the tool failed or was refused: Cline's and older Roo Code's
    sentences, Roo Code's JSON (``{"status": "error" | "denied", ...}``)."""
    text = text.lstrip()
    if text.startswith(_FAILED):
        return True
    if text.startswith("{\"status\""):
        try:
            status = loads_json(text).get("status")
        except (ValueError, AttributeError):
            return False
        return status in ("error", "denied")
    return False


def _failed_results(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    """Native results not flagged ``is_error`` whose text says the tool failed, flagged."""
    if not any(isinstance(p, ToolResult) and not p.is_error for p in parts):
        return parts
    out: list[Part] = []
    for part in parts:
        if (isinstance(part, ToolResult) and not part.is_error
                and _failed(content_text(part.content))):
            part = ToolResult(part.call_id, part.content, True, part.name,
                              {**part.extras, "error_from": "text"}, part.source)
        out.append(part)
    return tuple(out)


def _xml_calls(parts: tuple[Part, ...], key: str, calls: dict[str, list[str]]) -> tuple[Part, ...]:
    """The parts, with a call after each text part for each tool tag in it."""
    out: list[Part] = []
    number = 0
    for part in parts:
        out.append(part)
        if not isinstance(part, TextPart):
            continue
        found_calls = list(_TOOL_TAG.finditer(part.text))
        rest = part.text[found_calls[-1].end():] if found_calls else part.text
        opened = _OPEN_TOOL_TAG.search(rest)  # (not when the response was cut off)
        opened = None if opened is None or "[Response interrupted" in opened.group(2) else opened
        for found in [*found_calls, *([opened] if opened else [])]:
            name = found.group(1)
            call_id = f"{key}:{number}"
            number += 1
            extras = {"from_text": True, **({"unclosed": True} if found is opened else {})}
            out.append(make_tool_call(call_id, name, _params(found.group(2)),
                                      extras=extras, source="cline_xml"))
            calls.setdefault(name, []).append(call_id)
    return tuple(out)


def _not_a_prompt(message: Message) -> Message:
    """A user message that only carries tool results (and the environment details the
    extension appends to every request, or nothing else) as the ``tool`` message it is: the
    user typed none of it. Text beside the results (a ``<user_message>``, feedback) keeps
    it a user message."""
    if message.role != "user" or not message.tool_results:
        return message
    for part in message.parts:
        if isinstance(part, TextPart):
            if _ENVIRONMENT.sub("", part.text).strip():
                return message
        elif not isinstance(part, ToolResult):
            return message
    return Message("tool", message.parts, message.source, message.message_id, message.extras,
                   message.metadata)


def _params(body: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    position = 0
    while True:
        opened = _PARAM_OPEN.search(body, position)
        if opened is None:
            return params
        name = opened.group(1)
        close = f"</{name}>"
        end = (body.rfind(close) if name in _GREEDY_PARAMS else body.find(close, opened.end()))
        if end < opened.end():
            return params  # an unclosed tag (a partial response): nothing more to read
        value = body[opened.end():end]
        params[name] = value.strip("\n") if name in _GREEDY_PARAMS else value.strip()
        position = end + len(close)


def _xml_results(parts: tuple[Part, ...], calls: dict[str, list[str]]) -> tuple[Part, ...]:
    """A user message's ``[tool] Result:`` text blocks (and the text blocks after each, up to
    the next header, an image or the environment details) as results of the waiting calls."""
    out: list[Part] = []
    current: tuple[str, str, str, list[str]] | None = None  # name, call id, header, texts

    def close() -> None:
        if current is None:
            return
        name, call_id, header, content = current
        body = "\n\n".join(content)
        failed = any(_failed(c) for c in content)
        out.append(ToolResult(call_id, body, failed or bool(_NOT_EXECUTED.match(header)),
                              name, {"header": header}, "cline_xml"))

    for part in parts:
        text = part.text if isinstance(part, TextPart) else None
        header = _RESULT_HEADER.match(text) or _NOT_EXECUTED.match(text) if text else None
        if text is not None and header is not None and calls.get(header.group(1)):
            close()
            name = header.group(1)
            rest = text[header.end():].strip("\n") if _RESULT_HEADER.match(text) else text
            current = (name, calls[name].pop(0), text.split("\n", 1)[0], [rest] if rest else [])
            continue
        if (current is not None and text is not None
                and not text.lstrip().startswith("<environment_details>")):
            current[3].append(text)
            continue
        close()
        current = None
        out.append(part)
    close()
    return tuple(out)


# -- Cline SDK sessions ----------------------------------------------------------------------




def read_cline_sdk(top: Mapping[str, Any], collector: Collector) -> None:
    """A Cline SDK session's messages file and its manifest (module docstring)."""
    path = collector.source.path
    stem = path.name.removesuffix(".messages.json")
    sid = text_of(top.get("session_id")) or stem
    manifest = _mapping(_sibling(path, f"{sid}.json"))
    info = _mapping(manifest.get("metadata"))
    parent = path.parent.name if stem != path.parent.name else None
    session: ParsedSession = collector.session(
        sid, provider=text_of(manifest.get("provider")), model=text_of(manifest.get("model")),
        cwd=text_of(manifest.get("cwd")), title=_title(info.get("title")),
        metadata={k: v for k, v in (("parent_session", parent),
                                    ("agent_role", text_of(top.get("agent"))),
                                    ("started_at", manifest.get("started_at")),
                                    ("ended_at", manifest.get("ended_at")),
                                    ("status", manifest.get("status"))) if v is not None},
        tags=("cline", "subagent") if parent else ())
    if parent:
        session.parent = SessionLink(parent, "subagent")
    last_stamp: Any = manifest.get("started_at")
    for index, raw in enumerate(top["messages"]):
        if not isinstance(raw, Mapping):
            collector.problem(None, "a Cline message must be an object", index)
            continue
        record = {k: v for k, v in raw.items() if k not in ("ts", "modelInfo", "metrics")}
        message = collector.read(record, None, index)
        if message is None:
            continue
        model_info = _mapping(raw.get("modelInfo"))
        stamp = raw.get("ts")
        stamp = last_stamp = stamp if stamp is not None else last_stamp
        metadata = {**message.metadata, **({"timestamp": stamp} if stamp is not None else {})}
        if text_of(model_info.get("id")) and session.model is None:
            session.model = model_info["id"]
        metrics = _mapping(raw.get("metrics"))
        usage = TokenUsage(_count(metrics.get("inputTokens")), _count(metrics.get("outputTokens")),
                           _count(metrics.get("cacheWriteTokens")),
                           _count(metrics.get("cacheReadTokens")),
                           model=text_of(model_info.get("id")))
        key = text_of(raw.get("id")) or f"{sid}:{index}"
        collector.add(session, _not_a_prompt(Message(message.role, message.parts, "cline",
                                                     message.message_id, message.extras,
                                                     metadata)),
                      key, item=index, usage=usage if usage.total else None)
    first, last = span([manifest.get("started_at"), manifest.get("ended_at"),
                        *(_mapping(m).get("ts") for m in top["messages"])])
    session.started_at = moment(manifest.get("started_at")) or first
    session.ended_at = last


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry (Cline and Roo Code): a task's history or panel (a JSON list),
    or an SDK session document (a JSON object)."""
    if isinstance(file.document, Mapping):
        try:
            top, _ = canonical_keys(file.document)
        except AmbiguousRecord as exc:
            raise ImportFileError(file.path, str(exc)) from None
        read_cline_sdk(top, collector)
    elif file.has_document:
        read_vscode_task(file.document, collector)
    else:
        raise ImportFileError(file.path, "not a Cline task or SDK session (a JSON document)")
