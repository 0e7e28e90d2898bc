"""CLI: ``rules check | test | list | findings``: Sigma detections over the stored calls
(edge layer; public API only). Needs the `rules` extra (pySigma, bashlex)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import click
import orjson

import store
from store.cli._common import (
    console,
    count,
    db_option,
    emit_json,
    one_line,
    open_store,
    page_limit,
    plural,
    resolve_session,
    time_options,
    visible,
)
from store.cli._common import safe_markup as escape

LEVELS = ("informational", "low", "medium", "high", "critical")
_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan",
          "informational": "dim"}


@click.group()
def rules() -> None:
    """Sigma detections over every agent's tool calls (extra: transcript-store[rules]).

    Shell calls are process_creation events (one per simple command), reads file_access,
    writes file_event, and every call a native ai_agent/tool_call event: see docs/rules.md.
    """


def _load(paths: Sequence[str]) -> list[store.SigmaRule]:
    return store.load_rules(paths)


def _print_findings(found: Sequence[store.Finding]) -> None:
    from rich.table import Table

    if not found:
        return  # the summary line on stderr says "0 findings"
    table = Table(title=plural(len(found), "finding"))
    for column in ("level", "rule", "session", "pos", "call", "agent", "tool", "matched"):
        table.add_column(column, overflow="fold")
    for f in found:
        style = _STYLE.get(f.level, "")
        table.add_row(f"[{style}]{f.level}[/{style}]" if style else f.level,
                      escape(f.title), escape(f.session_id), str(f.position),
                      escape(f.call_id), escape(f.agent or ""),
                      escape(f.tool if f.tool == f.raw_tool else f"{f.tool} ({f.raw_tool})"),
                      escape(one_line(f.matched, 120)))
    console().print(table)


def _warn(message: str) -> None:
    """The prefilter's warning (a session evaluated whole: its index is not trusted)."""
    click.echo(visible(f"warning: {message}"), err=True)


@rules.command("check")
@db_option
@click.option("--rules", "rule_paths", multiple=True, metavar="PATH",
              help="A Sigma rule file or a folder of them (repeatable); default: the "
                   "built-in pack.")
@time_options("Calls made")
@click.option("--agent", help="Only sessions of this agent (claude-code, codex, ...).")
@click.option("--session", help="Only this session.")
@click.option("--min-level", type=click.Choice(LEVELS), default=None,
              help="Run only rules at this level or above.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per finding.")
@click.option("--sarif", "as_sarif", is_flag=True, help="A SARIF 2.1.0 log on stdout.")
@click.option("--fail-level", type=click.Choice(LEVELS), default=None,
              help="Exit 1 when a finding is at this level or above (for CI).")
@click.option("--save", is_flag=True,
              help="Store the findings (table findings; the viewer's findings page).")
@click.option("--no-prefilter", is_flag=True,
              help="Evaluate every call, rather than only those whose text the search index "
                   "finds holds what a rule needs (the same findings, slower).")
def rules_check(db_url: str | None, rule_paths: tuple[str, ...], since: datetime | None,
                until: datetime | None, agent: str | None, session: str | None,
                min_level: str | None, as_json: bool, as_sarif: bool, fail_level: str | None,
                save: bool, no_prefilter: bool) -> None:
    """Evaluate Sigma rules over the stored calls and print the findings."""
    if as_json and as_sarif:
        raise click.UsageError("--json and --sarif are exclusive")
    loaded = _load(rule_paths)
    ruleset = store.RuleSet(loaded, min_level=min_level)
    with open_store(db_url, read_only=not save) as opened:
        if session is not None:
            session = resolve_session(opened, session)
        found = store.check_rules(opened, ruleset, since=since, until=until,
                                  agent=agent, session_id=session,
                                  prefilter=not no_prefilter, warn=_warn)
        saved = store.save_findings(opened, found) if save else None
    if as_sarif:
        report = store.sarif_report(found, ruleset.rules, _version())
        click.echo(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
    elif as_json:
        emit_json(f.to_json() for f in found)
    else:
        _print_findings(found)
    summary = f"{plural(len(found), 'finding')} from {plural(len(ruleset), 'rule')}"
    if saved is not None:
        summary += f"; {saved} saved"
    click.echo(summary, err=True)
    if fail_level is not None and store.level_reached(found, fail_level):
        click.echo(f"failing: a finding is at {fail_level} or above", err=True)
        click.get_current_context().exit(1)


@rules.command("test")
@db_option
@click.argument("rule_file", type=click.Path(dir_okay=False))
@click.option("--limit", type=count(), default=50, show_default=True,
              help="Show at most this many matching calls (0: all).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per matching call.")
@click.option("--no-store", is_flag=True, help="Only validate the rule; read no store.")
def rules_test(db_url: str | None, rule_file: str, limit: int, as_json: bool,
               no_store: bool) -> None:
    """Validate RULE_FILE and show which stored calls it would match."""
    loaded = _load([rule_file])
    for rule in loaded:
        source = "/".join(p for p in (rule.product, rule.category, rule.service) if p)
        click.echo(f"ok: {rule.id} {rule.title} [{rule.level}] ({source or 'any source'})",
                   err=True)
    if no_store:
        return
    with open_store(db_url, read_only=True) as opened:
        found = store.check_rules(opened, loaded)
    wanted = page_limit(limit)
    shown = found if wanted is None else found[:wanted]
    if as_json:
        emit_json(f.to_json() for f in shown)
    else:
        _print_findings(shown)
        if not found:
            click.echo("no stored call matches", err=True)
    if len(shown) < len(found):
        click.echo(f"showing {len(shown)} of {len(found)} matches; --limit 0 for all",
                   err=True)


@rules.command("list")
@click.option("--rules", "rule_paths", multiple=True, metavar="PATH",
              help="Rule files or folders; default: the built-in pack.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per rule.")
def rules_list(rule_paths: tuple[str, ...], as_json: bool) -> None:
    """List the rules (the built-in pack unless --rules)."""
    loaded = _load(rule_paths)
    if as_json:
        emit_json({"rule_id": r.id, "title": r.title, "level": r.level, "tags": list(r.tags),
                   "category": r.category, "product": r.product, "origin": r.origin}
                  for r in loaded)
        return
    from rich.table import Table

    table = Table(title=f"{len(loaded)} rules")
    for column in ("level", "title", "source", "tags"):
        table.add_column(column, overflow="fold")
    for r in loaded:
        table.add_row(r.level, escape(r.title), escape(f"{r.product or ''}/{r.category or ''}"),
                      escape(" ".join(r.tags)))
    console().print(table)


@rules.command("findings")
@db_option
@click.option("--session", help="Only this session.")
@click.option("--min-level", type=click.Choice(LEVELS), default=None)
@click.option("--limit", type=count(), default=100, show_default=True,
              help="At most this many (0: all).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per finding.")
def rules_findings(db_url: str | None, session: str | None, min_level: str | None,
                   limit: int, as_json: bool) -> None:
    """The findings saved by `rules check --save`, most recent call first."""
    levels = LEVELS[LEVELS.index(min_level):] if min_level else None
    with open_store(db_url, read_only=True) as opened:
        if session is not None:
            session = resolve_session(opened, session)
        found = store.load_findings(opened, session_id=session, min_level=levels,
                                    limit=page_limit(limit))
    if as_json:
        emit_json(f.to_json() for f in found)
    else:
        _print_findings(found)
        if not found:
            click.echo("no saved findings (rules check --save stores them)", err=True)


def _version() -> str:
    return str(store.__version__)



# -- rules as imports store (import and watch) -------------------------------------------------

def config_option(function: Any) -> Any:
    """``--config FILE`` (``TRANSCRIPT_STORE_CONFIG``): the TOML configuration of
    :mod:`store.capture.config`."""
    return click.option(
        "--config", "config_file", type=click.Path(path_type=Path, dir_okay=False),
        envvar="TRANSCRIPT_STORE_CONFIG", show_envvar=True,
        help="A TOML configuration: [rules] (on_import, paths, min_level) and, for watch, "
             "[retention] (see docs/rules.md and docs/operations.md).")(function)


def rules_check_option(function: Any) -> Any:
    return click.option(
        "--rules-check", is_flag=True,
        help="Run the rules (the built-in pack, or [rules] paths of --config) over the calls "
             "this stores and save the findings (as [rules] on_import = true).")(function)


def read_config(path: Path | None) -> store.StoreConfig:
    return store.load_config(path) if path is not None else store.StoreConfig()


class RulesOnImport:
    """Checks the calls an import stores: :meth:`mark` before it, :meth:`check` after it
    (findings of the new calls only, saved); inactive unless ``--rules-check`` or
    ``[rules] on_import``."""

    def __init__(self, config: store.StoreConfig, flag: bool) -> None:
        self.active = flag or config.rules.on_import
        self.ruleset: store.RuleSet | None = None
        self._marks: dict[str, int] = {}
        if self.active:  # load (and validate) the rules before anything is stored
            self.ruleset = store.RuleSet(_load(config.rules.paths),
                                         min_level=config.rules.min_level)

    def mark(self, opened: store.TranscriptStore) -> None:
        if self.active:
            self._marks = store.next_positions(opened)

    def check(self, opened: store.TranscriptStore) -> int | None:
        """How many findings the new calls gave (saved); None when inactive."""
        if self.ruleset is None:
            return None
        starts = store.new_calls(self._marks, store.next_positions(opened))
        if not starts:
            return 0
        found = store.check_rules(opened, self.ruleset, starts=starts)
        if found:
            store.save_findings(opened, found)
        return len(found)


#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [rules]
