"""Explaining one file's read, storing nothing: who claimed it and what became of it (domain).

:func:`explain_file` reads a file as ``import`` would and returns a
:class:`FileExplanation`: every format's claim on it (the agent that won, with its
confidence, and the runner-up), the sessions and messages it gives, the per-kind account
(:mod:`store.importers.account`: what each record kind became), the reasons records were
skipped, the problems, and the kinds the reader has never seen. Nothing is written: no store
is opened (``transcript-store import --explain FILE``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.agents.registry import named_file_agents
from store.importers.agentdb import database_format, is_sqlite_file
from store.importers.base import (
    DEFAULT_MAX_FILE_BYTES,
    NO_DOCUMENT,
    ParsedFile,
    parse_text,
    read_source,
)
from store.importers.formats import DETECT_RECORDS, Claim, check_format, claims, read_sessions

__all__ = ["FileExplanation", "explain_file"]


@dataclass(frozen=True, slots=True)
class FileExplanation:
    """What :func:`explain_file` found (see the module docstring). ``claims``: best first;
    ``forced``: the format was given, not detected."""

    path: Path
    format: str
    forced: bool
    claims: tuple[Claim, ...]
    parsed: ParsedFile

    @property
    def confidence(self) -> float | None:
        """The claimed format's confidence (``None``: it made no claim: a forced format)."""
        return next((c.confidence for c in self.claims if c.format == self.format), None)

    @property
    def runner_up(self) -> Claim | None:
        """The best claim of another format."""
        return next((c for c in self.claims if c.format != self.format), None)

    def as_json(self) -> dict[str, Any]:
        """The explanation as one JSON object (docs/json/import-explain.schema.json)."""
        runner = self.runner_up
        parsed = self.parsed
        return {
            "path": str(self.path), "format": self.format, "forced": self.forced,
            "confidence": self.confidence,
            "runner_up": ({"format": runner.format, "confidence": runner.confidence}
                          if runner else None),
            "claims": [{"format": c.format, "confidence": c.confidence} for c in self.claims],
            "sessions": [{"session_id": s.session_id, "messages": len(s.items),
                          "title": s.title} for s in parsed.sessions],
            "messages": parsed.messages,
            "kinds": parsed.kinds,
            "unknown_kinds": parsed.unknown_kinds,
            "skipped": parsed.skipped,
            "problems": [str(p) for p in parsed.problems],
            "deferred": len(parsed.deferred),
        }


def explain_file(path: Path | str, format: str | None = None, *, settle: float = 0.0,
                 max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES) -> FileExplanation:
    """Read one file as ``import`` would, storing nothing (see the module docstring).
    ``settle``: as for :func:`~store.importers.formats.read_sessions` (default 0: the file is
    taken as complete). Raises ``ImportFileError`` / ``ConfigurationError`` as it does."""
    check_format(format)
    file = Path(path)
    parsed = read_sessions(file, format, settle=settle, max_file_bytes=max_file_bytes)
    if is_sqlite_file(file):
        found: list[Claim] = [Claim(fmt, 1.0) for fmt in [database_format(file)] if fmt]
    else:
        source = read_source(file, settle, max_bytes=max_file_bytes)
        wants_lines = file.suffix.lower() in (".jsonl", ".ndjson")
        document, records, _ = parse_text(source, None, wants_lines)
        sample = ([document] if document is not NO_DOCUMENT
                  else [r for _, r in records[:DETECT_RECORDS]])
        # (a text agent's file, told by its name, has no records: its claim is its name's)
        named = any(a.text for a in named_file_agents(file.name))
        found = claims(file, sample) if sample or named else []
    return FileExplanation(file, parsed.format, format is not None, tuple(found), parsed)
