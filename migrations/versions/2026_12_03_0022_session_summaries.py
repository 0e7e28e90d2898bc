"""per-session summaries of tool usage and token usage; an index of usage by response

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-03

Issue 39, item 3 ("every command instant"). ``tools usage`` and the ``usage`` reports read
every call (with its results and its message's time) or every usage row (with its message's
time) of the store each time: 1.3 s and 1.7 s at 10^6 messages. Three derived tables keep
what they fold, per session, off the write path (the search catch-up fills them,
``store/db/index/summaries.py``):

* ``session_summaries``: the session's ``next_position`` and ``chain_digest`` when it was
  summarized, what the rows mean (``version``) and whether one of its usage rows shares its
  response with another stored row (``repeats``); rows of a session whose stamp no longer
  matches are not used (its calls and usage are read as before);
* ``tool_summary``: per session, raw tool name and action: calls, invalid calls, calls with an
  error result, calls without a result, first and last call time;
* ``usage_summary``: per session, UTC day and model: responses, token sums, the tokens past
  the tiered-price threshold, the last response time.

And ``ix_message_usage_response`` (``response_id``, ``request_id``): the reports count a
response stored twice (a resumed session's file repeats its parent's) once; finding those
rows scanned and sorted every usage row.

Nothing is filled here: the tables start empty (every session unsummarized, the reports
read as before) and the next catch-up of a writable store (``import``, ``watch``, a search,
``db index``) fills them. The downgrade drops them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COUNTS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
           "reasoning_tokens", "input_past", "output_past", "cache_creation_past",
           "cache_read_past")


def _session_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(["session_id"], ["sessions.session_id"],
                                   name=f"fk_{table}_session_id_sessions", ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "session_summaries",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("next_position", sa.Integer(), nullable=False),
        sa.Column("chain_digest", sa.String(), nullable=False),
        sa.Column("version", sa.String(), nullable=False),
        sa.Column("repeats", sa.Boolean(), nullable=False),
        _session_fk("session_summaries"),
        sa.PrimaryKeyConstraint("session_id", name="pk_session_summaries"),
    )
    op.create_table(
        "tool_summary",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("item", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("raw_name", sa.String(), nullable=False),
        sa.Column("action", sa.String(), nullable=True),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("invalid_calls", sa.Integer(), nullable=False),
        sa.Column("error_calls", sa.Integer(), nullable=False),
        sa.Column("unanswered_calls", sa.Integer(), nullable=False),
        sa.Column("first_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=False),
        _session_fk("tool_summary"),
        sa.PrimaryKeyConstraint("session_id", "item", name="pk_tool_summary"),
    )
    op.create_table(
        "usage_summary",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("item", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("day", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("responses", sa.Integer(), nullable=False),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in _COUNTS),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=False),
        _session_fk("usage_summary"),
        sa.PrimaryKeyConstraint("session_id", "item", name="pk_usage_summary"),
    )
    op.create_index("ix_message_usage_response", "message_usage",
                    ["response_id", "request_id"])


def downgrade() -> None:
    op.drop_index("ix_message_usage_response", table_name="message_usage")
    op.drop_table("usage_summary")
    op.drop_table("tool_summary")
    op.drop_table("session_summaries")
