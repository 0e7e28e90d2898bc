"""lineage: sessions.parent_session_id, lineage, parent_call_id

Revision ID: 0015
Revises: 0011
Create Date: 2026-12-02

Issue 26, part 2 (``store.core.lineage``): a session's parent made first-class, so that
listings (``sessions list --parent``), trees (``sessions show``) and audits
(``--with-children``) follow it with an index instead of reading every session's metadata.

* ``sessions.parent_session_id``: the session it descends from. Not a foreign key: a
  subagent's file may be imported before its parent's, and a parent may be deleted while
  its children stay (their link then names a session that is gone, as their metadata did).
  On Citus the sessions table is distributed by ``session_id`` and its primary key still
  leads with it; this is a plain column with a plain index.
* ``sessions.lineage``: ``subagent``, ``fork`` or ``continuation``.
* ``sessions.parent_call_id``: the parent's call that spawned a subagent, when recorded.
* ``ix_sessions_parent``: a session's children.

The upgrade fills them for sessions stored before it, from what their metadata already held:
Claude Code subagents (``parent_session``, ``parent_call_id``), forks made by
``TranscriptStore.fork`` (``forked_from.session_id``), Codex threads spawned by another
(``source.subagent.thread_spawn.parent_thread_id``), and Gemini CLI subagents (``kind:
subagent``: their file lies in a folder named after the parent session). The rules are
written out here, frozen, rather than imported from the importers, which may change.

The downgrade drops the index and the columns (the metadata still holds what they held).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 2000


_COLUMNS = ("parent_session_id", "lineage", "parent_call_id")


def upgrade() -> None:
    # In place (ALTER TABLE ... ADD COLUMN on both backends): a copy-and-move of ``sessions``
    # would drop the table every other one references, which with SQLite's foreign keys on
    # deletes their rows.
    for column in _COLUMNS:
        op.add_column("sessions", sa.Column(column, sa.String(), nullable=True))
    op.create_index("ix_sessions_parent", "sessions", ["parent_session_id"])
    _fill_from_metadata()


def _link(metadata: Any, paths: list[str]) -> tuple[str, str, str | None] | None:
    """``(parent, kind, parent call)`` from what a session's metadata recorded, else None."""
    if not isinstance(metadata, Mapping):
        return None
    parent = metadata.get("parent_session")
    if isinstance(parent, str) and parent:  # Claude Code subagents and 1.x sidechains
        call = metadata.get("parent_call_id")
        return parent, "subagent", call if isinstance(call, str) else None
    source = metadata.get("source")
    if isinstance(source, Mapping):  # Codex: {"subagent": {"thread_spawn": {...}}}
        spawned = source.get("subagent")
        spawn = spawned.get("thread_spawn") if isinstance(spawned, Mapping) else None
        if isinstance(spawn, Mapping) and isinstance(spawn.get("parent_thread_id"), str):
            return spawn["parent_thread_id"], "subagent", None
    forked = metadata.get("forked_from")
    if isinstance(forked, Mapping) and isinstance(forked.get("session_id"), str):
        return forked["session_id"], "fork", None
    if metadata.get("kind") == "subagent":  # Gemini CLI: chats/<parent id>/<id>.jsonl
        for path in paths:
            folder = PurePath(path).parent.name
            if folder and folder != "chats":
                return folder, "subagent", None
    return None


def _fill_from_metadata() -> None:
    conn = op.get_bind()
    sessions = sa.table("sessions", sa.column("session_id"), sa.column("metadata_json"),
                        sa.column("parent_session_id"), sa.column("lineage"),
                        sa.column("parent_call_id"))
    sources = sa.table("session_sources", sa.column("session_id"), sa.column("path"))
    meta = sessions.c.metadata_json
    candidates = conn.execute(
        sa.select(sessions.c.session_id, meta).where(sa.or_(
            meta.like("%parent_session%"), meta.like("%forked_from%"),
            meta.like("%subagent%")))
        .order_by(sessions.c.session_id)).all()
    update = sessions.update().where(sessions.c.session_id == sa.bindparam("k_sid")).values(
        parent_session_id=sa.bindparam("v_parent"), lineage=sa.bindparam("v_kind"),
        parent_call_id=sa.bindparam("v_call"))
    batch: list[dict[str, Any]] = []
    for sid, text in candidates:
        try:
            metadata = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        paths: list[str] = []
        if isinstance(metadata, Mapping) and metadata.get("kind") == "subagent":
            paths = list(conn.execute(sa.select(sources.c.path)
                                      .where(sources.c.session_id == sid)).scalars())
        found = _link(metadata, paths)
        if found is None or found[0] == sid:
            continue
        batch.append({"k_sid": sid, "v_parent": found[0], "v_kind": found[1],
                      "v_call": found[2]})
        if len(batch) >= _BATCH:
            conn.execute(update, batch)
            batch = []
    if batch:
        conn.execute(update, batch)


def downgrade() -> None:
    op.drop_index("ix_sessions_parent", table_name="sessions")
    dialect = op.get_context().dialect.name
    for column in reversed(_COLUMNS):
        if dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35, 0):
            op.execute(f"ALTER TABLE sessions DROP COLUMN {column}")  # in place (see upgrade)
        elif dialect == "sqlite":
            with op.batch_alter_table("sessions") as batch:
                batch.drop_column(column)
        else:
            op.drop_column("sessions", column)
