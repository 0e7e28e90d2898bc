"""``transcript-store resume ID --to PROVIDER`` (issue 35): the history to resume a session
with, repaired by default (the report on stderr), the tools by the names the agent recorded
unless --current-names, the stored rows unchanged; on both backends."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import store
from store.cli.main import cli

CRASHED = [
    {"role": "user", "content": "Look around."},
    {"role": "assistant", "content": None, "tool_calls": [{
        "id": "call_9", "type": "function",
        "function": {"name": "run_shell_command", "arguments": "{\"command\": \"ls\"}"}}]},
]


@pytest.fixture
def url(store_url: str) -> str:
    with store.TranscriptStore.open(store_url) as db:
        db.append("crashed-session", CRASHED, keys=["k1", "k2"], agent="gemini-cli")
    return store_url


def run(*args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.output, result.stderr)
    return result.stdout, result.stderr


def test_resume_repairs_by_default_and_reports_on_stderr(url: str) -> None:
    with store.TranscriptStore.open(url, read_only=True) as db:
        before = db.load("crashed-session")
    out, err = run("resume", "crashed", "--to", "anthropic", "--db", url)  # a prefix

    body = json.loads(out)
    last = body["messages"][-1]["content"][0]
    assert last["type"] == "tool_result" and last["tool_use_id"] == "call_9"
    assert "repair: synthesized_result (message 1)" in err
    use = body["messages"][-2]["content"][0]
    assert (use["type"], use["name"]) == ("tool_use", "run_shell_command")  # as recorded
    with store.TranscriptStore.open(url, read_only=True) as db:
        assert db.load("crashed-session") == before  # the stored rows never change


def test_current_names_asks_for_the_stores_vocabulary(url: str) -> None:
    out, _ = run("resume", "crashed-session", "--to", "openai-chat", "--current-names", "--db", url)
    calls = [m for m in json.loads(out)["messages"] if m.get("tool_calls")]
    assert calls[0]["tool_calls"][0]["function"]["name"] == "bash"


def test_drop_dangling_drops_the_call_instead(url: str) -> None:
    out, err = run("resume", "crashed-session", "--to", "openai-chat", "--drop-dangling",
                   "--db", url)
    assert not any(m.get("tool_calls") for m in json.loads(out)["messages"])
    assert "dropped_dangling_call" in err


def test_no_repair_refuses_what_the_provider_would_refuse(url: str) -> None:
    out, err = run("resume", "crashed-session", "--to", "anthropic", "--no-repair",
                   "--db", url, code=1)
    assert out == ""
    assert "problem: synthesized_result" in err and "`resume` repairs them" in err


def test_bad_inputs_get_clear_errors(url: str) -> None:
    _, unknown = run("resume", "nope", "--to", "openai-chat", "--db", url, code=1)
    _, clash = run("resume", "crashed-session", "--to", "openai-chat", "--no-repair",
                   "--drop-dangling", "--db", url, code=2)
    _, target = run("resume", "crashed-session", "--to", "jsonl", "--db", url, code=2)

    assert "nope" in unknown and "Traceback" not in unknown
    assert "not with --no-repair" in clash
    assert "'jsonl' is not one of" in target
