"""``transcript-store resume ID --to claude-code|codex`` (issue 36): a stored session written
as the agent's own session file, so that it can be continued in that agent. Read back by the
agent's importer, it holds the same calls (current names, argument views), results (text,
error flags) and message texts; it never overwrites a file, leaves nothing on a failure, and
reports what it translated and dropped; on both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from backends import corpus
from click.testing import CliRunner

import store
from store.cli.main import cli
from store.replay.repair import INTERRUPTED_TEXT
from store.tools.vocabulary import argument_views

AGENTS = Path(__file__).resolve().parents[1] / "fixtures" / "agents"
CLAUDE_FILE = AGENTS / "claude/projects/-home-u-proj/55550000-0000-4000-8000-000000000001.jsonl"
CLAUDE_ID = "55550000-0000-4000-8000-000000000001"
CODEX_FILE = next((AGENTS / "codex").rglob("rollout-*.jsonl"))
CODEX_ID = "22222222-2222-4222-8222-222222222222"
NEW_ID = "11111111-1111-4111-8111-111111111111"


@pytest.fixture
def url(store_url: str) -> str:
    with store.TranscriptStore.open(store_url) as db:
        summary = store.import_paths(db, [CLAUDE_FILE, CODEX_FILE])
        assert not summary.problems
    return store_url


def run(*args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.output, result.stderr)
    assert "Traceback" not in result.output + result.stderr
    return result.stdout, result.stderr


def view(transcript: store.Transcript) -> dict[str, Any]:
    """What must survive the trip: each call's current name and argument views, each
    result's text and error flag, the user and assistant texts."""
    calls = [(c.call.name, argument_views(c.call.raw_name or c.call.name, c.call.input),
              None if c.result is None else (c.result.text, c.result.is_error))
             for c in transcript.calls()]
    texts = [(m.message.role, m.message.text) for m in transcript
             if m.message.role in ("user", "assistant") and m.message.text]
    return {"calls": calls, "texts": texts}


def read_back(path: Path, fmt: str, tmp_path: Path) -> store.Transcript:
    with store.TranscriptStore.open(f"sqlite:///{tmp_path / 'back.sqlite'}") as db2:
        summary = store.import_paths(db2, [path], format=fmt)
        assert not summary.problems and summary.sessions == 1
        (info,) = db2.list_sessions()
        return db2.load(info.session_id)


def load(url: str, session_id: str) -> store.Transcript:
    with store.TranscriptStore.open(url, read_only=True) as db:
        return db.load(session_id)


def test_claude_code_session_continued_in_codex_reads_back_the_same(
        url: str, tmp_path: Path) -> None:
    out, err = run("resume", "5555", "--to", "codex", "--out", str(tmp_path), "--id", NEW_ID,
                   "--db", url)
    path = Path(out.splitlines()[0])
    assert path.parent == tmp_path and path.name.startswith("rollout-")
    assert path.name.endswith(f"-{NEW_ID}.jsonl")
    assert out.splitlines()[1] == f"cd /home/u/proj && codex resume {NEW_ID}"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "session_meta" and lines[0]["payload"]["id"] == NEW_ID
    assert lines[0]["payload"]["cwd"] == "/home/u/proj"
    assert lines[1]["payload"]["model"] == "claude-sonnet-4-5"
    calls = [line["payload"] for line in lines if line["payload"].get("type") == "function_call"]
    assert [c["name"] for c in calls] == ["shell_command", "read_file", "Task"]
    assert json.loads(calls[0]["arguments"]) == {"command": "rm -rf build",
                                                  "workdir": "/home/u/proj"}
    assert lines[2]["timestamp"] == "2025-09-10T09:00:00.000Z"  # the messages keep their times

    original = load(url, CLAUDE_ID)
    back = read_back(path, "codex", tmp_path)
    assert back.session_id == NEW_ID and back.session.cwd == "/home/u/proj"
    assert back.session.model == "claude-sonnet-4-5"
    assert view(back) == view(original)
    assert [c.call.name for c in back.calls()] == ["bash", "read", "task"]

    assert "translated: Bash -> shell_command calls (arguments reshaped)" in err
    assert "dropped: argument 'description' of Bash" in err
    assert "exact: Task calls, kept as recorded (Codex has no counterpart of task)" in err


def test_codex_session_continued_in_claude_code_reads_back_the_same(
        url: str, tmp_path: Path) -> None:
    out, err = run("resume", CODEX_ID, "--to", "claude-code", "--out", str(tmp_path),
                   "--id", NEW_ID, "--db", url)
    path = tmp_path / f"{NEW_ID}.jsonl"
    assert out.splitlines() == [str(path), f"cd /home/u/proj && claude --resume {NEW_ID}"]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    uses = [b for line in lines if line.get("type") == "assistant"
            for b in line["message"]["content"] if b["type"] == "tool_use"]
    assert [(b["name"], b["input"]) for b in uses] == [
        ("Bash", {"command": "rm -rf build", "timeout": 120000}),
        ("Read", {"file_path": "/home/u/proj/src/app.py", "offset": 1, "limit": 200})]
    chained = [line for line in lines if line.get("type") != "summary"]
    assert all(line["sessionId"] == NEW_ID for line in chained)
    assert [line["parentUuid"] for line in chained[1:]] == [line["uuid"] for line in chained[:-1]]

    original = load(url, CODEX_ID)
    back = read_back(path, "claude-code", tmp_path)
    assert back.session_id == NEW_ID and back.session.cwd == "/home/u/proj"
    assert back.session.model == "gpt-5-codex"
    assert view(back) == view(original)
    assert "translated: shell -> Bash calls (arguments reshaped)" in err
    assert "dropped: empty user message" in err  # an empty compaction record


def test_corpus_sessions_cross_over(store_url: str, tmp_path: Path) -> None:
    claude = sorted(corpus("claude_code").glob("*.jsonl"))
    codex = sorted(corpus("codex").glob("*.jsonl"))
    with store.TranscriptStore.open(store_url) as db:
        store.import_paths(db, [*claude, *codex])
        sessions = db.list_sessions()
    for info in sessions:
        if info.agent not in ("claude-code", "codex") or ":" in info.session_id:
            continue
        target, fmt = (("codex", "codex") if info.agent == "claude-code"
                       else ("claude-code", "claude-code"))
        folder = tmp_path / info.session_id
        folder.mkdir()
        out, err = run("resume", info.session_id, "--to", target, "--out", str(folder),
                       "--db", store_url)
        back = read_back(Path(out.splitlines()[0]), fmt, folder)
        original = load(store_url, info.session_id)
        expected, got = view(original), view(back)
        assert got["texts"] == expected["texts"]
        assert [c[:2] for c in got["calls"]] == [c[:2] for c in expected["calls"]]
        for was, now in zip(expected["calls"], got["calls"], strict=True):
            if was[2] is None:  # a dangling call: repair gave it an error result
                assert now[2] == (INTERRUPTED_TEXT, target == "claude-code")
            elif target == "codex":  # a Codex output has no error flag: the text comes over
                assert now[2][0] == was[2][0]
            else:
                assert now[2] == was[2]
        if info.agent == "codex":  # its reasoning items are OpenAI's: not for Claude
            assert "dropped: reasoning part of a codex message" in err
        elif any(c[2] is None or c[2][1] for c in expected["calls"]):
            assert "dropped: error flag of a result" in err


def test_the_same_agent_keeps_every_call_exactly(url: str, tmp_path: Path) -> None:
    out, err = run("resume", CLAUDE_ID, "--to", "claude-code", "--out", str(tmp_path),
                   "--db", url)
    back = read_back(Path(out.splitlines()[0]), "claude-code", tmp_path)
    original = load(url, CLAUDE_ID)
    assert [c.call for c in back.calls()] == [c.call for c in original.calls()]
    assert "exact: Bash calls" in err and "translated" not in err


def test_a_dangling_call_is_repaired_and_an_error_flag_codex_cannot_hold_is_reported(
        store_url: str, tmp_path: Path) -> None:
    with store.TranscriptStore.open(store_url) as db:
        db.append("crashed", [
            {"role": "user", "content": "Look around."},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_9", "type": "function",
                "function": {"name": "run_shell_command",
                             "arguments": "{\"command\": \"ls\", \"dir_path\": \"/srv\"}"}}]},
        ], agent="gemini-cli", cwd="/home/u")
    out, err = run("resume", "crashed", "--to", "claude-code", "--out", str(tmp_path),
                   "--db", store_url)
    assert "repaired: synthesized_result (message 1)" in err
    back = read_back(Path(out.splitlines()[0]), "claude-code", tmp_path)
    (call,) = back.calls()
    assert (call.call.raw_name, call.call.input) == ("Bash", {"command": "cd /srv && ls"})
    assert call.result is not None and call.result.is_error

    codex_out = tmp_path / "codex"
    codex_out.mkdir()
    _, err = run("resume", "crashed", "--to", "codex", "--out", str(codex_out),
                 "--db", store_url)
    assert "dropped: error flag of a result (a Codex function_call_output has none" in err


def test_an_existing_file_is_never_overwritten_and_nothing_is_left(
        url: str, tmp_path: Path) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    run("resume", CLAUDE_ID, "--to", "claude-code", "--out", str(tmp_path), "--id", NEW_ID,
        "--db", url)
    path = tmp_path / f"{NEW_ID}.jsonl"
    path.write_text("mine\n")
    _, err = run("resume", CODEX_ID, "--to", "claude-code", "--out", str(tmp_path),
                 "--id", NEW_ID, "--db", url, code=1)
    assert f"{path} exists: not overwritten" in err
    assert path.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary file


def test_default_placement_honours_the_agents_home_variables(
        url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    out, _ = run("resume", CODEX_ID, "--to", "claude-code", "--id", NEW_ID, "--db", url)
    assert out.splitlines()[0] == str(
        tmp_path / "claude" / "projects" / "-home-u-proj" / f"{NEW_ID}.jsonl")
    out, _ = run("resume", CLAUDE_ID, "--to", "codex", "--id", NEW_ID, "--db", url)
    path = Path(out.splitlines()[0])
    assert path.is_file() and path.name.endswith(f"-{NEW_ID}.jsonl")
    day = path.parent.relative_to(tmp_path / "codex" / "sessions").parts
    assert len(day) == 3 and all(part.isdigit() for part in day)
    with store.TranscriptStore.open(url) as db:  # the capture finds it where Codex would
        assert store.import_paths(db, [tmp_path / "codex"]).sessions == 1


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--out", "MISSING"], 2, "no such folder"),
    (["--current-names"], 2, "--current-names apply to provider targets, not --to codex"),
    (["--no-repair"], 2, "an agent's file is always repaired"),
    (["--id", "not-a-uuid", "--out", "TMP"], 1, "not a session id (a UUID): 'not-a-uuid'"),
])
def test_bad_options_get_a_clear_error(url: str, tmp_path: Path, args: list[str], code: int,
                                       message: str) -> None:
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    args = [str(tmp_path / "missing") if a == "MISSING" else str(tmp_path) if a == "TMP"
            else a for a in args]
    _, err = run("resume", CLAUDE_ID, "--to", "codex", *args, "--db", url, code=code)
    assert message in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_unknown_session_and_agent_options_on_a_provider_are_refused(url: str,
                                                                        tmp_path: Path) -> None:
    _, err = run("resume", "nope", "--to", "codex", "--out", str(tmp_path), "--db", url, code=1)
    assert "no session with id 'nope'" in err
    _, err = run("resume", CLAUDE_ID, "--to", "anthropic", "--out", str(tmp_path), "--db", url,
                 code=2)
    assert "--out and --id apply to agent targets (claude-code, codex)" in err
