"""The catch-ups' texts, made ahead on the other cores (persistence; the workers touch no
database).

The call index's catch-up (``store/db/index/search_index.py``) and the message index's
(``store/db/index/message_index.py``) spend most of their time in Python making texts: the
decoded, redacted, folded search text of each call and result, the argument views, each
message's index rows. Those are pure functions of the stored values. With ``workers`` > 1
(``transcript-store import`` and ``db index``, on a machine with a ``fork``), :class:`Ahead`
reads the next chunks' rows outside the write transaction (on the read connection, in the
order the chunks are taken: by session id), has worker processes make their texts while
this process writes the chunk before, and gives each chunk's transaction what was made,
keyed by the row (session, position, index) **and checked against the values it was made
from**: a row that changed since it was read ahead (or was not read ahead) is made in the
transaction, as without workers. What is written is the same either way; the transaction,
its locks and the watermark are unchanged.

At most :data:`LOOKAHEAD` chunks are in the workers at once (memory stays bounded by a few
chunks). A worker that dies (killed, out of memory) ends the help: the rest is made in the
transaction.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Generic, TypeVar

__all__ = ["LOOKAHEAD", "MIN_SESSIONS", "Ahead", "can_fork", "chunk_size"]

_log = logging.getLogger(__name__)

#: Chunks read ahead and given to the workers at most (one more is being written).
LOOKAHEAD = 2
#: Fewer sessions waiting than this: no workers (starting them costs more than they save).
MIN_SESSIONS = 32

K = TypeVar("K", bound=Hashable)


def can_fork() -> bool:
    """Whether worker processes can start as copies of this one (they are given functions of
    this package, never a database connection)."""
    return "fork" in multiprocessing.get_all_start_methods()


def chunk_size(waiting: int, most: int) -> int:
    """Sessions per chunk when the workers help: about a sixteenth of those waiting (so the
    first chunk, which nothing overlaps, is a small part of the work), at most ``most`` (the
    catch-up's own chunk) and at least 8."""
    return max(8, min(most, waiting // 16))


class Ahead(Generic[K]):
    """Chunks of rows read ahead (``read(chunk)`` -> [(key, inputs)], in this process) and
    made in worker processes (``make([inputs...])`` -> [outputs...], a module-level
    function); :meth:`made` gives the outputs of one row when its inputs are still the
    ones it was made from. ``chunks`` lists the chunks in the order the catch-up takes
    them."""

    def __init__(self, workers: int, chunks: Sequence[Any],
                 read: Callable[[Any], list[tuple[K, Any]]],
                 make: Callable[[list[Any]], list[Any]]) -> None:
        self._read, self._make = read, make
        self._todo: deque[Any] = deque(chunks)
        self._flying: deque[tuple[list[tuple[K, Any]], Future[list[Any]]]] = deque()
        self._ready: dict[K, tuple[Any, Any]] = {}
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("fork"))
        self.hits = 0
        self.misses = 0
        self._fill()

    def _fill(self) -> None:
        while self._pool is not None and self._todo and len(self._flying) < LOOKAHEAD:
            rows = self._read(self._todo.popleft())
            if rows:
                self._flying.append((rows, self._pool.submit(self._make,
                                                             [i for _, i in rows])))

    def next_chunk(self) -> None:
        """Take what the workers made for the next chunk (waiting for it), forget the last
        one's, and hand the workers another."""
        self._ready = {}
        if not self._flying:
            self._fill()
        if not self._flying:
            return
        rows, future = self._flying.popleft()
        try:
            outputs = future.result()
        except BrokenProcessPool:  # a worker died: the rest is made in the transactions
            _log.warning("a worker making index texts died: the rest is made in this process")
            self.close()
            return
        self._ready = {key: (inputs, out) for (key, inputs), out in
                       zip(rows, outputs, strict=True)}
        self._fill()

    def made(self, key: K, inputs: Any) -> Any | None:
        """The outputs made for ``key`` from exactly ``inputs``, else None."""
        found = self._ready.get(key)
        if found is not None and found[0] == inputs:
            self.hits += 1
            return found[1]
        self.misses += 1
        return None

    def close(self) -> None:
        pool, self._pool = self._pool, None
        self._flying.clear()
        self._todo.clear()
        self._ready = {}
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Ahead[K]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

