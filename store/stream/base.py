"""The stream handler base behind :class:`store.stream.assembler.StreamAssembler`.

The contract (keying, completion, errors) is stated in :mod:`store.stream.assembler`; each
provider family has its own module (:mod:`store.stream.openai`, ``anthropic``, ``bedrock``,
``cohere``, ``gemini``) with one handler class. A handler receives unwrapped event objects
(no ``"[DONE]"``, no ``_sse_event`` wrapper, no error events), keeps the open calls keyed as
the provider keys them, and returns the calls each event completes. Fragments are appended
to a list and joined once, at completion, where :func:`store.core.model.make_tool_call` parses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from store.core.errors import StreamError
from store.core.model import InvalidToolCall, ToolCall, make_tool_call

__all__ = ["Call", "Handler", "OpenCall"]

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
