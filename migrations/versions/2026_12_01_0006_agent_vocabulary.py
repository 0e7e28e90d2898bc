"""one tool vocabulary across agents: scoped aliases, session agents, argument views

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copy of store.tools.vocabulary.VOCABULARY (a revision must not change with the library):
# (agent or None, raw name, canonical name). Rows already present (user edits, Kward's seed)
# are left as they are.
_VOCABULARY: list[tuple[str | None, str, str]] = [
    (None, 'Bash', 'bash'),
    (None, 'BashOutput', 'bash_io'),
    (None, 'TaskOutput', 'bash_io'),
    (None, 'KillShell', 'bash_io'),
    (None, 'KillBash', 'bash_io'),
    (None, 'TaskStop', 'bash_io'),
    (None, 'Read', 'read'),
    (None, 'NotebookRead', 'read'),
    (None, 'Write', 'write'),
    (None, 'Edit', 'edit'),
    (None, 'MultiEdit', 'edit'),
    (None, 'Glob', 'glob'),
    (None, 'Grep', 'grep'),
    (None, 'LS', 'list'),
    (None, 'WebFetch', 'web_fetch'),
    (None, 'WebSearch', 'web_search'),
    (None, 'TodoWrite', 'todo'),
    (None, 'TaskCreate', 'todo'),
    (None, 'TaskGet', 'todo'),
    (None, 'TaskUpdate', 'todo'),
    (None, 'TaskList', 'todo'),
    (None, 'Agent', 'task'),
    (None, 'Task', 'task'),
    (None, 'NotebookEdit', 'notebook'),
    (None, 'ExitPlanMode', 'plan_mode'),
    (None, 'EnterPlanMode', 'plan_mode'),
    (None, 'AskUserQuestion', 'ask_user'),
    (None, 'run_shell_command', 'bash'),
    (None, 'read_file', 'read'),
    (None, 'edit_file', 'edit'),
    (None, 'write_file', 'write'),
    (None, 'shell', 'bash'),
    (None, 'shell_command', 'bash'),
    (None, 'exec_command', 'bash'),
    (None, 'local_shell', 'bash'),
    (None, 'container.exec', 'bash'),
    (None, 'write_stdin', 'bash_io'),
    (None, 'apply_patch', 'patch'),
    (None, 'update_plan', 'todo'),
    (None, 'grep_files', 'grep'),
    (None, 'list_dir', 'list'),
    (None, 'spawn_agent', 'task'),
    (None, 'read_many_files', 'read'),
    (None, 'grep_search', 'grep'),
    (None, 'search_file_content', 'grep'),
    (None, 'google_web_search', 'web_search'),
    (None, 'write_todos', 'todo'),
    (None, 'save_memory', 'memory'),
    (None, 'invoke_agent', 'task'),
    (None, 'enter_plan_mode', 'plan_mode'),
    (None, 'exit_plan_mode', 'plan_mode'),
    (None, 'web_fetch', 'web_fetch'),
    (None, 'execute_bash', 'bash'),
    (None, 'execute_powershell', 'bash'),
    (None, 'str_replace_editor', 'edit'),
    (None, 'execute_ipython_cell', 'python'),
    (None, 'task_tracker', 'todo'),
    (None, 'execute_command', 'bash'),
    (None, 'write_to_file', 'write'),
    (None, 'replace_in_file', 'edit'),
    (None, 'browser_action', 'browser'),
    (None, 'ask_followup_question', 'ask_user'),
    (None, 'attempt_completion', 'finish'),
    (None, 'plan_mode_respond', 'plan_mode'),
    (None, 'act_mode_respond', 'plan_mode'),
    (None, 'web_search_preview', 'web_search'),
    (None, 'code_interpreter', 'python'),
    (None, 'computer_use_preview', 'browser'),
    (None, 'list_directory', 'list_directory'),
    (None, 'code_search', 'code_search'),
    (None, 'web_search', 'web_search'),
    (None, 'read_skill', 'read_skill'),
    (None, 'ask_user_question', 'ask_user_question'),
    (None, 'summarize_file_structure', 'summarize_file_structure'),
    (None, 'retrieve_tool_output', 'retrieve_tool_output'),
    (None, 'fetch_content', 'fetch_content'),
    (None, 'fetch_raw', 'fetch_raw'),
    (None, 'context_for_task', 'context_for_task'),
    (None, 'context_budget_stats', 'context_budget_stats'),
    (None, 'git_commit', 'git_commit'),
    (None, 'open_editor', 'open_editor'),
    (None, 'typesafe_evaluate', 'typesafe_evaluate'),
    (None, 'web_research', 'web_research'),
    ('gemini-cli', 'list_directory', 'list'),
    ('gemini-cli', 'glob', 'glob'),
    ('gemini-cli', 'replace', 'edit'),
    ('gemini-cli', 'ask_user', 'ask_user'),
    ('gemini-cli', 'complete_task', 'finish'),
    ('codex', 'read_file', 'read'),
    ('codex', 'view_image', 'read'),
    ('codex', 'web_search', 'web_search'),
    ('openhands', 'fetch', 'web_fetch'),
    ('openhands', 'web_read', 'web_fetch'),
    ('openhands', 'browser', 'browser'),
    ('openhands', 'think', 'think'),
    ('openhands', 'finish', 'finish'),
    ('openhands', 'edit_file', 'edit'),
    ('cline', 'search_files', 'grep'),
    ('cline', 'list_files', 'list'),
    ('cline', 'list_code_definition_names', 'list'),
    ('cline', 'new_task', 'task'),
    ('cline', 'web_search', 'web_search'),
    ('agents-sdk', 'computer', 'browser'),
    ('agents-sdk', 'shell', 'bash'),
    ('agents-sdk', 'apply_patch', 'patch')
]

_VIEWS = ("command", "path", "pattern", "url")
# A downgrade keeps an alias scoped to an agent as the raw name "<agent>\u241f<raw>" (no tool
# name holds U+241F); the upgrade turns such rows back into scoped ones.
_SCOPE = "\u241f"
_BATCH = 2000


def _view_index(view: str) -> None:
    column = f"{view}_text"
    op.create_index(
        f"ix_tool_calls_{view}", "tool_calls", ["raw_name", column],
        sqlite_where=sa.text(f"{column} IS NOT NULL"),
        postgresql_where=sa.text(f"{column} IS NOT NULL"),
    )


def _backfill_views() -> None:
    """The argument views of the calls stored before this revision (derived data: the
    library's extractor computes them, as the writer does for new calls)."""
    from store.tools.vocabulary import argument_views

    conn = op.get_bind()
    calls = sa.table("tool_calls", sa.column("session_id"), sa.column("position"),
                     sa.column("call_index"), sa.column("raw_name"), sa.column("arguments"),
                     *(sa.column(f"{v}_text") for v in _VIEWS))
    update = (
        calls.update()
        .where(calls.c.session_id == sa.bindparam("k_sid"),
               calls.c.position == sa.bindparam("k_pos"),
               calls.c.call_index == sa.bindparam("k_idx"))
        .values({f"{v}_text": sa.bindparam(f"v_{v}") for v in _VIEWS})
    )
    rows = conn.execute(
        sa.select(calls.c.session_id, calls.c.position, calls.c.call_index, calls.c.raw_name,
                  sa.cast(calls.c.arguments, sa.Text))
        .where(calls.c.arguments.is_not(None))
    ).all()
    batch: list[dict[str, Any]] = []
    for sid, pos, idx, raw, arguments in rows:
        views = argument_views(raw, orjson.loads(arguments))
        if any(v is not None for v in views):
            batch.append({"k_sid": sid, "k_pos": pos, "k_idx": idx,
                          **{f"v_{v}": value for v, value in zip(_VIEWS, views, strict=True)}})
        if len(batch) >= _BATCH:
            conn.execute(update, batch)
            batch = []
    if batch:
        conn.execute(update, batch)


def upgrade() -> None:
    dialect = op.get_context().dialect.name
    # Aliases scoped by agent: ('', raw) is global, (agent, raw) holds for that agent's sessions.
    with op.batch_alter_table("tool_aliases", recreate="always" if dialect == "sqlite"
                              else "auto") as batch:
        batch.add_column(sa.Column("agent", sa.String(), nullable=False, server_default=""))
        batch.drop_constraint("pk_tool_aliases", type_="primary")
        batch.create_primary_key("pk_tool_aliases", ["agent", "raw_name"])
    aliases = sa.table("tool_aliases", sa.column("agent"), sa.column("raw_name"),
                       sa.column("current_name"), sa.column("created_at"))
    conn = op.get_bind()
    for raw, in conn.execute(sa.select(aliases.c.raw_name)
                             .where(aliases.c.raw_name.contains(_SCOPE))).all():
        agent, _, name = raw.partition(_SCOPE)
        conn.execute(aliases.update().where(aliases.c.raw_name == raw)
                     .values(agent=agent, raw_name=name))
    present = {(a, r) for a, r in conn.execute(sa.select(aliases.c.agent, aliases.c.raw_name))}
    now = sa.func.current_timestamp()
    for agent, raw, current in _VOCABULARY:
        if (agent or "", raw) not in present:
            conn.execute(aliases.insert().values(agent=agent or "", raw_name=raw,
                                                 current_name=current, created_at=now))
    # The agent that recorded a session (claude-code, codex, gemini-cli ...). Sessions imported
    # earlier carry it as their format tag.
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("agent", sa.String(), nullable=True))
    for agent in ("claude-code", "codex", "gemini-cli", "kward"):
        conn.execute(sa.text("UPDATE sessions SET agent = :agent WHERE agent IS NULL AND "
                             "tags_json LIKE :tag").bindparams(agent=agent, tag=f'%"{agent}"%'))
    # Canonical argument views. Plain ADD COLUMN (never a batch copy of tool_calls: that would
    # drop the SQLite full-text triggers of revision 0004).
    for view in _VIEWS:
        op.add_column("tool_calls", sa.Column(f"{view}_text", sa.Text(), nullable=True))
    _backfill_views()
    for view in _VIEWS:
        _view_index(view)


def downgrade() -> None:
    for view in reversed(_VIEWS):
        op.drop_index(f"ix_tool_calls_{view}", table_name="tool_calls")
    dialect = op.get_context().dialect.name
    for view in reversed(_VIEWS):
        if dialect == "sqlite":  # SQLite 3.35+ drops a column in place (no table copy)
            op.execute(f"ALTER TABLE tool_calls DROP COLUMN {view}_text")
        else:
            op.drop_column("tool_calls", f"{view}_text")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("agent")
    conn = op.get_bind()
    # Scoped aliases become rows "<agent>\u241f<raw>" (the upgrade restores them).
    conn.execute(sa.text("UPDATE tool_aliases SET raw_name = agent || :scope || raw_name "
                         "WHERE agent <> ''").bindparams(scope=_SCOPE))
    with op.batch_alter_table("tool_aliases", recreate="always" if dialect == "sqlite"
                              else "auto") as batch:
        batch.drop_constraint("pk_tool_aliases", type_="primary")
        batch.create_primary_key("pk_tool_aliases", ["raw_name"])
        batch.drop_column("agent")
