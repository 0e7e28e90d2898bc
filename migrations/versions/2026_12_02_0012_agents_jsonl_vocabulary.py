"""seed the tool names of Qwen Code, Kimi CLI and GitHub Copilot CLI

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of the rows store.tools.vocabulary.VOCABULARY gained for these agents (a revision
# must not change with the library): (agent, raw name, canonical name), each scoped to the
# agent that records it (the session's ``agent``). Rows already present (user edits) are left
# as they are, as revision 0006 does.
_VOCABULARY: list[tuple[str, str, str]] = [
    ('qwen-code', 'edit', 'edit'),
    ('qwen-code', 'replace', 'edit'),
    ('qwen-code', 'glob', 'glob'),
    ('qwen-code', 'list_directory', 'list'),
    ('qwen-code', 'todo_write', 'todo'),
    ('qwen-code', 'task', 'task'),
    ('kimi-cli', 'Shell', 'bash'),
    ('kimi-cli', 'ReadFile', 'read'),
    ('kimi-cli', 'ReadMediaFile', 'read'),
    ('kimi-cli', 'WriteFile', 'write'),
    ('kimi-cli', 'StrReplaceFile', 'edit'),
    ('kimi-cli', 'FetchURL', 'web_fetch'),
    ('kimi-cli', 'SearchWeb', 'web_search'),
    ('kimi-cli', 'SetTodoList', 'todo'),
    ('kimi-cli', 'Think', 'think'),
    ('kimi-cli', 'TaskList', 'bash_io'),
    ('copilot-cli', 'powershell', 'bash'),
    ('copilot-cli', 'view', 'read'),
    ('copilot-cli', 'show_file', 'read'),
    ('copilot-cli', 'create', 'write'),
    ('copilot-cli', 'str_replace', 'edit'),
    ('copilot-cli', 'insert', 'edit'),
    ('copilot-cli', 'undo_edit', 'edit'),
    ('copilot-cli', 'read_bash', 'bash_io'),
    ('copilot-cli', 'write_bash', 'bash_io'),
    ('copilot-cli', 'stop_bash', 'bash_io'),
    ('copilot-cli', 'list_bash', 'bash_io'),
    ('copilot-cli', 'read_powershell', 'bash_io'),
    ('copilot-cli', 'write_powershell', 'bash_io'),
    ('copilot-cli', 'stop_powershell', 'bash_io'),
    ('copilot-cli', 'task_complete', 'finish'),
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
        if (agent, raw) not in present:
            conn.execute(aliases.insert().values(agent=agent, raw_name=raw,
                                                 current_name=current, created_at=now))


def downgrade() -> None:
    # Nothing to undo in the schema, and the rows stay: scoped aliases are valid at 0011 (since
    # 0006), they may have been edited or relied on since, and a downgrade loses no row (as
    # 0006's keeps its seed). Upgrading again finds them present and leaves them alone.
    pass
