"""Zed's ``threads.db`` as Zed's ``ThreadsDatabase`` writes it (our own threads, written from
what ``crates/agent/src/db.rs`` and ``thread.rs`` of zed-industries/zed show): the current
``0.3.0`` payload zstd-compressed (level 3, as Zed saves), a subagent thread stored as plain
``json``, and at the macOS place an older database (no ``parent_id``, ``folder_paths``,
``created_at`` columns) holding an agent-1 ``0.2.0`` thread."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import zstandard

SCHEMA = ("CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, "
          "updated_at TEXT NOT NULL, data_type TEXT NOT NULL, data BLOB NOT NULL)")
LATER = ("ALTER TABLE threads ADD COLUMN parent_id TEXT",
         "ALTER TABLE threads ADD COLUMN folder_paths TEXT",
         "ALTER TABLE threads ADD COLUMN folder_paths_order TEXT",
         "ALTER TABLE threads ADD COLUMN created_at TEXT")

MAIN = "5b0e6d9c-3f1a-4c2e-9d8b-7a6f5e4d3c21"
CHILD = "c7d8e9f0-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
OLD = "0f9e8d7c-6b5a-4938-a7b6-c5d4e3f2a1b0"
PROMPT1 = "e1f2a3b4-0000-4000-8000-000000000001"
PROMPT2 = "e1f2a3b4-0000-4000-8000-000000000002"
CHILD_PROMPT = "e1f2a3b4-0000-4000-8000-000000000003"
MODEL = {"provider": "anthropic", "model": "claude-sonnet-4-5"}


def use(call_id: str, name: str, arguments: dict[str, Any], tagged: bool = False
        ) -> dict[str, Any]:
    value: Any = {"type": "json", "value": arguments} if tagged else arguments
    return {"ToolUse": {"id": call_id, "name": name, "raw_input": json.dumps(arguments),
                        "input": value, "is_input_complete": True, "thought_signature": None}}


def result(call_id: str, name: str, text: str, error: bool = False,
           output: Any = None) -> dict[str, Any]:
    return {"tool_use_id": call_id, "tool_name": name, "is_error": error,
            "content": [{"Text": text}], "output": output}


def main_thread() -> dict[str, Any]:
    return {
        "title": "Fix the failing parser test",
        "messages": [
            {"User": {"id": PROMPT1, "content": [
                {"Text": "The parser test fails, find out why and fix it"}]}},
            {"Agent": {"content": [
                {"Thinking": {"text": "Run the tests first.", "signature": "sig-1"}},
                {"Text": "Let me run the tests and read the parser."},
                use("toolu_01", "terminal", {"command": "cargo test -p parser", "cd": "zedproj"}),
                use("toolu_02", "read_file", {"path": "zedproj/src/parser.rs"}),
                use("toolu_03", "spawn_agent", {"label": "Find callers",
                                                "message": "Find every caller of parse()"})],
                "tool_results": {
                    "toolu_01": result("toolu_01", "terminal", "test parse_empty ... FAILED"),
                    "toolu_02": result("toolu_02", "read_file",
                                       "zedproj/src/parser.rs not found", error=True),
                    "toolu_03": result(
                        "toolu_03", "spawn_agent",
                        json.dumps({"session_id": CHILD, "output": "2 callers"}),
                        output={"session_id": CHILD, "output": "2 callers",
                                "session_info": {"session_id": CHILD,
                                                 "message_start_index": 0,
                                                 "message_end_index": 1}})},
                "reasoning_details": None}},
            {"Agent": {"content": [
                {"Text": "The empty input is not handled; editing."},
                use("toolu_04", "edit_file", {"display_description": "Handle empty input",
                                              "path": "zedproj/src/lib.rs", "mode": "edit"})],
                "tool_results": {}, "reasoning_details": None}},
            {"User": {"id": PROMPT2, "content": [
                {"Text": "Also check "},
                {"Mention": {"uri": {"File": {"abs_path": "/home/u/zedproj/README.md"}},
                             "content": "# zedproj"}}]}},
            "Resume",
            {"Agent": {"content": [{"Text": "The README needs no change."}],
                       "tool_results": {}, "reasoning_details": None}},
        ],
        "updated_at": "2025-10-02T09:14:30Z",
        "detailed_summary": None,
        "initial_project_snapshot": None,
        "cumulative_token_usage": {"input_tokens": 5200, "output_tokens": 830,
                                   "cache_creation_input_tokens": 1200,
                                   "cache_read_input_tokens": 20400},
        "request_token_usage": {PROMPT1: {"input_tokens": 3100, "output_tokens": 610},
                                PROMPT2: {"input_tokens": 2100, "output_tokens": 220}},
        "model": MODEL,
        "profile": "write",
        "imported": False,
        "subagent_context": None,
        "speed": None,
        "thinking_enabled": True,
        "thinking_effort": None,
        "draft_prompt": None,
        "ui_scroll_position": None,
        "sandboxed_terminal_temp_dir": None,
        "version": "0.3.0",
    }


def child_thread() -> dict[str, Any]:
    return {
        "title": "Find callers",
        "messages": [
            {"User": {"id": CHILD_PROMPT, "content": [{"Text": "Find every caller of parse()"}]}},
            {"Agent": {"content": [
                use("toolu_11", "grep", {"regex": "parse\\(", "include_pattern": "**/*.rs"},
                    tagged=True),
                use("toolu_12", "find_path", {"glob": "**/parser*.rs"}, tagged=True)],
                "tool_results": {
                    "toolu_11": result("toolu_11", "grep", "src/main.rs:4\nsrc/cli.rs:9"),
                    "toolu_12": result("toolu_12", "find_path", "src/parser.rs")},
                "reasoning_details": None}},
            {"Agent": {"content": [{"Text": "2 callers: main.rs and cli.rs."}],
                       "tool_results": {}, "reasoning_details": None}},
        ],
        "updated_at": "2025-10-02T09:11:40Z",
        "cumulative_token_usage": {"input_tokens": 900, "output_tokens": 120},
        "request_token_usage": {},
        "model": MODEL,
        "subagent_context": {"parent_thread_id": MAIN, "depth": 1},
        "version": "0.3.0",
    }


def old_thread() -> dict[str, Any]:
    """Agent 1's ``SerializedThread`` 0.2.0."""
    return {
        "version": "0.2.0",
        "summary": "List the docs folder",
        "updated_at": "2025-06-11T16:02:10Z",
        "messages": [
            {"id": 0, "role": "user", "segments": [{"type": "text", "text": "What is in docs/?"}],
             "tool_uses": [], "tool_results": [], "context": "", "creases": [],
             "is_hidden": False},
            {"id": 1, "role": "assistant",
             "segments": [{"type": "thinking", "text": "List it.", "signature": "s0"},
                          {"type": "text", "text": "Listing docs/ and fetching the site."}],
             "tool_uses": [{"id": "toolu_a1", "name": "list_directory",
                            "input": {"path": "oldproj/docs"}},
                           {"id": "toolu_a2", "name": "fetch",
                            "input": {"url": "https://docs.example.com/"}}],
             "tool_results": [{"tool_use_id": "toolu_a1", "is_error": False,
                               "content": "guide.md\nindex.md", "output": None},
                              {"tool_use_id": "toolu_a2", "is_error": True,
                               "content": "HTTP 404", "output": None}],
             "context": "", "creases": [], "is_hidden": False},
            {"id": 2, "role": "assistant",
             "segments": [{"type": "text", "text": "docs/ holds guide.md and index.md."}],
             "tool_uses": [], "tool_results": [], "context": "", "creases": [],
             "is_hidden": False},
        ],
        "initial_project_snapshot": None,
        "cumulative_token_usage": {"input_tokens": 1400, "output_tokens": 90},
        "request_token_usage": [{"input_tokens": 700, "output_tokens": 40},
                                {"input_tokens": 700, "output_tokens": 50}],
        "detailed_summary_state": "NotGenerated",
        "model": {"provider": "zed.dev", "model": "claude-3-7-sonnet-latest"},
        "completion_mode": "normal",
        "tool_use_limit_reached": False,
        "profile": "write",
    }


def packed(thread: dict[str, Any]) -> bytes:
    return zstandard.ZstdCompressor(level=3).compress(json.dumps(thread).encode("utf-8"))


def write(path: Path, rows: list[tuple[Any, ...]], current: bool) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(SCHEMA)
    if current:
        for statement in LATER:
            conn.execute(statement)
        conn.executemany("INSERT INTO threads (id, parent_id, folder_paths, folder_paths_order,"
                         " summary, updated_at, data_type, data, created_at) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    else:
        conn.executemany("INSERT INTO threads (id, summary, updated_at, data_type, data) "
                         "VALUES (?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return path


def build(home: Path) -> list[Path]:
    linux = write(home / ".local/share/zed/threads/threads.db", [
        (MAIN, None, "/home/u/zedproj", "0", "Fix the failing parser test",
         "2025-10-02T09:14:30+00:00", "zstd", packed(main_thread()),
         "2025-10-02T09:10:05+00:00"),
        (CHILD, MAIN, "/home/u/zedproj", "0", "Find callers", "2025-10-02T09:11:40+00:00",
         "json", json.dumps(child_thread()).encode("utf-8"), "2025-10-02T09:11:02+00:00"),
    ], current=True)
    mac = write(home / "Library/Application Support/Zed/threads/threads.db", [
        (OLD, "List the docs folder", "2025-06-11T16:02:10+00:00", "zstd",
         packed(old_thread())),
    ], current=False)
    return [linux, mac]
