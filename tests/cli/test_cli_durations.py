"""Issue 37 (9): durations are bounded (100 years) wherever they are read: `prune
--older-than`, `prune --policy` and watch's `[retention]` (older_than, every, agents), and the
relative `--since`/`--until`. A longer one is a clear error naming the setting, never an
OverflowError traceback; the stored sessions are untouched. Both backends."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from store import ConfigurationError, RetentionPolicy, TranscriptStore, UsageError, parse_duration
from store.cli.main import cli

TURN = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output and result.exception is None or isinstance(
        result.exception, SystemExit), result.output
    return result.exit_code, result.output


@pytest.fixture
def filled(store_url: str) -> str:
    with TranscriptStore.open(store_url) as opened:
        opened.append("kept", TURN, agent="codex")
    return store_url


def sessions(url: str) -> list[str]:
    with TranscriptStore.open(url, read_only=True) as opened:
        return [s.session_id for s in opened.list_sessions()]


@pytest.mark.parametrize("value", ["999999w", "999999d", "36526d", "876601h", "5219w",
                                   "999999999999d"])
def test_prune_older_than_too_long_is_a_usage_error(filled: str, value: str) -> None:
    code, output = run("prune", "--db", filled, "--older-than", value, "--yes")

    assert code == 2
    assert "Invalid value for '--older-than'" in output
    assert "100 years" in output or "a duration is" in output
    assert sessions(filled) == ["kept"]


def test_prune_older_than_at_the_bound_runs(filled: str) -> None:
    code, output = run("prune", "--db", filled, "--older-than", "36525d", "--dry-run")

    assert code == 0 and "0 sessions would be erased" in output


@pytest.mark.parametrize(("table", "setting"), [
    ('older_than = "999999d"', "retention.older_than"),
    ('older_than = "30d"\nevery = "999999w"', "retention.every"),
    ('older_than = "30d"\n[retention.agents]\ncodex = "99999999h"', "retention.agents.codex")])
def test_prune_policy_with_too_long_a_duration_names_the_setting(
        filled: str, tmp_path: Path, table: str, setting: str) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[retention]\n" + table + "\n")

    for dry in ([], ["--dry-run"]):
        code, output = run("prune", "--db", filled, "--policy", str(policy), "--yes", *dry)
        assert code == 1
        (line,) = output.strip().splitlines()
        assert line.startswith(f"error: {policy}: {setting}: ") and "100 years" in line
    assert sessions(filled) == ["kept"]


def test_watch_with_too_long_a_retention_stops_before_a_pass(filled: str,
                                                              tmp_path: Path) -> None:
    config = tmp_path / "store.toml"
    config.write_text('[retention]\nolder_than = "999999d"\n')
    empty = tmp_path / "none"
    empty.mkdir()

    code, output = run("watch", "--once", "--db", filled, "--config", str(config), str(empty))

    assert code == 1
    assert f"error: {config}: retention.older_than: '999999d' is longer than 100 years" in output
    assert sessions(filled) == ["kept"]


@pytest.mark.parametrize("option", ["--since", "--until"])
@pytest.mark.parametrize("value", ["5219w", "36526d", "999999999w"])
def test_relative_times_are_bounded_too(filled: str, option: str, value: str) -> None:
    for command in (["sessions", "list"], ["rules", "check"], ["calls", "search", "x"]):
        code, output = run(*command, "--db", filled, option, value)
        assert code == 2, (command, output)
        assert f"Invalid value for '{option}'" in output


def test_the_library_bounds_durations_naming_the_setting() -> None:
    assert parse_duration("36525d") == timedelta(days=36_525)
    with pytest.raises(UsageError, match="^keep: '36526d' is longer than 100 years"):
        parse_duration("36526d", "keep")
    with pytest.raises(ConfigurationError, match="retention.older_than"):
        RetentionPolicy.from_mapping({"older_than": "999999w"})
    with pytest.raises(UsageError, match="older_than"):
        RetentionPolicy(older_than=timedelta(days=999_999))
    with pytest.raises(UsageError, match="every"):
        RetentionPolicy(every=timedelta(0))
