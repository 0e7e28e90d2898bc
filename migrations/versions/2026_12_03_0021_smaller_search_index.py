"""a smaller call index: SQLite's trigram index without positions

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03

Issue 39, item 2 ("a database no bigger than the files"). At 10^5 messages the largest
object after ``messages`` was ``search_fts`` (FTS5 trigram over ``search_items.body``): 70 MB
for 26 MB of text, 17 % of the file, because FTS5 kept every trigram's position in every
document (``detail=full``) so that a phrase query could check they follow each other. This
revision keeps only which documents hold each trigram (``detail=none``): 17 MB. A search
asks the index for the items holding every trigram of the needle and then decides on the
stored text (``instr(search_items.body, needle)``: the exact substring rule of the tail scan,
``store.records.searchtext.text_matches``), so the answers are the same.

SQLite only (PostgreSQL's pg_trgm GIN never held positions). The upgrade drops the FTS5
table and builds it again from ``search_items.body`` (``'rebuild'``; nothing but the index is
touched, the text stays); the downgrade builds the positional table again the same way.
Skipped when the database has no search index (an SQLite library without FTS5 trigram).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose (a revision must not change when the library does).
_FTS = ("CREATE VIRTUAL TABLE search_fts USING fts5(body, content=\"search_items\", "
        "content_rowid=\"id\", columnsize=0, {detail}tokenize='trigram')")
_DELETE = ("CREATE TRIGGER search_items_fts_delete AFTER DELETE ON search_items "
           "WHEN old.body IS NOT NULL BEGIN "
           "INSERT INTO search_fts (search_fts, rowid, body) "
           "VALUES ('delete', old.id, old.body); END")


def _rebuild(detail: str) -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite" or conn.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
            "AND name IN ('search_items', 'search_fts')").scalar_one() != 2:
        return
    op.execute("DROP TRIGGER IF EXISTS search_items_fts_delete")
    op.execute("DROP TABLE search_fts")
    op.execute(_FTS.format(detail=detail))
    op.execute("INSERT INTO search_fts (search_fts) VALUES ('rebuild')")
    op.execute(_DELETE)


def upgrade() -> None:
    _rebuild("detail=none, ")


def downgrade() -> None:
    _rebuild("")
