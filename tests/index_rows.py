"""What the search indexes hold of a store, for comparisons (tests' helper): every row the
catch-ups or an import's appends derive from the transcript, without their ids."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text as sql

from store import TranscriptStore

QUERIES = {
    "items": "SELECT session_id, position, kind, item_index, call_position, call_index, "
             "body FROM search_items",
    "views": "SELECT session_id, position, call_index, view, text FROM call_views",
    "secrets": "SELECT session_id, position, item, item_index, digest, kind, call_position, "
               "call_index FROM call_secrets",
    "messages": "SELECT session_id, position, role, body FROM message_search",
    "marks": "SELECT session_id, next_position, indexed_position, message_indexed_position "
             "FROM sessions",
}


def derived_rows(store: TranscriptStore) -> dict[str, list[tuple[Any, ...]]]:
    """Each derived table's rows, sorted."""
    with store.engine.connect() as conn:
        return {name: sorted(tuple(row) for row in conn.execute(sql(query)).all())
                for name, query in QUERIES.items()}
