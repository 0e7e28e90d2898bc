"""OpenAI stream handlers (Chat Completions chunks, legacy ``function_call`` deltas, and
Responses events) behind :class:`store.stream.assembler.StreamAssembler`; the contract is stated in
:mod:`store.stream.assembler`, the handler base in :mod:`store.stream.base`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.stream.base import Call, Handler, OpenCall

__all__ = ["OpenAIChatHandler", "ResponsesHandler"]

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
