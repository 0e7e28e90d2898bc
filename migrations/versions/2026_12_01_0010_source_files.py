"""capture: where each source file's read stopped, and which sessions each file fed

Revision ID: 0010
Revises: 0007
Create Date: 2026-12-01

``source_files`` keeps, per source file, where the last read stopped (identity, size,
modification time, offset, line count, digest, format, the records a read from the offset
needs again, whether something was held back) and when a pass found the file deleted;
``session_sources`` links each session to the files it came from. ``import`` and ``watch``
share them (store/capture, store/db/writing/sources.py). Self-contained: the downgrade drops both.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "source_files",
        sa.Column("path", sa.String(), nullable=False),
        sa.Column("identity", sa.String(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("mtime_ns", sa.BigInteger(), nullable=False),
        sa.Column("read_offset", sa.BigInteger(), nullable=False),
        sa.Column("read_lines", sa.BigInteger(), nullable=False),
        sa.Column("digest", sa.String(), nullable=False),
        sa.Column("format", sa.String(), nullable=True),
        sa.Column("context_json", sa.Text(), nullable=False),
        sa.Column("pending", sa.Boolean(), nullable=False),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("gone_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("path", name=op.f("pk_source_files")),
    )
    op.create_table(
        "session_sources",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("path", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.session_id"],
                                name=op.f("fk_session_sources_session_id_sessions"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("session_id", "path", name=op.f("pk_session_sources")),
    )


def downgrade() -> None:
    op.drop_table("session_sources")
    op.drop_table("source_files")
