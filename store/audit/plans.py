"""Query plans of the audit queries, and search-index upkeep (persistence layer).

:func:`explain_usage` and :func:`explain_search` return the database's plan for the usage
summary and a call search (tests assert that the intended index is used);
:func:`refill_search_index` rebuilds the search index from the tables.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Connection,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.base import Executable
from sqlalchemy.sql.elements import ClauseElement

from store.core.arguments import ARGUMENT_STATUSES
from store.core.errors import DatabaseError
from store.db.index.search_index import rebuild_statements
from store.db.schema.distribute import citus_version

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

from store.audit.search import CallQuery, catch_up, search_statement
from store.audit.sql import connect
from store.audit.usage import no_jit, seen_statement, usage_statement, usage_statements
from store.db.base import alias_table, driver_reason, reads_once

__all__ = ["explain_search", "explain_usage", "refill_search_index"]

#: Status filters of :class:`CallQuery`: the argument statuses, ``invalid`` (any status but
#: ``ok`` and ``empty``), ``error`` (a linked result is an error) and ``no_result``.
CALL_STATUSES: tuple[str, ...] = (*ARGUMENT_STATUSES, "invalid", "error", "no_result")
_VALID = ("ok", "empty")
_CHUNK = 250  # calls per follow-up query for their results (3 bound values each)


# -- values -----------------------------------------------------------------------------------



# -- query plans ------------------------------------------------------------------------------


@reads_once
def explain_usage(
    store: TranscriptStore,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    session_id: str | None = None,
    enable_seqscan: bool = True,
) -> str:
    """The database's plans of :func:`tool_usage`'s statements (``EXPLAIN QUERY PLAN`` on
    SQLite, ``EXPLAIN`` on PostgreSQL), each under a ``-- what`` line. Over the whole store:
    counts, errors, calls without a result, first and last seen.
    ``enable_seqscan=False`` (PostgreSQL) shows the plans the indexes give where a tiny table
    would make a sequential scan cheaper."""
    if since is not None or until is not None or session_id is not None:
        statements = [("usage (one grouped join)", usage_statement(since, until, session_id))]
    else:
        counts, errors, unanswered = usage_statements(store.dialect)
        statements = [("counts", counts), ("errors", errors), ("without result", unanswered),
                      ("first and last seen", seen_statement())]
    with connect(store) as conn:
        return "\n".join(f"-- {label}\n{_explain(conn, statement, enable_seqscan)}"
                         for label, statement in statements)




@reads_once
def explain_search(
    store: TranscriptStore, query: CallQuery | None = None, *, limit: int = 50,
    enable_seqscan: bool = True,
) -> str:
    """The database's plan of :func:`search_calls`'s query (see :func:`explain_usage`), the
    search index caught up first as a search would."""
    query = query or CallQuery()
    catch_up(store, query)
    with connect(store) as conn:
        statement = search_statement(conn, alias_table(conn), query)
        if statement is None:
            return "no call can match (the tool has no raw name)"
        return _explain(conn, statement.limit(limit), enable_seqscan)


class _Explain(Executable, ClauseElement):
    """``EXPLAIN`` of a statement, compiled (with its bound values) like the statement."""

    inherit_cache = False

    def __init__(self, statement: Any) -> None:
        self.statement = statement


@compiles(_Explain)
def _compile_explain(element: _Explain, compiler: Any, **kw: Any) -> str:
    prefix = "EXPLAIN QUERY PLAN " if compiler.dialect.name == "sqlite" else "EXPLAIN "
    return prefix + str(compiler.process(element.statement, **kw))


#: A shard's table or index name on Citus (``tool_calls_102008``, ``ix_tool_calls_usage_102008``):
#: plans show them as their table's and index's names, the same as on one server.
_SHARD_SUFFIX = re.compile(
    r"\b((?:ix|ux|pk)_[a-z_]+?|sessions|messages|tool_calls|tool_results|tool_definitions|"
    r"tool_aliases|call_views)_\d{4,}\b")


def _explain(conn: Connection, statement: Any, enable_seqscan: bool) -> str:
    try:
        if conn.dialect.name == "postgresql":
            citus = citus_version(conn) is not None
            if citus:  # the settings below reach the workers' plans too; every shard's plan
                conn.exec_driver_sql("SET LOCAL citus.propagate_set_commands = 'local'")
                conn.exec_driver_sql("SET LOCAL citus.explain_all_tasks = on")
            no_jit(conn)  # as the queries run
            if not enable_seqscan:
                conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
            plan = "\n".join(str(row[0]) for row in conn.execute(_Explain(statement)))
            return _SHARD_SUFFIX.sub(r"\1", plan) if citus else plan
        rows = conn.execute(_Explain(statement)).all()
    finally:
        conn.rollback()  # ends the transaction, and with it SET LOCAL
    depth: dict[int, int] = {0: -1}
    lines = []
    for node, parent, _, detail in rows:
        depth[node] = depth.get(parent, -1) + 1
        lines.append("  " * depth[node] + str(detail))
    return "\n".join(lines)


# -- maintenance ------------------------------------------------------------------------------


def refill_search_index(store: TranscriptStore, *, workers: int | None = 1) -> bool:
    """Forget the search indexes (calls and messages) and build them again from the tables
    (to repair them, or to drop the unreachable full-text rows that deleted sessions leave on
    SQLite, or the rows ``verify`` found edited: search items, full-text entries, argument
    views and secret digests, all derived from the transcript). Returns whether there was a
    full-text index to rebuild (the views and digests are rebuilt either way). ``workers``:
    as for ``TranscriptStore.update_search_index``."""
    from sqlalchemy.exc import SQLAlchemyError

    from store.db.index.message_index import rebuild_message_index
    from store.db.index.search_index import has_search_index
    from store.db.index.summaries import forget_summaries

    engine = store.engine
    try:
        with engine.execution_options(sqlite_begin="IMMEDIATE").begin() as conn:
            indexed = has_search_index(conn)
            for statement in rebuild_statements(engine.dialect.name, indexed=indexed):
                conn.exec_driver_sql(statement)
            rebuild_message_index(conn)  # and the message index (store/db/index/message_index.py)
            forget_summaries(conn)  # and the summaries (store/db/index/summaries.py)
    except SQLAlchemyError as exc:
        raise DatabaseError(f"{store.url}: {driver_reason(exc)}") from exc
    store.update_search_index(workers=workers)
    return indexed
