"""What the command line's stdlib readers share (persistence; no SQLAlchemy): the stored
alias table, a call's action, the sessions of a scope, as SQLite reads them.

Its own module so that ``calls search`` (``store.audit.lite_search``) does not import the
tool usage's fold and summaries (``store.audit.lite_usage``) at start-up.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from store.core.arguments import loads_json
from store.db.reading.actions_sql import action_sql as _action_sql
from store.db.reading.pgread import is_pg
from store.db.schema.sqlitefile import cwd_pattern
from store.tools.names import AliasTable

__all__ = ["ALIASES_SQL", "action_sql", "lite_aliases", "scope_sql"]

#: ``store.db.writing.compiled.Statements.load_aliases`` on SQLite.
ALIASES_SQL = ("SELECT json_group_array(json_array(tool_aliases.agent, tool_aliases.raw_name, "
               "tool_aliases.current_name)) FROM tool_aliases")
#: The same on PostgreSQL (:mod:`store.db.reading.pgread`).
PG_ALIASES_SQL = ("SELECT json_agg(json_build_array(tool_aliases.agent, tool_aliases.raw_name, "
                  "tool_aliases.current_name))::text FROM tool_aliases")


def lite_aliases(conn: sqlite3.Connection | Any) -> AliasTable:
    """The stored alias table (as ``store.db.base.alias_table`` reads it), of an SQLite file
    or a PostgreSQL database on its driver alone."""
    text = conn.execute(PG_ALIASES_SQL if is_pg(conn)
                        else ALIASES_SQL).fetchone()[0]
    return AliasTable.from_rows(tuple(row) for row in loads_json(text or "[]"))


def action_sql() -> str:
    """``store.audit.sql.action_column`` on SQLite: a call's action (:mod:`store.tools.actions`)."""
    return _action_sql(False)


def scope_sql(agent: str | None, cwd: str | None) -> tuple[str, list[Any]]:
    """``store.db.sessions.sessions_where``: the ids of the sessions of ``agent`` in ``cwd``
    or below it, as a subquery."""
    terms: list[str] = []
    params: list[Any] = []
    if agent is not None:
        terms.append("sessions.agent = ?")
        params.append(agent)
    if cwd is not None:
        folder, below = cwd_pattern(cwd)
        terms.append("(sessions.cwd = ? OR sessions.cwd LIKE ? ESCAPE '\\')")
        params += [folder, below]
    return ("SELECT sessions.session_id FROM sessions"
            + (" WHERE " + " AND ".join(terms) if terms else "")), params
