"""Token usage reports folded from the stored usage rows (persistence; stdlib only, no
SQLAlchemy): the totals per key, the sessions without usage. Read on the store's connection
(``store.audit.costs``) or on the stdlib driver of an SQLite file
(``store.audit.lite_costs``, the command line's start-up): one fold for both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from store.core.errors import UsageError
from store.db.index.summaries import context_rows_sql, ids_param, in_ids
from store.db.reading.summary_reads import (
    DaySums,
    summary_context_rows,
    summary_context_totals,
    summary_usage_days,
    summary_usage_groups,
    without_summarized_usage,
)
from store.db.reading.usage import UsageSums, scope_where, usage_groups
from store.usage.prices import TIER_TOKENS, PriceTable

__all__ = ["CHARS_PER_TOKEN", "TOOL_GROUPS", "UNKNOWN", "USAGE_GROUPS", "MissingUsage",
           "ToolContext", "UsageTotals", "missing_rows", "period_key", "report_rows",
           "tool_context_rows"]

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

    def add_sums(self, model_name: str | None, responses: int,
                 counts: tuple[int, int, int, int, int], tiered: tuple[int, int, int, int],
                 prices: PriceTable) -> None:
        """Count responses of one model summed: their tokens, their number, their cost at the
        model's price (``tiered``: the tokens past the tier threshold, as in
        :class:`UsageSums`)."""
        model = model_name or UNKNOWN
        input_tokens, output, creation, read, reasoning = counts
        cost = prices.cost_of_sums(model_name, (input_tokens, output, creation, read), tiered)
        per_model = self.by_model.get(model)
        if per_model is None:
            per_model = self.by_model[model] = UsageTotals(model)
        for totals in (self, per_model):
            totals.input_tokens += input_tokens
            totals.output_tokens += output
            totals.cache_creation_tokens += creation
            totals.cache_read_tokens += read
            totals.reasoning_tokens += reasoning
            totals.responses += responses
            totals.models.add(model)
            if cost is None:
                totals.unpriced_models.add(model)
            else:
                totals.cost_usd += cost


@dataclass(frozen=True, slots=True)
class MissingUsage:
    """The sessions of one agent, within a report's scope, with replies but no recorded usage
    (their files record none, or the reader could not read it): named below a report so that
    its totals are never taken for the whole."""

    agent: str
    session_ids: tuple[str, ...]


def _day_key(by: str, day: str) -> str:
    """A period's key (``by``: day, week or month) from its UTC day."""
    return day if by == "day" else period_key(by, datetime.fromisoformat(day))


def _key(by: str, group: UsageSums, root: tuple[str, str | None, str | None] | None) -> str:
    if by in _PERIODS:
        return _day_key(by, group.day)
    if by == "session":
        return root[0] if root is not None else group.session_id
    if by == "model":
        return group.model or UNKNOWN
    if by == "agent":
        return (root[1] if root is not None else group.agent) or UNKNOWN
    if by == "project":
        return (root[2] if root is not None else group.cwd) or UNKNOWN
    raise UsageError(f"usage --by {by!r}: one of {', '.join(USAGE_GROUPS)}")


def report_rows(conn: Any, *, by: str, since: datetime | None, until: datetime | None,
                agent: str | None, cwd: str | None, session_id: str | None,
                table: PriceTable, roots: dict[str, tuple[str, str | None, str | None]]
                ) -> list[UsageTotals]:
    """The rows of ``store.audit.costs.usage_report`` read on ``conn`` (a SQLAlchemy
    ``Connection`` or a ``store.db.reading.driver.DriverConnection``); ``roots``: each
    subagent session's root (rolled up under it). The database sums the usage per day,
    session and model (``usage_groups``, each response once); this folds the groups."""
    if by not in USAGE_GROUPS or by == "tool":
        raise UsageError(f"usage --by {by!r}: one of {', '.join(USAGE_GROUPS)}")
    totals: dict[str, UsageTotals] = {}
    groups: Iterable[UsageSums] | None = None
    days: DaySums | None = None
    if since is None and until is None and session_id is None:
        # (the per-session summaries: store/db/index/summaries.py; a report by period,
        # model, folder or agent has them summed per key (a model's: per day) and model by
        # the database, a subagent apart: it counts under its root's. A session's report
        # folds its groups: a sum per session and model costs the database more than the
        # fold, 2.00 -> 2.13 G instructions at 10^6)
        if by == "session":
            groups = summary_usage_groups(conn, agent=agent, cwd=cwd)
        else:
            keyed = by in _PLACES
            days = summary_usage_days(conn, agent=agent, cwd=cwd, per=by if keyed else "day",
                                      apart=sorted(roots) if keyed else ())
            groups = days.rest if days is not None else None
    if groups is None:
        groups = usage_groups(conn, tier=TIER_TOKENS, since=since, until=until, agent=agent,
                              cwd=cwd, session_id=session_id)
    # Each model's groups of a key are summed first (integers: in any order), then priced
    # once (no price per session or day), in one order whatever order the database gave.
    _fold_per_model(totals, by, groups, table, roots, days)
    rows = list(totals.values())
    if by in ("model", "agent", "project"):
        rows.sort(key=lambda t: (-t.cost_usd, -t.total_tokens, t.key))
    elif by == "session":  # a rolled-up root can be first seen after its subagent's first
        rows.sort(key=lambda t: (t.last_at or datetime.min.replace(tzinfo=UTC), t.key))
    else:  # periods: oldest first (ISO dates sort as they run)
        rows.sort(key=lambda t: t.key)
    return rows


_PERIODS = frozenset({"day", "week", "month"})
#: The reports whose key is the session's (or its root's) folder or agent.
_PLACES = frozenset({"project", "agent"})
#: The reports whose key is the session's (or its root's): itself, its folder or agent.
_BY_SESSION = _PLACES | {"session"}


def _fold_per_model(totals: dict[str, UsageTotals], by: str, groups: Iterable[UsageSums],
                    table: PriceTable, roots: dict[str, tuple[str, str | None, str | None]],
                    days: DaySums | None = None) -> None:
    """:func:`report_rows`'s fold: the groups' sums per (key, model) first, each then
    counted once (its cost at the model's price over the summed tokens, which tiered prices
    allow: see :class:`UsageSums`), in one order. ``days``: sums per (day, folder or agent;
    model) the database made, with their sessions, folded first (``by`` a period,
    ``project`` or ``agent``)."""
    sums: dict[tuple[str, str | None], list[Any]] = {}
    sessions: dict[str, set[str]] = {}
    rolled: dict[str, set[str]] = {}
    latest: dict[str, datetime] = {}
    periods: dict[str, str] = {}  # (a day's period, made once per day)

    def key_of(day: str | None, model: str | None) -> str:
        if by == "model":
            return model or UNKNOWN
        if by in _PLACES:  # (a folder or agent the database summed per: ``day`` holds it)
            return day or UNKNOWN
        key = periods.get(day or "")
        if key is None:
            key = periods[day or ""] = _day_key(by, day or "")
        return key

    def add(key: str, model: str | None, responses: int, counts: tuple[int, ...],
            tiered: tuple[int, ...], last_at: datetime, sids: Iterable[str]) -> None:
        found = sums.get((key, model))
        if found is None:
            sums[(key, model)] = [responses, *counts, *tiered]
        else:
            found[0] += responses
            for i, n in enumerate(counts, 1):
                found[i] += n
            for i, n in enumerate(tiered, 6):
                found[i] += n
        if key not in latest or last_at > latest[key]:
            latest[key] = last_at
        for sid in sids:
            sessions.setdefault(key, set()).add(sid)
            if sid in roots:
                rolled.setdefault(key, set()).add(sid)

    for day, model, responses, counts, tiered, last_at, sids in days.sums if days else ():
        add(key_of(day, model), model, responses, counts, tiered, last_at, sids)
    for group in groups:
        key = (_key(by, group, roots.get(group.session_id)) if by in _BY_SESSION
               else key_of(group.day, group.model))
        add(key, group.model, group.responses, group.counts, group.tiered, group.last_at,
            (group.session_id,))
    for (key, model), got in sorted(sums.items(), key=lambda item: (
            item[0][0], item[0][1] is not None, item[0][1] or "")):
        row = totals.get(key)
        if row is None:
            row = totals[key] = UsageTotals(key, sessions=sessions[key],
                                            rolled_up=rolled.get(key, set()),
                                            last_at=latest[key])
        row.add_sums(model, got[0], (got[1], got[2], got[3], got[4], got[5]),
                     (got[6], got[7], got[8], got[9]), table)


def missing_rows(conn: Any, *, since: datetime | None, until: datetime | None,
                 agent: str | None, cwd: str | None,
                 session_id: str | None) -> list[MissingUsage]:
    """The rows of ``store.audit.costs.sessions_without_usage`` read on ``conn`` (as
    :func:`report_rows`)."""
    where, params = scope_where(conn, since=since, until=until, agent=agent, cwd=cwd,
                                session=("m.session_id", session_id))
    # Per session (a few thousand), not per message (a million): the sessions without a
    # usage row first (those the summaries say have usage skipped: a look into the usage
    # rows' index per session was 99 ms of a cold usage report at 10^6 messages), then
    # whether one of them has a reply within the filters.
    summarized, summary_params = without_summarized_usage(conn)
    params = [*summary_params, *params]
    sql = (f"SELECT s.agent, s.session_id FROM sessions s WHERE {summarized} AND NOT EXISTS ("
           "SELECT 1 FROM message_usage u WHERE u.session_id = s.session_id) AND EXISTS ("
           "SELECT 1 FROM messages m WHERE m.session_id = s.session_id AND m.role = 'assistant' "
           + "".join(f"AND {term} " for term in where)
           + ") ORDER BY s.session_id")
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


class _Resolves(Protocol):
    def resolve(self, name: str, agent: str | None = None) -> str: ...


def tool_context_rows(conn: Any, *, by: str | None, since: datetime | None,
                      until: datetime | None, agent: str | None, cwd: str | None,
                      aliases: _Resolves) -> list[ToolContext]:
    """The rows of ``store.audit.costs.tool_context`` read on ``conn`` (the store's or a
    stdlib driver's). Per (session, UTC day, model, raw name) the calls, their results, the
    results' size and errors come from the per-session summaries (``context_summary``; the
    sessions not summarized, and any time range, from the calls by the same SQL:
    ``store.db.index.summaries.context_rows_sql``); the database groups them per (key,
    agent, raw name), a few hundred rows named by the alias table and folded here. Over the
    whole store or an agent's sessions, the summaries' sums come from their index in its
    order (``summary_context_totals``; a folder's sessions are joined to theirs). (Reading
    each call into Python took 6 s at 10^6 messages; summing the calls, 2.4 s; summing the
    summaries joined to their sessions, ~75 ms; in the index's order, ~15-25 ms.)"""
    pg = conn.dialect.name == "postgresql"
    where, scoped = scope_where(conn, since=None, until=None, agent=agent, cwd=cwd)
    key = {"day": "g.day", "week": "g.day", "agent": "s.agent",
           "model": "coalesce(g.model, s.model)"}.get(by or "", "''")

    def grouped(sql: str, params: list[Any]) -> list[Any]:
        return list(conn.exec_driver_sql(
            f"SELECT {key}, s.agent, g.raw, sum(g.calls), sum(g.results), sum(g.chars), "
            f"sum(g.errors) FROM ({sql}) AS g JOIN sessions AS s ON s.session_id = g.s"
            + "".join(f" AND {term}" for term in where)
            + f" GROUP BY {'' if by is None else key + ', '}s.agent, g.raw",
            (*params, *scoped)).all())

    ranged = since is not None or until is not None
    totals = None if ranged or cwd is not None else summary_context_totals(conn, by=by,
                                                                            agent=agent)
    if totals is not None:  # (the summaries' sums in their index's order, revision 0028)
        rows, others = totals
        if others:
            rows += grouped(context_rows_sql(pg, in_ids(pg, "c.session_id")),
                            [ids_param(pg, others)])
    else:
        source = None if ranged or cwd is None else summary_context_rows(conn, agent=agent,
                                                                          cwd=cwd)
        if source is None:  # (every call in scope, summed as the summaries are)
            timed, bounds = scope_where(conn, since=since, until=until, agent=None, cwd=None)
            sql, params = context_rows_sql(pg, " AND ".join(["1 = 1", *timed])), list(bounds)
        else:
            sql, params = source
        rows = grouped(sql, params)
    out: dict[tuple[str, str], ToolContext] = {}
    weeks: dict[str, str] = {}
    for found, agent_name, raw, calls, results, chars, errors in rows:
        if by == "week":
            found = weeks.get(found) or weeks.setdefault(
                found, period_key("week", datetime.fromisoformat(found)))
        elif by in ("agent", "model"):
            found = found or UNKNOWN
        tool = aliases.resolve(str(raw), agent_name)
        entry = out.get((found, tool))
        if entry is None:
            entry = out[(found, tool)] = ToolContext(str(found), tool)
        entry.calls += int(calls)
        entry.results += int(results)
        entry.result_chars += int(chars)
        entry.error_results += int(errors)
    return sorted(out.values(), key=lambda t: (t.key, -t.result_chars, -t.calls, t.tool))
