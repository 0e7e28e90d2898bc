"""Every table of one-line cells (``sessions list``, ``calls search``, ``tools usage``, ``db
stats`` ...) is drawn by ``store.cli.drawn.DrawnTable`` as rich's ``Table`` draws it: with
the columns fitted to the terminal (cells cut with ``…``) or at their natural widths, with
colour and without, wide characters included, character for character what rich printed
before; a table wider than the console narrowed, wrapped and cut as rich does it; what it
does not lay out (a title wider than the table, wide characters to wrap, no rows) is rich's
own drawing."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console

from store.cli.drawn import DrawnTable
from store.cli.fitted import Column, fitted_table

_WORDS = ["session", "a1b2c3", "漢字テスト", "é", "/home/dev/project", "x" * 40, "", "Bash",
          "run · tests", "emoji 🚀 here", "全\u3000", "▁▃█▇ ", "██░░"]


def _console(width: int, colour: bool) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=colour,
                   color_system="truecolor" if colour else None, soft_wrap=False)


def _printed(table: object, width: int, colour: bool, *, rich: bool) -> str:
    out = _console(width, colour)
    out.print(table.rich_table() if rich else table)  # type: ignore[attr-defined]
    return out.file.getvalue()  # type: ignore[attr-defined]


def _cells(rng: random.Random, columns: int) -> list[str]:
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 4)))
            for _ in range(columns)]


@pytest.mark.parametrize("seed", range(5))
def test_a_fitted_table_is_drawn_as_rich_draws_it(seed: int, monkeypatch) -> None:
    rng = random.Random(seed)
    drawn = 0
    for _ in range(40):
        width = rng.choice([40, 60, 80, 120, 200])
        monkeypatch.setenv("COLUMNS", str(width))
        columns = [Column("session", keep=True), Column("title", flexible=True, weight=3),
                   Column("msgs", justify="right", keep=True), Column("cwd", flexible=True)]
        rows = [_cells(rng, 4) for _ in range(rng.randint(1, 8))]
        table = fitted_table(rng.choice(["3 of 9 sessions", "t"]), columns, rows,
                             wide=rng.random() < 0.2)
        for colour in (False, True):
            ours = _printed(table, width, colour, rich=False)
            assert ours == _printed(table, width, colour, rich=True)
            drawn += "┏" in ours
    assert drawn > 40


@pytest.mark.parametrize("seed", range(3))
def test_a_natural_table_is_drawn_as_rich_draws_it(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        # (a wide header over one-column cells, and cells of several lines, as the usage
        # reports' models: a column is measured and padded as a whole where it can be)
        columns = rng.choice([["tool", "raw names", "calls", "first seen"],
                              ["工具", "raw · names", "calls 🚀", "first seen"]])
        rows = [_cells(rng, 4) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.5:
            rows = [["\n".join(cell.split(" ", 2)[:2]) if rng.random() < 0.5 else cell
                     for cell in row] for row in rows]
        if rng.random() < 0.3:  # (every cell plain ASCII)
            rows = [[cell.encode("ascii", "ignore").decode() for cell in row] for row in rows]
        table = DrawnTable(rng.choice(["tool usage", "a title longer than any table " * 3]),
                           columns, rows, justify=["left", "left", "right", "left"])
        for width in (30, 80, 200):
            for colour in (False, True):
                assert _printed(table, width, colour, rich=False) == \
                    _printed(table, width, colour, rich=True)


def test_what_is_not_drawn_is_left_to_rich() -> None:
    out = _console(40, False)
    wrapped_wide = DrawnTable("t", ["a", "b"], [["漢字" * 15, "y" * 30]])
    empty = DrawnTable("t", ["a", "b"], [])
    for table in (wrapped_wide, empty):
        assert table.__rich_console__(out, out.options).__next__().__class__.__name__ == "Table"
    for fits in (DrawnTable("t", ["a", "b"], [["x", "y"]]),
                 DrawnTable("t", ["a", "b"], [["x" * 30, "y y " * 10]])):
        assert fits.__rich_console__(out, out.options).__next__().__class__.__name__ == "Drawn"


@pytest.mark.parametrize("seed", range(4))
def test_a_table_wider_than_the_console_is_narrowed_as_rich_narrows_it(seed: int) -> None:
    """Columns of no set width (the usage reports, ``tools usage``): the widest give up
    width first, cells wrap at words, a longer word and a cut header end in ``…``, the
    header aligned at the bottom; columns of set widths (``calls search`` fitted with every
    column at its least): all narrowed evenly, each line cut. Drawn (not rich's) and the
    same characters as rich's, with colour and without."""
    rng = random.Random(seed)
    words = ["claude-sonnet-4-5-20250929", "1,234,567", "run tests", "/home/dev/project",
             "x" * 40, "█████", "", "a  b"]
    drawn = 0
    for _ in range(60):
        count = rng.randint(1, 8)
        columns = [rng.choice(["Date", "Models", "Cache Create", "Total Tokens", "x"])
                   for _ in range(count)]
        rows = [["\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(0, 3)))
                           for _ in range(rng.randint(1, 2))) for _ in range(count)]
                for _ in range(rng.randint(1, 6))]
        justify = [rng.choice(["left", "right"]) for _ in range(count)]
        widths = None
        if rng.random() < 0.5:  # (set widths, some narrower than their header or cells)
            rows = [[cell.split("\n")[0] for cell in row] for row in rows]
            widths = [max(1, max(len(line) for line in [c, *(r[i] for r in rows)])
                          - rng.choice([0, 0, 4])) for i, c in enumerate(columns)]
        table = DrawnTable("t", columns, rows, justify=justify, widths=widths)  # type: ignore[arg-type]
        for width in (20, 40, 80):
            for colour in (False, True):
                ours = _printed(table, width, colour, rich=False)
                assert ours == _printed(table, width, colour, rich=True)
            drawn += table.drawn(width) is not None
    assert drawn > 90  # (of 180: at 20 columns, many columns leave some none: rich draws)


@pytest.mark.parametrize("width", [40, 80, 200])
def test_a_terminal_prints_a_drawn_table_as_rich_prints_its_table(width: int,
                                                                 monkeypatch) -> None:
    """At a terminal the command line's console prints a drawn table without rich's crop of
    every line (it is never wider than the console): the same characters and escape codes as
    rich's ``Table`` printed on a console of the same settings; a table it does not draw is
    rich's own."""
    import sys

    from store.cli._common import rich_console

    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    rng = random.Random(width)
    rows = [[cell.encode("ascii", "ignore").decode() for cell in _cells(rng, 3)]
            for _ in range(20)]
    tables = [DrawnTable("t", ["session", "models", "calls"], rows,
                         justify=["left", "left", "right"]),
              DrawnTable("t", ["a", "b"], [["漢字" * 120, "y"]])]
    assert tables[0].drawn(width) is not None and tables[1].drawn(width) is None
    for table in tables:
        out = io.StringIO()
        monkeypatch.setattr(sys, "stdout", out)
        ours = rich_console(width)
        ours.print(table)
        theirs = Console(file=io.StringIO(), width=width, soft_wrap=False, emoji=False,
                         force_terminal=True, color_system="auto")
        theirs.print(table.rich_table())
        assert "\x1b[" in out.getvalue()
        assert out.getvalue() == theirs.file.getvalue()  # type: ignore[attr-defined]
