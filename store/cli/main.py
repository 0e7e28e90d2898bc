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

from store.cli._common import StoreGroup, configure_logging
from store.cli.plain import quiet_stdout
from store.core.collecting import fewer_collections

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


#: The first paragraph of each command's help: ``transcript-store --help`` lists the commands
#: from these without importing every command's module (that cost half of its start-up). A
#: test keeps them equal to the commands' own.
COMMAND_HELP: dict[str, str] = {
    "db": "Schema administration: upgrade, downgrade, current revision, drift check, Citus "
          "distribution.",
    "demo": "Store the bundled example sessions (or PATHS, one session per file) and print "
            "them.",
    "sessions": "List, show, fork, rename, tag, delete, erase and hold stored sessions.",
    "verify": "Check that what is stored reads back as written, that every message's "
              "chained digest matches, that the search index, argument views and secret "
              "digests are what the transcript gives, and the transparency log's leaves; "
              "exit 1 on errors (each session's first bad position). Changes nothing.",
    "import": "Import agent session files and directories (recursively, *.json and *.jsonl, "
              "and the agents' databases crush.db, opencode.db, sessions.db).",
    "export": "Write sessions to stdout: one as a provider's request history (JSON), or "
              "canonical JSONL of messages (``--to jsonl``), or CSV of calls (``--to csv``). "
              "``--redact`` applies to every target. An option that cannot apply to the "
              "target is refused.",
    "resume": "Write a stored session as the request history to resume it with a provider "
              "(stdout), or as an agent's own session file to continue it in that agent.",
    "tools": "Tool usage across every session.",
    "calls": "Find any tool call ever made, and show one.",
    "audit": "Schema audit of stored calls; search-index upkeep.",
    "aliases": "The tool vocabulary: which recorded tool names count as which tool.",
    "serve": "Serve a read-only web viewer of the store: sessions, transcripts, tool usage, "
             "search. With --redact every page and download shows secrets as "
             "[REDACTED:kind] markers.",
    "completion": "Print the completion script for SHELL (commands, options, choices).",
    "watch": "Keep an archive of the agents' sessions as they are written.",
    "capture": "Store the session an agent's hook names (Claude Code SessionEnd / Stop "
               "hooks).",
    "usage": "Tokens (input, output, cache creation, cache read) and estimated cost.",
    "rules": "Sigma detections over every agent's tool calls (extra: "
             "transcript-store[rules]).",
    "prune": "Erase old sessions (as `sessions erase` does); held sessions are left alone.",
    "mcp": "Serve the store read-only to agents over MCP (stdio, or --http).",
    "search": "Find the messages whose text holds TEXT: prompts, answers, reasoning, tool "
              "arguments and results, best match first (one row per message: the part that "
              "matched best).",
    "log": "The transparency log: signed checkpoints, inclusion and consistency proofs an "
           "auditor checks offline with only the public key (docs/trust.md).",
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands with their short help, from ``COMMAND_HELP`` (no module imported)."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        with formatter.section("Commands"):
            formatter.write_dl([(name, click.Command(name, help=COMMAND_HELP[name])
                                 .get_short_help_str(limit)) for name in names])

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
        # (a command's rows and cells are made and dropped in bulk, rarely in cycles:
        # ``usage session`` at 10^6 messages 2.00 -> 1.85 G instructions; docs/decisions.md)
        with fewer_collections():
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
