"""context_summary keeps the session's agent, and an index reads the totals in order

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-07

Issue 39, item 3 ("every command instant"). ``tools usage --by day|week|agent|model`` summed
the 62,325 rows of ``context_summary`` at 10^6 messages joined to each row's session (its
stamp, its agent, its model) and grouped them in a sort: ~75 ms of a ~180 ms command. As
revision 0026 did for ``tool_summary``: with the session's agent in the row,
``ix_context_summary_totals`` (agent, raw name, day, model, session, counts) gives the sums
per (agent, raw name[, day[, model]]) in its order, no join and no sort (the sessions whose
summary no longer holds, few, are left out by their ids; a call whose message has no usage
row, model NULL, still takes its session's model through a join).

The upgrade fills ``agent`` from ``sessions`` (an agent is set when its session is created
and never changes); the downgrade drops the index and the column.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INDEX = ("agent", "raw_name", "day", "model", "session_id", "calls", "results",
          "result_chars", "error_results")


def upgrade() -> None:
    op.add_column("context_summary", sa.Column("agent", sa.String(), nullable=True))
    op.execute("UPDATE context_summary SET agent = (SELECT s.agent FROM sessions AS s "
               "WHERE s.session_id = context_summary.session_id)")
    op.create_index("ix_context_summary_totals", "context_summary", list(_INDEX))


def downgrade() -> None:
    op.drop_index("ix_context_summary_totals", table_name="context_summary")
    op.drop_column("context_summary", "agent")
