"""add messages.message_id

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # The provider's (or transcript's) own id of a message, kept apart from the idempotency
    # key: a client-given key must not replace the id that a replay echoes. Rows written
    # before this revision used the provider id as the key whenever no key was given, so the
    # key is the best value we have for them.
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("message_id", sa.String(), nullable=True))
    op.execute("UPDATE messages SET message_id = message_key")


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("message_id")
