"""Assemble tool calls from provider streaming events.

Contract::

    assembler = StreamAssembler("anthropic")      # or "auto"
    for event in events:
        done = assembler.feed(event)              # calls completed by this event
    done = assembler.finish()                     # calls still open at end of stream
    assembler.calls                               # every completed call, in completion order

    assemble(events, provider="auto")             # the same, in one call

Providers: ``openai_chat`` (``chat.completion.chunk``, including legacy ``function_call``
deltas), ``openai_responses``, ``anthropic`` (Messages), ``bedrock`` (converse-stream events as
boto3 yields them: ``{"<eventType>": payload}``), ``cohere`` (v2) and ``gemini`` (``alt=sse``
chunks, or the elements of the JSON-array form). ``auto`` detects the provider from the first
event that names one and keeps it.

Events are objects (one SSE ``data:`` payload each) or text: ``"[DONE]"`` is ignored, other
text is decoded as the JSON of one payload. ``{"_sse_event": name, "data": payload}`` is
unwrapped; error events (an ``error`` SSE event such as Groq's ``failed_generation``, a payload
of ``type: "error"`` or holding only ``error``) carry no call and are ignored. Events that carry
no tool-call data (pings, usage, text and reasoning deltas, padding such as Bedrock ``p`` or
OpenAI ``obfuscation``) are ignored.

Keying and completion (``wire-formats.md`` §2-§7d):

* ``openai_chat``: keyed by ``(choices[].index, tool_calls[].index)``; the first fragment of a
  key carries ``id`` and ``function.name``. A legacy ``function_call`` has no index and no id:
  one call per choice. Calls complete when their choice has a ``finish_reason``, else at
  :meth:`~StreamAssembler.finish`. Extras: ``index`` (``choice_index`` when not 0,
  ``extra_content`` when given); legacy calls get ``{"format": "function_call"}``.
* ``openai_responses``: keyed by ``item_id`` (or ``output_index``); ``call_id`` is the call id
  and the item ``id`` goes into extras as ``item_id``. A call completes at
  ``function_call_arguments.done`` or ``output_item.done``, whose full string is preferred over
  the joined deltas. ``custom_tool_call`` input is raw text, wrapped as ``{"input": raw}`` with
  extras ``{"format": "custom"}``.
* ``anthropic``: keyed by content-block index; ``tool_use`` blocks complete at
  ``content_block_stop``; the start block's ``input`` (always ``{}``) is used only when no
  delta arrived. ``server_tool_use`` and other blocks are tracked but are not client calls.
  Extras: ``caller``.
* ``bedrock``: keyed by ``contentBlockIndex``; ``toolUse.input`` fragments are strings; a call
  completes at ``contentBlockStop``. Server tools (``toolUse.type == "server_tool_use"``) are
  not client calls.
* ``cohere``: keyed by ``index``; ``tool_calls`` is an object inside deltas; a call completes
  at ``tool-call-end``.
* ``gemini``: each ``functionCall`` (or ``function_call``) part is one complete call; ``id`` is
  optional (``None``); the part's ``thoughtSignature`` goes into extras as
  ``thought_signature``.

Fragments are kept in arrival order (a fragment may split a JSON token or an escape) and joined
once, at completion, where :func:`store.core.model.make_tool_call` parses them: corrupt arguments
give an :class:`~store.core.model.InvalidToolCall` keeping the raw text, never ``{}``; an empty
joined text gives ``{}``. ``source`` is ``"<provider>_stream"``.

Nothing is dropped silently: a fragment for no open call, an event whose structure is wrong
(a delta that is not an object, a fragment that is not a string, a call without a name), an
event from which ``auto`` cannot tell the provider, or :meth:`~StreamAssembler.feed` after
:meth:`~StreamAssembler.finish` raises :class:`~store.core.errors.StreamError`, whose message names
the provider, the event type and the key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from store.core.errors import StreamError, UsageError
from store.core.model import InvalidToolCall, ToolCall
from store.stream.anthropic import AnthropicHandler
from store.stream.base import Handler
from store.stream.bedrock import BedrockHandler
from store.stream.cohere import CohereHandler
from store.stream.gemini import GeminiHandler
from store.stream.openai import OpenAIChatHandler, ResponsesHandler

__all__ = ["PROVIDERS", "StreamAssembler", "assemble", "detect_provider"]

#: The provider names :class:`StreamAssembler` accepts, besides ``"auto"``.
#: Handler class per provider name.
HANDLERS: dict[str, type[Handler]] = {
    h.provider: h
    for h in (
        OpenAIChatHandler,
        ResponsesHandler,
        AnthropicHandler,
        BedrockHandler,
        CohereHandler,
        GeminiHandler,
    )
}

PROVIDERS: tuple[str, ...] = tuple(HANDLERS)

_ANTHROPIC_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)
_COHERE_TYPES = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
        "debug",
    }
)
_BEDROCK_KEYS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop"}
)
_GEMINI_KEYS = frozenset(
    {"candidates", "usageMetadata", "usage_metadata", "promptFeedback", "prompt_feedback"}
)


def detect_provider(event: Mapping[str, Any]) -> str | None:
    """The provider whose stream an (unwrapped) event belongs to, or ``None`` when unknown."""
    etype = event.get("type")
    if type(etype) is str:
        if etype.startswith("response."):
            return "openai_responses"
        if etype in _ANTHROPIC_TYPES:
            return "anthropic"
        if etype in _COHERE_TYPES:
            return "cohere"
    if "choices" in event or event.get("object") == "chat.completion.chunk":
        return "openai_chat"
    if not _BEDROCK_KEYS.isdisjoint(event):
        return "bedrock"
    if not _GEMINI_KEYS.isdisjoint(event):
        return "gemini"
    return None


def _is_error(payload: Mapping[str, Any]) -> bool:
    return payload.get("type") == "error" or (len(payload) == 1 and "error" in payload)


def _unwrap(event: object) -> Mapping[str, Any] | None:
    """The payload object of an event, or ``None`` for events that carry nothing to assemble."""
    if isinstance(event, str):
        text = event.strip()
        if not text or text == "[DONE]":
            return None
        try:
            event = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise StreamError(f"stream event text is not JSON ({exc}): {text!r:.80}") from None
        if isinstance(event, str):
            return _unwrap(event)
    if not isinstance(event, Mapping):
        raise StreamError(f"a stream event must be an object or text, got {type(event).__name__}")
    if "_sse_event" in event:
        if event["_sse_event"] == "error":
            return None
        return _unwrap(event.get("data"))
    return None if _is_error(event) else event


class StreamAssembler:
    """Feed the events of one streamed response; collect the tool calls they complete.

    See the module docstring for the contract. ``provider`` is one of :data:`PROVIDERS` or
    ``"auto"``.
    """

    __slots__ = ("_calls", "_finished", "_handler", "_requested")

    def __init__(self, provider: str = "auto") -> None:
        if provider != "auto" and provider not in HANDLERS:
            raise UsageError(
                f"unknown stream provider {provider!r}; expected 'auto' or one of {PROVIDERS}"
            )
        self._requested = provider
        self._handler: Handler | None = None if provider == "auto" else HANDLERS[provider]()
        self._calls: list[ToolCall | InvalidToolCall] = []
        self._finished = False

    @property
    def provider(self) -> str | None:
        """The provider in use: the one given, or the detected one (``None`` until detected)."""
        return None if self._handler is None else self._handler.provider

    @property
    def calls(self) -> list[ToolCall | InvalidToolCall]:
        """Every call completed so far, in completion order (a copy)."""
        return list(self._calls)

    def feed(self, event: Mapping[str, Any] | str) -> list[ToolCall | InvalidToolCall]:
        """Take one event; return the calls it completes (often none, possibly several)."""
        if self._finished:
            raise StreamError(f"{self._requested} stream: event fed after finish()")
        payload = _unwrap(event)
        if payload is None:
            return []
        handler = self._handler
        if handler is None:
            detected = detect_provider(payload)
            if detected is None:
                keys = sorted(str(k) for k in payload)
                raise StreamError(
                    f"auto stream: cannot tell the provider from an event with keys {keys}"
                )
            handler = self._handler = HANDLERS[detected]()
        done = handler.handle(payload)
        self._calls.extend(done)
        return done

    def finish(self) -> list[ToolCall | InvalidToolCall]:
        """End the stream: complete and return the calls still open (parsed as they are)."""
        if self._finished or self._handler is None:
            self._finished = True
            return []
        self._finished = True
        done = self._handler.finish()
        self._calls.extend(done)
        return done


def assemble(
    events: Iterable[Mapping[str, Any] | str], provider: str = "auto"
) -> list[ToolCall | InvalidToolCall]:
    """Feed every event to a new :class:`StreamAssembler`, finish it, and return all calls."""
    assembler = StreamAssembler(provider)
    for event in events:
        assembler.feed(event)
    assembler.finish()
    return assembler.calls
