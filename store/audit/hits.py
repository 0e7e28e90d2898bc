"""The keys of the calls a search finds through the derived rows, and what it scans exactly
instead (persistence; ``store.audit.search`` builds its statement from them).

The search text (``search_body`` of each call and result; SQLite ``search_fts``) and the
argument views (``call_views``) are derived from the transcript off the write path
(``store/db/index/search_index.py``); the chain does not cover them. Before a search relies on
them, :func:`trust_for` checks (``store.db.index.index_check.index_gaps``: a few probes of
the partial indexes of the rows without text) that every call and result below its
session's watermark has its text. A session that fails is scanned exactly, from its start,
like the part of a session the catch-up has not reached yet, its derived rows unused, and
the caller is warned (``calls search`` on stderr). What that cannot show (an edited text, a
view edited, added or removed, an edited SQLite FTS entry) ``verify``
recomputes; a search that must not depend on any derived row is ``exact``
(``CallQuery(exact=True)``, ``calls search --exact``): every call scanned.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.sql.elements import TextClause

from store.audit.conditions import ViewCondition
from store.audit.hits_sql import Trust, hits_sql, trust_for, view_condition_sql

__all__ = ["Trust", "prefilter_sql", "text_hits", "trust_for", "view_condition"]


def view_condition(conn: Connection, number: int, view: ViewCondition,
                   session_id: str | None, trust: Trust) -> TextClause:
    """The calls whose ``view`` meets the condition (``store.audit.hits_sql``)."""
    sql, params = view_condition_sql(conn, number, view, session_id, trust)
    return text(sql).bindparams(**params) if params and sql != "1 = 0" else text(sql)


def prefilter_sql(conn: Connection, needle: str, prefix: str, params: dict[str, Any],
                  trust: Trust, session_id: str | None = None) -> str:
    """``(call key) IN (the calls whose decoded text holds needle) AND `` (index + tail)."""
    sql, hit_params = hits_sql(conn, needle, results=False, prefix=prefix,
                                session_id=session_id, trust=trust)
    params.update(hit_params)
    if sql is None:
        return "1 = 0 AND "
    return ("(tool_calls.session_id, tool_calls.position, tool_calls.call_index) IN "
            f"({sql}) AND ")


def text_hits(conn: Connection, needle: str, *, results: bool, prefix: str, trust: Trust,
              session_id: str | None = None) -> Any:
    """Full text: the keys of the calls whose decoded argument text, or a linked result's,
    holds ``needle`` case-insensitively; ``None`` when nothing can match."""
    sql, params = hits_sql(conn, needle, results=results, prefix=prefix,
                            session_id=session_id, trust=trust)
    if sql is None:
        return None
    from sqlalchemy import Integer, String

    # Orphan results (no linked call: NULL position) drop out at the join with the calls.
    return text(sql).bindparams(**params).columns(
        session_id=String, position=Integer, call_index=Integer)


