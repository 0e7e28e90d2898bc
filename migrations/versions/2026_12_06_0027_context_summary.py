"""context_summary: per session, UTC day, model and raw tool name, the calls and what their
results carried into the context

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-06

Issue 39, item 3 ("every command instant"). ``tools usage --by day|week|agent|model`` read
every call joined to its message (its day), its usage row (its model) and its results (their
number, size and errors): 2.4 s at 10^6 messages, though its answer is a few hundred rows.
The per-session summaries (revision 0022, ``store/db/index/summaries.py``) now keep that fold
too: per (session, UTC day, the call's message's model, raw name): calls, results, error
results and the results' stored size.

The upgrade creates the table empty and forgets every session's summary stamp, so the next
catch-up of a writable store (``import``, ``watch``, a search, ``db index``) summarizes every
session again with its new rows; until then every report reads the calls as before. The
downgrade drops the table (the stamps stay: the older rows mean what they meant).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "context_summary",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("item", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("day", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("raw_name", sa.String(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("results", sa.Integer(), nullable=False),
        sa.Column("error_results", sa.Integer(), nullable=False),
        sa.Column("result_chars", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.session_id"],
                                name="fk_context_summary_session_id_sessions",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("session_id", "item", name="pk_context_summary"),
    )
    op.execute("DELETE FROM session_summaries")


def downgrade() -> None:
    op.drop_table("context_summary")
