"""pydantic-ai ``ModelMessage`` lists to and from a :class:`~store.TranscriptStore` session.

Install with ``pip install 'transcript-store[pydantic-ai]'``::

    import asyncio
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel
    import store
    from store.integrations.pydantic_ai import aappend_model_messages, aload_message_history

    agent = Agent(TestModel())

    async def chat(db: store.TranscriptStore, question: str) -> str:
        history = await aload_message_history(db, "chat-1")  # [] for a new session
        result = await agent.run(question, message_history=history)
        await aappend_model_messages(db, "chat-1", result.new_messages())
        return result.output

    with store.TranscriptStore.open("sqlite:///pydantic-ai-readme.sqlite") as db:
        before = len(asyncio.run(aload_message_history(db, "chat-1")))
        asyncio.run(chat(db, "Hello"))
        asyncio.run(chat(db, "And again"))
        assert len(asyncio.run(aload_message_history(db, "chat-1"))) == before + 4

Mapping: a ``ModelResponse`` is one ``assistant`` message (``TextPart`` text, ``ThinkingPart``
thinking, ``ToolCallPart`` a tool-call row with ``args`` as the argument text or object, other
parts opaque). A ``ModelRequest`` is one message per run of parts of one role:
``SystemPromptPart`` ``system``; ``UserPromptPart`` ``user`` (text, other content opaque);
``ToolReturnPart`` ``tool`` (a result row, an error result unless ``outcome="success"``);
``RetryPromptPart`` a ``tool`` error result when it names a tool, else ``user`` text, as is
``RetryFeedbackPart``; other parts opaque.

Each message's JSON form (pydantic-ai's own ``ModelMessagesTypeAdapter``) is kept in the
metadata of its first stored message (``"pydantic_ai"``) without the values the rows hold (see
:mod:`store.integrations`), so :func:`to_model_messages` gives back what pydantic-ai's own JSON
round trip gives (``RetryPromptPart``, deprecated, comes back as the part pydantic-ai reads it
as: a ``ToolReturnPart`` with ``outcome="retried"`` or a ``RetryFeedbackPart``). Messages written
otherwise are mapped from their rows; for a transcript that may hold dangling calls, pass
``store.repair(transcript, "openai-chat").messages``.

The functions are synchronous; ``aload_message_history`` and ``aappend_model_messages`` run them
in a worker thread (``asyncio.to_thread``) for use inside ``await agent.run(...)`` code.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import store
from store.integrations import Source, pack, require, unpack

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = [
    "KEY",
    "aappend_model_messages",
    "aload_message_history",
    "append_model_messages",
    "from_model_messages",
    "load_message_history",
    "to_model_messages",
]

#: The metadata key under which a message's JSON form is kept.
KEY = "pydantic_ai"
_SOURCE = "pydantic_ai"
Role = Literal["system", "developer", "user", "assistant", "tool"]


def _require() -> None:
    require("pydantic_ai", "pydantic-ai", "store.integrations.pydantic_ai")


# -- the store API in four calls ------------------------------------------------------------------


def load_message_history(db: store.TranscriptStore, session_id: str, *,
                         last_turns: int | None = None) -> list[ModelMessage]:
    """A session as ``message_history`` for an agent run (empty when there is no session)."""
    _require()
    try:
        transcript = db.load(session_id, last_turns=last_turns)
    except store.SessionNotFound:
        return []
    return to_model_messages(transcript)


def append_model_messages(db: store.TranscriptStore, session_id: str,
                          messages: Sequence[ModelMessage], *, title: str | None = None,
                          tags: Sequence[str] = ("pydantic-ai",)) -> store.AppendResult:
    """Append a run's messages (``result.new_messages()``), all or nothing."""
    converted = from_model_messages(messages)
    return db.append(session_id, converted, keys=[None] * len(converted), title=title,
                     tags=tags)


async def aload_message_history(db: store.TranscriptStore, session_id: str, *,
                                last_turns: int | None = None) -> list[ModelMessage]:
    """:func:`load_message_history` in a worker thread."""
    return await asyncio.to_thread(load_message_history, db, session_id, last_turns=last_turns)


async def aappend_model_messages(db: store.TranscriptStore, session_id: str,
                                 messages: Sequence[ModelMessage], *, title: str | None = None,
                                 tags: Sequence[str] = ("pydantic-ai",)) -> store.AppendResult:
    """:func:`append_model_messages` in a worker thread."""
    return await asyncio.to_thread(append_model_messages, db, session_id, messages,
                                   title=title, tags=tags)


# -- pydantic-ai messages to store messages -------------------------------------------------------


def from_model_messages(messages: Sequence[ModelMessage]) -> list[store.Message]:
    """pydantic-ai messages as store messages (see the module doc)."""
    _require()
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    dumped = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    out: list[store.Message] = []
    for record in dumped:
        out.extend(_from_record(record))
    return out


def _from_record(record: dict[str, Any]) -> list[store.Message]:
    kind = record.get("kind")
    raw_parts = record.get("parts")
    if kind not in ("request", "response") or not isinstance(raw_parts, list):
        raise store.RecordError(f"not a pydantic-ai message: kind {kind!r}")
    runs: list[tuple[Role, list[store.Part]]] = []
    candidates: list[Source] = []
    count = 0
    for number, raw in enumerate(raw_parts):
        if not isinstance(raw, Mapping):
            raise store.RecordError(f"a pydantic-ai message part must be an object: {raw!r}")
        role, parts, found = (_response_part(raw) if kind == "response" else _request_part(raw))
        for path, index, attribute in found:
            candidates.append((("parts", number, *path), count + index, attribute))
        count += len(parts)
        if runs and runs[-1][0] == role:
            runs[-1][1].extend(parts)
        else:
            runs.append((role, list(parts)))
    if not runs:
        runs.append(("assistant" if kind == "response" else "user", []))
    every = [part for _, parts in runs for part in parts]
    head = {**pack(record, candidates, every), "messages": len(runs)}
    return [
        store.Message(role, tuple(parts), _SOURCE,
                      metadata={KEY: head if number == 0 else {"continues": True}})
        for number, (role, parts) in enumerate(runs)
    ]


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _request_part(raw: Mapping[str, Any]) -> tuple[Role, list[store.Part], list[Source]]:
    kind = raw.get("part_kind")
    content = raw.get("content")
    if kind == "system-prompt" and isinstance(content, str):
        return "system", [store.TextPart(content)], [(("content",), 0, "text")]
    if kind == "user-prompt":
        if isinstance(content, str):
            return "user", [store.TextPart(content)], [(("content",), 0, "text")]
        parts: list[store.Part] = []
        found: list[Source] = []
        for number, item in enumerate(content if isinstance(content, list) else [content]):
            if isinstance(item, str):
                found.append((("content", number), len(parts), "text"))
                parts.append(store.TextPart(item))
            else:
                what = item.get("kind") if isinstance(item, Mapping) else None
                found.append((("content", number), len(parts), "data"))
                parts.append(store.OpaquePart(what if isinstance(what, str) else "content", item))
        return "user", parts, found
    call_id = raw.get("tool_call_id")
    tool = raw.get("tool_name")
    if kind == "tool-return" or (kind == "retry-prompt" and isinstance(tool, str)):
        failed = kind == "retry-prompt" or raw.get("outcome", "success") != "success"
        result = store.ToolResult(call_id if isinstance(call_id, str) else None, content,
                                  failed, tool if isinstance(tool, str) else None,
                                  source=_SOURCE)
        return "tool", [result], [(("content",), 0, "content")]
    if kind in ("retry-prompt", "retry-feedback"):
        return "user", [store.TextPart(_text(content))], [(("content",), 0, "text")]
    return "user", [store.OpaquePart(str(kind), dict(raw))], [((), 0, "data")]


def _response_part(raw: Mapping[str, Any]) -> tuple[Role, list[store.Part], list[Source]]:
    kind = raw.get("part_kind")
    content = raw.get("content")
    if kind == "text" and isinstance(content, str):
        return "assistant", [store.TextPart(content)], [(("content",), 0, "text")]
    if kind == "thinking" and isinstance(content, str):
        signature = raw.get("signature")
        part = store.ThinkingPart(content, signature if isinstance(signature, str) else None)
        return "assistant", [part], [(("content",), 0, "text")]
    if kind == "tool-call":
        args = raw.get("args")
        call_id = raw.get("tool_call_id")
        name = raw.get("tool_name")
        call = store.normalize_tool_call(
            {"id": call_id if isinstance(call_id, str) else None, "type": "function",
             "function": {"name": name if isinstance(name, str) and name else store.UNKNOWN_TOOL,
                          "arguments": args}},
        )
        attribute = "arguments_text" if isinstance(args, str) else "input"
        return "assistant", [call], [(("args",), 0, attribute)]
    return "assistant", [store.OpaquePart(str(kind), dict(raw))], [((), 0, "data")]


# -- store messages to pydantic-ai messages -------------------------------------------------------


def to_model_messages(
    messages: store.Transcript | Sequence[store.StoredMessage] | Sequence[store.Message],
) -> list[ModelMessage]:
    """Stored messages as pydantic-ai messages: those written by this module as pydantic-ai's
    own JSON round trip gives them, others mapped from their rows (empty ones skipped)."""
    _require()
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    plain = [m.message if isinstance(m, store.StoredMessage) else m for m in messages]
    times = [m.created_at.isoformat() if isinstance(m, store.StoredMessage) else None
             for m in messages]
    records: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    at = 0
    while at < len(plain):
        message = plain[at]
        mark = message.metadata.get(KEY)
        size = int(mark.get("messages", 1)) if isinstance(mark, Mapping) else 1
        if isinstance(mark, Mapping) and "record" in mark and _is_group(plain, at, size):
            chunk = plain[at:at + size]
            records.append(unpack(mark, [part for m in chunk for part in m.parts]))
        else:
            chunk = [message]
            record = _from_rows(message, names)
            if record is not None and times[at] is not None:
                record["timestamp"] = times[at]
            if record is not None:
                records.append(record)
        for m in chunk:
            names.update((call.id, call.name) for call in m.tool_calls if call.id)
        at += len(chunk)
    return ModelMessagesTypeAdapter.validate_python(records)


def _is_group(messages: Sequence[store.Message], at: int, size: int) -> bool:
    if size < 1 or at + size > len(messages):
        return False
    for message in messages[at + 1:at + size]:
        mark = message.metadata.get(KEY)
        if not (isinstance(mark, Mapping) and mark.get("continues")):
            return False
    return True


def _from_rows(message: store.Message, names: Mapping[str, str]) -> dict[str, Any] | None:
    """A message written otherwise, as a pydantic-ai message record (``None``: nothing in it)."""
    if message.role == "assistant":
        parts: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, store.TextPart) and part.text:
                parts.append({"part_kind": "text", "content": part.text})
            elif isinstance(part, store.ThinkingPart):
                parts.append({"part_kind": "thinking", "content": part.text,
                              "signature": part.signature})
            elif isinstance(part, store.ToolCall | store.InvalidToolCall):
                parts.append({"part_kind": "tool-call", "tool_name": part.name,
                              "args": part.arguments_text, "tool_call_id": part.id or ""})
        return {"kind": "response", "parts": parts} if parts else None
    parts = []
    for part in message.parts:
        if isinstance(part, store.ToolResult):
            name = part.name or names.get(part.call_id or "", store.UNKNOWN_TOOL)
            parts.append({"part_kind": "tool-return", "tool_name": name,
                          "content": part.content, "tool_call_id": part.call_id or "",
                          "outcome": "failed" if part.is_error else "success"})
        elif isinstance(part, store.TextPart) and part.text:
            kind = "system-prompt" if message.role in ("system", "developer") else "user-prompt"
            parts.append({"part_kind": kind, "content": part.text})
    return {"kind": "request", "parts": parts} if parts else None
