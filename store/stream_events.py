"""Per-provider stream handlers behind :class:`store.stream.StreamAssembler`.

The contract (keying, completion, errors) is stated in :mod:`store.stream`; this module holds
one handler class per provider. A handler receives unwrapped event objects (no ``"[DONE]"``,
no ``_sse_event`` wrapper, no error events), keeps the open calls keyed as the provider keys
them, and returns the calls each event completes. Fragments are appended to a list and joined
once, at completion, where :func:`store.model.make_tool_call` parses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from store.errors import StreamError
from store.model import InvalidToolCall, ToolCall, make_tool_call

__all__ = [
    "HANDLERS",
    "AnthropicHandler",
    "BedrockHandler",
    "Call",
    "CohereHandler",
    "GeminiHandler",
    "Handler",
    "OpenAIChatHandler",
    "OpenCall",
    "ResponsesHandler",
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


_CHUNK = "chat.completion.chunk"


class OpenAIChatHandler(Handler):
    """Keyed by (choice index, tool_calls[].index); legacy function_call has one per choice."""

    provider = "openai_chat"

    def handle(self, event: Mapping[str, Any]) -> list[Call]:
        choices = event.get("choices")
        if choices is None:
            return []
        if not isinstance(choices, list):
            raise self.error(_CHUNK, None, f"'choices' is not an array: {choices!r:.80}")
        done: list[Call] = []
        for raw_choice in choices:
            choice = self.obj(raw_choice, _CHUNK, None, "a choice")
            c = self.index(choice.get("index", 0), _CHUNK, "choices[].index")
            delta = choice.get("delta")
            if delta is not None:
                delta = self.obj(delta, _CHUNK, f"choice {c}", "'delta'")
                tool_calls = delta.get("tool_calls")
                if tool_calls is not None:
                    if not isinstance(tool_calls, list):
                        raise self.error(_CHUNK, f"choice {c}", "'tool_calls' is not an array")
                    for fragment in tool_calls:
                        self._tool_fragment(c, fragment)
                function_call = delta.get("function_call")
                if function_call is not None:
                    self._legacy_fragment(c, function_call)
            if choice.get("finish_reason"):
                done.extend(self.complete(k) for k in sorted(k for k in self.open if k[0] == c))
        return done

    def finish(self) -> list[Call]:
        return [self.complete(key) for key in sorted(self.open)]

    def _tool_fragment(self, c: int, raw: object) -> None:
        tc = self.obj(raw, _CHUNK, f"choice {c}", "a tool_calls entry")
        k = tc.get("index")
        if type(k) is not int:
            raise self.error(
                _CHUNK, f"choice {c}", f"tool_calls entry has no integer 'index': {k!r}"
            )
        key = (c, k)
        fn = self.obj(tc.get("function") or {}, _CHUNK, key, "'function'")
        args = self.text(fn.get("arguments"), _CHUNK, key, "function.arguments")
        call_id = self.text(tc.get("id"), _CHUNK, key, "'id'")
        call = self.open.get(key)
        if call is None:
            if not fn.get("name"):
                raise self.no_open_call(_CHUNK, key)
            extras: dict[str, Any] = {"index": k}
            if c:
                extras["choice_index"] = c
            if tc.get("extra_content") is not None:
                extras["extra_content"] = tc["extra_content"]
            name = self.name_of(fn.get("name"), _CHUNK, key)
            call = self.open_call(key, OpenCall(call_id, name, extras), _CHUNK)
        elif call_id and call.call_id and call_id != call.call_id:
            raise self.error(_CHUNK, key, f"call {call_id!r} starts while {call.call_id!r} is open")
        if args:
            call.fragments.append(args)

    def _legacy_fragment(self, c: int, raw: object) -> None:
        key = (c, -1)  # one legacy call per choice; -1 sorts it before tool_calls
        label = f"choice {c} function_call"
        fc = self.obj(raw, _CHUNK, label, "'function_call'")
        args = self.text(fc.get("arguments"), _CHUNK, label, "function_call.arguments")
        call = self.open.get(key)
        if call is None:
            name = fc.get("name")
            if not name and not args:
                return  # the empty legacy object some servers send beside tool_calls
            if not name:
                raise self.no_open_call(_CHUNK, label)
            name = self.name_of(name, _CHUNK, label)
            call = self.open_call(key, OpenCall(None, name, {"format": "function_call"}), _CHUNK)
        if args:
            call.fragments.append(args)


_ITEM_ADDED = "response.output_item.added"
_ITEM_DONE = "response.output_item.done"
_FC_DELTA = "response.function_call_arguments.delta"
_FC_DONE = "response.function_call_arguments.done"
_CUSTOM_DELTA = "response.custom_tool_call_input.delta"
_CUSTOM_DONE = "response.custom_tool_call_input.done"
# Client call item types, and the field holding their argument text.
_RESPONSES_CALLS = {"function_call": "arguments", "custom_tool_call": "input"}


class ResponsesHandler(Handler):
    """Keyed by item_id (or output_index); complete at arguments `.done` or output_item.done."""

    provider = "openai_responses"

    def __init__(self) -> None:
        super().__init__()
        self.by_output: dict[int, Any] = {}  # output_index -> key
        self.done_keys: set[Any] = set()

    def handle(self, event: Mapping[str, Any]) -> list[Call]:
        etype = self.type_of(event)
        if etype == _ITEM_ADDED:
            self._added(event)
        elif etype == _ITEM_DONE:
            return self._item_done(event)
        elif etype in (_FC_DELTA, _CUSTOM_DELTA):
            key = self._key(event, etype)
            call = self._open_for(key, etype, etype == _CUSTOM_DELTA)
            delta = self.text(event.get("delta"), etype, key, "'delta'")
            if delta:
                call.fragments.append(delta)
        elif etype in (_FC_DONE, _CUSTOM_DONE):
            key = self._key(event, etype)
            if key in self.done_keys:
                return []
            call = self._open_for(key, etype, etype == _CUSTOM_DONE)
            field = "input" if etype == _CUSTOM_DONE else "arguments"
            full = self.text(event.get(field), etype, key, f"'{field}'")
            if full is not None:
                call.final = full
            return [self._complete(key)]
        return []

    def _key(self, event: Mapping[str, Any], etype: str) -> Any:
        item_id = event.get("item_id")
        if type(item_id) is str and item_id:
            return item_id
        output_index = event.get("output_index")
        if type(output_index) is int:
            return self.by_output.get(output_index, output_index)
        raise self.error(etype, None, "event has neither 'item_id' nor 'output_index'")

    def _item_key(self, event: Mapping[str, Any], item: Mapping[str, Any], etype: str) -> Any:
        item_id = item.get("id")
        if type(item_id) is str and item_id:
            key: Any = item_id
        else:
            key = self._key(event, etype)
        if type(event.get("output_index")) is int:
            self.by_output[event["output_index"]] = key
        return key

    def _open_for(self, key: Any, etype: str, custom: bool) -> OpenCall:
        call = self.open.get(key)
        if call is None:
            raise self.no_open_call(etype, key)
        if call.custom != custom:
            raise self.error(etype, key, "event kind does not match the open item's type")
        return call

    def _new_call(self, item: Mapping[str, Any], key: Any, etype: str) -> OpenCall:
        custom = item.get("type") == "custom_tool_call"
        name = self.name_of(item.get("name"), etype, key)
        call_id = self.text(item.get("call_id"), etype, key, "'call_id'")
        extras: dict[str, Any] = {"format": "custom"} if custom else {}
        if type(item.get("id")) is str:
            extras["item_id"] = item["id"]
        return OpenCall(call_id, name, extras, custom=custom)

    def _added(self, event: Mapping[str, Any]) -> None:
        item = self.obj(event.get("item"), _ITEM_ADDED, None, "'item'")
        field = _RESPONSES_CALLS.get(str(item.get("type")))
        if field is None:
            return
        key = self._item_key(event, item, _ITEM_ADDED)
        call = self.open_call(key, self._new_call(item, key, _ITEM_ADDED), _ITEM_ADDED)
        call.initial = self.text(item.get(field), _ITEM_ADDED, key, f"item.{field}") or None

    def _item_done(self, event: Mapping[str, Any]) -> list[Call]:
        item = self.obj(event.get("item"), _ITEM_DONE, None, "'item'")
        field = _RESPONSES_CALLS.get(str(item.get("type")))
        if field is None:
            return []
        key = self._item_key(event, item, _ITEM_DONE)
        if key in self.done_keys:
            return []
        call = self.open.get(key)
        if call is None:  # a complete item that was never announced: take it whole
            call = self.open_call(key, self._new_call(item, key, _ITEM_DONE), _ITEM_DONE)
        full = self.text(item.get(field), _ITEM_DONE, key, f"item.{field}")
        if full is not None:
            call.final = full
        if call.call_id is None and type(item.get("call_id")) is str:
            call.call_id = item["call_id"]
        return [self._complete(key)]

    def _complete(self, key: Any) -> Call:
        self.done_keys.add(key)
        return self.complete(key)


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
            if i in self.blocks:
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
                self.server_blocks.discard(i)  # text and result blocks have no start
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
