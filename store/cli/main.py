"""The command line: thin, calling only the public API in ``store``.

``transcript-store`` (or ``python -m store``). Every command takes ``--db URL`` (default:
``TRANSCRIPT_STORE_URL``, else an SQLite file in the user's data directory). Errors raised on
purpose (``StoreError``) print as one line, ``error: <message>``, and exit 1, unless
``--traceback`` asks for the traceback; usage errors exit 2.

Each command group lives in its own module and lists its commands in ``COMMANDS``; this
module only builds the root group, which loads a command's module when it is used.
"""

from __future__ import annotations

import importlib
import sys

import click

from store.cli._common import StoreGroup, configure_logging, quiet_stdout

#: The module of each command, imported when the command runs (or ``--help`` lists it): a
#: command's start-up pays for its own module only. A test keeps this map and the modules'
#: ``COMMANDS`` lists the same.
COMMAND_MODULES: dict[str, str] = {
    "db": "db", "demo": "demo", "sessions": "sessions", "verify": "sessions",
    "import": "imports", "export": "export", "resume": "export", "tools": "audit", "calls": "audit",
    "audit": "audit", "aliases": "aliases", "serve": "serve", "completion": "completion",
    "watch": "watch", "capture": "watch", "usage": "usage", "rules": "rules",
    "prune": "trust", "mcp": "mcp", "search": "search", "log": "log",
}


#: The root's own options, also taken after the command (``sessions list --no-color``): no
#: command has an option of these names, so moving them in front changes nothing else.
GLOBAL_FLAGS = frozenset({"--traceback", "--no-color", "-v", "-vv", "-vvv", "--verbose"})


class RootGroup(StoreGroup):
    """The root command: its commands are loaded on first use (see ``COMMAND_MODULES``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """The global flags wherever they stand before a ``--``, moved in front."""
        end = args.index("--") if "--" in args else len(args)
        moved = [a for a in args[:end] if a in GLOBAL_FLAGS]
        if moved and args[:len(moved)] != moved:
            rest = [a for a in args[:end] if a not in GLOBAL_FLAGS]
            args = [*moved, *rest, *args[end:]]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if module is None:
            return None
        commands = importlib.import_module(f"store.cli.{module}").COMMANDS
        return next((c for c in commands if c.name == cmd_name), None)


@click.group(cls=RootGroup, context_settings={"help_option_names": ["-h", "--help"]})
# The version is read from the installed metadata only when --version is asked for.
@click.version_option(None, "-V", "--version", package_name="transcript-store",
                      prog_name="transcript-store")
@click.option("--traceback", is_flag=True, help="Show the full traceback on errors.")
@click.option("-v", "--verbose", count=True,
              help="Log what the package does to stderr and say more (-v: migrations, "
                   "retries, import progress and problems, each file not imported; -vv: also "
                   "debug, such as viewer requests). Also: TRANSCRIPT_STORE_LOG=debug|info|"
                   "warning|error.")
@click.option("--no-color", is_flag=True, help="No colour in the output (also: NO_COLOR=1).")
@click.pass_context
def cli(ctx: click.Context, traceback: bool, verbose: int, no_color: bool) -> None:
    """Keep LLM agent session transcripts: messages, tool calls, results.

    Shell completion (bash, zsh, fish): see `transcript-store completion --help`.
    """
    ctx.meta["traceback"] = traceback
    ctx.meta["verbose"] = verbose
    ctx.meta["no_color"] = no_color
    if no_color:
        ctx.color = False
    configure_logging(verbose)



def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. A reader that closed the pipe (``| head``) ends the
    command quietly with status 0, also when it closed it before the last flush."""
    try:
        cli.main(args=argv, prog_name="transcript-store")
    except SystemExit:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            quiet_stdout()
            raise SystemExit(0) from None
        raise


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
