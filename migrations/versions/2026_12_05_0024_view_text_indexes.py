"""SQLite: an index of each argument view's texts (partial, one per view)

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-05

Issue 39, item 3 ("every command instant"). ``calls search --command 'git push'`` (and
``--path``, ``--pattern``, ``--url``) keeps the rows of ``call_views`` of one view whose text
holds the value. On SQLite that read the whole table, every view's rows, to keep one
view's: 522,620 rows to find 840 at 10^6 messages, 55-70 ms. ``ix_call_views_<view>``
holds one view's texts (``WHERE view = '<view>'``): a search reads those only (~18 ms), and
the table's own rows for the matches. They cost 0.6 % of such a database (23 MB of 3.5 GB:
the texts again, without the keys).

PostgreSQL is unchanged. The downgrade drops them.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose (a revision must not change when the library does): the views of
# store.tools.vocabulary.VIEW_NAMES at this revision.
_VIEWS = ("command", "path", "pattern", "url")


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for view in _VIEWS:
        op.execute(f"CREATE INDEX IF NOT EXISTS ix_call_views_{view} ON call_views (text) "
                   f"WHERE view = '{view}'")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for view in _VIEWS:
        op.execute(f"DROP INDEX IF EXISTS ix_call_views_{view}")
