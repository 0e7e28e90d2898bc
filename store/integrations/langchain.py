"""A LangChain ``BaseChatMessageHistory`` on a :class:`~store.TranscriptStore`.

Install with ``pip install 'transcript-store[langchain]'``::

    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from store.integrations.langchain import TranscriptChatMessageHistory

    history = TranscriptChatMessageHistory("chat-1", "sqlite:///langchain-readme.sqlite")
    history.add_messages([
        HumanMessage("List the files."),
        AIMessage("", tool_calls=[{"name": "ls", "args": {"path": "."}, "id": "call_1"}]),
        ToolMessage("README.md", tool_call_id="call_1"),
    ])
    assert history.messages[1].tool_calls[0]["args"] == {"path": "."}
    history.close()

Mapping (each LangChain message is one stored message, in order):

=====================================  ========================================================
``HumanMessage``                       ``user``: text parts (content blocks other than text
                                       are kept as opaque parts)
``AIMessage`` (and chunks)             ``assistant``: text parts, then one tool-call row per
                                       ``tool_calls`` entry (``args`` as the parsed input) and
                                       one per ``invalid_tool_calls`` entry (``args`` kept as
                                       raw text: an invalid call when the parser refuses it)
``ToolMessage``                        ``tool``: one result (``tool_call_id``, ``content``,
                                       ``status="error"`` is an error result, ``name``)
``SystemMessage``                      ``system``
``FunctionMessage``, ``ChatMessage``   ``tool`` (a result by name) / the message's role
=====================================  ========================================================

Raw ``bytes`` in a message (image and data blocks, redacted reasoning) are stored as base64
under a marker (:data:`BYTES`) that gives the ``bytes`` back on read.

Each message's own JSON form (``message_to_dict``) is kept in its metadata (``"langchain"``)
without the values the rows hold (see :mod:`store.integrations`), so ``messages`` gives back
messages equal to those added. Messages of the session written otherwise (imported, other
integrations) are mapped back from their rows: text, tool calls, invalid tool calls, results.

The history is synchronous, as LangChain's interface is; the async methods (``aget_messages``,
``aadd_messages``, ``aclear``) run it in a worker thread (``asyncio.to_thread``), so an event
loop is never blocked by the database. ``BaseChatMessageHistory`` is deprecated since
langchain-core 1.6.4 (removal planned for 2.0); this class follows its interface as it is.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import store
from store.integrations import Source, StoreHandle, pack, require, unpack

if TYPE_CHECKING:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import BaseMessage

__all__ = ["BYTES", "ESCAPED", "KEY", "TranscriptChatMessageHistory", "decode_bytes",
           "encode_bytes", "from_langchain", "to_langchain"]

#: The metadata key under which a message's own JSON form is kept.
KEY = "langchain"
_SOURCE = "langchain"
Role = Literal["system", "developer", "user", "assistant", "tool"]
_ROLES: Mapping[str, Role] = {
    "human": "user", "user": "user", "ai": "assistant", "assistant": "assistant",
    "AIMessageChunk": "assistant", "system": "system", "developer": "developer",
    "tool": "tool", "function": "tool", "HumanMessageChunk": "user",
    "SystemMessageChunk": "system", "ToolMessageChunk": "tool",
}

def _require() -> None:
    require("langchain_core", "langchain", "TranscriptChatMessageHistory")


class _History:
    """The chat history of one session of a store (see the module doc).

    ``db`` is an open store (shared; the caller closes it) or a URL (opened on first use;
    :meth:`close` closes it); ``None`` means ``TRANSCRIPT_STORE_URL`` or the default SQLite
    file. ``title`` and ``tags`` label the session when it is created.
    """

    def __init__(
        self,
        session_id: str,
        db: store.TranscriptStore | str | None = None,
        *,
        title: str | None = None,
        tags: Sequence[str] = ("langchain",),
    ) -> None:
        _require()
        super().__init__()
        self.session_id = session_id
        self._labels: dict[str, Any] = {"title": title, "tags": tuple(tags)}
        self._handle = StoreHandle(db)

    def _store(self) -> store.TranscriptStore:
        return self._handle.get()

    @property
    def messages(self) -> list[BaseMessage]:
        """The session's messages, oldest first (empty when the session does not exist)."""
        try:
            transcript = self._store().load(self.session_id)
        except store.SessionNotFound:
            return []
        return to_langchain(transcript)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages, all or nothing (one transaction)."""
        converted = from_langchain(messages)
        if converted:
            self._store().append(self.session_id, converted, keys=[None] * len(converted),
                                 **self._labels)

    def clear(self) -> None:
        """Delete the session and everything in it."""
        try:
            self._store().delete_session(self.session_id)
        except store.SessionNotFound:
            pass

    async def aget_messages(self) -> list[BaseMessage]:
        return await asyncio.to_thread(lambda: self.messages)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await asyncio.to_thread(self.add_messages, messages)

    async def aclear(self) -> None:
        await asyncio.to_thread(self.clear)

    def close(self) -> None:
        """Close the store if this history opened it (a shared store stays open)."""
        self._handle.close()


if TYPE_CHECKING:

    class TranscriptChatMessageHistory(_History, BaseChatMessageHistory):  # type: ignore[override]
        """A LangChain ``BaseChatMessageHistory`` on one session of a store."""

else:

    def __getattr__(name: str) -> Any:
        if name == "TranscriptChatMessageHistory":
            return _history_class()
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_DEPRECATED = """
    LangChain's ``BaseChatMessageHistory`` is deprecated since langchain-core 1.6.4 (removal
    planned for 2.0); see https://docs.langchain.com/oss/python/langchain/short-term-memory for
    its successor. This class follows the interface as it is.
"""


@functools.cache
def _history_class() -> type:
    """The class, built on first use: LangChain is imported only then."""
    _require()
    from langchain_core.chat_history import BaseChatMessageHistory

    return type("TranscriptChatMessageHistory", (_History, BaseChatMessageHistory), {
        "__module__": __name__, "__qualname__": "TranscriptChatMessageHistory",
        "__doc__": "A LangChain ``BaseChatMessageHistory`` on one session of a store.\n\n"
                   + (_History.__doc__ or "") + _DEPRECATED,
    })


# -- LangChain messages to store messages ---------------------------------------------------------


def from_langchain(messages: Sequence[BaseMessage]) -> list[store.Message]:
    """LangChain messages as store messages, each keeping its own JSON form in metadata.

    Anything else in the list (a ``str``, a ``dict`` ...) raises ``RecordError`` naming its
    index and type, before anything is converted (so ``add_messages`` stores nothing)."""
    _require()
    from langchain_core.messages import BaseMessage, message_to_dict

    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        raise store.RecordError("expected a list of LangChain messages (BaseMessage), got "
                                f"a {type(messages).__name__}")
    given = list(messages)
    for index, message in enumerate(given):
        if not isinstance(message, BaseMessage):
            raise store.RecordError(
                f"message {index} is a {type(message).__name__}, not a LangChain message "
                "(BaseMessage such as HumanMessage or AIMessage); nothing was stored")
    return [_from_dict(encode_bytes(message_to_dict(message))) for message in given]


#: A raw ``bytes`` value (an image or data block, redacted reasoning) is stored as
#: ``{BYTES: "<base64>"}``; a dict of the message that itself holds one of the two marker keys
#: is wrapped as ``{ESCAPED: dict}``, so reading restores exactly what was given.
BYTES = "$transcript_store.bytes"
ESCAPED = "$transcript_store.dict"


def encode_bytes(value: Any) -> Any:
    """``value`` with every ``bytes`` in it replaced by a base64 marker (JSON all through)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return {BYTES: base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Mapping):
        out = {key: encode_bytes(item) for key, item in value.items()}
        return {ESCAPED: out} if BYTES in out or ESCAPED in out else out
    if isinstance(value, list | tuple):
        return [encode_bytes(item) for item in value]
    return value


def decode_bytes(value: Any) -> Any:
    """The inverse of :func:`encode_bytes`."""
    if isinstance(value, Mapping):
        if len(value) == 1 and isinstance(value.get(BYTES), str):
            return base64.b64decode(value[BYTES], validate=True)
        if len(value) == 1 and isinstance(value.get(ESCAPED), Mapping):
            return {key: decode_bytes(item) for key, item in value[ESCAPED].items()}
        return {key: decode_bytes(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_bytes(item) for item in value]
    return value


def _from_dict(record: dict[str, Any]) -> store.Message:
    kind = record.get("type")
    data = record.get("data")
    if not isinstance(data, Mapping) or not isinstance(kind, str):
        raise store.RecordError(f"not a LangChain message: {record!r}")
    role: Role = _ROLES.get(kind, "user")
    if kind == "chat":
        role = _ROLES.get(str(data.get("role")), "user")
    parts: list[store.Part] = []
    candidates: list[Source] = []
    content = data.get("content")
    if role == "tool":
        status = data.get("status")
        call_id = data.get("tool_call_id")
        name = data.get("name")
        parts.append(store.ToolResult(call_id if isinstance(call_id, str) else None, content,
                                      status == "error", name if isinstance(name, str) else None,
                                      source=_SOURCE))
        candidates.append((("data", "content"), 0, "content"))
    else:
        _content_parts(content, parts, candidates)
    for field, valid in (("tool_calls", True), ("invalid_tool_calls", False)):
        calls = data.get(field)
        if not isinstance(calls, list):
            continue
        for number, call in enumerate(calls):
            if not isinstance(call, Mapping):
                raise store.RecordError(f"a LangChain {field} entry must be an object: {call!r}")
            part = _call_part(call, valid)
            candidates.append((("data", field, number, "args"), len(parts),
                               "input" if valid else "arguments_text"))
            parts.append(part)
    message_id = data.get("id")
    packed = pack(record, candidates, parts)
    return store.Message(role, tuple(parts), _SOURCE,
                         message_id if isinstance(message_id, str) and message_id else None,
                         metadata={KEY: packed})


def _content_parts(content: Any, parts: list[store.Part], candidates: list[Source]) -> None:
    if isinstance(content, str):
        if content:
            candidates.append((("data", "content"), len(parts), "text"))
            parts.append(store.TextPart(content))
        return
    if not isinstance(content, list):
        return
    for number, block in enumerate(content):
        if isinstance(block, str):
            candidates.append((("data", "content", number), len(parts), "text"))
            parts.append(store.TextPart(block))
        elif isinstance(block, Mapping) and block.get("type") == "text" and isinstance(
                block.get("text"), str):
            candidates.append((("data", "content", number, "text"), len(parts), "text"))
            parts.append(store.TextPart(block["text"]))
        else:
            kind = block.get("type") if isinstance(block, Mapping) else None
            candidates.append((("data", "content", number), len(parts), "data"))
            parts.append(store.OpaquePart(kind if isinstance(kind, str) else "block", block))


def _call_part(call: Mapping[str, Any], valid: bool) -> store.ToolCall | store.InvalidToolCall:
    """A LangChain tool call (``args`` an object) or invalid tool call (``args`` raw text)."""
    call_id = call.get("id")
    name = call.get("name")
    args = call.get("args")
    if not valid and args is None:
        args = ""
    return store.normalize_tool_call(
        {"id": call_id if isinstance(call_id, str) else None, "type": "function",
         "function": {"name": name if isinstance(name, str) and name else store.UNKNOWN_TOOL,
                      "arguments": args}},
    )


# -- store messages to LangChain messages ---------------------------------------------------------


def to_langchain(
    messages: store.Transcript | Sequence[store.StoredMessage] | Sequence[store.Message],
) -> list[BaseMessage]:
    """Stored messages as LangChain messages: those written by this module exactly as they were
    added, others mapped from their rows (empty messages are skipped)."""
    _require()
    from langchain_core.messages import messages_from_dict

    out: list[BaseMessage] = []
    for entry in messages:
        message = entry.message if isinstance(entry, store.StoredMessage) else entry
        mark = message.metadata.get(KEY)
        if isinstance(mark, Mapping) and "record" in mark:
            try:
                out.extend(messages_from_dict([decode_bytes(unpack(mark, message.parts))]))
            except ValueError:  # a custom message type LangChain cannot rebuild: its rows
                out.extend(_from_rows(message))
        else:
            out.extend(_from_rows(message))
    return out


def _from_rows(message: store.Message) -> list[BaseMessage]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[BaseMessage] = []
    for result in message.tool_results:
        content = result.content
        if not isinstance(content, str | list):
            content = json.dumps(content, ensure_ascii=False)
        out.append(ToolMessage(content=content, tool_call_id=result.call_id or "",
                               name=result.name, status="error" if result.is_error else "success"))
    text = message.text
    if message.role == "assistant":
        calls = [c for c in message.tool_calls if isinstance(c, store.ToolCall)]
        invalid = [c for c in message.tool_calls if isinstance(c, store.InvalidToolCall)]
        if text or calls or invalid:
            out.append(AIMessage(
                content=text,
                tool_calls=[{"name": c.name, "args": dict(c.input), "id": c.id,
                             "type": "tool_call"} for c in calls],
                invalid_tool_calls=[{"name": c.name, "args": c.arguments_text, "id": c.id,
                                     "error": c.error_message, "type": "invalid_tool_call"}
                                    for c in invalid],
            ))
    elif message.role in ("system", "developer") and text:
        out.append(SystemMessage(content=text))
    elif text:
        out.append(HumanMessage(content=text))
    return out
