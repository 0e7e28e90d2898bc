"""CLI habits users bring (issue 35): a closed pipe ends quietly with status 0; global options
after the command too; a declined prompt is not an error; ``--tool`` takes a recorded name and
says what it searched for; an unknown tool or agent gets a "did you mean"; a prefix of a
session and of its own subagents names the session; an empty result is one line; tables show
local times to the minute; plurals are right. On both backends where a store is read."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import store
from store.cli.main import cli

BIN = Path(sys.executable).parent / "transcript-store"


def call(i: int, name: str = "Bash") -> list[dict]:
    return [{"role": "assistant", "content": None, "tool_calls": [{
        "id": f"c{i}", "type": "function",
        "function": {"name": name, "arguments": f'{{"command": "echo {i} {"x" * 80}"}}'}}]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": "ok"}]


@pytest.fixture
def url(store_url: str) -> str:
    with store.TranscriptStore.open(store_url) as db:
        db.append("abc123", [m for i in range(3) for m in call(i)], agent="claude-code")
        db.append("abc123:sidechain", call(9), agent="claude-code",
                  parent=store.SessionLink("abc123", "subagent", "c0"))
    return store_url


def run(*args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False,
                                env={"COLUMNS": "200"})
    assert result.exit_code == code, (result.output, result.stderr)
    return result.stdout, result.stderr


def test_a_closed_pipe_ends_the_command_quietly_with_status_0(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pipe.sqlite'}"
    with store.TranscriptStore.open(url) as db:  # far more than a pipe's buffer of JSON
        db.append("many", [m for i in range(1500) for m in call(i)], agent="claude-code")
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    for args in (["calls", "search", "--json", "--limit", "0"], ["sessions", "show", "many"],
                 ["export", "--to", "jsonl"]):
        proc = subprocess.Popen([str(BIN), *args, "--db", url], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline()  # like `| head -1`
        proc.stdout.close()
        with proc.stderr:
            err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0, (args, err)
        assert "Broken pipe" not in err and "Traceback" not in err, (args, err)


def test_global_options_after_the_command(url: str) -> None:
    before, _ = run("--no-color", "sessions", "list", "--db", url)
    after, _ = run("sessions", "list", "--db", url, "--no-color")
    assert before == after
    result = CliRunner().invoke(cli, ["sessions", "show", "nope", "--db", url, "--traceback"])
    assert isinstance(result.exception, store.SessionNotFound)  # --traceback took effect
    run("tools", "usage", "--db", url, "-v")  # taken, not "no such option"


def test_a_recorded_tool_name_searches_for_its_current_name(url: str) -> None:
    out, err = run("calls", "search", "--tool", "Bash", "--db", url, "--json")
    assert len(out.splitlines()) == 4
    assert "--tool Bash: searching for bash" in err


def test_an_unknown_tool_or_agent_gets_a_did_you_mean(url: str) -> None:
    out, _ = run("calls", "search", "--tool", "bahs", "--db", url)
    (line,) = out.splitlines()
    assert line.startswith("no calls match: 'bahs' is no tool name of the vocabulary (did you "
                           "mean 'bash'")
    out, _ = run("calls", "search", "--agent", "claude", "--db", url)
    assert "no session of agent 'claude' is stored (did you mean 'claude-code'?)" in out
    out, _ = run("tools", "usage", "--agent", "pi", "--db", url)
    assert out.strip() == ("no tool calls match: no session of agent 'pi' is stored "
                           "(agents here: claude-code)")


def test_an_empty_result_is_one_line(url: str) -> None:
    out, _ = run("calls", "search", "--since", "2099-01-01", "--db", url)
    assert out.strip() == "no calls match"


def test_a_prefix_of_a_session_and_its_own_subagents_names_the_session(url: str) -> None:
    out, _ = run("sessions", "show", "abc", "--db", url, "--json")
    assert {line.split('"session_id":"')[1].split('"')[0] for line in out.splitlines()} == {
        "abc123"}
    with store.TranscriptStore.open(url) as db:
        db.append("abc999", call(5), agent="codex")  # now a second session matches
    _, err = run("sessions", "show", "abc", "--db", url, code=1)
    assert "abc123" in err and "abc999" in err  # ambiguous: the candidates are listed


def test_tool_usage_shows_local_times_to_the_minute(url: str) -> None:
    out, _ = run("tools", "usage", "--db", url)
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?!:)", out)
    assert "+00:00" not in out


def test_a_declined_prompt_is_not_an_error(url: str) -> None:
    result = CliRunner().invoke(cli, ["sessions", "delete", "abc123", "--db", url],
                                input="n\n")
    assert result.exit_code == 0 and "not confirmed: nothing changed" in result.stderr
    with store.TranscriptStore.open(url, read_only=True) as db:
        assert db.get_session("abc123").message_count == 6
    no_answer = CliRunner().invoke(cli, ["sessions", "delete", "abc123", "--db", url],
                                   input="")
    assert no_answer.exit_code == 1 and "--yes" in no_answer.stderr
