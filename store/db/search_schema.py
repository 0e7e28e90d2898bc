"""The backend-specific SQL of the audit queries, and what Alembic must skip (persistence).

Revision 0004 creates four portable indexes (declared in ``store/db/tables.py``) and, per backend,
objects that ``store/db/tables.py`` cannot declare: on SQLite two FTS5 tables kept up to date by
triggers, on PostgreSQL three GIN indexes. Alembic must not compare those last ones with the
code (it would report them as drift): :func:`include_name` is the ``include_name`` hook that
``migrations/env.py`` gives Alembic.

Which index serves which query of ``store.audit.queries`` (the same on both backends unless two are
given; ``bench/audit.py`` prints the plans on a million calls, ``tests/integration/test_audit.py``
asserts them):

====================================  =================================================
query                                 index (SQLite / PostgreSQL)
====================================  =================================================
usage: calls, sessions, invalid       ``ix_tool_calls_usage`` scanned whole (covering:
                                      raw_name, session, position, index, status)
usage: calls with an error result     ``ix_tool_results_errors`` (partial: error results
                                      only), then the calls' primary key
usage: calls without a result         anti-join of ``ix_tool_calls_usage`` with
                                      ``ix_tool_results_call``
usage: first / last seen              ``ix_messages_created_at`` walked from either end,
                                      probing ``ix_tool_calls_usage``; for a tool not
                                      found near an end, its calls joined to
                                      ``ix_messages_time`` (covering)
usage with a time range / session     one grouped join: ``ix_messages_created_at`` /
                                      the primary key, ``ix_messages_time``
search: tool (alias-aware)            ``ix_tool_calls_usage`` (``raw_name IN (...)``;
                                      PostgreSQL may take ``ix_tool_calls_raw_name``)
search: time range                    ``ix_messages_created_at``
search: session                       the primary key of ``tool_calls``
search: a call's time                 ``ix_messages_time`` (covering; SQLite is told
                                      ``INDEXED BY`` it)
search: argument ``eq``               ``tool_calls_fts`` (a trigram phrase: the value
                                      JSON-encoded), then ``json_extract`` decides /
                                      ``ix_tool_calls_arguments_gin`` (``@>``,
                                      ``jsonb_path_ops``), then ``#>`` decides
search: argument ``contains``         ``tool_calls_fts`` (the needle JSON-escaped), then
                                      ``json_extract`` and ``instr`` decide /
                                      ``ix_tool_calls_text_trgm`` (``LIKE``), then
                                      ``#>>`` and ``strpos`` decide
search: full text                     ``tool_calls_fts`` + ``tool_results_fts`` (FTS5
                                      trigram ``MATCH``) / ``ix_tool_calls_text_trgm`` +
                                      ``ix_tool_results_text_trgm`` (pg_trgm ``ILIKE``);
                                      the matching keys then drive the join
search: status ``error``              ``ix_tool_results_errors``
search: status ``no_result``          ``ix_tool_results_call``
a match's first result                ``ix_tool_results_call``
====================================  =================================================

**The searchable text.** Of a call: the JSON text of its arguments (``tool_calls.arguments``:
orjson's text on SQLite, ``jsonb::text`` on PostgreSQL; both escape exactly ``"``, ``\\`` and
control characters), or, for invalid arguments (NULL there), the tail of ``wire_json`` from the
``"arguments":`` key on (the recorded text, JSON-escaped once). Of a result: ``content_json``.
Both are JSON text, so a needle is JSON-escaped before it is looked for (:func:`escaped`), and
a JSON string value at a path contains a needle exactly when the escaped value contains the
escaped needle: that is what makes the text indexes usable as a pre-filter for argument
conditions. Full-text search is a case-insensitive substring search on both backends (FTS5's
``trigram`` tokenizer; pg_trgm with ``ILIKE``) of at least :data:`MIN_TEXT` characters.

**SQLite caveats.** The FTS5 tables are contentless and keyed by the ``rowid`` of
``tool_calls`` / ``tool_results`` (kept by ``VACUUM``: both tables have indexes). A future
revision that rebuilds either table (a batch "move and copy") drops the triggers with it: it
must re-create them and refill the index (:func:`sqlite_refill_statements`). When the SQLite
library lacks FTS5 or the trigram tokenizer (before 3.34), revision 0004 skips the FTS5
objects and the searches fall back to scanning (same results, slower).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

__all__ = [
    "CALLS_FTS",
    "MIN_TEXT",
    "PG_ARGUMENTS_GIN",
    "PG_CALLS_TRGM",
    "PG_RESULTS_TRGM",
    "RESULTS_FTS",
    "SQL_ONLY_INDEXES",
    "call_text_sql",
    "escaped",
    "fts_phrase",
    "include_name",
    "like_pattern",
    "sqlite_refill_statements",
]

#: SQLite: FTS5 (trigram) over the searchable text of calls, and of results (revision 0004).
CALLS_FTS = "tool_calls_fts"
RESULTS_FTS = "tool_results_fts"
#: PostgreSQL: GIN over the arguments (jsonb_path_ops), pg_trgm over the searchable texts.
PG_ARGUMENTS_GIN = "ix_tool_calls_arguments_gin"
PG_CALLS_TRGM = "ix_tool_calls_text_trgm"
PG_RESULTS_TRGM = "ix_tool_results_text_trgm"
#: Indexes created by raw SQL in revision 0004, unknown to ``store/db/tables.py``.
SQL_ONLY_INDEXES = frozenset({PG_ARGUMENTS_GIN, PG_CALLS_TRGM, PG_RESULTS_TRGM})
#: The shortest full-text needle: trigram indexes need three characters.
MIN_TEXT = 3

# The searchable text of a call, per backend; ``{row}`` is the table or trigger row name. The
# PostgreSQL form must stay identical to the expression of ix_tool_calls_text_trgm (revision
# 0004), or the planner cannot use the index.
_CALL_TEXT = {
    "sqlite": "coalesce({row}.arguments, "
              "substr({row}.wire_json, instr({row}.wire_json, '\"arguments\":') + 12))",
    "postgresql": "coalesce(({row}.arguments)::text, "
                  "substr({row}.wire_json, strpos({row}.wire_json, '\"arguments\":') + 12))",
}


def call_text_sql(dialect: str, row: str = "tool_calls") -> str:
    """The SQL expression of a call's searchable text (see the module docstring)."""
    return _CALL_TEXT["postgresql" if dialect == "postgresql" else "sqlite"].format(row=row)


def include_name(name: str | None, type_: str, parent_names: Mapping[str, Any]) -> bool:
    """Alembic's ``include_name`` hook: leave the SQL-only objects of revision 0004 out of the
    comparison of the database with ``store/db/tables.py`` (FTS5 tables and their shadow tables,
    the GIN indexes). Everything else is compared as before."""
    if name is None:
        return True
    if type_ == "table":
        return not any(name == fts or name.startswith(fts + "_")
                       for fts in (CALLS_FTS, RESULTS_FTS))
    if type_ == "index":
        return name not in SQL_ONLY_INDEXES
    return True


def escaped(text: str) -> str:
    """``text`` as it appears inside a JSON string (orjson's escaping, which is PostgreSQL's)."""
    return orjson.dumps(text).decode()[1:-1]


def fts_phrase(text: str) -> str:
    """An FTS5 query matching ``text`` as a phrase: with the trigram tokenizer, a substring."""
    return '"' + text.replace('"', '""') + '"'


def like_pattern(text: str) -> str:
    """A LIKE pattern (escape character ``\\``) matching any text that contains ``text``."""
    quoted = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{quoted}%"


def sqlite_refill_statements() -> Iterable[str]:
    """Empty the SQLite full-text indexes and fill them again from the tables (after a table
    rebuild, or to repair them). Run them in one transaction."""
    call_text = call_text_sql("sqlite")
    yield f"INSERT INTO {CALLS_FTS}({CALLS_FTS}) VALUES ('delete-all')"
    yield f"INSERT INTO {RESULTS_FTS}({RESULTS_FTS}) VALUES ('delete-all')"
    yield f"INSERT INTO {CALLS_FTS}(rowid, body) SELECT rowid, {call_text} FROM tool_calls"
    yield (f"INSERT INTO {RESULTS_FTS}(rowid, body) "
           "SELECT rowid, content_json FROM tool_results")
