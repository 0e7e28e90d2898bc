"""message search: a full-text index over every message, caught up off the write path

Revision ID: 0017
Revises: 0015
Create Date: 2026-12-02

Issue 35, item 2 ("find the session where we discussed LM Studio"): the call index of
revision 0005 holds tool arguments and results only, as folded trigram text for substring
search. This revision adds a word index over every message (``store/db/index/message_index.py``):

* ``message_search``: one row per message and part of it (``role``: the message's role for
  its visible text, ``thinking`` for its reasoning, ``tool`` for its calls' names and
  arguments and its results), the redacted text as written (``body``), deleted with its
  message (a foreign key, ``ON DELETE CASCADE``).
* SQLite: ``message_fts``, an external-content FTS5 table over ``body`` (tokenizer
  ``unicode61``, diacritics kept; bm25 ranking, ``snippet()``), and a trigger that takes a
  deleted row's text out of it. Skipped when the SQLite library has no FTS5 (message search
  then says so).
* PostgreSQL: ``tsv``, a stored generated ``to_tsvector('simple', body)`` of the body with
  ASCII punctuation read as spaces (so words split as in FTS5), with a GIN index
  (``ts_rank``, ``ts_headline``).
* ``sessions.message_indexed_position``: the watermark (the messages before it are indexed)
  and ``ix_sessions_messages_behind`` (partial: the sessions with messages to index).

Nothing is indexed here: every session starts at 0 and the next catch-up (a search on a
writable store, ``transcript-store db index``, the end of an import) indexes them in bulk.
The downgrade drops the index and the column (nothing else is lost: the index is derived).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose (a revision must not change when the library does).
_SQLITE = [
    "CREATE TABLE message_search ("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "session_id VARCHAR NOT NULL, position INTEGER NOT NULL, role VARCHAR NOT NULL, "
    "body TEXT NOT NULL, "
    "FOREIGN KEY (session_id, position) REFERENCES messages (session_id, position) "
    "ON DELETE CASCADE)",
    "CREATE UNIQUE INDEX ux_message_search_key ON message_search (session_id, position, role)",
    "CREATE VIRTUAL TABLE message_fts USING fts5(body, content=\"message_search\", "
    "content_rowid=\"id\", tokenize='unicode61 remove_diacritics 0')",
    "CREATE TRIGGER message_search_fts_delete AFTER DELETE ON message_search BEGIN "
    "INSERT INTO message_fts (message_fts, rowid, body) VALUES ('delete', old.id, old.body); "
    "END",
]
_SQLITE_DROP = ["DROP TRIGGER IF EXISTS message_search_fts_delete",
                "DROP TABLE IF EXISTS message_fts", "DROP TABLE IF EXISTS message_search"]

# ASCII punctuation read as spaces before PostgreSQL's parser sees the text (one character for
# one, so positions stay): it splits words as FTS5's unicode61 does (``lm-studio`` and
# ``/srv/quartzite.txt`` give their words, never one path or host token).
_PUNCTUATION = "!\"#$%&''()*+,-./:;<=>?@[\\]^_`{|}~"
_PG = [
    "CREATE TABLE message_search ("
    "session_id VARCHAR NOT NULL, position INTEGER NOT NULL, role VARCHAR NOT NULL, "
    "body TEXT NOT NULL, "
    "tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, "
    f"translate(body, '{_PUNCTUATION}', '{' ' * 32}'))) STORED, "
    "CONSTRAINT pk_message_search PRIMARY KEY (session_id, position, role), "
    "CONSTRAINT fk_message_search_session_id_messages FOREIGN KEY (session_id, position) "
    "REFERENCES messages (session_id, position) ON DELETE CASCADE)",
    "CREATE INDEX ix_message_search_tsv ON message_search USING gin (tsv) "
    "WITH (fastupdate = on)",
]
_PG_DROP = ["DROP TABLE IF EXISTS message_search"]


def _sqlite_has_fts5() -> bool:
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE probe USING fts5(body, "
                      "tokenize='unicode61 remove_diacritics 0')")
    except sqlite3.Error:
        return False
    finally:
        probe.close()
    return True


def upgrade() -> None:
    dialect = op.get_context().dialect.name
    op.add_column("sessions", sa.Column("message_indexed_position", sa.Integer(),
                                        nullable=False, server_default="0"))
    op.create_index("ix_sessions_messages_behind", "sessions", ["session_id"],
                    sqlite_where=sa.text("next_position > message_indexed_position"),
                    postgresql_where=sa.text("next_position > message_indexed_position"))
    if dialect == "sqlite" and _sqlite_has_fts5():
        for statement in _SQLITE:
            op.execute(statement)
    elif dialect == "postgresql":
        for statement in _PG:
            op.execute(statement)


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    for statement in _SQLITE_DROP if dialect == "sqlite" else _PG_DROP:
        op.execute(statement)
    op.drop_index("ix_sessions_messages_behind", table_name="sessions")
    if dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35, 0):
        # In place: a copy-and-move of sessions would cascade into every message.
        op.execute("ALTER TABLE sessions DROP COLUMN message_indexed_position")
    elif dialect == "sqlite":
        with op.batch_alter_table("sessions") as batch:
            batch.drop_column("message_indexed_position")
    else:
        op.drop_column("sessions", "message_indexed_position")
