"""Reader of Cursor's agent chats in the editor's ``state.vscdb`` (domain).

Cursor is closed source: the format is learnt from what open archives and studies of the
store document (read to learn, nothing copied): the ``cursorDiskKV`` keys and the bubble
and composer fields from ``Dicklesworthstone/franken_agent_detection``
``src/connectors/cursor.rs`` @6ae73d5f (the connector of cass), public storage references
of the composer (``_v`` 3 to 10) and bubble (``_v`` 3) JSON, and the model-facing tool
names of Cursor's published agent prompts (0.47 to 2.2). See ``docs/agents/cursor.md``.

Table ``cursorDiskKV`` (``key TEXT UNIQUE, value BLOB``); the rows read (the layout's
``where``: the table also holds the editor's own state, never read):

* ``composerData:<composer id>``: a chat. ``composerId``, ``name`` (its title),
  ``createdAt`` / ``lastUpdatedAt`` (Unix ms), ``modelConfig.modelName``,
  ``fullConversationHeadersOnly`` (``[{bubbleId, type}]``: the messages in order; older
  chats keep the bubbles inline in ``conversation``), ``subComposerIds`` (its subagents'
  chats), ``unifiedMode`` / ``forceMode``, ``status``. The composer also holds encryption
  keys (``blobEncryptionKey`` ...): only the fields named here are kept.
* ``bubbleId:<composer id>:<bubble id>``: a message. ``type`` 1 (the user) or 2 (the
  assistant), ``text``, ``createdAt`` (ISO 8601), ``thinking`` ``{text, signature}``,
  ``tokenCount`` ``{inputTokens, outputTokens}``, ``workspaceProjectDir`` /
  ``workspaceUris``, and for a tool call ``toolFormerData``: ``name``, ``toolCallId``,
  ``status`` (``completed``, ``error``, ``cancelled``, ``loading`` ...), ``rawArgs`` (the
  model's arguments, JSON text) or ``params`` (the editor's), ``result`` (JSON text or text).

What it becomes:

* A user bubble is a user message, an assistant bubble an assistant message (its thinking,
  text and call); a call's result is a ``tool`` message right after it (key
  ``<bubble>:result``). A status of ``error`` / ``cancelled`` / ``rejected`` / ``aborted``
  marks an error; a call without a result (``loading``, ``pending``) has none.
* The bubble's ``createdAt`` is the message's time; the chat's ``createdAt`` and
  ``lastUpdatedAt`` its start and end.
* Usage: a bubble's ``tokenCount`` (when it counts anything) on its message.
* A subagent's composer (named in a parent's ``subComposerIds``) is linked to its parent,
  and to the parent's ``task`` call whose arguments or result name it.
* A composer without messages (a chat opened and never used) is skipped, counted; a bubble
  no composer lists (an edit's undone turn) likewise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from store.agents.registry import FileInput
from store.core.arguments import loads_json
from store.core.errors import ImportFileError, StoreError
from store.core.lineage import SessionLink
from store.core.model import Message, Part, TextPart, ThinkingPart, ToolResult, make_tool_call
from store.importers.base import Collector
from store.importers.lines import moment, text_of
from store.usage.tokens import TokenUsage

__all__ = ["read_cursor", "read_file"]

_SOURCE = "cursor"
_ERRORS = frozenset({"error", "failed", "cancelled", "canceled", "rejected", "aborted"})
_PENDING = frozenset({"loading", "pending", "running", "generating", ""})
_TASKS = frozenset({"task", "task_v2"})
#: The composer fields kept in the session's metadata (never its keys or its editor state).
_KEPT = ("unifiedMode", "forceMode", "status", "isAgentic", "_v", "subComposerIds")


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    return loads_json(value) if isinstance(value, str) else None


def read_cursor(tables: Mapping[str, list[dict[str, Any]]], collector: Collector) -> None:
    """Cursor's ``cursorDiskKV`` rows (see the module docstring)."""
    composers: dict[str, dict[str, Any]] = {}
    bubbles: dict[str, dict[str, Any]] = {}
    for row in tables.get("cursorDiskKV", ()):
        key = str(row.get("key") or "")
        try:
            value = _json(row.get("value"))
        except (ValueError, UnicodeDecodeError) as exc:
            collector.problem(None, f"cursor {key!r}: not JSON ({exc})")
            continue
        if value is None:  # (a deleted bubble is kept as JSON null)
            collector.skip("cursor: empty row")
            continue
        if not isinstance(value, dict):
            collector.problem(None, f"cursor {key!r}: not a JSON object")
            continue
        if key.startswith("composerData:"):
            composers[key.removeprefix("composerData:")] = value
        else:
            bubbles[key.removeprefix("bubbleId:")] = value
    parents = {str(child): parent for parent, data in composers.items()
               for child in data.get("subComposerIds") or () if isinstance(child, str)}
    used: set[str] = set()
    for sid, data in composers.items():
        try:
            _read_composer(sid, data, bubbles, composers, parents.get(sid), used, collector)
        except (StoreError, TypeError, ValueError) as exc:
            collector.problem(None, f"cursor composer {sid!r}: {exc}")
    for _ in set(bubbles) - used:
        collector.skip("cursor: a bubble no composer lists")


def _conversation(sid: str, data: Mapping[str, Any], bubbles: Mapping[str, dict[str, Any]],
                  used: set[str], collector: Collector) -> list[tuple[str, Mapping[str, Any]]]:
    """The chat's bubbles in order, as ``(bubble id, bubble)``."""
    headers = data.get("fullConversationHeadersOnly")
    found: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(headers, list) and headers:
        for header in headers:
            bid = text_of(header.get("bubbleId")) if isinstance(header, Mapping) else None
            bubble = bubbles.get(f"{sid}:{bid}") if bid else None
            if bid is None or bubble is None:
                collector.skip("cursor: a listed bubble not stored")
                continue
            used.add(f"{sid}:{bid}")
            found.append((bid, bubble))
        return found
    inline = data.get("conversation")  # (older chats: the bubbles inline)
    for index, bubble in enumerate(inline if isinstance(inline, list) else ()):
        if isinstance(bubble, Mapping):
            found.append((text_of(bubble.get("bubbleId")) or f"{index}", bubble))
    return found


def _cwd(conversation: list[tuple[str, Mapping[str, Any]]]) -> str | None:
    for _, bubble in conversation:
        folder = text_of(bubble.get("workspaceProjectDir"))
        if folder:
            return folder
        for uri in bubble.get("workspaceUris") or ():
            if isinstance(uri, str) and uri.startswith(("file://", "vscode-remote://")):
                path = unquote(urlsplit(uri).path)
                if len(path) > 2 and path[0] == "/" and path[2] == ":":  # /c:/Users/...
                    path = path[1:]
                if path:
                    return path
    return None


def _read_composer(sid: str, data: Mapping[str, Any], bubbles: Mapping[str, dict[str, Any]],
                   composers: Mapping[str, Mapping[str, Any]], parent: str | None,
                   used: set[str], collector: Collector) -> None:
    conversation = _conversation(sid, data, bubbles, used, collector)
    if not conversation:
        collector.skip("cursor: a chat without messages")
        return
    config = data.get("modelConfig")
    metadata: dict[str, Any] = {k: data[k] for k in _KEPT if data.get(k) not in (None, "", [])}
    tags: tuple[str, ...] = ("cursor",)
    call = _spawning_call(sid, composers[parent], bubbles) if parent in composers \
        and parent is not None else None
    if parent:
        tags = ("cursor", "subagent")
        metadata["parent_session"] = parent
        if call:
            metadata["parent_call_id"] = call
    session = collector.session(
        sid, title=text_of(data.get("name")), cwd=_cwd(conversation), tags=tags,
        metadata=metadata,
        model=text_of(config.get("modelName")) if isinstance(config, Mapping) else None)
    if parent:
        session.parent = SessionLink(parent, "subagent", call)
    session.started_at = moment(data.get("createdAt"))
    session.ended_at = moment(data.get("lastUpdatedAt")) or session.started_at
    for bid, bubble in conversation:
        _add_bubble(bid, bubble, session.model, session, collector)


def _spawning_call(child: str, parent: Mapping[str, Any],
                   bubbles: Mapping[str, dict[str, Any]]) -> str | None:
    """The parent's ``task`` call whose arguments or result name the child's composer."""
    for header in parent.get("fullConversationHeadersOnly") or ():
        bid = header.get("bubbleId") if isinstance(header, Mapping) else None
        bubble = bubbles.get(f"{parent.get('composerId')}:{bid}")
        tool = bubble.get("toolFormerData") if isinstance(bubble, Mapping) else None
        if isinstance(tool, Mapping) and tool.get("name") in _TASKS:
            said = " ".join(str(tool.get(k) or "") for k in ("rawArgs", "params", "result"))
            if child in said and text_of(tool.get("toolCallId")):
                return str(tool["toolCallId"])
    return None


def _arguments(tool: Mapping[str, Any]) -> Any:
    for name in ("rawArgs", "params"):
        value = tool.get(name)
        if isinstance(value, str) and value.strip():
            return value  # (JSON text: parsed, or kept as invalid, by make_tool_call)
        if isinstance(value, Mapping) and value:
            return dict(value)
    return {}


def _add_bubble(bid: str, bubble: Mapping[str, Any], model: str | None, session: Any,
                collector: Collector) -> None:
    kind = bubble.get("type")
    meta = {"timestamp": bubble.get("createdAt")} if bubble.get("createdAt") else {}
    text = text_of(bubble.get("text"))
    if kind == 1:
        if text is None:
            collector.skip("cursor: a user bubble without text")
            return
        collector.add(session, Message("user", (TextPart(text),), _SOURCE, bid, metadata=meta),
                      bid)
        return
    if kind != 2:
        collector.problem(None, f"cursor bubble {bid!r}: type {kind!r} is neither 1 (user) "
                                "nor 2 (assistant)")
        return
    parts: list[Part] = []
    thinking = bubble.get("thinking")
    if isinstance(thinking, Mapping) and text_of(thinking.get("text")):
        parts.append(ThinkingPart(str(thinking["text"]), text_of(thinking.get("signature"))))
    if text:
        parts.append(TextPart(text))
    tool = bubble.get("toolFormerData")
    result: ToolResult | None = None
    if isinstance(tool, Mapping) and text_of(tool.get("name")):
        call_id = text_of(tool.get("toolCallId")) or bid
        status = str(tool.get("status") or "")
        extras = {"status": status} if status else None
        parts.append(make_tool_call(call_id, str(tool["name"]), _arguments(tool),
                                    extras=extras, source=_SOURCE))
        if status.lower() not in _PENDING or tool.get("result") not in (None, ""):
            result = ToolResult(call_id, _result(tool.get("result")),
                                status.lower() in _ERRORS, str(tool["name"]),
                                {"status": status} if status else {}, _SOURCE)
    if not parts:
        collector.skip("cursor: an assistant bubble without content")
        return
    counts = bubble.get("tokenCount")
    usage = None
    if isinstance(counts, Mapping):
        usage = TokenUsage(_count(counts.get("inputTokens")), _count(counts.get("outputTokens")),
                           model=model)
        usage = usage if usage.total else None
    collector.add(session, Message("assistant", tuple(parts), _SOURCE, bid, metadata=meta), bid,
                  usage=usage)
    if result is not None:
        collector.add(session, Message("tool", (result,), _SOURCE, metadata=meta),
                      f"{bid}:result")


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) \
        and value > 0 else 0


def _result(value: Any) -> Any:
    """A result as recorded: its JSON value when it is a JSON object or list, else as it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return loads_json(value)
        except ValueError:
            return value
    return value


def read_file(file: FileInput, collector: Collector) -> None:
    """Cursor keeps its chats in a database only: any other file is not the editor's."""
    raise ImportFileError(file.path, "not Cursor's state database (User/globalStorage/"
                                     "state.vscdb)")
