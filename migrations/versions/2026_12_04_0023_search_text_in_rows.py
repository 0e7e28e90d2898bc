"""the call search's text kept in the call and result rows themselves

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-04

Issue 39, items 2 and 3. The call search's text lived in ``search_items``, one row per call
and per result with its own copy of the keys. A search must not trust a call's text that is
missing (revision 0011's attack: a deleted item hides a call), so every search anti-joined
every call and result with its item: 1.4 s of a 1.5 s ``calls search`` at 10^6 messages,
and 390 MB of keys and rows. The text now lives in the row it is derived from:

* ``tool_calls.search_body`` / ``tool_results.search_body``: the decoded, redacted, folded
  text (NULL until the catch-up reaches the row); ``ix_tool_calls_unindexed`` /
  ``ix_tool_results_unindexed`` (partial: the rows without it) hold the rows not caught up,
  so "every call below the watermark has its text" is one probe of a nearly empty index;
* SQLite: ``search_id``, the id of the row's entry in ``search_fts`` (FTS5 trigram,
  ``detail=none``; unique: ``ux_tool_calls_search_id`` / ``ux_tool_results_search_id``),
  given by the catch-up in order (close ids: FTS5 keeps each term's documents as varint
  deltas) and stable across a ``VACUUM`` (an implicit rowid is not); a row without one is
  not caught up either. ``search_fts`` is an external-content table over the view
  ``search_items`` (the same columns as the table it replaces, so sqlite-utils and Datasette
  read it); triggers take a deleted call's or result's text out of it;
* PostgreSQL: a pg_trgm GIN on each ``search_body`` (``ix_tool_calls_search_trgm``,
  ``ix_tool_results_search_trgm``), and the view ``search_items`` too (without ``id``), so
  SQL written against the old table still reads.

The upgrade copies each item's text into its row (an index of folded text, revision 0011's
mark; else everything is caught up again from the start) and builds the FTS index from it;
the downgrade builds ``search_items`` again from the rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose (a revision must not change when the library does).
_VIEW = (
    "CREATE VIEW search_items AS "
    "SELECT c.search_id AS id, c.session_id AS session_id, c.position AS position, "
    "0 AS kind, c.call_index AS item_index, c.position AS call_position, "
    "c.call_index AS call_index, c.search_body AS body FROM tool_calls AS c "
    "WHERE c.search_id IS NOT NULL AND c.search_body IS NOT NULL "
    "UNION ALL SELECT r.search_id, r.session_id, r.position, 1, r.result_index, "
    "r.call_position, r.call_index, r.search_body FROM tool_results AS r "
    "WHERE r.search_id IS NOT NULL AND r.search_body IS NOT NULL")
_FTS = ("CREATE VIRTUAL TABLE search_fts USING fts5(body, content=\"search_items\", "
        "content_rowid=\"id\", columnsize=0, detail=none, tokenize='trigram')")


def _row_delete(table: str) -> str:
    return (f"CREATE TRIGGER {table}_search_delete AFTER DELETE ON {table} "
            "WHEN old.search_id IS NOT NULL AND old.search_body IS NOT NULL BEGIN "
            "INSERT INTO search_fts (search_fts, rowid, body) "
            "VALUES ('delete', old.search_id, old.search_body); END")


_SQLITE_IDS = [
    "CREATE UNIQUE INDEX ux_tool_calls_search_id ON tool_calls (search_id) "
    "WHERE search_id IS NOT NULL",
    "CREATE UNIQUE INDEX ux_tool_results_search_id ON tool_results (search_id) "
    "WHERE search_id IS NOT NULL",
]
_SQLITE_FTS = [_VIEW, _FTS, _row_delete("tool_calls"), _row_delete("tool_results")]
_SQLITE_FTS_DROP = [
    "DROP TRIGGER IF EXISTS tool_results_search_delete",
    "DROP TRIGGER IF EXISTS tool_calls_search_delete",
    "DROP TABLE IF EXISTS search_fts",
    "DROP VIEW IF EXISTS search_items",
    "DROP INDEX IF EXISTS ux_tool_results_search_id",
    "DROP INDEX IF EXISTS ux_tool_calls_search_id",
]
# PostgreSQL: the same view without the SQLite id (users' SQL over search_items still reads).
_PG_VIEW = (
    "CREATE VIEW search_items AS "
    "SELECT c.session_id AS session_id, c.position AS position, 0 AS kind, "
    "c.call_index AS item_index, c.position AS call_position, c.call_index AS call_index, "
    "c.search_body AS body FROM tool_calls AS c WHERE c.search_body IS NOT NULL "
    "UNION ALL SELECT r.session_id, r.position, 1, r.result_index, r.call_position, "
    "r.call_index, r.search_body FROM tool_results AS r WHERE r.search_body IS NOT NULL")
_PG_TRGM = [
    "CREATE INDEX ix_tool_calls_search_trgm ON tool_calls USING gin "
    "(search_body gin_trgm_ops) WITH (fastupdate = on)",
    "CREATE INDEX ix_tool_results_search_trgm ON tool_results USING gin "
    "(search_body gin_trgm_ops) WITH (fastupdate = on)",
]
_PG_TRGM_DROP = ["DROP INDEX IF EXISTS ix_tool_results_search_trgm",
                 "DROP INDEX IF EXISTS ix_tool_calls_search_trgm"]
# The derived rows of the old index: everything is caught up again from the start.
_RESET = ["DELETE FROM call_views", "DELETE FROM call_secrets",
          "UPDATE sessions SET indexed_position = 0 WHERE indexed_position <> 0"]
_FOLDED_MARK = 1
_PG_MARK = f"transcript-store search text: folded {_FOLDED_MARK}"

# The old table (revisions 0005, 0008, 0021), for the downgrade.
_SQLITE_OLD = [
    "CREATE TABLE search_items (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "session_id VARCHAR NOT NULL, position INTEGER NOT NULL, kind INTEGER NOT NULL, "
    "item_index INTEGER NOT NULL, call_position INTEGER, call_index INTEGER, body TEXT, "
    "FOREIGN KEY (session_id, position) REFERENCES messages (session_id, position) "
    "ON DELETE CASCADE)",
    "CREATE UNIQUE INDEX ux_search_items_key ON search_items "
    "(session_id, position, kind, item_index)",
    _FTS,
    "CREATE TRIGGER search_items_fts_delete AFTER DELETE ON search_items "
    "WHEN old.body IS NOT NULL BEGIN "
    "INSERT INTO search_fts (search_fts, rowid, body) "
    "VALUES ('delete', old.id, old.body); END",
]
_PG_OLD = [
    "CREATE TABLE search_items (session_id VARCHAR NOT NULL, position INTEGER NOT NULL, "
    "kind SMALLINT NOT NULL, item_index INTEGER NOT NULL, call_position INTEGER, "
    "call_index INTEGER, body TEXT NOT NULL, "
    "CONSTRAINT pk_search_items PRIMARY KEY (session_id, position, kind, item_index), "
    "CONSTRAINT fk_search_items_session_id_messages FOREIGN KEY (session_id, position) "
    "REFERENCES messages (session_id, position) ON DELETE CASCADE)",
    "CREATE INDEX ix_search_items_body_trgm ON search_items USING gin (body gin_trgm_ops) "
    "WITH (fastupdate = on)",
]
_OLD_FILL = [
    "INSERT INTO search_items (session_id, position, kind, item_index, call_position, "
    "call_index, body) SELECT session_id, position, 0, call_index, position, call_index, "
    "search_body FROM tool_calls WHERE search_body IS NOT NULL",
    "INSERT INTO search_items (session_id, position, kind, item_index, call_position, "
    "call_index, body) SELECT session_id, position, 1, result_index, call_position, "
    "call_index, search_body FROM tool_results WHERE search_body IS NOT NULL",
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


def _exists(conn: sa.Connection, name: str) -> bool:
    if conn.dialect.name == "sqlite":
        return conn.exec_driver_sql("SELECT count(*) FROM sqlite_master WHERE name = ?",
                                    (name,)).scalar_one() > 0
    return conn.exec_driver_sql("SELECT to_regclass(%s) IS NOT NULL",
                                (name,)).scalar_one() is True


def _old_text_usable(conn: sa.Connection) -> bool:
    """The old index holds folded text (its mark, or it is empty): its text is what the
    catch-up writes now, so it is kept."""
    if not _exists(conn, "search_items"):
        return False
    if conn.dialect.name == "sqlite":
        marked = conn.exec_driver_sql("PRAGMA user_version").scalar() == _FOLDED_MARK
    else:
        marked = conn.exec_driver_sql(
            "SELECT obj_description('search_items'::regclass, 'pg_class')").scalar() == _PG_MARK
    return marked or conn.exec_driver_sql("SELECT 1 FROM search_items LIMIT 1").first() is None


def _is_citus(conn: sa.Connection) -> bool:
    return conn.dialect.name == "postgresql" and conn.exec_driver_sql(
        "SELECT count(*) FROM pg_extension WHERE extname = 'citus'").scalar_one() > 0


def upgrade() -> None:
    conn = op.get_bind()
    sqlite = conn.dialect.name == "sqlite"
    keep = _old_text_usable(conn)
    for table in ("tool_calls", "tool_results"):
        op.add_column(table, sa.Column("search_body", sa.Text(), nullable=True))
        op.add_column(table, sa.Column("search_id", sa.Integer(), nullable=True))
    # (SQLite: each row keeps its item's id, so its entry keeps its id too)
    given = ", search_id = i.id" if sqlite else ""
    for table, kind, index in (("tool_calls", 0, "call_index"),
                               ("tool_results", 1, "result_index")) if keep else ():
        op.execute(f"UPDATE {table} SET search_body = i.body{given} FROM search_items AS i "
                   f"WHERE i.session_id = {table}.session_id "
                   f"AND i.position = {table}.position AND i.kind = {kind} "
                   f"AND i.item_index = {table}.{index}")
    if sqlite:
        op.execute("DROP TRIGGER IF EXISTS search_items_fts_delete")
        op.execute("DROP TABLE IF EXISTS search_fts")
    op.execute("DROP TABLE IF EXISTS search_items")
    if sqlite:
        op.execute("PRAGMA user_version = 0")  # (the old index's mark: nothing reads it now)
    if not keep:
        for statement in _RESET:
            op.execute(statement)
    for table in ("tool_calls", "tool_results"):
        op.create_index(f"ix_{table}_unindexed", table, ["session_id", "position"],
                        sqlite_where=sa.text("search_body IS NULL OR search_id IS NULL"),
                        postgresql_where=sa.text("search_body IS NULL"))
    if sqlite:
        for statement in _SQLITE_IDS:
            op.execute(statement)
        if _sqlite_has_trigram_fts5():
            for statement in _SQLITE_FTS:
                op.execute(statement)
            op.execute("INSERT INTO search_fts (search_fts) VALUES ('rebuild')")
    else:
        for statement in _PG_TRGM:
            op.execute(statement)
        op.execute(_PG_VIEW)


def downgrade() -> None:
    conn = op.get_bind()
    sqlite = conn.dialect.name == "sqlite"
    if sqlite:
        for statement in _SQLITE_FTS_DROP:
            op.execute(statement)
    else:
        op.execute("DROP VIEW IF EXISTS search_items")
        for statement in _PG_TRGM_DROP:
            op.execute(statement)
    for table in ("tool_results", "tool_calls"):
        op.drop_index(f"ix_{table}_unindexed", table_name=table)
    if sqlite and _sqlite_has_trigram_fts5():
        for statement in _SQLITE_OLD:
            op.execute(statement)
        for statement in _OLD_FILL:
            op.execute(statement)
        op.execute("INSERT INTO search_fts (search_fts) VALUES ('rebuild')")
        op.execute(f"PRAGMA user_version = {_FOLDED_MARK}")
    elif not sqlite:
        for statement in _PG_OLD:
            op.execute(statement)
        if _is_citus(conn) and conn.exec_driver_sql(
                "SELECT count(*) FROM pg_dist_partition "
                "WHERE logicalrelid = 'sessions'::regclass").scalar_one():
            op.execute("SELECT create_distributed_table('search_items', 'session_id', "
                       "colocate_with => 'sessions')")
        for statement in _OLD_FILL:  # (the text holds no NUL: the catch-up made it U+FFFD)
            op.execute(statement)
        op.execute(f"COMMENT ON TABLE search_items IS '{_PG_MARK}'")
    for table in ("tool_results", "tool_calls"):
        for column in ("search_id", "search_body"):
            if sqlite and sqlite3.sqlite_version_info >= (3, 35, 0):
                # A plain DROP COLUMN: a batch copy would cascade into every message.
                op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
            else:
                with op.batch_alter_table(table) as batch:
                    batch.drop_column(column)
