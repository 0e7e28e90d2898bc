"""Issue 33, "say what was not read": ``import --explain FILE`` (nothing stored, no store
opened) and the import summary's warning for records of a kind the reader has never seen,
on both store backends."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from store import TranscriptStore
from store.cli.main import cli

AGENTS = Path(__file__).resolve().parents[1] / "fixtures" / "agents"


@pytest.fixture(autouse=True)
def _quiet_store_logger():
    logger = logging.getLogger("store")
    handlers, level = list(logger.handlers), logger.level
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


def run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.output, result.stderr)
    return result


def claude_file(path: Path, extra_kind: str | None) -> Path:
    base = {"sessionId": "cc-explain", "cwd": "/w", "version": "2.1.0", "isSidechain": False,
            "userType": "external", "timestamp": "2026-01-01T00:00:00Z"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None,
         "message": {"role": "user", "content": "hello"}},
        {**base, "type": "assistant", "uuid": "u2", "parentUuid": "u1",
         "message": {"id": "m1", "role": "assistant", "model": "claude",
                     "content": [{"type": "text", "text": "hi"}]}},
        {**base, "type": "progress", "uuid": "u3", "parentUuid": "u2", "data": {}},
    ]
    if extra_kind is not None:
        lines.append({**base, "type": extra_kind, "uuid": "u4", "parentUuid": "u3",
                      "data": {"x": 1}})
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def test_explain_says_who_claimed_a_file_and_what_each_kind_became(tmp_path: Path) -> None:
    wire = next(AGENTS.glob("kimi/sessions/*/*/wire.jsonl"))
    out = run("import", "--explain", str(wire)).stdout
    assert "kimi-cli (claimed with confidence 0.90; runner-up: none)" in out
    assert "1 sessions, 6 messages" in out
    assert "  StatusUpdate: 3 skipped" in out
    assert "  ToolCall: 1 stored, 3 merged" in out
    assert "  (not JSON): 1 not understood" in out
    assert "problem: " in out and ":10: not JSON" in out

    row = json.loads(run("import", "--explain", "--json", str(wire)).stdout)
    assert (row["format"], row["forced"], row["confidence"]) == ("kimi-cli", False, 0.9)
    assert row["kinds"]["ToolResult"] == {"stored": 3}
    assert row["messages"] == 6 and row["unknown_kinds"] == {}


def test_explain_names_the_runner_up(tmp_path: Path) -> None:
    """A Qwen Code chat: Claude Code's uuid rule claims it too, less surely."""
    chat = next(AGENTS.glob("qwen/projects/*/chats/*.jsonl"))
    row = json.loads(run("import", "--explain", "--json", str(chat)).stdout)
    assert row["format"] == "qwen-code"
    assert row["runner_up"]["format"] == "claude-code"
    assert row["runner_up"]["confidence"] < row["confidence"]


def test_explain_writes_nothing(tmp_path: Path) -> None:
    """Reads never write: no store is opened, none created, even with --db given."""
    file = claude_file(tmp_path / "cc.jsonl", None)
    database = tmp_path / "never.sqlite"
    run("import", "--explain", "--db", f"sqlite:///{database}", str(file))
    assert not database.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cc.jsonl"]


def test_explain_refuses_what_it_cannot_explain(tmp_path: Path) -> None:
    result = run("import", "--explain", str(tmp_path), code=2)
    assert "--explain takes one FILE" in result.output
    run("import", "--explain", code=2)
    bad = tmp_path / "bad.json"
    bad.write_text('{"nothing": "known"}', encoding="utf-8")
    result = run("import", "--explain", str(bad), code=1)
    assert "cannot tell the format" in result.output and "Traceback" not in result.output


def test_explain_of_a_forced_format(tmp_path: Path) -> None:
    file = claude_file(tmp_path / "cc.jsonl", None)
    row = json.loads(run("import", "--explain", "--json", "--format", "claude-code",
                         str(file)).stdout)
    assert row["forced"] is True and row["format"] == "claude-code"


def test_a_kind_the_reader_never_saw_is_a_counted_warning(store: TranscriptStore,
                                                          tmp_path: Path) -> None:
    file = claude_file(tmp_path / "cc.jsonl", "brand-new-kind")
    result = run("import", "--db", store.url, "--settle", "0", str(file))
    assert ("warning: 1 records of a kind the reader has never seen: "
            "claude-code: brand-new-kind") in result.stderr
    summary = json.loads(run("import", "--db", store.url, "--settle", "0", "--json",
                             str(claude_file(tmp_path / "cc2.jsonl", "brand-new-kind"))
                             ).stdout)
    assert summary["unknown_kinds"] == {"claude-code: brand-new-kind": 1}
    assert len(store.load("cc-explain").messages) == 2  # the rest was stored

    quiet = json.loads(run("import", "--db", store.url, "--settle", "0", "--json",
                           str(claude_file(tmp_path / "cc3.jsonl", None))).stdout)
    assert quiet["unknown_kinds"] == {}


def test_reread_diff_reports_what_the_reader_gives_otherwise_and_reread_stores_it(
        store: TranscriptStore, tmp_path: Path) -> None:
    file = claude_file(tmp_path / "cc.jsonl", None)
    run("import", "--db", store.url, "--settle", "0", str(file))
    assert run("import", "--reread", "--diff", "--db", store.url).stdout.endswith(
        "0 differences in 0 sessions\n")

    with file.open("a", encoding="utf-8") as handle:  # what the reader now gives more of
        handle.write(json.dumps({"sessionId": "cc-explain", "type": "assistant", "uuid": "u9",
                                 "parentUuid": "u3", "timestamp": "2026-01-01T00:01:00Z",
                                 "message": {"id": "m9", "role": "assistant", "content": [
                                     {"type": "tool_use", "id": "t1", "name": "Bash",
                                      "input": {"command": "ls"}}]}}) + "\n")
    other = claude_file(tmp_path / "other.jsonl", None)
    other.write_text(other.read_text().replace("cc-explain", "cc-never"), encoding="utf-8")
    rows = [json.loads(x) for x in run("import", "--reread", "--diff", "--json", "--db",
                                       store.url, str(file), str(other)).stdout.splitlines()]
    assert {(r["session_id"], r["field"], r["stored"], r["read"]) for r in rows} == {
        ("cc-explain", "messages", 2, 3), ("cc-explain", "calls", 0, 1),
        ("cc-never", "session", None, "2 messages")}
    assert len(store.load("cc-explain").messages) == 2  # --diff wrote nothing

    run("import", "--reread", "--db", store.url, "--settle", "0")  # every source file again
    assert len(store.load("cc-explain").messages) == 3
    assert run("import", "--reread", "--diff", "--db", store.url).stdout.endswith(
        "0 differences in 0 sessions\n")


def test_diff_needs_reread() -> None:
    assert "--diff goes with --reread" in run("import", "--diff", code=2).output
