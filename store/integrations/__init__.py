"""Drop-in history backends for agent frameworks (the edge layer).

* :mod:`store.integrations.openai_agents`: ``TranscriptStoreSession``, an OpenAI Agents SDK
  ``Session`` (extra ``transcript-store[agents]``);
* :mod:`store.integrations.langchain`: ``TranscriptChatMessageHistory``, a LangChain
  ``BaseChatMessageHistory`` (extra ``transcript-store[langchain]``);
* :mod:`store.integrations.pydantic_ai`: pydantic-ai ``ModelMessage`` lists to and from a
  stored transcript (extra ``transcript-store[pydantic-ai]``).

Each module imports only the public API (``store``), this package, and its framework lazily
(inside functions or under ``TYPE_CHECKING``): ``import store`` never imports a framework, and
using an integration without its extra raises :class:`MissingExtra` naming the extra.

How a framework's record is stored (the same in all three): the record goes through the
normalizer (or is mapped onto typed parts), so its tool calls and results are rows that
``tools usage``, ``calls search``, ``repair`` and ``render`` see. Next to them, the message's
``metadata`` keeps the framework's own record (its JSON form) under the framework's key, with
the values the rows hold anyway (argument text, result content, text, opaque parts) left out
and named by where they come from (:func:`pack`). Reading a message back puts them in again
(:func:`unpack`), so a record comes back equal as JSON to what was given, and nothing large is
stored twice. A value is left out only when the part holds exactly it at write time.
"""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import store

__all__ = ["MissingExtra", "Source", "StoreHandle", "pack", "require", "unpack"]

MissingExtra = store.MissingExtra


class StoreHandle:
    """The store an integration works on: one it was given (left open by :meth:`close`), or
    one opened from a URL on first use, once even when threads race, and closed by
    :meth:`close`."""

    __slots__ = ("_db", "_lock", "_owned", "_url")

    def __init__(self, db: store.TranscriptStore | str | None) -> None:
        self._db = db if isinstance(db, store.TranscriptStore) else None
        self._url = None if isinstance(db, store.TranscriptStore) else db
        self._owned = self._db is None
        self._lock = threading.Lock()

    def get(self) -> store.TranscriptStore:
        db = self._db
        if db is None:
            with self._lock:
                if self._db is None:
                    self._db = store.TranscriptStore.open(self._url)
                db = self._db
        return db

    def close(self) -> None:
        with self._lock:
            if self._owned and self._db is not None:
                self._db.close()
                self._db = None


def require(module: str, extra: str, what: str) -> None:
    """Import ``module`` (the framework) or raise :class:`MissingExtra` naming ``extra``."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise store.MissingExtra(
            f"{what} needs the {module.split('.')[0]!r} package: "
            f"pip install 'transcript-store[{extra}]'"
        ) from exc


#: Where a left-out value comes from: (path in the record, part index, part attribute).
Source = tuple[tuple[str | int, ...], int, str]

_ATTRIBUTES: Mapping[str, tuple[type, ...]] = {
    "text": (store.TextPart, store.ThinkingPart),
    "arguments_text": (store.ToolCall, store.InvalidToolCall),
    "input": (store.ToolCall,),
    "content": (store.ToolResult,),
    "data": (store.OpaquePart,),
}


def _extract(parts: Sequence[store.Part], index: int, attribute: str) -> Any:
    if not 0 <= index < len(parts):
        raise store.RecordError(f"stored record refers to part {index}, which is missing")
    part = parts[index]
    if not isinstance(part, _ATTRIBUTES[attribute]):
        raise store.RecordError(
            f"stored record refers to {attribute!r} of part {index}, a {type(part).__name__}"
        )
    return getattr(part, attribute)


def _get(record: Any, path: Sequence[str | int]) -> Any:
    for step in path:
        if isinstance(step, str) and isinstance(record, Mapping) and step in record:
            record = record[step]
        elif isinstance(step, int) and isinstance(record, list) and 0 <= step < len(record):
            record = record[step]
        else:
            raise KeyError(step)
    return record


def _put(record: Any, path: Sequence[str | int], value: Any) -> Any:
    """``record`` with ``value`` at ``path``: containers on the path are copied, not changed."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(record, Mapping) and isinstance(head, str):
        copied: Any = dict(record)
    elif isinstance(record, list) and isinstance(head, int):
        copied = list(record)
    else:
        raise store.RecordError(f"stored record has no place {list(path)!r}")
    copied[head] = _put(copied[head], rest, value)
    return copied


def _same_json(a: Any, b: Any) -> bool:
    """Equal as JSON (``True`` is not ``1``; key order matters, as it does on the wire)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is str:
        return bool(a == b)
    try:
        return json.dumps(a) == json.dumps(b)
    except (TypeError, ValueError):
        return False


def pack(record: Any, candidates: Iterable[Source], parts: Sequence[store.Part]) -> dict[str, Any]:
    """The record to keep in metadata: values the parts hold exactly are left out and named.

    ``candidates`` are guesses (a framework module knows which field became which part); each is
    checked against the parts, and only an exact match is left out, so a wrong guess costs
    space, never exactness.
    """
    residual = record
    sources: list[list[Any]] = []
    for path, index, attribute in candidates:
        try:
            value = _get(record, path)
            held = _extract(parts, index, attribute)
        except (KeyError, store.RecordError):
            continue
        if value is None or not _same_json(value, held):
            continue
        residual = _put(residual, path, None)
        sources.append([list(path), index, attribute])
        if not path:
            break
    if not sources:
        return {"record": record}
    return {"record": residual, "from_parts": sources}


def unpack(packed: Mapping[str, Any], parts: Sequence[store.Part], *,
           in_place: bool = False) -> Any:
    """The record :func:`pack` kept, with the left-out values put back from ``parts``.

    ``in_place=True`` fills the kept record itself instead of a copy: for callers that loaded
    the message themselves and drop it after (a loaded message's metadata is its own).
    """
    record = packed.get("record")
    for path, index, attribute in packed.get("from_parts", ()):
        value = _extract(parts, index, attribute)
        if in_place and path:
            *head, last = path
            _get(record, head)[last] = value
        else:
            record = _put(record, path, value)
    return record
