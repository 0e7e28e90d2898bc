"""add tool_calls.wire_version

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every stored wire record says which canonical form wrote it, so that a later change of
    # the form is detectable row by row. Rows written before this revision are version 1: the
    # canonical shape, or an older writer's spelling, which the loader reads either way.
    with op.batch_alter_table("tool_calls") as batch:
        batch.add_column(
            sa.Column("wire_version", sa.Integer(), nullable=False, server_default="1")
        )


def downgrade() -> None:
    with op.batch_alter_table("tool_calls") as batch:
        batch.drop_column("wire_version")
