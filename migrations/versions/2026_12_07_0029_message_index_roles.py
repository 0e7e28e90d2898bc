"""the message index holds each row's role: a search by role asks the index alone

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-07

Issue 39, item 3 ("every command instant"). ``search --role tool`` (or any role) matched the
query in ``message_fts`` (FTS5 over ``message_search.body``) and then looked up the role of
every match in ``message_search``: for a common word at 10^6 messages, 200,552 lookups (~350
ms of SQL) to keep a quarter of them. This revision indexes the role too, as a second column
of ``message_fts`` (external content: FTS5 reads it from ``message_search.role``, nothing is
stored twice), so a role is one more term of the match (``role : "tool"``) and the index
gives the role's matches alone. The query's own words are matched in ``body`` only (a word
like ``tool`` never matches a row's role), and the rank weighs ``body`` alone (bm25 counts
a row's length over both columns, so a row's role is one word more of it: the scores move
by about 1 %).

SQLite only (PostgreSQL's ``tsv`` filter by role was never a lookup per match). The upgrade
drops the FTS5 table and its delete trigger, creates them with the role and builds the index
again from ``message_search`` (``'rebuild'``; the rows stay); the downgrade builds the
one-column table again the same way. Skipped when the database has no message index (an
SQLite library without FTS5).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose (a revision must not change when the library does).
_FTS = ("CREATE VIRTUAL TABLE message_fts USING fts5({columns}, content=\"message_search\", "
        "content_rowid=\"id\", tokenize='unicode61 remove_diacritics 0')")
_DELETE = ("CREATE TRIGGER message_search_fts_delete AFTER DELETE ON message_search BEGIN "
           "INSERT INTO message_fts (message_fts, rowid, {columns}) "
           "VALUES ('delete', old.id, {values}); END")


def _rebuild(columns: tuple[str, ...]) -> None:
    conn = op.get_bind()
    if conn.dialect.name != "sqlite" or conn.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
            "AND name IN ('message_search', 'message_fts')").scalar_one() != 2:
        return
    op.execute("DROP TRIGGER IF EXISTS message_search_fts_delete")
    op.execute("DROP TABLE message_fts")
    op.execute(_FTS.format(columns=", ".join(columns)))
    op.execute("INSERT INTO message_fts (message_fts) VALUES ('rebuild')")
    op.execute(_DELETE.format(columns=", ".join(columns),
                              values=", ".join(f"old.{c}" for c in columns)))


def upgrade() -> None:
    _rebuild(("body", "role"))


def downgrade() -> None:
    _rebuild(("body",))
