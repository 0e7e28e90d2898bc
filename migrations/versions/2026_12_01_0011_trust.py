"""trust: chained message digests, tombstones, recorded heads, legal holds

Revision ID: 0011
Revises: 0007
Create Date: 2026-12-01

Issue 27 (``store/trust``):

* ``messages.digest``: each message's digest over its rows as stored, chained to the
  previous message's (``store.trust.chain``); ``sessions.chain_digest``: the last one. The
  upgrade computes both for every message stored before it, session by session.
* ``tombstones``: what erase, delete, prune and truncate removed (session, when, first
  position, kind, count, digest of what went, why, who) so that ``verify`` stays clean and
  a head printed earlier still verifies.
* ``chain_heads``: the listing of every head ``db head`` printed (``verify --head``).
* ``session_holds``: legal holds (a held session cannot be erased, deleted or pruned).
* ``call_secrets`` and ``trust_keys``: the keyed digests of the secrets the detectors find
  in calls and results, under a per-store key made here at random. The search index is
  forgotten (as ``store.db.index.search_index.rebuild_statements`` does) so that the next
  catch-up fills it again with redacted text and fills ``call_secrets``.

The downgrade drops them all.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)
_BATCH = 2000


def upgrade() -> None:
    op.add_column("sessions", sa.Column("chain_digest", sa.String(), nullable=True))
    op.add_column("messages", sa.Column("digest", sa.String(), nullable=True))
    op.create_table(
        "tombstones",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("erased_at", _TIME, nullable=False),
        sa.Column("start_position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("messages", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("actor", sa.String(), nullable=True),
        sa.PrimaryKeyConstraint("session_id", "erased_at", "start_position",
                                name="pk_tombstones"),
    )
    op.create_table(
        "chain_heads",
        sa.Column("head", sa.String(), nullable=False),
        sa.Column("recorded_at", _TIME, nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("head", name="pk_chain_heads"),
    )
    op.create_table(
        "session_holds",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("held_at", _TIME, nullable=False),
        sa.Column("actor", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.session_id"],
                                name="fk_session_holds_session_id_sessions",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("session_id", name="pk_session_holds"),
    )
    op.create_table(
        "call_secrets",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("item", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("item_index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("digest", sa.String(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("call_position", sa.Integer(), nullable=True),
        sa.Column("call_index", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["session_id", "position"],
                                ["messages.session_id", "messages.position"],
                                name="fk_call_secrets_session_id_messages", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("session_id", "position", "item", "item_index", "digest",
                                name="pk_call_secrets"),
    )
    op.create_index("ix_call_secrets_digest", "call_secrets", ["digest"])
    op.create_table(
        "trust_keys",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_trust_keys"),
    )
    keys = sa.table("trust_keys", sa.column("name"), sa.column("key"))
    op.bulk_insert(keys, [{"name": "secret_index", "key": secrets.token_hex(32)}])
    _forget_search_index(op.get_context().dialect.name)
    _compute_chains()


def _forget_search_index(dialect: str) -> None:
    """The index held unredacted text: forget it; the next catch-up fills it again."""
    conn = op.get_bind()
    if dialect == "sqlite":
        present = conn.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE name = 'search_fts'").scalar_one()
        if present:
            # search_items first: revision 0008's trigger takes each text out of the
            # external-content index (a 'delete-all' first would leave the trigger deleting
            # entries that are no longer there, which corrupts an FTS5 index); then anything
            # left behind
            op.execute("DELETE FROM search_items")
            op.execute("INSERT INTO search_fts(search_fts) VALUES ('delete-all')")
    else:
        op.execute("DELETE FROM search_items")
    op.execute("DELETE FROM call_views")
    op.execute("UPDATE sessions SET indexed_position = 0 WHERE indexed_position <> 0")


def _compute_chains() -> None:
    """The digest of every stored message and each session's chain head (version 1 of the
    rule, ``store.trust.chain``; the rows are read through tables frozen here)."""
    from store.trust.chain import GENESIS, canonical_time, message_digest

    conn = op.get_bind()
    sessions = sa.table("sessions", sa.column("session_id"), sa.column("chain_digest"))
    messages = sa.table(
        "messages", *(sa.column(c) for c in (
            "session_id", "position", "message_key", "message_id", "role", "source", "text",
            "parts_json", "extras_json", "metadata_json")),
        sa.column("created_at", _TIME), sa.column("digest"))
    calls = sa.table(
        "tool_calls", *(sa.column(c) for c in (
            "session_id", "position", "call_index", "call_id")),
        sa.column("id_minted", sa.Boolean()),
        *(sa.column(c) for c in ("raw_name", "wire_json", "arguments_status",
                                 "arguments_error", "extras_json", "source", "wire_version")))
    results = sa.table(
        "tool_results", *(sa.column(c) for c in (
            "session_id", "position", "result_index", "call_id", "call_position",
            "call_index")),
        sa.column("is_error", sa.Boolean()),
        *(sa.column(c) for c in ("name", "content_json", "extras_json", "source")))
    set_digest = messages.update().where(
        messages.c.session_id == sa.bindparam("k_sid"),
        messages.c.position == sa.bindparam("k_pos")).values(digest=sa.bindparam("v_digest"))
    set_head = sessions.update().where(
        sessions.c.session_id == sa.bindparam("k_sid")).values(
        chain_digest=sa.bindparam("v_digest"))
    batch: list[dict[str, Any]] = []
    heads: list[dict[str, Any]] = []
    sids = conn.execute(sa.select(sessions.c.session_id).order_by(sessions.c.session_id)
                        ).scalars().all()
    for sid in sids:
        by_call: dict[int, list[Any]] = {}
        for row in conn.execute(sa.select(*calls.c).where(calls.c.session_id == sid)
                                .order_by(calls.c.position, calls.c.call_index)):
            _, pos, idx, cid, minted, *rest = row
            by_call.setdefault(pos, []).append((idx, cid, bool(minted), *rest))
        by_result: dict[int, list[Any]] = {}
        for row in conn.execute(sa.select(*results.c).where(results.c.session_id == sid)
                                .order_by(results.c.position, results.c.result_index)):
            _, pos, idx, cid, cpos, cidx, is_error, *rest = row
            by_result.setdefault(pos, []).append((idx, cid, cpos, cidx, bool(is_error), *rest))
        chain = GENESIS
        last = None
        for row in conn.execute(
                sa.select(*[c for c in messages.c if c.name != "digest"])
                .where(messages.c.session_id == sid).order_by(messages.c.position)):
            _, pos, *fields, created = row
            chain = last = message_digest(chain, pos, (*fields, canonical_time(created)),
                                          by_call.get(pos, []), by_result.get(pos, []))
            batch.append({"k_sid": sid, "k_pos": pos, "v_digest": chain})
            if len(batch) >= _BATCH:
                conn.execute(set_digest, batch)
                batch = []
        if last is not None:
            heads.append({"k_sid": sid, "v_digest": last})
        if len(heads) >= _BATCH:
            conn.execute(set_head, heads)
            heads = []
    if batch:
        conn.execute(set_digest, batch)
    if heads:
        conn.execute(set_head, heads)


def downgrade() -> None:
    op.drop_table("trust_keys")
    op.drop_index("ix_call_secrets_digest", table_name="call_secrets")
    op.drop_table("call_secrets")
    op.drop_table("session_holds")
    op.drop_table("chain_heads")
    op.drop_table("tombstones")
    dialect = op.get_context().dialect.name
    for table, column in (("messages", "digest"), ("sessions", "chain_digest")):
        if dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35, 0):
            op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")  # in place
        elif dialect == "sqlite":
            with op.batch_alter_table(table) as batch:
                batch.drop_column(column)
        else:
            op.drop_column(table, column)
