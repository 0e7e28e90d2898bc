"""token usage per message; a full-text index the SQLite ecosystem can read

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

Two changes (issue 24, issue 26 item 3):

* ``message_usage``: the tokens a message's response cost (input, output, cache creation,
  cache read, reasoning), its model, request and response ids, one row per message that has
  any, keyed ``(session_id, position)`` like its message (Citus: co-located). The importers fill
  it; nothing is carried over (a re-import of the files fills it for the messages stored before).
* SQLite: ``search_fts`` was contentless (``content=''``), which sqlite-utils (``table does
  not support scanning``) and Datasette (HTTP 400) cannot read. It becomes an external-content
  FTS5 table over ``search_items.body`` (``content="search_items"``, the spelling Datasette
  looks for), so every table reads and Datasette offers full-text search on ``search_items``.
  The catch-up now writes the decoded text to ``search_items.body`` (the column PostgreSQL
  already fills) besides the index; appends are unchanged. The upgrade computes the text of
  every item already indexed (the library's decoder, as the catch-up does) and rebuilds the
  index from it; a trigger takes a deleted item's text out of the index (a contentless table
  kept it until a reindex). The downgrade puts the contentless table back, filled from that
  text.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose (a revision must not change when the library does).
_FTS_EXTERNAL = ("CREATE VIRTUAL TABLE search_fts USING fts5(body, content=\"search_items\", "
                 "content_rowid=\"id\", columnsize=0, tokenize='trigram')")
# Deletes (a cascade from a truncated or deleted session) take their text out of the index,
# so no unreachable rows remain (the contentless table kept them until a reindex).
_FTS_DELETE = ("CREATE TRIGGER search_items_fts_delete AFTER DELETE ON search_items "
               "WHEN old.body IS NOT NULL BEGIN "
               "INSERT INTO search_fts (search_fts, rowid, body) "
               "VALUES ('delete', old.id, old.body); END")
_FTS_CONTENTLESS = ("CREATE VIRTUAL TABLE search_fts USING fts5("
                    "body, content='', columnsize=0, tokenize='trigram')")
_BATCH = 2000


def _has_fts(conn: sa.Connection) -> bool:
    return conn.exec_driver_sql(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
        "AND name IN ('search_items', 'search_fts')").scalar_one() == 2


def _fill_bodies(conn: sa.Connection) -> None:
    """The decoded text of every item indexed so far (``store.records.searchtext``, the
    decoder the catch-up uses), into ``search_items.body``."""
    from store.records.searchtext import call_search_text, result_search_text

    sources = (
        (0, "SELECT i.id, c.wire_json FROM search_items i JOIN tool_calls c "
            "ON c.session_id = i.session_id AND c.position = i.position "
            "AND c.call_index = i.item_index WHERE i.kind = 0", call_search_text),
        (1, "SELECT i.id, r.content_json FROM search_items i JOIN tool_results r "
            "ON r.session_id = i.session_id AND r.position = i.position "
            "AND r.result_index = i.item_index WHERE i.kind = 1", result_search_text),
    )
    cursor = conn.connection.cursor()
    try:
        for _kind, select, decode in sources:
            rows = conn.exec_driver_sql(select).all()
            for start in range(0, len(rows), _BATCH):
                cursor.executemany("UPDATE search_items SET body = ? WHERE id = ?",
                                   [(decode(text), item) for item, text
                                    in rows[start:start + _BATCH]])
    finally:
        cursor.close()


def upgrade() -> None:
    op.create_table(
        "message_usage",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("request_id", sa.String(), nullable=True),
        sa.Column("response_id", sa.String(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("output_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("cache_creation_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("cache_read_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("reasoning_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(["session_id", "position"],
                                ["messages.session_id", "messages.position"],
                                name="fk_message_usage_session_id_messages", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("session_id", "position", name="pk_message_usage"),
    )
    conn = op.get_bind()
    if conn.dialect.name != "sqlite" or not _has_fts(conn):
        return
    _fill_bodies(conn)
    op.execute("DROP TABLE search_fts")
    op.execute(_FTS_EXTERNAL)
    op.execute("INSERT INTO search_fts(search_fts) VALUES ('rebuild')")
    op.execute(_FTS_DELETE)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite" and _has_fts(conn):
        op.execute("DROP TRIGGER IF EXISTS search_items_fts_delete")
        op.execute("DROP TABLE search_fts")
        op.execute(_FTS_CONTENTLESS)
        op.execute("INSERT INTO search_fts (rowid, body) "
                   "SELECT id, body FROM search_items WHERE body IS NOT NULL")
        op.execute("UPDATE search_items SET body = NULL")
    op.drop_table("message_usage")
