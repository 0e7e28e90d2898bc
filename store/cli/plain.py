"""Output to a pipe or a file without loading rich (edge; the command line).

Importing ``rich.console`` costs a read command ~25-30 ms of its start-up, a sixth of
``usage daily``'s 150 ms budget at 10^6 messages, and where the output is not a terminal rich
prints no escape codes: the text of a table (:class:`store.cli.drawn.Drawn`) or of a plain
line is then all it writes. :class:`PlainConsole` writes those itself, the same characters
(a test prints each through both), and so the text of rich markup (:func:`markup_plain`:
``sessions show``'s transcript, ``sessions tree``'s lines; importing ``rich.markup`` cost
~58 M instructions, ``rich.console`` ~85 M, of a ~470 M command), and hands everything else
(markup it does not read as rich would, a control code, a line rich would wrap, a renderable
it does not know, a keyword argument) to a rich ``Console`` made on first use with the
settings :func:`store.cli._common.console` gives it.

:func:`plain_stdout` is rich's own rule for "not a terminal" (``TTY_COMPATIBLE``,
``FORCE_COLOR``, ``isatty``), answering "no" wherever rich would think again (Jupyter, IDLE).
"""

from __future__ import annotations

import builtins
import os
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["ELLIPSIS", "PlainConsole", "cells", "cut", "folded", "markup_escape",
           "markup_plain", "note_lines", "one_column_each", "plain_stdout", "quiet_stdout",
           "wrapped"]

#: What a cut cell ends with (one column wide: rich's ``cell_len`` gives it 1).
ELLIPSIS = "\u2026"
#: The control codes rich strips or expands when it prints (everything below a space but the
#: newline). (An emoji code, ``:name:``, is printed as written: the console is made with
#: ``emoji=False``, see :func:`store.cli._common.rich_console`.)
_CONTROL_CODES = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
#: rich's markup tags (``rich.markup.RE_TAGS``) and what its ``escape`` escapes.
_TAGS = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")
_ESCAPED = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")
#: A word as rich's wrapping reads one (``rich._wrap.re_word``): its spaces after it too.
_WORD = re.compile(r"\s*\S+\s*")
_SPACE = re.compile(r"\s")
#: The control codes rich's ``Text`` drops (``rich.control.STRIP_CONTROL_CODES``: bell,
#: backspace, vertical tab, form feed, carriage return).
_STRIPPED = dict.fromkeys((7, 8, 11, 12, 13))


def quiet_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's last flush at exit cannot
    fail on a pipe the reader closed (Python's documented recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's): nothing to flush
        pass


def plain_stdout() -> bool:
    """Whether rich would print to ``sys.stdout`` with no escape codes at all (no colour
    system: not a terminal, by rich's rule)."""
    if hasattr(builtins, "get_ipython"):
        return False  # (Jupyter: rich draws in colour)
    stdin_module = getattr(sys.stdin, "__module__", None)
    if isinstance(stdin_module, str) and stdin_module.startswith("idlelib"):
        return False
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "0"
    forced = os.environ.get("FORCE_COLOR")
    if forced is not None:
        return forced == ""
    isatty = getattr(sys.stdout, "isatty", None)
    try:
        return isatty is None or not isatty()
    except ValueError:  # (a closed file)
        return True


def markup_escape(text: str) -> str:
    """``text`` escaped so that rich reads no markup in it: what ``rich.markup.escape`` gives
    (a test compares them), without loading rich."""
    text = _ESCAPED.sub(lambda found: f"{found[1]}{found[1]}\\{found[2]}", text)
    if text.endswith("\\") and not text.endswith("\\\\"):
        return text + "\\"
    return text


def markup_plain(markup: str, tab_size: int = 8) -> str | None:
    """The text of rich markup as a console with no colour prints it: what
    ``rich.markup.render(markup, emoji=False)`` holds after ``expand_tabs(tab_size)`` (a test
    compares them), without loading rich; ``None`` where rich must say (a closing tag that
    is not the last one opened by the same name, a handler tag ``[@...]``, a tab on a line
    whose characters are not one column each)."""
    if "[" in markup:
        pieces: list[str] = []
        add = pieces.append
        opened: list[str] = []
        position = 0
        for found in _TAGS.finditer(markup):
            whole, escapes, tag = found.groups()
            start, end = found.span()
            if start > position:
                add(markup[position:start].replace("\\[", "["))
            if escapes:
                backslashes, escaped = divmod(len(escapes), 2)
                if backslashes:
                    add("\\" * backslashes)
                if escaped:
                    add(whole[len(escapes):])
                    position = end
                    continue
            name = tag.partition("=")[0]
            if name.startswith("@"):
                return None
            if name.startswith("/"):
                closed = name[1:].strip().lower()
                if not opened or (closed and closed != opened[-1]):
                    return None  # (rich matches otherwise, or raises: it says which)
                opened.pop()
            else:
                opened.append(name.strip().lower())
            position = end
        if position < len(markup):
            add(markup[position:].replace("\\[", "["))
        if any(name.startswith("@") for name in opened):
            return None
        markup = "".join(pieces)
    text = markup.translate(_STRIPPED)
    if "\t" not in text:
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if "\t" in line:
            if not one_column_each(line.replace("\t", " ")):
                return None  # (rich counts the cells of wide characters)
            lines[number] = line.expandtabs(tab_size)
    return "\n".join(lines)


def folded(text: str, width: int) -> list[str] | None:
    """The lines rich makes of one line of ``text`` in a cell ``width`` columns wide with
    ``overflow="fold"`` (``Text.wrap``: words kept whole where they fit, a word longer than
    the line cut into pieces, each line's spaces past the width dropped, then the line cut
    and padded to the width); ``None`` unless every character is one column (the wide ones
    rich measures itself). A test compares them with rich's on any text and width."""
    if "\n" in text or width < 1 or not one_column_each(text):
        return None
    return [line[:width].ljust(width) for line in _divided(text, width, fold=True)]


def wrapped(text: str, width: int, *, right: bool = False, wrap: bool = True
            ) -> list[str] | None:
    """The lines rich's table makes of one line of ``text`` in a cell ``width`` columns wide
    with its columns' default ``overflow="ellipsis"`` (``Text.wrap``): ``wrap``, words kept
    whole where they fit and a word longer than the line on a line of its own, each line's
    spaces past the width dropped; not ``wrap`` (``no_wrap``), the line whole; then a line
    longer than the width cut to it, its last column ``…``. ``right``: right-justified (each
    line stripped first). The lines are not padded. ``None`` unless every character is one
    column (the bars of ``tools usage`` are: ``█``). A test compares them with rich's on any
    text and width."""
    if "\n" in text or width < 1 or not (one_column_each(text) or _narrow(text)):
        return None
    if not wrap or not _SPACE.search(text):  # (one word: its line, cut: an id, a date)
        lines = [text]
    else:
        lines = _divided(text, width, fold=False)
    if right:
        lines = [line.rstrip() for line in lines]
    return [line if len(line) <= width else line[:width - 1] + ELLIPSIS for line in lines]


def _divided(text: str, width: int, *, fold: bool) -> list[str]:
    """``text`` (one line, one column a character) divided as rich divides it at ``width``
    (``rich._wrap.divide_line``: a word longer than the line cut into pieces of the width
    where ``fold``, else left whole on its own line), each line's spaces past the width
    dropped (``Text.rstrip_end``)."""
    breaks: list[int] = []
    offset = 0
    for found in _WORD.finditer(text):
        start, word = found.start(), found.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width and fold:  # (rich's chop_cells: pieces of the width, the last open)
            pieces = [word[at:at + width] for at in range(0, len(word), width)]
            for number, piece in enumerate(pieces, 1):
                if start:
                    breaks.append(start)
                if number == len(pieces):
                    offset = len(piece)
                else:
                    start += len(piece)
        elif length > width:  # (not folded: the word on a line of its own, cut later)
            if start:
                breaks.append(start)
            offset = len(word)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    lines = []
    for begin, end in zip([0, *breaks], [*breaks, len(text)], strict=True):
        line = text[begin:end]
        if len(line) > width:  # (rich's rstrip_end: the spaces past the width)
            spaces = len(line) - len(line.rstrip())
            line = line[:len(line) - min(spaces, len(line) - width)]
        lines.append(line)
    return lines


def _narrow(text: str) -> bool:
    """Whether every character of ``text`` is printable and one column wide to rich."""
    if not text.isprintable():
        return False
    from rich.cells import cell_len

    return all(cell_len(character) == 1 for character in set(text))


def note_lines(text: str, width: int) -> str:
    """A note below a table, wrapped at words to ``width`` here (a line wider than the
    console would load rich to wrap it)."""
    from textwrap import wrap

    return "\n".join(wrap(text, max(width, 20), break_on_hyphens=False))


def one_column_each(text: str) -> bool:
    """Whether every character of ``text`` takes one column (printable ASCII, the ellipsis)."""
    return text.isprintable() and (text.isascii() or text.replace(ELLIPSIS, "").isascii())


def cells(text: str) -> int:
    """The columns ``text`` takes on a terminal (rich's ``cell_len``; printable ASCII, and the
    ellipsis a cut cell ends with, are one column a character, counted without rich)."""
    if one_column_each(text):
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def cut(text: str, width: int, simple: bool = False) -> str:
    """``text`` in at most ``width`` columns: as it is when it fits, else its first
    ``width - 1`` columns and an ellipsis (rich's ``set_cell_size`` for the rest, where a wide
    character can leave a column of padding). ``simple``: the caller knows that
    :func:`one_column_each` holds for ``text``."""
    if simple or one_column_each(text):
        return text if len(text) <= width else text[:max(0, width - 1)] + ELLIPSIS
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(0, width - 1)) + ELLIPSIS


class PlainConsole:
    """A console for output that is not a terminal: the texts rich would print unchanged
    are written as they are, the rest goes to rich (``make_rich`` makes its console)."""

    #: rich's default, which :func:`store.cli._common.rich_console` keeps.
    tab_size = 8

    def __init__(self, width: int, make_rich: Callable[[], Console]) -> None:
        self.width = width
        self._make_rich = make_rich
        self._rich: Console | None = None

    @property
    def rich(self) -> Console:
        if self._rich is None:
            self._rich = self._make_rich()
        return self._rich

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rich, name)

    def print(self, *objects: Any, **options: Any) -> None:
        text = self._plain(objects[0]) if len(objects) == 1 and not options else None
        if text is None:
            self.rich.print(*objects, **options)
        else:
            self.write(text)

    def write(self, text: str) -> None:
        """Write ``text`` as rich writes a print's output (flushed; a closed pipe ends the
        command quietly)."""
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:  # (as rich's console: a closed pipe is no error)
            quiet_stdout()
            raise SystemExit(0) from None

    def _plain(self, value: Any) -> str | None:
        plain = getattr(value, "plain_text", None)  # (store.cli.drawn's tables)
        if plain is not None:
            drawn: str | None = plain(self.width)
            return drawn
        if not isinstance(value, str):
            return None
        text = markup_plain(value)  # (markup's text, as rich prints it: a plain line as it is)
        if text is None or _CONTROL_CODES.search(text) or any(
                cells(line) > self.width for line in text.split("\n")):
            return None
        return text + "\n"
