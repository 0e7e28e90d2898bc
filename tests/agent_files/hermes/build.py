"""Hermes Agent's ``state.db`` as its ``SessionDB`` writes it (our own sessions, written from
what ``hermes_state.py`` / ``hermes_state_common.py`` of NousResearch/hermes-agent show):
at the Linux place a current database (``cwd``, ``title``, token totals and cost, lineage
markers in ``model_config``, a list content behind the ``\\x01json:`` prefix) holding a session,
its ``delegate_task`` subagent, its compression continuation and a branch of that; beside it
a JSON copy the database makes redundant (left aside). At the Windows place
(``%LOCALAPPDATA%\\hermes``) a schema-7 database (before ``cwd``) with a Telegram session; in a
named profile without a database, a CLI session log and a gateway transcript."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SESSIONS_V7 = """CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, personality TEXT, started_at REAL NOT NULL,
    ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0,
    billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, estimated_cost_usd REAL,
    actual_cost_usd REAL, cost_status TEXT, cost_source TEXT, pricing_version TEXT,
    title TEXT, FOREIGN KEY (parent_session_id) REFERENCES sessions(id))"""
MESSAGES_V7 = """CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
    reasoning_details TEXT, codex_reasoning_items TEXT)"""
LATER = ("ALTER TABLE sessions ADD COLUMN cwd TEXT",
         "ALTER TABLE sessions ADD COLUMN git_branch TEXT",
         "ALTER TABLE sessions ADD COLUMN last_activity_at REAL",
         "ALTER TABLE sessions ADD COLUMN title_source TEXT",
         "ALTER TABLE messages ADD COLUMN reasoning_content TEXT",
         "ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1",
         "ALTER TABLE messages ADD COLUMN compacted INTEGER NOT NULL DEFAULT 0")

MAIN = "20260112_091500_a1b2c3"
CHILD = "20260112_091735_d4e5f6"
NEXT = "20260112_092140_0a9b8c"
BRANCH = "20260112_093000_b7c8d9"
OLD = "20250905_140210_77aa11"
LOG = "20250801_101500_c0ffee"
GATEWAY = "20250802_080000_abcd12"
MODEL = "anthropic/claude-sonnet-4"


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def session(sid: str, started: str, **fields: Any) -> dict[str, Any]:
    return {"id": sid, "source": "cli", "model": MODEL, "started_at": at(started), **fields}


def message(sid: str, when: str, role: str, content: Any = None, **fields: Any
            ) -> dict[str, Any]:
    if "tool_calls" in fields:
        fields["tool_calls"] = json.dumps(fields["tool_calls"])
    return {"session_id": sid, "role": role, "content": content, "timestamp": at(when), **fields}


def current_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    sessions = [
        session(MAIN, "2026-01-12 09:15:00", ended_at=at("2026-01-12 09:21:40"),
                end_reason="compression", cwd="/home/u/webapp", git_branch="fix/redirect",
                title="Fix the login redirect", title_source="llm", input_tokens=18400,
                output_tokens=2300, cache_read_tokens=51000, cache_write_tokens=4200,
                reasoning_tokens=600, billing_provider="openrouter",
                estimated_cost_usd=0.1234, cost_status="estimated", message_count=10,
                tool_call_count=5),
        session(CHILD, "2026-01-12 09:17:35", parent_session_id=MAIN,
                model_config=json.dumps({"_delegate_from": MAIN}),
                ended_at=at("2026-01-12 09:18:10"), end_reason="agent_close",
                cwd="/home/u/webapp", input_tokens=3000, output_tokens=400),
        session(NEXT, "2026-01-12 09:21:40", parent_session_id=MAIN, cwd="/home/u/webapp",
                title="Fix the login redirect #2", last_activity_at=at("2026-01-12 09:24:05"),
                input_tokens=900, output_tokens=150),
        session(BRANCH, "2026-01-12 09:30:00", parent_session_id=NEXT, cwd="/home/u/webapp",
                model_config=json.dumps({"_branched_from": NEXT}),
                ended_at=at("2026-01-12 09:31:00"), end_reason="agent_close"),
    ]
    messages = [
        message(MAIN, "2026-01-12 09:15:05", "user",
                "The login page redirects to /undefined after sign-in, fix it"),
        message(MAIN, "2026-01-12 09:15:10", "assistant", "Let me look at the redirect code.",
                reasoning="Find where the redirect target is computed.",
                finish_reason="tool_calls",
                tool_calls=[call("call_01", "terminal", {"command": "grep -rn redirect src/auth"}),
                            call("call_02", "read_file", {"path": "src/auth/login.ts"})]),
        message(MAIN, "2026-01-12 09:15:11", "tool",
                json.dumps({"output": "src/auth/session.ts:42: redirect(next)", "exit_code": 0,
                            "error": None}), tool_call_id="call_01", tool_name="terminal"),
        message(MAIN, "2026-01-12 09:15:12", "tool",
                json.dumps({"error": "File not found: src/auth/login.ts"}),
                tool_call_id="call_02", tool_name="read_file"),
        message(MAIN, "2026-01-12 09:15:20", "assistant", "", finish_reason="tool_calls",
                tool_calls=[call("call_03", "search_files",
                                 {"pattern": "*login*", "target": "files", "path": "src"})]),
        message(MAIN, "2026-01-12 09:15:21", "tool",
                json.dumps({"total_count": 1, "files": ["src/pages/login.tsx"]}),
                tool_call_id="call_03", tool_name="search_files"),
        message(MAIN, "2026-01-12 09:15:30", "assistant", "Found it; patching and checking the"
                " other callers.", finish_reason="tool_calls",
                tool_calls=[call("call_04", "patch", {"mode": "replace",
                                                      "path": "src/pages/login.tsx",
                                                      "old_string": "router.push(next)",
                                                      "new_string": "router.push(next ?? '/')"}),
                            call("call_05", "delegate_task",
                                 {"goal": "Check the other callers of router.push for"
                                          " undefined targets"})]),
        message(MAIN, "2026-01-12 09:15:31", "tool",
                json.dumps({"success": True, "diff": "-router.push(next)\n+router.push(next ??"
                            " '/')"}), tool_call_id="call_04", tool_name="patch"),
        message(MAIN, "2026-01-12 09:18:15", "tool",
                json.dumps({"results": [{"task_index": 0, "status": "completed",
                                         "summary": "2 callers, both pass a defined path"}]}),
                tool_call_id="call_05", tool_name="delegate_task"),
        message(MAIN, "2026-01-12 09:18:25", "assistant",
                "Fixed: the redirect now falls back to / when no target is given.",
                finish_reason="stop"),
        message(CHILD, "2026-01-12 09:17:36", "user",
                "Check the other callers of router.push for undefined targets"),
        message(CHILD, "2026-01-12 09:17:40", "assistant", "", finish_reason="tool_calls",
                tool_calls=[call("call_11", "terminal",
                                 {"command": "grep -rn 'router.push' src"})]),
        message(CHILD, "2026-01-12 09:18:05", "assistant",
                "2 callers, both pass a defined path.", finish_reason="stop"),
        message(NEXT, "2026-01-12 09:21:40", "user",
                "[CONTEXT SUMMARY]: the login redirect was fixed in src/pages/login.tsx."),
        message(NEXT, "2026-01-12 09:22:00", "user", "Also add a test for it"),
        message(NEXT, "2026-01-12 09:22:10", "assistant", "", finish_reason="tool_calls",
                tool_calls=[call("call_21", "write_file",
                                 {"path": "src/pages/login.test.tsx",
                                  "content": "test('falls back to /', () => {})\n"})]),
        message(NEXT, "2026-01-12 09:22:11", "tool", json.dumps({"bytes_written": 34}),
                tool_call_id="call_21", tool_name="write_file"),
        message(NEXT, "2026-01-12 09:24:05", "assistant", "Added the test.", finish_reason="stop"),
        message(BRANCH, "2026-01-12 09:30:05", "user", "\x01json:" + json.dumps([
            {"type": "text", "text": "What if we keep the old behaviour?"},
            {"type": "text", "text": "(see the screenshot)"}])),
        message(BRANCH, "2026-01-12 09:30:40", "assistant",
                "Then /undefined stays reachable; I would not.", finish_reason="stop"),
    ]
    return sessions, messages


def old_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    sessions = [{"id": OLD, "source": "telegram", "user_id": "5551234", "model":
                 "NousResearch/Hermes-4-405B", "started_at": at("2025-09-05 14:02:10"),
                 "ended_at": at("2025-09-05 14:03:30"), "end_reason": "session_reset",
                 "input_tokens": 1200, "output_tokens": 300}]
    messages = [
        message(OLD, "2025-09-05 14:02:12", "user", "Summarize https://example.com/changelog"),
        message(OLD, "2025-09-05 14:02:20", "assistant", None,
                tool_calls=[call("call_a1", "browser_navigate",
                                 {"url": "https://example.com/changelog"})]),
        message(OLD, "2025-09-05 14:02:25", "tool", json.dumps({"title": "Changelog"}),
                tool_call_id="call_a1", tool_name="browser_navigate"),
        message(OLD, "2025-09-05 14:02:40", "assistant", "Version 2 adds dark mode.",
                finish_reason="stop"),
    ]
    return sessions, messages


def write(path: Path, rows: tuple[list[dict[str, Any]], list[dict[str, Any]]],
          current: bool) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(SESSIONS_V7)
    conn.execute(MESSAGES_V7)
    if current:
        for statement in LATER:
            conn.execute(statement)
    for table, items in zip(("sessions", "messages"), rows, strict=True):
        for item in items:
            keys = ", ".join(item)
            conn.execute(f"INSERT INTO {table} ({keys}) VALUES ({', '.join('?' * len(item))})",
                         tuple(item.values()))
    conn.commit()
    conn.close()
    return path


def json_copies(home: Path) -> list[Path]:
    """A copy beside the database (left aside) and a profile's logs without one (read)."""
    beside = home / ".hermes/sessions" / f"session_{MAIN}.json"
    beside.parent.mkdir(parents=True, exist_ok=True)
    beside.write_text(json.dumps({"session_id": MAIN, "model": MODEL, "platform": "cli",
                                  "session_start": "2026-01-12T09:15:00",
                                  "last_updated": "2026-01-12T09:18:25", "message_count": 1,
                                  "messages": [{"role": "user", "content": "copy"}]}),
                      encoding="utf-8")
    profile = home / ".hermes/profiles/work/sessions"
    profile.mkdir(parents=True, exist_ok=True)
    log = profile / f"session_{LOG}.json"
    log.write_text(json.dumps({
        "session_id": LOG, "model": "gpt-5", "base_url": "https://api.openai.com/v1",
        "platform": "cli", "session_start": "2025-08-01T10:15:00.123456",
        "last_updated": "2025-08-01T10:16:30.654321", "message_count": 4,
        "messages": [
            {"role": "user", "content": "Write a todo note with one item: ship"},
            {"role": "assistant", "content": "", "reasoning": None, "finish_reason": "tool_calls",
             "tool_calls": [call("call_w1", "write_file",
                                 {"path": "notes/todo.md", "content": "- ship\n"})]},
            {"role": "tool", "tool_call_id": "call_w1", "tool_name": "write_file",
             "content": json.dumps({"bytes_written": 7})},
            {"role": "assistant", "content": "Written.", "finish_reason": "stop"},
        ]}, indent=2), encoding="utf-8")
    transcript = profile / f"{GATEWAY}.jsonl"
    lines = [
        {"role": "session_meta", "model": "gpt-5", "platform": "discord",
         "timestamp": "2025-08-02T08:00:00"},
        {"role": "user", "content": "ping the status page", "timestamp": "2025-08-02T08:00:01"},
        {"role": "assistant", "content": "", "timestamp": "2025-08-02T08:00:04",
         "tool_calls": [call("call_g1", "web_search", {"query": "example status page"})]},
        {"role": "tool", "tool_call_id": "call_g1", "tool_name": "web_search",
         "content": json.dumps({"success": False, "error": "search backend unavailable"}),
         "timestamp": "2025-08-02T08:00:06"},
        {"role": "assistant", "content": "The search backend is down.",
         "timestamp": "2025-08-02T08:00:09"},
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    (profile / "sessions.json").write_text(json.dumps({"discord:dm:42": {
        "session_id": GATEWAY}}), encoding="utf-8")
    return [beside, log, transcript]


def build(home: Path) -> list[Path]:
    linux = write(home / ".hermes/state.db", current_rows(), current=True)
    windows = write(home / "AppData/Local/hermes/state.db", old_rows(), current=False)
    return [linux, windows, *json_copies(home)]
