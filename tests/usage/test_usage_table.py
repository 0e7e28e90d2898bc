"""The usage reports draw their table themselves (``store.cli.drawn``; a year of days
drawn by rich's ``Table`` took longer than reading them): segment for segment what rich
draws, with colour and without, at many widths, for rows of one or several model lines,
breakdown rows (dim) and the Total row (bold); a table wider than the console narrowed and
wrapped as rich does it (the reports' ``fit="wrap"``: at 80 columns ``usage session`` drew
4,401 sessions through rich in 3.4 s); a title wider than the table, wide characters to wrap
or a tab are left to rich."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from store.cli.drawn import draw_table

COLUMNS = ["Date", "Models", "Input", "Output", "Cache Create", "Cache Read", "Total Tokens",
           "Cost (USD)"]
JUSTIFY = ["left", "left"] + ["right"] * 6


def _rich(title: str, caption: str, lines, total) -> Table:
    table = Table(title=title, caption=caption)
    for column, side in zip(COLUMNS, JUSTIFY, strict=True):
        table.add_column(column, justify=side)
    for cells, style in lines:
        table.add_row(*(Text(cell) for cell in cells), style=style)
    table.add_section()
    table.add_row(*(Text(cell) for cell in total[0]), style=total[1])
    return table


def _console(width: int, colour: bool) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=colour,
                   color_system="truecolor" if colour else None)


@pytest.mark.parametrize("fit", [None, "wrap"])
@pytest.mark.parametrize("seed", range(6))
def test_the_drawing_is_richs_own(seed: int, fit) -> None:
    rng = random.Random(seed)
    drawn = declined = narrowed = 0
    for _ in range(60):
        lines = []
        wide = rng.choice(["é漢", "", "-20250929"])
        for day in range(rng.randint(1, 6)):
            models = "\n".join(f"- claude-{'x' * rng.randint(0, 14)}{wide}"
                               for _ in range(rng.randint(0, 3)))
            counts = [f"{rng.randint(0, 10 ** rng.randint(1, 10)):,}" for _ in range(5)]
            lines.append(([f"2025-01-{day:02d}", models, *counts, "$1.00*"],
                          rng.choice([None, None, "dim"])))
        total = (["Total", "", *(["12,345"] * 5), "$9.99"], "bold")
        title = rng.choice(["token usage by date", "t", "a long title " * rng.randint(1, 9)])
        for colour in (False, True):
            width = rng.choice([50, 80, 120, 200])
            ours, theirs = _console(width, colour), _console(width, colour)
            found = draw_table(ours, title, COLUMNS, JUSTIFY, lines, caption="prices: shipped",
                               total=total, fit=fit)
            if found is None:
                declined += 1
                continue
            ours.print(found)
            theirs.print(_rich(title, "prices: shipped", lines, total))
            assert ours.file.getvalue() == theirs.file.getvalue()
            drawn += 1
            narrowed += draw_table(_console(width, colour), title, COLUMNS, JUSTIFY, lines,
                                   caption="prices: shipped", total=total) is None
    assert drawn > 20 and declined > 5  # (both ways taken)
    assert (narrowed > 5) == (fit == "wrap")  # (tables wider than the console, drawn)


def test_a_tab_is_left_to_rich() -> None:
    lines = [(["2025-01-01", "- a\tb", "1", "2", "3", "4", "10", "$1.00"], None)]
    total = (["Total", "", "1", "2", "3", "4", "10", "$1.00"], "bold")
    assert draw_table(_console(200, False), "t", COLUMNS, JUSTIFY, lines, caption="c",
                      total=total) is None
