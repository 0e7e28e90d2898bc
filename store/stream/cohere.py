"""Cohere v2 chat streams (``tool-call-*`` events)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.stream.base import Call, Handler, OpenCall

__all__ = ["CohereHandler"]


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
