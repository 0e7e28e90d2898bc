"""transparency log: log_leaves, log_state, sessions.logged_position

Revision ID: 0018
Revises: 0015
Create Date: 2026-12-02

Issue 38 (``store/tlog``, ``store/db/proofs/tlog.py``, docs/trust.md): one RFC 9162 Merkle tree per
store, whose leaves are every stored message and every trust event, in append order, each a
salted commitment to its entry, so that an auditor holding a signed checkpoint can check
inclusion and consistency offline without trusting whoever runs the database.

* ``log_leaves``: index, leaf hash, kind, subject (the session), position, salt and entry
  (both NULL once erased). No ``session_id`` column (a leaf outlives its session): on Citus a
  reference table.
* ``log_state``: one row, ``log``: the checkpoints' origin (made at random here) and the row
  every log append locks.
* ``sessions.logged_position`` with ``ix_sessions_log_behind``: the log's watermark, as
  ``indexed_position`` is the search index's. The messages are logged by the first catch-up
  (``store/db/proofs/tlog.py``: before any log command answers, off the append path), not here.

The upgrade logs the tombstones and the holds already stored (oldest first; the entry format
is written out here, frozen). The downgrade drops the tables, the index and the column (the
log is derived from rows that stay; its salts go with it, and a later upgrade starts a new log
with a new origin: checkpoints of the old one no longer verify against it).
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(value: datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _leaf(entry: list[object]) -> dict[str, object]:
    text = orjson.dumps(entry)
    salt = secrets.token_bytes(32)
    return {"leaf_hash": hashlib.sha256(b"\x00" + salt + hashlib.sha256(text).digest()).digest(),
            "salt": salt, "entry": text.decode()}


def upgrade() -> None:
    op.add_column("sessions", sa.Column("logged_position", sa.Integer(), nullable=False,
                                        server_default="0"))
    op.create_index("ix_sessions_log_behind", "sessions", ["session_id"],
                    sqlite_where=sa.text("next_position > logged_position"),
                    postgresql_where=sa.text("next_position > logged_position"))
    leaves = op.create_table(
        "log_leaves",
        sa.Column("leaf_index", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("leaf_hash", sa.LargeBinary(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("subject", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("salt", sa.LargeBinary(), nullable=True),
        sa.Column("entry", sa.Text(), nullable=True),
        sa.Column("logged_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("leaf_index", name=op.f("pk_log_leaves")),
    )
    op.create_index("ix_log_leaves_subject", "log_leaves", ["subject", "position"])
    state = op.create_table(
        "log_state",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("origin", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_log_state")),
    )
    now = datetime.now(UTC)
    conn = op.get_bind()
    conn.execute(state.insert().values(
        name="log", origin=f"transcript-store.invalid/log/{secrets.token_hex(8)}",
        created_at=now))
    when = sa.DateTime(timezone=True)
    tombstones = sa.table("tombstones", sa.column("session_id"),
                          sa.column("erased_at", when),
                          sa.column("start_position"), sa.column("kind"),
                          sa.column("messages"), sa.column("digest"))
    holds = sa.table("session_holds", sa.column("session_id"), sa.column("reason"),
                     sa.column("held_at", when), sa.column("actor"))
    events: list[tuple[int, dict[str, object]]] = []
    for sid, at, start, kind, count, digest in conn.execute(sa.select(
            tombstones.c.session_id, tombstones.c.erased_at, tombstones.c.start_position,
            tombstones.c.kind, tombstones.c.messages, tombstones.c.digest)):
        micros = _micros(at)
        events.append((micros, {"kind": "tombstone", "subject": sid, "position": start,
                                **_leaf(["tombstone", kind, sid, micros, start, count,
                                         digest])}))
    for sid, reason, at, actor in conn.execute(sa.select(
            holds.c.session_id, holds.c.reason, holds.c.held_at, holds.c.actor)):
        micros = _micros(at)
        events.append((micros, {"kind": "hold", "subject": sid, "position": None,
                                **_leaf(["hold", sid, micros, reason, actor])}))
    events.sort(key=lambda e: (e[0], e[1]["subject"], e[1]["kind"]))
    rows = [{"leaf_index": i, "logged_at": now, **row} for i, (_, row) in enumerate(events)]
    if rows:
        op.bulk_insert(leaves, rows)


def downgrade() -> None:
    op.drop_index("ix_log_leaves_subject", table_name="log_leaves")
    op.drop_table("log_leaves")
    op.drop_table("log_state")
    op.drop_index("ix_sessions_log_behind", table_name="sessions")
    dialect = op.get_context().dialect.name
    if dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35, 0):
        op.execute("ALTER TABLE sessions DROP COLUMN logged_position")  # in place
    elif dialect == "sqlite":
        with op.batch_alter_table("sessions") as batch:
            batch.drop_column("logged_position")
    else:
        op.drop_column("sessions", "logged_position")
