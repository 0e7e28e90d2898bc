"""Tables of one-line cells fitted to the terminal (edge; the command line): ``sessions
list``, ``calls search``, ``db stats`` ... Each column is whole, cut with ``…`` (the flexible
ones first, by weight), or left out (the droppable ones, where even the least widths do not
fit; named below the table); :class:`store.cli.drawn.DrawnTable` draws the result as rich's
``Table`` would."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from store.cli._common import UNLIMITED, one_line, terminal_width
from store.cli.plain import cells, cut, note_lines, one_column_each

__all__ = ["Column", "fitted_table"]


@dataclass(frozen=True, slots=True)
class Column:
    """A table column: its header, whether it gives up width first when the row is too long
    (titles, arguments, folders), and its alignment."""

    header: str
    flexible: bool = False
    justify: Literal["left", "right"] = "left"
    #: The narrowest a flexible column gets before fixed columns are cut too.
    minimum: int = 8
    #: Never cut (times, numbers, positions).
    keep: bool = False
    #: How much a flexible column keeps when the room is shared (titles more than folders).
    weight: int = 1
    #: Left out (the highest first) where the table cannot fit with every other column at its
    #: whole or least width, rather than every column cut to a letter; 0: never.
    drop: int = 0


def fitted_table(title: str | None, columns: list[Column], rows: list[list[str]],
                 wide: bool = False) -> Any:
    """A table whose rows are one line each and fit :func:`terminal_width`: the flexible
    columns give up width first, and every cut cell ends in ``…`` (``wide``: nothing cut).
    Cells are plain text (made :func:`visible`, never read as markup). Printed on a rich
    console, it is drawn as rich's ``Table`` draws it (:class:`store.cli.drawn.DrawnTable`)."""
    lines = [[one_line(cell, UNLIMITED) for cell in row] for row in rows]
    # (a column whose every character takes one column, most of them, is measured and cut
    # by length, with no test per cell)
    simple = [one_column_each(column.header + "".join(row[i] for row in lines))
              for i, column in enumerate(columns)]
    widths = [max(map(len if simple[i] else cells, [column.header, *(row[i] for row in lines)]))
              for i, column in enumerate(columns)]
    left_out: list[str] = []
    note = None
    if not wide:
        room = terminal_width()
        # The least each column takes: a flexible one its minimum (or its header), the
        # others their whole width.
        least = [min(widths[i], max(c.minimum, cells(c.header))) if c.flexible else widths[i]
                 for i, c in enumerate(columns)]
        # The droppable columns left out, highest first, while even the least widths do not
        # fit.
        kept = list(range(len(columns)))
        while sum(least[i] for i in kept) + 3 * len(kept) + 1 > room:
            droppable = [i for i in kept if columns[i].drop]
            if not droppable:
                break
            gone = max(droppable, key=lambda i: columns[i].drop)
            kept.remove(gone)
            left_out.append(columns[gone].header)
        if left_out:
            columns = [columns[i] for i in kept]
            simple = [simple[i] for i in kept]
            widths = [widths[i] for i in kept]
            least = [least[i] for i in kept]
            lines = [[row[i] for i in kept] for row in lines]
            note = note_lines(f"left out to fit {room} columns: {', '.join(left_out)} "
                              "(--wide or --json shows them)", room)
        excess = sum(widths) - (room - (3 * len(columns) + 1))  # (borders and padding)
        while excess > 0:
            shrinkable = [i for i, c in enumerate(columns)
                          if c.flexible and widths[i] > least[i]]
            if not shrinkable:
                shrinkable = [i for i, c in enumerate(columns)
                              if not c.keep and widths[i] > 4]
            if not shrinkable:
                break
            widest = max(shrinkable, key=lambda i: widths[i] / columns[i].weight)
            widths[widest] -= 1
            excess -= 1
    from store.cli.drawn import DrawnTable

    return DrawnTable(title, [c.header for c in columns],
                      [[cut(cell, widths[i], simple[i]) for i, cell in enumerate(row)]
                       for row in lines], justify=[c.justify for c in columns], widths=widths,
                      note=note)
