"""Reading transcript files of every supported format into sessions (domain).

:func:`read_sessions` reads one file into a :class:`ParsedFile`: sessions of typed messages,
each with a stable idempotency key, plus the problems found and what was skipped or deferred.
Formats (:data:`FORMATS`), detected by :func:`detect_format` or given:

* every agent of the registry (``store/agents/<agent>/``: Claude Code, Codex, Gemini CLI,
  Kward, Qwen Code, Kimi CLI, Copilot CLI, Cline, Roo Code, OpenHands, OpenCode, Goose,
  Crush): its definition says how its files are told (a confidence, :func:`claims`), whether
  they are JSON lines, and its reader reads them; an agent's SQLite database is read
  read-only in one snapshot (:mod:`store.importers.agentdb`; a file is one when it starts
  with SQLite's header);
* ``openai-chat``, ``openai-responses``, ``anthropic``: plain message lists: a JSON array,
  an object ``{"messages": [...]}`` (Anthropic's ``system`` included) or ``{"input": [...]}``,
  or JSON lines with one message per line. The session id comes from the file's path; keys
  are ``<session id>:<index>`` (JSON) or ``<session id>:<line>`` (JSON lines);
* ``transcript-store``: this store's own ``export --to jsonl``
  (:mod:`store.importers.canonical`), so an export imports back.

**Detection** asks every agent for its confidence that the file is its own and takes the
best answer (a tie goes to the agent listed first); this store's export is proven by its
records; plain message lists are told by their messages (Anthropic content blocks, Responses
items, else OpenAI Chat) only when no agent claims the file.

Session ids come from the file when it names one, else from its resolved path
(:func:`~store.importers.base.path_session_id`), so re-importing a file finds its session. Bad
input never stops a file: a line that is not JSON or a record of no known shape is an
:class:`ImportProblem` with its line (or item), and the rest is read. A file that cannot be
read at all raises :class:`ImportFileError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from store.agents.codex.reader import decode_codex_output
from store.agents.registry import (
    AgentDefinition,
    FileInput,
    Sample,
    agent_for_format,
    agents,
    named_file_agents,
    samples,
)
from store.core.errors import AmbiguousRecord, ConfigurationError
from store.core.keys import canonical_keys
from store.importers import FORMATS
from store.importers.account import file_account, unknown_kinds
from store.importers.agentdb import is_sqlite_file, read_agent_db
from store.importers.base import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_SETTLE_SECONDS,
    NO_DOCUMENT,
    Collector,
    ImportFileError,
    ImportProblem,
    ParsedFile,
    ParsedSession,
    Record,
    parse_text,
    path_session_id,
    read_source,
)
from store.importers.canonical import is_canonical_record, read_canonical

__all__ = [
    "DEFAULT_SETTLE_SECONDS",
    "FORMATS",
    "Claim",
    "ImportFileError",
    "ImportProblem",
    "ParsedFile",
    "ParsedSession",
    "claims",
    "decode_codex_output",
    "detect_format",
    "path_session_id",
    "read_line_records",
    "read_sessions",
]

_PROVIDERS = {"openai-chat": "openai", "openai-responses": "openai", "anthropic": "anthropic"}
_SAMPLE = 50  # list items looked at for hints
#: How many records format detection looks at (lines looked at for an agent envelope).
DETECT_RECORDS = _DETECT = 1000
#: This store's export is proven by its records.
_CANONICAL = 1.0
#: What a plain message list's hints are worth: below every agent's claim, Anthropic's
#: blocks before Responses items before Chat messages.
_PLAIN = {"anthropic": 0.2, "openai-responses": 0.19, "openai-chat": 0.18}

_RESPONSES_TYPES = frozenset({"function_call", "function_call_output", "custom_tool_call",
                              "custom_tool_call_output", "reasoning"})
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking",
                               "server_tool_use"})
_RESPONSES_BLOCKS = frozenset({"input_text", "output_text"})


def check_format(fmt: str | None) -> None:
    """``ConfigurationError`` for a format name that is not one of :data:`FORMATS`."""
    if fmt is not None and fmt not in FORMATS:
        raise ConfigurationError(f"unknown import format {fmt!r}; known: {', '.join(FORMATS)}")


# -- detection -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Claim:
    """A format's claim on a file: how sure its detector is (0 to 1)."""

    format: str
    confidence: float


def claims(path: Path | None, first_records: Sequence[Any]) -> list[Claim]:
    """Every format's claim on a file from its first records (a JSON document counts as one
    record), best first. ``path`` lets the agents told by a file's name and place (a Cline
    task, an OpenHands conversation) claim it; ``None`` judges by the records alone."""
    first = samples(first_records)
    found: list[Claim] = []
    if any(is_canonical_record(s.raw) for s in first):
        found.append(Claim("transcript-store", _CANONICAL))
    for definition in agents():
        confidence = definition.detect(path, first)
        if confidence > 0:
            found.append(Claim(definition.name, confidence))
    for fmt in _plain_formats(first):
        found.append(Claim(fmt, _PLAIN[fmt]))
    found.sort(key=lambda c: -c.confidence)  # (stable: a tie keeps the listed order)
    return found


def detect_format(path: Path, first_records: Sequence[Any], *, by_name: bool = True) -> str:
    """The format of a file from its first records: the best :func:`claims`.
    :class:`ImportFileError` when no format claims it."""
    found = claims(path if by_name else None, first_records)
    if not found:
        raise ImportFileError(path, "cannot tell the format (give it with --format / format=: "
                                    f"{', '.join(FORMATS)})")
    return found[0].format


def _plain_formats(first: Sequence[Sample]) -> list[str]:
    """The plain message-list formats the records hint at."""
    plain: set[str] = set()
    for sample in first:
        record = sample.raw
        if isinstance(record, list):
            for item in record[:_SAMPLE]:
                _plain_hint(item, plain)
            continue
        top = sample.top
        if top is None:
            continue
        choices = top.get("choices")
        if isinstance(choices, list):  # a completion body (not a stream chunk: those have deltas)
            if any(isinstance(c, Mapping) and isinstance(c.get("message"), Mapping)
                   for c in choices):
                plain.add("openai-chat")
            continue
        for key in ("messages", "input", "output"):
            items = top.get(key)
            if isinstance(items, list) and "role" not in top:
                if key != "messages":
                    plain.add("openai-responses")
                if key == "messages" and "system" in top:
                    plain.add("anthropic")
                for item in items[:_SAMPLE]:
                    _plain_hint(item, plain)
                break
        else:
            _plain_hint(record, plain, top)  # (its plain keys made once, by samples())
    return [fmt for fmt in _PLAIN if fmt in plain]


def _plain_hint(record: Any, plain: set[str], top: Mapping[str, Any] | None = None) -> None:
    if top is None:
        if not isinstance(record, Mapping):
            return
        try:
            top, _ = canonical_keys(record)
        except AmbiguousRecord:
            return
    kind = top.get("type")
    content = top.get("content")
    if "role" in top and isinstance(content, list):
        types = {b.get("type") for b in content if isinstance(b, Mapping)}
        if types & _ANTHROPIC_BLOCKS:
            plain.add("anthropic")
            return
        if types & _RESPONSES_BLOCKS:
            plain.add("openai-responses")
            return
    if kind in _RESPONSES_TYPES or (kind == "message" and "role" in top):
        plain.add("anthropic" if top.get("role") == "assistant" and "stop_reason" in top
                  else "openai-responses")
        return
    if "role" in top:
        plain.add("openai-chat")


# -- reading -------------------------------------------------------------------------------------


def _text_agent(file: Path, fmt: str | None) -> AgentDefinition | None:
    """The agent whose files are text (not JSON) that ``file`` is, by its name or by the
    forced ``fmt``."""
    if fmt is not None:
        definition = agent_for_format(fmt)
        return definition if definition is not None and definition.text else None
    named = [a for a in named_file_agents(file.name) if a.text]
    return named[0] if named else None


def _lines_format(fmt: str | None) -> bool:
    """A format whose files are JSON lines (a one-line file is read as lines too)."""
    if fmt == "transcript-store":
        return True
    definition = agent_for_format(fmt) if fmt else None
    return definition is not None and definition.lines


def read_sessions(path: Path | str, format: str | None = None, *,
                  settle: float = DEFAULT_SETTLE_SECONDS,
                  max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES) -> ParsedFile:
    """Read one file into sessions (see the module docstring).

    ``format`` names one of :data:`FORMATS` (else it is detected). ``settle``: a file
    unchanged for that many seconds is complete, so nothing of it is deferred; a younger one
    may end in the middle of a record, which is then held back (``ParsedFile.deferred``).
    ``max_file_bytes``: a larger file is refused (``ImportFileError``) before it is read.
    Raises :class:`ImportFileError` when the file cannot be read or its format told, and
    ``ConfigurationError`` for an unknown ``format``.
    """
    check_format(format)
    file = Path(path)
    if is_sqlite_file(file):
        return account_for(read_agent_db(file, format, settle=settle,
                                         max_file_bytes=max_file_bytes), [])
    source = read_source(file, settle, max_bytes=max_file_bytes)
    if not source.text.strip():
        return ParsedFile(file, format or "unknown", skipped={"empty file": 1})
    text_agent = _text_agent(file, format)
    if text_agent is not None:  # (a Markdown history: not JSON, told by its name)
        collector = Collector(source, text_agent.name)
        text_agent.reader()(FileInput(file, None, [], source.text.count("\n") + 1, False,
                                      text=source.text), collector)
        return account_for(collector.result(), [])
    collector = Collector(source, format or "")
    wants_lines = file.suffix.lower() in (".jsonl", ".ndjson") or _lines_format(format)
    document, records, last_line = parse_text(source, collector, wants_lines)
    if source.bad_byte is not None and document is NO_DOCUMENT and not records:
        raise ImportFileError(file, f"not UTF-8 text (bad byte at offset {source.bad_byte})")
    sample = [document] if document is not NO_DOCUMENT else [r for _, r in records[:_DETECT]]
    if format is not None:
        check_forced(file, format, sample, proven_only=True)
    fmt = format or detect_format(file, sample)
    collector.format = fmt
    definition = agent_for_format(fmt)
    if _lines_format(fmt) and document is not NO_DOCUMENT:  # a one-line file read whole
        records, last_line, document = [(1, document)], 1, NO_DOCUMENT
    if definition is not None:
        has_document = document is not NO_DOCUMENT
        definition.reader()(FileInput(file, document if has_document else None, records,
                                      last_line, has_document), collector)
    elif fmt == "transcript-store":
        read_canonical(records, collector)
    elif document is not NO_DOCUMENT:
        _read_plain_document(document, fmt, collector)
    else:
        _read_plain_lines(records, fmt, collector)
    parsed = account_for(collector.result(), records, document, document is not NO_DOCUMENT)
    if format is not None and parsed.messages == 0 and not parsed.deferred:
        check_forced(file, format, sample, proven_only=False)
    return parsed


def account_for(parsed: ParsedFile, records: list[Record], document: Any = None,
                has_document: bool = False) -> ParsedFile:
    """``parsed`` with its per-kind account (:mod:`store.importers.account`) filled in."""
    parsed.kinds = file_account(parsed, records, document, has_document)
    parsed.unknown_kinds = unknown_kinds(parsed.format, parsed.kinds)
    return parsed


def _proven(fmt: str | None) -> bool:
    """A format a file's records prove (an agent's, this store's export), as opposed to a
    plain message list, which another plain format may read as well."""
    return fmt == "transcript-store" or (fmt is not None and agent_for_format(fmt) is not None)


def check_forced(file: Path, format: str, sample: list[Any], *, proven_only: bool) -> None:
    """A forced format that does not fit the file is an error that says which format the
    file looks like, not a success with wrong or no messages: before reading, when the
    records prove another agent's format (``proven_only``); after reading nothing, when they
    look like any other format or none."""
    if not sample:
        return
    try:
        detected: str | None = detect_format(file, sample, by_name=False)
    except ImportFileError:
        detected = None
    if detected == format or (proven_only and not _proven(detected)):
        return
    looks = (f"it looks like {detected} (give --format {detected}, or no --format)"
             if detected else "no record of it is in that format")
    done = "does not fit it" if proven_only else "read no message from it"
    raise ImportFileError(file, f"--format {format} {done}: {looks}")


def read_line_records(fmt: str, records: list[Record], last_line: int,
                      collector: Collector) -> None:
    """Read parsed JSON lines of a JSON-lines format (an agent's, ``transcript-store``) into
    ``collector``; ``last_line``: the number of the file's last line with content (a Claude
    Code turn ending there may still grow)."""
    if fmt == "transcript-store":
        read_canonical(records, collector)
        return
    definition = agent_for_format(fmt)
    if definition is None or not definition.lines:
        raise ConfigurationError(f"{fmt!r} is not a JSON-lines format")
    definition.reader()(FileInput(collector.source.path, None, records, last_line, False),
                        collector)


def _plain_session(collector: Collector, fmt: str, model: Any = None) -> ParsedSession:
    return collector.session(path_session_id(collector.source.path), provider=_PROVIDERS[fmt],
                             model=model if isinstance(model, str) else None)


def _read_plain_lines(records: list[Record], fmt: str, collector: Collector) -> None:
    session = _plain_session(collector, fmt)
    for line, record in records:
        message = collector.read(record, line)
        if message is not None:
            collector.add(session, message, f"{session.session_id}:{line}", line)


def _read_plain_document(document: Any, fmt: str, collector: Collector) -> None:
    """A JSON array of messages, ``{"messages": [...], "system"?}``, ``{"input": ...}``, or a
    response body (Responses ``output``, Chat Completions ``choices``, one message)."""
    items: Any = document
    system: Any = None
    model: Any = None
    created: Any = None
    if isinstance(document, Mapping):
        try:
            top, _ = canonical_keys(document)
        except AmbiguousRecord as exc:
            collector.problem(None, str(exc))
            return
        model = top.get("model")
        if isinstance(top.get("messages"), list):
            items, system = top["messages"], top.get("system")
        elif "input" in top:
            items = top["input"]
            if isinstance(items, str):
                items = [{"role": "user", "content": items}]
            system = top.get("instructions")
        elif isinstance(top.get("output"), list):  # a Responses body
            items = top["output"]
        elif isinstance(top.get("choices"), list):  # a Chat Completions body
            items = [c.get("message", c) if isinstance(c, Mapping) else c
                     for c in top["choices"]]
        else:
            items = [document]  # a single message
        if isinstance(top.get("created"), int | float):  # a response body: when it was made
            created = top["created"]
    if not isinstance(items, list):
        collector.problem(None, "expected a list of messages, "
                                f"found {type(items).__name__} (format {fmt})")
        return
    session = _plain_session(collector, fmt, model)
    sid = session.session_id
    if system is not None and system != "":
        message = collector.read({"role": "system", "content": system}, None)
        if message is not None:
            collector.add(session, message, f"{sid}:system")
    for index, item in enumerate(items):
        message = collector.read(item, None, index)
        if message is not None and created is not None and "created" not in message.metadata:
            message = replace(message, metadata={**message.metadata, "created": created})
        if message is not None:
            collector.add(session, message, f"{sid}:{index}", item=index)

