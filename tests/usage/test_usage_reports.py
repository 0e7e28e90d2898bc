"""``usage daily|weekly|monthly|session|project|agent|model`` (issue 35): ccusage's reports
with a Models column, ``--breakdown`` per model, a Total row, costs to the cent in tables
(exact in JSON), subagents rolled up to their parent (``--own-only``: not), the sessions with
no recorded usage named, period words for ``--since/--until``; on both backends."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from usage_agent_files import SONNET, claude_lines, write_jsonl

import store
from store.cli.main import cli
from store.cli.timespec import parse_time

FUTURE = "claude-from-the-future-9"
COUNTS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
          "total_tokens", "responses")


@pytest.fixture
def url(store_url: str, tmp_path: Path) -> str:
    """Session a (2025-09-03, Sonnet), session b (2025-09-03 Sonnet and 2025-09-04 a model
    without a price), linked below a as its subagent, and a kward session with replies and
    no usage."""
    write_jsonl(tmp_path / "claude" / "a.jsonl", claude_lines("a", "2025-09-03"))
    write_jsonl(tmp_path / "claude" / "b.jsonl", claude_lines("b", "2025-09-03", prefix="s")
                + claude_lines("b", "2025-09-04", model=FUTURE, prefix="n"))
    with store.TranscriptStore.open(store_url) as db:
        store.import_paths(db, [tmp_path / "claude"], format="claude-code", settle=0)
        db.link_session("b", store.SessionLink("a", "subagent", "toolu_m1"))
        db.append("k", [{"role": "user", "content": "hi"},
                        {"role": "assistant", "content": "hello"}], keys=["k1", "k2"],
                  agent="kward")
    return store_url


def run(*args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False,
                                env={"COLUMNS": "250"})
    assert result.exit_code == code, (result.output, result.stderr)
    return result.stdout, result.stderr


def document(*args: str) -> dict:
    out, _ = run("usage", *args, "--json")
    (line,) = out.splitlines()  # one document, as ccusage writes
    return json.loads(line)


def test_daily_rows_break_down_per_model_and_add_up_to_the_totals(url: str) -> None:
    doc = document("daily", "--db", url)
    days = {row["period"]: row for row in doc["daily"]}

    assert sorted(days) == ["2025-09-03", "2025-09-04"]
    assert days["2025-09-03"]["models_used"] == [SONNET]
    assert days["2025-09-04"]["models_used"] == [FUTURE]
    assert days["2025-09-04"]["cost_usd"] is None  # no price: never a guess
    assert days["2025-09-04"]["unpriced_models"] == [FUTURE]
    # two sessions on the 3rd, one response per message id: 2 x (120 + 41) output tokens
    assert days["2025-09-03"]["output_tokens"] == 2 * (120 + 41)
    for row in doc["daily"]:
        (part,) = row["model_breakdowns"]
        assert {k: part[k] for k in COUNTS} == {k: row[k] for k in COUNTS}
        assert part["model_name"] == row["models_used"][0]
    for key in COUNTS:
        assert doc["totals"][key] == sum(row[key] for row in doc["daily"])
    assert doc["totals"]["cost_usd"] == pytest.approx(days["2025-09-03"]["cost_usd"])
    assert doc["totals"]["unpriced_models"] == [FUTURE]


def test_the_table_has_models_a_total_row_cents_and_breakdown_rows(url: str) -> None:
    plain, _ = run("usage", "daily", "--db", url)
    broken, _ = run("usage", "daily", "--breakdown", "--db", url)
    cost = document("daily", "--db", url)["daily"][0]["cost_usd"]

    for header in ("Date", "Models", "Input", "Output", "Cache Create", "Cache Read",
                   "Total Tokens", "Cost (USD)"):
        assert header in plain
    assert f"${cost:,.2f}" in plain and f"{cost:.6f}" not in plain  # cents, not micro-dollars
    total = next(line for line in plain.splitlines() if "Total " in line and "│" in line)
    assert "$" in total and "*" in total  # part of it has no price, and says so
    assert f"no price for {FUTURE}" in plain
    assert f"└ {FUTURE}" in broken and f"└ {FUTURE}" not in plain
    assert broken.count("└ ") == 2  # one model a day


def test_a_subagent_counts_under_its_parent_unless_own_only(url: str) -> None:
    rolled = document("session", "--db", url)["sessions"]
    own = document("session", "--own-only", "--db", url)["sessions"]

    assert [(r["session_id"], r["subagent_sessions"]) for r in rolled] == [("a", ["b"])]
    assert sorted(r["session_id"] for r in own) == ["a", "b"]
    assert all(r["subagent_sessions"] == [] for r in own)
    assert rolled[0]["output_tokens"] == sum(r["output_tokens"] for r in own)
    assert rolled[0]["last_activity"].startswith("2025-09-04T10:00:07")
    table, _ = run("usage", "session", "--db", url)
    assert "Subagents" in table and "Last Activity" in table
    # the periods are the same either way
    assert document("daily", "--db", url)["daily"] == document(
        "daily", "--own-only", "--db", url)["daily"]


def test_sessions_without_usage_are_named_below_the_table_and_in_json(url: str) -> None:
    out, _ = run("usage", "daily", "--db", url)
    doc = document("agent", "--db", url)

    assert "no usage recorded: 1 kward session (k), not in the counts above" in out
    assert doc["missing_usage"] == [{"agent": "kward", "sessions": 1, "session_ids": ["k"]}]
    assert [row["agent"] for row in doc["agents"]] == ["claude-code"]
    with store.TranscriptStore.open(url, read_only=True) as db:
        assert store.sessions_without_usage(db, agent="claude-code") == []


def test_an_empty_range_says_so_in_one_line(url: str) -> None:
    out, _ = run("usage", "monthly", "--since", "2030-01", "--db", url)

    assert out.splitlines()[0] == "no usage recorded in this range"
    assert "┏" not in out  # no bare table frame


def test_since_and_until_select_the_periods(url: str) -> None:
    doc = document("daily", "--since", "2025-09-04T00:00Z", "--until", "2025-09-05T00:00Z",
                   "--db", url)
    assert [row["period"] for row in doc["daily"]] == ["2025-09-04"]


def test_by_given_twice_and_options_before_the_report_are_usage_errors(url: str) -> None:
    _, twice = run("usage", "--by", "day", "--by", "model", "--db", url, code=2)
    _, before = run("usage", "--db", url, "daily", code=2)

    assert "--by takes one value" in twice and "usage daily --breakdown" in twice
    assert "give the options after the report name" in before


def test_the_store_named_by_the_environment_is_no_option_before_the_report(url: str) -> None:
    result = CliRunner().invoke(cli, ["usage", "daily", "--json"], catch_exceptions=False,
                                env={"COLUMNS": "250", "TRANSCRIPT_STORE_URL": url})

    assert result.exit_code == 0, (result.output, result.stderr)
    assert json.loads(result.stdout)["daily"]


def test_the_earlier_by_form_still_writes_its_rows(url: str) -> None:
    out, _ = run("usage", "--by", "model", "--db", url, "--json")
    assert {json.loads(line)["model"] for line in out.splitlines()} == {SONNET, FUTURE}


@pytest.mark.parametrize(("word", "now", "expected"), [
    ("this-month", "2026-03-15T12:00", "2026-03-01"),
    ("last-month", "2026-03-15T12:00", "2026-02-01"),
    ("last-month", "2026-01-05T12:00", "2025-12-01"),
    ("this-week", "2026-03-15T12:00", "2026-03-09"),  # a Sunday: its week's Monday
    ("last-week", "2026-03-15T12:00", "2026-03-02"),
    ("this-year", "2026-03-15T12:00", "2026-01-01"),
    ("last-year", "2026-03-15T12:00", "2025-01-01"),
])
def test_period_words_are_the_first_moment_of_the_period(
        word: str, now: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    at = datetime.fromisoformat(now).replace(tzinfo=UTC)
    assert parse_time(word, at) == datetime.fromisoformat(expected).replace(tzinfo=UTC)
