"""the tool names of the agents kept in SQLite: Crush, OpenCode, Goose

Revision ID: 0013
Revises: 0011
Create Date: 2026-12-02

Seeds ``tool_aliases`` with the scoped rows of ``store.tools.vocabulary`` for the agents whose
sessions the importers read from SQLite databases (issue 26, "More agents"). Rows already
present (user edits) are left as they are; the downgrade keeps the rows (no row is lost on a
downgrade; they are valid at revision 0011).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of the rows store.tools.vocabulary.VOCABULARY gained with this revision (a
# revision must not change with the library): (agent, raw name, canonical name).
_VOCABULARY: list[tuple[str, str, str]] = [
    ('crush', 'bash', 'bash'),
    ('crush', 'job_output', 'bash_io'),
    ('crush', 'job_kill', 'bash_io'),
    ('crush', 'view', 'read'),
    ('crush', 'write', 'write'),
    ('crush', 'edit', 'edit'),
    ('crush', 'multiedit', 'edit'),
    ('crush', 'glob', 'glob'),
    ('crush', 'grep', 'grep'),
    ('crush', 'ls', 'list'),
    ('crush', 'fetch', 'web_fetch'),
    ('crush', 'agentic_fetch', 'web_fetch'),
    ('crush', 'download', 'web_fetch'),
    ('crush', 'web_search', 'web_search'),
    ('crush', 'todos', 'todo'),
    ('crush', 'agent', 'task'),
    ('crush', 'question', 'ask_user'),
    ('opencode', 'bash', 'bash'),
    ('opencode', 'read', 'read'),
    ('opencode', 'write', 'write'),
    ('opencode', 'edit', 'edit'),
    ('opencode', 'multiedit', 'edit'),
    ('opencode', 'patch', 'patch'),
    ('opencode', 'glob', 'glob'),
    ('opencode', 'grep', 'grep'),
    ('opencode', 'list', 'list'),
    ('opencode', 'webfetch', 'web_fetch'),
    ('opencode', 'websearch', 'web_search'),
    ('opencode', 'todowrite', 'todo'),
    ('opencode', 'todoread', 'todo'),
    ('opencode', 'task', 'task'),
    ('opencode', 'question', 'ask_user'),
    ('opencode', 'plan_enter', 'plan_mode'),
    ('opencode', 'plan_exit', 'plan_mode'),
    ('goose', 'developer__shell', 'bash'),
    ('goose', 'developer__text_editor', 'edit'),
    ('goose', 'computercontroller__web_scrape', 'web_fetch'),
    ('goose', 'computercontroller__web_search', 'web_search'),
    ('goose', 'dynamic_task__create_task', 'task'),
    ('goose', 'subagent__execute_task', 'task'),
    ('goose', 'todo__todo_write', 'todo'),
    ('goose', 'todo__todo_read', 'todo'),
]

_ALIASES = sa.table("tool_aliases", sa.column("agent"), sa.column("raw_name"),
                    sa.column("current_name"), sa.column("created_at"))


def upgrade() -> None:
    conn = op.get_bind()
    present = {(a, r) for a, r in conn.execute(sa.select(_ALIASES.c.agent,
                                                         _ALIASES.c.raw_name))}
    now = sa.func.current_timestamp()
    for agent, raw, current in _VOCABULARY:
        if (agent, raw) not in present:
            conn.execute(_ALIASES.insert().values(agent=agent, raw_name=raw,
                                                  current_name=current, created_at=now))


def downgrade() -> None:
    """Nothing to undo: the seeded rows stay. Aliases are user-editable data from the moment
    they are seeded (a user may have changed or relied on them), revision 0011's schema holds
    them as they are, and an upgrade again leaves present rows alone; a downgrade never
    loses rows."""
