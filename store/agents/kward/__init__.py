"""Kward: JSON-lines session files (the agent's definition).

A ``session`` header (``id``, ``cwd``, ``provider``, ``model``, ``timestamp``), then
``message``, ``compaction``, ``branch_summary`` and ``tool_execution_end`` records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from store.agents.registry import WEAK, AgentDefinition, Sample

_TYPES = frozenset({"compaction", "branch_summary", "tool_execution_end", "leaf", "label",
                    "session_info"})
#: The header: a ``session`` record with a version or an id. Other agents write a
#: ``session`` header too, so it is not proof (an agent whose files are told by more
#: than that answers with more).
_HEADER = 0.8


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """The ``session`` header is likely Kward's; its record types (and a ``message`` record
    without a role beside it) are generic, so weak."""
    best = 0.0
    for sample in first:
        top = sample.top
        if top is None:
            continue
        kind = top.get("type")
        if kind == "session" and ("version" in top or "id" in top):
            return _HEADER
        if kind in _TYPES or (kind == "message" and isinstance(top.get("message"), Mapping)
                              and "role" not in top):
            best = WEAK
    return best


AGENT = AgentDefinition(
    name="kward",
    display_name="Kward",
    package=__name__,
    order=35,
    detect=detect,
    lines=True,
    incremental=True,
    kinds={
        "session": "skipped: the header (id, cwd, provider, model: read into the session)",
        "message": "message",
        "compaction": "message (the compaction's summary)",
        "branch_summary": "message (the summary of a branch left)",
        "tool_execution_end": "message (a tool result)",
        "leaf": "skipped: the current leaf of the branch tree",
        "label": "skipped: a user's label on an entry",
        "session_info": "skipped: the session's name (the title)",
    },
    records={
        "calls": "assistant `message` records' tool calls (any key spelling) → calls",
        "results": "tool messages and `tool_execution_end` records by `toolCallId` → linked",
        "errors": "`isError` → error results",
        "times": "each record's `timestamp`, header `timestamp`",
        "cwd": "header `cwd`",
        "model": "header `model` (and `provider`)",
        "title": "`session_info` name → title, else the first real prompt",
        "usage": "— → none",
        "lineage": (
            "branches inside one file (`parentId`, `branch_summary`) → messages in order; no link"
            " between files"
        ),
        "not recorded": "who approved a call; usage",
    },
)
