"""Reading many files at once in worker processes, in file order (domain: stdlib only).

:func:`read_all` gives, for each file in the order given, what
:func:`~store.capture.reading.read_changes` gives for it (a :class:`FileRead`, ``None`` when
unchanged, or the reason it failed), reading ahead in ``workers`` processes while the
caller stores what was read before. What is read ahead is bounded: at most
:data:`AHEAD_BYTES` of files (at least one file) are being read or waiting, so that memory
stays bounded whatever the number and size of the files. Files that look unchanged since
their stored state (same size and mtime) are read in the caller's process (a stat, no
parse), and so is everything when ``workers`` is 1 or the files to read are few
(:data:`MIN_PARALLEL_BYTES`).

A worker parses only: the store is written by the caller alone (one writer), so the
transactions, the per-file states written with a file's last rows, and what a kill leaves
are those of a serial import. Parsed values go back pickled (``MappingProxyType`` extras as
their dict); a worker that dies takes only the file it was reading, reported as failed.
"""

from __future__ import annotations

import copyreg
import io
import multiprocessing
import os
import pickle
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from store.capture.files import FileState
from store.capture.reading import FileRead, read_changes
from store.core.errors import ImportFileError

__all__ = ["AHEAD_BYTES", "MIN_PARALLEL_BYTES", "Outcome", "default_workers", "read_all"]

#: At most this many bytes of files are read ahead of the writer (at least one file).
AHEAD_BYTES = 48 << 20
#: Fewer bytes than this to read: read in the caller's process (a pool costs its start).
MIN_PARALLEL_BYTES = 16 << 20

NO_MEMORY = "no memory"
WORKER_DIED = ("the process reading it died (out of memory, or killed): import it again, "
               "or with --workers 1")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What reading one file gave: ``read`` (``None``: unchanged), or ``failed`` (the
    reason, or :data:`NO_MEMORY`)."""

    read: FileRead | None = None
    failed: str | None = None


def default_workers() -> int:
    """``TRANSCRIPT_STORE_IMPORT_WORKERS``, else the cores this process may use."""
    configured = os.environ.get("TRANSCRIPT_STORE_IMPORT_WORKERS", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _proxy(values: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(values)


def _reduce_proxy(value: MappingProxyType[str, Any]) -> tuple[Any, tuple[dict[str, Any]]]:
    return _proxy, (dict(value),)


_DISPATCH = {**copyreg.dispatch_table, MappingProxyType: _reduce_proxy}


def _dumps(value: object) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH  # (this pickler only: nothing global changes)
    pickler.dump(value)
    return buffer.getvalue()


def read_one(path: Path, state: FileState | None, format: str | None, settle: float,
             max_file_bytes: int | None, prepare: bool = False) -> Outcome:
    """One file's read, its failure caught (what a worker and the caller both run).
    ``prepare``: each session's index texts also made (``store.records.prepared``), for the
    writer to store with the rows."""
    try:
        read = read_changes(path, state, format=format, settle=settle,
                            max_file_bytes=max_file_bytes)
        if prepare and read is not None:
            from store.records.prepared import prepare_texts  # (an import's only)

            for session in read.parsed.sessions:
                session.index_texts = prepare_texts(session.session_id, session.items)
        return Outcome(read)
    except ImportFileError as exc:
        return Outcome(failed=exc.reason)
    except MemoryError:
        return Outcome(failed=NO_MEMORY)


def _work(path: Path, state: FileState | None, format: str | None, settle: float,
          max_file_bytes: int | None, prepare: bool) -> bytes:
    return _dumps(read_one(path, state, format, settle, max_file_bytes, prepare))


def _looks_changed(path: Path, state: FileState | None, size: int) -> bool:
    if state is None or state.pending or state.gone_at is not None:
        return True
    try:
        info = path.stat()
    except OSError:
        return True
    return (info.st_size, info.st_mtime_ns) != (state.size, state.mtime_ns) or size != info.st_size


def read_all(files: Sequence[Path], sizes: Sequence[int], states: dict[str, FileState], *,
             format: str | None, settle: float, max_file_bytes: int | None,
             workers: int, prepare: bool = False) -> Iterator[Outcome]:
    """Each file's :class:`Outcome`, in order (see the module docstring; ``prepare``: see
    :func:`read_one`)."""
    changed = [_looks_changed(f, states.get(str(f)), s) for f, s in zip(files, sizes,
                                                                          strict=True)]
    todo = sum(s for s, c in zip(sizes, changed, strict=True) if c)
    if workers <= 1 or todo < MIN_PARALLEL_BYTES or sum(changed) < 2:
        for path in files:
            yield read_one(path, states.get(str(path)), format, settle, max_file_bytes,
                           prepare)
        return
    # fork where there is one: a worker starts as a copy of this process, without importing
    # the caller's main module again (spawn and forkserver do: a script without the
    # ``if __name__ == "__main__"`` guard would run again); a worker only parses
    context = multiprocessing.get_context("fork" if "fork" in
                                          multiprocessing.get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[tuple[int, Future[bytes] | None]] = deque()
        ahead = 0
        following = 0  # the next file to hand out

        def fill() -> None:
            nonlocal ahead, following
            while following < len(files) and (not pending or (
                    ahead + sizes[following] <= AHEAD_BYTES
                    and len(pending) < 4 * workers)):
                number = following
                following += 1
                if not changed[number]:
                    pending.append((number, None))
                    continue
                path = files[number]
                pending.append((number, pool.submit(_work, path, states.get(str(path)),
                                                    format, settle, max_file_bytes, prepare)))
                ahead += sizes[number]

        broken = False
        fill()
        while pending:
            number, future = pending.popleft()
            path = files[number]
            if future is None or broken:
                outcome = read_one(path, states.get(str(path)), format, settle,
                                   max_file_bytes, prepare)
            else:
                ahead -= sizes[number]
                try:
                    outcome = pickle.loads(future.result())
                except BrokenProcessPool:  # a worker died (killed, out of memory)
                    broken = True
                    outcome = Outcome(failed=WORKER_DIED)
                except MemoryError:
                    outcome = Outcome(failed=NO_MEMORY)
                if not broken:
                    fill()
            yield outcome
            if not broken:
                fill()
            elif following < len(files):  # the rest in this process
                pending.extend((n, None) for n in range(following, len(files)))
                following = len(files)
