"""Reading transcript files of every supported format into sessions (domain).

:func:`read_sessions` reads one file into a :class:`ParsedFile`: sessions of typed messages,
each with a stable idempotency key, plus the problems found and what was skipped or deferred.
Formats (:data:`FORMATS`), detected by :func:`detect_format` or given:

* ``openai-chat``, ``openai-responses``, ``anthropic``: plain message lists: a JSON array,
  an object ``{"messages": [...]}`` (Anthropic's ``system`` included) or ``{"input": [...]}``,
  or JSON lines with one message per line. The session id comes from the file's path; keys
  are ``<session id>:<index>`` (JSON) or ``<session id>:<line>`` (JSON lines).
* ``claude-code``, ``codex``, ``kward``: agent JSON-lines transcripts
  (:mod:`store.importers.claude_code`, ``codex``, ``kward``); ``gemini-cli``: Gemini CLI chats
  (:mod:`store.importers.gemini_cli`); ``transcript-store``: this store's own
  ``export --to jsonl`` (:mod:`store.importers.canonical`), so an export imports back.
* ``cline``, ``roo-code``: a task's ``api_conversation_history.json`` (told by its name; the
  task folder tells Roo Code from Cline) with its sibling files, and Cline SDK
  ``<id>.messages.json`` sessions (:mod:`store.importers.cline`); ``openhands``: a
  conversation's ``base_state.json`` (V1) or ``metadata.json`` (V0) beside its ``events``
  folder, read with its events (:mod:`store.importers.openhands`).
* ``crush``, ``opencode``, ``goose``: an agent's SQLite database, read read-only in one
  snapshot (:mod:`store.importers.agentdb`; a file is one when it starts with SQLite's
  header); ``goose`` also reads Goose's legacy JSON-lines sessions
  (:func:`store.importers.goose.read_goose_lines`), ``opencode`` the session files of
  OpenCode's JSON storage (:func:`store.importers.opencode.read_opencode_storage`).

Session ids come from the file when it names one, else from its resolved path
(:func:`~store.importers.base.path_session_id`), so re-importing a file finds its session. Bad
input never stops a file: a line that is not JSON or a record of no known shape is an
:class:`ImportProblem` with its line (or item), and the rest is read. A file that cannot be
read at all raises :class:`ImportFileError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from store.core.errors import AmbiguousRecord, ConfigurationError
from store.core.keys import canonical_keys
from store.importers import FORMATS
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
from store.importers.claude_code import read_claude_code
from store.importers.cline import (
    HISTORY_FILE,
    TASK_FILES,
    is_cline_sdk_document,
    read_cline_sdk,
    read_vscode_task,
    task_agent,
)
from store.importers.codex import decode_codex_output, read_codex
from store.importers.copilot_cli import is_copilot_cli_event, read_copilot_cli
from store.importers.gemini_cli import gemini_cli_lines_document, read_gemini_cli
from store.importers.goose import is_goose_header, read_goose_lines
from store.importers.kimi_cli import KIMI_CONTEXT_ROLES, is_kimi_wire_record, read_kimi_cli
from store.importers.kward import read_kward
from store.importers.opencode import is_opencode_session, read_opencode_storage
from store.importers.openhands import conversation_main, read_openhands
from store.importers.qwen_code import is_qwen_code_record, read_qwen_code

__all__ = [
    "DEFAULT_SETTLE_SECONDS",
    "FORMATS",
    "ImportFileError",
    "ImportProblem",
    "ParsedFile",
    "ParsedSession",
    "decode_codex_output",
    "detect_format",
    "read_line_records",
    "path_session_id",
    "read_sessions",
]

_JSON_LINES = frozenset({"claude-code", "codex", "kward", "transcript-store", "qwen-code",
                         "kimi-cli", "copilot-cli", "goose"})
_PROVIDERS = {"openai-chat": "openai", "openai-responses": "openai", "anthropic": "anthropic"}
_SAMPLE = 50  # list items looked at for hints
#: How many records format detection looks at (lines looked at for an agent envelope).
DETECT_RECORDS = _DETECT = 1000

_CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg",
                          "compacted"})
_KWARD_TYPES = frozenset({"compaction", "branch_summary", "tool_execution_end", "leaf", "label",
                          "session_info"})
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


def detect_format(path: Path, first_records: Sequence[Any]) -> str:
    """The format of a file from its first records (a JSON document counts as one record).

    Agent transcripts are told by their envelopes; plain lists by their messages (Anthropic
    content blocks, Responses items, else OpenAI Chat). :class:`ImportFileError` when no
    record looks like any known format.
    """
    plain: set[str] = set()
    for record in first_records:
        found = _record_format(record, plain)
        if found is not None:
            return found
    for fmt in ("anthropic", "openai-responses", "openai-chat"):
        if fmt in plain:
            return fmt
    raise ImportFileError(path, "cannot tell the format (give it with --format / format=: "
                                f"{', '.join(FORMATS)})")


def _record_format(record: Any, plain: set[str]) -> str | None:
    """An agent format the record proves, else ``None`` (plain hints go into ``plain``)."""
    if isinstance(record, list):
        for item in record[:_SAMPLE]:
            _plain_hint(item, plain)
        return None
    if not isinstance(record, Mapping):
        return None
    if is_canonical_record(record):
        return "transcript-store"
    if is_goose_header(record):
        return "goose"
    if is_opencode_session(record):
        return "opencode"
    try:
        top, _ = canonical_keys(record)
    except AmbiguousRecord:
        return None
    kind = top.get("type")
    if kind == "session" and ("version" in top or "id" in top):
        return "kward"
    if "payload" in top and kind in _CODEX_TYPES:
        return "codex"
    if is_cline_sdk_document(top):
        return "cline"
    if "session_id" in top and isinstance(top.get("messages"), list):
        return "gemini-cli"
    if "session_id" in top and "project_hash" in top:  # a Gemini CLI JSON-lines header
        return "gemini-cli"
    if "$set" in record or "$rewindTo" in record:
        return "gemini-cli"
    if is_copilot_cli_event(top):
        return "copilot-cli"
    if is_kimi_wire_record(top) or top.get("role") in KIMI_CONTEXT_ROLES:
        return "kimi-cli"
    if is_qwen_code_record(top):  # (before Claude Code's: both have uuid and parentUuid)
        return "qwen-code"
    if (kind == "summary" and "leaf_uuid" in top) or kind == "file-history-snapshot":
        return "claude-code"
    if "uuid" in top and ("session_id" in top or "parent_uuid" in top):
        return "claude-code"
    if kind in _KWARD_TYPES or (kind == "message" and isinstance(top.get("message"), Mapping)
                                and "role" not in top):
        return "kward"
    if "record_type" in top or (kind is None and "instructions" in top and "id" in top
                                and "timestamp" in top and "output" not in top):
        return "codex"
    choices = top.get("choices")
    if isinstance(choices, list):  # a completion body (not a stream chunk: those have deltas)
        if any(isinstance(c, Mapping) and isinstance(c.get("message"), Mapping)
               for c in choices):
            plain.add("openai-chat")
        return None
    for key in ("messages", "input", "output"):
        items = top.get(key)
        if isinstance(items, list) and "role" not in top:
            if key != "messages":
                plain.add("openai-responses")
            if key == "messages" and "system" in top:
                plain.add("anthropic")
            for item in items[:_SAMPLE]:
                _plain_hint(item, plain)
            return None
    _plain_hint(record, plain)
    return None


def _plain_hint(record: Any, plain: set[str]) -> None:
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
        return read_agent_db(file, format, settle=settle, max_file_bytes=max_file_bytes)
    source = read_source(file, settle, max_bytes=max_file_bytes)
    if not source.text.strip():
        return ParsedFile(file, format or "unknown", skipped={"empty file": 1})
    collector = Collector(source, format or "")
    wants_lines = file.suffix.lower() in (".jsonl", ".ndjson") or format in _JSON_LINES
    document, records, last_line = parse_text(source, collector, wants_lines)
    if source.bad_byte is not None and document is NO_DOCUMENT and not records:
        raise ImportFileError(file, f"not UTF-8 text (bad byte at offset {source.bad_byte})")
    sample = [document] if document is not NO_DOCUMENT else [r for _, r in records[:_DETECT]]
    if format is not None:
        check_forced(file, format, sample, proven_only=True)
    task = file.name in TASK_FILES and isinstance(document, list) and (
        file.name == HISTORY_FILE or (file.parent / "history_item.json").is_file())
    fmt = format or (task_agent(file) if task else "openhands" if conversation_main(file)
                     else detect_format(file, sample))
    collector.format = fmt
    if fmt in _JSON_LINES:
        if document is not NO_DOCUMENT:  # a one-line file read as a document
            records, last_line = [(1, document)], 1
        _LINE_READERS[fmt](records, last_line, collector)
    elif fmt == "gemini-cli":
        if (document is NO_DOCUMENT and len(records) == 1
                and isinstance(records[0][1], Mapping)
                and isinstance(records[0][1].get("messages"), list)):
            document = records[0][1]
        if document is NO_DOCUMENT and records:  # the JSON-lines layout (v0.39.0+)
            document = gemini_cli_lines_document(records, collector)
            if document is None:
                raise ImportFileError(file, "no Gemini CLI chat record in "
                                            f"{len(records)} JSON lines")
        if document is not NO_DOCUMENT:
            read_gemini_cli(document, collector)
    elif fmt == "openhands":
        read_openhands(document if document is not NO_DOCUMENT else None, collector)
    elif fmt in ("cline", "roo-code") and isinstance(document, Mapping):
        try:
            top, _ = canonical_keys(document)
        except AmbiguousRecord as exc:
            raise ImportFileError(file, str(exc)) from None
        read_cline_sdk(top, collector)
    elif fmt in ("cline", "roo-code") and document is not NO_DOCUMENT:
        read_vscode_task(document, collector)
    elif fmt == "opencode":
        if is_opencode_session(document):
            read_opencode_storage(document, collector)
        else:
            raise ImportFileError(file, "not an OpenCode session file (storage/session/"
                                        "<project>/<id>.json)")
    elif document is not NO_DOCUMENT:
        _read_plain_document(document, fmt, collector)
    else:
        _read_plain_lines(records, fmt, collector)
    parsed = collector.result()
    if format is not None and parsed.messages == 0 and not parsed.deferred:
        check_forced(file, format, sample, proven_only=False)
    return parsed


#: Formats a file's records prove (by their envelopes), as opposed to plain message lists,
#: which another plain format may read as well.
_PROVEN = frozenset({"claude-code", "codex", "gemini-cli", "kward", "cline", "transcript-store",
                     "qwen-code", "kimi-cli", "copilot-cli", "goose", "opencode"})


def check_forced(file: Path, format: str, sample: list[Any], *, proven_only: bool) -> None:
    """A forced format that does not fit the file is an error that says which format the
    file looks like, not a success with wrong or no messages: before reading, when the
    records prove another agent's format (``proven_only``); after reading nothing, when they
    look like any other format or none."""
    if not sample:
        return
    try:
        detected: str | None = detect_format(file, sample)
    except ImportFileError:
        detected = None
    if detected == format or (proven_only and detected not in _PROVEN):
        return
    looks = (f"it looks like {detected} (give --format {detected}, or no --format)"
             if detected else "no record of it is in that format")
    done = "does not fit it" if proven_only else "read no message from it"
    raise ImportFileError(file, f"--format {format} {done}: {looks}")


def _claude(records: list[Record], last_line: int, collector: Collector) -> None:
    read_claude_code(records, last_line, collector)


def _codex(records: list[Record], last_line: int, collector: Collector) -> None:
    read_codex(records, collector)


def _kward(records: list[Record], last_line: int, collector: Collector) -> None:
    read_kward(records, collector)


def _canonical(records: list[Record], last_line: int, collector: Collector) -> None:
    read_canonical(records, collector)


def _qwen(records: list[Record], last_line: int, collector: Collector) -> None:
    read_qwen_code(records, collector)


def _kimi(records: list[Record], last_line: int, collector: Collector) -> None:
    read_kimi_cli(records, collector)


def _copilot(records: list[Record], last_line: int, collector: Collector) -> None:
    read_copilot_cli(records, collector)


def _goose(records: list[Record], last_line: int, collector: Collector) -> None:
    read_goose_lines(records, collector)


_LINE_READERS: dict[str, Callable[[list[Record], int, Collector], None]] = {
    "claude-code": _claude, "codex": _codex, "kward": _kward, "transcript-store": _canonical,
    "qwen-code": _qwen, "kimi-cli": _kimi, "copilot-cli": _copilot,
    "goose": _goose,
}


def read_line_records(fmt: str, records: list[Record], last_line: int,
                      collector: Collector) -> None:
    """Read parsed JSON lines of a JSON-lines agent format (``claude-code``, ``codex``,
    ``kward``, ``transcript-store``) into ``collector``; ``last_line``: the number of the
    file's last line with content (a Claude Code turn ending there may still grow)."""
    _LINE_READERS[fmt](records, last_line, collector)


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

