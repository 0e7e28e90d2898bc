"""An OpenAI Agents SDK ``Session`` on a :class:`~store.TranscriptStore` (SQLite or PostgreSQL).

Install with ``pip install 'transcript-store[agents]'``::

    import asyncio
    from agents import Agent, Runner, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message
    from store.integrations.openai_agents import TranscriptStoreSession

    set_tracing_disabled(True)  # offline: a scripted model, no trace export
    agent = Agent(name="helper", model=ScriptedModel([[assistant_message("Hi!")]]))
    session = TranscriptStoreSession("chat-1", "sqlite:///agents-readme.sqlite")
    result = asyncio.run(Runner.run(agent, "Hello", session=session))
    assert result.final_output == "Hi!"
    session.close()  # a later run, in this process or another, resumes "chat-1"

Contract:

* ``add_items`` stores each Responses input item (messages, ``function_call``,
  ``function_call_output``, ``reasoning``, and any other item) as one message through the
  normalizer, in one transaction: tool calls and results are rows (``tools usage``,
  ``calls search``, ``repair``, ``render`` see them). The item itself is kept in the message's
  metadata (``"openai_agents"``) without the values the rows hold (see
  :mod:`store.integrations`), so ``get_items`` returns each item equal as JSON to what was given.
* ``get_items(limit=N)`` returns the newest N items, in order (the SDK's "last N items": the
  SDK itself drops an output whose call fell outside the window before calling a model, and it
  reads plain tails to reconcile an interrupted write when a ``RunState`` is resumed).
  ``pair_safe_limit=True`` opts in to a window that never holds a ``function_call_output`` (or
  any ``*_call_output``, or an MCP approval response) without its call, nor an item without the
  ``reasoning`` item just before it that produced it: it starts at the first such safe point at
  or after ``len - N`` (so it may hold fewer than N), for callers that send the window to the
  Responses API themselves (a cut call/output pair is refused there).
* ``session_settings`` is a ``SessionSettings`` or a dict of its fields; an unknown field
  raises ``TypeError`` ("Unknown session settings: ..."), as the SDK's sessions do.
* ``add_items`` gives each message a key of its own (``openai_agents:<uuid>``), so that a
  message is known by identity, not by its position (a position is reused once a pop freed
  it).
* ``pop_item`` removes the newest item: it deletes the newest message with
  ``TranscriptStore.truncate(..., expected_last=message)``, calls and results included: a
  compare-and-delete by identity (the message read must still be the session's last, same
  key and stored time), so two processes never remove one item twice, and a pop never
  removes an item another process added after popping (a count would not tell them apart).
  The read is one snapshot (``TranscriptStore.load`` is one statement). Only an item that
  shares its message with other items (a session written by other means) is instead hidden
  by a *tombstone* (an empty ``system`` message whose metadata names the popped position
  and the identity of the message there, keyed by both, so that two processes popping at
  once cannot both remove the same item, and a tombstone never hides a later message that
  took the position); such an item is hidden from ``get_items`` and its rows stay. A pop
  that loses a race reads again (with a short random pause); an empty, missing or
  just-cleared session pops ``None``.
* ``clear_session`` deletes the session (``TranscriptStore.delete_session``).
* Messages of the session that were not written by this class (imported, or appended through
  the store) are read as Responses items through ``store.render(..., "openai-responses")``.

The event loop is never blocked: each operation runs the store's synchronous API in a worker
thread (``asyncio.to_thread``). The store is SQLAlchemy Core on DBAPI cursors with its own
transactions, retries and normalizer; a second, asyncio engine (asyncpg / aiosqlite) would
duplicate that write path and its guarantees for a gain of one thread hop (tens of
microseconds) per call. Writes are awaited to the end even when the caller is cancelled (the
cancellation is re-raised after), so a cancelled ``add_items`` never leaves "maybe written".
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
import uuid
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import store
from store.integrations import Source, StoreHandle, pack, require, unpack

if TYPE_CHECKING:
    from agents import SessionSettings, TResponseInputItem

__all__ = ["KEY", "TranscriptStoreSession"]

#: The metadata key under which the original item (or a tombstone) is kept.
KEY = "openai_agents"
_SOURCE = "openai_agents"
#: A pop that keeps losing races to other writers gives up after this many reads (each lost
#: race means another writer changed the session's end: it made progress).
_POP_ATTEMPTS = 200
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class _Live:
    """A live (not popped) item: its message, its position and its index within it."""

    position: int
    index: int
    item: dict[str, Any]
    message: store.StoredMessage


class TranscriptStoreSession:
    """An Agents SDK ``Session`` (the protocol: ``get_items``, ``add_items``, ``pop_item``,
    ``clear_session``) keeping one session of a :class:`~store.TranscriptStore`.

    ``db`` is an open store (shared; the caller closes it) or a URL (opened on first use in a
    worker thread; :meth:`close` closes it); ``None`` means ``TRANSCRIPT_STORE_URL`` or the
    default SQLite file. ``title``, ``tags`` and ``model`` label the session when it is created.
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        db: store.TranscriptStore | str | None = None,
        *,
        session_settings: SessionSettings | Mapping[str, Any] | None = None,
        pair_safe_limit: bool = False,
        title: str | None = None,
        tags: Sequence[str] = ("openai-agents",),
        model: str | None = None,
    ) -> None:
        require("agents", "agents", "TranscriptStoreSession")
        from agents import SessionSettings

        self.session_id = session_id
        if session_settings is None:
            self.session_settings = SessionSettings()
        elif isinstance(session_settings, SessionSettings):
            self.session_settings = session_settings
        elif isinstance(session_settings, Mapping):
            unknown = sorted(set(session_settings) - _settings_fields(SessionSettings))
            if unknown:
                raise store.SettingsError(
                    f"Unknown session settings: {', '.join(map(str, unknown))}")
            self.session_settings = SessionSettings(**session_settings)
        else:
            raise store.SettingsError("session_settings must be a SessionSettings or a dict, "
                                      f"not {type(session_settings).__name__}")
        self.pair_safe_limit = pair_safe_limit
        self._labels: dict[str, Any] = {"title": title, "tags": tuple(tags), "model": model}
        self._handle = StoreHandle(db)
        self._length: int | None = None  # the session's message count as last seen

    # -- the Session protocol -------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items, oldest first; the newest ``limit`` (see the module doc)."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        items = await asyncio.to_thread(self._get_items, limit)
        return items  # type: ignore[return-value]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append items, all or nothing (one transaction)."""
        if not items:
            return
        records: list[Mapping[str, Any]] = list(items)
        await _settle(asyncio.to_thread(self._add_items, records))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item (``None`` when there is none)."""
        item = await _settle(asyncio.to_thread(self._pop_item))
        return item  # type: ignore[return-value]

    async def clear_session(self) -> None:
        """Delete the session and everything in it."""
        await _settle(asyncio.to_thread(self._clear))

    def close(self) -> None:
        """Close the store if this session opened it (a shared store stays open)."""
        self._handle.close()

    # -- synchronous halves (run in a worker thread) --------------------------------------------

    def _store(self) -> store.TranscriptStore:
        return self._handle.get()

    def _get_items(self, limit: int | None) -> list[dict[str, Any]]:
        db = self._store()
        if limit is None or limit < 0:  # negative: everything, as the SDK's SQLiteSession
            try:
                transcript = db.load(self.session_id)
            except store.SessionNotFound:
                return []
            return [live.item for live in _live_items(transcript.messages)]
        if limit == 0:
            return []
        lives, _ = self._tail(db, limit + 1)
        items = [live.item for live in lives]
        start = max(0, len(items) - limit)
        if self.pair_safe_limit:
            # Not complete means at least limit + 1 items were read: the one before the
            # window is known, as the reasoning rule needs.
            start = safe_start(items, start)
        return items[start:]

    def _tail(self, db: store.TranscriptStore, want: int) -> tuple[list[_Live], bool]:
        """At least ``want`` of the newest live items (all of them when there are fewer), and
        whether they start at the session's beginning.

        The window starts from the session's length as last seen here (read from the database
        the first time): a stale length only makes the window larger than needed, or too small,
        which the loop sees and widens.
        """
        count = self._length
        if count is None:
            try:
                count = db.get_session(self.session_id).message_count
            except store.SessionNotFound:
                return [], True
        window = want + 2
        while True:
            start = max(0, count - window)
            try:
                transcript = db.load(self.session_id, since_position=start)
            except store.SessionNotFound:
                self._length = None
                return [], True
            count = self._length = transcript.session.message_count
            messages = transcript.messages
            complete = messages[0].position == 0 if messages else start == 0
            lives = _live_items(messages)
            if complete or len(lives) >= want:
                return lives, complete
            if messages:  # else the length seen here was stale: try again with the new one
                window *= 4

    def _add_items(self, items: Sequence[Mapping[str, Any]]) -> None:
        messages = [to_message(item) for item in items]
        keys: list[str | None] = [f"{_SOURCE}:{uuid.uuid4().hex}" for _ in messages]
        self._store().append(self.session_id, messages, keys=keys, **self._labels)

    def _pop_item(self) -> dict[str, Any] | None:
        db = self._store()
        for attempt in range(_POP_ATTEMPTS):
            if attempt:  # another writer changed the session's end first: let it finish
                time.sleep(min(0.001 * 2 ** min(attempt, 6), 0.05) * random.random())
            lives, _ = self._tail(db, 1)
            if not lives:
                return None
            last = lives[-1]
            count = self._length
            alone = sum(1 for live in lives if live.position == last.position) == 1
            if alone and count is not None and last.position == count - 1:
                # The newest message holds just this item: delete it (its calls and results
                # with it), unless it is not the session's last message any more.
                try:
                    db.truncate(self.session_id, last.position, expected_last=last.message)
                except (store.ConflictError, store.SessionNotFound):
                    self._length = None
                    continue
                self._length = last.position
                return last.item
            # An item sharing its message with others (a session written otherwise): mark it,
            # naming the message by identity (a later message at this position stays live).
            of = _identity(last.message)
            tombstone = store.Message(
                "system", (), _SOURCE,
                metadata={KEY: {"pop": [last.position, last.index], "of": of}})
            key = f"{_SOURCE}:pop:{last.position}:{last.index}:{of}"
            if db.append(self.session_id, [tombstone], keys=[key]).stored:
                return last.item
            # Another writer popped this very item first: look again.
        raise store.DatabaseError(
            f"session {self.session_id!r}: could not pop an item in {_POP_ATTEMPTS} attempts "
            "(other writers kept popping)"
        )

    def _clear(self) -> None:
        self._length = None
        try:
            self._store().delete_session(self.session_id)
        except store.SessionNotFound:
            pass


def _settings_fields(settings_type: type[Any]) -> set[str]:
    """The field names of the SDK's ``SessionSettings`` (a dataclass)."""
    import dataclasses

    return {field.name for field in dataclasses.fields(settings_type)}


# -- items to messages and back -------------------------------------------------------------------


def to_message(item: Mapping[str, Any]) -> store.Message:
    """One Responses input item as a store message, the item kept in its metadata."""
    if not isinstance(item, Mapping):
        raise store.RecordError(f"a session item must be a dict, got {type(item).__name__}")
    try:
        message = store.normalize_message(item)
    except store.UnrecognizedRecord:  # an item kind the normalizer does not read: kept opaque
        kind = item.get("type")
        message = store.Message(
            "user" if item.get("role") == "user" else "assistant",
            (store.OpaquePart(kind if isinstance(kind, str) else "item", dict(item)),),
            _SOURCE,
        )
    packed = pack(item, _candidates(item, message.parts), message.parts)
    return store.Message(message.role, message.parts, message.source, message.message_id,
                         message.extras, {**message.metadata, KEY: packed})


def _candidates(item: Mapping[str, Any], parts: Sequence[store.Part]) -> list[Source]:
    """Where an item's bulky values went, as the normalizer reads Responses items."""
    if len(parts) == 1:
        part = parts[0]
        if isinstance(part, store.OpaquePart):
            return [((), 0, "data")]
        if isinstance(part, store.ToolCall | store.InvalidToolCall):
            return [(("arguments",), 0, "arguments_text")]
        if isinstance(part, store.ToolResult):
            return [(("output",), 0, "content")]
    content = item.get("content")
    if isinstance(content, str):
        return [(("content",), 0, "text")]
    out: list[Source] = []
    if isinstance(content, list):
        for index, block in enumerate(content[:len(parts)]):
            if isinstance(block, str):
                out.append((("content", index), index, "text"))
            elif isinstance(parts[index], store.OpaquePart):
                out.append((("content", index), index, "data"))
            else:
                out.append((("content", index, "text"), index, "text"))
    return out


def _identity(stored: store.StoredMessage) -> str:
    """A short name of one stored message (its key and stored time): a message that later
    takes the same position has another one."""
    seen = f"{stored.key}\x00{stored.created_at.isoformat()}".encode()
    return hashlib.sha256(seen).hexdigest()[:16]


def _live_items(messages: Sequence[store.StoredMessage]) -> list[_Live]:
    """The items of ``messages`` (loaded for this call only) in order, without popped ones
    and tombstones. A tombstone hides an item only of the message it names (tombstones
    written before messages were named by identity name a position only)."""
    popped: set[tuple[int, int]] = set()
    by_position = {stored.position: stored for stored in messages}
    for stored in messages:
        mark = stored.message.metadata.get(KEY)
        if isinstance(mark, Mapping) and "pop" in mark:
            position, index = mark["pop"]
            target = by_position.get(position)
            if "of" not in mark or (target is not None and _identity(target) == mark["of"]):
                popped.add((position, index))
    out: list[_Live] = []
    for stored in messages:
        for index, item in enumerate(_items_of(stored.message)):
            if (stored.position, index) not in popped:
                out.append(_Live(stored.position, index, item, stored))
    return out


def _items_of(message: store.Message) -> list[dict[str, Any]]:
    mark = message.metadata.get(KEY)
    if isinstance(mark, Mapping):
        if "pop" in mark:
            return []
        if "record" in mark:
            return [unpack(mark, message.parts, in_place=True)]
    if not message.parts:
        return []
    items: list[dict[str, Any]] = store.render([message], "openai-responses")["input"]
    return items


# -- the pair-safe window -------------------------------------------------------------------------


def _call_ref(item: Mapping[str, Any]) -> str | None:
    """The id that later outputs of this call item refer to (``None`` for other items)."""
    kind = item.get("type")
    if kind == "mcp_approval_request":
        ref = item.get("id")
    elif isinstance(kind, str) and kind.endswith("_call"):
        ref = item.get("call_id")
    else:
        return None
    return ref if isinstance(ref, str) else None


def _output_ref(item: Mapping[str, Any]) -> str | None:
    """The call id this output item answers (``None`` for other items)."""
    kind = item.get("type")
    if kind == "mcp_approval_response":
        ref = item.get("approval_request_id")
    elif isinstance(kind, str) and kind.endswith("_output"):
        ref = item.get("call_id")
    else:
        return None
    return ref if isinstance(ref, str) else None


def safe_start(items: Sequence[Mapping[str, Any]], start: int) -> int:
    """The first index at or after ``start`` where ``items`` may be cut: no output after it
    answers a call before it, and the item before it is not a ``reasoning`` item.

    An output whose call is not in ``items`` (made earlier, or never) is never returned: the
    cut moves past it.
    """
    seen: dict[str, int] = {}
    needs = [len(items)] * (len(items) + 1)  # needs[p]: earliest call answered at or after p
    answered: list[int] = []
    for index, item in enumerate(items):
        ref = _output_ref(item)
        answered.append(seen.get(ref, -1) if ref is not None else len(items))
        call = _call_ref(item)
        if call is not None:
            seen[call] = index
    for index in range(len(items) - 1, -1, -1):
        needs[index] = min(needs[index + 1], answered[index])
    for cut in range(start, len(items) + 1):
        if needs[cut] < cut:
            continue
        if cut > 0 and items[cut - 1].get("type") == "reasoning":
            continue
        return cut
    return len(items)


async def _settle(work: Awaitable[_T]) -> _T:
    """Await ``work`` to the end even when cancelled; re-raise the cancellation after."""
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    result = task.result()
    if cancelled is not None:
        raise cancelled
    return result
