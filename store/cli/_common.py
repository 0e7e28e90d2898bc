"""What the commands share: the error-handling group, ``--db``, output helpers, opening.

Every command module imports from here (never from :mod:`store.cli.main`), and lists its
top-level commands in ``COMMANDS``; :mod:`store.cli.main` loads them into the root group on
first use, so the imports point one way: main -> command modules -> _common -> the public API.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click
import orjson

import store
from store.core.depth import deep_dumps

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


class StoreGroup(click.Group):
    """A group that turns ``StoreError`` (and a file it cannot read or write: ``OSError``) into
    one line and exit status 1, and an argument that
    is not text (bytes that are not UTF-8 reach Python as lone surrogates) into a usage error
    (exit 2)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except store.StoreError as exc:
            if ctx.find_root().meta.get("traceback"):
                raise
            click.echo(visible(store.hide_passwords(f"error: {exc}")), err=True)
            ctx.exit(1)
        except OSError as exc:  # a file named on the command line cannot be read or written
            if ctx.find_root().meta.get("traceback"):
                raise
            where = f"{exc.filename}: " if exc.filename is not None else ""
            click.echo(visible(f"error: {where}{exc.strerror or exc}"), err=True)
            ctx.exit(1)
        except UnicodeEncodeError as exc:
            if ctx.find_root().meta.get("traceback"):
                raise
            shown = exc.object[max(0, exc.start - 20):exc.end + 20]
            click.echo(visible(f"error: an argument is not valid UTF-8 text (near {shown!r})"),
                       err=True)
            ctx.exit(2)


#: The largest count or offset a command takes (both backends store it as a 64-bit integer).
MAX_COUNT = 2**62


def count(minimum: int = 0) -> click.IntRange:
    """A whole number from ``minimum`` to :data:`MAX_COUNT` (beyond it: a usage error, exit 2)."""
    return click.IntRange(minimum, MAX_COUNT)


class IsoTime(click.ParamType):  # type: ignore[type-arg]
    """An ISO 8601 time (``Z`` or an offset; naive is UTC) or a date, as an aware UTC datetime;
    anything else, or a time with no UTC form (``0001-01-01T00:00:00+14:00``), is a usage
    error (exit 2)."""

    name = "TIME"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        try:
            return store.as_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
        except (ValueError, OverflowError, store.StoreError) as exc:
            self.fail(f"not an ISO 8601 time within years 1-9999 in UTC: {value!r} ({exc})",
                      param, ctx)


def db_option(function: F) -> F:
    """``--db URL`` on a command."""
    return click.option(
        "--db", "db_url", metavar="URL", envvar="TRANSCRIPT_STORE_URL",
        help="Database URL (sqlite:///path or postgresql+psycopg://...) or an SQLite file path. "
             "Default: $TRANSCRIPT_STORE_URL, else a file in your data directory.",
    )(function)


def redaction_options(function: F) -> F:
    """``--redact`` and ``--redact-pattern REGEX`` on a command that prints transcript text."""
    function = click.option(
        "--redact-pattern", "patterns", multiple=True, metavar="REGEX",
        help="Also redact this (its group 'secret' only, if it has one). Repeatable.")(function)
    return click.option("--redact", is_flag=True,
                        help="Replace secrets with [REDACTED:kind] markers.")(function)


def redactor_from(redact: bool, patterns: tuple[str, ...]) -> store.Redactor | None:
    """The redactor ``--redact`` / ``--redact-pattern`` ask for (``None``: neither given)."""
    if not redact and not patterns:
        return None
    try:
        return store.Redactor(patterns)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--redact-pattern") from exc


#: Characters a terminal acts on instead of showing: C0 controls but newline and tab (ESC
#: starts CSI/OSC sequences: clear the screen, retitle the window, OSC 52 writes the
#: clipboard), DEL, C1 controls (0x9b is a one-byte CSI), and the bidirectional overrides
#: that make text read differently from what it is.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                      "\u2066-\u2069]")


def _shown(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """Stored text made safe to print to a terminal: every control character (see
    ``_CONTROL``) written as a visible escape (``\\x1b``, ``\\u202e``); newlines and tabs
    kept. Every command prints stored text (ids, titles, names, arguments, results, file
    names, reports) through this, in tables and plain lines alike; ``--json`` output keeps
    the exact values instead (JSON escapes control characters itself)."""
    shown = text if isinstance(text, str) else str(text)
    return _CONTROL.sub(_shown, shown) if _CONTROL.search(shown) else shown


def safe_markup(text: object) -> str:
    """:func:`visible` text escaped for rich markup (tables, ``console().print``)."""
    from rich.markup import escape  # rich loads when output is drawn, not at start-up

    return escape(visible(text))


def console() -> Console:
    """A console for human output (tables, transcripts); wide when piped, so that tables
    do not fold ids and names into pieces. No colour with ``--no-color`` or ``NO_COLOR``."""
    from rich.console import Console  # rich loads when output is drawn, not at start-up

    plain = no_color()
    return Console(soft_wrap=False, width=None if sys.stdout.isatty() else 200,
                   no_color=plain or None, color_system=None if plain else "auto")


def one_line(text: str | None, limit: int = 60) -> str:
    """``text`` as one table cell line: its first non-blank line, cut at ``limit`` characters,
    with an ellipsis when anything was left out (``calls show`` prints the whole); control
    characters made :func:`visible`. Not escaped for markup (see :func:`safe_markup`)."""
    if not text:
        return ""
    lines = [line for line in visible(text).splitlines() if line.strip()]
    first = lines[0].strip() if lines else ""
    if len(first) > limit:
        return first[:limit - 1] + "…"
    return first + " …" if len(lines) > 1 else first


def confirmed(question: str) -> None:
    """Ask ``question`` on stderr; anything but yes (or no terminal to answer) is a one-line
    error and exit 1: nothing was changed."""
    try:
        agreed = click.confirm(question, err=True)
    except click.Abort:  # no answer (end of input): end the prompt's line first
        click.echo(err=True)
        agreed = False
    if not agreed:
        raise click.ClickException("not confirmed: nothing changed")


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
        try:
            click.echo(orjson.dumps(row, default=str).decode())
        except TypeError:  # nested over orjson's limit (stored before the depth rule)
            click.echo(deep_dumps({k: v if _jsonable(v) else str(v) for k, v in row.items()}))


def open_store(db_url: str | None, *, read_only: bool = False) -> store.TranscriptStore:
    """Open the store for a command. Read commands open read-only: they never create or
    migrate a database (a missing one is an error naming it), and auditors need no write
    access."""
    return store.TranscriptStore.open(db_url, read_only=read_only)


def page_limit(limit: int) -> int | None:
    """``--limit``: 0 means every row."""
    return None if limit == 0 else limit


def more_rows(shown: int, total: int, offset: int = 0, what: str = "rows") -> None:
    """Say on stderr when a listing shows fewer rows than exist (never silent)."""
    if offset + shown < total:
        first = f"{offset + 1}-{offset + shown}" if offset else f"{shown}"
        click.echo(f"showing {first} of {total:,} {what}; --limit 0 for all", err=True)


def _jsonable(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | dict | tuple)
