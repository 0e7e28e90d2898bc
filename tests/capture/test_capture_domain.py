"""The capture domain without a database: agents' folders, reading what changed, the service
files and the hook input (issue 25)."""

from __future__ import annotations

import json
import os
import plistlib
from pathlib import Path

import pytest

from store import UsageError, agent_folders, hook_transcript, service_file
from store.capture.files import FileState
from store.capture.reading import read_changes

NOW_SETTLED = 0.0  # settle=0: every file counts as complete


def cc(uuid: str, text: str, sid: str = "s-1") -> dict[str, object]:
    return {"type": "user", "sessionId": sid, "uuid": uuid, "parentUuid": None,
            "message": {"role": "user", "content": text}}


def line(record: object) -> str:
    return json.dumps(record) + "\n"


def test_agent_folders_honour_each_agents_own_variable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    moved = tmp_path / "claude-elsewhere"
    (moved / "projects").mkdir(parents=True)
    codex = tmp_path / "codex-home"
    (codex / "sessions").mkdir(parents=True)
    gemini_home = tmp_path / "gemini-user"
    (gemini_home / ".gemini" / "tmp" / "abc" / "chats").mkdir(parents=True)
    env = {"CLAUDE_CONFIG_DIR": str(moved), "CODEX_HOME": str(codex),
           "GEMINI_CLI_HOME": str(gemini_home)}
    assert agent_folders(home, env) == [
        ("claude-code", moved / "projects"), ("codex", codex / "sessions"),
        ("gemini-cli", gemini_home / ".gemini" / "tmp" / "abc" / "chats")]
    assert agent_folders(home, {}) == [("claude-code", home / ".claude" / "projects")]


def test_a_partial_last_line_waits_without_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    whole = line(cc("u1", "one"))
    path.write_text(whole + line(cc("u2", "two"))[:20], encoding="utf-8")
    read = read_changes(path, None, settle=300)
    assert read is not None and read.parsed.problems == []
    assert [s.keys for s in read.parsed.sessions] == [["u1"]]
    assert [d.line for d in read.parsed.deferred] == [2]
    assert (read.state.offset, read.state.lines, read.state.pending) == (len(whole), 1, True)
    # unchanged: nothing is read again
    assert read_changes(path, read.state, settle=300) is None
    path.write_text(whole + line(cc("u2", "two")) + line(cc("u3", "three")), encoding="utf-8")
    grown = read_changes(path, read.state, settle=300)
    assert grown is not None and grown.change == "grown"
    assert [s.keys for s in grown.parsed.sessions] == [["u2", "u3"]]
    assert grown.parsed.deferred == [] and grown.state.lines == 3


def test_a_partial_line_is_read_once_the_file_settles(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(line(cc("u1", "one")) + json.dumps(cc("u2", "two")), encoding="utf-8")
    first = read_changes(path, None, settle=300)
    assert first is not None and first.state.pending
    later = read_changes(path, first.state, settle=300, now=os.stat(path).st_mtime + 301)
    assert later is not None and [s.keys for s in later.parsed.sessions] == [["u2"]]
    assert not later.state.pending and later.state.offset == path.stat().st_size


def test_a_shrunk_replaced_or_rewritten_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(line(cc("u1", "one")) + line(cc("u2", "two")), encoding="utf-8")
    first = read_changes(path, None, settle=0)
    assert first is not None
    path.write_text(line(cc("u1", "one")), encoding="utf-8")  # shrank
    shrunk = read_changes(path, first.state, settle=0)
    assert shrunk is not None and shrunk.change == "reread"
    replaced = tmp_path / "new.jsonl"
    replaced.write_text(line(cc("v1", "other")) + line(cc("v2", "more")) + line(cc("v3", "x")),
                        encoding="utf-8")
    os.replace(replaced, path)  # a new inode under the same name
    again = read_changes(path, shrunk.state, settle=0)
    assert again is not None and again.change == "reread"
    assert [s.keys for s in again.parsed.sessions] == [["v1", "v2", "v3"]]
    # rewritten in place, same inode, longer: the read part's digest differs
    with path.open("r+", encoding="utf-8") as handle:
        handle.write(line(cc("w1", "rewritten")) + line(cc("v2", "more")) * 3)
    rewritten = read_changes(path, again.state, settle=0)
    assert rewritten is not None and rewritten.change == "reread"


def test_a_codex_rollout_read_from_its_offset_keys_as_a_whole_read(tmp_path: Path) -> None:
    def rec(kind: str, payload: dict[str, object]) -> dict[str, object]:
        return {"timestamp": "2025-11-17T21:30:28Z", "type": kind, "payload": payload}

    head = [rec("session_meta", {"id": "cx-1", "cwd": "/r"}),
            rec("turn_context", {"model": "gpt-5"}),
            rec("response_item", {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": "hi"}]})]
    tail = [rec("response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": "hello"}]})]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(line(r) for r in head), encoding="utf-8")
    first = read_changes(path, None, settle=0)
    assert first is not None
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(line(r) for r in tail))
    grown = read_changes(path, first.state, settle=0)
    assert grown is not None and grown.change == "grown"
    whole = read_changes(path, None, settle=0)
    assert whole is not None
    (part,) = grown.parsed.sessions
    (full,) = whole.parsed.sessions
    assert part.session_id == full.session_id == "cx-1"
    assert part.keys == full.keys[-1:] and part.items == full.items[-1:]
    assert part.items[0].metadata["model"] == "gpt-5"


def test_a_bad_line_in_the_middle_is_passed_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(line(cc("u1", "one")) + '{"type": "user", "sessi\n' + line(cc("u3", "3")),
                    encoding="utf-8")
    first = read_changes(path, None, settle=0)
    assert first is not None and [p.line for p in first.parsed.problems] == [2]
    assert first.state.offset == path.stat().st_size
    assert read_changes(path, first.state, settle=0) is None


def test_the_state_compares_identity_size_and_time(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(line(cc("u1", "one")), encoding="utf-8")
    read = read_changes(path, None, settle=0)
    assert read is not None
    state: FileState = read.state
    info = path.stat()
    assert state.identity == f"{info.st_dev}:{info.st_ino}"
    assert (state.size, state.mtime_ns, state.format) == (info.st_size, info.st_mtime_ns,
                                                          "claude-code")


def test_a_systemd_unit_is_written_under_xdg_config_home(tmp_path: Path) -> None:
    config = tmp_path / "config"
    written = service_file(["/opt/py 3/bin/python", "-m", "store", "watch", "--db",
                            "/data/50%.sqlite"], platform="linux",
                           environ={"XDG_CONFIG_HOME": str(config), "HOME": str(tmp_path)})
    assert written.path == config / "systemd" / "user" / "transcript-store-watch.service"
    text = written.path.read_text(encoding="utf-8")
    assert ('ExecStart="/opt/py 3/bin/python" -m store watch --db /data/50%%.sqlite\n'
            in text)
    assert "Restart=on-failure" in text and "WantedBy=default.target" in text
    assert "systemctl --user enable --now transcript-store-watch.service" in written.start
    assert any(cmd.startswith("rm ") for cmd in written.remove)
    default = service_file(["python"], platform="linux", environ={"HOME": str(tmp_path)})
    assert default.path == tmp_path / ".config/systemd/user/transcript-store-watch.service"


def test_a_launchd_agent_is_written_on_macos(tmp_path: Path) -> None:
    written = service_file(["/usr/bin/python3", "-m", "store", "watch"], platform="darwin",
                           environ={"HOME": str(tmp_path)})
    assert written.path == tmp_path / "Library/LaunchAgents/dev.transcript-store.watch.plist"
    plist = plistlib.loads(written.path.read_bytes())
    assert plist["ProgramArguments"] == ["/usr/bin/python3", "-m", "store", "watch"]
    assert plist["RunAtLoad"] is True and plist["KeepAlive"] is True
    assert written.start[0].startswith("launchctl bootstrap gui/")


def test_the_claude_code_hook_input_names_the_transcript() -> None:
    given = json.dumps({"session_id": "x", "transcript_path": "~/t.jsonl",
                        "hook_event_name": "SessionEnd", "reason": "exit"})
    assert hook_transcript("claude-code", given) == Path.home() / "t.jsonl"
    with pytest.raises(UsageError, match="transcript_path"):
        hook_transcript("claude-code", "{}")
    with pytest.raises(UsageError, match="not JSON"):
        hook_transcript("claude-code", "nope")
