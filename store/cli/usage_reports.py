"""CLI: the ``usage`` reports as ccusage prints them: ``usage daily | weekly | monthly |
session | project | agent | model`` (edge layer; public API only).

A row per period or key with a Models column (the names shortened as ccusage's tables
shorten them: :func:`short_model`), ``--breakdown`` rows per model, a Total row, costs to the
cent in tables (exact in ``--json``), and the sessions whose files recorded no usage named
below the table, so that a total is never taken for the whole. A table wider than the
terminal is ccusage's compact one (:data:`WIDE_ONLY` left out, and said so; ``--compact``:
always), its counts and costs at their whole width and the other columns narrowed
(:func:`store.cli.drawn.kept_widths`). A subagent's usage
counts under its parent session (``--own-only``: under its own). ``--json`` writes one
document shaped like ccusage's (``{"daily": [...], "totals": {...}}``) in this project's
snake_case names (docs/vocabulary.md has the mapping).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import click

import store
from store.cli._common import (
    console,
    db_option,
    emit_json,
    local_time,
    open_store,
    scope_options,
    time_options,
    visible,
)
from store.cli._common import safe_markup as escape
from store.cli.drawn import draw_table, kept_widths, natural_widths
from store.cli.plain import note_lines

__all__ = ["REPORTS", "money", "report_document"]

F = TypeVar("F", bound=Callable[..., Any])

#: Report name -> (the library's ``by``, the JSON document's list key, the row key, the
#: table's first column). The list keys are ccusage's where it has the report.
KINDS: dict[str, tuple[str, str, str, str]] = {
    "daily": ("day", "daily", "period", "Date"),
    "weekly": ("week", "weekly", "period", "Week (Monday)"),
    "monthly": ("month", "monthly", "period", "Month"),
    "session": ("session", "sessions", "session_id", "Session"),
    "project": ("project", "projects", "project", "Project"),
    "agent": ("agent", "agents", "agent", "Agent"),
    "model": ("model", "models", "model", "Model"),
}
#: Session ids named per agent below a table (the JSON names them all).
SHOWN_IDS = 3


def money(value: float) -> str:
    """A cost in a table: dollars to the cent (``$0.00`` for less than half a cent)."""
    return f"${value:,.2f}"


def _counts(t: store.UsageTotals) -> dict[str, Any]:
    return {"input_tokens": t.input_tokens, "output_tokens": t.output_tokens,
            "cache_creation_tokens": t.cache_creation_tokens,
            "cache_read_tokens": t.cache_read_tokens, "reasoning_tokens": t.reasoning_tokens,
            "total_tokens": t.total_tokens, "responses": t.responses,
            "cost_usd": t.cost_usd if t.priced else None}


def _row(report: str, t: store.UsageTotals) -> dict[str, Any]:
    _, _, key, _ = KINDS[report]
    row: dict[str, Any] = {key: t.key, **_counts(t), "models_used": sorted(t.models),
                           "unpriced_models": sorted(t.unpriced_models)}
    row["model_breakdowns"] = [
        {"model_name": name, **_counts(part)}
        for name, part in sorted(t.by_model.items(), key=lambda item: (-item[1].cost_usd,
                                                                       item[0]))]
    if report == "session":
        row["last_activity"] = t.last_at
        row["subagent_sessions"] = sorted(t.rolled_up)
    return row


def _totals(rows: list[store.UsageTotals]) -> dict[str, Any]:
    keys = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
            "reasoning_tokens", "responses")
    out: dict[str, Any] = {k: sum(getattr(t, k) for t in rows) for k in keys}
    out["total_tokens"] = sum(t.total_tokens for t in rows)
    priced = [t for t in rows if t.priced]
    out["cost_usd"] = sum(t.cost_usd for t in priced) if priced else None
    out["unpriced_models"] = sorted(set().union(*(t.unpriced_models for t in rows)))
    return out


def report_document(report: str, rows: list[store.UsageTotals],
                    missing: list[store.MissingUsage]) -> dict[str, Any]:
    """The ``--json`` document of a report: its rows under ccusage's list key, ``totals``,
    and ``missing_usage`` (per agent, the sessions with no recorded usage)."""
    return {KINDS[report][1]: [_row(report, t) for t in rows], "totals": _totals(rows),
            "missing_usage": [{"agent": m.agent, "sessions": len(m.session_ids),
                               "session_ids": list(m.session_ids)} for m in missing]}


def _report_options(function: F) -> F:
    function = click.option("--json", "as_json", is_flag=True,
                            help="One JSON document shaped like ccusage's --json (its keys in "
                                 "snake_case: docs/vocabulary.md).")(function)
    function = click.option("--own-only", is_flag=True,
                            help="A subagent's usage under its own session, not under its "
                                 "parent's (session, project and agent reports).")(function)
    function = click.option("--breakdown", "-b", is_flag=True,
                            help="A row per model under each row.")(function)
    function = click.option(
        "--compact", is_flag=True,
        help="Leave out the Cache Create, Cache Read and Total Tokens columns (as when the "
             "table is wider than the terminal; ccusage's compact mode).")(function)
    function = click.option(
        "--prices", "prices_file", type=click.Path(path_type=Path, dir_okay=False),
        help="A price file in LiteLLM's model_prices_and_context_window.json format, over "
             "the shipped table (also: TRANSCRIPT_STORE_PRICES).")(function)
    function = click.option("--session", "session_id", metavar="ID",
                            help="Only this session (an id or a unique prefix).")(function)
    function = scope_options(function)
    function = time_options("Usage recorded")(function)
    return db_option(function)


def _make(report: str) -> click.Command:
    by, _, _, first = KINDS[report]

    @click.command(report)
    @_report_options
    def command(db_url: str | None, since: datetime | None, until: datetime | None,
                agent: str | None, cwd: str | None, session_id: str | None,
                prices_file: Path | None, breakdown: bool, compact: bool, own_only: bool,
                as_json: bool) -> None:
        from store.audit.lite_costs import lite_usage_report
        from store.db.schema.revisions import default_url

        prices = store.load_prices(prices_file)
        found = lite_usage_report(db_url or default_url(), by=by, table=prices, since=since,
                                  until=until, agent=agent, cwd=cwd, session=session_id,
                                  rollup=not own_only)
        if found is not None:  # (an SQLite file at head, on the stdlib driver)
            rows, missing = found
        else:
            with open_store(db_url, read_only=True) as opened:
                if session_id is not None:
                    from store.cli._common import resolve_session

                    session_id = resolve_session(opened, session_id)
                rows = store.usage_report(opened, by=by, since=since, until=until,
                                          agent=agent, cwd=cwd, session_id=session_id,
                                          prices=prices, rollup=not own_only)
                missing = store.sessions_without_usage(opened, since=since, until=until,
                                                       agent=agent, cwd=cwd,
                                                       session_id=session_id)
        if not as_json:  # (the table names the models without a price below it)
            _print(report, first, rows, missing, prices, breakdown, compact)
            return
        emit_json([report_document(report, rows, missing)])
        for model in sorted(set().union(*(t.unpriced_models for t in rows)) if rows else ()):
            click.echo(f"no price for model {model!r}: its tokens are counted, its cost is not "
                       "(add it with --prices FILE)", err=True)

    command.help = HELP[report] + (
        "\n\nA row per key with its models, the four token counts and the estimated cost "
        "(to the cent; exact in --json), --breakdown rows per model, a Total row, and below "
        "the table the sessions whose files recorded no usage (not in the counts). A "
        "subagent's usage counts under its parent session unless --own-only. A table wider "
        "than the terminal leaves out the cache and total token columns (and the session "
        "report's subagent count), as ccusage's compact mode does (--compact: always), and "
        "says so below it; the counts and costs are never cut.")
    command.short_help = HELP[report]
    return command


#: Each report's one line (ccusage's name where it has the report).
HELP = {
    "daily": "Tokens and cost per UTC day (ccusage daily).",
    "weekly": "Tokens and cost per ISO week, by its Monday (ccusage weekly).",
    "monthly": "Tokens and cost per month (ccusage monthly).",
    "session": "Tokens and cost per session, subagents in their parent's (ccusage session).",
    "project": "Tokens and cost per project: the sessions' folder (cwd).",
    "agent": "Tokens and cost per agent (claude-code, codex ...).",
    "model": "Tokens and cost per model.",
}


def _cost(t: store.UsageTotals | dict[str, Any]) -> str:
    if isinstance(t, dict):
        cost, unpriced = t["cost_usd"], t["unpriced_models"]
    else:
        cost, unpriced = (t.cost_usd if t.priced else None), t.unpriced_models
    if cost is None:
        return "no price"
    return money(cost) + ("*" if unpriced else "")


#: The columns a compact table leaves out (ccusage's compact mode keeps the key, Models,
#: Input, Output, the cost and Last Activity; the session report's subagent count too).
WIDE_ONLY = ("Subagents", "Cache Create", "Cache Read", "Total Tokens")
#: Said below a compact table (ccusage: "Expand terminal width to see cache metrics and
#: total tokens").
COMPACT_NOTE = ("compact: {left_out} left out to fit {width} columns (a wider terminal or "
                "--json has them)")


def _print(report: str, first: str, rows: list[store.UsageTotals],
           missing: list[store.MissingUsage], prices: store.PriceTable,
           breakdown: bool, compact: bool = False) -> None:
    out = console()
    if not rows:
        out.print("no usage recorded in this range")
    else:
        columns = [first, *(["Models"] if report != "model" else []), "Input", "Output",
                   "Cache Create", "Cache Read", "Total Tokens", "Cost (USD)"]
        if report == "session":
            columns[1:1] = ["Last Activity", "Subagents"]
        lines: list[tuple[list[str], str | None]] = []  # (cells as plain text, row style)
        listed: dict[frozenset[str], str] = {}  # (a year of sessions: the same few sets)
        for t in rows:
            cells = [visible(t.key)]
            if report == "session":
                cells += [local_time(t.last_at), f"{len(t.rolled_up):,}" if t.rolled_up else ""]
            if report != "model":
                models = frozenset(t.models)
                if models not in listed:
                    listed[models] = visible("\n".join(
                        f"- {m}" for m in sorted({short_model(m) for m in models})))
                cells.append(listed[models])
            lines.append(([*cells, *_numbers(t), _cost(t)], None))
            if breakdown and report != "model":
                for name, part in sorted(t.by_model.items(),
                                         key=lambda item: (-item[1].cost_usd, item[0])):
                    pad = ["", ""] if report == "session" else []
                    lines.append(([visible(f"  └ {short_model(name)}"), *pad, "", *_numbers(part),
                                   _cost(part)], "dim"))
        totals = _totals(rows)
        total = (["Total", *([""] * (len(columns) - 7)),  # the counts and the cost: 6
                  *(f"{totals[k]:,}" for k in ("input_tokens", "output_tokens",
                                               "cache_creation_tokens", "cache_read_tokens",
                                               "total_tokens")), _cost(totals)], "bold")
        natural = natural_widths(columns, [*lines, total])
        compact = compact or sum(natural) + 3 * len(natural) + 1 > out.width
        left_out = [c for c in columns if c in WIDE_ONLY]
        if compact:  # (the same cells, the wide-only columns left out)
            kept = [i for i, c in enumerate(columns) if c not in WIDE_ONLY]
            columns = [columns[i] for i in kept]
            natural = [natural[i] for i in kept]
            lines = [([cells[i] for i in kept], style) for cells, style in lines]
            total = ([total[0][i] for i in kept], total[1])
        title = f"token usage by {first.split()[0].lower()}"
        caption = "prices: " + "; ".join(prices.sources)
        justify = ["left" if c in (first, "Models", "Last Activity") else "right"
                   for c in columns]
        # Still too wide: the counts and costs keep their widths (never cut), the key,
        # time and models give up theirs (wrapped at words, else cut).
        widths = kept_widths(natural, out.width, [side == "right" for side in justify])
        drawn = draw_table(out, title, columns, justify, lines, caption=caption, total=total,
                           widths=widths, fit="wrap")
        if drawn is not None:
            out.print(drawn)
        else:
            from rich.table import Table
            from rich.text import Text

            table = Table(title=title, caption=caption)
            for column, side in zip(columns, justify, strict=True):
                table.add_column(column, justify=side)  # type: ignore[arg-type]
            for cells, style in lines:
                table.add_row(*(Text(cell) for cell in cells), style=style)
            table.add_section()
            table.add_row(*(Text(cell) for cell in total[0]), style=total[1])
            out.print(table)
        if compact:
            out.print(escape(note_lines(COMPACT_NOTE.format(
                left_out=", ".join(left_out[:-1]) + " and " + left_out[-1],
                width=out.width), out.width)))
        if totals["unpriced_models"]:
            out.print("* no price for " + escape(", ".join(totals["unpriced_models"]))
                      + ": their tokens are counted, their cost is not (add them with "
                        "--prices FILE)")
    for m in missing:
        ids = ", ".join(sid[:12] for sid in m.session_ids[:SHOWN_IDS])
        more = f" and {len(m.session_ids) - SHOWN_IDS} more" if len(m.session_ids) > SHOWN_IDS \
            else ""
        noun = "session" if len(m.session_ids) == 1 else "sessions"
        out.print(escape(f"no usage recorded: {len(m.session_ids)} {m.agent} {noun} "
                         f"({ids}{more}), not in the counts above"))


#: ccusage's short model names (``formatModelName`` in its ``packages/terminal/src/table.ts``):
#: a pattern and the name it makes of its groups, the first that matches; any other name whole.
_SHORT_MODELS = [(re.compile(pattern, re.ASCII), form) for pattern, form in (
    (r"^claude-(\d+)-(\d+)-(\w+)-(\d{8})$", "{2}-{0}-{1}"),  # claude-3-5-haiku-20241022
    (r"^claude-(\w+)-([\d-]+)-(\d{8})-fast$", "{0}-{1}-fast"),
    (r"^claude-(\w+)-([\d-]+)-(\d{8})$", "{0}-{1}"),  # claude-sonnet-4-5-20250929
    (r"^claude-(\w+)-([\d.-]+)-fast$", "{0}-{1}-fast"),
    (r"^claude-(\w+)-([\d.-]+)$", "{0}-{1}"))]  # claude-opus-4-5
_PROVIDER = re.compile(r"^(?:anthropic/|anthropic\.)(claude-.+)$", re.ASCII)


@cache  # (a year of sessions names the same few models 9,000 times)
def short_model(name: str) -> str:
    """A model's name as ccusage's tables print it: ``claude-sonnet-4-5-20250929`` ->
    ``sonnet-4-5``, ``anthropic/claude-opus-4-6`` -> ``opus-4-6``, ``[pi] `` kept in front;
    any other name as it is (``--json`` has every name whole)."""
    if name.startswith("[pi] "):
        return "[pi] " + short_model(name[5:])
    provider = _PROVIDER.match(name)
    if provider is not None:
        return short_model(provider.group(1))
    for pattern, form in _SHORT_MODELS:
        found = pattern.match(name)
        if found is not None:
            return form.format(*found.groups())
    return name


def _numbers(t: store.UsageTotals) -> list[str]:
    return [f"{t.input_tokens:,}", f"{t.output_tokens:,}", f"{t.cache_creation_tokens:,}",
            f"{t.cache_read_tokens:,}", f"{t.total_tokens:,}"]


#: Report name -> its command, in the order ``usage --help`` lists them.
REPORTS: dict[str, click.Command] = {name: _make(name) for name in KINDS}
