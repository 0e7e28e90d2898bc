"""SQLite: a message's metadata and extras may be stored packed (a zstd frame)

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-05

Issue 39, item 2 ("a database no bigger than the files"). From this revision on, the writer
stores ``messages.metadata_json`` and ``messages.extras_json`` on SQLite as a BLOB (a version
byte, then a zstd frame compressed with a fixed dictionary of the formats' keys) when that is
shorter than the text (``store/db/packing.py``): 57 MB of a 357 MB database at 10^5
messages became 24 MB. Every reader of this release unpacks them; a release before it would
read a BLOB where it expects JSON text, so the revision marks the database as one it cannot
open.

The upgrade changes no row (rows written before stay text; both read the same). The
downgrade turns every packed value back into its text, so that the release before reads
them.

PostgreSQL is unchanged (its columns stay text).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("metadata_json", "extras_json")


def upgrade() -> None:
    pass


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    # Dictionary 1 of store.db.packing never changes (a new one gets a new version byte).
    from store.db.packing import unpacked

    for column in _COLUMNS:
        last = -1
        while True:  # a chunk at a time, in rowid order (memory stays bounded)
            rows = bind.execute(sa.text(
                f"SELECT rowid, {column} FROM messages WHERE typeof({column}) = 'blob' "
                "AND rowid > :last ORDER BY rowid LIMIT 2000"), {"last": last}).all()
            if not rows:
                break
            bind.execute(sa.text(f"UPDATE messages SET {column} = :text WHERE rowid = :id"),
                         [{"id": rowid, "text": unpacked(value)} for rowid, value in rows])
            last = rows[-1][0]
