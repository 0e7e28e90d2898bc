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

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

from store.audit.sql import connect
from store.core.errors import UsageError
from store.db.base import alias_table, reads_once
from store.db.reading.lineage import subagent_roots
from store.db.reading.usage import UsageRow, scope_where, usage_rows
from store.db.schema.sqlitefile import read_time
from store.usage.prices import PriceTable, load_prices

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["CHARS_PER_TOKEN", "TOOL_GROUPS", "USAGE_GROUPS", "MissingUsage", "ToolContext",
           "UsageTotals", "period_key", "sessions_without_usage", "tool_context",
           "usage_report"]

UsageGroup = Literal["day", "week", "month", "session", "model", "agent", "project"]
USAGE_GROUPS: tuple[str, ...] = ("day", "week", "month", "session", "model", "agent",
                                 "project", "tool")
TOOL_GROUPS: tuple[str, ...] = ("day", "week", "agent", "model")
#: Characters per token of the size estimate (OpenAI's and Anthropic's rule of thumb).
CHARS_PER_TOKEN = 4
UNKNOWN = "(unknown)"


def period_key(by: str, at: datetime) -> str:
    """The UTC day (``2025-09-03``), ISO week's Monday, or month (``2025-09``) of ``at``."""
    day = at.date()
    if by == "day":
        return day.isoformat()
    if by == "week":
        return (day - timedelta(days=day.weekday())).isoformat()
    if by == "month":
        return day.isoformat()[:7]
    raise UsageError(f"not a period: {by!r} (day, week or month)")


@dataclass(slots=True)
class UsageTotals:
    """The tokens and cost of one period or key. ``cost_usd`` covers the priced models only;
    ``unpriced_models`` lists the others (their tokens are in the counts). ``by_model``: the
    same totals per model (ccusage's ``--breakdown``); ``sessions``: the sessions counted,
    ``rolled_up``: those of them counted under their parent (subagents, see
    :func:`usage_report`); ``last_at``: the time of the latest response counted."""

    key: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    reasoning_tokens: int = 0
    responses: int = 0
    cost_usd: float = 0.0
    models: set[str] = field(default_factory=set)
    unpriced_models: set[str] = field(default_factory=set)
    by_model: dict[str, UsageTotals] = field(default_factory=dict)
    sessions: set[str] = field(default_factory=set)
    rolled_up: set[str] = field(default_factory=set)
    last_at: datetime | None = None

    @property
    def total_tokens(self) -> int:
        return (self.input_tokens + self.output_tokens + self.cache_creation_tokens
                + self.cache_read_tokens)

    @property
    def priced(self) -> bool:
        """Whether any model counted here has a price (else ``cost_usd`` means nothing)."""
        return bool(self.models - self.unpriced_models)

    def add(self, row: UsageRow, prices: PriceTable, *, rolled_up: bool = False) -> None:
        model = row.usage.model or UNKNOWN
        cost = prices.cost(row.usage)
        self._count(row, model, cost)
        self.sessions.add(row.session_id)
        if rolled_up:
            self.rolled_up.add(row.session_id)
        if self.last_at is None or row.at > self.last_at:
            self.last_at = row.at
        per_model = self.by_model.get(model)
        if per_model is None:
            per_model = self.by_model[model] = UsageTotals(model)
        per_model._count(row, model, cost)

    def _count(self, row: UsageRow, model: str, cost: float | None) -> None:
        u = row.usage
        self.input_tokens += u.input_tokens
        self.output_tokens += u.output_tokens
        self.cache_creation_tokens += u.cache_creation_tokens
        self.cache_read_tokens += u.cache_read_tokens
        self.reasoning_tokens += u.reasoning_tokens
        self.responses += 1
        self.models.add(model)
        if cost is None:
            self.unpriced_models.add(model)
        else:
            self.cost_usd += cost


@dataclass(frozen=True, slots=True)
class MissingUsage:
    """The sessions of one agent, within a report's scope, with replies but no recorded usage
    (their files record none, or the reader could not read it): named below a report so that
    its totals are never taken for the whole."""

    agent: str
    session_ids: tuple[str, ...]


def _key(by: str, row: UsageRow, root: tuple[str, str | None, str | None] | None) -> str:
    if by in ("day", "week", "month"):
        return period_key(by, row.at)
    if by == "session":
        return root[0] if root is not None else row.session_id
    if by == "model":
        return row.usage.model or UNKNOWN
    if by == "agent":
        return (root[1] if root is not None else row.agent) or UNKNOWN
    if by == "project":
        return (root[2] if root is not None else row.cwd) or UNKNOWN
    raise UsageError(f"usage --by {by!r}: one of {', '.join(USAGE_GROUPS)}")


def _deduplicated(rows: Iterable[UsageRow]) -> Iterable[UsageRow]:
    seen: set[tuple[str, str | None]] = set()
    for row in rows:
        response = row.usage.response_id
        if response is not None:
            key = (response, row.usage.request_id)
            if key in seen:
                continue
            seen.add(key)
        yield row


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
    totals: dict[str, UsageTotals] = {}
    with connect(store) as conn:
        roots = subagent_roots(conn) if rollup and by in ("session", "agent", "project") \
            else {}
        for row in _deduplicated(usage_rows(conn, since=since, until=until, agent=agent,
                                            cwd=cwd, session_id=session_id)):
            root = roots.get(row.session_id)
            key = _key(by, row, root)
            found = totals.get(key)
            if found is None:
                found = totals[key] = UsageTotals(key)
            found.add(row, table, rolled_up=root is not None)
    rows = list(totals.values())
    if by in ("model", "agent", "project"):
        rows.sort(key=lambda t: (-t.cost_usd, -t.total_tokens, t.key))
    elif by == "session":  # a rolled-up root can be first seen after its subagent's first
        rows.sort(key=lambda t: (t.last_at or datetime.min.replace(tzinfo=UTC), t.key))
    return rows


@reads_once
def sessions_without_usage(store: TranscriptStore, *, since: datetime | None = None,
                           until: datetime | None = None, agent: str | None = None,
                           cwd: str | None = None,
                           session_id: str | None = None) -> list[MissingUsage]:
    """Per agent (most sessions first), the sessions with an assistant message within the
    filters (the same as :func:`usage_report`'s: message time, agent, folder, session) and
    no stored usage at all: what a usage report does not count."""
    with connect(store) as conn:
        where, params = scope_where(conn, since=since, until=until, agent=agent, cwd=cwd,
                                    session=("m.session_id", session_id))
        sql = ("SELECT DISTINCT s.agent, s.session_id FROM messages m JOIN sessions s "
               "ON s.session_id = m.session_id WHERE m.role = 'assistant' "
               + "".join(f"AND {term} " for term in where)
               + "AND NOT EXISTS (SELECT 1 FROM message_usage u "
                 "WHERE u.session_id = m.session_id) ORDER BY s.session_id")
        found = conn.exec_driver_sql(sql, tuple(params)).all()
    per_agent: dict[str, list[str]] = {}
    for agent_name, sid in found:
        per_agent.setdefault(agent_name or UNKNOWN, []).append(str(sid))
    return [MissingUsage(name, tuple(ids)) for name, ids in
            sorted(per_agent.items(), key=lambda item: (-len(item[1]), item[0]))]


@dataclass(slots=True)
class ToolContext:
    """Calls of one tool (current name) within one key, and the estimated tokens their
    results carried into the context (``estimated``: from the size, see the module)."""

    key: str
    tool: str
    calls: int = 0
    results: int = 0
    error_results: int = 0
    result_chars: int = 0
    estimated: bool = True

    @property
    def context_tokens(self) -> int:
        return -(-self.result_chars // CHARS_PER_TOKEN)


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
        where, params = scope_where(conn, since=since, until=until, agent=agent, cwd=cwd)
        sql = ("SELECT c.session_id, c.position, c.call_index, m.created_at, s.agent, "
               "coalesce(u.model, s.model), c.raw_name, length(r.content_json), r.is_error "
               "FROM tool_calls c JOIN messages m ON m.session_id = c.session_id "
               "AND m.position = c.position JOIN sessions s ON s.session_id = c.session_id "
               "LEFT JOIN message_usage u ON u.session_id = c.session_id "
               "AND u.position = c.position "
               "LEFT JOIN tool_results r ON r.session_id = c.session_id "
               "AND r.call_position = c.position AND r.call_index = c.call_index"
               + (" WHERE " + " AND ".join(where) if where else ""))
        rows = conn.exec_driver_sql(sql, tuple(params)).all()
        aliases = alias_table(conn)
    out: dict[tuple[str, str], ToolContext] = {}
    counted: set[tuple[str, int, int]] = set()
    for sid, pos, idx, at, agent_name, model, raw, size, is_error in rows:
        if by in ("day", "week"):
            key = period_key(by, read_time(at))
        elif by == "agent":
            key = agent_name or UNKNOWN
        elif by == "model":
            key = model or UNKNOWN
        else:
            key = ""
        tool = aliases.resolve(raw, agent_name)
        entry = out.get((key, tool))
        if entry is None:
            entry = out[(key, tool)] = ToolContext(key, tool)
        call = (sid, pos, idx)
        if call not in counted:
            counted.add(call)
            entry.calls += 1
        if size is not None:
            entry.results += 1
            entry.result_chars += int(size)
            entry.error_results += bool(is_error)
    return sorted(out.values(), key=lambda t: (t.key, -t.result_chars, -t.calls, t.tool))
