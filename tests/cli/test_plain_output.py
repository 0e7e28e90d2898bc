"""Output that is not a terminal is written without rich (``store.cli.plain``): the same
characters rich prints with no colour system, for drawn tables, plain lines and markup
transcripts; what rich would change (markup, an emoji code, a control character, a tab, a
line wider than the console, a renderable of rich's own) goes to rich; the rule for "not a
terminal" is rich's; a read command to a pipe does not import ``rich.console``; a closed
pipe ends the command quietly, as rich's console does. Markup is made plain without rich
where it can be, the text rich would print; an emoji code (``:smile:``) is text like any
other, on both paths."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from store.cli._common import print_markup
from store.cli.drawn import DrawnTable, draw_table
from store.cli.plain import PlainConsole, cells, cut, plain_stdout

LINES = ["no usage recorded in this range", "a  b   ", " lead", "x" * 40, "x" * 41,
         "é漢 wide", "emoji 🚀 ok", "no usage recorded: 3 claude-code sessions (ab, cd)",
         "[bold]markup[/bold]", r"a \[not markup]", "ends with \\", "tab\there",
         "bell\x07", "cr\rlf", ":smile: code", "time 12:30:45 colons", "", "two\nlines"]


def _rich(width: int) -> Console:
    # (emoji=False, as store.cli._common.rich_console makes it: ":smile:" stays as written)
    return Console(file=io.StringIO(), width=width, soft_wrap=False, color_system=None,
                   emoji=False)


def _both(width: int, print_with, capsys) -> tuple[str, str]:
    """What ``print_with`` printed on a PlainConsole (to stdout) and on rich's console."""
    theirs = _rich(width)
    made: list[Console] = []

    def make() -> Console:
        made.append(Console(file=sys.stdout, width=width, soft_wrap=False, color_system=None,
                            emoji=False))
        return made[-1]

    capsys.readouterr()
    print_with(PlainConsole(width, make))
    ours = capsys.readouterr().out
    print_with(theirs)
    return ours, theirs.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("width", [20, 40, 80])
def test_lines_print_as_rich_prints_them(width: int, capsys) -> None:
    for line in LINES:
        ours, theirs = _both(width, lambda out, line=line: out.print(line), capsys)
        assert ours == theirs, line


@pytest.mark.parametrize("width", [30, 80, 200])
def test_tables_print_as_rich_prints_them(width: int, capsys) -> None:
    tables = [DrawnTable("tool usage", ["tool", "calls"], [["Bash", "1,204"], ["Read", "7"]],
                         justify=["left", "right"]),
              DrawnTable("t", ["a", "b"], [["x" * 30, "漢字 " * 5]]),  # (wider than 30: rich)
              DrawnTable("t", ["a"], [])]  # (no rows: rich's own table)
    for table in tables:
        ours, theirs = _both(width, lambda out, table=table: out.print(table), capsys)
        assert ours == theirs
    rows = [(["2025-01-01", "- claude\n- gpt", "1,000", "$1.00"], None),
            (["  └ claude", "", "10", "$0.10"], "dim")]
    total = (["Total", "", "1,000", "$1.00"], "bold")

    def report(out) -> None:
        drawn = draw_table(out, "token usage by date", ["Date", "Models", "Input", "Cost"],
                           ["left", "left", "right", "right"], rows, caption="prices: shipped",
                           total=total)
        assert drawn is not None or width < 45
        out.print(drawn if drawn is not None else "declined")

    ours, theirs = _both(width, report, capsys)
    assert ours == theirs


def test_markup_transcripts_print_as_rich_prints_them(capsys) -> None:
    text = ("[bold]s-1[/bold]  title  anthropic claude\n[dim]started 2025-01-01[/dim]\n\n"
            "[bold green]#0 user[/bold green]\nhello \\[world] :smile: 漢字\twide tab\n"
            "bell\x07 and cr\r in a result\n"
            + "a long line that runs past the console's width " * 4)
    ours, theirs = _both(30, lambda out: print_markup(out, text), capsys)
    assert ours == theirs
    assert "\x1b" not in ours and "[bold]" not in ours


def test_what_rich_must_print_goes_to_rich(capsys) -> None:
    made: list[int] = []

    def make() -> Console:
        made.append(1)
        return Console(file=sys.stdout, width=40, color_system=None, emoji=False)

    out = PlainConsole(40, make)
    for plain in ("plain", "x" * 40, DrawnTable("t", ["a"], [["x"]]), "a :smile:"):
        out.print(plain)
    assert made == []  # (none of these needed rich: an emoji code is text like any other)
    for other in ("[bold]x[/bold]", "x" * 41, "tab\t", "x"):
        out.print(other, **({"style": "bold"} if other == "x" else {}))
    assert made == [1]  # (one console, made on first use, kept)
    assert out.tab_size == 8  # (its own: rich's default)
    printed = capsys.readouterr().out
    assert printed.startswith("plain\n" + "x" * 40 + "\n  t  \n┏━━━┓\n┃ a ┃\n┡━━━┩\n│ x │\n"
                              "└───┘\na :smile:\n")
    assert "\nx\n" + "x" * 40 + "\nx\ntab     \nx\n" in printed  # (rich: wrapped ...)


def test_cells_counts_as_rich_counts() -> None:
    from rich.cells import cell_len

    for text in CELL_TEXTS:
        assert cells(text) == cell_len(text), text


CELL_TEXTS = ["abc", "", "é", "漢字", "🚀", "tab\t", "bell\x07", "x" * 100, "├──┤", "cut …",
              "… …", "…" * 30, "two …\nlines", "e\u0301 combining …", "漢 wide …", "a\u200bb"]


def test_cut_cuts_as_rich_cuts() -> None:
    """A cell cut to its column's width: unchanged when it fits, else rich's ``set_cell_size``
    of one column less and an ellipsis (the fast path for one-column characters too)."""
    from rich.cells import cell_len, set_cell_size

    for text in CELL_TEXTS:
        for width in range(0, 35):
            want = (text if cell_len(text) <= width
                    else set_cell_size(text, max(0, width - 1)) + "…")
            assert cut(text, width) == want, (text, width)


@pytest.mark.parametrize(("env", "tty", "plain"), [
    ({}, False, True), ({}, True, False), ({"FORCE_COLOR": "1"}, False, False),
    ({"FORCE_COLOR": ""}, True, True), ({"TTY_COMPATIBLE": "1"}, False, False),
    ({"TTY_COMPATIBLE": "0"}, True, True), ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"},
                                            False, True)])
def test_not_a_terminal_by_richs_rule(env, tty, plain, monkeypatch) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    class Out(io.StringIO):
        def isatty(self) -> bool:
            return tty

    monkeypatch.setattr(sys, "stdout", Out())
    assert plain_stdout() is plain
    assert Console(file=sys.stdout).is_terminal is not plain


def _run(code: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**env, "HOME": str(home), "TRANSCRIPT_STORE_URL": ""},
                          timeout=120, check=False)


def test_a_read_command_to_a_pipe_does_not_load_rich_console(tmp_path: Path) -> None:
    demo = subprocess.run([sys.executable, "-m", "store", "demo", "--db",
                           f"sqlite:///{tmp_path / 'demo.sqlite'}"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert demo.returncode == 0, demo.stderr
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    indexed = subprocess.run([sys.executable, "-m", "store", "db", "index", "--db", url],
                             capture_output=True, text=True, timeout=120, check=False)
    assert indexed.returncode == 0, indexed.stderr
    import sqlite3

    with sqlite3.connect(tmp_path / "demo.sqlite") as conn:
        (sid,) = conn.execute("SELECT session_id FROM sessions ORDER BY session_id "
                              "LIMIT 1").fetchone()
    for args, drawn in ((["sessions", "list"], "┏"), (["usage", "daily"], "┏"),
                        (["tools", "usage"], "┏"), (["sessions", "show", sid], "#0 "),
                        (["sessions", "tree", sid], sid), (["search", "the"], "┏")):
        found = _run("import sys, runpy\n"
                     f"sys.argv = ['store', *{args!r}, '--db', {url!r}]\n"
                     "try:\n    runpy.run_module('store', run_name='__main__')\n"
                     "except SystemExit as e:\n    assert not e.code, e.code\n"
                     "print(sorted(m for m in sys.modules if m.startswith('rich')), "
                     "file=sys.stderr)", tmp_path)
        assert found.returncode == 0, found.stderr
        loaded = found.stderr.strip().splitlines()[-1]
        assert "rich.console" not in loaded and "rich.markup" not in loaded, (args, loaded)
        assert drawn in found.stdout or "no usage" in found.stdout, (args, found.stdout)


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    code = ("from store.cli.plain import PlainConsole\n"
            "out = PlainConsole(80, lambda: None)\n"
            "for _ in range(100000):\n    out.print('x' * 70)\n")
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()  # (the reader goes away: the child's writes meet a closed pipe)
        error = child.stderr.read()
        assert child.wait(timeout=120) == 0, error
    assert "Traceback" not in error and "Broken pipe" not in error


def test_one_line_is_the_first_non_blank_line_and_says_when_more_follow() -> None:
    """``one_line`` (every table cell): the first non-blank line, stripped, cut with an
    ellipsis at ``limit``, with `` …`` when another non-blank line follows; a reference
    that strips every line agrees on texts of blank, whitespace-only (Unicode spaces
    included) and non-blank lines in every order."""
    import itertools

    from store.cli._common import one_line, visible

    def reference(text: str, limit: int) -> str:
        if not text:
            return ""
        lines = [line for line in visible(text).splitlines() if line.strip()]
        first = lines[0].strip() if lines else ""
        if len(first) > limit:
            return first[:limit - 1] + "…"
        return first + " …" if len(lines) > 1 else first

    pieces = ["", " ", "\u3000\u00a0", "\t", "ab", "  padded  ", "x" * 70, "\x1b[31m"]
    for count in (1, 2, 3):
        for chosen in itertools.product(pieces, repeat=count):
            for sep in ("\n", "\r\n", "\u2028"):
                text = sep.join(chosen)
                for limit in (5, 60, 1000):
                    assert one_line(text, limit) == reference(text, limit), (text, limit)
    assert one_line("  \n first \n\n second") == "first …"
    assert one_line("\n\n only \n  ") == "only"
    assert one_line("x" * 70) == "x" * 59 + "…"


MARKUP = ["", "plain", "[bold]s-1[/bold]  t", "[dim]x[/dim]\n[bold green]#0 user[/bold green]",
          r"a \[not markup] b", r"\\[bold]x\\[/bold]", r"\\\[bold]", "ends \\", "ends \\\\",
          "[1] [a]b[/a] [/]", "[bold]open", "tab\there\tx\n\tlead", "漢字\twide",
          "bell\x07 cr\r vt\x0b ff\x0c bs\x08 esc\x1b", ":smile: :thumbs_up:",
          "[link=https://x.org/a]l[/link]", "[bold][dim]x[/bold]y[/dim]", "[/bold]",
          "[@click]x[/]", "[x=1]y[/x]", "[b]x[/B]", "[B]x[/b]", "a[b c]d[/b c]e"]


def _rendered(markup: str) -> str | type[Exception]:
    from rich.errors import MarkupError
    from rich.markup import render

    try:
        made = render(markup, emoji=False)
    except MarkupError:
        return MarkupError
    made.expand_tabs(8)
    return made.plain


@pytest.mark.parametrize("markup", MARKUP)
def test_markup_text_is_what_rich_renders(markup: str) -> None:
    """The plain path's text is rich's, or it asks rich (a markup error: rich raises it)."""
    from store.cli.plain import markup_plain

    ours = markup_plain(markup)
    if ours is not None:
        assert ours == _rendered(markup)
    assert ours is not None or markup in ("[bold][dim]x[/bold]y[/dim]", "[/bold]",
                                          "[@click]x[/]", "漢字\twide", "[B]x[/b]",
                                          "[1] [a]b[/a] [/]")


@given(st.text(alphabet="[]\\/ab#@=: \t\n\x07\r漢", max_size=40))
@settings(max_examples=400, deadline=None)
def test_markup_text_and_escape_agree_with_rich_on_any_text(text: str) -> None:
    from rich.markup import escape

    from store.cli.plain import markup_escape, markup_plain

    assert markup_escape(text) == escape(text)
    ours = markup_plain(text)
    if ours is not None:
        assert ours == _rendered(text)
    # escaped, any text comes back as itself (less the control codes rich drops)
    wrapped = f"[dim]{markup_escape(text)}[/dim]"
    back = markup_plain(wrapped)
    if back is not None:
        assert back == _rendered(wrapped)


def test_a_transcript_with_emoji_codes_is_shown_as_written(tmp_path: Path) -> None:
    """``sessions show``, ``search`` and ``calls search`` print ``:smile:`` as stored (rich
    turned it into the emoji), to a pipe and to a terminal."""
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(
        '{"role":"user","content":"ship it :rocket: and [bold]x[/bold]"}\n'
        '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
        '"function":{"name":"bash","arguments":"{\\"command\\":\\"echo :smile:\\"}"}}]}\n'
        '{"role":"tool","tool_call_id":"c1","content":"done :thumbs_up:"}\n')
    url = f"sqlite:///{tmp_path / 't.sqlite'}"
    env = {**os.environ, "COLUMNS": "160", "NO_COLOR": ""}
    env.pop("FORCE_COLOR", None)

    def run(*args: str, **extra: str) -> str:
        done = subprocess.run([sys.executable, "-m", "store", *args, "--db", url],
                              capture_output=True, text=True, timeout=120, check=False,
                              env={**env, **extra})
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("demo", str(transcript))
    run("db", "index")
    for extra in ({}, {"FORCE_COLOR": "1"}):
        shown = run("sessions", "show", "s", **extra)
        assert ":rocket:" in shown and "echo :smile:" in shown and ":thumbs_up:" in shown
        assert "[bold]x[/bold]" in shown
        assert not {"🚀", "😄", "👍"} & set(shown)
        found = run("search", "ship", **extra)
        assert ":rocket:" in found and "🚀" not in found
        calls = run("calls", "search", "--text", "smile", **extra)
        assert ":smile:" in calls and "😄" not in calls


@given(st.text(alphabet="ab cdefgh-_./\u2026漢", max_size=120), st.integers(1, 60))
@settings(max_examples=500, deadline=None)
def test_folded_lines_are_richs(text: str, width: int) -> None:
    """``folded``: the lines rich's ``Text.wrap(overflow="fold")`` makes, padded to the width
    (or ``None`` where a character is wider than one column)."""
    from rich.text import Text

    from store.cli.plain import folded

    ours = folded(text, width)
    if "漢" in text:
        assert ours is None
        return
    theirs = [line.plain for line in
              Text(text).wrap(_rich(300), width, overflow="fold", justify="left")]
    assert ours == theirs


@given(st.text(alphabet="ab cdefgh-_./\u2026█漢", max_size=120), st.integers(1, 60),
       st.sampled_from(["left", "right"]), st.booleans())
@settings(max_examples=800, deadline=None)
def test_wrapped_lines_are_richs(text: str, width: int, side: str, wrap: bool) -> None:
    """``wrapped``: the lines a table cell of rich's default ``overflow="ellipsis"`` makes of
    a line, wrapped at words (or not: ``no_wrap``), cut with ``…``, each side justified (the
    padding left to the table), or ``None`` where a character is wider than one column."""
    from rich.text import Text

    from store.cli.plain import wrapped

    ours = wrapped(text, width, right=side == "right", wrap=wrap)
    if "漢" in text:
        assert ours is None
        return
    theirs = [line.plain for line in Text(text).wrap(_rich(300), width, justify=side,  # type: ignore[arg-type]
                                                     overflow="ellipsis", no_wrap=not wrap)]
    assert ours is not None
    if side == "left":
        ours = [line.ljust(width) for line in ours]
    else:
        ours = [line.rjust(width) for line in ours]
    assert ours == theirs


def test_json_lines_go_out_in_blocks_not_a_write_a_line(monkeypatch) -> None:
    """``--json`` to a terminal (line-buffered: a write call a line, 840 calls' JSON 182 ->
    142 ms at a terminal): the lines are written in blocks of about 64 KB, the same text;
    the last block goes out when the rows end, even with an error."""
    import orjson

    from store.cli._common import emit_json

    class Out(io.StringIO):
        writes = 0

        def write(self, text: str) -> int:
            self.writes += 1
            return super().write(text)

    out = Out()
    monkeypatch.setattr(sys, "stdout", out)
    rows = [{"n": i, "text": "x" * 200} for i in range(3000)]
    assert emit_json(rows) == 3000
    assert out.getvalue() == "".join(orjson.dumps(row).decode() + "\n" for row in rows)
    assert 2 <= out.writes <= 12  # (~650 KB in blocks of 64 KB)

    def failing():
        yield {"n": 1}
        raise RuntimeError("the database went away")

    out = Out()
    monkeypatch.setattr(sys, "stdout", out)
    with pytest.raises(RuntimeError):
        emit_json(failing())
    assert out.getvalue() == '{"n":1}\n'
