"""CLI: ``aliases list | add | remove``: the tool vocabulary (edge layer; public API only)."""

from __future__ import annotations

import click

from store.cli._common import (
    CommandGroup,
    console,
    db_option,
    emit_json,
    open_store,
    visible,
)
from store.cli.drawn import DrawnTable


@click.group(cls=CommandGroup)
def aliases() -> None:
    """The tool vocabulary: which recorded tool names count as which tool.

    Seeded with every major agent's names (Claude Code, Codex, Gemini CLI, OpenHands, Cline,
    the Agents SDK, Kward) mapped to one canonical set (bash, read, write, edit, patch, glob,
    grep, list, web_fetch, web_search, todo, task ...). Aliases apply when sessions are read
    and audited: a change regroups every earlier call, and the recorded names stay queryable
    (`calls search --raw-name`).
    """


@aliases.command("list")
@db_option
@click.option("--agent", help="Only aliases scoped to this agent ('' for global ones).")
@click.option("--tool", "--name", "current", help="Only aliases giving this (canonical) tool name.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per alias.")
def aliases_list(db_url: str | None, agent: str | None, current: str | None,
                 as_json: bool) -> None:
    """List the aliases (global ones, then those scoped to one agent)."""
    from store.audit.lite_scope import lite_aliases
    from store.db.reading.lite import read_lite
    from store.db.schema.revisions import default_url

    # (on the database's own driver, as the stdlib readers read it; else the store)
    table = read_lite(db_url or default_url(), None, lambda conn, _: lite_aliases(conn))
    if table is None:
        with open_store(db_url, read_only=True) as opened:
            table = opened.aliases()
    rows = [(a, raw, cur) for a, raw, cur in table.rows()
            if (agent is None or (a or "") == agent) and (current is None or cur == current)]
    if as_json:
        emit_json({"agent": a, "raw_tool": raw, "tool": cur} for a, raw, cur in rows)
        return
    # (drawn as rich's table draws it, in one pass: rich's took ~0.2 s for the ~600 seeded)
    console().print(DrawnTable(f"{len(rows)} aliases", ("agent", "raw name", "name"),
                               [(visible(a or "(all)"), visible(raw), visible(cur))
                                for a, raw, cur in rows]))


@aliases.command("add")
@db_option
@click.argument("raw_name")
@click.argument("name")
@click.option("--agent", help="Only for sessions of this agent (claude-code, codex, "
                              "gemini-cli, kward ...): wins over a global alias.")
def aliases_add(db_url: str | None, raw_name: str, name: str, agent: str | None) -> None:
    """Count calls recorded as RAW_NAME as NAME from now on (earlier calls too)."""
    with open_store(db_url) as opened:
        opened.add_alias(raw_name, name, agent=agent)
    scope = f" (sessions of {agent})" if agent else ""
    click.echo(f"{raw_name} -> {name}{scope}")


@aliases.command("remove")
@db_option
@click.argument("raw_name")
@click.option("--agent", help="The alias scoped to this agent (default: the global one).")
def aliases_remove(db_url: str | None, raw_name: str, agent: str | None) -> None:
    """Remove the alias of RAW_NAME: its calls count under the recorded name again."""
    with open_store(db_url) as opened:
        opened.remove_alias(raw_name, agent=agent)
    scope = f" (sessions of {agent})" if agent else ""
    click.echo(f"removed {raw_name}{scope}")


#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [aliases]
