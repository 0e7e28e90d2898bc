"""Reader of Kward session files (JSON lines; domain).

The ``session`` header gives the session; ``message``, ``compaction``, ``branch_summary`` and
``tool_execution_end`` records are messages (any key spelling); ``leaf``, ``label`` and
``session_info`` are skipped with a reason. The session starts at the header's
``timestamp`` and ends at the last record's (the header's when no record has one): never
the import's time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.agents.registry import FileInput
from store.core.model import Message
from store.importers.base import Collector, Record, path_session_id
from store.importers.lines import record_top, span, text_of

__all__ = ["read_file", "read_kward"]


_KWARD_SKIPPED = frozenset({"leaf", "label", "session_info"})
_KWARD_HEADER = ("version", "timestamp")


def read_kward(records: list[Record], collector: Collector) -> None:
    """Kward JSONL sessions (see the module docstring)."""
    header: Mapping[str, Any] | None = None
    title: str | None = None
    pending: list[tuple[int, Message, str | None]] = []
    stamps: list[Any] = []
    for line, record in records:
        top = record_top(record, line, collector, "Kward")
        if top is None:
            continue
        stamps.append(top.get("timestamp"))
        kind = top.get("type")
        if kind == "session":
            if header is None:
                header = top
                collector.skip("kward: session header")
            else:
                collector.skip("kward: another session header")
            continue
        if kind in _KWARD_SKIPPED:
            if kind == "session_info" and title is None:
                title = text_of(top.get("name")) or text_of(top.get("title"))
            collector.skip(f"kward: {kind} record")
            continue
        message = collector.read(record, line)
        if message is not None:
            pending.append((line, message, text_of(top.get("id"))))
    head = header or {}
    sid = text_of(head.get("id")) or path_session_id(collector.source.path)
    session = collector.session(
        sid, title=title, provider=text_of(head.get("provider")), model=text_of(head.get("model")),
        cwd=text_of(head.get("cwd")),
        metadata={k: head[k] for k in _KWARD_HEADER if head.get(k) is not None},
    )
    for line, message, record_id in pending:
        collector.add(session, message, record_id or f"{sid}:{line}", line)
    session.started_at, session.ended_at = span(stamps)


def read_file(file: FileInput, collector: Collector) -> None:
    """The registry's entry: a Kward session file."""
    read_kward(file.records, collector)
