"""A fitted table that cannot fit the terminal with its columns at their least widths leaves
out the columns marked droppable (the highest ``drop`` first, only as many as it must) and
says which below it, rather than cutting every column to a letter (stop 67: at 80 columns
``sessions list`` showed ``…`` for the title, agent, model, counts and folder, ``calls search``
two letters of each column). ``--wide`` and ``--json`` keep every column."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

import store
from store.cli.fitted import Column, fitted_table
from store.cli.main import cli
from store.cli.plain import cells

COLUMNS = [Column("time", keep=True), Column("id", flexible=True, minimum=9),
           Column("agent", minimum=6, drop=2), Column("folder", flexible=True, drop=3),
           Column("status", drop=1), Column("text", flexible=True, minimum=12, weight=3)]
ROW = ["2025-01-01 00:40", "0c37634a-9708-414f-bb90-d2fc7a8d6e19", "claude-code",
       "/home/dev/some/project", "error", "the text of the call, long enough to cut"]


def _lines(table: object, width: int) -> list[str]:
    return table.plain_text(width).splitlines()  # type: ignore[attr-defined]


@pytest.mark.parametrize("width", [40, 60, 70, 80, 100, 140, 200])
def test_the_highest_drop_goes_first_and_only_as_many_as_must(width: int,
                                                               monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    table = fitted_table("t", COLUMNS, [ROW, ROW])
    lines = _lines(table, width)
    head = next(line for line in lines if line.startswith("┃"))
    shown = [c.header for c in COLUMNS if f" {c.header} " in head]

    # each left-out column is named below, highest drop first; the kept ones all show
    left = [c.header for c in sorted(COLUMNS, key=lambda c: -c.drop) if c.drop
            and c.header not in shown]
    note = " ".join(line for line in lines if line[:1] not in "┏┃┡│└ ")
    if left:
        assert note.startswith(f"left out to fit {width} columns: {', '.join(left)} ")
        assert "--wide or --json" in note
    else:
        assert "left out" not in note
    droppable = sorted((c for c in COLUMNS if c.drop), key=lambda c: -c.drop)
    assert left == [c.header for c in droppable[:len(left)]]  # (in order, none skipped)
    assert all(cells(line) <= width for line in lines)
    # only as many as it must: with the last one left out back, the least widths do not fit
    if left:
        back = [c for c in COLUMNS if c.header in shown or c.header == left[-1]]
        least = sum(min(len(max([c.header, ROW[COLUMNS.index(c)]], key=len)),
                        max(c.minimum, len(c.header))) if c.flexible
                    else max(len(c.header), len(ROW[COLUMNS.index(c)])) for c in back)
        assert least + 3 * len(back) + 1 > width


def test_wide_keeps_every_column_and_says_nothing(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    lines = _lines(fitted_table("t", COLUMNS, [ROW], wide=True), 10_000)
    head = next(line for line in lines if line.startswith("┃"))
    assert all(f" {c.header} " in head for c in COLUMNS)
    assert ROW[1] in "".join(lines)  # (nothing cut)
    assert not any("left out" in line for line in lines)


def test_a_terminal_gets_the_note_too_also_from_richs_own_table(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    for row in (ROW, [*ROW[:-1], "a\ttab: rich lays it out"]):
        table = fitted_table("t", COLUMNS, [row])
        out = Console(file=io.StringIO(), width=60, force_terminal=True,
                      color_system="truecolor")
        out.print(table)
        printed = out.file.getvalue()  # type: ignore[attr-defined]
        assert "left out to fit 60 columns: folder" in printed


@pytest.fixture
def url(tmp_path: Path) -> str:
    db_url = f"sqlite:///{tmp_path / 'narrow.sqlite'}"
    with store.TranscriptStore.open(db_url) as db:
        db.append("0c37634a-9708-414f-bb90-d2fc7a8d6e19", [
            {"role": "user", "content": "list the files"},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "ls -la /srv"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "total 0"}],
            agent="claude-code", cwd="/home/dev/a/very/long/project/folder/name",
            title="list the files of the server and say which are new",
            model="claude-sonnet-4-20250514")
    return db_url


def run(columns: int, *args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False,
                                env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, (result.output, result.stderr)
    return result.stdout


def test_sessions_list_at_80_columns_keeps_what_identifies_a_session(url: str) -> None:
    out = run(80, "sessions", "list", "--db", url)
    row = next(line for line in out.splitlines() if line.startswith("│"))

    assert "list the files" in row and "claude-code" in row and "0c37634a" in row
    assert "left out to fit 80 columns: cwd, model" in out
    # the id's prefix is what `sessions show` takes
    prefix = row.split("│")[1].strip().rstrip("…")
    assert "ls -la /srv" in run(80, "sessions", "show", prefix, "--db", url)
    # the whole row in --json, and with --wide
    (listed,) = [json.loads(line) for line in run(80, "sessions", "list", "--json",
                                                  "--db", url).splitlines()]
    assert listed["cwd"] == "/home/dev/a/very/long/project/folder/name"
    assert "left out" not in run(80, "sessions", "list", "--wide", "--db", url)


def test_calls_search_at_80_columns_shows_the_call_not_letters(url: str) -> None:
    out = run(80, "calls", "search", "--tool", "bash", "--db", url)
    row = next(line for line in out.splitlines() if line.startswith("│"))

    assert "bash" in row and "ls -la" in row and "total 0" in row
    assert "left out to fit 80 columns: cwd, agent, args status" in out
    assert all(cells(line) <= 80 for line in out.splitlines())


def test_tools_usage_keeps_its_counts_and_leaves_out_the_times_first(url: str) -> None:
    narrow = run(80, "tools", "usage", "--db", url)
    wide = run(200, "tools", "usage", "--db", url)

    head = next(line for line in narrow.splitlines() if line.startswith("┃"))
    for column in ("tool", "raw names", "calls", "sessions", "invalid", "errors", "no result"):
        assert f" {column} " in head
    assert "seen" not in head
    assert "left out to fit 80 columns: first seen, last seen" in narrow
    assert "first seen" in wide and "last seen" in wide and "left out" not in wide
    assert "last seen" in run(80, "tools", "usage", "--wide", "--db", url)
