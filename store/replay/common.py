"""Helpers shared by the renderers of :mod:`store.replay.render` (domain)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from store.core.model import InvalidToolCall, Message, ToolCall, ToolResult
from store.core.pairing import pair_messages
from store.replay.targets import SOURCE_FAMILIES, Target

__all__ = [
    "PLACEHOLDER_USER_TEXT",
    "AnyCall",
    "Block",
    "Native",
    "Pairs",
    "Turns",
    "call_input",
    "result_call_id",
    "split_system",
]

#: The text of the user turn put in front of a history that opens with the model.
PLACEHOLDER_USER_TEXT = "(continued)"

AnyCall = ToolCall | InvalidToolCall
Block = dict[str, Any]

class Native:
    """Whether a message is replayed to its own provider."""

    __slots__ = ("family", "forced")

    def __init__(self, target: Target, same_provider: bool | None) -> None:
        self.family = SOURCE_FAMILIES[target]
        self.forced = same_provider

    def __call__(self, message: Message) -> bool:
        if self.forced is not None:
            return self.forced
        return message.source in self.family


class Pairs:
    """The call each result answers, by the one pairing rule (:mod:`store.core.pairing`), for a
    renderer that walks ``messages`` in order: :meth:`find` takes the message's index and the
    result's index among that message's results."""

    __slots__ = ("_calls", "_links")

    def __init__(self, messages: Sequence[Message]) -> None:
        self._links = pair_messages(messages)
        self._calls = [m.tool_calls for m in messages]

    def find(self, message_index: int, result_index: int) -> AnyCall | None:
        ref = self._links.get((message_index, result_index))
        return None if ref is None else self._calls[ref[0]][ref[1]]


def call_input(call: AnyCall) -> dict[str, Any]:
    """The object input of a call (an invalid call's raw text wrapped as repair does)."""
    if isinstance(call, ToolCall):
        return call.input
    return {"_invalid_arguments": call.arguments_text, "_error": call.error_kind}


def result_call_id(call: AnyCall | None, result: ToolResult) -> str:
    if call is not None and call.id:
        return call.id
    return result.call_id or ""


def split_system(messages: Sequence[Message]) -> tuple[list[str], Sequence[Message]]:
    """The texts of the leading system/developer messages, and the rest."""
    texts: list[str] = []
    n = 0
    while n < len(messages) and messages[n].role in ("system", "developer"):
        text = messages[n].text
        if text:
            texts.append(text)
        n += 1
    return texts, messages[n:]


class Turns:
    """Blocks collected into strictly alternating turns (consecutive roles merged)."""

    def __init__(self, user: str, model: str) -> None:
        self.user, self.model = user, model
        self.turns: list[tuple[str, list[Block]]] = []

    def add(self, role: str, block: Block) -> None:
        if self.turns and self.turns[-1][0] == role:
            self.turns[-1][1].append(block)
        else:
            self.turns.append((role, [block]))

    def finish(self, placeholder: Block, first: Callable[[Block], bool]) -> list[tuple[
            str, list[Block]]]:
        """The turns, opening with a user turn, each user turn with ``first`` blocks first."""
        turns = [(role, sorted(blocks, key=lambda b: not first(b)) if role == self.user
                  else blocks) for role, blocks in self.turns]
        if turns and turns[0][0] != self.user:
            turns.insert(0, (self.user, [placeholder]))
        return turns
