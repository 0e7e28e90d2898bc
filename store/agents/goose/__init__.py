"""Goose: its SQLite database (``sessions.db``) and legacy JSON-lines sessions (definition)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, AgentDefinition, DatabaseLayout, Sample

__all__ = ["AGENT", "is_goose_header"]

_HEADER_KEYS = frozenset({"working_dir", "description", "message_count", "schedule_id",
                          "total_tokens", "accumulated_total_tokens"})


def is_goose_header(record: Mapping[str, Any]) -> bool:
    """True for the metadata line that starts a legacy Goose session file."""
    return "working_dir" in record and "role" not in record and len(
        _HEADER_KEYS & set(record)) >= 2


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """The metadata line that starts a legacy session file proves it."""
    return PROVEN if any(isinstance(s.raw, Mapping) and is_goose_header(s.raw)
                         for s in first) else 0.0


def _tables(tables: Mapping[str, set[str]]) -> bool:
    return "content_json" in tables.get("messages", set()) and "sessions" in tables


AGENT = AgentDefinition(
    name="goose",
    display_name="Goose",
    package=__name__,
    order=100,
    detect=detect,
    homes=(AgentFolders("goose", "GOOSE_PATH_ROOT", ".local/share/goose", ("sessions",),
                        xdg_app="goose", env_suffix="data"),),
    lines=True,
    database=DatabaseLayout({"sessions": "created_at, rowid", "messages": "id"}, _tables,
                            "read_goose_db", file_names=("sessions.db",)),
    kinds={
        "user": "message (legacy JSON lines)",
        "assistant": "message (legacy JSON lines)",
    },
    records={
        "calls": "yes",
        "results": "yes (tool responses)",
        "errors": "`status: error`, `isError`",
        "times": "message `created_timestamp` (s)",
        "cwd": "session `working_dir`",
        "model": "session `model_config_json`",
        "title": "the agent's (`name`)",
        "usage": "session totals (`accumulated_*_tokens`) -> counted once, on the first response",
        "lineage": "sub-agent sessions tagged; parent not recorded",
        "not recorded": "per-message tokens, a sub-agent's parent (visibility flags not kept)",
    },
)
