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

Chunks are cut by messages (:data:`CHUNK_MESSAGES`), at most :data:`LOOKAHEAD` are in the
workers at once: memory stays bounded by a few small chunks. A worker that dies (killed, out
of memory) ends the help: the rest is made in the transactions.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Generic, TypeVar

from store.core.logs import logger

__all__ = ["CHUNK_MESSAGES", "LOOKAHEAD", "MIN_MESSAGES", "Ahead", "Chunk", "can_fork", "plan",
           "start"]

_log = logger(__name__)

K = TypeVar("K", bound=Hashable)

#: Chunks read ahead and given to the workers at most (one more is being written).
LOOKAHEAD = 2
#: Messages per chunk when the workers help (a session alone may hold more): what this
#: process holds read ahead, and each worker, stays a few megabytes whatever the sessions'
#: sizes, and the first chunk, which nothing overlaps, is short.
CHUNK_MESSAGES = 2000
#: Fewer messages waiting than this: no workers (starting them costs more than they save).
MIN_MESSAGES = 4 * CHUNK_MESSAGES

#: A chunk as the catch-ups plan it: (session, first position, end position) of each session.
Chunk = Sequence[tuple[str, int, int]]


def can_fork() -> bool:
    """Whether worker processes can start as copies of this one (they are given functions of
    this package, never a database connection)."""
    return "fork" in multiprocessing.get_all_start_methods()


def plan(behind: Sequence[tuple[str, int, int]], most_sessions: int) -> list[Chunk] | None:
    """The lagging sessions (in the order the catch-up takes them) cut into chunks of about
    :data:`CHUNK_MESSAGES` messages (at most ``most_sessions`` sessions each); None when
    fewer than :data:`MIN_MESSAGES` wait (the catch-up then runs alone)."""
    if sum(stop - start for _, start, stop in behind) < MIN_MESSAGES:
        return None
    chunks: list[Chunk] = []
    current: list[tuple[str, int, int]] = []
    count = 0
    for sid, start, stop in behind:
        current.append((sid, start, stop))
        count += stop - start
        if count >= CHUNK_MESSAGES or len(current) >= most_sessions:
            chunks.append(current)
            current, count = [], 0
    if current:
        chunks.append(current)
    return chunks


def start(workers: int, behind: Sequence[tuple[str, int, int]], most_sessions: int,
          read: Callable[[Chunk], list[tuple[K, Any]]],
          make: Callable[[list[Any]], list[Any]]) -> Ahead[K] | None:
    """The help of ``workers`` processes for a catch-up of the lagging sessions ``behind``
    (:func:`plan`), or None: one worker, too little waiting, or no ``fork`` here."""
    if workers <= 1 or not can_fork():
        return None
    chunks = plan(behind, most_sessions)
    return None if chunks is None else Ahead(workers, chunks, read, make)


class Ahead(Generic[K]):
    """Chunks of rows read ahead (``read(chunk)`` -> [(key, inputs)], in this process) and
    made in worker processes (``make([inputs...])`` -> [outputs...], a module-level
    function); :meth:`made` gives the outputs of one row when its inputs are still the
    ones it was made from. ``chunks`` lists the chunks in the order the catch-up takes
    them (:func:`plan`)."""

    def __init__(self, workers: int, chunks: Sequence[Chunk],
                 read: Callable[[Chunk], list[tuple[K, Any]]],
                 make: Callable[[list[Any]], list[Any]]) -> None:
        self._read, self._make = read, make
        self._todo: deque[Chunk] = deque(chunks)
        self._flying: deque[tuple[int, list[tuple[K, Any]], Future[list[Any]] | None]] = \
            deque()
        self._ready: dict[K, tuple[Any, Any]] = {}
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("fork"))
        self.hits = 0
        self.misses = 0
        self._fill()

    def _fill(self) -> None:
        try:
            while self._pool is not None and self._todo and len(self._flying) < LOOKAHEAD:
                chunk = self._todo.popleft()
                rows = self._read(chunk)
                future = self._pool.submit(self._make, [i for _, i in rows]) if rows else None
                self._flying.append((len(chunk), rows, future))
        except BrokenProcessPool:  # a worker died before this chunk was handed out
            self._worker_died()
        except BaseException:  # (a read that failed: no worker is left behind)
            self.close()
            raise

    def next_chunk(self) -> int | None:
        """Take what the workers made for the next planned chunk (waiting for it), forget the
        last one's, hand the workers another, and give the number of sessions of the chunk
        to take now; None when the plan is done (or a worker died)."""
        self._ready = {}
        if not self._flying:
            return None
        sessions, rows, future = self._flying.popleft()
        try:
            outputs = future.result() if future is not None else []
        except BrokenProcessPool:  # a worker died: the rest is made in the transactions
            self._worker_died()
            return None
        self._ready = {key: (inputs, out) for (key, inputs), out in
                       zip(rows, outputs, strict=True)}
        self._fill()
        return sessions

    def made(self, key: K, inputs: Any) -> Any | None:
        """The outputs made for ``key`` from exactly ``inputs``, else None."""
        found = self._ready.get(key)
        if found is not None and found[0] == inputs:
            self.hits += 1
            return found[1]
        self.misses += 1
        return None

    def _worker_died(self) -> None:
        _log.warning("a worker making index texts died: the rest is made in this process")
        self.close()

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

