"""What the importers share: the parsed values, reading a file, and the collector (domain).

A file is read whole, as UTF-8 (a leading BOM is dropped), into a :class:`Source`:
one JSON document, or JSON lines split on ``\\n`` only (a raw U+2028 inside a JSON string is
not a line break). A line that is not JSON, or holds a byte that is not UTF-8, is an
:class:`ImportProblem` with its number (and the bad byte's offset), never imported or
repaired, and the rest of the file is still read. A file that cannot be read at all
(missing, a directory, not a regular file, no permission, one JSON document that is not
UTF-8) raises :class:`ImportFileError`.

**Settling.** A file that is still being written may end in the middle of a record: a last
line without its newline, or an assistant turn whose remaining lines are not written yet.
Such a trailing, possibly incomplete part is *deferred* (held back and reported, never
stored) unless the file is *settled*: unchanged for ``settle`` seconds (0 settles every file).
A later import, after the file grew or settled, stores it; since keys are stable nothing is
stored twice.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from store.agents.registry import agent_for_format
from store.core.arguments import loads_json
from store.core.errors import ImportFileError, StoreError
from store.core.lineage import SessionLink
from store.core.model import Message
from store.importers.titles import prompt_title
from store.normalize.messages import NotAMessage, normalize_message
from store.usage.tokens import TokenUsage

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_SETTLE_SECONDS",
    "Collector",
    "ImportFileError",
    "ImportProblem",
    "ParsedFile",
    "ParsedSession",
    "Record",
    "Source",
    "path_session_id",
    "read_source",
]

#: A file unchanged for this long is taken as complete: nothing of it is deferred.
DEFAULT_SETTLE_SECONDS = 300.0

def _agent_format(fmt: str) -> bool:
    """Whether ``fmt`` is written by an agent (the session's ``agent``; the other formats are
    provider message lists and this store's export)."""
    return agent_for_format(fmt) is not None


_DEFERRED = "held back: possibly still being written (imported once the file grows or settles)"

#: One parsed JSON line: its 1-based line number and the decoded value.
Record = tuple[int, Any]


@dataclass(frozen=True, slots=True)
class ImportProblem:
    """Input that was not imported: ``line`` (JSON lines) or ``item`` (index in a JSON
    document's list) says where, ``message`` why. The rest of the file was imported."""

    path: Path
    line: int | None
    message: str
    item: int | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.path}:{self.line}: {self.message}"
        if self.item is not None:
            return f"{self.path}: item {self.item}: {self.message}"
        return f"{self.path}: {self.message}"


@dataclass(slots=True)
class ParsedSession:
    """One session read from a file: messages in order, each with its idempotency key.

    ``lines`` gives each message's first source line (``None`` in a JSON document) and
    ``item_indexes`` its index in a JSON document's list (``None`` in JSON lines).
    """

    session_id: str
    items: list[Message] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    title: str | None = None
    provider: str | None = None
    model: str | None = None
    cwd: str | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    lines: list[int | None] = field(default_factory=list)
    item_indexes: list[int | None] = field(default_factory=list)
    #: The agent that recorded the session (the format of agent transcripts; aliases scoped
    #: to it apply to its calls).
    agent: str | None = None
    #: The token usage the file records, by message key (one entry per response, however many
    #: lines repeated it); stored beside the messages (``TranscriptStore.record_usage``).
    usage: dict[str, TokenUsage] = field(default_factory=dict)
    #: The session it descends from, when the file says (a subagent's parent, the session a
    #: fork or a resume continues): stored in the session's row (store.core.lineage).
    parent: SessionLink | None = None
    #: When the agent recorded the session as started and as last active (its own start and
    #: end records, its session row's times, a folder named by its creation time): the
    #: session's activity, beside its messages' times (None: the file records neither).
    started_at: datetime | None = None
    ended_at: datetime | None = None
    #: The messages' index texts, made where the file was read (an import asks for them:
    #: ``store.records.prepared.prepare_texts``), stored with the rows; ``None``: the
    #: catch-ups index the messages.
    index_texts: bytes | None = None


@dataclass(slots=True)
class ParsedFile:
    """What one file gave: its sessions, the problems found, and what was left out on purpose.

    ``skipped`` counts records that carry no message, by reason (a Codex ``event_msg``, a
    Claude Code ``summary`` ...); ``deferred`` lists where input was held back as possibly
    still being written (see the module docstring); ``kinds`` says what each record kind
    became.
    """

    path: Path
    format: str
    sessions: list[ParsedSession] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    deferred: list[ImportProblem] = field(default_factory=list)
    #: What each record kind became: ``{kind: {outcome: count}}``
    #: (:func:`store.importers.account.file_account`), and the kinds the reader has never
    #: seen, with their counts (a warning of the import, never silence).
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)
    unknown_kinds: dict[str, int] = field(default_factory=dict)

    @property
    def messages(self) -> int:
        return sum(len(s.items) for s in self.sessions)


def path_session_id(path: Path) -> str:
    """The session id of a file that names none: stable for its resolved path."""
    resolved = str(path.resolve()).encode("utf-8", "surrogateescape")
    return "file:" + hashlib.sha256(resolved).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Source:
    """A file's text; ``settled`` when it has not changed for the settle time."""

    path: Path
    text: str
    settled: bool
    #: Where the first byte that is not UTF-8 is (``None``: the file is UTF-8). Such bytes
    #: are in ``text`` as lone surrogates (``surrogateescape``); a line holding one is
    #: reported with its offset and not imported (:func:`parse_text`), a document refused.
    bad_byte: int | None = None
    #: Bytes before ``text`` in the file (a UTF-8 BOM: 3), for the offsets reported.
    skipped_bytes: int = 0


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


#: The largest file an import reads (bytes): an import holds one file's text, records and
#: messages in memory at once, about seven times its size (measured: a 100 MiB JSON-lines
#: file of 480,000 messages peaked at 725 MiB, 53 MiB of it the process before the import),
#: so the default keeps one import under about 2 GiB.
DEFAULT_MAX_FILE_BYTES = 256 * 1024 * 1024


def read_source(path: Path, settle: float = DEFAULT_SETTLE_SECONDS,
                now: float | None = None,
                max_bytes: int | None = DEFAULT_MAX_FILE_BYTES) -> Source:
    """Read a regular file as UTF-8 text; :class:`ImportFileError` when it cannot be, or when
    it is larger than ``max_bytes`` (``None``: no limit), before anything of it is read."""
    try:
        # O_NONBLOCK: opening a FIFO must not hang; it is refused just below.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ImportFileError(path, f"cannot open: {_os_reason(exc)}") from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ImportFileError(path, "is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise ImportFileError(path, "is not a regular file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise ImportFileError(path, (
                f"is {info.st_size} bytes, over the import limit of {max_bytes} bytes: an "
                "import holds a file's messages in memory (about seven times its size); raise "
                "the limit (--max-file-mib, max_file_bytes=) or split the file"))
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ImportFileError(path, f"cannot read: {_os_reason(exc)}") from exc
    finally:
        os.close(fd)
    bad_byte: int | None = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_byte = exc.start
        text = data.decode("utf-8", "surrogateescape")
    del data  # the bytes are not needed once decoded
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    current = time.time() if now is None else now
    settled = settle <= 0 or current - info.st_mtime >= settle
    return Source(path, text, settled, bad_byte, 3 if bom else 0)


class Collector:
    """Gathers one file's sessions, problems, skipped records and deferred lines."""

    def __init__(self, source: Source, fmt: str) -> None:
        self.source = source
        self.format = fmt
        self.sessions: dict[str, ParsedSession] = {}
        self.problems: list[ImportProblem] = []
        self.skipped: dict[str, int] = {}
        self.deferred: list[ImportProblem] = []
        self._keys: dict[str, dict[str, Message]] = {}

    def problem(self, line: int | None, message: str, item: int | None = None) -> None:
        self.problems.append(ImportProblem(self.source.path, line, message, item))

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def defer(self, line: int | None, item: int | None = None) -> None:
        """Hold input back: it may still be being written (see the module docstring)."""
        self.deferred.append(ImportProblem(self.source.path, line, _DEFERRED, item))

    def session(self, session_id: str, **fields: Any) -> ParsedSession:
        """The session with this id, created with ``fields`` the first time."""
        found = self.sessions.get(session_id)
        if found is None:
            found = ParsedSession(session_id, **fields)
            if not found.tags:
                found.tags = (self.format,)
            if found.agent is None and _agent_format(self.format):
                found.agent = self.format
            self.sessions[session_id] = found
            self._keys[session_id] = {}
        return found

    def add(self, session: ParsedSession, message: Message, key: str,
            line: int | None = None, item: int | None = None,
            usage: TokenUsage | None = None) -> None:
        """Add a message (with the token usage of its response, if any); a key used twice in
        one file is a duplicate (same message: skipped) or a conflict (different message:
        reported, and kept under ``<key>@<where>``)."""
        seen = self._keys[session.session_id]
        earlier = seen.get(key)
        if earlier is not None:
            if earlier == message:
                self.skip(f"{self.format}: duplicate record")
                return
            where = f"line{line}" if line is not None else f"item{item}"
            self.problem(line, f"id {key!r} is used by an earlier, different record: "
                               f"kept under key {key + '@' + where!r}", item)
            key = f"{key}@{where}"
        seen[key] = message
        if usage is not None:
            session.usage[key] = usage
        session.items.append(message)
        session.keys.append(key)
        session.lines.append(line)
        session.item_indexes.append(item)

    def read(self, record: Any, line: int | None, item: int | None = None,
             skip_reason: str | None = None) -> Message | None:
        """Normalize one record; a record carrying no message is skipped (``skip_reason``,
        else the normalizer's words), one of no known shape is a problem."""
        if not isinstance(record, Mapping):
            self.problem(line, f"not a record: a JSON {_json_type(record)}", item)
            return None
        try:
            return normalize_message(record)
        except NotAMessage as exc:
            self.skip(skip_reason or f"{self.format}: {exc}")
        except (StoreError, TypeError, ValueError) as exc:
            self.problem(line, str(exc) or type(exc).__name__, item)
        return None

    def result(self) -> ParsedFile:
        """What the file gave. A session without a title of its own is titled by its first
        real user prompt (:func:`~store.importers.titles.prompt_title`), else by the file
        name."""
        for session in self.sessions.values():
            if session.title is None:
                session.title = prompt_title(session.items) or self.source.path.name
        return ParsedFile(self.source.path, self.format, list(self.sessions.values()),
                          self.problems, self.skipped, self.deferred)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


# -- splitting a file into JSON --------------------------------------------------------------


NO_DOCUMENT: Any = object()


def parse_text(source: Source, collector: Collector | None,
               lines: bool) -> tuple[Any, list[Record], int]:
    """A JSON document (``lines=False`` and the whole text parses), else JSON lines.

    Returns ``(document or NO_DOCUMENT, records, last line number with content)``. Lines
    that are not JSON go to ``collector`` as problems, or deferred when the last line lacks
    its newline and the file is not settled; with no collector they are ignored (sampling).
    """
    text = source.text
    if not lines:
        try:
            return loads_json(text), [], text.count("\n") + 1
        except ValueError as exc:
            first = next((ln for ln in text.split("\n") if ln.strip() and (
                source.bad_byte is None or not _BAD_BYTE.search(ln))), "")
            if not _parses(first) or _is_one_document(text):
                if source.bad_byte is not None:  # one document: no line to leave out
                    raise ImportFileError(source.path, "not UTF-8 text (bad byte at offset "
                                                       f"{source.bad_byte})") from None
                _bad_document(source, collector, exc, text)
                return NO_DOCUMENT, [], 0
    records: list[Record] = []
    chunks = text.split("\n")
    open_end = not text.endswith("\n")
    last = 0
    start = 0  # (characters: where the line starts, for the byte offset of a bad byte)
    for number, raw in enumerate(chunks, 1):
        line_start, start = start, start + len(raw) + 1
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line.strip():
            continue
        last = number
        if source.bad_byte is not None and _BAD_BYTE.search(line):
            if collector is not None:
                collector.problem(number, "not UTF-8 text (bad byte at offset "
                                          f"{_byte_offset(source, line_start, line)}): "
                                          "line not imported")
            continue
        try:
            records.append((number, loads_json(line)))
        except ValueError as exc:
            if collector is None:
                continue
            if number == len(chunks) and open_end and not source.settled:
                collector.defer(number)
            else:
                collector.problem(number, f"not JSON: {exc}")
    return NO_DOCUMENT, records, last


#: A byte that was not UTF-8, as ``surrogateescape`` decodes it.
_BAD_BYTE = re.compile("[\udc80-\udcff]")


def _byte_offset(source: Source, line_start: int, line: str) -> int:
    """The offset in the file of the first bad byte of a line (found by ``_BAD_BYTE``)."""
    found = _BAD_BYTE.search(line)
    before = source.text[:line_start] + line[:found.start() if found else 0]
    return source.skipped_bytes + len(before.encode("utf-8", "surrogateescape"))


def _parses(line: str) -> bool:
    try:
        loads_json(line)
    except ValueError:
        return False
    return True


def _is_one_document(text: str) -> bool:
    return sum(1 for line in text.split("\n") if line.strip()) <= 1


def _bad_document(source: Source, collector: Collector | None, exc: ValueError,
                  text: str) -> None:
    if collector is None:
        return
    line = getattr(exc, "lineno", None)
    if not source.settled and not text.rstrip().endswith(("}", "]")):
        collector.defer(line if isinstance(line, int) else 1)
        return
    collector.problem(line if isinstance(line, int) else None, f"not JSON: {exc}")
