"""The backend-specific SQL of the audit queries, and what Alembic must skip (persistence).

Revision 0004 creates four portable indexes (declared in ``store/db/schema/tables.py``) and, on
PostgreSQL, the JSONB GIN over arguments; revision 0005 the search index of
``store/db/index/search_index.py`` (since revision 0023 the ``search_body`` of each call and
result, with SQLite's ``search_fts`` over the view ``search_items`` and PostgreSQL's trigram
GINs), which is caught up from a watermark off the write path and differs per backend.
Alembic must not compare those with the code (it would report them as drift):
:func:`include_name` is the ``include_name`` hook that ``migrations/env.py`` gives Alembic.

Which index serves which query of ``store.audit.search`` / ``usage`` (the same on both backends
unless two are given; ``bench/audit.py`` prints the plans, ``tests/integration/test_audit.py``
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
search: tool (alias-aware)            ``ix_tool_calls_usage`` (``raw_name IN (...)``)
search: time range                    ``ix_messages_created_at``
search: session                       the primary key of ``tool_calls``
search: a call's time                 ``ix_messages_time`` (covering; SQLite is told
                                      ``INDEXED BY`` it)
search: argument ``eq``               a string value: ``search_fts`` / ``search_body``
                                      (its decoded text holds the value), then
                                      ``json_extract`` decides; PostgreSQL:
                                      ``ix_tool_calls_arguments_gin`` (``@>``,
                                      ``jsonb_path_ops``), then ``#>`` decides
search: argument ``contains``         ``search_fts`` (trigrams) / the pg_trgm GIN
                                      of ``search_body`` (``LIKE``, folded), then
                                      ``json_extract``/``#>>`` and ``instr``/``strpos``
                                      decide
search: full text                     ``search_fts`` (FTS5 trigram ``MATCH``, then
                                      ``instr`` on the body) /
                                      ``ix_tool_calls_search_trgm`` (``LIKE``) over the folded
                                      decoded text of calls and results, plus an exact
                                      scan of what is not indexed yet; the matching keys
                                      then drive the join
search: argument views (``--command``  ``call_views`` (revision 0007, filled by the
``--path --pattern --url``)           catch-up) scanned for the view, keys matched to the
                                      calls; plus the views of the calls not caught up yet,
                                      computed and matched by the same SQL condition
search: status ``error``              ``ix_tool_results_errors``
search: status ``no_result``          ``ix_tool_results_call``
a match's first result                ``ix_tool_results_call``
====================================  =================================================

**The searchable text** is decoded (``store.records.searchtext``): keys, strings (their characters,
never their JSON escapes), numbers and literals of the arguments, one per line, or the recorded
text of invalid arguments; of a result, its content decoded the same way. Full-text search is
a case-insensitive substring search of at least :data:`MIN_TEXT` characters. A JSON string value
at a path contains a needle only if the decoded text does: that is what makes the index a
pre-filter for argument conditions.

**SQLite caveat.** When the SQLite library lacks FTS5 or the trigram tokenizer (before 3.34),
revision 0023 skips ``search_fts`` (the text is kept all the same) and searches scan every row
exactly
(same results, slower).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

__all__ = [
    "MIN_TEXT",
    "PG_ARGUMENTS_GIN",
    "SEARCH_TABLES",
    "SQL_ONLY_INDEXES",
    "escaped",
    "fts_rows_sql",
    "fts_trigrams",
    "include_name",
    "like_pattern",
    "unindexed_sql",
]

#: PostgreSQL: GIN over the arguments (jsonb_path_ops; revision 0004).
PG_ARGUMENTS_GIN = "ix_tool_calls_arguments_gin"
#: The search index of revision 0005 (``store/db/index/search_index.py``), per backend, and the
#: FTS5 tables of revision 0004 (on a database being migrated).
#: And the message index of revision 0017 (``store/db/index/message_index.py``).
SEARCH_TABLES = ("search_items", "search_fts", "tool_calls_fts", "tool_results_fts",
                 "message_search", "message_fts")
#: Indexes created by raw SQL, unknown to ``store/db/schema/tables.py``.
SQL_ONLY_INDEXES = frozenset({PG_ARGUMENTS_GIN, "ix_tool_calls_text_trgm",
                              "ix_tool_results_text_trgm", "ix_search_items_body_trgm",
                              "ux_search_items_key", "ix_message_search_tsv",
                              "ux_message_search_key", "ux_tool_calls_search_id",
                              "ux_tool_results_search_id", "ix_tool_calls_search_trgm",
                              "ix_tool_results_search_trgm", "ix_call_views_command",
                              "ix_call_views_path", "ix_call_views_pattern",
                              "ix_call_views_url"})
#: The shortest full-text needle: trigram indexes need three characters.
MIN_TEXT = 3



def unindexed_sql(pg: bool, alias: str = "") -> str:
    """A call or result the search catch-up has not reached (revision 0023): no text, and on
    SQLite no entry in the full-text index either. The predicate of the partial indexes
    ``ix_tool_calls_unindexed`` / ``ix_tool_results_unindexed`` (``store/db/schema/tables.py``),
    which a query spells the same (``alias``: its table's, e.g. ``t.``) to be answered from
    them."""
    if pg:
        return f"{alias}search_body IS NULL"
    return f"{alias}search_body IS NULL OR {alias}search_id IS NULL"


def fts_rows_sql(kind: int, columns: str, match: str, condition: str) -> str:
    """SQLite: a ``SELECT columns`` (SQL on the row, aliased ``c``) of the calls (``kind``
    0) or results (1) whose ``search_fts`` entry matches ``match`` (SQL text, e.g. a bound
    parameter) and that meet ``condition`` (SQL on ``c``, e.g. ``instr(c.search_body, :n) >
    0``). An entry's id is its row's ``search_id`` (revision 0023): the matches drive the
    join (``CROSS JOIN`` keeps the full-text index the outer loop), each row found by
    ``ux_tool_calls_search_id`` / ``ux_tool_results_search_id``."""
    table = "tool_calls" if kind == 0 else "tool_results"
    return (f"SELECT {columns} FROM (SELECT rowid AS id FROM search_fts "
            f"WHERE search_fts MATCH {match}) AS f CROSS JOIN {table} AS c "
            f"ON c.search_id = f.id WHERE {condition}")


def include_name(name: str | None, type_: str, parent_names: Mapping[str, Any]) -> bool:
    """Alembic's ``include_name`` hook: leave the SQL-only search objects out of the
    comparison of the database with ``store/db/schema/tables.py`` (the search tables, FTS5 shadow
    tables, GIN indexes). Everything else is compared as before."""
    if name is None:
        return True
    if type_ == "table":
        return not any(name == t or name.startswith(t + "_") for t in SEARCH_TABLES)
    if type_ == "index":
        return name not in SQL_ONLY_INDEXES
    return True


def escaped(text: str) -> str:
    """``text`` as it appears inside a JSON string (orjson's escaping, which is PostgreSQL's)."""
    return orjson.dumps(text).decode()[1:-1]


#: The most trigrams of one needle an FTS5 query asks for (spread over the needle): the
#: index only narrows the items down, the stored text decides (revision 0021).
MAX_TRIGRAMS = 24


def fts_trigrams(text: str) -> str:
    """An FTS5 query over ``search_fts`` (trigram, ``detail=none`` since revision 0021, which
    answers no phrase) matching the items that hold every trigram of ``text`` (up to
    :data:`MAX_TRIGRAMS` of them, spread over it): a superset of the items whose text contains
    ``text``, which the caller narrows with the stored text (``instr``). ``text`` has at least
    :data:`MIN_TEXT` characters."""
    grams = list(dict.fromkeys(text[i:i + 3] for i in range(len(text) - 2)))
    if len(grams) > MAX_TRIGRAMS:
        step = (len(grams) - 1) / (MAX_TRIGRAMS - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS)]
    if not grams:  # (shorter than a trigram: the tokenizer makes no token of it)
        grams = [text]
    return "(" + " AND ".join('"' + g.replace('"', '""') + '"' for g in grams) + ")"


def like_pattern(text: str) -> str:
    """A LIKE pattern (escape character ``\\``) matching any text that contains ``text``."""
    quoted = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{quoted}%"
