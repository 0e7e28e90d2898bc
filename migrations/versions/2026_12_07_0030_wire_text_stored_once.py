"""a call's wire text is stored once on SQLite: '' where the row's own columns rebuild it

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-07

Issue 39, item 2 ("a database no bigger than the files": "the wire text, the queryable copy
and the index text of the same argument need not all be full copies"). ``tool_calls.wire_json``
held ``{"id":...,"type":"function","function":{"name":...,"arguments":"<text>"}}`` in full,
while the row's ``call_id``, ``raw_name`` and ``arguments`` (the queryable copy) already hold
each of its parts: at 10^6 messages every one of 512,462 calls, 172.7 MB of a 3,215 MB file.
From this revision SQLite's writer stores ``''`` where SQLite's ``json_object`` rebuilds the
given text byte for byte from those columns (the comparison is made in the INSERT by the
function every reader rebuilds it with: ``store/db/schema/wiretext.py``); a text that does not
rebuild (a minted id, a provider's spacing in the argument text, an argument text that is not
an object), or whose rebuild another SQLite release might escape otherwise (an id or name past
printable ASCII, a DEL, U+2028 or U+2029 in the argument text), stays whole.

No table changes: the revision marks that a row's ``wire_json`` may be ``''`` (a release
before it would read such a row wrongly, and refuses a database past its head). The rows
written before stay whole; ``db compact`` stores them once. The downgrade writes every elided
text back in full (the same rebuild). PostgreSQL: nothing (it stores the text).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen here on purpose (a revision must not change when the library does).
_REBUILT = ("json_object('id', call_id, 'type', 'function', 'function', "
            "json_object('name', raw_name, 'arguments', arguments))")


def upgrade() -> None:
    pass  # (the writer elides from now on; see the docstring)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(f"UPDATE tool_calls SET wire_json = {_REBUILT} WHERE wire_json = ''")
