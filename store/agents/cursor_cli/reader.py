"""Reader of ``cursor-agent``'s chat stores (``~/.cursor/chats/<hash>/<id>/store.db``;
domain).

Cursor is closed source: the format is learnt from what open projects document of it (read
to learn, nothing copied): the tables, the hex-encoded ``meta`` row and the blob tree from
public references of the "Cursor agent database format" and the message shapes from
readers of the store (see ``docs/agents/cursor-cli.md``), checked against the Vercel AI
SDK's message format the blobs are written in (``CoreMessage``: ``role``, ``content`` parts
``text``, ``reasoning``, ``tool-call`` {toolCallId, toolName, args}, ``tool-result``
{toolCallId, toolName, result, isError}).

* ``meta``: the row ``"0"`` holds JSON written as hex text: ``agentId`` (the chat's id,
  its folder's name), ``latestRootBlobId``, ``name`` (the title), ``mode``, ``createdAt``
  (Unix ms), ``lastUsedModel``.
* ``blobs``: ``id`` (the SHA-256 of ``data``, hex) and ``data``. A message blob is the
  JSON of one message; the root blob (and any blob that lists others) is protobuf whose
  field 1 repeats the 32-byte ids of the messages in order. The root also holds the path of
  the folder the agent ran in, confirmed by its MD5 being the chat's folder name (the store
  names no field for it: only a confirmed path is read).

What it becomes: each listed message in order (key ``<position>:<blob id>``: a blob is
addressed by its content, so two equal messages share one). A user message's
``<user_query>`` is what the user typed; the context the agent wraps around it
(``<user_info>``, ``<rules>`` ...) is kept as a ``cursor_context`` part, and a message of
context only is no prompt. ``tool`` messages carry the results (``isError`` marks an
error). The store records no time per message and no usage: the chat's ``createdAt`` is its
start.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import ImportFileError, RecordError, StoreError
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

__all__ = ["read_cursor_cli", "read_file"]

_SOURCE = "cursor-cli"
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_MAX_DEPTH = 8  # (blobs listing blobs: how deep the tree is followed)


def read_cursor_cli(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """A chat store's ``meta`` and ``blobs`` rows (see the module docstring)."""
    meta = _meta(tables.get("meta", ()))
    if meta is None:
        collector.problem(None, "no cursor-agent chat: the meta row \"0\" is not the agent's "
                                "(hex-encoded JSON with agentId and latestRootBlobId)")
        return
    blobs = {str(r.get("id")): r.get("data") for r in tables.get("blobs", ())}
    chat = collector.source.path.parent
    sid = text_of(meta.get("agentId")) or chat.name
    root = blobs.get(str(meta.get("latestRootBlobId")))
    if not isinstance(root, bytes):
        collector.skip("cursor-cli: a chat without its root blob (nothing sent yet)")
        return
    ids: list[str] = []
    strings: list[str] = []
    try:
        _walk(root, blobs, ids, strings, 0)
    except ValueError as exc:
        collector.problem(None, f"cursor-cli chat {sid!r}: its root blob cannot be read: {exc}")
        return
    folder = chat.parent.name
    cwd = next((s for s in strings
                if hashlib.md5(s.encode("utf-8"), usedforsecurity=False).hexdigest() == folder),
               None)
    metadata = {"mode": meta["mode"]} if text_of(meta.get("mode")) else {}
    session = collector.session(sid, title=text_of(meta.get("name")), cwd=cwd,
                                model=text_of(meta.get("lastUsedModel")), metadata=metadata)
    session.started_at = moment(meta.get("createdAt"))
    for position, blob_id in enumerate(ids):
        data = blobs.get(blob_id)
        if not isinstance(data, bytes | str):
            collector.skip("cursor-cli: a listed blob not stored")
            continue
        try:
            _add(session, f"{position}:{blob_id}", loads_json(data), collector)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"cursor-cli blob {blob_id[:16]}: {exc}")


def _meta(rows: Any) -> dict[str, Any] | None:
    for row in rows:
        if str(row.get("key")) != "0":
            continue
        value = row.get("value")
        if isinstance(value, bytes):
            value = value.decode("ascii", "replace")
        if not isinstance(value, str):
            return None
        try:
            text = bytes.fromhex(value).decode("utf-8") if not value.lstrip().startswith(
                "{") else value
            found = loads_json(text)
        except (ValueError, UnicodeDecodeError):
            return None
        if isinstance(found, dict) and found.get("latestRootBlobId") is not None:
            return found
        return None
    return None


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise RecordError("a varint runs past the end")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(data: bytes) -> list[tuple[int, bytes | None]]:
    """A protobuf message's fields as ``(number, bytes of a length-delimited field)``
    (``None`` for numeric ones)."""
    found: list[tuple[int, bytes | None]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = _varint(data, pos)
            found.append((number, None))
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise RecordError(f"field {number} runs past the end")
            found.append((number, data[pos:pos + size]))
            pos += size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
            found.append((number, None))
        else:
            raise RecordError(f"wire type {wire} of field {number}")
    if pos != len(data):
        raise RecordError("a field runs past the end")
    return found


def _walk(data: bytes, blobs: Mapping[str, Any], ids: list[str], strings: list[str],
          depth: int) -> None:
    """The message ids a listing blob names in order (blobs that list blobs followed), and
    the text values it holds."""
    for number, value in _fields(data):
        if value is None:
            continue
        if number == 1 and len(value) == 32:
            child = value.hex()
            nested = blobs.get(child)
            if (isinstance(nested, bytes) and nested[:1] != b"{" and depth < _MAX_DEPTH
                    and _lists(nested)):
                _walk(nested, blobs, ids, strings, depth + 1)
            else:
                ids.append(child)
            continue
        try:
            strings.append(value.decode("utf-8"))
        except UnicodeDecodeError:
            continue


def _lists(data: bytes) -> bool:
    try:
        return any(n == 1 and v is not None and len(v) == 32 for n, v in _fields(data))
    except ValueError:
        return False


def _add(session: ParsedSession, key: str, message: Any, collector: Collector) -> None:
    if not isinstance(message, Mapping):
        raise StoreError("a message blob must be a JSON object")
    role = message.get("role")
    content = message.get("content")
    items = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(items, list):
        raise StoreError(f"a {role} message's content must be text or a list of parts")
    if role == "tool":
        results = [_result(p) for p in items if isinstance(p, Mapping)
                   and p.get("type") == "tool-result"]
        if results:
            collector.add(session, Message("tool", tuple(results), _SOURCE), key)
        return
    if role not in ("user", "assistant", "system"):
        raise StoreError(f"role {role!r} is not user, assistant, system or tool")
    parts: list[Part] = []
    for item in items:
        parts += _parts(role, item)
    if not parts:
        collector.skip(f"cursor-cli: an empty {role} message")
        return
    collector.add(session, Message(role, tuple(parts), _SOURCE), key)


def _parts(role: str, item: Any) -> list[Part]:
    if not isinstance(item, Mapping):
        raise StoreError(f"a content part must be an object, got {str(item)[:80]!r}")
    kind = item.get("type")
    if kind == "text" and isinstance(item.get("text"), str):
        text = item["text"]
        if role != "user":
            return [TextPart(text)]
        query = _QUERY.search(text)
        if query is None:  # (context the agent sends: no prompt unless plain text)
            stripped = text.lstrip()
            return [OpaquePart("cursor_context", {"text": text})] if stripped.startswith(
                "<") else [TextPart(text)]
        context = (text[:query.start()] + text[query.end():]).strip()
        found: list[Part] = [OpaquePart("cursor_context", {"text": context})] if context else []
        return [*found, TextPart(query.group(1))]
    if kind == "reasoning" and isinstance(item.get("text"), str):
        return [ThinkingPart(item["text"], text_of(item.get("signature")))]
    if kind == "tool-call":
        arguments = item.get("args", item.get("input"))
        return [make_tool_call(text_of(item.get("toolCallId")), str(item.get("toolName") or ""),
                               arguments if arguments is not None else {}, source=_SOURCE)]
    return [OpaquePart(f"cursor_{kind}", dict(item))]


def _result(part: Mapping[str, Any]) -> ToolResult:
    result = part.get("result", part.get("output"))
    if isinstance(result, list) and all(isinstance(r, Mapping) and r.get("type") == "text"
                                        for r in result):
        result = "".join(str(r.get("text") or "") for r in result)
    return ToolResult(text_of(part.get("toolCallId")), result, part.get("isError") is True,
                      text_of(part.get("toolName")), {}, _SOURCE)


def read_file(file: FileInput, collector: Collector) -> None:
    """cursor-agent keeps its chats in a database only: any other file is not its."""
    raise ImportFileError(file.path, "not a cursor-agent chat store (chats/<hash>/<id>/"
                                     "store.db)")
