"""``transcript-store usage`` and ``tools usage --by`` (issue 24): rows per period or key with
the four token counts and the cost, in JSON one object per row; a model without a price is
named; the per-tool context cost says it is an estimate; sparklines and bars per row."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from usage_agent_files import claude_lines, codex_lines, write_jsonl

from store.cli.main import cli
from store.cli.usage import bar, sparkline

COUNTS = {"input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
          "cost_usd"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'u.sqlite'}"
    write_jsonl(tmp_path / "claude" / "a.jsonl", claude_lines("a", "2025-09-03"))
    write_jsonl(tmp_path / "claude" / "b.jsonl",
                claude_lines("b", "2025-09-10", model="claude-from-the-future-9", prefix="n"))
    write_jsonl(tmp_path / "codex" / "r.jsonl", codex_lines())
    for folder, fmt in (("claude", "claude-code"), ("codex", "codex")):
        run("import", "--settle", "0", "--format", fmt, "--db", url, str(tmp_path / folder))
    return url


def run(*args: str) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False,
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def rows(*args: str) -> list[dict[str, object]]:
    out, _ = run(*args, "--json")
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("by", ["day", "week", "month", "session", "model", "agent",
                                "project"])
def test_every_grouping_gives_one_row_per_key_with_the_counts_and_cost(db: str, by: str) -> None:
    found = rows("usage", "--by", by, "--db", db)
    key = "session_id" if by == "session" else by

    assert found and all(COUNTS | {key} <= set(row) for row in found)
    assert len({row[key] for row in found}) == len(found)
    assert sum(int(str(row["output_tokens"])) for row in found) == 120 + 41 + 120 + 41 + 90


def test_days_and_a_model_without_a_price(db: str) -> None:
    out, err = run("usage", "--by", "day", "--db", db)
    by_day = {row["day"]: row for row in rows("usage", "--by", "day", "--db", db)}

    assert list(by_day) == ["2025-09-03", "2025-09-10", "2025-11-17"]
    assert by_day["2025-09-10"]["cost_usd"] is None
    assert by_day["2025-09-10"]["unpriced_models"] == ["claude-from-the-future-9"]
    assert by_day["2025-09-03"]["cost_usd"] == pytest.approx(
        (11 * 3 + 161 * 15 + 1800 * 3.75 + 25500 * 0.3) / 1e6)
    assert "no price" in out and "claude-from-the-future-9" in err
    assert "as of 2026-12-01" in out


def test_a_price_file_fills_the_missing_model(db: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    prices = tmp_path / "prices.json"
    prices.write_bytes(orjson.dumps({"claude-from-the-future-9": {
        "input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}}))

    by_option = rows("usage", "--by", "model", "--prices", str(prices), "--db", db)
    monkeypatch.setenv("TRANSCRIPT_STORE_PRICES", str(prices))
    by_env = rows("usage", "--by", "model", "--db", db)

    for found in (by_option, by_env):
        future = next(r for r in found if r["model"] == "claude-from-the-future-9")
        assert future["cost_usd"] == pytest.approx((11 + 161) / 1e6)


def test_usage_by_tool_is_the_estimated_context_each_tool_filled(db: str) -> None:
    found = rows("usage", "--by", "tool", "--db", db)
    out, _ = run("usage", "--by", "tool", "--db", db)

    assert {row["tool"] for row in found} == {"bash"}
    assert all(row["estimated"] is True and COUNTS <= set(row) for row in found)
    assert "estimated" in out


@pytest.mark.parametrize("by", ["day", "week", "agent", "model"])
def test_tools_usage_by_period_or_key(db: str, by: str) -> None:
    found = rows("tools", "usage", "--by", by, "--db", db)
    out, _ = run("tools", "usage", "--by", by, "--db", db)

    assert found and all({by, "tool", "calls", "context_tokens", "estimated"} <= set(r)
                         for r in found)
    assert sum(int(str(r["calls"])) for r in found) == 3
    assert ("▁" in out or "█" in out) and "estimated" in out


def test_sparkline_and_bar_scale_to_the_largest() -> None:
    assert sparkline([0, 1, 8]) == " ▁█"
    assert sparkline([]) == "" and sparkline([0, 0]) == "  "
    assert bar(10, 10, width=5) == "█████" and bar(1, 1000, width=5) == "█"
    assert bar(0, 10) == ""
