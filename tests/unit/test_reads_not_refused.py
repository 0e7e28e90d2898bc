"""Issue 33: a record that lacks a field the reader does not need is read, not refused, and a
file named otherwise than the fixtures is not dropped in silence."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from agent_databases import (
    GOOSE_SESSION,
    SEPT,
    goose_text,
    write_goose,
    write_opencode,
    write_opencode_storage,
)

from store import read_sessions
from store.importers.titles import typed_prompt

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_claude_code_lines_without_uuid_or_session_id_are_read(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "projects" / "-p"
    folder.mkdir(parents=True)
    envelope = {"cwd": "/p", "isSidechain": False, "userType": "external"}
    lines = [
        {"type": "user", "message": {"role": "user", "content": "list files"},
         "timestamp": "2025-09-01T10:00:00Z", **envelope},
        {"type": "assistant", "timestamp": "2025-09-01T10:00:01Z", **envelope,
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                  "input": {"command": "ls"}}]}},
        {"type": "user", "timestamp": "2025-09-01T10:00:02Z", **envelope,
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]}},
    ]
    file = folder / "a.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    parsed = read_sessions(file, settle=0)

    assert parsed.format == "claude-code" and parsed.problems == []
    (session,) = parsed.sessions
    assert [m.role for m in session.items] == ["user", "assistant", "user"]
    assert [typed_prompt(m) for m in session.items] == ["list files", None, None]
    assert session.items[2].tool_results[0].call_id == "toolu_1"  # (the Anthropic shape)
    assert session.cwd == "/p" and session.model == "claude-sonnet-4-5"


def test_an_openhands_event_file_named_by_its_kind_is_read_not_dropped(tmp_path: Path) -> None:
    home = tmp_path / ".openhands"
    shutil.copytree(FIXTURES / "vscode" / "openhands" / "conversations", home / "conversations")
    conversation = next(p for p in (home / "conversations").iterdir() if p.is_dir())
    events = sorted((conversation / "events").iterdir())
    before = read_sessions(conversation / "base_state.json", settle=0)
    events[0].rename(events[0].with_name("event-00000-user.json"))

    after = read_sessions(conversation / "base_state.json", settle=0)

    assert sum(after.skipped.values()) == sum(before.skipped.values())
    assert [len(s.items) for s in after.sessions] == [len(s.items) for s in before.sessions]


def test_a_goose_summary_never_shown_to_the_user_is_the_agents_and_a_parent_is_kept(
        tmp_path: Path) -> None:
    database = write_goose(tmp_path / "data")
    with sqlite3.connect(database) as conn:
        conn.execute("ALTER TABLE sessions ADD COLUMN parent_session_id TEXT")
        conn.execute("UPDATE sessions SET parent_session_id = ? WHERE id = '20250904_2'",
                     (GOOSE_SESSION,))
        conn.execute(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp, "
            "metadata_json) VALUES (?, 'user', ?, ?, ?)",
            (GOOSE_SESSION, json.dumps([goose_text("Summary of the work so far")]), SEPT + 40,
             json.dumps({"userVisible": False, "agentVisible": True})))

    parsed = read_sessions(database, settle=0)

    main = next(s for s in parsed.sessions if s.session_id == GOOSE_SESSION)
    summary = main.items[-1]
    assert summary.role == "system" and summary.metadata["origin"] == "agent"
    assert typed_prompt(summary) is None
    child = next(s for s in parsed.sessions if s.session_id == "20250904_2")
    assert child.metadata["parent_session"] == GOOSE_SESSION and "subagent" in child.tags


def test_an_opencode_session_info_without_project_id_is_read(tmp_path: Path) -> None:
    database = write_opencode(tmp_path / "data")
    storage = write_opencode_storage(tmp_path / "old", database)
    info = sorted((storage / "session").rglob("*.json"))[0]
    whole = read_sessions(info, settle=0)
    record = json.loads(info.read_text(encoding="utf-8"))
    del record["projectID"]  # (the reader does not need it: the folder is the project)
    info.write_text(json.dumps(record), encoding="utf-8")

    parsed = read_sessions(info, settle=0)

    assert parsed.format == "opencode" and parsed.problems == []
    assert [len(s.items) for s in parsed.sessions] == [len(s.items) for s in whole.sessions]
