"""drop ix_tool_calls_raw_name: ix_tool_calls_usage leads with raw_name and serves its queries

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

``ix_tool_calls_raw_name (raw_name)`` is a prefix of ``ix_tool_calls_usage (raw_name,
session_id, position, call_index, arguments_status)`` (revision 0004): every query it served
(a tool filter, a count per raw name) is answered by the wider index, so the narrower one was
pure write cost, paid by every call of every append. The downgrade builds it again.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_tool_calls_raw_name", table_name="tool_calls")


def downgrade() -> None:
    op.create_index("ix_tool_calls_raw_name", "tool_calls", ["raw_name"])
