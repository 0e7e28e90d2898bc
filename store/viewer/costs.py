"""``/usage``: what the agents cost, as ccusage and agentsview show it; and each session's cost
for the session list (edge layer; :func:`store.usage_report` does the counting).

Parameters: ``since`` / ``until`` (dates, both inclusive: the responses' own times), ``agent``,
``cwd`` (the project folder or below). The page shows the totals, daily spend stacked by model
and by agent (server-rendered SVG), then tables per model, agent, project and session (the 50
most expensive), each with its tokens and cost. A subagent's usage counts under the session it
was started from (its root), in the agent, project and session tables. Models without a price
are named (their tokens are counted, never priced by a guess), and so are the sessions that
recorded no usage, so that a total is never taken for the whole.

:class:`CostBook` keeps every session's cost (its own, and with its subagents) for the session
list, computed again only when the store's activity stamp (:mod:`store.viewer.live`) changes.
"""

from __future__ import annotations

import threading
from datetime import date, datetime, timedelta
from typing import Any, Protocol

import store
from store.viewer.chart import OTHERS, PALETTE, Series, day_starts, stacked_svg
from store.viewer.http import BadRequest, Request, Response
from store.viewer.layout import field, page, parse_time, select
from store.viewer.markup import Markup, html, join, url

__all__ = ["CostBook", "money", "usage_page"]

#: Sessions shown in the per-session table.
TOP_SESSIONS = 50
#: Sessions named per agent among those without usage.
SHOWN_MISSING = 5


class Viewer(Protocol):
    store: store.TranscriptStore

    def redact(self, text: str) -> str: ...


def money(value: float) -> str:
    """Dollars to the cent; below a cent but above nothing as ``<$0.01``."""
    if 0 < value < 0.005:
        return "<$0.01"
    return f"${value:,.2f}"


def _cost(totals: store.UsageTotals | None) -> Markup:
    """A cost cell's content: the cost, marked when a model in it has no price."""
    if totals is None:
        return html('<span class="muted">–</span>')
    if not totals.priced:
        return html('<span class="warn" title="no price for {m}">unpriced</span>',
                    m=", ".join(sorted(totals.unpriced_models)))
    mark = html(' <span class="warn" title="no price for {m}">+?</span>',
                m=", ".join(sorted(totals.unpriced_models))) if totals.unpriced_models \
        else Markup("")
    return html("{c}{mark}", c=money(totals.cost_usd), mark=mark)


class CostBook:
    """Every session's usage, own (``own``) and with its subagents under it (``rolled``),
    recomputed when ``stamp`` changes. Thread-safe."""

    def __init__(self, opened: store.TranscriptStore) -> None:
        self._store = opened
        self._lock = threading.Lock()
        self._stamp: str | None = None
        self._own: dict[str, store.UsageTotals] = {}
        self._rolled: dict[str, store.UsageTotals] = {}

    def get(self, stamp: str) -> tuple[dict[str, store.UsageTotals],
                                       dict[str, store.UsageTotals]]:
        with self._lock:
            if stamp != self._stamp:
                self._own = {t.key: t for t in store.usage_report(self._store, by="session")}
                self._rolled = {t.key: t for t in store.usage_report(self._store, by="session",
                                                                     rollup=True)}
                self._stamp = stamp
            return self._own, self._rolled

    @staticmethod
    def cell(totals: store.UsageTotals | None) -> Markup:
        return _cost(totals)


def _series(reports: dict[str, list[store.UsageTotals]], names: list[str],
            first: datetime | None, end: datetime | None) -> Series:
    """Cost per name per bucket of days from per-name daily reports."""
    days = sorted({date.fromisoformat(t.key) for rows in reports.values() for t in rows})
    if not days:
        return Series((), timedelta(days=1), (), {})
    from datetime import UTC, time

    lo = first or datetime.combine(days[0], time(), UTC)
    hi = end or datetime.combine(days[-1], time(), UTC) + timedelta(days=1)
    starts, step = day_starts(lo, hi)
    counts: dict[str, list[float]] = {name: [0.0] * len(starts) for name in names}
    origin = starts[0]
    for name, rows in reports.items():
        for t in rows:
            moment = datetime.combine(date.fromisoformat(t.key), time(), UTC)
            slot = int((moment - origin) / step)
            if 0 <= slot < len(starts):
                counts[name][slot] += t.cost_usd
    return Series(tuple(starts), step, tuple(names), counts)


def _by_model(days: list[store.UsageTotals]) -> dict[str, list[store.UsageTotals]]:
    """Daily rows per model (the day reports' per-model breakdowns), the most expensive
    models first and the rest as one series."""
    per: dict[str, list[store.UsageTotals]] = {}
    spent: dict[str, float] = {}
    for day in days:
        for model, part in day.by_model.items():
            per.setdefault(model, []).append(store.UsageTotals(day.key,
                                                               cost_usd=part.cost_usd))
            spent[model] = spent.get(model, 0.0) + part.cost_usd
    return _top(per, spent)


def _top(per: dict[str, list[store.UsageTotals]], spent: dict[str, float]
         ) -> dict[str, list[store.UsageTotals]]:
    ranked = sorted(per, key=lambda name: (-spent[name], name))
    kept = ranked[:len(PALETTE) - 1]
    out = {name: per[name] for name in kept}
    rest = [t for name in ranked[len(kept):] for t in per[name]]
    if rest:
        out[OTHERS] = rest
    return out


def _table(title: str, rows: list[store.UsageTotals], key_cell: object, *,
           table_id: str) -> Markup:
    if not rows:
        return Markup("")
    body = join(html(
        '<tr><td>{key}</td><td><small>{models}</small></td><td class="num">{i}</td>'
        '<td class="num">{o}</td><td class="num">{cc}</td><td class="num">{cr}</td>'
        '<td class="num">{tot}</td><td class="num">{n}</td><td class="num">{cost}</td></tr>',
        key=key_cell(t) if callable(key_cell) else t.key,
        models=", ".join(sorted(t.models)), i=f"{t.input_tokens:,}",
        o=f"{t.output_tokens:,}", cc=f"{t.cache_creation_tokens:,}",
        cr=f"{t.cache_read_tokens:,}", tot=f"{t.total_tokens:,}", n=f"{t.responses:,}",
        cost=_cost(t)) for t in rows)
    return html(
        '<section class="usage-table" id="{tid}"><h2>Per {title}</h2><table class="usage">'
        "<thead><tr><th>{title}</th><th>models</th><th>input</th><th>output</th>"
        "<th>cache create</th><th>cache read</th><th>total tokens</th><th>responses</th>"
        "<th>cost</th></tr></thead><tbody>{body}</tbody></table></section>",
        tid=table_id, title=title, body=body)


def usage_page(viewer: Viewer, request: Request) -> Response:
    """Usage and cost."""
    opened = viewer.store
    since = parse_time(request.arg("since"), "since")
    until = parse_time(request.arg("until"), "until", end=True)
    if since is not None and until is not None and since >= until:
        raise BadRequest("since must be before until")
    agent = request.arg("agent")
    scope: dict[str, Any] = {"since": since, "until": until, "agent": agent,
                             "cwd": request.arg("cwd")}
    days = store.usage_report(opened, by="day", **scope)
    agents = [agent] if agent else opened.agents()
    per_agent = {name: store.usage_report(opened, by="day", **{**scope, "agent": name})
                 for name in agents}
    per_agent = {name: rows for name, rows in per_agent.items() if rows}
    spent = {name: sum(t.cost_usd for t in rows) for name, rows in per_agent.items()}
    by_agent_days = _top(per_agent, spent)
    by_model_days = _by_model(days)
    models = store.usage_report(opened, by="model", **scope)
    by_agent = store.usage_report(opened, by="agent", rollup=True, **scope)
    projects = store.usage_report(opened, by="project", rollup=True, **scope)
    sessions = sorted(store.usage_report(opened, by="session", rollup=True, **scope),
                      key=lambda t: (-t.cost_usd, t.key))
    missing = store.sessions_without_usage(opened, **scope)
    total = sum(t.cost_usd for t in days)
    unpriced = sorted({m for t in days for m in t.unpriced_models})
    form = html('<form class="filters" method="get" action="/usage">{agent}{cwd}{since}{until}'
                '<button type="submit">show</button> <a href="/usage">all time</a></form>',
                agent=select("agent", "agent", opened.agents(), agent),
                cwd=field("project folder", "cwd", request.arg("cwd"),
                          placeholder="/home/me/app"),
                since=field("from", "since", request.arg("since"), kind="date"),
                until=field("to", "until", request.arg("until"), kind="date"))
    summary = html(
        '<p class="totals"><b>{cost}</b> over {n} response{s} · {tokens} tokens · {days} '
        "day{ds} with usage</p>", cost=money(total), n=f"{sum(t.responses for t in days):,}",
        s="" if sum(t.responses for t in days) == 1 else "s",
        tokens=f"{sum(t.total_tokens for t in days):,}", days=len(days),
        ds="" if len(days) == 1 else "s")
    warn = html('<p class="warn unpriced">No price for {m}: their tokens are counted, their '
                "cost is not (add a price with <code>--prices</code>).</p>",
                m=", ".join(unpriced)) if unpriced else Markup("")
    absent = join(html(
        "<li>{agent}: {n} session{s} ({ids}{more})</li>", agent=m.agent,
        n=len(m.session_ids), s="" if len(m.session_ids) == 1 else "s",
        ids=join((html('<a href="{h}"><code>{i}</code></a>', h=url("session", sid),
                       i=sid[:12]) for sid in m.session_ids[:SHOWN_MISSING]), ", "),
        more=f", +{len(m.session_ids) - SHOWN_MISSING} more"
        if len(m.session_ids) > SHOWN_MISSING else "") for m in missing)
    no_usage = html('<div class="note missing"><p>Sessions that recorded no usage (not counted '
                    "above):</p><ul>{a}</ul></div>", a=absent) if missing else Markup("")
    first = since
    charts = html(
        "{model}{agent}",
        model=stacked_svg(_series(by_model_days, list(by_model_days), first, until),
                          title="Cost by model", unit="USD", fmt=money,
                          empty="No usage in this period.", chart_id="chart-models"),
        agent=stacked_svg(_series(by_agent_days, list(by_agent_days), first, until),
                          title="Cost by agent", unit="USD", fmt=money,
                          empty="No usage in this period.", chart_id="chart-agents"))

    def session_cell(t: store.UsageTotals) -> Markup:
        extra = len(t.rolled_up)
        return html('<a href="{h}"><code>{k}</code></a>{sub}', h=url("session", t.key),
                    k=t.key, sub=html(' <small>with {n} subagent{s}</small>', n=extra,
                                      s="" if extra == 1 else "s") if extra else "")

    def project_cell(t: store.UsageTotals) -> Markup:
        return html('<a href="{h}"><code>{k}</code></a>',
                    h=url("usage", query={**_period(request), "cwd": t.key}), k=t.key)

    body = html(
        "<h1>Usage and cost</h1>{form}{summary}{warn}{charts}{models}{agents}{projects}"
        "{sessions}{no_usage}", form=form, summary=summary, warn=warn, charts=charts,
        models=_table("model", models, None, table_id="by-model"),
        agents=_table("agent", by_agent, None, table_id="by-agent"),
        projects=_table("project", projects, project_cell, table_id="by-project"),
        sessions=_table("session", sessions[:TOP_SESSIONS], session_cell,
                        table_id="by-session"),
        no_usage=no_usage)
    return page("Usage", body, current="/usage")


def _period(request: Request) -> dict[str, str | None]:
    return {"since": request.arg("since"), "until": request.arg("until"),
            "agent": request.arg("agent")}
