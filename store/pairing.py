"""Linking tool results to their calls within a session (domain: stdlib only).

Rules (wire-formats.md §9): a result that names a call id links to the **latest earlier**
call with that id in the session (provider ids repeat across turns: Mantle's ``call_0``).
A result without a usable id (Gemini without ids, legacy ``role: function``, Ollama's
``tool_name``, an empty ``""``) links **by position**: to the first call, in order, of the most
recent message that made calls, that has no result yet (and, when the result names a tool,
whose name matches); so does a result whose id names no call (a client that substituted ids).
A result that matches nothing is an orphan (no link); nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["CallLinker", "CallRef"]

CallRef = tuple[int, int]


class CallLinker:
    """Links results to calls as messages are appended in position order."""

    __slots__ = ("_answered", "_by_id", "_open", "_open_position")

    def __init__(
        self,
        prior_ids: Mapping[str, CallRef] | None = None,
        prior_open: Iterable[tuple[CallRef, str]] = (),
        answered: Iterable[CallRef] = (),
    ) -> None:
        # Latest call per provider id, among calls stored before this batch.
        self._by_id: dict[str, CallRef] = dict(prior_ids or {})
        # Calls of the most recent calling message, with their names, in order.
        self._open: list[tuple[CallRef, str]] = list(prior_open)
        self._open_position = self._open[0][0][0] if self._open else -1
        self._answered: set[CallRef] = set(answered)

    def add_calls(self, position: int, calls: Iterable[tuple[int, str | None, str]]) -> None:
        """Record a message's calls: ``(index, provider id or None, recorded name)``."""
        opened: list[tuple[CallRef, str]] = []
        for index, call_id, name in calls:
            ref = (position, index)
            if call_id:
                self._by_id[call_id] = ref
            opened.append((ref, name))
        if opened:
            self._open = opened
            self._open_position = position

    def link(self, call_id: str | None, name: str | None) -> CallRef | None:
        """The call a result belongs to, or ``None`` for an orphan."""
        if call_id:
            ref = self._by_id.get(call_id)
            if ref is not None:
                self._answered.add(ref)
                return ref
        for ref, call_name in self._open:
            if ref not in self._answered and (name is None or name == call_name):
                self._answered.add(ref)
                return ref
        return None
