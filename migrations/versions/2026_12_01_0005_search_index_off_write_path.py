"""search index off the write path: decoded text, caught up from a watermark

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

Revision 0004 indexed every byte of arguments and results inside each append (SQLite: FTS5
triggers; PostgreSQL: pg_trgm expression indexes on tool_calls / tool_results), and indexed
JSON text, so a search for ``nfoo`` matched an escaped newline. This revision drops those and
adds the search index of ``store/db/index/search_index.py``: ``search_items`` (one row per call and
per result; on PostgreSQL with the decoded text and a pg_trgm GIN), on SQLite ``search_fts``
(FTS5 trigram, contentless, keyed by the item id), and the watermark
``sessions.indexed_position`` with ``ix_sessions_search_behind``. Nothing is indexed here:
every session starts at watermark 0 and the first search (or ``transcript-store db index``)
catches up. The JSONB GIN over arguments (``@>``) stays on PostgreSQL (fastupdate).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose (a revision must not change when the library does).
_SQLITE_ITEMS = [
    "CREATE TABLE search_items ("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "session_id VARCHAR NOT NULL, position INTEGER NOT NULL, kind INTEGER NOT NULL, "
    "item_index INTEGER NOT NULL, call_position INTEGER, call_index INTEGER, body TEXT, "
    "FOREIGN KEY (session_id, position) REFERENCES messages (session_id, position) "
    "ON DELETE CASCADE)",
    "CREATE UNIQUE INDEX ux_search_items_key ON search_items "
    "(session_id, position, kind, item_index)",
    "CREATE VIRTUAL TABLE search_fts USING fts5("
    "body, content='', columnsize=0, tokenize='trigram')",
]
_SQLITE_ITEMS_DROP = ["DROP TABLE IF EXISTS search_fts", "DROP TABLE IF EXISTS search_items"]

_PG_ITEMS = [
    "CREATE TABLE search_items ("
    "session_id VARCHAR NOT NULL, position INTEGER NOT NULL, kind SMALLINT NOT NULL, "
    "item_index INTEGER NOT NULL, call_position INTEGER, call_index INTEGER, "
    "body TEXT NOT NULL, "
    "CONSTRAINT pk_search_items PRIMARY KEY (session_id, position, kind, item_index), "
    "CONSTRAINT fk_search_items_session_id_messages FOREIGN KEY (session_id, position) "
    "REFERENCES messages (session_id, position) ON DELETE CASCADE)",
    "CREATE INDEX ix_search_items_body_trgm ON search_items USING gin (body gin_trgm_ops) "
    "WITH (fastupdate = on)",
]
_PG_ITEMS_DROP = ["DROP TABLE IF EXISTS search_items"]

# Revision 0004's write-path text indexes (restored by the downgrade).
_SQLITE_CALL_TEXT = (
    "coalesce({row}.arguments, "
    "substr({row}.wire_json, instr({row}.wire_json, '\"arguments\":') + 12))"
)
_PG_CALL_TEXT = (
    "coalesce((arguments)::text, "
    "substr(wire_json, strpos(wire_json, '\"arguments\":') + 12))"
)
_SQLITE_OLD_DROP = [
    *(f"DROP TRIGGER IF EXISTS {table}_fts_{event}"
      for table in ("tool_calls", "tool_results") for event in ("insert", "delete", "update")),
    "DROP TABLE IF EXISTS tool_calls_fts",
    "DROP TABLE IF EXISTS tool_results_fts",
]
_PG_OLD_DROP = [
    "DROP INDEX IF EXISTS ix_tool_results_text_trgm",
    "DROP INDEX IF EXISTS ix_tool_calls_text_trgm",
]
_PG_OLD = [
    f"CREATE INDEX ix_tool_calls_text_trgm ON tool_calls USING gin (({_PG_CALL_TEXT}) "
    "gin_trgm_ops)",
    "CREATE INDEX ix_tool_results_text_trgm ON tool_results USING gin (content_json "
    "gin_trgm_ops)",
]


def _sqlite_old() -> list[str]:
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
        "INSERT INTO tool_calls_fts(rowid, body) "
        f"SELECT rowid, {_SQLITE_CALL_TEXT.format(row='tool_calls')} FROM tool_calls",
        "INSERT INTO tool_results_fts(rowid, body) SELECT rowid, content_json FROM tool_results",
    ]


def _sqlite_has_trigram_fts5() -> bool:
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
    dialect = op.get_context().dialect.name
    op.add_column("sessions", sa.Column("indexed_position", sa.Integer(), nullable=False,
                                        server_default="0"))
    op.create_index("ix_sessions_search_behind", "sessions", ["session_id"],
                    sqlite_where=sa.text("next_position > indexed_position"),
                    postgresql_where=sa.text("next_position > indexed_position"))
    if dialect == "sqlite":
        for statement in _SQLITE_OLD_DROP:
            op.execute(statement)
        if _sqlite_has_trigram_fts5():  # else searches scan every row exactly
            for statement in _SQLITE_ITEMS:
                op.execute(statement)
    elif dialect == "postgresql":
        for statement in (*_PG_OLD_DROP, *_PG_ITEMS):
            op.execute(statement)


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite":
        for statement in _SQLITE_ITEMS_DROP:
            op.execute(statement)
        if _sqlite_has_trigram_fts5():
            for statement in _sqlite_old():
                op.execute(statement)
    elif dialect == "postgresql":
        for statement in (*_PG_ITEMS_DROP, *_PG_OLD):
            op.execute(statement)
    op.drop_index("ix_sessions_search_behind", table_name="sessions")
    if dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35, 0):
        # A plain DROP COLUMN: a batch copy of sessions would cascade into every message.
        op.execute("ALTER TABLE sessions DROP COLUMN indexed_position")
    else:
        with op.batch_alter_table("sessions") as batch:
            batch.drop_column("indexed_position")
