"""Reading what is new in a source file, from where the last read stopped (domain).

:func:`read_changes` opens the file once, compares it with its stored
:class:`~store.capture.files.FileState` (:func:`~store.capture.files.change_of`) and reads:

* nothing, when it is unchanged (``None``);
* the bytes after the offset of a JSON-lines file that grew, split into lines numbered on
  from the stored line count, so that keys (``<session>:<line>``, record ids) come out as a
  whole read gives them; the records a reader needs from before the offset (``context``)
  are read again from the state;
* an agent's SQLite database whole, when it or its ``-wal`` changed
  (:mod:`~store.importers.agentdb`);
* the whole file otherwise (JSON lines read the same way from offset 0, other files by
  :func:`~store.importers.formats.read_sessions`).

A last line without its newline is held back (``deferred``, no problem) until it is complete
or the file has settled; so is a Claude Code turn that may still grow. The new state's offset
stops before the first held-back line, so the next read starts there. A line that is not
JSON in the middle of the file is reported once: the offset moves past it.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from store.capture.files import (
    LINE_FORMATS,
    Change,
    FileState,
    change_of,
    identity_of,
    window_digest,
)
from store.core.arguments import loads_json
from store.core.errors import ImportFileError
from store.importers.agentdb import (
    DB_FORMATS,
    SQLITE_HEADER,
    database_signature,
    read_agent_db,
)
from store.importers.base import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_SETTLE_SECONDS,
    Collector,
    ParsedFile,
    Record,
    Source,
)
from store.importers.formats import (
    DETECT_RECORDS,
    account_for,
    check_forced,
    check_format,
    detect_format,
    read_line_records,
    read_sessions,
)

__all__ = ["FileRead", "read_changes"]

_LINE_SUFFIXES = (".jsonl", ".ndjson")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class FileRead:
    """What one read of a file gave: its sessions and problems (``parsed``), how it had
    changed, and the state to store once its messages are stored."""

    parsed: ParsedFile
    change: Change
    state: FileState


def read_changes(path: Path, state: FileState | None, *, format: str | None = None,
                 settle: float = DEFAULT_SETTLE_SECONDS,
                 max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
                 now: float | None = None) -> FileRead | None:
    """Read what changed in ``path`` since ``state`` (see the module docstring); ``None``
    when nothing did. Raises :class:`ImportFileError` when the file cannot be read. The
    state to store carries the file's per-kind account: this read's, added to the earlier
    reads' when the file grew (what was held back is counted again when it is read)."""
    read = _read_changes(path, state, format=format, settle=settle,
                         max_file_bytes=max_file_bytes, now=now)
    if read is None:
        return None
    kinds: dict[str, dict[str, int]] = {}
    if read.change == "grown" and state is not None and state.kinds:
        for kind, counts in state.kinds.items():
            kept = {o: n for o, n in counts.items() if o != "held back"}
            if kept:
                kinds[kind] = kept
    for kind, counts in read.parsed.kinds.items():
        into = kinds.setdefault(kind, {})
        for outcome, n in counts.items():
            into[outcome] = into.get(outcome, 0) + n
    return replace(read, state=replace(read.state, kinds=kinds))


def _read_changes(path: Path, state: FileState | None, *, format: str | None,
                  settle: float, max_file_bytes: int | None,
                  now: float | None) -> FileRead | None:
    check_format(format)
    current = time.time() if now is None else now
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ImportFileError(path, f"cannot open: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ImportFileError(path, "is not a regular file")
        if os.pread(fd, 16, 0) == SQLITE_HEADER:
            return _read_database(path, info, state, format, settle, max_file_bytes, current)
        change = change_of(state, info, fd, now=current, settle=settle, format=format)
        if change == "unchanged":
            return None
        settled = settle <= 0 or current - info.st_mtime >= settle
        if change == "grown" and state is not None and state.format is not None:
            return _read_lines(path, fd, info, state.format, state.offset, state.lines,
                               state.context, settled, max_file_bytes, change)
        if format in LINE_FORMATS or (format is None
                                      and path.suffix.lower() in _LINE_SUFFIXES):
            read = _read_lines(path, fd, info, format, 0, 0, (), settled, max_file_bytes,
                               change, forced=format is not None)
            if read is not None:
                return read
    except OSError as exc:
        raise ImportFileError(path, f"cannot read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    # A JSON document, or JSON lines of a format read whole (Gemini CLI, message lists).
    parsed = read_sessions(path, format, settle=settle, max_file_bytes=max_file_bytes)
    size = info.st_size
    return FileRead(parsed, change, FileState(
        str(path), identity_of(info), size, info.st_mtime_ns, size, 0, "",
        parsed.format if parsed.format != "unknown" else None, (), bool(parsed.deferred)))


def _read_database(path: Path, info: os.stat_result, state: FileState | None,
                   format: str | None, settle: float, max_bytes: int | None,
                   now: float) -> FileRead | None:
    """An agent's SQLite database: unchanged when neither it nor its ``-wal`` changed (and
    nothing held back has settled since), else read whole (:mod:`store.importers.agentdb`;
    keys make that idempotent)."""
    digest, newest = database_signature(path)
    if (state is not None and state.gone_at is None and state.format in DB_FORMATS
            and format in (None, state.format) and state.identity == identity_of(info)
            and (state.size, state.mtime_ns, state.digest)
            == (info.st_size, info.st_mtime_ns, digest)
            and not (state.pending and (settle <= 0 or now - newest >= settle))):
        return None
    parsed = account_for(read_agent_db(path, format, settle=settle, max_file_bytes=max_bytes,
                                       now=now), [])
    change: Change = "reread"
    return FileRead(parsed, change, FileState(
        str(path), identity_of(info), info.st_size, info.st_mtime_ns, info.st_size, 0, digest,
        parsed.format, (), bool(parsed.deferred)))


def _read_lines(path: Path, fd: int, info: os.stat_result, fmt: str | None, offset: int,
                lines: int, context: Sequence[Record], settled: bool,
                max_bytes: int | None, change: Change, *, forced: bool = False
                ) -> FileRead | None:
    """The lines after ``offset`` (``lines`` before it); ``None`` when ``fmt`` is not given
    and the lines turn out not to be of a JSON-lines format. ``forced``: ``fmt`` is the
    user's ``--format``, which must fit the file (as :func:`read_sessions` checks it)."""
    size = info.st_size
    if max_bytes is not None and size - offset > max_bytes:
        what = f"is {size} bytes" if offset == 0 else f"has {size - offset} new bytes"
        raise ImportFileError(path, (
            f"{what}, over the import limit of {max_bytes} bytes: "
            "an import holds a file's messages in memory (about seven times its size); raise "
            "the limit (--max-file-mib, max_file_bytes=) or split the file"))
    data = _pread_all(fd, size - offset, offset)
    collector = Collector(Source(path, "", settled), fmt or "")
    records: list[Record] = []
    starts: dict[int, int] = {}
    number = lines
    position = 0
    resume: int | None = None
    if offset == 0 and data.startswith(_BOM):
        position = len(_BOM)
    end = len(data)
    last = 0
    while position < end:
        newline = data.find(b"\n", position)
        number += 1
        start = offset + position
        if newline < 0:
            if not settled:  # a partial last line: it waits for the rest
                collector.defer(number)
                resume = start
                break
            chunk, position = data[position:], end
        else:
            chunk, position = data[position:newline], newline + 1
        starts[number] = start
        if chunk.endswith(b"\r"):
            chunk = chunk[:-1]
        if not chunk.strip():
            continue
        last = number
        try:
            records.append((number, loads_json(chunk)))
        except ValueError as exc:
            collector.problem(number, f"not JSON: {exc}")
    if fmt is None:
        if not records:
            if collector.problems or resume is not None:
                return None  # not JSON lines: the whole-file reader says why
            parsed = ParsedFile(path, "unknown", skipped={"empty file": 1})
            return FileRead(parsed, change, FileState(
                str(path), identity_of(info), size, info.st_mtime_ns, offset, lines,
                window_digest(fd, offset), None, (), resume is not None))
        fmt = detect_format(path, [r for _, r in records[:DETECT_RECORDS]])
        if fmt not in LINE_FORMATS:
            return None
        collector.format = fmt
    sample = [r for _, r in records[:DETECT_RECORDS]]
    if forced:
        check_forced(path, fmt, sample, proven_only=True)
    read_line_records(fmt, [*context, *records], last or lines, collector)
    parsed = account_for(collector.result(), records)
    if forced and parsed.messages == 0 and not parsed.deferred:
        check_forced(path, fmt, sample, proven_only=False)
    held = [starts[d.line] for d in parsed.deferred if d.line is not None and d.line in starts]
    if held:
        resume = min([*held, *([resume] if resume is not None else [])])
    if resume is None:
        resume = size
    count = lines + data.count(b"\n", 0, resume - offset)
    return FileRead(parsed, change, FileState(
        str(path), identity_of(info), size, info.st_mtime_ns, resume, count,
        window_digest(fd, resume), fmt, _carried(fmt, context, records, path),
        bool(parsed.deferred)))


def _pread_all(fd: int, length: int, offset: int) -> bytes:
    chunks = []
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        chunks.append(chunk)
        length -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


#: A Claude Code session file's name (``<session id>.jsonl``).
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _carried(fmt: str, context: Sequence[Record], records: list[Record],
             path: Path | None = None) -> tuple[Record, ...]:
    """The records a later read of the file needs from before its offset: a Codex rollout's
    first record (``session_meta``, or an old rollout's header) and its latest
    ``turn_context`` (the model of the messages after it); a Kward session's header; the
    first line of a Claude Code file named after another session than that line's (a
    resume: the lines of the new session that follow continue that one)."""
    if fmt == "claude-code":
        if context:
            return tuple(context)
        first = next((r for r in records if isinstance(r[1], dict)
                      and isinstance(r[1].get("sessionId"), str)
                      and r[1].get("isSidechain") is not True
                      and isinstance(r[1].get("message"), dict)), None)
        if (first is not None and path is not None and _UUID.fullmatch(path.stem)
                and first[1]["sessionId"] != path.stem):
            return (first,)
        return ()
    if fmt == "codex":
        first = context[0] if context else (records[0] if records else None)
        turn = next((r for r in reversed(records) if _kind(r[1]) == "turn_context"),
                    context[1] if len(context) > 1 else None)
        kept = [first] if first is not None else []
        if turn is not None and (first is None or turn[0] != first[0]):
            kept.append(turn)
        return tuple(kept)
    if fmt == "kward":
        if context:
            return tuple(context)
        header = next((r for r in records if _kind(r[1]) == "session"), None)
        return (header,) if header is not None else ()
    return ()


def _kind(record: Any) -> Any:
    return record.get("type") if isinstance(record, dict) else None
