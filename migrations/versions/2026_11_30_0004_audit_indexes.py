"""audit indexes: usage, time, errors; SQLite FTS5 / PostgreSQL GIN and pg_trgm

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose (a revision must not change when the library does). The audit
# queries rely on these names and, on PostgreSQL, on the exact text expression of
# ix_tool_calls_text_trgm (store/db/index/search_schema.py keeps a copy; a test compares them).

# A call's searchable text: the arguments' JSON text, or, when they are invalid (NULL), the
# recorded argument text as the wire record escapes it (the tail of wire_json from its key).
_SQLITE_CALL_TEXT = (
    "coalesce({row}.arguments, "
    "substr({row}.wire_json, instr({row}.wire_json, '\"arguments\":') + 12))"
)
_PG_CALL_TEXT = (
    "coalesce((arguments)::text, "
    "substr(wire_json, strpos(wire_json, '\"arguments\":') + 12))"
)


def _sqlite_fulltext() -> list[str]:
    """FTS5 tables (contentless, trigram: case-insensitive substring search) keyed by the rowid
    of tool_calls / tool_results, kept up to date by triggers, so the writer is unchanged; the
    index rows of a deleted call (also by cascade) are removed with the text it was indexed
    with."""
    new, old = _SQLITE_CALL_TEXT.format(row="new"), _SQLITE_CALL_TEXT.format(row="old")
    return [
        "CREATE VIRTUAL TABLE tool_calls_fts USING fts5("
        "body, content='', columnsize=0, tokenize='trigram')",
        "CREATE VIRTUAL TABLE tool_results_fts USING fts5("
        "body, content='', columnsize=0, tokenize='trigram')",
        "CREATE TRIGGER tool_calls_fts_insert AFTER INSERT ON tool_calls BEGIN "
        f"INSERT INTO tool_calls_fts(rowid, body) VALUES (new.rowid, {new}); END",
        "CREATE TRIGGER tool_calls_fts_delete AFTER DELETE ON tool_calls BEGIN "
        "INSERT INTO tool_calls_fts(tool_calls_fts, rowid, body) "
        f"VALUES ('delete', old.rowid, {old}); END",
        "CREATE TRIGGER tool_calls_fts_update AFTER UPDATE OF arguments, wire_json "
        "ON tool_calls BEGIN "
        "INSERT INTO tool_calls_fts(tool_calls_fts, rowid, body) "
        f"VALUES ('delete', old.rowid, {old}); "
        f"INSERT INTO tool_calls_fts(rowid, body) VALUES (new.rowid, {new}); END",
        "CREATE TRIGGER tool_results_fts_insert AFTER INSERT ON tool_results BEGIN "
        "INSERT INTO tool_results_fts(rowid, body) VALUES (new.rowid, new.content_json); END",
        "CREATE TRIGGER tool_results_fts_delete AFTER DELETE ON tool_results BEGIN "
        "INSERT INTO tool_results_fts(tool_results_fts, rowid, body) "
        "VALUES ('delete', old.rowid, old.content_json); END",
        "CREATE TRIGGER tool_results_fts_update AFTER UPDATE OF content_json "
        "ON tool_results BEGIN "
        "INSERT INTO tool_results_fts(tool_results_fts, rowid, body) "
        "VALUES ('delete', old.rowid, old.content_json); "
        "INSERT INTO tool_results_fts(rowid, body) VALUES (new.rowid, new.content_json); END",
        # Rows stored before this revision.
        "INSERT INTO tool_calls_fts(rowid, body) "
        f"SELECT rowid, {_SQLITE_CALL_TEXT.format(row='tool_calls')} FROM tool_calls",
        "INSERT INTO tool_results_fts(rowid, body) SELECT rowid, content_json FROM tool_results",
    ]


_SQLITE_DROP = [
    *(f"DROP TRIGGER IF EXISTS {table}_fts_{event}"
      for table in ("tool_calls", "tool_results") for event in ("insert", "delete", "update")),
    "DROP TABLE IF EXISTS tool_calls_fts",
    "DROP TABLE IF EXISTS tool_results_fts",
]

_POSTGRES = [
    # pg_trgm is a trusted extension (PostgreSQL 13+): the database owner may create it.
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    # Argument equality (arguments @> '{"path": value}').
    "CREATE INDEX ix_tool_calls_arguments_gin ON tool_calls USING gin (arguments jsonb_path_ops)",
    # Full text (ILIKE) and argument 'contains' pre-filter (LIKE) over the searchable texts.
    f"CREATE INDEX ix_tool_calls_text_trgm ON tool_calls USING gin (({_PG_CALL_TEXT}) "
    "gin_trgm_ops)",
    "CREATE INDEX ix_tool_results_text_trgm ON tool_results USING gin (content_json "
    "gin_trgm_ops)",
]

_POSTGRES_DROP = [
    "DROP INDEX IF EXISTS ix_tool_results_text_trgm",
    "DROP INDEX IF EXISTS ix_tool_calls_text_trgm",
    "DROP INDEX IF EXISTS ix_tool_calls_arguments_gin",
    # pg_trgm stays: other objects of the database may use it.
]


def _sqlite_has_trigram_fts5() -> bool:
    """FTS5 with the trigram tokenizer (SQLite 3.34+, FTS5 compiled in)."""
    if sqlite3.sqlite_version_info < (3, 34, 0):
        return False
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='trigram')")
    except sqlite3.Error:
        return False
    finally:
        probe.close()
    return True


def upgrade() -> None:
    # Portable indexes (store/db/schema/tables.py declares them): the usage summary and the tool
    # filter
    # (covering), a call's time by its message (covering), time ranges, error results.
    op.create_index("ix_messages_created_at", "messages", ["created_at"])
    op.create_index("ix_messages_time", "messages", ["session_id", "position", "created_at"])
    op.create_index(
        "ix_tool_calls_usage", "tool_calls",
        ["raw_name", "session_id", "position", "call_index", "arguments_status"],
    )
    op.create_index(
        "ix_tool_results_errors", "tool_results",
        ["session_id", "call_position", "call_index", "is_error"],
        sqlite_where=sa.text("is_error = 1"), postgresql_where=sa.text("is_error = true"),
    )
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        if _sqlite_has_trigram_fts5():  # else the audit searches scan
            for statement in _sqlite_fulltext():
                op.execute(statement)
    elif dialect == "postgresql":
        for statement in _POSTGRES:
            op.execute(statement)


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    for statement in _SQLITE_DROP if dialect == "sqlite" else _POSTGRES_DROP:
        op.execute(statement)
    op.drop_index("ix_tool_results_errors", table_name="tool_results")
    op.drop_index("ix_tool_calls_usage", table_name="tool_calls")
    op.drop_index("ix_messages_time", table_name="messages")
    op.drop_index("ix_messages_created_at", table_name="messages")
