"""CLI: ``export`` a session as provider-ready history (edge layer; public API only)."""

from __future__ import annotations

import sys

import click
import orjson

import store
from store.cli import cli, db_option, open_store


@cli.command("export")
@db_option
@click.argument("session_id")
@click.option("--to", "target", type=click.Choice(store.TARGETS), required=True,
              help="The provider whose request history to write.")
@click.option("--repair/--no-repair", "do_repair", default=False,
              help="Repair first (dangling calls, orphan and duplicate results, invalid "
                   "arguments, ids the target refuses); the report goes to stderr.")
@click.option("--drop-dangling", is_flag=True,
              help="With --repair: drop calls without a result instead of synthesizing one.")
@click.option("--last-turns", type=click.IntRange(1), help="Only the last N whole turns.")
@click.option("--tool", "tools", multiple=True,
              help="A tool of the current tool set (repeatable): calls to others are reported.")
def export_command(db_url: str | None, session_id: str, target: store.Target, do_repair: bool,
                   drop_dangling: bool, last_turns: int | None, tools: tuple[str, ...]) -> None:
    """Write SESSION_ID as TARGET's request history (JSON) on stdout."""
    with open_store(db_url, read_only=True) as opened:
        transcript = opened.load(session_id, last_turns=last_turns)
        aliases = opened.aliases()
    if do_repair:
        repaired = store.repair(transcript, target,
                                dangling="drop" if drop_dangling else "synthesize",
                                tools=tools or None, aliases=aliases)
        for change in repaired.changes:
            where = f"message {change.position}" if change.position is not None else "-"
            click.echo(f"repair: {change.kind} ({where}): {change.detail}", err=True)
        messages = list(repaired.messages)
    else:
        messages = [stored.message for stored in transcript]
    payload = store.render(messages, target)
    sys.stdout.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode() + "\n")
