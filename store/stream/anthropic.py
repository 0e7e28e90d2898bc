"""Anthropic Messages streams (``content_block_*`` events)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.stream.base import Call, Handler, OpenCall

__all__ = ["AnthropicHandler"]


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
