"""findings: Sigma rule matches saved by ``rules check --save``

Revision ID: 0009
Revises: 0007
Create Date: 2026-12-01

One table, ``findings`` (store/rules, issue 29): a Sigma rule that matched a stored call, one
row per (call, rule), keyed like the calls (``session_id`` first, so that Citus distributes it
with them) and deleted with its message. Self-contained: the downgrade drops the table only.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "findings",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("call_index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("rule_id", sa.String(), nullable=False),
        sa.Column("call_id", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("level", sa.String(), nullable=False),
        sa.Column("tags_json", sa.Text(), nullable=False),
        sa.Column("agent", sa.String(), nullable=True),
        sa.Column("tool", sa.String(), nullable=False),
        sa.Column("raw_tool", sa.String(), nullable=False),
        sa.Column("field", sa.String(), nullable=False),
        sa.Column("matched", sa.Text(), nullable=False),
        sa.Column("found_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["session_id", "position"],
                                ["messages.session_id", "messages.position"],
                                name="fk_findings_session_id_messages", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("session_id", "position", "call_index", "rule_id",
                                name="pk_findings"),
    )
    op.create_index("ix_findings_rule", "findings", ["rule_id"])


def downgrade() -> None:
    op.drop_index("ix_findings_rule", table_name="findings")
    op.drop_table("findings")
