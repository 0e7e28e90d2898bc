"""Reader of Zed's agent threads (``<data dir>/threads/threads.db``; domain).

Learnt from Zed's own writer, ``zed-industries/zed`` ``crates/agent/src/db.rs`` (the
``threads`` table and ``DbThread``, read at 0642ec7e), ``crates/agent/src/thread.rs``
(``Message``, ``UserMessage``, ``AgentMessage``, ``SubagentContext``),
``crates/agent/src/legacy_thread.rs`` (``SerializedThread`` 0.1.0 / 0.2.0 and the unversioned
one, read at 4410b970), ``crates/language_model_core/src/language_model_core.rs``
(``TokenUsage``, ``LanguageModelToolUse``, read at 02fddfd8) and ``request.rs``
(``LanguageModelToolResult``, read at 197cd24f), ``crates/agent/src/tools/*.rs`` (tool names
and inputs; ``spawn_agent_tool.rs`` at 015419a2).

Table ``threads``: ``id``, ``summary`` (the title), ``updated_at`` and ``created_at`` (RFC
3339), ``data_type`` (``json`` or ``zstd``), ``data`` (the thread, JSON; zstd level 3 when
``data_type`` is ``zstd``: decompressed by :mod:`store.importers.agentdb`, the ``zstd``
layout option), and since later versions ``parent_id`` (a subagent's parent thread) and
``folder_paths`` (the project folders, one per line). Zed rewrites a thread's row whole on
every save.

The payload, version ``0.3.0`` (``DbThread``): ``title``, ``messages``, ``updated_at``,
``model`` ``{provider, model}``, ``cumulative_token_usage`` and ``request_token_usage``
(``{user message id: usage}``: the last request of each prompt), ``subagent_context``
``{parent_thread_id, depth}``, ``profile`` ... Each message is externally tagged:
``{"User": {id, content: [{"Text": s} | {"Mention": {uri, content}} | {"Image": ...}]}}``,
``{"Agent": {content: [{"Text": s} | {"Thinking": {text, signature}} | {"RedactedThinking": s}
| {"ToolUse": {id, name, raw_input, input, is_input_complete, thought_signature}}],
tool_results: {id: {tool_use_id, tool_name, is_error, content, output}}}}`` or ``"Resume"``.
A tool input is the JSON value, or (newer) ``{"type": "json" | "text", "value": ...}``; a
result's ``content`` is a list of ``{"Text": s}`` / ``{"Image": ...}`` (one value before).
Older threads (``SerializedThread``, ``0.2.0``; ``0.1.0`` kept tool results on the next
user message; unversioned ones a ``text`` per message) have ``summary``, ``messages``
``[{id, role, segments: [{type: text | thinking | RedactedThinking}], tool_uses: [{id, name,
input}], tool_results: [{tool_use_id, is_error, content, output}], context, is_hidden}]``
and ``request_token_usage`` as a list by message index.

* A user message becomes a user message (its mentions kept as text after a link, as Zed
  sends them), an agent message an assistant message, and its ``tool_results`` a ``tool``
  message right after it: results are paired to calls by ``tool_use_id``; ``is_error``
  marks an error; a call without a result has none. ``Resume`` (the user's "continue where you
  left off", no text typed) is a user message of one ``zed_resume`` part.
* Keys: a user message's own ``id``; an agent message ``<thread>:<user id>:<n>`` (the n-th
  reply since that prompt), its results ``...:results``; a legacy message ``<thread>:<id>``.
* Zed records no time per message: the session's start and end are the row's
  ``created_at`` (else the thread's ``updated_at``) and ``updated_at``.
* Usage: the thread's ``cumulative_token_usage`` (every request) goes on its last reply;
  ``request_token_usage`` (each prompt's last request only) stays in the message metadata.
* A subagent thread (``parent_id`` / ``subagent_context``) is linked to its parent, and to
  the parent's ``spawn_agent`` call whose result names its session (``output.session_id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import ImportFileError, StoreError
from store.core.lineage import SessionLink
from store.core.model import (
    Message,
    OpaquePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolResult,
    make_tool_call,
)
from store.importers.base import Collector, ParsedSession
from store.importers.lines import moment, text_of
from store.usage.tokens import anthropic_usage

__all__ = ["read_file", "read_zed"]

_SOURCE = "zed"


def read_zed(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """Zed's ``threads`` rows (see the module docstring)."""
    threads: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for row in tables.get("threads", ()):
        try:
            thread = _payload(row)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"zed thread {row.get('id')!r}: {exc}")
            continue
        threads.append((row, thread))
    spawned = _spawned(threads)
    for row, thread in threads:
        try:
            _read_thread(row, thread, spawned, collector)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"zed thread {row.get('id')!r}: {exc}")


def _payload(row: Mapping[str, Any]) -> dict[str, Any]:
    data = row.get("data")
    if isinstance(data, bytes):
        if data.startswith(b"\x28\xb5\x2f\xfd"):
            raise StoreError("its payload is still zstd-compressed")
        data = data.decode("utf-8")
    thread = loads_json(data) if isinstance(data, str) else None
    if not isinstance(thread, dict) or not isinstance(thread.get("messages"), list):
        raise StoreError("its data is not a thread (a JSON object with messages)")
    return thread


def _spawned(threads: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, str]:
    """The ``spawn_agent`` call of each subagent session: ``{session id: call id}``, from the
    calls' results (``output.session_id``, else the JSON of the result's text)."""
    found: dict[str, str] = {}
    for _, thread in threads:
        for message in thread["messages"]:
            agent = message.get("Agent") if isinstance(message, Mapping) else None
            results = agent.get("tool_results") if isinstance(agent, Mapping) else None
            for call_id, result in (results.items() if isinstance(results, Mapping) else ()):
                if not isinstance(result, Mapping) or result.get("tool_name") not in (
                        "spawn_agent", "subagent"):
                    continue
                output = result.get("output")
                if not isinstance(output, Mapping):
                    try:
                        output = loads_json(_result_text(result.get("content")) or "null")
                    except ValueError:
                        output = None
                session = output.get("session_id") if isinstance(output, Mapping) else None
                if isinstance(session, str) and session:
                    found.setdefault(session, str(call_id))
    return found


def _read_thread(row: Mapping[str, Any], thread: Mapping[str, Any], spawned: dict[str, str],
                 collector: Collector) -> None:
    sid = str(row["id"])
    model = thread.get("model")
    context = thread.get("subagent_context")
    parent = text_of(row.get("parent_id")) or (
        text_of(context.get("parent_thread_id")) if isinstance(context, Mapping) else None)
    folders = row.get("folder_paths")
    cwd = folders.splitlines()[0] if isinstance(folders, str) and folders.strip() else None
    metadata: dict[str, Any] = {k: thread[k] for k in ("version", "profile", "imported",
                                                       "thinking_effort", "detailed_summary")
                                if thread.get(k) not in (None, "", False)}
    if isinstance(folders, str) and len(folders.splitlines()) > 1:
        metadata["folder_paths"] = folders.splitlines()
    tags: tuple[str, ...] = ("zed",)
    if parent:
        tags = ("zed", "subagent")
        metadata["parent_session"] = parent
        if sid in spawned:
            metadata["parent_call_id"] = spawned[sid]
    title = text_of(row.get("summary")) or text_of(thread.get("title")) or text_of(
        thread.get("summary"))
    session = collector.session(
        sid, title=title, cwd=cwd, tags=tags, metadata=metadata,
        provider=text_of(model.get("provider")) if isinstance(model, Mapping) else None,
        model=text_of(model.get("model")) if isinstance(model, Mapping) else None)
    if parent:
        session.parent = SessionLink(parent, "subagent", spawned.get(sid))
    session.started_at = moment(row.get("created_at")) or moment(thread.get("updated_at"))
    session.ended_at = moment(row.get("updated_at")) or moment(thread.get("updated_at"))
    if thread.get("version") == "0.3.0":
        _read_messages(sid, thread, session, collector)
    else:
        _read_legacy(sid, thread, session, collector)


def _read_messages(sid: str, thread: Mapping[str, Any], session: ParsedSession,
                   collector: Collector) -> None:
    per_prompt = thread.get("request_token_usage")
    per_prompt = per_prompt if isinstance(per_prompt, Mapping) else {}
    prompt = "start"
    replies = 0
    added: list[tuple[Message, str]] = []
    for index, message in enumerate(thread["messages"]):
        if message == "Resume":
            key = f"{sid}:{prompt}:resume{index}"
            added.append((Message("user", (OpaquePart("zed_resume", {}),), _SOURCE, None,
                                  metadata={"resume": True}), key))
            continue
        user = message.get("User") if isinstance(message, Mapping) else None
        agent = message.get("Agent") if isinstance(message, Mapping) else None
        if isinstance(user, Mapping):
            prompt = text_of(user.get("id")) or f"{index}"
            replies = 0
            parts = [_user_part(c) for c in user.get("content") or ()]
            added.append((Message("user", tuple(parts), _SOURCE, prompt), prompt))
        elif isinstance(agent, Mapping):
            replies += 1
            key = f"{sid}:{prompt}:{replies}"
            meta: dict[str, Any] = {}
            if replies == 1 and isinstance(per_prompt.get(prompt), Mapping):
                meta["request_token_usage"] = dict(per_prompt[prompt])
            parts = [_agent_part(c) for c in agent.get("content") or ()]
            added.append((Message("assistant", tuple(parts), _SOURCE, None, metadata=meta),
                          key))
            results = agent.get("tool_results")
            if isinstance(results, Mapping) and results:
                added.append((Message("tool", tuple(_result(r) for r in results.values()),
                                      _SOURCE), f"{key}:results"))
        else:
            collector.problem(None, f"zed thread {sid!r}: message {index} is neither User, "
                                    f"Agent nor Resume: {str(message)[:80]!r}")
    _add_all(added, thread, session, collector)


def _read_legacy(sid: str, thread: Mapping[str, Any], session: ParsedSession,
                 collector: Collector) -> None:
    """A ``SerializedThread`` (0.2.0, 0.1.0 or unversioned: see the module docstring)."""
    added: list[tuple[Message, str]] = []
    for index, message in enumerate(thread["messages"]):
        if not isinstance(message, Mapping):
            collector.problem(None, f"zed thread {sid!r}: message {index} is not an object")
            continue
        role = message.get("role")
        key = f"{sid}:{message.get('id', index)}"
        parts: list[Part] = []
        segments = message.get("segments")
        if isinstance(segments, list):
            parts += [_segment(s) for s in segments]
        elif isinstance(message.get("text"), str) and message["text"]:
            parts.append(TextPart(message["text"]))
        if role == "user" and not parts and text_of(message.get("context")):
            parts.append(TextPart(message["context"]))
        parts += [make_tool_call(text_of(u.get("id")), str(u.get("name") or ""),
                                 u.get("input") if u.get("input") is not None else {},
                                 source=_SOURCE)
                  for u in message.get("tool_uses") or () if isinstance(u, Mapping)]
        results = [_result(r) for r in message.get("tool_results") or ()
                   if isinstance(r, Mapping)]
        meta = {"hidden": True} if message.get("is_hidden") else {}
        if role == "assistant":
            added.append((Message("assistant", tuple(parts), _SOURCE, None, metadata=meta),
                          key))
            if results:
                added.append((Message("tool", tuple(results), _SOURCE), f"{key}:results"))
        elif role == "user":
            if results:  # (0.1.0: the results of the previous reply)
                added.append((Message("tool", tuple(results), _SOURCE), f"{key}:results"))
            if parts:
                added.append((Message("user", tuple(parts), _SOURCE, None, metadata=meta), key))
        else:
            collector.skip(f"zed: {role} message")
    _add_all(added, thread, session, collector)


def _add_all(added: list[tuple[Message, str]], thread: Mapping[str, Any],
             session: ParsedSession, collector: Collector) -> None:
    last = max((i for i, (m, _) in enumerate(added) if m.role == "assistant"), default=None)
    model = session.model
    for index, (message, key) in enumerate(added):
        usage = (anthropic_usage(thread.get("cumulative_token_usage"), model=model)
                 if index == last else None)
        collector.add(session, message, key, usage=usage)


def _user_part(content: Any) -> Part:
    if isinstance(content, str):
        return TextPart(content)
    if isinstance(content, Mapping) and len(content) == 1:
        kind, value = next(iter(content.items()))
        if kind == "Text" and isinstance(value, str):
            return TextPart(value)
        if kind == "Mention" and isinstance(value, Mapping):
            return OpaquePart("zed_mention", dict(value))
        return OpaquePart(f"zed_{str(kind).lower()}", value)
    raise StoreError(f"a user content item must be {{kind: value}}, got {str(content)[:80]!r}")


def _agent_part(content: Any) -> Part:
    if isinstance(content, Mapping) and len(content) == 1:
        kind, value = next(iter(content.items()))
        if kind == "Text" and isinstance(value, str):
            return TextPart(value)
        if kind == "Thinking" and isinstance(value, Mapping):
            return ThinkingPart(str(value.get("text") or ""), text_of(value.get("signature")))
        if kind == "ToolUse" and isinstance(value, Mapping):
            return _tool_use(value)
        return OpaquePart(f"zed_{str(kind).lower()}", value)
    raise StoreError(f"an agent content item must be {{kind: value}}, got "
                     f"{str(content)[:80]!r}")


def _tool_use(use: Mapping[str, Any]) -> Part:
    arguments = use.get("input")
    if (isinstance(arguments, Mapping) and set(arguments) == {"type", "value"}
            and arguments.get("type") in ("json", "text")):
        arguments = arguments["value"]  # (newer: the input tagged json / text)
    if arguments is None:
        arguments = use.get("raw_input") or {}
    extras = {k: use[k] for k in ("is_input_complete", "thought_signature")
              if use.get(k) not in (None, True)}
    return make_tool_call(text_of(use.get("id")), str(use.get("name") or ""), arguments,
                          extras=extras or None, source=_SOURCE)


def _segment(segment: Any) -> Part:
    if not isinstance(segment, Mapping):
        raise StoreError(f"a segment must be an object, got {str(segment)[:80]!r}")
    kind = segment.get("type")
    if kind == "text":
        return TextPart(str(segment.get("text") or ""))
    if kind == "thinking":
        return ThinkingPart(str(segment.get("text") or ""), text_of(segment.get("signature")))
    return OpaquePart(f"zed_{kind}", dict(segment))


def _result_text(content: Any) -> str | None:
    """A result's content as text when it is text only (one value or a list of them)."""
    items = content if isinstance(content, list) else [content]
    texts = []
    for item in items:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, Mapping) and len(item) == 1 and isinstance(item.get("Text"), str):
            texts.append(item["Text"])
        elif isinstance(item, Mapping) and item.get("type") == "text" \
                and isinstance(item.get("text"), str):
            texts.append(item["text"])
        else:
            return None
    return "".join(texts)


def _result(result: Mapping[str, Any]) -> ToolResult:
    content = result.get("content")
    text = _result_text(content)
    extras = {"output": result["output"]} if result.get("output") is not None else {}
    return ToolResult(text_of(result.get("tool_use_id")), text if text is not None else content,
                      result.get("is_error") is True, text_of(result.get("tool_name")),
                      extras, _SOURCE)


def read_file(file: FileInput, collector: Collector) -> None:
    """Zed keeps its threads in a database only: any other file is not Zed's."""
    raise ImportFileError(file.path, "not a Zed threads database (threads/threads.db)")
