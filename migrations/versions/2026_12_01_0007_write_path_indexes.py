"""indexes off the write path: argument views caught up like the text index; no raw_name index

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

Two costs every append paid for the audits move off the write path (issue 15):

* The argument views (revision 0006: ``command_text``, ``path_text``, ``pattern_text``,
  ``url_text`` on ``tool_calls``, each with a partial index) become rows of ``call_views``
  (one per view a call has), derived data that the search catch-up fills from the same
  watermark (``sessions.indexed_position``) as the text index. The views of the calls below
  the watermark are copied; those at or after it are computed by the next catch-up, and a
  search scans them exactly until then.
* ``ix_tool_calls_raw_name (raw_name)`` is a prefix of ``ix_tool_calls_usage`` (revision
  0004), which serves every query it served.

The downgrade puts the columns back (computed again for every call by the library's
extractor, as revision 0006 did), their indexes and ``ix_tool_calls_raw_name``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VIEWS = ("command", "path", "pattern", "url")
_BATCH = 2000


def upgrade() -> None:
    dialect = op.get_context().dialect.name
    op.drop_index("ix_tool_calls_raw_name", table_name="tool_calls")
    op.create_table(
        "call_views",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("call_index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("view", sa.String(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["session_id", "position"],
                                ["messages.session_id", "messages.position"],
                                name="fk_call_views_session_id_messages", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("session_id", "position", "call_index", "view",
                                name="pk_call_views"),
    )
    for view in _VIEWS:  # the calls already caught up keep their views
        op.execute(
            "INSERT INTO call_views (session_id, position, call_index, view, text) "
            f"SELECT c.session_id, c.position, c.call_index, '{view}', c.{view}_text "
            "FROM tool_calls c JOIN sessions s ON s.session_id = c.session_id "
            f"WHERE c.{view}_text IS NOT NULL AND c.position < s.indexed_position")
    for view in _VIEWS:
        op.drop_index(f"ix_tool_calls_{view}", table_name="tool_calls")
    for view in _VIEWS:
        if dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35, 0):
            op.execute(f"ALTER TABLE tool_calls DROP COLUMN {view}_text")  # in place
        elif dialect == "sqlite":
            with op.batch_alter_table("tool_calls") as batch:
                batch.drop_column(f"{view}_text")
        else:
            op.drop_column("tool_calls", f"{view}_text")


def _backfill_views() -> None:
    """The argument views of every call (derived data: the library's extractor computes
    them, as revision 0006 did)."""
    from store.tools.vocabulary import argument_views

    conn = op.get_bind()
    calls = sa.table("tool_calls", sa.column("session_id"), sa.column("position"),
                     sa.column("call_index"), sa.column("raw_name"), sa.column("arguments"),
                     *(sa.column(f"{v}_text") for v in _VIEWS))
    update = (
        calls.update()
        .where(calls.c.session_id == sa.bindparam("k_sid"),
               calls.c.position == sa.bindparam("k_pos"),
               calls.c.call_index == sa.bindparam("k_idx"))
        .values({f"{v}_text": sa.bindparam(f"v_{v}") for v in _VIEWS})
    )
    rows = conn.execute(
        sa.select(calls.c.session_id, calls.c.position, calls.c.call_index, calls.c.raw_name,
                  sa.cast(calls.c.arguments, sa.Text))
        .where(calls.c.arguments.is_not(None))
    ).all()
    batch: list[dict[str, Any]] = []
    for sid, pos, idx, raw, arguments in rows:
        views = argument_views(raw, orjson.loads(arguments))
        if any(v is not None for v in views):
            batch.append({"k_sid": sid, "k_pos": pos, "k_idx": idx,
                          **{f"v_{v}": value for v, value in zip(_VIEWS, views, strict=True)}})
        if len(batch) >= _BATCH:
            conn.execute(update, batch)
            batch = []
    if batch:
        conn.execute(update, batch)


def downgrade() -> None:
    for view in _VIEWS:
        op.add_column("tool_calls", sa.Column(f"{view}_text", sa.Text(), nullable=True))
    _backfill_views()
    for view in _VIEWS:
        column = f"{view}_text"
        op.create_index(
            f"ix_tool_calls_{view}", "tool_calls", ["raw_name", column],
            sqlite_where=sa.text(f"{column} IS NOT NULL"),
            postgresql_where=sa.text(f"{column} IS NOT NULL"),
        )
    op.drop_table("call_views")
    op.create_index("ix_tool_calls_raw_name", "tool_calls", ["raw_name"])
