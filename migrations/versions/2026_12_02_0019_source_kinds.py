"""source kinds: source_files.kinds_json, what each record kind of a file became

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02

Issue 33, "say what was not read": each source file's bookkeeping keeps the per-kind
account of its reads (``store.importers.account``): ``{kind: {outcome: count}}``, outcomes
``stored``, ``merged``, ``read``, ``skipped``, ``not understood``, ``held back``. A file read
again whole replaces it; a file that grew adds the new lines' counts. NULL for files read
before this revision (nothing is invented for them: the next read of a changed file fills it).

The downgrade drops the column (the account is derived from the files; the files' rows and
read states stay).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # In place (ALTER TABLE ... ADD COLUMN on both backends; a reference table on Citus).
    op.add_column("source_files", sa.Column("kinds_json", sa.Text(), nullable=True))


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35, 0):
        op.execute("ALTER TABLE source_files DROP COLUMN kinds_json")
    elif dialect == "sqlite":
        with op.batch_alter_table("source_files") as batch:
            batch.drop_column("kinds_json")
    else:
        op.drop_column("source_files", "kinds_json")
