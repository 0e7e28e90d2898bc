"""Fewer cyclic garbage collections during bulk work (domain; stdlib only).

An import, a search-index catch-up and the worker processes that parse for them allocate
millions of short-lived containers (decoded records, messages, row tuples) that form no
cycles. With CPython's default first-generation threshold (700 allocations), the cyclic
collector ran every few hundred of them and, every hundred runs, scanned the whole heap: 7-13 %
of the importing process's samples at 10^5 messages (py-spy). :func:`fewer_collections` raises
that threshold for the duration of the work (:data:`BULK_THRESHOLD`) and puts back what it
found; collections still run (a cycle is still freed, later), so memory stays bounded.

The setting is the interpreter's, for every thread: it is changed once however deeply calls
nest (the outermost restores it), and worker processes forked meanwhile start with it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["BULK_THRESHOLD", "fewer_collections"]

#: Allocations (net of deallocations) of tracked objects between two young collections during
#: bulk work (CPython's default: 700).
BULK_THRESHOLD = 50_000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def fewer_collections(threshold: int = BULK_THRESHOLD) -> Iterator[None]:
    """Run the block with the young-generation threshold at least ``threshold`` (a higher
    one already set, or a collector switched off, is left as it is)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = young, middle, old = gc.get_threshold()
            if 0 < young < threshold:
                gc.set_threshold(threshold, middle, old)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
