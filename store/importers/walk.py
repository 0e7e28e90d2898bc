"""Importing transcript files into a store: :func:`import_paths` (persistence).

Walks the given files and directories, reads each file with
:func:`~store.importers.formats.read_sessions` and appends each session it holds with
:meth:`TranscriptStore.append <store.db.store.TranscriptStore.append>`, keyed, so that
importing a file again stores nothing twice and a file that grew adds only its new part.

Walking: directories are walked recursively, in name order, for files ending ``.json`` or
``.jsonl`` (any case); directories whose name starts with ``.`` below a given root are not
entered. Paths are resolved; a symbolic link leading out of the root it was found under is
not followed, and a non-regular file (FIFO, device) is refused: both are reported in
``failed_files``. A file given explicitly is read whatever its name.

Failures stay local: a file that cannot be read is recorded in ``failed_files`` and the
import goes on; a session whose messages the store refuses is retried message by message so
that only the refused ones are reported (as problems, with their lines). Database errors are
not input errors: they propagate.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from store.db.store import TranscriptStore
from store.errors import DatabaseError, RecordError, SessionNotFound, StoreError
from store.importers.base import DEFAULT_SETTLE_SECONDS, ImportFileError, ImportProblem
from store.importers.formats import ParsedSession, check_format, read_sessions
from store.model import InvalidToolCall, Message
from store.transcript import AppendResult

__all__ = ["FailedFile", "ImportProgress", "ImportSummary", "import_paths", "iter_import_files"]

_SUFFIXES = (".json", ".jsonl")


@dataclass(frozen=True, slots=True)
class FailedFile:
    """A file that was not imported at all, and why."""

    path: Path
    error: str

    def __str__(self) -> str:
        return f"{self.path}: {self.error}"


@dataclass(frozen=True, slots=True)
class ImportProgress:
    """Where an import is: files and bytes done out of the total, the file being read
    (``None`` once finished), and the messages added so far."""

    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    current: Path | None
    messages_added: int


@dataclass(slots=True)
class ImportSummary:
    """What an import did.

    ``files``: files read; ``sessions``: sessions appended to (``sessions_created`` of them
    new); ``messages_added`` / ``messages_already_stored``; ``calls`` / ``invalid_calls``: tool
    calls in the added messages; ``skipped`` counts records that carry no message, by reason;
    ``deferred``: where input was held back as still being written; ``problems``: bad lines
    and records, with file and line; ``failed_files``: files not imported at all.
    """

    files: int = 0
    sessions: int = 0
    sessions_created: int = 0
    messages_added: int = 0
    messages_already_stored: int = 0
    calls: int = 0
    invalid_calls: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    deferred: list[ImportProblem] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    failed_files: list[FailedFile] = field(default_factory=list)

    @property
    def skipped_lines(self) -> int:
        """How many records were skipped as carrying no message (all reasons)."""
        return sum(self.skipped.values())

    @property
    def ok(self) -> bool:
        """True when every file was read and nothing was reported."""
        return not self.problems and not self.failed_files


# -- walking -------------------------------------------------------------------------------------


def iter_import_files(paths: Iterable[Path | str]) -> Iterator[Path | FailedFile]:
    """The files to import under ``paths`` (see the module docstring), each once, or a
    :class:`FailedFile` for what is refused."""
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        try:
            root = path.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            yield FailedFile(path, f"cannot open: {getattr(exc, 'strerror', None) or exc}")
            continue
        if root.is_dir():
            yield from _walk(root, seen)
        elif root not in seen:
            seen.add(root)
            yield _regular(root)


def _regular(path: Path) -> Path | FailedFile:
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return FailedFile(path, f"cannot open: {exc.strerror or exc}")
    if not stat.S_ISREG(mode):
        return FailedFile(path, "not a regular file: not read")
    return path


def _walk(root: Path, seen: set[Path]) -> Iterator[Path | FailedFile]:
    failures: list[FailedFile] = []

    def report(exc: OSError) -> None:
        failures.append(FailedFile(Path(exc.filename or root), f"cannot list: {exc.strerror}"))

    for folder, dirs, files in os.walk(root, onerror=report):
        base = Path(folder)
        kept = []
        for name in sorted(dirs):
            child = base / name
            if name.startswith("."):
                continue
            if child.is_symlink():
                target = child.resolve()
                if not target.is_relative_to(root):
                    yield FailedFile(child, f"symbolic link to {target}, outside {root}: "
                                            "not followed")
                continue  # a link inside the root: its target is walked on its own
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if not name.lower().endswith(_SUFFIXES) or name.endswith(".meta.json"):
                continue  # (agent-<id>.meta.json: a Claude Code subagent's sidecar)
            child = base / name
            target = child.resolve()
            if child.is_symlink() and not target.is_relative_to(root):
                yield FailedFile(child, f"symbolic link to {target}, outside {root}: "
                                        "not followed")
                continue
            if target in seen:
                continue
            seen.add(target)
            yield _regular(target)
        yield from failures
        failures.clear()
    yield from failures  # the root itself could not be listed


_log = logging.getLogger(__name__)

# -- importing -----------------------------------------------------------------------------------


def import_paths(
    store: TranscriptStore,
    paths: Iterable[Path | str],
    *,
    format: str | None = None,
    progress: Callable[[ImportProgress], None] | None = None,
    settle: float = DEFAULT_SETTLE_SECONDS,
) -> ImportSummary:
    """Import files and directories into ``store`` (see the module docstring).

    ``format`` forces one of :data:`~store.importers.formats.FORMATS` (else each file's format is
    detected); ``progress`` is called before each file and once at the end; ``settle`` is
    passed to :func:`~store.importers.formats.read_sessions`.
    """
    check_format(format)
    summary = ImportSummary()
    found = list(iter_import_files(paths))
    files = [f for f in found if isinstance(f, Path)]
    summary.failed_files.extend(f for f in found if isinstance(f, FailedFile))
    sizes = [_size(f) for f in files]
    total = sum(sizes)
    done = 0
    for number, (path, size) in enumerate(zip(files, sizes, strict=True)):
        if progress is not None:
            progress(ImportProgress(number, len(files), done, total, path,
                                    summary.messages_added))
        done += size
        _log.info("importing %s (file %d of %d)", path, number + 1, len(files))
        try:
            parsed = read_sessions(path, format, settle=settle)
        except ImportFileError as exc:
            _log.warning("not imported: %s: %s", path, exc.reason)
            summary.failed_files.append(FailedFile(path, exc.reason))
            continue
        summary.files += 1
        for problem in parsed.problems:
            _log.warning("import problem: %s", problem)
        summary.problems.extend(parsed.problems)
        summary.deferred.extend(parsed.deferred)
        for reason, count in parsed.skipped.items():
            summary.skipped[reason] = summary.skipped.get(reason, 0) + count
        for session in parsed.sessions:
            _import_session(store, path, session, summary)
    if progress is not None:
        progress(ImportProgress(len(files), len(files), total, total, None,
                                summary.messages_added))
    _log.info("imported %d files: %d sessions, %d messages added, %d already stored, "
              "%d problems, %d files not imported", summary.files, summary.sessions,
              summary.messages_added, summary.messages_already_stored, len(summary.problems),
              len(summary.failed_files))
    return summary


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _import_session(store: TranscriptStore, path: Path, session: ParsedSession,
                    summary: ImportSummary) -> None:
    sid = session.session_id
    try:
        created = _ensure_session(store, session)
    except RecordError as exc:
        summary.problems.append(ImportProblem(path, None, f"session {sid!r}: {exc}"))
        return
    summary.sessions += 1
    summary.sessions_created += created

    def append(items: list[Message], keys: list[str]) -> AppendResult:
        return store.append(sid, items, keys=keys, title=session.title,
                            provider=session.provider, model=session.model, cwd=session.cwd,
                            tags=session.tags, agent=session.agent)

    try:
        results = [append(session.items, session.keys)]
    except DatabaseError:
        raise
    except StoreError:  # one message refused: find which, store the rest
        results = []
        for index, (message, key) in enumerate(zip(session.items, session.keys, strict=True)):
            try:
                results.append(append([message], [key]))
            except DatabaseError:
                raise
            except StoreError as exc:
                text = str(exc).removeprefix("message 0: ")
                summary.problems.append(ImportProblem(
                    path, session.lines[index], f"session {sid!r}: {text}",
                    session.item_indexes[index]))
    for result in results:
        _count(result, summary)


def _ensure_session(store: TranscriptStore, session: ParsedSession) -> bool:
    """Create the session with its metadata when it is new; True when it was created."""
    try:
        store.get_session(session.session_id)
        return False
    except SessionNotFound:
        pass
    try:
        store.create_session(session.session_id, title=session.title,
                             provider=session.provider, model=session.model, cwd=session.cwd,
                             tags=session.tags, metadata=session.metadata,
                             agent=session.agent)
    except DatabaseError as exc:
        try:  # created meanwhile by another importer?
            store.get_session(session.session_id)
        except SessionNotFound:
            raise exc from None
        return False
    return True


def _count(result: AppendResult, summary: ImportSummary) -> None:
    summary.messages_added += len(result.stored)
    summary.messages_already_stored += len(result.skipped_keys)
    for stored in result.stored:
        for call in stored.message.tool_calls:
            summary.calls += 1
            summary.invalid_calls += isinstance(call, InvalidToolCall)
