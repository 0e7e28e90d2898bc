"""Saved findings (``findings``, revision 0009): written by ``rules check --save``, read by
``rules findings`` and the viewer (persistence)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import Connection, and_, delete, insert, select, tuple_

from store.core.arguments import loads_json
from store.core.errors import UsageError
from store.core.times import as_utc
from store.db.base import _now
from store.db.schema.tables import findings, messages
from store.rules.findings import Finding

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["load_findings", "save_findings"]

_BATCH = 500


def save_findings(opened: TranscriptStore, found: Sequence[Finding]) -> int:
    """Store ``found`` (a finding saved again replaces the row of its call and rule); returns
    how many rows were written. One transaction, retried on lock conflicts."""
    if opened.read_only:
        raise UsageError("the store is open read-only: saving findings needs write access")
    now = _now()
    rows = [{
        "session_id": f.session_id, "position": f.position, "call_index": f.call_index,
        "rule_id": f.rule_id, "call_id": f.call_id, "title": f.title, "level": f.level,
        "tags_json": orjson.dumps(list(f.tags)).decode(), "agent": f.agent, "tool": f.tool,
        "raw_tool": f.raw_tool, "field": f.field, "matched": f.matched, "found_at": now,
    } for f in found]

    def work(conn: Connection) -> int:
        t = findings
        for start in range(0, len(rows), _BATCH):
            batch = rows[start:start + _BATCH]
            keys = [(r["session_id"], r["position"], r["call_index"], r["rule_id"])
                    for r in batch]
            conn.execute(delete(t).where(
                tuple_(t.c.session_id, t.c.position, t.c.call_index, t.c.rule_id).in_(keys)))
            conn.execute(insert(t), batch)
        return len(rows)

    return opened._retrying(work)


def load_findings(opened: TranscriptStore, *, session_id: str | None = None,
                  position: int | None = None, min_level: Sequence[str] | None = None,
                  limit: int | None = None, offset: int = 0) -> list[Finding]:
    """Saved findings, most recent call first (``min_level``: the levels to keep)."""
    t, m = findings, messages
    query = (select(t, m.c.created_at)
             .join(m, and_(m.c.session_id == t.c.session_id, m.c.position == t.c.position))
             .order_by(m.c.created_at.desc(), t.c.session_id, t.c.position, t.c.call_index,
                       t.c.rule_id))
    if session_id is not None:
        query = query.where(t.c.session_id == session_id)
    if position is not None:
        query = query.where(t.c.position == position)
    if min_level:
        query = query.where(t.c.level.in_(list(min_level)))
    if limit is not None:
        query = query.limit(limit)
    if offset:
        query = query.offset(offset)
    with opened._read() as conn:
        return [_finding(row) for row in conn.execute(query).mappings()]


def _finding(row: Any) -> Finding:
    created: datetime | None = row["created_at"]
    if isinstance(created, str):
        created = datetime.fromisoformat(created)
    return Finding(
        rule_id=row["rule_id"], title=row["title"], level=row["level"],
        tags=tuple(loads_json(row["tags_json"])), session_id=row["session_id"],
        position=row["position"], call_index=row["call_index"], call_id=row["call_id"],
        agent=row["agent"], tool=row["tool"], raw_tool=row["raw_tool"], field=row["field"],
        matched=row["matched"], time=as_utc(created) if created is not None else None)
