"""CLI: ``tools usage --by day|week|agent|model`` (edge layer; public API only): per tool,
calls and the tokens its results carried into the context (estimated from their size), a
sparkline over the periods or a bar per agent or model."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import store
from store.cli._common import console, emit_json, open_store, visible
from store.cli.drawn import DrawnTable, Justify
from store.cli.usage import bar, sparkline

__all__ = ["tools_by"]

#: The most periods a sparkline shows (the latest ones).
MAX_PERIODS = 60


def _periods(keys: list[str], step: int) -> list[str]:
    """Every period from the first key to the last (empty ones too: a sparkline is a time
    axis), at most the latest :data:`MAX_PERIODS`."""
    if not keys:
        return []
    first, last = date.fromisoformat(keys[0]), date.fromisoformat(keys[-1])
    count = (last - first).days // step + 1
    start = max(0, count - MAX_PERIODS)
    return [(first + timedelta(days=step * i)).isoformat() for i in range(start, count)]


def _lite_context(db_url: str | None, by: str, since: datetime | None,
                  until: datetime | None, *, agent: str | None, cwd: str | None
                  ) -> list[store.ToolContext] | None:
    """``store.tool_context`` on the database's own driver (an SQLite file or PostgreSQL at
    head; the store's statement and fold, ``store.audit.cost_rows``); ``None`` off it."""
    from store.audit.cost_rows import TOOL_GROUPS, tool_context_rows
    from store.audit.lite_scope import lite_aliases
    from store.db.reading.lite import read_lite
    from store.db.reading.pgread import driver_of
    from store.db.schema.revisions import default_url

    if by not in TOOL_GROUPS:
        return None
    return read_lite(db_url or default_url(), None, lambda conn, _: tool_context_rows(
        driver_of(conn), by=by, since=since, until=until, agent=agent, cwd=cwd,
        aliases=lite_aliases(conn)))


def tools_by(db_url: str | None, by: str, since: datetime | None, until: datetime | None,
             as_json: bool, *, agent: str | None = None, cwd: str | None = None) -> None:
    entries = _lite_context(db_url, by, since, until, agent=agent, cwd=cwd)
    if entries is None:  # (off the stdlib reader's path: the store answers, words errors)
        with open_store(db_url, read_only=True) as opened:
            entries = store.tool_context(opened, by=by, since=since, until=until, agent=agent,
                                         cwd=cwd)
    if as_json:
        emit_json({by: e.key, "tool": e.tool, "calls": e.calls, "results": e.results,
                   "error_results": e.error_results, "context_tokens": e.context_tokens,
                   "estimated": e.estimated} for e in entries)
        return
    caption = "context tokens: estimated from result size (chars / 4)"
    if by in ("day", "week"):
        periods = _periods(sorted({e.key for e in entries}), 7 if by == "week" else 1)
        per_tool: dict[str, dict[str, int]] = {}
        tokens: dict[str, int] = {}
        for e in entries:
            per_tool.setdefault(e.tool, {})[e.key] = e.calls
            tokens[e.tool] = tokens.get(e.tool, 0) + e.context_tokens
        first, last = (periods[0], periods[-1]) if periods else ("-", "-")
        title = f"tool calls per {by}, {first} .. {last}"
        columns = ["tool", "calls", "context tokens (est.)", f"calls per {by}"]
        justify: list[Justify] = ["left", "right", "right", "left"]
        ranked = sorted(per_tool, key=lambda t: (-sum(per_tool[t].values()), t))
        rows = []
        for tool in ranked:
            series = [per_tool[tool].get(p, 0) for p in periods]
            rows.append([visible(tool), f"{sum(series):,}", f"{tokens[tool]:,}",
                         sparkline(series)])
    else:
        top = max((e.context_tokens for e in entries), default=0)
        title = f"tool context per {by}"
        columns = [by, "tool", "calls", "context tokens (est.)", ""]
        justify = ["left"] * len(columns)
        rows = [[visible(e.key), visible(e.tool), f"{e.calls:,}", f"{e.context_tokens:,}",
                 bar(e.context_tokens, top)] for e in entries]
    # (drawn as rich's Table draws it, in one pass: rich's measuring was ~50 ms of the
    # command at 10^6 messages; what it does not lay out goes to rich, as before)
    console().print(DrawnTable(title, columns, rows, justify=justify, caption=caption))
