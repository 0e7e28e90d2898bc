"""The command line: thin, calling only the public API in ``store``.

``transcript-store`` (or ``python -m store``). Every command takes ``--db URL`` (default:
``TRANSCRIPT_STORE_URL``, else an SQLite file in the user's data directory). Errors raised on
purpose (``StoreError``) print as one line, ``error: <message>``, and exit 1, unless
``--traceback`` asks for the traceback; usage errors exit 2.

Each command group lives in its own module and lists its commands in ``COMMANDS``; this
module only builds the root group and adds them.
"""

from __future__ import annotations

import sys

import click

import store.cli.aliases as aliases
import store.cli.audit as audit
import store.cli.completion as completion
import store.cli.db as db
import store.cli.demo as demo
import store.cli.export as export
import store.cli.imports as imports
import store.cli.serve as serve
import store.cli.sessions as sessions
from store.cli._common import StoreGroup, configure_logging


@click.group(cls=StoreGroup, context_settings={"help_option_names": ["-h", "--help"]})
# The version is read from the installed metadata only when --version is asked for.
@click.version_option(None, "-V", "--version", package_name="transcript-store",
                      prog_name="transcript-store")
@click.option("--traceback", is_flag=True, help="Show the full traceback on errors.")
@click.option("-v", "--verbose", count=True,
              help="Log what the package does to stderr (-v: migrations, retries, import "
                   "progress and problems; -vv: also debug, such as viewer requests).")
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



for _module in (db, demo, sessions, imports, export, audit, aliases, serve, completion):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="transcript-store")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
