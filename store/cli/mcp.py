"""CLI: ``mcp``, the read-only MCP server, and ``mcp --install AGENT`` (edge layer; public API,
``store.mcp``).

``transcript-store mcp`` serves the store to agents over the Model Context Protocol (stdio;
``--http`` for streamable HTTP, a bearer token off loopback). Every answer is redacted unless
``--no-redact``. ``--install AGENT`` writes (or ``--print`` prints) the agent's MCP
configuration entry and the instructions snippet instead of serving (docs/mcp.md).
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

import click

import store
from store.cli._common import db_option, open_store

#: The agents ``--install`` knows (store/mcp/agents.py holds their formats).
INSTALL_AGENTS = ("claude-code", "codex", "cursor", "gemini-cli", "vscode", "windsurf")
#: The options of one mode (parameter name, as written): given in another, they would do
#: nothing, so the command says so instead of serving or installing without them.
HTTP_ONLY = (("host", "--host"), ("port", "--port"), ("token", "--token"))
INSTALL_ONLY = (("scope", "--scope"), ("entry_name", "--name"), ("print_only", "--print"),
                ("yes", "--yes"), ("instructions_file", "--instructions"))
SERVING_ONLY = (("http", "--http"), *HTTP_ONLY, ("redact", "--redact/--no-redact"),
                ("patterns", "--redact-pattern"))


@click.command()
@db_option
@click.option("--http", "http", is_flag=True,
              help="Serve streamable HTTP (at http://HOST:PORT/mcp) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind with --http. Anything but loopback requires --token.")
@click.option("--port", type=click.IntRange(1, 65535), default=8766, show_default=True,
              help="Port with --http.")
@click.option("--token", metavar="TOKEN|auto", envvar="TRANSCRIPT_STORE_MCP_TOKEN",
              help="With --http: the bearer token every request must carry ('auto': generate "
                   "one). Required off loopback. Default: $TRANSCRIPT_STORE_MCP_TOKEN.")
@click.option("--redact/--no-redact", default=True, show_default=True,
              help="Replace secrets with [REDACTED:kind] markers in every answer.")
@click.option("--redact-pattern", "patterns", multiple=True, metavar="REGEX",
              help="Also redact this (its group 'secret' only, if it has one). Repeatable.")
@click.option("--install", "install", type=click.Choice(INSTALL_AGENTS), metavar="AGENT",
              help=f"Add this server to AGENT's MCP configuration instead of serving: "
                   f"{', '.join(INSTALL_AGENTS)}.")
@click.option("--scope", type=click.Choice(["user", "project"]), default="user",
              show_default=True,
              help="With --install: the user's configuration, or the project's (the current "
                   "folder: .mcp.json, .cursor/mcp.json, .gemini/settings.json, "
                   ".codex/config.toml, .vscode/mcp.json).")
@click.option("--name", "entry_name", default="transcript-store", show_default=True,
              help="With --install: the server's name in the configuration.")
@click.option("--print", "print_only", is_flag=True,
              help="With --install: print the entry, the command that adds it and the "
                   "instructions snippet; write nothing.")
@click.option("--yes", "-y", is_flag=True,
              help="With --install: replace an entry of the same name without asking.")
@click.option("--instructions", "instructions_file", type=click.Path(dir_okay=False),
              metavar="FILE",
              help="With --install: also add the instructions snippet (when to search the "
                   "archive) to FILE (AGENTS.md, CLAUDE.md, GEMINI.md ...), once.")
def mcp(db_url: str | None, http: bool, host: str, port: int, token: str | None,
        redact: bool, patterns: tuple[str, ...], install: str | None, scope: str,
        entry_name: str, print_only: bool, yes: bool, instructions_file: str | None) -> None:
    """Serve the store read-only to agents over MCP (stdio, or --http).

    Tools: search_calls, get_session, sessions_touching_file, list_sessions, tool_usage,
    usage_cost, findings, lineage; resources transcript://session/ID; prompts. Answers are
    small pages with long texts cut, and redacted unless --no-redact. docs/mcp.md.
    """
    _check_mode(install, http)
    if install is not None:
        _install(install, scope, entry_name, db_url, print_only, yes, instructions_file)
        return
    redactor = _redactor(redact, patterns)
    if http:
        if token == "auto":
            token = secrets.token_urlsafe(24)
            click.echo(f"bearer token: {token}", err=True)
        from store.core.access import check_access
        from store.mcp.server import serve_http

        try:
            check_access(host, token)
        except store.ConfigurationError as exc:
            raise click.UsageError(str(exc)) from None
    opened = open_store(db_url, read_only=True)
    try:
        if http:
            serve_http(opened, redactor, host=host, port=port, token=token)
        else:
            from store.mcp.server import serve_stdio

            serve_stdio(opened, redactor)
    except KeyboardInterrupt:
        pass
    finally:
        opened.close()


def _check_mode(install: str | None, http: bool) -> None:
    """A usage error for an option written on the command line that the mode ignores
    (``--host`` without ``--http``, ``--name`` without ``--install``, ``--no-redact`` with
    ``--install``: the installed entry would not carry it). The token's environment variable
    is not an option written: it is read where it applies."""
    from click.core import ParameterSource

    context = click.get_current_context()

    def written(options: tuple[tuple[str, str], ...]) -> str:
        return ", ".join(shown for name, shown in options if context.get_parameter_source(name)
                         is ParameterSource.COMMANDLINE)

    if install is not None:
        wrong, where = written(SERVING_ONLY), "when serving, not with --install"
    else:
        wrong, where = written(INSTALL_ONLY), "with --install only"
        if not wrong and not http:
            wrong, where = written(HTTP_ONLY), "with --http only"
    if wrong:
        raise click.UsageError(f"{wrong} {'apply' if ', ' in wrong else 'applies'} {where}")


def _redactor(redact: bool, patterns: tuple[str, ...]) -> store.Redactor | None:
    if not redact:
        return None
    try:
        return store.Redactor(patterns)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--redact-pattern") from exc


def _install(agent: str, scope: str, name: str, db_url: str | None, print_only: bool,
             yes: bool, instructions_file: str | None) -> None:
    from store.mcp.install import install_entry, install_instructions, plan

    planned = plan(agent, scope=scope, name=name, db_url=db_url, home=Path.home(),
                   project=Path.cwd())
    if print_only:
        click.echo(planned.describe())
        return
    try:
        written = install_entry(planned, replace=yes)
    except store.EntryExistsError as exc:
        if not sys.stdin.isatty() or not click.confirm(f"{exc} Replace it?", default=False,
                                                       err=True):
            raise click.ClickException(f"{exc} Nothing written (--yes replaces it).") from None
        written = install_entry(planned, replace=True)
    click.echo(f"{agent}: added MCP server {name!r} to {written}")
    if instructions_file is not None:
        added = install_instructions(Path(instructions_file))
        click.echo(f"instructions {'added to' if added else 'already in'} {instructions_file}")
    elif planned.hint:
        click.echo(planned.hint)


#: The commands this module adds to ``transcript-store`` (see :mod:`store.cli.main`).
COMMANDS: list[click.Command] = [mcp]
