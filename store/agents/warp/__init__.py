"""Warp: its agent mode's conversations in the terminal's own database, ``warp.sqlite``
(the agent's definition; closed source, read as far as the tables show unambiguously)."""

from __future__ import annotations

from collections.abc import Mapping

from store.agents.homes import AgentFolders
from store.agents.registry import AgentDefinition, DatabaseLayout

__all__ = ["AGENT"]

_MAC = "Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support"


def _tables(tables: Mapping[str, set[str]]) -> bool:
    return {"exchange_id", "conversation_id", "start_ts", "input"} <= tables.get(
        "ai_queries", set())


AGENT = AgentDefinition(
    name="warp",
    display_name="Warp",
    package=__name__,
    order=243,
    homes=(AgentFolders("warp", "XDG_STATE_HOME", ".local/state",
                        ("warp-terminal/warp.sqlite", "warp-terminal-preview/warp.sqlite")),
           AgentFolders("warp", None, _MAC, ("dev.warp.Warp-Stable/warp.sqlite",
                                             "dev.warp.Warp-Preview/warp.sqlite")),
           AgentFolders("warp", "LOCALAPPDATA", "AppData/Local", ("warp/Warp/data/warp.sqlite",))),
    # warp.sqlite also holds the terminal's blocks and history: only the two agent tables
    # are read.
    database=DatabaseLayout({"ai_queries": "start_ts, id", "agent_conversations": "id"},
                            _tables, "read_warp", file_names=("warp.sqlite",),
                            optional=frozenset({"agent_conversations"})),
    records={
        "calls": "not recorded (per-tool counts only, kept in metadata)",
        "results": "not recorded",
        "errors": "not recorded (an exchange's `output_status` kept)",
        "times": "exchange `start_ts`; conversation `last_modified_at`",
        "cwd": "exchange `working_directory`",
        "model": "exchange `model_id`",
        "title": "first prompt",
        "usage": "conversation totals in Warp's units (`warp_tokens`, `byok_tokens`: "
                 "metadata, never split by guess)",
        "lineage": "not recorded",
        "not recorded": "the agent's replies and tool calls (kept in a binary form not read), "
                        "input/output token split",
    },
)
