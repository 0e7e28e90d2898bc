"""A call's action as SQL (persistence; stdlib only): the column the tool usage reads.

Its own module so that the command line's stdlib readers (``store.audit.lite_scope``) build it
without the summaries' module (and its imports: hashlib, the price table).
"""

from __future__ import annotations

from store.tools.actions import ACTION_ARGUMENT

__all__ = ["action_sql"]


def action_sql(pg: bool) -> str:
    """An editor tool's action (``store.tools.actions``), as ``store.audit.sql.action_column``
    reads it; NULL for every other tool."""
    def extract(key: str) -> str:
        if pg:
            return f"(tool_calls.arguments ->> '{key}')"
        return f"CAST(JSON_EXTRACT(tool_calls.arguments, '$.\"{key}\"') AS VARCHAR)"

    return ("CASE " + " ".join(f"WHEN tool_calls.raw_name = '{raw}' THEN {extract(key)}"
                               for raw, key in sorted(ACTION_ARGUMENT.items())) + " END")
