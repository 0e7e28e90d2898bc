"""session activity: sessions.started_at, last_activity_at

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02

Issue 33 (items 4 and 5) and 37 (item 1): a session carries its own activity times, and
everything that lists, filters, sorts or prunes sessions by time uses them. Before this
revision the only session times were ``created_at`` and ``updated_at``, both the wall clock
of the store's writes: a session whose messages are from 2020, imported today, was "updated"
today, so it sorted as new and retention never pruned it.

* ``sessions.started_at``: the session's first activity (the agent's own start record, else
  its first message's time; the append's time only for messages that carry none).
* ``sessions.last_activity_at``: its last activity, likewise (what ``sessions list`` sorts
  by and ``prune`` compares).
* ``ix_sessions_last_activity``: prune's range, the listing's order.

Both are nullable: a session created without messages has had no activity yet (readers fall
back to ``created_at``). The upgrade fills them for the sessions stored before it from their
messages' own times (``messages.created_at`` holds each message's recorded timestamp, the
append's time only when it carried none), one statement over ``ix_messages_time`` (on
PostgreSQL a join on ``session_id``, which Citus runs on co-located shards).
``sessions.updated_at`` keeps its meaning (the store's last write to the row: a stored time,
shown as such) and its name, so that readers of the file keep working.

The downgrade drops the index and the two columns: no row is lost (the messages still hold
the times they were filled from).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("started_at", "last_activity_at")


def upgrade() -> None:
    # In place (ALTER TABLE ... ADD COLUMN on both backends; see revision 0015).
    for column in _COLUMNS:
        op.add_column("sessions", sa.Column(column, sa.DateTime(timezone=True), nullable=True))
    if op.get_context().dialect.name == "postgresql":
        # A join on the distribution column (Citus runs it shard by shard, co-located).
        op.execute(
            "UPDATE sessions SET started_at = span.first, last_activity_at = span.last "
            "FROM (SELECT session_id, min(created_at) AS first, max(created_at) AS last "
            "FROM messages GROUP BY session_id) AS span "
            "WHERE sessions.session_id = span.session_id")
    else:
        op.execute(
            "UPDATE sessions SET "
            "started_at = (SELECT min(m.created_at) FROM messages m "
            "WHERE m.session_id = sessions.session_id), "
            "last_activity_at = (SELECT max(m.created_at) FROM messages m "
            "WHERE m.session_id = sessions.session_id) "
            "WHERE next_position > 0")
    op.create_index("ix_sessions_last_activity", "sessions", ["last_activity_at"])


def downgrade() -> None:
    op.drop_index("ix_sessions_last_activity", table_name="sessions")
    dialect = op.get_context().dialect.name
    for column in reversed(_COLUMNS):
        if dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35, 0):
            op.execute(f"ALTER TABLE sessions DROP COLUMN {column}")  # in place (see upgrade)
        elif dialect == "sqlite":
            with op.batch_alter_table("sessions") as batch:
                batch.drop_column(column)
        else:
            op.drop_column("sessions", column)
