"""What the commands share: the error-handling group, ``--db``, output helpers, opening.

Every command module imports from here (never from :mod:`store.cli.main`), and lists its
top-level commands in ``COMMANDS``; :mod:`store.cli.main` loads them into the root group on
first use, so the imports point one way: main -> command modules -> _common -> the public API.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

import store
from store.cli.plain import (
    ELLIPSIS,
    PlainConsole,
    markup_escape,
    markup_plain,
    plain_stdout,
    quiet_stdout,
)

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


class CommandGroup(click.Group):
    """A command group that answers a mistyped command with the nearest ones ("Did you mean
    ...?"), as git does. Every group of the command line is one."""

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0]) if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            import difflib

            near = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)


class StoreGroup(CommandGroup):
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
        except BrokenPipeError:  # `| head` closed the pipe: what it wanted was written
            quiet_stdout()
            ctx.exit(0)
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


def plural(n: int, word: str) -> str:
    """``1 session``, ``2 sessions``, ``1,204 calls``."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


#: The largest count or offset a command takes (both backends store it as a 64-bit integer).
MAX_COUNT = 2**62


def count(minimum: int = 0) -> click.IntRange:
    """A whole number from ``minimum`` to :data:`MAX_COUNT` (beyond it: a usage error, exit 2)."""
    return click.IntRange(minimum, MAX_COUNT)


def time_options(what: str) -> Callable[[F], F]:
    """``--since TIME`` and ``--until TIME`` (:mod:`store.cli.timespec`); ``what`` says what
    the times select ("With a message", "Calls made" ...)."""
    from store.cli.timespec import TimeSpec

    def add(function: F) -> F:
        function = click.option(
            "--until", type=TimeSpec(),
            help=f"{what} before this time (exclusive; same forms as --since).")(function)
        return click.option(
            "--since", type=TimeSpec(),
            help=f"{what} at or after this time: 2025-07, 2025-07-14, 2025-07-14T09:30Z, 7d, "
                 "12h, 2w, today, yesterday, this-month, last-month (also -week, -year; no "
                 "zone: local time).")(function)
    return add


def scope_options(function: F) -> F:
    """``--agent NAME`` and ``--cwd FOLDER``: the sessions of one agent, of one project."""
    function = click.option(
        "--cwd", callback=_folder, metavar="FOLDER",
        help="Only sessions run in this folder or below it (the project; . for here)."
    )(function)
    return click.option("--agent", metavar="NAME",
                        help="Only sessions recorded by this agent (claude-code, codex, "
                             "gemini-cli ...).")(function)


def _folder(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A ``--cwd`` as stored: ``~`` and relative folders made absolute."""
    if value is None:
        return None
    if value.startswith(("~", ".")) or not value.startswith("/"):
        return os.path.abspath(os.path.expanduser(value))
    return value


class Names(Protocol):
    """Where the tool and agent names come from: the store, or a stdlib reader of an SQLite
    file (``store.audit.lite_search.LiteCalls``)."""

    def aliases(self) -> store.AliasTable: ...

    def agents(self) -> list[str]: ...


def current_tool(opened: Names, tool: str, agent: str | None = None) -> str:
    """``--tool`` as the current name it searches for: a name as an agent recorded it
    (``Bash``, ``run_shell_command``) becomes its current name (``bash``), and stderr says
    so; a current name, or a name no alias knows, stays as given."""
    aliases = opened.aliases()
    currents = set(aliases.values()) | set(aliases.scoped.values())
    if tool in currents:
        return tool
    resolved = aliases.resolve(tool, agent)
    if resolved == tool:  # an alias of some agent(s) only
        scoped = {cur for (who, raw), cur in aliases.scoped.items()
                  if raw == tool and agent in (None, who)}
        resolved = scoped.pop() if len(scoped) == 1 else tool
    if resolved == tool:
        resolved = {name.lower(): name for name in currents}.get(tool.lower(), tool)
    if resolved != tool:
        click.echo(visible(f"--tool {tool}: searching for {resolved}, its current name "
                           "(every agent's calls of it; --raw-name for that name only)"),
                   err=True)
    return resolved


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x' or 'y'?)`` for the names close to ``word``; empty when none."""
    import difflib

    names = sorted(set(known))
    near = difflib.get_close_matches(word, names, n=3, cutoff=0.5) or [
        n for n in names if word.lower() in n.lower()][:3]
    return f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""


def nothing_found(opened: Names, what: str, *, tool: str | None = None,
                  agent: str | None = None) -> None:
    """An empty result in one line, naming a ``--tool`` or ``--agent`` that the store does
    not know with the nearest ones it does."""
    hints = []
    if agent is not None:
        agents = opened.agents()
        if agent not in agents:
            hints.append(f"no session of agent {agent!r} is stored"
                         + (did_you_mean(agent, agents) or
                            f" (agents here: {', '.join(agents) or 'none'})"))
    if tool is not None:
        aliases = opened.aliases()
        known = set(aliases.values()) | set(aliases.scoped.values()) | set(aliases) | {
            raw for _, raw in aliases.scoped}
        if tool not in known:
            hints.append(f"{tool!r} is no tool name of the vocabulary"
                         + did_you_mean(tool, known))
    click.echo(visible(f"no {what} match" + (": " + "; ".join(hints) if hints else "")))


def resolve_session(opened: store.TranscriptStore, session_id: str) -> str:
    """The full id of the session ``session_id`` names: itself, or the one id it is a unique
    prefix of (an ambiguous prefix is an error that lists the candidates)."""
    return opened.resolve_session_id(session_id)


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
    shown = visible(text)
    if "[" not in shown and not shown.endswith("\\"):
        return shown  # (what rich's escape leaves as it is)
    return markup_escape(shown)


def print_markup(out: Console | PlainConsole, text: str) -> None:
    """What ``out.print(text, highlight=False, soft_wrap=True)`` prints (rich markup, no
    highlighting, no hard wrap), without the pass that splits the text into wrapped lines
    first: the markup made a ``Text`` and its segments printed as they are. The same
    characters (a test compares them, with colour and without); a long transcript's
    ``sessions show`` spent two thirds of its time in that pass (0.87 s of 1.2 s for 3,700
    messages). Emoji codes (``:smile:``) are text like any other: a transcript is shown as it
    was written. To a pipe (no colour) the text is made without rich
    (:func:`store.cli.plain.markup_plain`) where it can be."""
    if isinstance(out, PlainConsole):  # (no colour: the segments' text is the Text's)
        plain = markup_plain(text, out.tab_size)
        if plain is not None:
            out.write(plain + "\n")
            return
    from rich.markup import render

    made = render(text, emoji=False)
    if "\t" in text:
        made.expand_tabs(out.tab_size)  # (as rich's own pass does)
    if isinstance(out, PlainConsole):
        out.write(made.plain + "\n")
        return
    from rich.segment import Segments

    out.print(Segments(made.render(out, end="\n")), soft_wrap=True)


def console(wide: bool = False) -> Console | PlainConsole:
    """A console for human output (tables, transcripts), as wide as :func:`terminal_width`
    (``wide``: no limit, for ``--wide``). No colour with ``--no-color`` or ``NO_COLOR``.
    Output that is not a terminal gets a :class:`~store.cli.plain.PlainConsole` (rich is
    loaded only for what it must draw)."""
    width = UNLIMITED if wide else terminal_width()
    if plain_stdout():
        return PlainConsole(width, lambda: rich_console(width))
    return rich_console(width)


def rich_console(width: int | None = None) -> Console:
    """:func:`console`'s rich console whatever the output (for rich's own widgets, as a
    progress bar); ``width`` default :func:`terminal_width`."""
    width = terminal_width() if width is None else width
    from rich.console import Console  # rich loads when output is drawn, not at start-up

    class QuietConsole(Console):
        def on_broken_pipe(self) -> None:  # rich's own exits 1: a closed pipe is no error
            quiet_stdout()
            raise SystemExit(0)

        def print(self, *objects: Any, **kwargs: Any) -> None:
            # A drawn table is never wider than the console: printed without rich's crop of
            # every line (which measures every segment again: 30 -> 5 ms for 4,400 rows)
            if len(objects) == 1 and not kwargs:
                from store.cli.drawn import Drawn, DrawnTable

                shown = objects[0]
                if isinstance(shown, DrawnTable):
                    drawn = shown.drawn(self.width)
                    if drawn is None:  # (rich's table, and the note below it)
                        super().print(shown)
                        return
                    shown = drawn
                if isinstance(shown, Drawn):
                    super().print(shown, crop=False)
                    return
                objects = (shown,)
            super().print(*objects, **kwargs)

    plain = no_color()
    # emoji=False: a stored text's ":smile:" or ":rocket:" is printed as written (rich's
    # default turned it into the emoji; so did the plain path, to print what rich printed)
    return QuietConsole(soft_wrap=False, width=width, emoji=False,
                        no_color=plain or None, color_system=None if plain else "auto")


#: The width of a ``--wide`` console: every cell whole.
UNLIMITED = 100_000


def terminal_width() -> int:
    """How wide output may be: ``COLUMNS`` when set, else the terminal's width, else (output
    to a file or a pipe) 200 columns."""
    # (shutil.get_terminal_size's rules, without importing shutil at each start-up)
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 200
    return max(20, columns)


def wide_option(function: F) -> F:
    """``--wide`` on a command that prints a table."""
    return click.option("--wide", is_flag=True,
                        help="Show every cell whole (by default rows are cut with … to fit "
                             "the terminal: COLUMNS).")(function)


def local_time(value: datetime | None) -> str:
    """A time as a table shows it: local (``TZ``), to the minute; ``-`` for none.

    From its whole seconds since the epoch through the C library's ``localtime`` (the zone
    ``datetime.astimezone()`` itself asks, without making a ``timezone`` per value): a year
    of sessions is thousands of rows (``usage session``: 4,400 at 10^6 messages)."""
    if value is None:
        return "-"
    at = store.as_utc(value)
    try:
        return time.strftime(_MINUTE, time.localtime((at - _EPOCH) // _SECOND))
    except (OverflowError, OSError, ValueError):  # (past the C library's range)
        return at.astimezone().strftime(_MINUTE)


_MINUTE = "%Y-%m-%d %H:%M"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SECOND = timedelta(seconds=1)


def json_time(value: datetime | None) -> str | None:
    """A time as ``--json`` writes it: ISO 8601 in UTC with ``Z``."""
    if value is None:
        return None
    return store.as_utc(value).astimezone(UTC).isoformat().replace("+00:00", "Z")


def one_line(text: str | None, limit: int = 60) -> str:
    """``text`` as one table cell line: its first non-blank line, cut at ``limit`` characters,
    with an ellipsis when anything was left out (``calls show`` prints the whole); control
    characters made :func:`visible`. Not escaped for markup (see :func:`safe_markup`)."""
    if not text:
        return ""
    if text.isprintable():  # (most cells: no control character, no line break)
        first = text.strip()
        return first if len(first) <= limit else first[:limit - 1] + ELLIPSIS
    lines = visible(text).splitlines()
    if len(lines) == 1:  # (most cells: one line, nothing after it)
        first = lines[0].strip()
        return first if len(first) <= limit else first[:limit - 1] + ELLIPSIS
    lines = [line for line in lines if line.strip()]
    first = lines[0].strip() if lines else ""
    if len(first) > limit:
        return first[:limit - 1] + ELLIPSIS
    return first + " " + ELLIPSIS if len(lines) > 1 else first


def confirmed(question: str, *, default: bool = False,
              declined: str = "not confirmed: nothing changed") -> None:
    """Ask ``question`` on stderr; a no is not an error: it says "not confirmed: nothing
    changed" and the command ends with status 0. No terminal to answer (end of input) is an
    error (exit 1): a script that meant to destroy something must say ``--yes``."""
    try:
        agreed = click.confirm(question, default=default, err=True)
    except click.Abort:  # no answer (end of input): end the prompt's line first
        click.echo(err=True)
        raise click.ClickException(f"{declined} (no answer; --yes to confirm without a "
                                   "prompt)") from None
    if not agreed:
        click.echo(declined, err=True)
        click.get_current_context().exit(0)


def no_color() -> bool:
    """Whether colour is off: ``--no-color``, or ``NO_COLOR`` set to anything non-empty
    (https://no-color.org)."""
    context = click.get_current_context(silent=True)
    if context is not None and context.find_root().meta.get("no_color"):
        return True
    return bool(os.environ.get("NO_COLOR"))


#: The environment variable that sets the package's log level without ``-v``.
LOG_ENV = "TRANSCRIPT_STORE_LOG"


def configure_logging(verbosity: int) -> None:
    """The package's log (logger ``store``) on stderr: ``-v`` at INFO, ``-vv`` at DEBUG, or
    the level ``TRANSCRIPT_STORE_LOG`` names (``debug``, ``info``, ``warning``, ``error``;
    ``-v`` wins). Without either the package is silent; an unknown level is a usage error."""
    named = os.environ.get(LOG_ENV, "").strip().upper()
    if verbosity <= 0 and not named:
        return  # (silent: logging is not even imported, store.core.logs)
    import logging

    from store.core.logs import package_logger

    level: int | None = None
    if verbosity > 0:
        level = logging.DEBUG if verbosity > 1 else logging.INFO
    else:
        levels = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING,
                  "WARN": logging.WARNING, "ERROR": logging.ERROR}
        if named not in levels:
            raise click.UsageError(
                f"{LOG_ENV}={named.lower()!r}: takes debug, info, warning or error")
        level = levels[named]
    logger = package_logger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level)


def verbosity() -> int:
    """How many ``-v`` the root command was given."""
    context = click.get_current_context(silent=True)
    return int(context.find_root().meta.get("verbose", 0)) if context is not None else 0


def emit_json(rows: Iterable[Mapping[str, Any]]) -> int:
    """``--json`` output (:func:`store.cli.jsonout.emit_json`): one compact JSON object per
    line; the number of lines written."""
    from store.cli.jsonout import emit_json as emitted  # (not loaded by --help)

    return emitted(rows)


def open_store(db_url: str | None, *, read_only: bool = False) -> store.TranscriptStore:
    """Open the store for a command. Read commands open read-only: they never create or
    migrate a database (a missing one is an error naming it), and auditors need no write
    access. A write to an SQLite file named by ``--db`` (or ``TRANSCRIPT_STORE_URL``) whose
    folder is missing is an error (:func:`check_db_folder`)."""
    if not read_only:
        check_db_folder(db_url)
    return store.TranscriptStore.open(db_url, read_only=read_only)


def check_db_folder(db_url: str | None) -> None:
    """A mistyped ``--db /no/such/dir/x.sqlite`` is an error naming the missing folder, not
    a new folder tree (only the default database's folder is created)."""
    if not db_url:
        return
    from urllib.parse import unquote

    if "://" not in db_url:
        path = os.path.expanduser(db_url)
    else:
        scheme, _, rest = db_url.partition("://")
        if scheme not in ("sqlite", "sqlite+pysqlite") or not rest.startswith("/") \
                or "?" in rest or rest[1:].startswith(("file:", ":memory:")) or rest == "/":
            return
        path = os.path.expanduser(unquote(rest[1:]))
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise store.UsageError(f"{db_url}: the folder {folder} does not exist (create it "
                               "first, or give another --db)")


def page_limit(limit: int) -> int | None:
    """``--limit``: 0 means every row."""
    return None if limit == 0 else limit


def more_rows(shown: int, total: int, offset: int = 0, what: str = "rows") -> None:
    """Say on stderr when a listing shows fewer rows than exist (never silent)."""
    if offset + shown < total:
        first = f"{offset + 1}-{offset + shown}" if offset else f"{shown}"
        click.echo(f"showing {first} of {total:,} {what}; --limit 0 for all", err=True)
