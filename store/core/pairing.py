"""The one pairing rule: which call a tool result answers (domain: stdlib only).

Storage (the links written with each result), repair and the renderers all use this module,
so a stored link, a repaired history and a rendered body never disagree.

The rule (wire-formats.md §9, and the lossless guarantees of ``docs/operations.md``):

1. A result that carries an id answers a call with that id: in the **latest earlier**
   message that made a call with that id (provider ids repeat across turns: Mantle's
   ``call_0``), the first such call not answered yet (else the first: a duplicate result).
2. A result whose id names **no** earlier call is an **orphan**: it is kept and reported,
   never given to another call (giving it one would fabricate history for the model). The
   one exception is a call that has no id of its own: a client that substituted ids for
   id-less calls (pydantic-ai's ``pyd_ai_...``) answers such a call by position, under the
   same-turn rule below; a call that has an id is never answered under another id.
3. A result **without** an id (Gemini without ids, legacy ``role: function``, Ollama's
   ``tool_name``, an empty ``""``) answers **by position**: the first unanswered call of the
   most recent message that made calls, whose name matches when the result names a tool
   (the current or the recorded name) — and only **within the same turn**: once a user,
   system or developer message that carries no tool result follows the calling message,
   an id-less result has no call to answer and is an orphan.
4. Nothing is dropped: a result that matches nothing simply has no link.

Known limit of storage: an id repeated by several calls of one message is stored minted for
the second and later calls; their results pair in order when they arrive in the same append
as the calls, but a result appended later pairs with the first of them (a duplicate).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from store.core.model import InvalidToolCall, Message, ToolCall

__all__ = ["TURN_ROLES", "CallRef", "Pairing", "call_names", "pair_messages"]

#: (message position, call index within the message).
CallRef = tuple[int, int]

#: Roles whose messages open a new turn when they carry no tool result.
TURN_ROLES = frozenset({"user", "system", "developer"})


class Pairing:
    """Links results to calls as messages arrive in position order (the one rule above).

    ``prior_ids`` (provider id -> the calls with that id in the latest message that used it),
    ``prior_open`` (the calls of the most recent calling message, with their names and
    whether each lacks an id of its own, when no new turn has begun since) and ``answered``
    prime it with what is already stored.
    """

    __slots__ = ("_answered", "_by_id", "_open")

    def __init__(
        self,
        prior_ids: Mapping[str, Sequence[CallRef]] | None = None,
        prior_open: Iterable[tuple[CallRef, tuple[str, ...], bool]] = (),
        answered: Iterable[CallRef] = (),
    ) -> None:
        self._by_id: dict[str, list[CallRef]] = {k: list(v) for k, v in (prior_ids or {}).items()}
        self._open: list[tuple[CallRef, tuple[str, ...], bool]] = list(prior_open)
        self._answered: set[CallRef] = set(answered)

    def begin_message(self, role: str, has_results: bool) -> None:
        """Note a message before its calls and results: a user, system or developer message
        without results starts a new turn, after which id-less results link to nothing."""
        if role in TURN_ROLES and not has_results:
            self._open = []

    def add_calls(self, position: int,
                  calls: Iterable[tuple[int, str | None, tuple[str, ...]]]) -> None:
        """Record a message's calls: ``(index, provider id or None, names)``; ``names`` are
        the names a result may give (current and recorded)."""
        opened: list[tuple[CallRef, tuple[str, ...], bool]] = []
        fresh: dict[str, list[CallRef]] = {}
        for index, call_id, names in calls:
            ref = (position, index)
            if call_id:
                fresh.setdefault(call_id, []).append(ref)
            opened.append((ref, names, not call_id))
        if opened:
            self._by_id.update(fresh)
            self._open = opened

    def link(self, call_id: str | None, name: str | None) -> CallRef | None:
        """The call a result answers, or ``None`` for an orphan."""
        if call_id:
            refs = self._by_id.get(call_id)
            if refs:
                ref = next((r for r in refs if r not in self._answered), refs[0])
                self._answered.add(ref)
                return ref
        # By position: an id-less result, or a substituted id answering an id-less call.
        for ref, names, idless in self._open:
            if (ref not in self._answered and (not call_id or idless)
                    and (name is None or name in names)):
                self._answered.add(ref)
                return ref
        return None


def call_names(call: ToolCall | InvalidToolCall) -> tuple[str, ...]:
    """The names a result may use for ``call``: its current and its recorded name."""
    recorded = call.recorded_name
    return (call.name,) if recorded == call.name else (call.name, recorded)


def pair_messages(messages: Sequence[Message]) -> dict[CallRef, CallRef]:
    """Pair a plain sequence of messages: ``(message index, result index)`` -> ``(message
    index, call index)`` for every result that answers a call (orphans are absent)."""
    pairing = Pairing()
    links: dict[CallRef, CallRef] = {}
    for i, message in enumerate(messages):
        results = message.tool_results
        pairing.begin_message(message.role, bool(results))
        calls = message.tool_calls
        if calls:
            pairing.add_calls(i, ((k, c.id, call_names(c)) for k, c in enumerate(calls)))
        for j, result in enumerate(results):
            ref = pairing.link(result.call_id, result.name)
            if ref is not None:
                links[(i, j)] = ref
    return links

