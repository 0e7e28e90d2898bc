"""agents-vscode vocabulary: Cline, Roo Code and OpenHands V1 tool names

Revision ID: 0014
Revises: 0011
Create Date: 2026-12-02

Issue 26 (more agents): the alias rows of ``store.tools.vocabulary`` added with the Cline,
Roo Code and OpenHands importers, seeded into existing databases. Rows already present (a
user's edits) are left as they are; the downgrade keeps the rows (they fit revision 0011's
table, and a downgrade loses no row).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of the rows of store.tools.vocabulary.VOCABULARY added since revision 0006 (a
# revision must not change with the library): (agent or None, raw name, canonical name).
_VOCABULARY: list[tuple[str | None, str, str]] = [
    ('cline', 'focus_chain', 'todo'),
    ('cline', 'new_rule', 'write'),
    ('cline', 'use_subagents', 'task'),
    ('cline', 'run_commands', 'bash'),
    ('cline', 'read_files', 'read'),
    ('cline', 'search_codebase', 'grep'),
    ('cline', 'fetch_web_content', 'web_fetch'),
    ('cline', 'editor', 'edit'),
    ('cline', 'ask_question', 'ask_user'),
    ('cline', 'submit_and_exit', 'finish'),
    ('cline', 'team_spawn_teammate', 'task'),
    ('roo-code', 'read_command_output', 'bash_io'),
    ('roo-code', 'apply_diff', 'edit'),
    ('roo-code', 'edit', 'edit'),
    ('roo-code', 'search_and_replace', 'edit'),
    ('roo-code', 'search_replace', 'edit'),
    ('roo-code', 'insert_content', 'edit'),
    ('roo-code', 'search_files', 'grep'),
    ('roo-code', 'list_files', 'list'),
    ('roo-code', 'list_code_definition_names', 'list'),
    ('roo-code', 'codebase_search', 'grep'),
    ('roo-code', 'new_task', 'task'),
    ('roo-code', 'update_todo_list', 'todo'),
    ('roo-code', 'switch_mode', 'plan_mode'),
    ('openhands', 'terminal', 'bash'),
    ('openhands', 'file_editor', 'edit'),
    ('openhands', 'planning_file_editor', 'edit'),
    ('openhands', 'list_directory', 'list'),
    ('openhands', 'delegate', 'task'),
    ('openhands', 'browser_navigate', 'browser'),
    ('openhands', 'browser_click', 'browser'),
    ('openhands', 'browser_type', 'browser'),
    ('openhands', 'browser_get_state', 'browser'),
    ('openhands', 'browser_get_content', 'browser'),
    ('openhands', 'browser_scroll', 'browser'),
    ('openhands', 'browser_go_back', 'browser'),
    ('openhands', 'browser_list_tabs', 'browser'),
    ('openhands', 'browser_switch_tab', 'browser'),
    ('openhands', 'browser_close_tab', 'browser'),
]


def _aliases() -> sa.TableClause:
    return sa.table("tool_aliases", sa.column("agent"), sa.column("raw_name"),
                    sa.column("current_name"), sa.column("created_at"))


def upgrade() -> None:
    aliases = _aliases()
    conn = op.get_bind()
    present = {(a, r) for a, r in conn.execute(sa.select(aliases.c.agent, aliases.c.raw_name))}
    now = sa.func.current_timestamp()
    for agent, raw, current in _VOCABULARY:
        if (agent or "", raw) not in present:
            conn.execute(aliases.insert().values(agent=agent or "", raw_name=raw,
                                                 current_name=current, created_at=now))


def downgrade() -> None:
    """Nothing to undo: the rows fit revision 0011's table, and a downgrade keeps every row
    (a user may have edited them since); upgrading again leaves present rows as they are."""
