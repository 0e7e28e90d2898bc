"""Bedrock ConverseStream events (``contentBlockStart/Delta/Stop``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.stream.base import Call, Handler, OpenCall

__all__ = ["BedrockHandler"]


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
