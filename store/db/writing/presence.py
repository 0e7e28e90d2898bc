"""An SQLite store's presence on its database file, in a lock no other ``close()`` drops
(persistence layer; issue 37).

SQLite knows that a process uses a WAL database by the POSIX advisory lock each connection
holds on the file (a read lock on its SHARED bytes), and a process that closes its last
connection deletes the ``-wal`` and ``-shm`` files when it can take the EXCLUSIVE lock, that
is when no other process holds one. But POSIX locks belong to the process, not to the file
descriptor: *any* ``close()`` of *any* descriptor of the file in the process drops *all* of
them (SQLite's "How To Corrupt An SQLite Database File", 2.2). One read of the database's
bytes in a process running stores (as a check that an erase scrubbed them does) left the
stores there without locks; the next ``transcript-store`` command to close deleted the WAL
and the shared-memory file under them, their writes went to unlinked files, and every new
connection met a fresh WAL the old index did not describe: ``disk I/O error`` on every call.

So a store that writes holds, while it is open, a read lock of its own on the same byte
(``SHARED_FIRST``) through an *open file description* lock (Linux ``F_OFD_SETLK``): it
conflicts with the EXCLUSIVE lock as SQLite's own would, but belongs to this module's
descriptor, so that no other ``close()`` in the process drops it. The last store of the
process on a file lets go before its connections close (so that the last process still
tidies up the WAL as SQLite does) and closes the descriptor after. Where the platform has no
such locks (macOS, Windows) nothing is held: as before, nothing in a process that runs a store
may open and close the database file but SQLite.
"""

from __future__ import annotations

import os
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["Presence", "SHARED_FIRST"]

#: SQLite's lock bytes (os_unix.c): PENDING_BYTE (1 GiB), RESERVED, then the SHARED range.
SHARED_FIRST = 0x40000000 + 2

_OFD_SETLK: int | None = getattr(fcntl, "F_OFD_SETLK", None) if fcntl is not None else None


def _lock(fd: int, kind: int) -> None:
    # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks), padded.
    assert fcntl is not None and _OFD_SETLK is not None
    fcntl.fcntl(fd, _OFD_SETLK, struct.pack("hhqqi4x", kind, os.SEEK_SET, SHARED_FIRST, 1, 0))


@dataclass
class _Held:
    fd: int
    stores: int
    pid: int


_HELD: dict[tuple[int, int], _Held] = {}
_GUARD = threading.Lock()


class Presence:
    """One store's share of its process's presence lock on a database file."""

    def __init__(self, path: Path) -> None:
        self._key: tuple[int, int] | None = None
        self._fd: int | None = None  # to close once the store's connections are closed
        if _OFD_SETLK is None:
            return
        try:
            found = os.stat(path)
        except OSError:
            return
        key = (found.st_dev, found.st_ino)
        with _GUARD:
            held = _HELD.get(key)
            if held is None or held.pid != os.getpid():  # (a forked child takes its own)
                try:
                    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                except OSError:
                    return
                try:
                    _lock(fd, fcntl.F_RDLCK)
                except OSError:  # a process closing its last connection holds EXCLUSIVE
                    os.close(fd)
                    return
                held = _HELD[key] = _Held(fd, 0, os.getpid())
            held.stores += 1
        self._key = key

    @property
    def held(self) -> bool:
        return self._key is not None

    def release(self) -> None:
        """Let go (before the store's connections close): the last store of the process on
        the file unlocks, and :meth:`close` then closes the descriptor."""
        key, self._key = self._key, None
        if key is None:
            return
        with _GUARD:
            held = _HELD.get(key)
            if held is None or held.pid != os.getpid():
                return
            held.stores -= 1
            if held.stores > 0:
                return
            del _HELD[key]
            try:
                _lock(held.fd, fcntl.F_UNLCK)
            except OSError:
                pass
            self._fd = held.fd

    def close(self) -> None:
        """Close the descriptor of a released presence (after the store's connections: a
        close drops the process's POSIX locks on the file, theirs among them)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
