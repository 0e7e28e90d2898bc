"""A usage report wider than the terminal (stop 67): ccusage's compact mode (the cache and
total token columns left out, and said so below the table; ``--compact``: always), the counts
and costs never cut (the key, time and models columns give up their width), and the model
names as ccusage's tables print them (``claude-sonnet-4-20250514`` -> ``sonnet-4``), whole
in ``--json``. Before, at 80 columns every column was narrowed alike: ``$2.…`` for a cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from usage_agent_files import SONNET, claude_lines, write_jsonl

import store
from store.cli.drawn import draw_table, kept_widths
from store.cli.main import cli
from store.cli.plain import cells
from store.cli.usage_reports import short_model

OPUS = "claude-opus-4-1-20250805"
WIDE_ONLY = ("Cache Create", "Cache Read", "Total Tokens", "Subagents")


@pytest.fixture
def url(store_url: str, tmp_path: Path) -> str:
    """Two sessions, the second on Sonnet and Opus, in a long folder; one a subagent."""
    write_jsonl(tmp_path / "claude" / "a.jsonl", claude_lines("a" * 36, "2025-09-03"))
    write_jsonl(tmp_path / "claude" / "b.jsonl",
                claude_lines("b" * 36, "2025-09-03", prefix="s")
                + claude_lines("b" * 36, "2025-09-04", model=OPUS, prefix="o"))
    with store.TranscriptStore.open(store_url) as db:
        store.import_paths(db, [tmp_path / "claude"], format="claude-code", settle=0)
        db.link_session("b" * 36, store.SessionLink("a" * 36, "subagent", "toolu_m1"))
    return store_url


def run(columns: int, *args: str) -> str:
    result = CliRunner().invoke(cli, ["usage", *args], catch_exceptions=False,
                                env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, (result.output, result.stderr)
    return result.stdout


def _table_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line[:1] in "┏┃┡│├└"]


@pytest.mark.parametrize("report", ["daily", "session", "project", "model", "monthly"])
@pytest.mark.parametrize("columns", [50, 64, 80])
def test_a_narrow_terminal_gets_ccusages_compact_table_with_whole_numbers(
        url: str, report: str, columns: int) -> None:
    out = run(columns, report, "--own-only", "--db", url)
    doc = json.loads(run(columns, report, "--own-only", "--json", "--db", url))
    rows = next(v for k, v in doc.items() if isinstance(v, list) and k != "missing_usage")

    lines = _table_lines(out)
    assert lines and all(cells(line) <= columns for line in lines)
    head = "\n".join(line for line in lines if line.startswith("┃"))
    for column in WIDE_ONLY:
        assert column.split()[0] not in head  # (a header may wrap: its first word)
    assert "compact: " in out and f"left out to fit {columns} columns" in " ".join(
        out.split())
    # every cost and count whole, the Total row's too
    flat = "\n".join(lines)
    for row in rows:
        assert f"${row['cost_usd']:,.2f}" in flat
        assert f"{row['input_tokens']:,}" in flat and f"{row['output_tokens']:,}" in flat
    # (at 50 columns "Total" itself may be cut: the row is the one with the totals' counts)
    total = next(line for line in lines if f"${doc['totals']['cost_usd']:,.2f}" in line)
    assert f"{doc['totals']['output_tokens']:,}" in total
    assert f"{doc['totals']['input_tokens']:,}" in total


@pytest.mark.parametrize(("report", "columns"), [("session", 250), ("daily", 120)])
def test_a_table_that_fits_keeps_every_column_and_says_nothing(
        url: str, report: str, columns: int) -> None:
    out = run(columns, report, "--db", url)

    head = next(line for line in _table_lines(out) if line.startswith("┃"))
    for column in WIDE_ONLY if report == "session" else WIDE_ONLY[:-1]:
        assert column in head
    assert "compact" not in out and "…" not in out
    assert max(map(cells, _table_lines(out))) <= columns
    if report == "session":
        assert "a" * 36 in out  # the session id whole


def test_compact_asks_for_the_compact_table_at_any_width(url: str) -> None:
    out = run(250, "daily", "--compact", "--db", url)

    head = next(line for line in _table_lines(out) if line.startswith("┃"))
    assert all(column not in head for column in WIDE_ONLY)
    assert "Input" in head and "Output" in head and "Cost (USD)" in head
    assert ("compact: Cache Create, Cache Read and Total Tokens left out to fit 250 columns"
            in out)
    # the same report in --json is whole whatever the table leaves out
    doc = json.loads(run(250, "daily", "--compact", "--json", "--db", url))
    assert "cache_read_tokens" in doc["daily"][0]


def test_tables_name_models_as_ccusage_does_and_json_names_them_whole(url: str) -> None:
    out = run(250, "daily", "--breakdown", "--db", url)
    doc = json.loads(run(250, "daily", "--json", "--db", url))

    assert "- sonnet-4" in out and "- opus-4-1" in out
    assert "└ sonnet-4" in out and "└ opus-4-1" in out  # the breakdown rows too
    assert SONNET not in out and OPUS not in out
    assert {m for row in doc["daily"] for m in row["models_used"]} == {SONNET, OPUS}
    # the model report's key is the model: whole
    assert SONNET in run(250, "model", "--db", url)


@pytest.mark.parametrize(("name", "short"), [
    # ccusage's own cases (packages/terminal/src/table.ts, its tests)
    ("claude-3-5-haiku-20241022", "haiku-3-5"),
    ("claude-opus-4-6-fast", "opus-4-6-fast"),
    ("claude-opus-4-20250514-fast", "opus-4-fast"),
    ("anthropic/claude-sonnet-4-6", "sonnet-4-6"),
    ("claude-sonnet-4-20250514", "sonnet-4"),
    ("claude-sonnet-4-5-20250929", "sonnet-4-5"),
    ("claude-opus-4-5", "opus-4-5"),
    ("anthropic.claude-3-7-sonnet-20250219", "sonnet-3-7"),
    ("[pi] claude-opus-4-5", "[pi] opus-4-5"),
    # any other name as it is
    ("gpt-5-codex", "gpt-5-codex"),
    ("claude-from-the-future-9", "claude-from-the-future-9"),
    ("<synthetic>", "<synthetic>"),
    ("claude-sonnet-4-٢٠٢٥", "claude-sonnet-4-٢٠٢٥"),  # (digits are ASCII digits)
])
def test_short_model_names_are_ccusages(name: str, short: str) -> None:
    assert short_model(name) == short


@pytest.mark.parametrize("room", [30, 45, 60, 79, 80, 200])
def test_kept_columns_keep_their_widths_and_the_others_share_the_rest(room: int) -> None:
    natural = [36, 16, 12, 9, 11, 10]
    kept = [False, False, False, True, True, True]
    widths = kept_widths(natural, room, kept)

    if sum(natural) + 3 * len(natural) + 1 <= room:
        assert widths is None  # (it fits: nothing to narrow)
    elif room - 30 - 3 * 6 - 1 < 3:
        assert widths is None  # (the others would be left under one column each)
    else:
        assert widths is not None
        assert [w for w, k in zip(widths, kept, strict=True) if k] == [9, 11, 10]
        assert sum(widths) + 3 * len(widths) + 1 == room  # (the room used, no more)
        assert all(1 <= w <= n for w, n in zip(widths, natural, strict=True))
        assert widths[0] < natural[0]  # (the widest gives up width first)


def test_a_set_width_column_wraps_at_words_when_asked() -> None:
    drawn = draw_table(None, None, ["When", "Cost"], ["left", "right"],
                       [(["2025-01-01 00:40", "$1.00"], None)], widths=[10, 5],
                       max_width=80, fit="wrap")
    assert drawn is not None
    text = drawn.text()
    assert "│ 2025-01-01 │ $1.00 │" in text and "│ 00:40      │       │" in text
