"""Importing transcript files into a store: :func:`import_paths` (persistence).

Walks the given files and directories, reads each file with
:func:`~store.importers.formats.read_sessions` and appends each session it holds with
:meth:`TranscriptStore.append <store.db.store.TranscriptStore.append>`, keyed, so that
importing a file again stores nothing twice and a file that grew adds only its new part.

Walking: :func:`~store.importers.listing.iter_import_files` lists the files (see there:
``.json`` / ``.jsonl`` files and the agents' databases, sidecars left out, dot-directories
entered only when they are an agent's home); a file given explicitly is read whatever its
name.

**Only what is new.** The store keeps, per file, where its last read stopped
(:class:`~store.capture.files.FileState`, written in the transaction of the file's last rows):
an unchanged file is not read at all, a JSON-lines file that grew is read from where the last
read stopped, and anything else (replaced, shrunk, rewritten, a JSON document) is read whole
(:func:`~store.capture.reading.read_changes`). ``import`` and ``watch`` share these states. A
line reported as a problem is not read again while the file is unchanged or only grows.

A file **rewritten** since it was imported (a message stored from it under a key now holds
something else) is noticed by the store's key check (``on_key_conflict="raise"``): nothing
stored is changed, the file's session is imported whole into a new session
``<id>@<digest>``, and the summary reports it (``diverged``). A file that only grew adds its
new part to the same session.

Failures stay local: a file that cannot be read is recorded in ``failed_files`` and the
import goes on; a session whose messages the store refuses (a typed error, or a value the
database refuses: :func:`refused_value`) is retried message by message so that only the
refused ones are reported (as problems, with file and line), and a session of which nothing
could be stored is not left behind empty. Other database errors are not input errors: they
propagate.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.capture.files import FileState
from store.core.collecting import fewer_collections
from store.core.errors import (
    DatabaseError,
    KeyConflictError,
    RecordError,
    SessionNotFound,
    StoreError,
    UsageError,
)
from store.core.logs import logger
from store.core.model import InvalidToolCall, Message
from store.core.transcript import AppendResult
from store.db.base import check_new_session
from store.db.store import TranscriptStore
from store.importers.agentdb import AGENT_DATABASES
from store.importers.base import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_SETTLE_SECONDS,
    ImportProblem,
)
from store.importers.formats import ParsedSession, check_format
from store.importers.listing import FailedFile, iter_import_files
from store.importers.parallel import NO_MEMORY, default_workers, read_all
from store.records.codec import encode_message

if TYPE_CHECKING:  # (made by the readers: store.records.prepared)
    from store.records.prepared import IndexTexts

__all__ = ["AGENT_DATABASES", "Divergence", "FailedFile", "ImportProgress", "ImportSummary",
           "import_paths", "iter_import_files", "refused_value"]

@dataclass(frozen=True, slots=True)
class Divergence:
    """A file that was rewritten: messages stored from it before (``keys``) differ from what it
    holds now. Nothing stored is changed, and nothing new is dropped: the file's session is
    imported whole into ``stored_as`` (``<session id>@<digest of the first changed message>``,
    so that importing the same file again, or after it grew, finds that session)."""

    path: Path
    session_id: str
    stored_as: str
    keys: tuple[str, ...]

    def __str__(self) -> str:
        return (f"{self.path}: session {self.session_id!r} was rewritten since it was imported "
                f"({len(self.keys)} stored messages differ): imported as {self.stored_as!r}")


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
    and records, with file and line; ``failed_files``: files not imported at all;
    ``diverged``: sessions whose file no longer matches what was imported from it before (see
    :class:`Divergence`); ``unchanged``: files not read, unchanged since their last read;
    ``gone``: source files newly found deleted (``notice_deleted``).
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
    diverged: list[Divergence] = field(default_factory=list)
    unchanged: int = 0
    gone: int = 0
    #: Records of kinds their reader has never seen, by ``"<format>: <kind>"`` (a warning:
    #: ``import --explain FILE`` says what became of them).
    unknown_kinds: dict[str, int] = field(default_factory=dict)

    @property
    def skipped_lines(self) -> int:
        """How many records were skipped as carrying no message (all reasons)."""
        return sum(self.skipped.values())

    @property
    def ok(self) -> bool:
        """True when every file was read and nothing was reported."""
        return not self.problems and not self.failed_files


_log = logger(__name__)

# -- importing -----------------------------------------------------------------------------------


@fewer_collections()
def import_paths(
    store: TranscriptStore,
    paths: Iterable[Path | str],
    *,
    format: str | None = None,
    progress: Callable[[ImportProgress], None] | None = None,
    settle: float = DEFAULT_SETTLE_SECONDS,
    max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
    notice_deleted: bool = False,
    reread: bool = False,
    workers: int | None = 1,
) -> ImportSummary:
    """Import files and directories into ``store`` (see the module docstring).

    Memory: one file is read at a time, and its messages are stored in batches of
    ``_CHUNK``; a file larger than ``max_file_bytes`` (default 256 MiB; ``None``: no limit) is
    refused with its size and the limit in ``failed_files``, and a file that still runs out
    of memory fails alone (``failed_files``), the import going on.

    ``format`` forces one of :data:`~store.importers.formats.FORMATS` (else each file's format is
    detected); ``progress`` is called before each file and once at the end; ``settle`` is
    passed to :func:`~store.importers.formats.read_sessions`. ``notice_deleted``: a source
    file read before under one of the given folders and now deleted is marked gone
    (``summary.gone``; its sessions stay, and say so). ``reread``: every file is read whole
    again, whatever its last read's state (``import --reread``: what an improved reader gives
    that is not stored yet is added; keys keep the rest from being stored twice).
    ``workers``: processes parsing files ahead of the writing (this process, the one
    writer; :mod:`store.importers.parallel`; ``None``: ``TRANSCRIPT_STORE_IMPORT_WORKERS``,
    else the cores): what is stored is what a serial import stores, in the same order and
    transactions.
    """
    check_format(format)
    summary = ImportSummary()
    given = list(paths)
    found = list(iter_import_files(given))
    files = [f for f in found if isinstance(f, Path)]
    summary.failed_files.extend(f for f in found if isinstance(f, FailedFile))
    states = {} if reread else store.source_states()
    # The stored sessions' ids, read when the first file with sessions is (a pass of `watch`
    # over unchanged files reads none).
    known: set[str] | None = None
    if notice_deleted:
        summary.gone = _notice_deleted(store, given, states, found)
    sizes = [_size(f) for f in files]
    total = sum(sizes)
    done = 0
    outcomes = read_all(files, sizes, states, format=format, settle=settle,
                        max_file_bytes=max_file_bytes,
                        workers=default_workers() if workers is None else workers,
                        prepare=indexes_with_rows(store))
    for number, (path, size) in enumerate(zip(files, sizes, strict=True)):
        if progress is not None:
            progress(ImportProgress(number, len(files), done, total, path,
                                    summary.messages_added))
        done += size
        _log.info("importing %s (file %d of %d)", path, number + 1, len(files))
        outcome = next(outcomes)
        read = outcome.read
        if outcome.failed is not None:
            reason = _NO_MEMORY if outcome.failed == NO_MEMORY else outcome.failed
            _log.warning("not imported: %s: %s", path, reason)
            summary.failed_files.append(FailedFile(path, reason))
            continue
        if read is None:
            summary.unchanged += 1
            continue
        parsed = read.parsed
        summary.files += 1
        for problem in parsed.problems:
            _log.warning("import problem: %s", problem)
        summary.problems.extend(parsed.problems)
        summary.deferred.extend(parsed.deferred)
        for reason, count in parsed.skipped.items():
            summary.skipped[reason] = summary.skipped.get(reason, 0) + count
        for kind, count in parsed.unknown_kinds.items():
            _log.warning("%s: %d records of kind %r, which the %s reader has never seen",
                         path, count, kind, parsed.format)
            key = f"{parsed.format}: {kind}"
            summary.unknown_kinds[key] = summary.unknown_kinds.get(key, 0) + count
        carry = _Carry(replace(read.state, sessions=tuple(s.session_id
                                                          for s in parsed.sessions)))
        if known is None and parsed.sessions:
            known = store.session_ids()
        try:
            for number_in_file, session in enumerate(parsed.sessions, 1):
                last = number_in_file == len(parsed.sessions)
                _import_session(store, path, session, summary, carry=carry, last=last,
                                known=known)
        except MemoryError:
            summary.failed_files.append(FailedFile(path, _NO_MEMORY + " (partly stored: "
                                                   "import it again to add the rest)"))
        else:
            if not carry.written:
                store.save_source(carry.state)
        del parsed, read, outcome
    if progress is not None:
        progress(ImportProgress(len(files), len(files), total, total, None,
                                summary.messages_added))
    _log.info("imported %d files: %d sessions, %d messages added, %d already stored, "
              "%d problems, %d files not imported", summary.files, summary.sessions,
              summary.messages_added, summary.messages_already_stored, len(summary.problems),
              len(summary.failed_files))
    return summary


class _Carry:
    """A file's new state, waiting for the transaction of the file's last rows."""

    def __init__(self, state: FileState) -> None:
        self.state = state
        self.written = False

    def take(self) -> FileState | None:
        if self.written:
            return None
        self.written = True
        return self.state

    def put_back(self) -> None:
        self.written = False

    def also(self, session_id: str) -> None:
        self.state = replace(self.state, sessions=(*self.state.sessions, session_id))


def _notice_deleted(store: TranscriptStore, given: list[Path | str],
                    states: dict[str, FileState], found: list[Path | FailedFile]) -> int:
    """Mark the files read before under the given folders that no longer exist."""
    roots = []
    for entry in given:
        try:
            root = Path(entry).resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if root.is_dir():
            roots.append(str(root).rstrip(os.sep) + os.sep)
    seen = {str(f if isinstance(f, Path) else f.path) for f in found}
    gone = [path for path, state in states.items()
            if state.gone_at is None and path not in seen and path.startswith(tuple(roots))
            and not os.path.lexists(path)]
    return store.mark_sources_gone(gone) if gone else 0


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _import_session(store: TranscriptStore, path: Path, session: ParsedSession,
                    summary: ImportSummary, target: str | None = None, depth: int = 0, *,
                    carry: _Carry | None = None, last: bool = False,
                    known: set[str] | None = None) -> None:
    """Store one parsed session (see the module docstring). ``known``: the ids of the
    sessions stored (read once by the import, kept up to date by it); a session not among
    them is new, and created by its first append."""
    if store.dialect == "postgresql":
        session = _nul_safe(session)
    original = session.session_id
    sid = target or original
    # A session the store does not hold yet is created by its first append, in that
    # transaction, with its metadata (no reads and transactions of its own first).
    new = known is not None and sid not in known
    try:
        if new:
            check_new_session(sid, session.title, session.provider, session.model,
                              session.cwd, session.tags, session.metadata, session.agent,
                              session.parent)
            created = False
        else:
            created = _ensure_session(store, session, sid, path)
    except (RecordError, UsageError) as exc:
        summary.problems.append(ImportProblem(path, None, f"session {sid!r}: {exc}"))
        return
    summary.sessions += 1

    # The session's usage goes with its last batch (one transaction with the file's state),
    # unless that batch is refused and stored message by message (then recorded after).
    usage_written = False

    def append(items: list[Message], keys: list[str], check: bool = False,
               source: FileState | None = None, usage: bool = False,
               texts: list[IndexTexts | None] | None = None) -> AppendResult:
        nonlocal usage_written
        result = store.append(sid, items, keys=keys, title=session.title,
                              provider=session.provider, model=session.model, cwd=session.cwd,
                              tags=session.tags, agent=session.agent,
                              on_key_conflict="raise" if check else "skip", source=source,
                              parent=session.parent,
                              activity=(session.started_at, session.ended_at),
                              usage=session.usage if usage else None,
                              metadata=session.metadata, _texts=texts or None)
        usage_written = usage_written or (usage and bool(session.usage))
        return result

    results: list[AppendResult] = []
    texts = _texts_of(session)
    try:
        for start in range(0, len(session.items), _CHUNK):
            ends = start + _CHUNK >= len(session.items)
            results += _append_chunk(append, path, session, sid, start, summary,
                                      check=depth < _MAX_DIVERGENCE,
                                      carry=carry if last and ends else None, usage=ends,
                                      texts=texts)
    except KeyConflictError as conflict:
        # The file was rewritten: import it whole beside what is stored, and say so.
        created = created or any(r.created_session for r in results)
        if created:
            store.delete_session(sid)
        summary.sessions -= 1
        first = session.keys.index(conflict.keys[0])
        new_sid = f"{sid}@{_message_digest(session.keys[first], session.items[first])}"
        summary.diverged.append(Divergence(path, sid, new_sid, conflict.keys))
        if carry is not None:
            carry.also(new_sid)
        _import_session(store, path, session, summary, new_sid, depth + 1, carry=carry,
                        last=last, known=known)
        return
    created = created or any(r.created_session for r in results)
    summary.sessions_created += created
    if known is not None and created:
        known.add(sid)
    for result in results:
        _count(result, summary)
    if new and not created and not any(r.stored for r in results):
        # Nothing of a new session could be stored: it was never created.
        summary.sessions -= 1
        return
    if session.usage and not usage_written and (not created or any(r.stored for r in results)):
        store.record_usage(sid, session.usage)
    if created and not any(r.stored for r in results):
        # Nothing of it could be stored: leave no empty session behind.
        store.delete_session(sid)
        summary.sessions -= 1
        summary.sessions_created -= 1


def _append_chunk(append: Callable[..., AppendResult], path: Path, session: ParsedSession,
                  sid: str, start: int, summary: ImportSummary,
                  check: bool, carry: _Carry | None = None,
                  usage: bool = False, texts: list[IndexTexts | None] | None = None
                  ) -> list[AppendResult]:
    """One batch of a session's messages (the file's last batch carries the file's new state
    into its transaction, a session's last batch its token usage); when the store refuses
    one, the batch again message by message, so that only the refused ones are reported
    (with their lines). ``texts``: the session's index texts (:func:`_texts_of`)."""
    texts = texts or []
    end = start + _CHUNK
    source = carry.take() if carry is not None else None
    try:
        return [append(session.items[start:end], session.keys[start:end], check, source,
                       usage, texts[start:end])]
    except BaseException as exc:
        if carry is not None and source is not None:
            carry.put_back()  # rolled back with the batch
        if isinstance(exc, KeyConflictError) or not isinstance(exc, StoreError):
            raise
        if isinstance(exc, DatabaseError) and not refused_value(exc):
            raise
    results = []
    for index in range(start, min(end, len(session.items))):
        try:
            results.append(append([session.items[index]], [session.keys[index]],
                                  texts=texts[index:index + 1]))
        except StoreError as one:
            if isinstance(one, DatabaseError) and not refused_value(one):
                raise
            text = str(one).removeprefix("message 0: ")
            summary.problems.append(ImportProblem(
                path, session.lines[index], f"session {sid!r}: {text}",
                session.item_indexes[index]))
    return results


def indexes_with_rows(store: TranscriptStore) -> bool:
    """Whether an import makes its messages' index texts where it reads them, for the store
    to write with the rows (``store/db/writing/indexing.py``): on PostgreSQL, where the
    catch-up's rewrite of every call and result left a dead row in the table and its indexes
    (at 10^5 messages: 49 -> 43 s, 531 -> 469 MB). Not on SQLite, where it measured 2-6 %
    slower at 10^6 messages (FTS5 writes a segment per transaction, and an import's are a
    file's each, smaller than the catch-up's): there the catch-up indexes after the import."""
    return store.dialect == "postgresql"


_NUL_SAFE_FIELDS = ("title", "provider", "model", "cwd", "agent")


def _nul_safe(session: ParsedSession) -> ParsedSession:
    """PostgreSQL refuses NUL in a text column: a session's display fields read from a file
    (its title, provider, model, working folder, agent) hold U+FFFD instead, as a message's
    display text does (the exact values stay in the messages' metadata). Before, a NUL in
    any of them stopped the whole import at that file's session."""
    changed: dict[str, Any] = {
        name: value.replace("\x00", "\ufffd") for name in _NUL_SAFE_FIELDS
        if isinstance(value := getattr(session, name), str) and "\x00" in value}
    return replace(session, **changed) if changed else session


def _texts_of(session: ParsedSession) -> list[IndexTexts | None]:
    """The session's index texts made where its file was read (read once), or none."""
    document = session.index_texts
    if document is None:
        return []
    from store.records.prepared import read_texts

    texts = read_texts(document)
    if len(texts) != len(session.items):  # (not the messages they were made for)
        return []
    return texts


def refused_value(exc: DatabaseError) -> bool:
    """True when the database refused a value of the record (a data error: PostgreSQL's
    SQLSTATE classes 22 and 54, SQLite's "too big"), not when it failed: such a record is
    reported and the import goes on; any other database error stops it."""
    cause = exc.__cause__
    orig = getattr(cause, "orig", None) or cause
    sqlstate = getattr(orig, "sqlstate", None)
    if isinstance(sqlstate, str) and sqlstate[:2] in ("22", "54"):
        return True
    return "too big" in str(orig).lower()


#: Messages per append of an import: bounds what one transaction holds in memory.
_CHUNK = 2000

_NO_MEMORY = ("not enough memory to import it: split the file, or import it where more "
              "memory is free")

#: How many rewrites of one file in a row an import follows (each one a new session).
_MAX_DIVERGENCE = 8


def _message_digest(key: str, message: Message) -> str:
    """A short digest of a message as the file holds it now (names a diverged session)."""
    encoded = encode_message(message.parts, message.extras, message.metadata)
    h = hashlib.sha256(key.encode("utf-8", "surrogatepass"))
    for text in (message.role, encoded.parts_json, *(c.wire_json for c in encoded.calls),
                 *(r.content_json for r in encoded.results)):
        h.update(b"\x00" + text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:12]


def _ensure_session(store: TranscriptStore, session: ParsedSession,
                    sid: str | None = None, path: Path | None = None) -> bool:
    """Create the session with its metadata when it is new; True when it was created. A
    session stored earlier under its file name as title (what imports before titles from
    prompts gave) gets the title found now."""
    sid = sid or session.session_id
    try:
        stored = store.get_session(sid)
    except SessionNotFound:
        pass
    else:
        if path is not None and stored.title == path.name and session.title \
                and session.title != path.name:
            store.rename_session(sid, session.title)
        if session.parent is not None and stored.parent != session.parent and (
                stored.parent is None or stored.parent.parent_call_id is None):
            # stored before its link was known (or before revision 0015 could fill it)
            store.link_session(sid, session.parent)
        return False
    try:
        store.create_session(sid, title=session.title,
                             provider=session.provider, model=session.model, cwd=session.cwd,
                             tags=session.tags, metadata=session.metadata,
                             agent=session.agent, parent=session.parent)
    except DatabaseError as exc:
        try:  # created meanwhile by another importer?
            store.get_session(sid)
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
