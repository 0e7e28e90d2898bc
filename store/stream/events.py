"""Stream handlers behind :class:`store.stream.assembler.StreamAssembler`.

The base, Anthropic, Bedrock, Cohere and Gemini (OpenAI Chat and Responses are in
:mod:`store.stream.openai`).

The contract (keying, completion, errors) is stated in :mod:`store.stream.assembler`; this
module holds one handler class per provider. A handler receives unwrapped event objects
(no ``"[DONE]"``, no ``_sse_event`` wrapper, no error events), keeps the open calls keyed as
the provider keys them, and returns the calls each event completes. Fragments are appended
to a list and joined once, at completion, where :func:`store.model.make_tool_call` parses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from store.errors import StreamError
from store.model import InvalidToolCall, ToolCall, make_tool_call

__all__ = [
    "AnthropicHandler",
    "BedrockHandler",
    "Call",
    "CohereHandler",
    "GeminiHandler",
    "Handler",
    "OpenCall",
]

Call = ToolCall | InvalidToolCall


class OpenCall:
    """A call being assembled: its id, name, extras and argument fragments in arrival order."""

    __slots__ = ("call_id", "custom", "extras", "final", "fragments", "initial", "name")

    def __init__(
        self,
        call_id: str | None,
        name: str,
        extras: dict[str, Any] | None = None,
        *,
        custom: bool = False,
        initial: Mapping[str, Any] | str | None = None,
    ) -> None:
        self.call_id = call_id
        self.name = name
        self.extras: dict[str, Any] = extras or {}
        self.custom = custom  # Responses custom_tool_call: raw text wrapped as {"input": raw}
        self.initial = initial  # arguments given at the start: used only if no fragment came
        self.final: str | None = None  # the full string of a `.done` event, preferred
        self.fragments: list[str] = []

    def build(self, source: str) -> Call:
        """Join the fragments (or take the ``.done`` string) and parse once."""
        text = self.final if self.final is not None else "".join(self.fragments)
        raw: object = text
        if self.final is None and not self.fragments and self.initial:
            raw = self.initial
        if self.custom:
            raw = {"input": raw}
        return make_tool_call(self.call_id, self.name, raw, extras=self.extras, source=source)


class Handler:
    """Base of the provider handlers: open calls by key, errors naming provider/key/event."""

    provider: ClassVar[str] = ""

    def __init__(self) -> None:
        self.open: dict[Any, OpenCall] = {}

    @property
    def source(self) -> str:
        return f"{self.provider}_stream"

    def handle(self, event: Mapping[str, Any]) -> list[Call]:  # pragma: no cover - abstract
        raise NotImplementedError

    def finish(self) -> list[Call]:
        """Complete every call still open, in the order they were opened."""
        return [self.complete(key) for key in list(self.open)]

    def complete(self, key: Any) -> Call:
        return self.open.pop(key).build(self.source)

    def error(self, event_type: object, key: object, problem: str) -> StreamError:
        where = "" if key is None else f" for key {key!r}"
        return StreamError(f"{self.provider} stream: {event_type} event{where}: {problem}")

    def no_open_call(self, event_type: object, key: object) -> StreamError:
        return self.error(event_type, key, "fragment for no open call")

    def obj(self, value: object, event_type: object, key: object, what: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(event_type, key, f"{what} is not an object: {value!r:.80}")
        return value

    def text(self, value: object, event_type: object, key: object, what: str) -> str | None:
        if value is not None and type(value) is not str:
            raise self.error(event_type, key, f"{what} is not a string: {value!r:.80}")
        return value

    def index(self, value: object, event_type: object, what: str) -> int:
        if type(value) is not int:
            raise self.error(event_type, None, f"{what} is not an integer: {value!r:.80}")
        return value

    def type_of(self, event: Mapping[str, Any]) -> str:
        etype = event.get("type")
        if type(etype) is not str:
            keys = sorted(str(k) for k in event)
            raise self.error("untyped", None, f"event has no string 'type' (keys {keys})")
        return etype

    def name_of(self, value: object, event_type: object, key: object) -> str:
        if type(value) is not str or not value:
            raise self.error(event_type, key, f"a call starts without a name: {value!r:.80}")
        return value

    def open_call(self, key: Any, call: OpenCall, event_type: object) -> OpenCall:
        if key in self.open:
            raise self.error(event_type, key, "a call starts at a key that is already open")
        self.open[key] = call
        return call


class AnthropicHandler(Handler):
    """Keyed by content-block index; tool_use parsed at content_block_stop."""

    provider = "anthropic"

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict[int, object] = {}  # open non-client blocks (text, server_tool_use...)

    def handle(self, event: Mapping[str, Any]) -> list[Call]:
        etype = self.type_of(event)
        if etype not in ("content_block_start", "content_block_delta", "content_block_stop"):
            return []
        i = self.index(event.get("index"), etype, "'index'")
        if etype == "content_block_start":
            block = self.obj(event.get("content_block"), etype, i, "'content_block'")
            if i in self.blocks or i in self.open:
                raise self.error(etype, i, "a block starts at an index that is already open")
            if block.get("type") != "tool_use":
                self.blocks[i] = block.get("type")  # server_tool_use is not a client call
                return []
            extras = {"caller": block["caller"]} if block.get("caller") is not None else {}
            start = block.get("input")
            initial = start if isinstance(start, Mapping) and start else None
            call_id = self.text(block.get("id"), etype, i, "'id'")
            name = self.name_of(block.get("name"), etype, i)
            self.open_call(i, OpenCall(call_id, name, extras, initial=initial), etype)
            return []
        if etype == "content_block_delta":
            delta = self.obj(event.get("delta"), etype, i, "'delta'")
            call = self.open.get(i)
            if call is None:
                if i not in self.blocks:
                    raise self.no_open_call(etype, i)
                return []
            if delta.get("type") != "input_json_delta":
                raise self.error(etype, i, f"a {delta.get('type')!r} delta in a tool_use block")
            fragment = self.text(delta.get("partial_json"), etype, i, "'partial_json'")
            if fragment:
                call.fragments.append(fragment)
            return []
        if i in self.open:
            return [self.complete(i)]
        if i not in self.blocks:
            raise self.error(etype, i, "stop for no open block")
        del self.blocks[i]
        return []


_BLOCK_EVENTS = ("contentBlockStart", "contentBlockDelta", "contentBlockStop")


class BedrockHandler(Handler):
    """converse-stream, keyed by contentBlockIndex; string input fragments; done at stop."""

    provider = "bedrock"

    def __init__(self) -> None:
        super().__init__()
        self.server_blocks: set[int] = set()

    def handle(self, event: Mapping[str, Any]) -> list[Call]:
        done: list[Call] = []
        for etype, raw in event.items():
            if etype not in _BLOCK_EVENTS:
                continue  # messageStart, messageStop, metadata, ...
            payload = self.obj(raw, etype, None, "the payload")
            i = self.index(payload.get("contentBlockIndex"), etype, "'contentBlockIndex'")
            if etype == "contentBlockStart":
                self._start(payload, i)
            elif etype == "contentBlockDelta":
                self._delta(payload, i)
            elif i in self.open:
                done.append(self.complete(i))
            else:
                self.server_blocks.discard(i)  # text blocks have no start: nothing to close
        return done

    def _start(self, payload: Mapping[str, Any], i: int) -> None:
        etype = "contentBlockStart"
        start = self.obj(payload.get("start") or {}, etype, i, "'start'")
        if start.get("toolUse") is None:
            return
        tool_use = self.obj(start["toolUse"], etype, i, "start.toolUse")
        if i in self.open or i in self.server_blocks:
            raise self.error(etype, i, "a block starts at an index that is already open")
        if tool_use.get("type") == "server_tool_use":
            self.server_blocks.add(i)  # a provider-side tool, not a client call
            return
        call_id = self.text(tool_use.get("toolUseId"), etype, i, "'toolUseId'")
        name = self.name_of(tool_use.get("name"), etype, i)
        self.open_call(i, OpenCall(call_id, name), etype)

    def _delta(self, payload: Mapping[str, Any], i: int) -> None:
        etype = "contentBlockDelta"
        delta = self.obj(payload.get("delta"), etype, i, "'delta'")
        if delta.get("toolUse") is None:
            return  # text, reasoningContent, toolResult, citation deltas
        tool_use = self.obj(delta["toolUse"], etype, i, "delta.toolUse")
        call = self.open.get(i)
        if call is None:
            if i in self.server_blocks:
                return
            raise self.no_open_call(etype, i)
        fragment = self.text(tool_use.get("input"), etype, i, "delta.toolUse.input")
        if fragment:
            call.fragments.append(fragment)


class CohereHandler(Handler):
    """Cohere v2, keyed by index; ``tool_calls`` is an object; complete at tool-call-end."""

    provider = "cohere"

    def handle(self, event: Mapping[str, Any]) -> list[Call]:
        etype = self.type_of(event)
        if etype not in ("tool-call-start", "tool-call-delta", "tool-call-end"):
            return []
        i = self.index(event.get("index"), etype, "'index'")
        if etype == "tool-call-end":
            if i not in self.open:
                raise self.error(etype, i, "end for no open call")
            return [self.complete(i)]
        delta = self.obj(event.get("delta"), etype, i, "'delta'")
        message = self.obj(delta.get("message"), etype, i, "delta.message")
        tool_call = self.obj(message.get("tool_calls"), etype, i, "delta.message.tool_calls")
        fn = self.obj(tool_call.get("function") or {}, etype, i, "tool_calls.function")
        fragment = self.text(fn.get("arguments"), etype, i, "function.arguments")
        if etype == "tool-call-start":
            call_id = self.text(tool_call.get("id"), etype, i, "'id'")
            name = self.name_of(fn.get("name"), etype, i)
            call = self.open_call(i, OpenCall(call_id, name), etype)
        else:
            found = self.open.get(i)
            if found is None:
                raise self.no_open_call(etype, i)
            call = found
        if fragment:
            call.fragments.append(fragment)
        return []


class GeminiHandler(Handler):
    """Each functionCall part (either casing) is one complete call."""

    provider = "gemini"

    def handle(self, event: Mapping[str, Any]) -> list[Call]:
        candidates = event.get("candidates")
        if candidates is None:
            return []
        if not isinstance(candidates, list):
            raise self.error("chunk", None, "'candidates' is not an array")
        done: list[Call] = []
        for c, raw_candidate in enumerate(candidates):
            candidate = self.obj(raw_candidate, "chunk", f"candidate {c}", "a candidate")
            content = candidate.get("content")
            if content is None:
                continue
            parts = self.obj(content, "chunk", f"candidate {c}", "'content'").get("parts")
            if parts is None:
                continue
            if not isinstance(parts, list):
                raise self.error("chunk", f"candidate {c}", "'parts' is not an array")
            for p, raw_part in enumerate(parts):
                key = f"candidate {c} part {p}"
                part = self.obj(raw_part, "chunk", key, "a part")
                function_call = self._either(part, "functionCall", "function_call", key)
                if function_call is not None:
                    done.append(self._call(part, function_call, key))
        return done

    def _either(self, part: Mapping[str, Any], camel: str, snake: str, key: str) -> Any:
        value = part.get(camel)
        other = part.get(snake)
        if value is not None and other is not None and value != other:
            raise self.error("chunk", key, f"{camel!r} and {snake!r} differ")
        return other if value is None else value

    def _call(self, part: Mapping[str, Any], raw: object, key: str) -> Call:
        fc = self.obj(raw, "chunk", key, "'functionCall'")
        if "partialArgs" in fc or fc.get("willContinue"):
            raise self.error("chunk", key, "streamed function-call arguments are not supported")
        call_id = self.text(fc.get("id"), "chunk", key, "functionCall.id")
        name = self.name_of(fc.get("name"), "chunk", key)
        signature = self._either(part, "thoughtSignature", "thought_signature", key)
        extras = {"thought_signature": signature} if signature is not None else None
        return make_tool_call(call_id, name, fc.get("args"), extras=extras, source=self.source)
