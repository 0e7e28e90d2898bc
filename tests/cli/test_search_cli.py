"""``transcript-store search``: the message search on the command line, on both backends.

A table (session prefix, time, agent, role, the snippet with the match highlighted and
everything stored escaped), ``--json`` lines of docs/json/message-hit.schema.json, one line
for no match, filters, a typed error for a query it cannot read (no traceback), and a read
that never writes: a store whose index is behind is searched as indexed, and says so.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

import store
from store.cli.main import cli
from store.cli.search import snippet_markup

SESSION = "5e55ion-aaaa-bbbb-cccc-000000000001"


def said(role: str, text: str, when: str) -> store.Message:
    return store.Message(role, (store.TextPart(text),),  # type: ignore[arg-type]
                         metadata={"timestamp": when})


def run(*args: str, code: int = 0, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)
    assert result.exit_code == code, (result.output, result.stderr)
    return result


@pytest.fixture
def seeded(store_url: str) -> str:
    with store.TranscriptStore.open(store_url) as opened:
        opened.append(SESSION, [
            said("user", "Set up LM Studio on the laptop [bold]please[/bold]",
                 "2026-01-10T10:00:00Z"),
            said("assistant", "LM Studio is installed; open LM Studio and load a model.",
                 "2026-01-10T10:01:00Z"),
        ], agent="claude-code", cwd="/work/alpha", title="[red]local[/red] models")
        opened.append("other-session", [said("user", "nothing about it", "2026-01-11T00:00:00Z")],
                      agent="codex", cwd="/work/beta")
        opened.update_search_index()
    return store_url


def test_the_table_shows_each_message_found(seeded: str) -> None:
    output = run("search", "lm studio", "--db", seeded, env={"COLUMNS": "200"}).stdout
    lines = [line for line in output.splitlines() if "5e55ion-aaaa" in line]
    assert len(lines) == 2
    assert "assistant" in lines[0] and "user" in lines[1]  # the better match first
    assert "claude-code" in lines[0]
    assert "[bold]please" in output  # stored text shown as written, never as markup


def test_the_match_is_highlighted_and_the_rest_escaped(seeded: str) -> None:
    with store.TranscriptStore.open(seeded, read_only=True) as opened:
        hit = opened.search_messages("please")[0]
    markup = snippet_markup(hit)
    assert "[bold yellow]please[/]" in markup
    assert "\\[bold]" in markup and "\\[/bold]" in markup  # escaped: shown, not applied
    coloured = run("search", "please", "--db", seeded,
                   env={"COLUMNS": "200", "FORCE_COLOR": "1", "NO_COLOR": ""}).stdout
    assert "\x1b[1;33mplease" in coloured and "[bold]" in coloured


@pytest.mark.parametrize("width", ["200", "60", "30"])
def test_to_a_pipe_the_table_is_what_rich_draws(seeded: str, width: str) -> None:
    """Where every snippet fits, the table goes to a pipe without rich (drawn_hits): the
    characters rich's table prints; narrower, rich folds the snippets, as before."""
    import io

    from rich.console import Console

    from store.cli.search import drawn_hits, hit_table

    with store.TranscriptStore.open(seeded, read_only=True) as opened:
        hits = opened.search_messages("lm studio") + opened.search_messages("please")
    theirs = Console(file=io.StringIO(), width=int(width), soft_wrap=False, color_system=None,
                     emoji=False)
    theirs.print(hit_table(hits, 0))
    output = run("search", "lm studio", "--db", seeded, env={"COLUMNS": width}).stdout
    alone = Console(file=io.StringIO(), width=int(width), soft_wrap=False, color_system=None,
                    emoji=False)
    alone.print(hit_table(hits[:2], 0))
    assert output == alone.file.getvalue()  # type: ignore[attr-defined]
    from store.cli.plain import PlainConsole

    drawn = drawn_hits(PlainConsole(int(width), lambda: theirs), hits, 0)
    if width == "200":
        assert drawn is not None
    if drawn is not None:
        assert drawn.text() == theirs.file.getvalue()  # type: ignore[attr-defined]


def test_json_lines(seeded: str) -> None:
    rows = [json.loads(line) for line in run("search", "studio", "--db", seeded,
                                             "--json").stdout.splitlines()]
    assert [(r["session_id"], r["position"], r["role"]) for r in rows] == [
        (SESSION, 1, "assistant"), (SESSION, 0, "user")]
    first: dict[str, Any] = rows[0]
    assert first["created_at"] == "2026-01-10T10:01:00Z"
    assert (first["agent"], first["cwd"], first["title"]) == (
        "claude-code", "/work/alpha", "[red]local[/red] models")
    assert [first["snippet"][a:b] for a, b in first["highlights"]] == ["Studio", "Studio"]
    assert first["rank"] > rows[1]["rank"]


def test_filters_and_paging(seeded: str) -> None:
    def found(*options: str) -> list[tuple[str, int]]:
        out = run("search", "studio", "--db", seeded, "--json", *options).stdout
        return [(r["session_id"][:7], r["position"]) for r in map(json.loads, out.splitlines())]

    assert found("--role", "user") == [("5e55ion", 0)]
    assert found("--agent", "codex") == []
    assert found("--project", "/work/alpha") == [("5e55ion", 1), ("5e55ion", 0)]
    assert found("--since", "2026-01-10T10:00:30Z") == [("5e55ion", 1)]
    assert found("--until", "2026-01-10T10:00:30Z") == [("5e55ion", 0)]
    assert found("--session", "5e55ion-aaaa") == [("5e55ion", 1), ("5e55ion", 0)]
    assert found("--limit", "1", "--offset", "1") == [("5e55ion", 0)]


def test_no_match_says_so_in_one_line(seeded: str) -> None:
    result = run("search", "zanzibar", "--db", seeded)
    assert result.stdout.strip().splitlines() == ["no messages match 'zanzibar'"]
    assert run("search", "zanzibar", "--db", seeded, "--json").stdout == ""


@pytest.mark.parametrize(("query", "problem"), [('"lm studio', "quote is not closed"),
                                                ("st*dio", "a * goes at the end"),
                                                ("-studio", "nothing to find")])
def test_a_query_it_cannot_read_is_one_error_line(seeded: str, query: str,
                                                  problem: str) -> None:
    result = run("search", "--db", seeded, "--", query, code=1)
    assert problem in result.stderr and "Traceback" not in result.output + result.stderr
    assert result.stderr.startswith("error: search query")


def test_a_read_never_writes_and_says_when_the_index_is_behind(seeded: str) -> None:
    with store.TranscriptStore.open(seeded) as opened:
        opened.append(SESSION, [said("user", "and zanzibar?", "2026-01-12T00:00:00Z")])
    result = run("search", "zanzibar", "--db", seeded)
    assert "no messages match" in result.stdout
    assert "1 session has messages not indexed yet" in result.stderr
    with store.TranscriptStore.open(seeded, read_only=True) as opened:
        assert opened.messages_behind() == 1  # the search wrote nothing
    run("db", "index", "--db", seeded)
    result = run("search", "zanzibar", "--db", seeded)
    assert "zanzibar" in result.stdout and "not indexed" not in result.stderr


@given(snippets=st.lists(st.lists(st.sampled_from(
           ["lm", "studio", "config", "handler", "x" * 25, "a" * 70, "[bold]", "é", "--", "/"]),
           max_size=40).map(" ".join), min_size=1, max_size=4),
       marks=st.booleans(), width=st.integers(min_value=30, max_value=220))
@settings(max_examples=150, deadline=None)
def test_any_hits_to_a_pipe_print_what_rich_prints(snippets: list[str], marks: bool,
                                                   width: int) -> None:
    """Folded or not, the drawn table is rich's, character for character (or rich draws)."""
    import io
    from datetime import UTC, datetime

    from rich.console import Console

    from store.cli.plain import PlainConsole
    from store.cli.search import drawn_hits, hit_table
    from store.core.textquery import HIT_END, HIT_START

    hits = [store.MessageHit(f"{n:08d}-aaaa-bbbb-cccc-000000000000", n * 7, "assistant",
                             datetime(2026, 1, 10, 10, n, tzinfo=UTC), "claude-code",
                             "/work", None,
                             snippet.replace("studio", f"{HIT_START}studio{HIT_END}")
                             if marks else snippet, 1.0)
            for n, snippet in enumerate(snippets)]
    theirs = Console(file=io.StringIO(), width=width, soft_wrap=False, color_system=None,
                     emoji=False)
    theirs.print(hit_table(hits, 0))
    drawn = drawn_hits(PlainConsole(width, lambda: theirs), hits, 0)
    if drawn is not None:
        assert drawn.text() == theirs.file.getvalue()  # type: ignore[attr-defined]
    elif all(s.isascii() for s in snippets) and width >= 80:
        raise AssertionError("an ASCII table with room for its snippets went to rich")
