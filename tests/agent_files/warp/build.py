"""Warp's ``warp.sqlite`` with its agent tables (our own rows, written from the columns
Warp's database shows; closed source) beside a terminal table the reader never reads: on
Linux a newer database (``agent_conversations`` with usage), at the macOS place an older
one with ``ai_queries`` only."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

QUERIES = """CREATE TABLE ai_queries (
    id INTEGER PRIMARY KEY NOT NULL, exchange_id TEXT NOT NULL, conversation_id TEXT NOT NULL,
    start_ts DATETIME NOT NULL, input TEXT NOT NULL, working_directory TEXT,
    output_status TEXT NOT NULL, model_id TEXT NOT NULL DEFAULT '',
    planning_model_id TEXT NOT NULL DEFAULT '', coding_model_id TEXT NOT NULL DEFAULT '')"""
CONVERSATIONS = """CREATE TABLE agent_conversations (
    id INTEGER PRIMARY KEY NOT NULL, conversation_id TEXT NOT NULL,
    conversation_data TEXT NOT NULL,
    last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)"""
BLOCKS = """CREATE TABLE blocks (id INTEGER PRIMARY KEY, pane_leaf_uuid BLOB,
    stylized_command BLOB, stylized_output BLOB, pwd TEXT, exit_code INTEGER,
    start_ts DATETIME, completed_ts DATETIME)"""


def query(text: str) -> str:
    return json.dumps([{"Query": {"text": text, "context": []}}])


def build(home: Path) -> list[Path]:
    linux = home / ".local/state/warp-terminal/warp.sqlite"
    linux.parent.mkdir(parents=True)
    conn = sqlite3.connect(linux)
    for statement in (QUERIES, CONVERSATIONS, BLOCKS):
        conn.execute(statement)
    conn.execute("INSERT INTO blocks (pwd, exit_code, start_ts, stylized_output) "
                 "VALUES ('/home/u/web', 0, '2025-11-03 10:00:00', ?)", (b"x" * 4096,))
    usage = {"conversation_usage_metadata": {
        "token_usage": [{"model_id": "Claude Sonnet 4.5", "warp_tokens": 41200,
                         "byok_tokens": 0}],
        "tool_usage_metadata": {"run_command_stats": {"count": 2, "commands_executed": 2},
                                "read_files_stats": {"count": 1},
                                "grep_stats": {"count": 0}}}}
    conn.execute("INSERT INTO agent_conversations (conversation_id, conversation_data, "
                 "last_modified_at) VALUES (?, ?, ?)",
                 ("a1b2c3d4-warp-conv-0001", json.dumps(usage), "2025-11-03 10:06:12"))
    conn.executemany(
        "INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, "
        "working_directory, output_status, model_id) VALUES (?, ?, ?, ?, ?, ?, ?)", [
            ("ex-0001", "a1b2c3d4-warp-conv-0001", "2025-11-03 10:01:00.125000",
             query("Why does npm run build fail?"), "/home/u/web", '"Completed"', "auto"),
            ("ex-0002", "a1b2c3d4-warp-conv-0001", "2025-11-03 10:01:09.500000", "[]",
             "/home/u/web", '"Completed"', "auto"),
            ("ex-0003", "a1b2c3d4-warp-conv-0001", "2025-11-03 10:04:30.000000",
             query("Fix it and rerun the build"), "/home/u/web", '"Completed"',
             "claude-4-5-sonnet"),
        ])
    conn.commit()
    conn.close()
    mac = (home / "Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support"
           "/dev.warp.Warp-Stable/warp.sqlite")
    mac.parent.mkdir(parents=True)
    conn = sqlite3.connect(mac)
    conn.execute(QUERIES)
    conn.execute("INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, "
                 "working_directory, output_status, model_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                 ("ex-0100", "f0e1d2c3-warp-conv-0002", "2025-05-20 14:30:00",
                  query("list the largest files here"), "/Users/u/photos", '"Completed"',
                  "gpt-4o"))
    conn.commit()
    conn.close()
    return [linux, mac]
