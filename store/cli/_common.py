"""What the commands share: the error-handling group, ``--db``, output helpers, opening.

Every command module imports from here (never from :mod:`store.cli.main`), and lists its
top-level commands in ``COMMANDS``; :mod:`store.cli.main` adds them to the root group, so the
imports point one way: main -> command modules -> _common -> the public API.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import click
import orjson
from rich.console import Console

import store

F = TypeVar("F", bound=Callable[..., Any])


class StoreGroup(click.Group):
    """A group that turns ``StoreError`` into one line and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except store.StoreError as exc:
            if ctx.find_root().meta.get("traceback"):
                raise
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)


def db_option(function: F) -> F:
    """``--db URL`` on a command."""
    return click.option(
        "--db", "db_url", metavar="URL", envvar="TRANSCRIPT_STORE_URL",
        help="Database URL (sqlite:///path or postgresql+psycopg://...). "
             "Default: $TRANSCRIPT_STORE_URL, else a file in your data directory.",
    )(function)


def console() -> Console:
    """A console for human output (tables, transcripts); wide when piped, so that tables
    do not fold ids and names into pieces. No colour with ``--no-color`` or ``NO_COLOR``."""
    plain = no_color()
    return Console(soft_wrap=False, width=None if sys.stdout.isatty() else 200,
                   no_color=plain or None, color_system=None if plain else "auto")


def one_line(text: str | None, limit: int = 60) -> str:
    """``text`` as one table cell line: its first non-blank line, cut at ``limit`` characters,
    with an ellipsis when anything was left out (``calls show`` prints the whole)."""
    if not text:
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    first = lines[0].strip() if lines else ""
    if len(first) > limit:
        return first[:limit - 1] + "…"
    return first + " …" if len(lines) > 1 else first


def no_color() -> bool:
    """Whether colour is off: ``--no-color``, or ``NO_COLOR`` set to anything non-empty
    (https://no-color.org)."""
    context = click.get_current_context(silent=True)
    if context is not None and context.find_root().meta.get("no_color"):
        return True
    return bool(os.environ.get("NO_COLOR"))


def configure_logging(verbosity: int) -> None:
    """``-v``: the package's log (logger ``store``) at INFO on stderr; ``-vv``: DEBUG (viewer
    requests, ...). Without it the package is silent."""
    if verbosity <= 0:
        return
    logger = logging.getLogger("store")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbosity > 1 else logging.INFO)


def verbosity() -> int:
    """How many ``-v`` the root command was given."""
    context = click.get_current_context(silent=True)
    return int(context.find_root().meta.get("verbose", 0)) if context is not None else 0


def emit_json(rows: Iterable[Mapping[str, Any]]) -> None:
    """``--json`` output: one compact JSON object per line."""
    for row in rows:
        click.echo(orjson.dumps(row, default=str).decode())


def open_store(db_url: str | None, *, read_only: bool = False) -> store.TranscriptStore:
    """Open the store for a command. Read-only commands open read-only when the database
    exists, so that auditors need no write access."""
    if read_only:
        try:
            return store.TranscriptStore.open(db_url, read_only=True)
        except store.ConfigurationError:
            pass  # no database yet: open normally, which creates it at head
    return store.TranscriptStore.open(db_url)
