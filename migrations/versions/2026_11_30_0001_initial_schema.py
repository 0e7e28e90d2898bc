"""initial schema: sessions, messages, tool calls, results, definitions, aliases

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose: a revision must not change when the library's defaults do.
# Kward's TOOL_NAME_MAP (inherited-behaviour §3), seeded as the default alias table.
DEFAULT_ALIASES = {
    "read_file": "read",
    "edit_file": "edit",
    "write_file": "write",
    "run_shell_command": "bash",
    **{
        name: name
        for name in (
            "list_directory", "code_search", "web_search", "read_skill", "ask_user_question",
            "summarize_file_structure", "retrieve_tool_output", "fetch_content", "fetch_raw",
            "context_for_task", "context_budget_stats", "git_commit", "open_editor",
            "typesafe_evaluate", "web_research",
        )
    },
}


def _json() -> sa.types.TypeEngine[object]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    # Sessions: metadata, plus the next message position, allocated under the row's lock so
    # concurrent appends get consecutive positions. Every key below leads with session_id
    # (Citus distribution column).
    op.create_table(
        "sessions",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("provider", sa.String(), nullable=True),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("cwd", sa.Text(), nullable=True),
        sa.Column("tags_json", sa.Text(), nullable=False),
        sa.Column("metadata_json", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_position", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("session_id", name=op.f("pk_sessions")),
    )
    # Messages: positional key; message_key is the idempotency key of appends (NULLs distinct,
    # so keyless messages may repeat).
    op.create_table(
        "messages",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("message_key", sa.String(), nullable=True),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("parts_json", sa.Text(), nullable=False),
        sa.Column("extras_json", sa.Text(), nullable=True),
        sa.Column("metadata_json", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["sessions.session_id"],
            name=op.f("fk_messages_session_id_sessions"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("session_id", "position", name=op.f("pk_messages")),
    )
    op.create_index(
        "ux_messages_session_key", "messages", ["session_id", "message_key"], unique=True
    )
    # Tool calls: one row per call, keyed by position (provider ids repeat: Mantle's call_0).
    # wire_json is the exact canonical record; arguments the queryable copy (NULL if invalid).
    op.create_table(
        "tool_calls",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("call_index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("call_id", sa.String(), nullable=False),
        sa.Column("id_minted", sa.Boolean(), nullable=False),
        sa.Column("raw_name", sa.String(), nullable=False),
        sa.Column("wire_json", sa.Text(), nullable=False),
        sa.Column("arguments_status", sa.String(), nullable=False),
        sa.Column("arguments_error", sa.Text(), nullable=True),
        sa.Column("arguments", _json(), nullable=True),
        sa.Column("extras_json", sa.Text(), nullable=True),
        sa.Column("source", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id", "position"], ["messages.session_id", "messages.position"],
            name=op.f("fk_tool_calls_session_id_messages"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("session_id", "position", "call_index", name=op.f("pk_tool_calls")),
    )
    # Pairing results with calls by id within a session, and audits by tool name.
    op.create_index("ix_tool_calls_session_call_id", "tool_calls", ["session_id", "call_id"])
    op.create_index("ix_tool_calls_raw_name", "tool_calls", ["raw_name"])
    # Tool results: the recorded reference (call_id) and the resolved link (position, index).
    op.create_table(
        "tool_results",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("result_index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("call_id", sa.String(), nullable=True),
        sa.Column("call_position", sa.Integer(), nullable=True),
        sa.Column("call_index", sa.Integer(), nullable=True),
        sa.Column("is_error", sa.Boolean(), nullable=False),
        sa.Column("name", sa.String(), nullable=True),
        sa.Column("content_json", sa.Text(), nullable=False),
        sa.Column("extras_json", sa.Text(), nullable=True),
        sa.Column("source", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id", "position"], ["messages.session_id", "messages.position"],
            name=op.f("fk_tool_results_session_id_messages"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "session_id", "position", "result_index", name=op.f("pk_tool_results")
        ),
    )
    op.create_index(
        "ix_tool_results_call", "tool_results", ["session_id", "call_position", "call_index"]
    )
    # Tool definitions recorded with a session, for schema audits.
    op.create_table(
        "tool_definitions",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("parameters_json", sa.Text(), nullable=False),
        sa.Column("definition_json", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["sessions.session_id"],
            name=op.f("fk_tool_definitions_session_id_sessions"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("session_id", "name", name=op.f("pk_tool_definitions")),
    )
    # Aliases are data (global, a Citus reference table), seeded with Kward's map.
    aliases = op.create_table(
        "tool_aliases",
        sa.Column("raw_name", sa.String(), nullable=False),
        sa.Column("current_name", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("raw_name", name=op.f("pk_tool_aliases")),
    )
    seeded_at = dt.datetime.now(dt.UTC)
    op.bulk_insert(
        aliases,
        [
            {"raw_name": raw, "current_name": cur, "created_at": seeded_at}
            for raw, cur in DEFAULT_ALIASES.items()
        ],
    )


def downgrade() -> None:
    for table in ("tool_aliases", "tool_definitions", "tool_results", "tool_calls",
                  "messages", "sessions"):
        op.drop_table(table)
