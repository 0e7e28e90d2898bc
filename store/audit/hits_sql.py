"""The SQL text of the keys a call search takes from the derived rows (persistence; stdlib
only, no SQLAlchemy): which sessions' derived rows a search trusts, the calls whose text holds
a needle, the calls whose argument view meets a condition.

Each function returns SQL text with named parameters (``:name``) and their values, run as it
is by the stdlib call search (``store.audit.lite_search``, ``sqlite3``'s named style) and
wrapped in ``text()`` by the store's (``store.audit.hits``): one text for both. ``conn`` is a
SQLAlchemy ``Connection`` or a ``store.db.reading.driver.DriverConnection``: only its dialect
name and driver SQL are used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from store.audit.conditions import ViewCondition, view_params, view_sql
from store.core.logs import logger
from store.db.index.index_check import index_gaps
from store.db.index.search_index import (
    CALL_VIEWS,
    KIND_CALL,
    KIND_RESULT,
    has_search_index,
    tail_keys,
    view_tail,
)
from store.db.index.search_schema import fts_rows_sql, fts_trigrams, like_pattern
from store.records.searchtext import fold

__all__ = ["Trust", "hits_sql", "view_condition_sql", "trust_for"]

_log = logger("store.audit.hits")


@dataclass(frozen=True, slots=True)
class Trust:
    """Which derived rows a search may use: none (``exact``), or those of every session but
    ``distrusted`` (scanned exactly from their start)."""

    exact: bool = False
    distrusted: frozenset[str] = frozenset()


def trust_for(conn: Any, session_id: str | None, *, exact: bool = False,
              warn: Callable[[str], None] | None = None,
              gaps: Callable[[Any, str | None], dict[str, str]] = index_gaps) -> Trust:
    """What a search of the store (or of one session) may trust; each session whose derived
    rows do not line up with the transcript is logged and told to ``warn``. ``gaps``: the
    key check (``store.db.index.gaps_cache.cached_gaps`` in a long-lived store)."""
    if exact:
        return Trust(exact=True)
    found = gaps(conn, session_id)
    for sid, what in sorted(found.items()):
        message = (f"session {sid}: the search index does not line up with the transcript "
                   f"({what}); its calls are scanned exactly (run `transcript-store verify`, "
                   "repair with `transcript-store db index --rebuild`)")
        _log.warning("%s", message)
        if warn is not None:
            warn(message)
    return Trust(distrusted=frozenset(found))


def _excluded(dialect: str, name: str, trust: Trust, params: dict[str, Any],
              column: str = "session_id") -> str:
    """`` AND column`` not one of the distrusted sessions (bound as ``name``)."""
    if not trust.distrusted:
        return ""
    if dialect == "postgresql":
        params[name] = sorted(trust.distrusted)
        return f" AND {column} <> ALL(CAST(:{name} AS TEXT[]))"
    params[name] = orjson.dumps(sorted(trust.distrusted)).decode()
    return f" AND {column} NOT IN (SELECT value FROM json_each(:{name}))"


def view_condition_sql(conn: Any, number: int, view: ViewCondition,
                       session_id: str | None, trust: Trust) -> tuple[str, dict[str, Any]]:
    """The calls whose ``view`` meets the condition: the rows of ``call_views`` (filled by
    the catch-up) and the calls the catch-up has not reached yet or whose rows ``trust`` does
    not vouch for (``view_tail``), matched by the same SQL predicate."""
    dialect = conn.dialect.name
    params = view_params(dialect, number, view)
    scope = ""
    if session_id is not None:
        scope = f" AND session_id = :view_sid_{number}"
        params[f"view_sid_{number}"] = session_id
    parts = [] if trust.exact else [
        f"SELECT session_id, position, call_index FROM {CALL_VIEWS} "
        f"WHERE view = :view_name_{number}{scope}"
        f"{_excluded(dialect, f'view_x_{number}', trust, params)} AND "
        + view_sql(dialect, number, view, f"{CALL_VIEWS}.text")]
    if trust.exact:
        params.pop(f"view_name_{number}", None)  # (only the rows of call_views name it)
    tail = view_tail(conn, view.view, session_id=session_id, everything=trust.exact,
                     also=trust.distrusted)
    if tail and dialect == "postgresql":
        parts.append(
            f"SELECT session_id, position, call_index FROM unnest(CAST(:view_s_{number} AS "
            f"TEXT[]), CAST(:view_p_{number} AS INTEGER[]), CAST(:view_i_{number} AS "
            f"INTEGER[]), CAST(:view_t_{number} AS TEXT[])) "
            "AS tail(session_id, position, call_index, text) WHERE "
            + view_sql(dialect, number, view, "tail.text"))
        for key, column in zip("spit", zip(*tail, strict=True), strict=True):
            params[f"view_{key}_{number}"] = list(column)
    elif tail:
        parts.append(
            "SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each("
            f":view_tail_{number}) WHERE " + view_sql(dialect, number, view, "value ->> 3"))
        params[f"view_tail_{number}"] = orjson.dumps(tail).decode()
    if not parts:
        return "1 = 0", params
    return ("(tool_calls.session_id, tool_calls.position, tool_calls.call_index) IN ("
            + " UNION ALL ".join(parts) + ")"), params


def hits_sql(conn: Any, needle: str, *, results: bool, prefix: str, trust: Trust,
              session_id: str | None = None) -> tuple[str | None, dict[str, Any]]:
    """SQL selecting (session_id, position, call_index) of the calls whose decoded text holds
    ``needle`` (with ``results``: or one of whose linked results' does), case-insensitively:
    the search index's hits and an exact scan of what it has not caught up with yet or what
    ``trust`` does not vouch for. With ``session_id``, of that session only (on Citus: one
    shard)."""
    dialect = conn.dialect.name
    pg = dialect == "postgresql"
    # (an SQLite library without FTS5 trigram has no full-text index: every row is scanned
    # exactly, as the tail is)
    indexed = has_search_index(conn) and not trust.exact
    tail = tail_keys(conn, needle, results=results, everything=not indexed,
                     session_id=session_id, also=trust.distrusted)
    folded = fold(needle)
    parts: list[str] = []
    params: dict[str, Any] = {}
    scope = ""
    if session_id is not None:
        scope = f" AND c.session_id = :{prefix}_sid"
        params[f"{prefix}_sid"] = session_id
    scope += _excluded(dialect, f"{prefix}_x", trust, params, "c.session_id")
    kinds = (KIND_CALL, KIND_RESULT) if results else (KIND_CALL,)
    for kind in kinds if indexed else ():
        # a result is a hit of its linked call (an orphan's is none)
        columns = ("c.session_id, c.position, c.call_index" if kind == KIND_CALL else
                   "c.session_id, c.call_position, c.call_index")
        linked = "" if kind == KIND_CALL else " AND c.call_position IS NOT NULL"
        if pg:  # ix_tool_calls_search_trgm / ix_tool_results_search_trgm
            table = "tool_calls" if kind == KIND_CALL else "tool_results"
            parts.append(f"SELECT {columns} FROM {table} AS c WHERE c.search_body LIKE "
                         f":{prefix}_like{linked}{scope}")
        else:  # search_fts (FTS5 trigram): the rows with its trigrams, the text decides
            parts.append(fts_rows_sql(
                kind, columns, f":{prefix}_fts",
                f"instr(c.search_body, :{prefix}_needle) > 0{linked}{scope}"))
    if indexed and pg:
        params[f"{prefix}_like"] = like_pattern(folded)
    elif indexed:
        params[f"{prefix}_fts"] = fts_trigrams(folded)
        params[f"{prefix}_needle"] = folded
    if tail:
        if pg:
            parts.append(f"SELECT * FROM unnest(CAST(:{prefix}_s AS TEXT[]), "
                         f"CAST(:{prefix}_p AS INTEGER[]), CAST(:{prefix}_i AS INTEGER[])) "
                         "AS tail(session_id, position, call_index)")
            params[f"{prefix}_s"] = [k[0] for k in tail]
            params[f"{prefix}_p"] = [k[1] for k in tail]
            params[f"{prefix}_i"] = [k[2] for k in tail]
        else:
            parts.append("SELECT value ->> 0 AS session_id, value ->> 1 AS position, "
                         "value ->> 2 AS call_index "
                         f"FROM json_each(:{prefix}_tail)")
            params[f"{prefix}_tail"] = orjson.dumps(tail).decode()
    if not parts:
        return None, params
    return " UNION ".join(parts), params
