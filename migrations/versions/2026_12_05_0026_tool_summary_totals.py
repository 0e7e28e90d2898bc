"""tool_summary keeps the session's agent, and an index reads the totals in order

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-05

Issue 39, item 3 ("every command instant"). ``tools usage`` summed the 35,730 rows of
``tool_summary`` at 10^6 messages joined to each row's session (its stamp, its agent) and
grouped them in a sort: 46 ms of a ~157 ms command. With the session's agent in the row,
``ix_tool_summary_totals`` (agent, raw name, action, session, counts, times) gives the totals
per (agent, raw name, action) in its order, no join, no sort (the sessions whose summary no
longer holds, few, are left out by their ids).

The upgrade fills ``agent`` from ``sessions`` (an agent is set when its session is created
and never changes); the downgrade drops the index and the column.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INDEX = ("agent", "raw_name", "action", "session_id", "calls", "invalid_calls", "error_calls",
          "unanswered_calls", "first_at", "last_at")


def upgrade() -> None:
    op.add_column("tool_summary", sa.Column("agent", sa.String(), nullable=True))
    op.execute("UPDATE tool_summary SET agent = (SELECT s.agent FROM sessions AS s "
               "WHERE s.session_id = tool_summary.session_id)")
    op.create_index("ix_tool_summary_totals", "tool_summary", list(_INDEX))


def downgrade() -> None:
    op.drop_index("ix_tool_summary_totals", table_name="tool_summary")
    op.drop_column("tool_summary", "agent")
