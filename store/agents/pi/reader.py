"""Reader of pi's and Oh My Pi's session files (JSON lines; domain).

Learnt from pi's own writer, ``packages/coding-agent/src/core/session-manager.ts`` of
``badlogic/pi-mono`` (read at 83378aad, v0.58.3; the v1 header at 295f51b5 and 7beb3543),
its messages ``packages/coding-agent/src/core/messages.ts`` and pi-ai's
``packages/ai/src/types.ts``; and Oh My Pi's, ``can1357/oh-my-pi``
``packages/coding-agent/src/core/session-manager.ts`` and
``src/core/tools/task/{artifacts,executor,types}.ts`` (at adad196f, v5.7.67).

* The ``session`` header gives the session: ``id``, ``cwd``, its start (``timestamp``), Oh My
  Pi's ``title``, ``parentSession`` (the session it was forked from: pi names the parent's
  file, Oh My Pi its id) -> a ``fork`` link; v1 headers name ``provider``/``modelId`` (or
  ``model`` as ``provider/id``) and ``thinkingLevel``.
* ``message`` entries: pi-ai messages (``user``; ``assistant`` with its blocks, ``model``,
  ``provider``, ``usage`` -> one usage row, its ``cost`` and ``stopReason`` /
  ``errorMessage`` kept in the metadata; ``toolResult`` -> a tool message linked by
  ``toolCallId``, an error when ``isError``, ``details`` kept), and pi's own: ``bashExecution``
  (a command the user ran with ``!``: a user message holding what the model was given),
  ``custom`` / ``hookMessage`` (an extension's message), ``fileMention``.
  ``compaction``, ``branch_summary`` and ``custom_message`` entries are messages given to the
  model as the user's (their summary or content, kept as user messages with their kind,
  marked as the agent's: ``origin: agent``, never a prompt the user typed).
* The file is a tree (``id`` / ``parentId``): every entry is kept in file order, the
  ``parentId`` in the metadata; keys are the entries' ids (v1 entries have none: the line).
* The session's end is its last entry's ``timestamp``; its model the first reply's (else the
  last ``model_change``); its title the last ``session_info`` name, else Oh My Pi's header
  ``title``, else the first real prompt.
* An Oh My Pi subagent's file ``<parent file's stem>/<task id>.jsonl`` is linked to the
  parent session (the stem's id) as a ``subagent``, with the parent's ``task`` call whose
  ``tasks`` name that task id (read from the parent's file beside it, when it is there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import StoreError
from store.core.lineage import SessionLink
from store.core.model import Message, TextPart, ToolResult
from store.importers.base import Collector, ParsedSession, Record, path_session_id
from store.importers.lines import moment, record_top, text_of
from store.importers.titles import AGENT_MADE, ORIGIN, prompt_title
from store.normalize.messages import normalize_message
from store.usage.tokens import TokenUsage

__all__ = ["read_file", "read_pi"]

_SKIPPED = {
    "model_change": "a model switch", "thinking_level_change": "a thinking level switch",
    "custom": "an extension's state", "label": "a label", "session_info": "the session's name",
    "ttsr_injection": "injected rules", "event": "a v1 agent event",
}
#: What pi prefixes to a summary when it gives it to the model (messages.ts).
_COMPACTION = ("The conversation history before this point was compacted into the following "
               "summary:\n\n<summary>\n")
_BRANCH = "The following is a summary of a branch that this conversation came back from:\n\n" \
          "<summary>\n"
_HEADER_KEYS = ("version", "thinking_level", "branched_from", "parent_session")


def read_pi(path: Path, records: list[Record], collector: Collector) -> None:
    """pi's session JSONL (see the module docstring)."""
    header: Mapping[str, Any] | None = None
    titles: list[str] = []
    models: list[str] = []
    stamps: list[Any] = []
    pending: list[tuple[int, Message, str | None, TokenUsage | None]] = []
    for line, record in records:
        top = record_top(record, line, collector, "pi")
        if top is None:
            continue
        kind = top.get("type")
        if kind == "session":
            if header is None:
                header = top
                collector.skip("pi: session header")
            else:
                collector.skip("pi: another session header")
            continue
        stamps.append(top.get("timestamp"))
        if kind in _SKIPPED:
            if kind == "session_info" and text_of(top.get("name")):
                titles.append(top["name"])
            elif kind == "model_change":
                model = _changed_model(top)
                if model:
                    models.append(model)
            collector.skip(f"pi: {_SKIPPED[kind]}")
            continue
        try:
            message, usage = _entry(top)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(line, str(exc) or type(exc).__name__)
            continue
        if message is None:
            collector.problem(line, f"not a pi session entry: type {kind!r}")
            continue
        pending.append((line, message, text_of(top.get("id")), usage))
    head = header or {}
    sid = text_of(head.get("id")) or path_session_id(path)
    session = collector.session(sid, cwd=text_of(head.get("cwd")),
                                metadata={k: head[k] for k in _HEADER_KEYS
                                          if head.get(k) is not None})
    omp = _is_oh_my_pi(path, head, records)
    if omp:
        session.tags = ("pi", "oh-my-pi")
    for line, message, entry_id, usage in pending:
        collector.add(session, message, entry_id or f"{sid}:{line}", line, usage=usage)
        if message.role == "assistant":
            model = text_of(message.metadata.get("model"))
            if session.model is None and model:
                session.model = model
                session.provider = text_of(message.metadata.get("provider"))
    if session.model is None:
        v1 = _v1_model(head)
        session.model = models[-1] if models else v1
    # The header's time is the session's start (a fork's copied entries are older); its
    # last entry's, the end.
    start = moment(head.get("timestamp"))
    times = [t for t in (moment(s) for s in stamps) if t is not None]
    if start is not None:
        times.append(start)
    if times:
        session.started_at, session.ended_at = start or min(times), max(times)
    session.title = (titles[-1] if titles else None) or text_of(head.get("title")) \
        or prompt_title(m for m in session.items if "pi_kind" not in m.metadata)
    _link(path, head, session)


def _entry(top: Mapping[str, Any]) -> tuple[Message | None, TokenUsage | None]:
    """An entry's message (``None``: not a kind pi writes) and its reply's usage."""
    kind = top.get("type")
    entry = {k: top[k] for k in ("timestamp", "parent_id") if top.get(k) is not None}
    entry_id = text_of(top.get("id"))
    if kind == "compaction":
        text = _COMPACTION + str(top.get("summary") or "") + "\n</summary>"
        return Message("user", (TextPart(text),), "pi", entry_id, metadata={
            **entry, ORIGIN: AGENT_MADE, "pi_kind": "compaction",
            "tokens_before": top.get("tokens_before")}), None
    if kind == "branch_summary":
        text = _BRANCH + str(top.get("summary") or "") + "</summary>"
        return Message("user", (TextPart(text),), "pi", entry_id, metadata={
            **entry, ORIGIN: AGENT_MADE, "pi_kind": "branch_summary",
            "from_id": top.get("from_id")}), None
    if kind == "custom_message":
        return _custom(top.get("content"), entry_id, entry, "custom_message",
                       top.get("custom_type"), top.get("display")), None
    if kind != "message":
        return None, None
    inner = top.get("message")
    if not isinstance(inner, Mapping):
        raise StoreError("a message entry without a message object")
    role = inner.get("role")
    if role == "bashExecution":
        return _bash(inner, entry_id, entry), None
    if role in ("custom", "hookMessage"):
        return _custom(inner.get("content"), entry_id, entry, str(role),
                       inner.get("customType"), inner.get("display")), None
    if role == "fileMention":
        files = inner.get("files")
        paths = [f.get("path") for f in files if isinstance(f, Mapping)] \
            if isinstance(files, list) else []
        text = "\n".join(p for p in paths if isinstance(p, str))
        return Message("user", (TextPart(text),), "pi", entry_id,
                       metadata={**entry, ORIGIN: AGENT_MADE, "pi_kind": "fileMention"}), None
    if role in ("branchSummary", "compactionSummary"):
        summary = str(inner.get("summary") or "")
        return Message("user", (TextPart(summary),), "pi", entry_id,
                       metadata={**entry, ORIGIN: AGENT_MADE, "pi_kind": role}), None
    message = normalize_message(inner)
    metadata: dict[str, Any] = dict(entry)
    usage = None
    if role == "assistant":
        for key in ("model", "provider", "api", "stopReason", "errorMessage"):
            if inner.get(key) is not None:
                metadata[_snake(key)] = inner[key]
        recorded = inner.get("usage")
        if isinstance(recorded, Mapping):
            usage = _usage(recorded, inner.get("model"), entry_id)
            if isinstance(recorded.get("cost"), Mapping):
                metadata["cost"] = dict(recorded["cost"])
    elif role == "toolResult":
        details = inner.get("details")
        parts = tuple(replace(p, source="pi", extras={**p.extras, "details": details})
                      if isinstance(p, ToolResult) and details is not None else p
                      for p in message.parts)
        message = replace(message, parts=parts)
    return Message(message.role, message.parts, "pi", entry_id, message.extras,
                   metadata), usage


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def _usage(recorded: Mapping[str, Any], model: Any, entry_id: str | None) -> TokenUsage | None:
    """pi-ai's ``Usage``: ``input`` is the input neither read from nor written to a cache
    (as Anthropic counts), ``cacheRead``, ``cacheWrite``, ``output``."""
    def count(key: str) -> int:
        value = recorded.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return 0
        return max(int(value), 0)

    usage = TokenUsage(count("input"), count("output"), count("cacheWrite"), count("cacheRead"),
                       0, text_of(model), None, entry_id)
    return usage if usage.total else None


def _bash(inner: Mapping[str, Any], entry_id: str | None, entry: dict[str, Any]) -> Message:
    """A ``!command`` the user ran: the text pi gives the model (messages.ts
    ``bashExecutionToText``), the command and exit code in the metadata."""
    command = str(inner.get("command") or "")
    output = inner.get("output")
    text = f"Ran `{command}`\n" + (f"```\n{output}\n```" if output else "(no output)")
    code = inner.get("exitCode")
    if inner.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    return Message("user", (TextPart(text),), "pi", entry_id, metadata={
        **entry, "pi_kind": "bashExecution", "command": command, "exit_code": code,
        "exclude_from_context": inner.get("excludeFromContext")})


def _custom(content: Any, entry_id: str | None, entry: dict[str, Any], kind: str,
            custom_type: Any, display: Any) -> Message:
    """An extension's message (given to the model as the user's)."""
    if isinstance(content, list):
        message = normalize_message({"role": "user", "content": content})
        parts = message.parts
    else:
        parts = (TextPart(content if isinstance(content, str) else ""),)
    return Message("user", parts, "pi", entry_id, metadata={
        **entry, ORIGIN: AGENT_MADE, "pi_kind": kind, "custom_type": custom_type,
        "display": display})


def _changed_model(top: Mapping[str, Any]) -> str | None:
    """A ``model_change``'s model: pi's ``modelId``; Oh My Pi's ``provider/model``."""
    model = text_of(top.get("model_id"))
    if model:
        return model
    combined = text_of(top.get("model"))
    return combined.split("/", 1)[-1] if combined else None


def _v1_model(head: Mapping[str, Any]) -> str | None:
    model = text_of(head.get("model_id"))
    if model:
        return model
    combined = text_of(head.get("model"))
    return combined.split("/", 1)[-1] if combined else None


def _is_oh_my_pi(path: Path, head: Mapping[str, Any], records: list[Record]) -> bool:
    """Oh My Pi's file: in its home, or with its own header ``title`` or entries."""
    if ".omp" in path.parts or "title" in head:
        return True
    return any(isinstance(r, Mapping) and r.get("type") == "ttsr_injection" for _, r in records)


def _session_id_of(name: str) -> str | None:
    """The session id in a session file's (or artifacts folder's) name ``<time>_<id>``."""
    stem = name[:-6] if name.endswith(".jsonl") else name
    time, _, sid = stem.partition("_")
    return sid if sid and time[:4].isdigit() else None


def _link(path: Path, head: Mapping[str, Any], session: ParsedSession) -> None:
    """The session's parent: a fork's (``parentSession``), an Oh My Pi subagent's."""
    parent = text_of(head.get("parent_session"))
    if parent:
        # (a Windows path too: pi names the parent's file as its platform spells it)
        name = parent.replace("\\", "/").rsplit("/", 1)[-1]
        parent_id = (_session_id_of(name) if name.endswith(".jsonl") else parent) or parent
        session.metadata["parent_session"] = parent_id
        session.parent = SessionLink(parent_id, "fork")
        return
    folder_id = _session_id_of(path.parent.name)
    parent_file = path.parent.with_name(path.parent.name + ".jsonl")
    if folder_id is None or not parent_file.is_file():
        return
    task_id = path.stem
    call_id = _task_call(parent_file, task_id)
    session.metadata.update(parent_session=folder_id, task_id=task_id)
    if call_id:
        session.metadata["parent_call_id"] = call_id
    session.tags = (*session.tags, "subagent")
    session.parent = SessionLink(folder_id, "subagent", call_id)


def _task_call(parent_file: Path, task_id: str) -> str | None:
    """The id of the parent's ``task`` call whose ``tasks`` name ``task_id`` (read-only)."""
    try:
        text = parent_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if '"task"' not in line or task_id not in line:
            continue
        try:
            entry = loads_json(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not (isinstance(block, dict) and block.get("type") == "toolCall"
                    and block.get("name") == "task"):
                continue
            arguments = block.get("arguments")
            tasks = arguments.get("tasks") if isinstance(arguments, dict) else None
            if isinstance(tasks, list) and any(isinstance(t, dict) and t.get("id") == task_id
                                               for t in tasks):
                return text_of(block.get("id"))
    return None


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a pi session file."""
    read_pi(file.path, file.records, collector)
