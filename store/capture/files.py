"""What the store knows of a source file, and what changed in it since (domain).

A :class:`FileState` says where the last read of a file stopped: the file's identity
(device and inode), size and modification time when it was read, the byte ``offset`` read up
to and the number of lines before it, a digest of what was read (:func:`window_digest`), the
format, the records a JSON-lines reader needs again to go on from the offset (``context``:
a Codex rollout's ``session_meta`` ...), and whether something was held back (``pending``: a
partial last line, a turn still being written).

:func:`change_of` compares a state with the file as it is now:

* ``unchanged``: same identity, size and modification time, and nothing held back that
  has settled since: nothing is read.
* ``grown``: same identity, not shorter than the offset, the read part unchanged (its
  digest), and a JSON-lines format: only the bytes after the offset are read.
* ``reread``: anything else (new file, replaced, shrunk, rewritten in place, a JSON
  document such as a Gemini CLI chat): the file is read whole; keys make that idempotent,
  and a message stored before under a key that now holds something else is kept (the
  importer's divergence rule).

The digest covers the first and the last 4 KiB before the offset: an append-only file keeps
both; a file replaced or rewritten differs in one of them in practice (a new session's first
line differs; a rewrite's tail moves). It costs two small reads, whatever the file's size.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from store.agents.registry import agents
from store.core.sessioninfo import SessionSource  # (a light module)

__all__ = ["LINE_FORMATS", "Change", "FileState", "SessionSource", "change_of", "identity_of",
           "window_digest"]

#: Formats read line by line, which a read can resume from an offset: this store's export
#: and the agents whose definitions say so (``incremental``).
LINE_FORMATS = frozenset({"transcript-store", *(a.name for a in agents() if a.incremental)})

#: Bytes at each end of the read part that the digest covers.
WINDOW = 4096

Change = Literal["unchanged", "grown", "reread"]


@dataclass(frozen=True, slots=True)
class FileState:
    """Where the last read of a source file stopped (see the module docstring)."""

    path: str
    identity: str
    size: int
    mtime_ns: int
    offset: int
    lines: int
    digest: str
    format: str | None
    context: tuple[tuple[int, Any], ...] = ()
    pending: bool = False
    #: When the store noticed the file was gone (``None`` while it exists).
    gone_at: datetime | None = None
    #: The sessions the file's messages went to.
    sessions: tuple[str, ...] = ()
    #: What each record kind of the file became, over its reads (``{kind: {outcome:
    #: count}}``, store/importers/account.py); ``None``: not known (read before it was kept).
    kinds: Mapping[str, Mapping[str, int]] | None = None


def identity_of(info: os.stat_result) -> str:
    """A file's identity: ``<device>:<inode>``."""
    return f"{info.st_dev}:{info.st_ino}"


def window_digest(fd: int, offset: int) -> str:
    """The digest of the first and last :data:`WINDOW` bytes before ``offset`` of an open
    file (with the offset itself)."""
    h = hashlib.sha256(str(offset).encode())
    h.update(os.pread(fd, min(WINDOW, offset), 0))
    start = max(0, offset - WINDOW)
    h.update(os.pread(fd, offset - start, start))
    return h.hexdigest()[:32]


def change_of(state: FileState | None, info: os.stat_result, fd: int, *, now: float,
              settle: float, format: str | None = None) -> Change:
    """How the open file ``fd`` (stat ``info``) changed since ``state`` (see the module
    docstring); ``format``: a format forced by the caller (a different one rereads)."""
    if state is None or state.gone_at is not None:
        return "reread"
    if format is not None and format != state.format:
        return "reread"
    if identity_of(info) != state.identity or info.st_size < state.offset:
        return "reread"
    if info.st_size == state.size and info.st_mtime_ns == state.mtime_ns:
        settled = settle <= 0 or now - info.st_mtime >= settle
        if not (state.pending and settled):
            return "unchanged"
    if state.format not in LINE_FORMATS:
        return "reread"
    if window_digest(fd, state.offset) != state.digest:
        return "reread"
    return "grown"
