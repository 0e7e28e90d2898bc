"""WAL checkpoints off the append path, on SQLite (persistence layer).

SQLite checkpoints its write-ahead log inside the commit that pushes it past
``wal_autocheckpoint`` pages (1,000 by default): that one append then copies the whole log
into the database file, and the committed-append p99 was 10x its p50 (issue 28). A store
that writes keeps a :class:`Checkpointer`: a daemon thread of its own, on its own
connection, runs ``PRAGMA wal_checkpoint(PASSIVE)`` after every :data:`CHECKPOINT_EVERY`
commits (a passive checkpoint never blocks writers or readers; a writer goes on appending to
the log while it copies). The store's connections keep an automatic checkpoint only as a
safety net (:data:`SAFETY_NET_PAGES`, ten times SQLite's default), for a process whose thread
cannot keep up. Another process (an agent's own ``sqlite3``) keeps SQLite's default.

The thread is started on first use in each process (a forked child starts its own) and
stopped by :meth:`Checkpointer.close`; a process that dies leaves the log as SQLite would
(the next checkpoint or the last connection's close folds it in).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

__all__ = ["CHECKPOINT_EVERY", "SAFETY_NET_PAGES", "Checkpointer"]

#: Commits between two background checkpoints.
CHECKPOINT_EVERY = 200
#: ``wal_autocheckpoint`` of the store's own connections (pages): reached only when the
#: background thread falls behind.
SAFETY_NET_PAGES = 10_000


class Checkpointer:
    """Background passive checkpoints of one SQLite file (see the module docstring)."""

    def __init__(self, path: Path, every: int = CHECKPOINT_EVERY) -> None:
        self._path = path
        self._every = every
        self._commits = 0
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._closed = False
        #: Checkpoints run so far (for tests and the benchmark).
        self.runs = 0

    def committed(self) -> None:
        """Count one commit; every ``every`` commits, wake the thread."""
        self._commits += 1
        if self._commits >= self._every and not self._closed:
            self._commits = 0
            self._start()
            self._wake.set()

    def close(self) -> None:
        """Stop the thread (after the checkpoint it may be running)."""
        self._closed = True
        self._wake.set()
        thread = self._thread
        if thread is not None and self._pid == os.getpid() and thread.is_alive():
            thread.join(timeout=5)

    def _start(self) -> None:
        with self._lock:
            alive = self._thread is not None and self._thread.is_alive()
            if alive and self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._run, name="transcript-store-checkpoint",
                                            daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self._path, timeout=5, check_same_thread=False)
        except sqlite3.Error:
            return  # the file is gone or unreadable: the safety net checkpoints
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closed:
                    return
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.runs += 1
                except sqlite3.Error:
                    continue  # busy or gone: the next wake-up tries again
        finally:
            conn.close()
