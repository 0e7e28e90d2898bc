"""``tools usage`` of an SQLite file on the stdlib driver, for the command line's start-up
(persistence; no SQLAlchemy).

:func:`lite_tool_usage` answers :func:`store.audit.usage.tool_usage` with ``sqlite3`` and
the statements SQLAlchemy compiles for it on SQLite, written out (``usage_statements``,
``seen_statement``, ``usage_statement``; a test compares the answers of both on many filter
combinations), folded by the same code (:mod:`store.audit.usage_fold`). On a PostgreSQL
database (psycopg alone: :mod:`store.db.reading.pgread`) it answers from the per-session
summaries only (the whole store, an agent's or a folder's sessions, a time range), as the
store does; a session's usage, or a store mostly not summarized, is the store's. Only the
happy path: a plain SQLite file or a PostgreSQL database at this library's head revision
(``store.db.reading.lite.open_reader``); ``None`` for anything else (the caller opens the
store, which words every error).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from store.audit.lite_scope import ALIASES_SQL, action_sql, lite_aliases, scope_sql
from store.audit.usage_fold import SummarySource, ToolUsage, UsageSource, fold_usage
from store.core.times import as_utc
from store.db.reading.lite import Reader, read_lite
from store.db.reading.pgread import driver_of, is_pg
from store.db.reading.summary_reads import summary_tool_groups
from store.db.schema.sqlitefile import stored_time

__all__ = ["ALIASES_SQL", "action_sql", "lite_aliases", "lite_tool_usage", "scope_sql",
           "usage_on"]

_VALID = "tool_calls.arguments_status IN ('ok', 'empty')"
_LINKED = ("r.session_id = tool_calls.session_id AND r.call_position = tool_calls.position "
           "AND r.call_index = tool_calls.call_index")
#: ``store.audit.sql.message_side``: the covering index, unless a time range drives the query.
_LOOKUP = "messages AS m INDEXED BY ix_messages_time"


def _marks(count: int) -> str:
    return ", ".join("?" * count)


class _LiteSource:
    """The grouped rows of :func:`store.audit.usage_fold.fold_usage` on the stdlib driver:
    the SQL of ``store.audit.usage`` as SQLAlchemy compiles it for SQLite."""

    def __init__(self, conn: sqlite3.Connection, since: datetime | None,
                 until: datetime | None, session_id: str | None,
                 scope: tuple[str, list[Any]] | None) -> None:
        self.conn, self.session_id, self.scope = conn, session_id, scope
        self.since = None if since is None else stored_time(as_utc(since))
        self.until = None if until is None else stored_time(as_utc(until))
        self.timed = since is not None or until is not None
        self.whole_store = not self.timed and session_id is None and scope is None

    def raw_names(self) -> set[str]:
        return {str(raw) for (raw,) in self.conn.execute(
            "SELECT tool_calls.raw_name FROM tool_calls GROUP BY tool_calls.raw_name")}

    def whole(self, raws: Sequence[str]) -> dict[str, list[Any]]:
        stats: dict[str, list[Any]] = {}
        only = f"tool_calls.raw_name IN ({_marks(len(raws))})"
        names = list(raws)
        for raw, calls, session_count, invalid in self.conn.execute(
                "SELECT tool_calls.raw_name, count(*), count(DISTINCT tool_calls.session_id), "
                f"sum(CASE WHEN ({_VALID}) THEN 0 ELSE 1 END) "
                f"FROM tool_calls WHERE {only} GROUP BY tool_calls.raw_name", names):
            stats[raw] = [calls, session_count, invalid, 0, 0, None, None]
        for raw, count in self.conn.execute(
                "SELECT tool_calls.raw_name, count(*) FROM (SELECT DISTINCT r.session_id AS "
                "session_id, r.call_position AS call_position, r.call_index AS call_index "
                "FROM tool_results AS r WHERE r.is_error = 1) AS errors JOIN tool_calls ON "
                "tool_calls.session_id = errors.session_id AND tool_calls.position = "
                "errors.call_position AND tool_calls.call_index = errors.call_index "
                f"WHERE {only} GROUP BY tool_calls.raw_name", names):
            stats[raw][3] = count
        for raw, count in self.conn.execute(
                f"SELECT tool_calls.raw_name, count(*) FROM tool_calls WHERE {only} AND NOT "
                f"(EXISTS (SELECT 1 FROM tool_results AS r WHERE {_LINKED})) "
                "GROUP BY tool_calls.raw_name", names):
            stats[raw][4] = count
        for raw, first, last in self.conn.execute(
                "SELECT tool_calls.raw_name, min(m.created_at), max(m.created_at) "
                f"FROM tool_calls JOIN {_LOOKUP} ON m.session_id = tool_calls.session_id "
                f"AND m.position = tool_calls.position WHERE {only} "
                "GROUP BY tool_calls.raw_name", names):
            if raw in stats:
                stats[raw][5], stats[raw][6] = first, last
        return stats

    def _filters(self, m: str, with_message_session: bool = True) -> tuple[list[str], list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        if self.since is not None:
            where.append(f"{m}.created_at >= ?")
            params.append(self.since)
        if self.until is not None:
            where.append(f"{m}.created_at < ?")
            params.append(self.until)
        if self.session_id is not None:
            where.append("tool_calls.session_id = ?")
            params.append(self.session_id)
            if with_message_session:
                where.append(f"{m}.session_id = ?")
                params.append(self.session_id)
        if self.scope is not None:
            where.append(f"tool_calls.session_id IN ({self.scope[0]})")
            params += self.scope[1]
        return where, params

    def grouped(self, raws: Sequence[str] | None, actions: bool) -> Iterable[Sequence[Any]]:
        m = "messages" if self.timed else "m"
        joined = _LINKED + (" AND r.session_id = ?" if self.session_id is not None else "")
        one = [self.session_id] if self.session_id is not None else []
        keys = ["tool_calls.raw_name"]
        source = (f"tool_calls JOIN {'messages' if self.timed else _LOOKUP} ON "
                  f"{m}.session_id = tool_calls.session_id AND {m}.position = "
                  "tool_calls.position")
        where, params = self._filters(m)
        if raws is not None:
            where.append(f"tool_calls.raw_name IN ({_marks(len(raws))})")
            params += list(raws)
            source += " JOIN sessions ON sessions.session_id = tool_calls.session_id"
            keys = ["sessions.agent", "tool_calls.raw_name"] + ([action_sql()] if actions else [])
        sql = (f"SELECT {', '.join(keys)}, count(*), count(DISTINCT tool_calls.session_id), "
               f"sum(CASE WHEN ({_VALID}) THEN 0 ELSE 1 END), "
               f"sum(CASE WHEN (EXISTS (SELECT 1 FROM tool_results AS r WHERE {joined} "
               "AND r.is_error = 1)) THEN 1 ELSE 0 END), "
               f"sum(CASE WHEN (EXISTS (SELECT 1 FROM tool_results AS r WHERE {joined})) "
               f"THEN 0 ELSE 1 END), min({m}.created_at), max({m}.created_at) "
               f"FROM {source}" + (" WHERE " + " AND ".join(where) if where else "")
               + f" GROUP BY {', '.join(keys)}")
        return self.conn.execute(sql, [*one, *one, *params]).fetchall()

    def pairs(self, raws: Sequence[str], action: bool) -> Iterable[Sequence[Any]]:
        keys = ["tool_calls.raw_name", "tool_calls.session_id"] + ([action_sql()] if action
                                                                    else [])
        source = "tool_calls"
        if self.timed:
            source += (" JOIN messages ON messages.session_id = tool_calls.session_id AND "
                       "messages.position = tool_calls.position")
        where, params = self._filters("messages", with_message_session=False)
        where.insert(0, f"tool_calls.raw_name IN ({_marks(len(raws))})")
        return self.conn.execute(
            f"SELECT {', '.join(keys)} FROM {source} WHERE {' AND '.join(where)} "
            f"GROUP BY {', '.join(keys)}", [*raws, *params]).fetchall()

    def agents(self) -> dict[str, str | None]:
        return {str(sid): agent for sid, agent in self.conn.execute(
            "SELECT session_id, agent FROM sessions WHERE agent IS NOT NULL")}


def lite_tool_usage(url: str, *, since: datetime | None = None, until: datetime | None = None,
                    session: str | None = None, agent: str | None = None,
                    cwd: str | None = None) -> list[ToolUsage] | None:
    """Every tool's usage as :func:`store.audit.usage.tool_usage` (``limit=None``) gives it,
    most called first; ``session`` may be a unique prefix. ``None`` off the happy path: not a
    plain SQLite file or a PostgreSQL database at head, a session prefix that is not plain, a
    driver error, on PostgreSQL what the summaries do not answer (the caller asks the store,
    which answers or words the error)."""
    return read_lite(url, session, lambda conn, session_id: usage_on(
        conn, session_id, since=since, until=until, agent=agent, cwd=cwd))


def usage_on(conn: Reader, session_id: str | None, *, since: datetime | None,
             until: datetime | None, agent: str | None, cwd: str | None
             ) -> list[ToolUsage] | None:
    """:func:`lite_tool_usage` on an open stdlib reader's connection (in a snapshot), of one
    session (an id, resolved) or of the scope; ``None`` on PostgreSQL when the summaries do
    not answer."""
    pg = is_pg(conn)
    scope = scope_sql(agent, cwd) if agent or cwd else None
    summed = None
    if session_id is None:
        # (the per-session summaries: store/db/index/summaries.py)
        summed = summary_tool_groups(driver_of(conn),
                                     agent=agent, cwd=cwd, since=since, until=until)
    if summed is None and pg:
        return None  # (the grouped statements below are SQLite's: the store answers)
    source: UsageSource = (_LiteSource(conn, since, until, session_id, scope)
                           if summed is None else SummarySource(summed))
    out = fold_usage(source, lite_aliases(conn))
    out.sort(key=lambda u: (-u.calls, u.name))
    return out
