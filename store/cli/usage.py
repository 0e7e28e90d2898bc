"""CLI: ``usage``: tokens and estimated cost per day, week, month, session, model, agent,
project or tool (edge layer; public API only)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import click

import store
from store.cli._common import (
    StoreGroup,
    console,
    db_option,
    emit_json,
    open_store,
    scope_options,
    time_options,
    visible,
)
from store.cli.drawn import DrawnTable
from store.cli.usage_reports import REPORTS

#: The JSON name of a row's key where the shared vocabulary has one (else the --by value).
JSON_KEYS = {"session": "session_id"}
#: Sparkline steps, lowest first.
SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[int]) -> str:
    """One character per value, scaled to the largest (a blank for 0)."""
    top = max(values, default=0)
    if top <= 0:
        return " " * len(values)
    return "".join(" " if v <= 0 else SPARKS[min(len(SPARKS) - 1, (v * len(SPARKS) - 1) // top)]
                   for v in values)


def bar(value: int, top: int, width: int = 20) -> str:
    """A bar of at most ``width`` blocks, scaled to ``top`` (at least one block for > 0)."""
    if top <= 0 or value <= 0:
        return ""
    return "█" * max(1, round(width * value / top))


def _money(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:,.6f}" if value < 0.01 else f"${value:,.4f}" if value < 1 else \
        f"${value:,.2f}"


def _prices(path: Path | None) -> store.PriceTable:
    return store.load_prices(path)


def _tool_rows(opened: store.TranscriptStore, prices: store.PriceTable,
               since: datetime | None, until: datetime | None, agent: str | None,
               cwd: str | None
               ) -> tuple[list[dict[str, Any]], set[str]]:
    """Per tool: calls and the estimated tokens (and input cost, at each call's model) its
    results carried into the context."""
    rows: dict[str, dict[str, Any]] = {}
    unpriced: set[str] = set()
    for entry in store.tool_context(opened, by="model", since=since, until=until,
                                    agent=agent, cwd=cwd):
        row = rows.setdefault(entry.tool, {
            "tool": entry.tool, "calls": 0, "results": 0, "input_tokens": 0,
            "output_tokens": 0, "cache_creation_tokens": 0, "cache_read_tokens": 0,
            "cost_usd": 0.0, "estimated": True})
        row["calls"] += entry.calls
        row["results"] += entry.results
        row["input_tokens"] += entry.context_tokens
        price = prices.price(entry.key)
        if price is None:
            if entry.context_tokens:
                unpriced.add(entry.key)
        else:
            row["cost_usd"] += entry.context_tokens * price.input
    ordered = sorted(rows.values(), key=lambda r: (-r["input_tokens"], -r["calls"], r["tool"]))
    return ordered, unpriced


class UsageGroup(StoreGroup):
    """``usage``: the reports in the order ``--help`` lists them."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(REPORTS)


@click.group("usage", cls=UsageGroup, invoke_without_command=True)
@db_option
@click.option("--by", "by_given", type=click.Choice(["day", "week", "month", "session", "model",
                                                     "agent", "project", "tool"]),
              multiple=True, help="What a row is (default: day; once). The reports below "
                                  "(usage daily ...) add a Models column, --breakdown and a "
                                  "Total row.")
@time_options("Usage recorded")
@scope_options
@click.option("--prices", "prices_file", type=click.Path(path_type=Path, dir_okay=False),
              help="A price file in LiteLLM's model_prices_and_context_window.json format, "
                   "over the shipped table (also: TRANSCRIPT_STORE_PRICES).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per row.")
@click.pass_context
def usage(ctx: click.Context, db_url: str | None, by_given: tuple[str, ...],
          since: datetime | None, until: datetime | None, agent: str | None, cwd: str | None,
          prices_file: Path | None, as_json: bool) -> None:
    """Tokens (input, output, cache creation, cache read) and estimated cost.

    \b
    Reports like ccusage's (a Models column, --breakdown per model, a Total row, the
    sessions with no recorded usage named below; subagents rolled up to their parent):
      usage daily | weekly | monthly | session | project | agent | model

    From the usage the agents recorded, one response counted once; costs at the shipped,
    dated price table or --prices. A model without a price shows its tokens and is named.
    Without a report name: one row per --by key (the earlier form); --by tool: the tokens
    each tool's results carried into the context, estimated from their size (labelled so).
    """
    if ctx.invoked_subcommand is not None:
        # (only what was typed: a value from the environment, TRANSCRIPT_STORE_URL, is no
        # option given before the report name)
        typed = {name for name in ctx.params
                 if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE}
        given = [flag for flag, name, value in (
            ("--by", "by_given", by_given), ("--since", "since", since),
            ("--until", "until", until), ("--agent", "agent", agent), ("--cwd", "cwd", cwd),
            ("--prices", "prices_file", prices_file), ("--json", "as_json", as_json),
            ("--db", "db_url", db_url)) if value and name in typed]
        if given:
            raise click.UsageError(f"{', '.join(given)}: give the options after the report "
                                   f"name (usage {ctx.invoked_subcommand} {given[0]} ...)")
        return
    if len(by_given) > 1:
        raise click.UsageError(
            f"--by takes one value (got {', '.join(by_given)}); for the models of each day "
            "run: transcript-store usage daily --breakdown")
    by = by_given[0] if by_given else "day"
    prices = _prices(prices_file)
    totals: list[store.UsageTotals] | None = None
    if by != "tool":  # (an SQLite file or PostgreSQL at head: the stdlib reader's report)
        from store.audit.lite_costs import lite_usage_report
        from store.db.schema.revisions import default_url

        found = lite_usage_report(db_url or default_url(), by=by, table=prices, since=since,
                                  until=until, agent=agent, cwd=cwd)
        totals = None if found is None else found[0]
    if totals is None:
        with open_store(db_url, read_only=True) as opened:
            if by == "tool":
                rows, unpriced = _tool_rows(opened, prices, since, until, agent, cwd)
            else:
                totals = store.usage_report(opened, by=by, since=since, until=until,
                                            agent=agent, cwd=cwd, prices=prices)
    if totals is not None:
        unpriced = set().union(*(t.unpriced_models for t in totals)) if totals else set()
        name = JSON_KEYS.get(by, by)
        rows = [{name: t.key, **({"cwd": t.key} if by == "project" else {}),
                 "input_tokens": t.input_tokens,
                 "output_tokens": t.output_tokens,
                 "cache_creation_tokens": t.cache_creation_tokens,
                 "cache_read_tokens": t.cache_read_tokens,
                 "reasoning_tokens": t.reasoning_tokens, "total_tokens": t.total_tokens,
                 "responses": t.responses,
                 "cost_usd": round(t.cost_usd, 6) if t.models - t.unpriced_models else None,
                 "models": sorted(t.models), "unpriced_models": sorted(t.unpriced_models)}
                for t in totals]
    if as_json:
        emit_json(rows)
    else:
        _table(by, rows, prices)
    for model in sorted(unpriced):
        click.echo(f"no price for model {model!r}: its tokens are counted, its cost is not "
                   "(add it with --prices FILE)", err=True)


def _table(by: str, rows: list[dict[str, Any]], prices: store.PriceTable) -> None:
    estimated = by == "tool"
    columns = ["tool", "calls", "context tokens (est.)", "cost (est.)"] if estimated else [
        by, "input", "output", "cache create", "cache read", "total", "cost"]
    cells: list[list[str]] = []
    for row in rows:
        if estimated:
            cells.append([visible(row["tool"]), f"{row['calls']:,}", f"{row['input_tokens']:,}",
                          _money(row["cost_usd"])])
        else:
            cost = _money(row["cost_usd"]) + (" (part: no price)" if row["unpriced_models"]
                                              and row["cost_usd"] is not None else "")
            cells.append([visible(str(row[JSON_KEYS.get(by, by)])), f"{row['input_tokens']:,}",
                          f"{row['output_tokens']:,}", f"{row['cache_creation_tokens']:,}",
                          f"{row['cache_read_tokens']:,}", f"{row['total_tokens']:,}",
                          cost if row["cost_usd"] is not None else "no price"])
    console().print(DrawnTable(
        "tool context (estimated: result size / 4)" if estimated else f"token usage by {by}",
        columns, cells, justify=["left" if c in (by, "tool") else "right" for c in columns],
        caption="prices: " + "; ".join(prices.sources)))


for _report in REPORTS.values():
    usage.add_command(_report)

#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [usage]
