"""Token usage and cost reports, and the context each tool's results fill (persistence).

:func:`usage_report` sums the stored token usage (``message_usage``, revision 0008) per day,
ISO week (its Monday), month, session, model, agent or project (the session's cwd), oldest
period first, and prices each response at its model's price
(:class:`store.usage.prices.PriceTable`). A response stored twice (a resumed Claude Code
session repeats earlier lines in its new file: same response id and request id) counts once,
where first seen. Periods are UTC dates. A model without a price leaves the row's
``cost_usd`` short of its tokens: ``unpriced_models`` names such models (never a guess).

:func:`tool_context` estimates, per tool (current name, aliases applied) and per day, week,
agent or model, how many tokens the tools' results carried into the context: the providers
record no per-result count, so it is the result's stored size in characters / 4 (the common
rule for English and code), and is labelled an estimate wherever shown.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from store.audit.cost_rows import (
    CHARS_PER_TOKEN,
    TOOL_GROUPS,
    USAGE_GROUPS,
    MissingUsage,
    ToolContext,
    UsageTotals,
    missing_rows,
    period_key,
    report_rows,
    tool_context_rows,
)
from store.audit.sql import connect
from store.core.errors import UsageError
from store.db.base import alias_table, reads_once
from store.db.reading.usage import subagent_roots
from store.usage.prices import PriceTable, load_prices

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["CHARS_PER_TOKEN", "TOOL_GROUPS", "USAGE_GROUPS", "MissingUsage", "ToolContext",
           "UsageTotals", "period_key", "sessions_without_usage", "tool_context",
           "usage_report"]

@reads_once
def usage_report(store: TranscriptStore, *, by: str = "day", since: datetime | None = None,
                 until: datetime | None = None, agent: str | None = None,
                 cwd: str | None = None, session_id: str | None = None,
                 prices: PriceTable | None = None, rollup: bool = False) -> list[UsageTotals]:
    """Token usage and estimated cost per ``by`` key (see the module docstring); periods and
    sessions in time order, other keys most expensive first.

    ``rollup``: a subagent's usage (a session linked to its parent with lineage
    ``subagent``, at any depth) counts under its root session: ``by="session"`` gives the
    root's row (``rolled_up`` names the subagents in it) and ``agent``/``project`` the root's
    agent and folder. Periods and models are the same either way."""
    if by == "tool" or by not in USAGE_GROUPS:
        raise UsageError(f"usage --by {by!r}: one of {', '.join(USAGE_GROUPS[:-1])} "
                         "(per tool: tool_context)")
    table = prices if prices is not None else load_prices()
    with connect(store) as conn:
        roots = subagent_roots(conn) if rollup and by in ("session", "agent", "project") \
            else {}
        return report_rows(conn, by=by, since=since, until=until, agent=agent, cwd=cwd,
                           session_id=session_id, table=table, roots=roots)


@reads_once
def sessions_without_usage(store: TranscriptStore, *, since: datetime | None = None,
                           until: datetime | None = None, agent: str | None = None,
                           cwd: str | None = None,
                           session_id: str | None = None) -> list[MissingUsage]:
    """Per agent (most sessions first), the sessions with an assistant message within the
    filters (the same as :func:`usage_report`'s: message time, agent, folder, session) and
    no stored usage at all: what a usage report does not count."""
    with connect(store) as conn:
        return missing_rows(conn, since=since, until=until, agent=agent, cwd=cwd,
                            session_id=session_id)


@reads_once
def tool_context(store: TranscriptStore, *, by: str | None = None,
                 since: datetime | None = None, until: datetime | None = None,
                 agent: str | None = None, cwd: str | None = None) -> list[ToolContext]:
    """Per tool (and per ``by``: day, week, agent or model; ``None``: the whole range) the
    calls and the estimated tokens of their results, keys in order, then the tools that
    filled the context most first."""
    if by is not None and by not in TOOL_GROUPS:
        raise UsageError(f"tools usage --by {by!r}: one of {', '.join(TOOL_GROUPS)}")
    with connect(store) as conn:
        return tool_context_rows(conn, by=by, since=since, until=until, agent=agent, cwd=cwd,
                                 aliases=alias_table(conn))
