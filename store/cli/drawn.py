"""Tables drawn as rich draws them, without rich's ``Table`` (edge; the command line).

rich's ``Table`` measures every cell of every column again before it draws (three renders of
each cell), and importing it costs ~20 ms of a command's start-up: drawing a year of days with
it took longer than reading them (0.23 s of 0.40 s at 10^6 messages), and 50 sessions of
``sessions list`` 60 ms of a 210 ms command. Our tables are plain text whose widths are known
before they are drawn (:func:`store.cli.fitted.fitted_table` fits them to the terminal, the
usage reports keep their natural widths), so :func:`draw_table` lays the rows out in one pass
over the cells, with rich's default box (``HEAVY_HEAD``), padding, and header, title and
caption styles: segment for segment what rich prints, with colour and without (a test draws
both at many widths). A table wider than the console is fitted as rich fits it (``fit``):
its columns narrowed by rich's rules (``Table._calculate_column_widths``) and each cell
wrapped or cut as rich's ``Text.wrap`` does (:func:`store.cli.plain.wrapped`): at 80 or 120
columns, ``usage session`` at 10^6 messages drew 4,401 rows through rich in 3.4 s. What it
does not lay out (a title or caption wider than the table, a tab, no rows, a cell of wide
characters to wrap or cut, a column left under one column) it declines (``None``): the
caller gives that table to rich. :func:`kept_widths` gives the widths of a table some of whose
columns keep theirs (a usage report's counts and costs) while the others are narrowed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

from store.cli.plain import ELLIPSIS, cells, one_column_each, wrapped

__all__ = ["Drawn", "DrawnTable", "Fit", "Justify", "Piece", "Row", "draw_table",
           "kept_widths", "natural_widths"]

#: A row: its cells (plain text, ``\n`` between the lines of a cell) and its style's name.
Row = tuple[Sequence[str], str | None]
Justify = Literal["left", "right"]
#: A piece of a drawn table: its text and its style's name (``None``: no style).
Piece = tuple[str, str | None]
#: How a table wider than the room is fitted, as rich fits the columns it is given:
#: ``"wrap"``, columns of no set width (``Table.add_column(header)``: the widest give up
#: width first, cells wrapped at words); ``"cut"``, columns of set widths that do not wrap
#: (``add_column(width=, no_wrap=True)``: all narrowed evenly, lines cut); ``None``: declined.
Fit = Literal["wrap", "cut"]


def draw_table(out: Any, title: str | None, columns: Sequence[str], justify: Sequence[str],
               rows: Sequence[Row], *, caption: str | None = None, total: Row | None = None,
               widths: Sequence[int] | None = None, max_width: int | None = None,
               fit: Fit | None = None) -> Drawn | None:
    """The table rich's ``Table(title=, caption=)`` draws on the console ``out`` for these
    columns (``justify``: each one's side) and rows, with ``total`` in a section of its own
    below them; the columns ``widths`` wide (default: their natural widths, the widest line
    of each), narrowed as rich narrows them where that is wider than the room (``fit``: how
    the columns were given to rich; ``None``, declined). ``None`` when rich would lay it out
    otherwise (see the module docstring). ``max_width``: the room (default the console's
    width)."""
    every = [*rows, *([total] if total is not None else [])]
    if not rows:
        return None
    lines, simple, natural = _measured(columns, every)
    if any("\t" in "".join(column) for column in lines):
        return None  # (a cell's tab is rich's to lay out)
    split = [([cell.split("\n") for cell in cells_], style) for cells_, style in every]
    head = [[c] for c in columns]
    if widths is None:
        found = natural
    else:
        found = list(widths)
        if any(n > w for n, w in zip(natural, found, strict=True)):
            if fit is None:
                return None  # (rich would wrap it)
            # (a set width is the column's whatever its header: cut or wrapped too)
            refitted = _refitted([(head, None), *split], natural, simple, found, justify,
                                 fit == "wrap")
            if refitted is None:
                return None
            head, split = refitted[0][0], refitted[1:]
    width = sum(found) + 3 * len(found) + 1
    room = out.width if max_width is None else max_width
    if width > room:
        if fit is None:
            return None
        narrowed = _narrowed(found, room, fit == "wrap")
        if narrowed is None:
            return None
        refitted = _refitted([(head, None), *split], natural, simple, narrowed, justify,
                             fit == "wrap")
        if refitted is None:
            return None  # (a cell of wide characters to wrap or cut: rich measures them)
        found, head, split = narrowed, refitted[0][0], refitted[1:]
        width = sum(found) + 3 * len(found) + 1
    if any(cells(text.rstrip()) > width for text in (title or "", caption or "")):
        return None  # (rich wraps the title or caption)
    pieces: list[Piece] = []
    add = pieces.append

    def centered(text: str, name: str) -> None:
        text = text.rstrip()  # (as rich centres a line)
        spare = width - cells(text)
        left = spare // 2
        add((" " * left + text + " " * (spare - left), name))
        add(("\n", None))

    def border(left: str, fill: str, middle: str, right: str) -> None:
        add((left + middle.join(fill * (w + 2) for w in found) + right + "\n", None))

    def laid(i: int, text: str) -> str:
        """A cell's line at its column's width (rich right-justifies the line stripped)."""
        if justify[i] != "left":
            text = text.rstrip()
        if simple[i] or one_column_each(text):  # (a column a character: padded in C)
            return text.ljust(found[i]) if justify[i] == "left" else text.rjust(found[i])
        spare = " " * (found[i] - cells(text))
        return text + spare if justify[i] == "left" else spare + text

    blank = [" " * (w + 2) for w in found]
    indexes = range(len(found))
    right = [side != "left" for side in justify]
    # Every column one column a character: a line is one str.format (padding in C); a
    # right-justified cell is stripped first, as rich strips it.
    form = ("│" + "│".join(f" {{:{'>' if right[i] else '<'}{found[i]}}} " for i in indexes)
            + "│\n") if all(simple) else None

    def plain_row(row_cells: list[list[str]], edge: str) -> None:
        # (no style: each line one piece, the same characters; a year of days is 1,300
        # lines of ten cells, and rich renders each segment)
        for at in range(max(map(len, row_cells))):
            if form is not None and edge == "│":
                add((form.format(*[("" if at >= len(cell) else cell[at].rstrip() if right[i]
                                    else cell[at]) for i, cell in enumerate(row_cells)]),
                     None))
                continue
            add((edge + edge.join([blank[i] if at >= len(row_cells[i])
                                   else " " + laid(i, row_cells[i][at]) + " "
                                   for i in indexes]) + edge + "\n", None))

    def row(row_cells: list[list[str]], name: str | None, edge: str) -> None:
        if not name:
            plain_row(row_cells, edge)
            return
        height = max(len(cell) for cell in row_cells)
        # (rich aligns the header's cells at the bottom, the others at the top)
        above = [height - len(cell) if edge == "┃" else 0 for cell in row_cells]
        for at in range(height):
            add((edge, None))
            for i, cell in enumerate(row_cells):
                line = at - above[i]
                if not 0 <= line < len(cell):  # (beside a shorter cell: padded in one piece)
                    add((" " * (found[i] + 2), name))
                    add((edge, None))
                    continue
                pieces.extend(((" ", name), (laid(i, cell[line]), name), (" ", name),
                               (edge, None)))
            add(("\n", None))

    if title is not None:
        centered(title, "table.title")
    border("┏", "━", "┳", "┓")
    row(head, "table.header", "┃")
    border("┡", "━", "╇", "┩")
    for row_cells, name in split[:len(rows)]:
        row(row_cells, name, "│")
    if total is not None:
        border("├", "─", "┼", "┤")
        row(*split[-1], "│")
    border("└", "─", "┴", "┘")
    if caption is not None:
        centered(caption, "table.caption")
    return Drawn(pieces)


def _measured(columns: Sequence[str], rows: Sequence[Row]
              ) -> tuple[list[list[str]], list[bool], list[int]]:
    """Each column's lines (its cells' lines, joined and split in C: a year of sessions is
    9,000 lines of ten cells), whether its every character is one column (most columns:
    digits, ids, ASCII names; measured and padded in C, with no test per cell), and its
    natural width (its header's or widest line's)."""
    lines = ["\n".join(column).split("\n")
             for column in zip(*(cells_ for cells_, _ in rows), strict=True)]
    simple = [one_column_each(c + "".join(column)) for c, column in zip(columns, lines,
                                                                        strict=True)]
    natural = [max(map(len if simple[i] else cells, [c, *column]))
               for i, (c, column) in enumerate(zip(columns, lines, strict=True))]
    return lines, simple, natural


def natural_widths(columns: Sequence[str], rows: Sequence[Row]) -> list[int]:
    """Each column's natural width in a table of these rows: its header's or its widest
    line's, as :func:`draw_table` measures it."""
    return _measured(columns, rows)[2]


def kept_widths(natural: Sequence[int], room: int, kept: Sequence[bool]) -> list[int] | None:
    """Content widths for a table of columns this wide (``natural``) in ``room`` columns,
    the ``kept`` columns at their natural widths (a report's counts and costs: never cut) and
    the others narrowed as rich narrows wrapping columns (the widest first); ``None`` when
    those would be left under one column each, or nothing needs narrowing."""
    total = sum(natural) + 3 * len(natural) + 1
    others = [w for w, keep in zip(natural, kept, strict=True) if not keep]
    if total <= room or not others:
        return None
    fixed = sum(w for w, keep in zip(natural, kept, strict=True) if keep)
    # (the room of the other columns with their own borders, as _narrowed counts it)
    narrowed = _narrowed(others, room - fixed - 3 * (len(natural) - len(others)), True)
    if narrowed is None:
        return None
    given = iter(narrowed)
    return [w if keep else next(given) for w, keep in zip(natural, kept, strict=True)]


def _narrowed(natural: list[int], room: int, wrap: bool) -> list[int] | None:
    """The content widths rich gives columns of these natural widths in ``room`` columns
    (``Table._calculate_column_widths`` and ``_collapse_widths``: widths with their padding,
    two columns each; ``wrap``, the widest columns narrowed to the next widest until the table
    fits, then every column evenly; else every column evenly). ``None`` when a column would
    be left under one column (rich then draws what it can)."""
    most = room - (len(natural) + 1)  # (the borders: one each side and one between columns)
    if most < 1:
        return None
    widths = [min(w + 2, most) for w in natural]
    excess = sum(widths) - most
    while wrap and excess > 0:
        widest = max(widths)
        second = max(w if w != widest else 0 for w in widths)
        if not second < widest:
            break
        widths = _ratio_reduce(excess, [int(w == widest) for w in widths],
                               [min(excess, widest - second)] * len(widths), widths)
        excess = sum(widths) - most
    if excess > 0:
        widths = _ratio_reduce(excess, [1] * len(widths), widths, widths)
    content = [w - 2 for w in widths]
    return None if min(content) < 1 else content


def _ratio_reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]
                  ) -> list[int]:
    """``rich._ratio.ratio_reduce``: ``total`` taken from ``values`` in proportion to
    ``ratios``, at most ``maximums`` from each (Python's rounding, half to even)."""
    ratios = [ratio if most else 0 for ratio, most in zip(ratios, maximums, strict=True)]
    left_ratio = sum(ratios)
    if not left_ratio:
        return values[:]
    left = total
    result = []
    for ratio, most, value in zip(ratios, maximums, values, strict=True):
        if ratio and left_ratio > 0:
            taken = min(most, round(ratio * left / left_ratio))
            result.append(value - taken)
            left -= taken
            left_ratio -= ratio
        else:
            result.append(value)
    return result


def _refitted(rows: list[tuple[list[list[str]], str | None]], natural: list[int],
              simple: list[bool], widths: list[int], justify: Sequence[str], wrap: bool
              ) -> list[tuple[list[list[str]], str | None]] | None:
    """The rows (cells as lines) with every line wider than its column wrapped or cut as
    rich's ``Text.wrap`` does (:func:`store.cli.plain.wrapped`; only the columns whose
    ``natural`` width is wider, a line once: a year of sessions repeats its model names;
    ``simple``: the columns whose every character is one column); ``None`` where such a line
    has a character that is not one column wide."""
    out = [([*row_cells], name) for row_cells, name in rows]
    for i, width in enumerate(widths):
        if natural[i] <= width:
            continue
        made: dict[str, list[str] | None] = {}
        right = justify[i] != "left"
        for row_cells, _ in out:
            lines = row_cells[i]
            if max(map(len, lines)) <= width and (simple[i] or one_column_each("".join(lines))):
                continue
            cell: list[str] = []
            for line in lines:
                if simple[i] and len(line) > width and " " not in line:
                    # (one word of one-column characters, the most of a narrowed report's
                    # cells, ids, times, counts: wrapped or not, its line cut with "…")
                    cell.append(line[:width - 1] + ELLIPSIS)
                    continue
                if line not in made:
                    made[line] = [line] if cells(line) <= width \
                        else wrapped(line, width, right=right, wrap=wrap)
                pieces = made[line]
                if pieces is None:
                    return None
                cell += pieces
            row_cells[i] = cell
    return out


class Drawn:
    """A drawn table: its text in pieces, each with the name of its style (``None``: none).
    Printed on a rich console, the segments rich's ``Table`` gives (the styles looked up on
    that console); :meth:`text` is what a console with no colour prints
    (:class:`store.cli.plain.PlainConsole` writes it without rich)."""

    def __init__(self, pieces: list[Piece]) -> None:
        self.pieces = pieces

    def text(self) -> str:
        return "".join(text for text, _ in self.pieces)

    def plain_text(self, width: int) -> str:
        """What a console ``width`` wide with no colour prints (the text, as drawn)."""
        return self.text()

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.segment import Segment

        style = console.get_style
        for text, name in self.pieces:
            yield Segment(text, style(name)) if name else Segment(text)


class DrawnTable:
    """A table of plain cells (one line each), printed on a rich console: drawn by
    :func:`draw_table` when it fits, else by rich's ``Table`` with the same columns, as
    before. ``widths``: the columns' widths, the cells already cut to them
    (:func:`store.cli.fitted.fitted_table`; rich's fallback then cuts with an ellipsis
    and never wraps); without, their natural widths (rich's fallback wraps what does not
    fit). ``caption``: a line below it, as rich's ``Table(caption=)``; ``note``: lines
    printed below the table (what it left out), as they are."""

    def __init__(self, title: str | None, columns: Sequence[str], rows: Sequence[Sequence[str]],
                 *, justify: Sequence[Justify] | None = None,
                 widths: Sequence[int] | None = None, caption: str | None = None,
                 note: str | None = None) -> None:
        self.title = title
        self.caption = caption
        self.note = note
        self.columns = list(columns)
        self.justify: list[Justify] = list(justify or ["left"] * len(self.columns))
        self.rows = [list(row) for row in rows]
        self.widths = None if widths is None else list(widths)

    def drawn(self, max_width: int) -> Drawn | None:
        """The table drawn in ``max_width`` columns (``None``: rich lays it out)."""
        drawn = draw_table(None, self.title, self.columns, self.justify,
                           [(row, None) for row in self.rows], caption=self.caption,
                           widths=self.widths, max_width=max_width,
                           fit="wrap" if self.widths is None else "cut")
        if drawn is not None and self.note is not None:
            drawn.pieces.append((self.note + "\n", None))
        return drawn

    def plain_text(self, width: int) -> str | None:
        """What a console ``width`` wide with no colour prints, where :func:`draw_table`
        lays the table out (``None``: rich's own table)."""
        drawn = self.drawn(width)
        return None if drawn is None else drawn.text()

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        drawn = self.drawn(options.max_width)
        if drawn is not None:
            yield drawn
            return
        yield self.rich_table()
        if self.note is not None:
            from rich.text import Text

            yield Text(self.note)

    def rich_table(self) -> Any:
        """The same table as rich's ``Table`` lays it out."""
        from rich.table import Table
        from rich.text import Text

        table = Table(title=self.title, caption=self.caption)
        for i, (header, side) in enumerate(zip(self.columns, self.justify, strict=True)):
            if self.widths is None:
                table.add_column(header, justify=side)
            else:
                table.add_column(header, width=self.widths[i], no_wrap=True,
                                 overflow="ellipsis", justify=side)
        for row in self.rows:
            table.add_row(*(Text(cell) for cell in row))
        return table
