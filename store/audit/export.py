"""Exports: canonical JSONL of sessions, CSV of calls; optionally redacted (persistence layer).

* :func:`export_jsonl` writes one line per message, sessions in id order, messages in
  position order. A line is a compact JSON object (exact: integers of any size, any depth
  that append accepted; UTF-8 as is; keys in this order):
  ``session_id``, ``position``, ``role``, ``created_at`` (ISO 8601, UTC), ``message_id``,
  ``key``, ``source``, ``parts``, ``extras``, ``metadata``. Parts keep their recorded order:
  ``{"type": "text", "text"}``, ``{"type": "thinking", "text", "signature"}``,
  ``{"type": "tool_call", "index", "call": <canonical wire record>, "name": <current name>,
  "arguments_status" (valid, empty, invalid_json ...), "status" (deprecated: the same as
  stored, ``ok`` for valid; kept for one release), "error"}``, ``{"type": "tool_result",
  "index", "call_id", "call": [position, index] | null, "is_error", "name", "content"}``,
  ``{"type": "server_tool_call", ...}``, ``{"type": "opaque", "kind", "data"}``; a part's
  provider ``extras`` are added when present. The same rows give the same bytes.
* :func:`export_calls_csv` writes a header and one row per call matching a ``CallQuery``
  (``store.audit.search``), oldest first, with the whole first result as text; its last
  columns ``arguments_status`` and ``result_status`` (ok, error, no_result) name the two
  states apart (``status``, the arguments' as stored, is deprecated). A cell that
  starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (the
  OWASP rule against formula injection: a spreadsheet would run it), unless
  ``formulas=True`` asks for the exact text.

With ``redactor=`` (``store.redaction.redact.Redactor``) every string of a line or row is redacted
(argument texts inside wire records included) and each replacement is marked
``[REDACTED:<kind>]``. Both return an :class:`ExportStats`.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from sqlalchemy import select

from store.audit.search import CallQuery, iter_calls
from store.core.arguments import arguments_status, dumps_json
from store.core.depth import deep_dumps
from store.core.errors import ToolArgumentsError
from store.core.model import (
    InvalidToolCall,
    Message,
    ToolCall,
    ToolResult,
)
from store.core.times import iso_utc
from store.core.transcript import Transcript
from store.db.schema.tables import sessions
from store.records.codec import part_record
from store.redaction.redact import Redactor

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = [
    "CSV_COLUMNS",
    "FORMULA_STARTS",
    "ExportStats",
    "export_calls_csv",
    "export_jsonl",
    "message_record",
    "neutralize_formula",
]

#: The columns of :func:`export_calls_csv`, in order.
CSV_COLUMNS = (
    "session_id", "position", "index", "call_id", "name", "raw_name", "status",
    "arguments_error", "created_at", "arguments", "result_is_error", "result",
    "arguments_status", "result_status",
)


@dataclass(frozen=True, slots=True)
class ExportStats:
    """What an export wrote: sessions, lines or rows, and secrets replaced."""

    sessions: int
    records: int
    redactions: int


def export_jsonl(
    store: TranscriptStore,
    session_ids: Iterable[str] | None,
    out: TextIO,
    *,
    redactor: Redactor | None = None,
) -> ExportStats:
    """Write the canonical JSONL of the given sessions (every session when ``None``) to
    ``out``; an unknown session id raises ``SessionNotFound`` before anything of it is
    written."""
    ids = list(session_ids) if session_ids is not None else _all_session_ids(store)
    lines = redactions = 0
    for session_id in ids:
        transcript = store.load(session_id)
        for record in _records(transcript):
            if redactor is not None:
                record, count = redactor.redact(record)
                redactions += count
            # Exact JSON of whatever append accepted (integers beyond 64 bits, deep nesting),
            # where orjson alone refuses: an export is a backup.
            try:
                out.write(dumps_json(record))
            except ToolArgumentsError:  # nested deeper than the stdlib encoder goes
                out.write(deep_dumps(record))
            out.write("\n")
            lines += 1
    return ExportStats(len(ids), lines, redactions)


def export_calls_csv(
    store: TranscriptStore,
    query: CallQuery | None,
    out: TextIO,
    *,
    redactor: Redactor | None = None,
    formulas: bool = False,
) -> ExportStats:
    """Write the calls matching ``query`` (every call when ``None``) as CSV to ``out`` (open
    it with ``newline=""``): :data:`CSV_COLUMNS`, times in ISO 8601 UTC, booleans as
    ``true``/``false``, no result as empty cells; cells a spreadsheet would run as a formula
    get a leading ``'`` unless ``formulas=True``."""
    writer = csv.writer(out)
    cell = _exact if formulas else neutralize_formula
    writer.writerow(CSV_COLUMNS)
    rows = redactions = 0
    seen: set[str] = set()
    for match in iter_calls(store, query, preview_chars=None, redactor=redactor):
        writer.writerow(tuple(cell(value) for value in (
            match.session_id, match.position, match.index, match.call_id, match.name,
            match.raw_name, match.status, match.arguments_error or "",
            _iso(match.created_at), match.arguments_text,
            "" if match.result_is_error is None else str(match.result_is_error).lower(),
            match.result_preview if match.result_preview is not None else "",
            match.arguments_status, match.result_status,
        )))
        rows += 1
        redactions += match.redactions
        seen.add(match.session_id)
    return ExportStats(len(seen), rows, redactions)


#: The first characters that make a spreadsheet read a cell as a formula (OWASP).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralize_formula(value: object) -> object:
    """A string cell that a spreadsheet would run as a formula, with a leading ``'``; any other
    value as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _exact(value: object) -> object:
    return value


def message_record(session_id: str, position: int, message: Message, key: str | None,
                   created_at: datetime, transcript: Transcript | None = None) -> dict[str, Any]:
    """One message as its canonical JSONL record (see the module docstring)."""
    links = transcript.links if transcript is not None else {}
    parts: list[dict[str, Any]] = []
    call_number = result_number = 0
    for part in message.parts:
        item: dict[str, Any]
        if isinstance(part, ToolCall | InvalidToolCall):
            valid = isinstance(part, ToolCall)
            item = {"type": "tool_call", "index": call_number, "call": part.to_wire(),
                    "name": part.name,
                    "arguments_status": arguments_status(part.status),
                    "status": part.status,  # (deprecated: arguments_status, as stored)
                    "error": None if valid else part.error_message}  # type: ignore[union-attr]
            call_number += 1
        elif isinstance(part, ToolResult):
            link = links.get((position, result_number))
            item = {"type": "tool_result", "index": result_number, "call_id": part.call_id,
                    "call": list(link) if link is not None else None,
                    "is_error": part.is_error, "name": part.name, "content": part.content}
            result_number += 1
        else:
            item = part_record(part)
        extras = getattr(part, "extras", None)
        if extras and isinstance(part, ToolCall | InvalidToolCall | ToolResult):
            item["extras"] = dict(extras)
        parts.append(item)
    return {
        "session_id": session_id,
        "position": position,
        "role": message.role,
        "created_at": _iso(created_at),
        "message_id": message.message_id,
        "key": key,
        "source": message.source,
        "parts": parts,
        "extras": dict(message.extras),
        "metadata": dict(message.metadata),
    }


def _records(transcript: Transcript) -> Iterable[dict[str, Any]]:
    for stored in transcript.messages:
        yield message_record(transcript.session_id, stored.position, stored.message,
                             stored.key, stored.created_at, transcript)


def _iso(value: datetime) -> str:
    return iso_utc(value)


def _all_session_ids(store: TranscriptStore) -> list[str]:
    with store.engine.connect() as conn:
        return list(conn.execute(
            select(sessions.c.session_id).order_by(sessions.c.session_id)
        ).scalars())
