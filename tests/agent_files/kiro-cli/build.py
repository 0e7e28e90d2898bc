"""Kiro CLI's and Amazon Q Developer CLI's files as they write them (our own conversations,
written from what aws/amazon-q-developer-cli shows: ``crates/chat-cli`` @15cc8f3c and the Kiro
sources of ``sync-prod-from-main`` @7bc6d258): Kiro's ``data.sqlite3`` (migrations 000-008:
``conversations_v2`` beside the old table, one old row copied into it), Amazon Q's older
database at the macOS place (history as ``[user, assistant]`` pairs, the ``model`` field),
and a Kiro session log with its metadata, lock and task folder."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

KIRO_A = "3f6c2a1e-8b4d-4e7f-9a0c-1d2e3f4a5b6c"
KIRO_B = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
QOLD = "b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e"
LOG = "6e5d4c3b-2a19-4f8e-8d7c-6b5a49382716"

BASE = """
CREATE TABLE migrations (id INTEGER PRIMARY KEY, version INTEGER NOT NULL,
    migration_time INTEGER NOT NULL);
CREATE TABLE history (id INTEGER PRIMARY KEY, command TEXT, shell TEXT, pid INTEGER,
    session_id TEXT, cwd TEXT, start_time INTEGER, hostname TEXT, exit_code INTEGER,
    end_time INTEGER, duration INTEGER);
CREATE TABLE state (key TEXT PRIMARY KEY, value BLOB);
CREATE TABLE auth_kv (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT);
"""
V2 = """
CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL,
    value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    PRIMARY KEY (key, conversation_id));
"""


def user(content: dict[str, Any], cwd: str, stamp: str | None) -> dict[str, Any]:
    return {"additional_context": "", "env_context": {"env_state": {
        "operating_system": "linux", "current_working_directory": cwd,
        "environment_variables": []}}, "content": content, "timestamp": stamp, "images": None}


def prompt(text: str, cwd: str, stamp: str | None) -> dict[str, Any]:
    return user({"Prompt": {"prompt": text}}, cwd, stamp)


def results(cwd: str, *items: tuple[str, Any, str]) -> dict[str, Any]:
    return user({"ToolUseResults": {"tool_use_results": [
        {"tool_use_id": i, "content": [c], "status": s} for i, c, s in items]}}, cwd, None)


def use(uid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": uid, "name": name, "orig_name": name, "args": args, "orig_args": args}


def tools(mid: str | None, text: str, *uses: dict[str, Any]) -> dict[str, Any]:
    return {"ToolUse": {"message_id": mid, "content": text, "tool_uses": list(uses)}}


def reply(mid: str | None, text: str) -> dict[str, Any]:
    return {"Response": {"message_id": mid, "content": text}}


def meta(mid: str, start: int, end: int, model: str) -> dict[str, Any]:
    return {"request_id": f"req-{mid}", "message_id": mid, "request_start_timestamp_ms": start,
            "stream_end_timestamp_ms": end, "time_to_first_chunk": {"secs": 1, "nanos": 0},
            "time_between_chunks": [], "user_prompt_length": 40, "response_size": 200,
            "chat_conversation_type": "ToolUse", "tool_use_ids_and_names": [],
            "model_id": model, "message_meta_tags": []}


def state(cid: str, history: list[Any], **extra: Any) -> str:
    return json.dumps({"conversation_id": cid, "next_message": None, "history": history,
                       "valid_history_range": [0, len(history)], "transcript": ["> hi"],
                       "tools": {}, "context_manager": None, "context_message_length": None,
                       "latest_summary": None, "file_line_tracker": {},
                       "checkpoint_manager": None, "mcp_enabled": True, **extra})


SONNET = "claude-sonnet-4.5"
API = "/home/u/projects/api"


def kiro_a() -> str:
    # 2026-02-10 14:00:00 UTC = 1770732000000 ms
    t = 1770732000000
    return state(KIRO_A, [
        {"user": prompt("Add a /health endpoint to the server", API,
                        "2026-02-10T15:00:00.120+01:00"),
         "assistant": tools("m-a1", "I'll look at the server first.",
                            use("tooluse_a1", "fs_read", {"mode": "Line",
                                                          "path": f"{API}/src/server.py"}),
                            use("tooluse_a2", "execute_bash", {"command": "ls tests",
                                                               "summary": "list tests"})),
         "request_metadata": meta("m-a1", t + 200, t + 4200, SONNET)},
        {"user": results(API, ("tooluse_a1", {"Text": "from flask import Flask\n"}, "Success"),
                         ("tooluse_a2", {"Text": "ls: cannot access 'tests'"}, "Error")),
         "assistant": tools("m-a2", "",
                            use("tooluse_a3", "fs_write", {
                                "command": "str_replace", "path": f"{API}/src/server.py",
                                "old_str": "app = Flask(__name__)\n",
                                "new_str": "app = Flask(__name__)\n\n@app.get('/health')\n"
                                           "def health():\n    return 'ok'\n"}),
                            use("tooluse_a4", "fs_write", {
                                "command": "create", "path": f"{API}/tests/test_health.py",
                                "file_text": "def test_health(client):\n    assert "
                                             "client.get('/health').text == 'ok'\n"})),
         "request_metadata": meta("m-a2", t + 5000, t + 9000, SONNET)},
        {"user": results(API, ("tooluse_a3", {"Text": ""}, "Success"),
                         ("tooluse_a4", {"Json": {"created": True}}, "Success")),
         "assistant": reply("m-a3", "Added the endpoint and a test."),
         "request_metadata": meta("m-a3", t + 9500, t + 12000, SONNET)},
        {"user": prompt("Run the tests", API, "2026-02-10T15:01:30.000+01:00"),
         "assistant": tools("m-a4", "Running them.",
                            use("tooluse_a5", "execute_bash", {"command": "pytest -q"})),
         "request_metadata": meta("m-a4", t + 90100, t + 92000, SONNET)},
    ], model_info={"model_name": SONNET, "model_id": SONNET, "context_window_tokens": 200000})


def kiro_b() -> str:
    t = 1770735600000  # 2026-02-10 15:00:00 UTC
    return state(KIRO_B, [
        {"user": prompt("List my S3 buckets and update the todo", API,
                        "2026-02-10T15:00:00.000Z"),
         "assistant": tools("m-b1", "", use("tooluse_b1", "use_aws", {
             "service_name": "s3", "operation_name": "list-buckets", "region": "us-east-1",
             "label": "List buckets"}), use("tooluse_b2", "todo_list", {
                 "command": "create", "todo_list_description": "buckets",
                 "tasks": ["audit buckets"]})),
         "request_metadata": meta("m-b1", t + 100, t + 3100, "claude-haiku-4.5")},
        {"user": user({"CancelledToolUses": {"prompt": "Skip AWS, just the todo",
                                             "tool_use_results": [
            {"tool_use_id": "tooluse_b1", "content": [
                {"Text": "Tool use was cancelled by the user"}], "status": "Error"},
            {"tool_use_id": "tooluse_b2", "content": [
                {"Text": "Tool use was cancelled by the user"}], "status": "Error"}]}},
                      API, "2026-02-10T15:00:20.000Z"),
         "assistant": reply("m-b2", "Understood, skipping AWS."),
         "request_metadata": meta("m-b2", t + 20100, t + 22500, "claude-haiku-4.5")},
    ])


def q_old() -> str:
    cwd = "/home/u/notes"
    return state(QOLD, [
        [prompt("What is in this folder?", cwd, "2025-06-02T09:30:00.000-07:00"),
         tools(None, "Let me look.", use("tooluse_q1", "fs_read",
                                         {"mode": "Directory", "path": cwd, "depth": 0}))],
        [results(cwd, ("tooluse_q1", {"Text": "todo.md\nideas.md"}, "Success")),
         reply(None, "Two notes: todo.md and ideas.md.")],
        [prompt("Append 'call bank' to todo.md", cwd, "2025-06-02T09:31:10.000-07:00"),
         tools(None, "", use("tooluse_q2", "fs_write", {"command": "append",
                                                        "path": f"{cwd}/todo.md",
                                                        "new_str": "- call bank\n"}))],
        [results(cwd, ("tooluse_q2", {"Text": ""}, "Success")),
         reply(None, "Appended.")],
    ], model="CLAUDE_3_7_SONNET_20250219_V1_0")


def database(path: Path, v2: bool, rows: list[tuple[str, str]],
             rows_v2: list[tuple[str, str, str, int, int]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(BASE + (V2 if v2 else ""))
    for version in range(9 if v2 else 8):
        conn.execute("INSERT INTO migrations (version, migration_time) VALUES (?, ?)",
                     (version, 1770000000))
    conn.execute("INSERT INTO state VALUES ('telemetryClientId', 'c0ffee')")
    conn.executemany("INSERT INTO conversations VALUES (?, ?)", rows)
    if v2:
        conn.executemany("INSERT INTO conversations_v2 VALUES (?, ?, ?, ?, ?)", rows_v2)
    conn.commit()
    conn.close()
    return path


def session_log(home: Path) -> list[Path]:
    folder = home / ".kiro/sessions/cli"
    (folder / LOG / "tasks").mkdir(parents=True, exist_ok=True)
    (folder / LOG / "tasks" / "1.json").write_text(json.dumps(
        {"id": "1", "subject": "Rename the flag", "status": "completed"}), encoding="utf-8")
    (folder / f"{LOG}.lock").write_text(json.dumps(
        {"pid": 4242, "started_at": "2026-03-05T10:00:00Z"}), encoding="utf-8")
    cwd = "/home/u/projects/cli"

    def entry(kind: str, data: Any = None) -> dict[str, Any]:
        return {"version": "v1", "kind": kind, **({"data": data} if data is not None else {})}

    def text(value: str) -> dict[str, Any]:
        return {"kind": "text", "data": value}

    def result(uid: str, status: str, value: Any) -> dict[str, Any]:
        return {"kind": "toolResult", "data": {"toolUseId": uid, "status": status,
                                               "content": [value]}}

    read = {"ops": [{"mode": "Line", "path": f"{cwd}/src/main.rs"}]}
    lines = [
        entry("Prompt", {"message_id": "p1", "content": [text("Rename --verbose to --debug")],
                         "meta": {"timestamp": 1772704800}}),
        entry("AssistantMessage", {"message_id": "a1", "content": [
            {"kind": "thinking", "data": {"text": "Find the flag first.", "signature": "sig1"}},
            text("Searching for the flag."),
            {"kind": "toolUse", "data": {"toolUseId": "tooluse_l1", "name": "grep",
                                         "input": {"pattern": "verbose", "path": "src"}}},
            {"kind": "toolUse", "data": {"toolUseId": "tooluse_l2", "name": "read",
                                         "input": read}}]}),
        entry("ToolResults", {"message_id": "r1", "content": [
            result("tooluse_l1", "success", {"kind": "json", "data": {"matches": 2}}),
            result("tooluse_l2", "error", {"kind": "text", "data": "no such file"})],
            "results": {}}),
        entry("AssistantMessage", {"message_id": "a2", "content": [
            {"kind": "toolUse", "data": {"toolUseId": "tooluse_l3", "name": "shell", "input": {
                "command": "sed -i s/verbose/debug/ src/cli.rs"}}}]}),
        entry("ToolResults", {"message_id": "r2", "content": [
            result("tooluse_l3", "success", {"kind": "text", "data": ""})], "results": {}}),
        entry("AssistantMessage", {"message_id": "a3", "content": [text("Renamed.")]}),
        entry("Compaction", {"summary": "Renamed --verbose to --debug in src/cli.rs.",
                             "strategy": {}, "messages_snapshot": []}),
        entry("Prompt", {"message_id": "p2", "content": [text("Now update the README")],
                         "meta": {"timestamp": 1772705100}}),
        entry("AssistantMessage", {"message_id": "a4", "content": [
            {"kind": "toolUse", "data": {"toolUseId": "tooluse_l4", "name": "write",
                                         "input": {"command": "strReplace",
                                                   "path": f"{cwd}/README.md",
                                                   "oldStr": "--verbose",
                                                   "newStr": "--debug"}}}]}),
        entry("CancelledPrompt"),
    ]
    log = folder / f"{LOG}.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    turn = {"loop_id": {"agent_id": {"name": "kiro_default", "parent_id": None, "rand": "x1y2z"},
                        "rand": 1}, "result": None, "total_request_count": 3,
            "number_of_cycles": 2, "builtin_tool_uses": 3, "turn_duration": None,
            "end_reason": "UserTurnEnd", "context_usage_percentage": 4.5,
            "metering_usage": []}
    data = {"session_id": LOG, "cwd": cwd, "created_at": "2026-03-05T10:00:00.000000Z",
            "updated_at": "2026-03-05T10:05:30.500000Z", "title": "Rename --verbose to --debug",
            "session_state": {"version": "v1", "conversation_metadata": {
                "user_turn_metadatas": [
                    {**turn, "message_ids": ["p1", "a1", "r1", "a2", "r2", "a3"],
                     "end_timestamp": "2026-03-05T10:01:00Z", "input_token_count": 5400,
                     "output_token_count": 320},
                    {**turn, "message_ids": ["p2", "a4"], "end_timestamp":
                     "2026-03-05T10:05:30Z", "input_token_count": 2100,
                     "output_token_count": 90, "end_reason": "Cancelled"}],
                "user_turn_start_request": None, "last_request": None},
                "rts_model_state": {"conversation_id": LOG, "model_info": {
                    "model_name": "claude-opus-4.6", "model_id": "claude-opus-4.6",
                    "context_window_tokens": 200000}, "context_usage_percentage": 4.5},
                "permissions": {"filesystem": {}, "trusted_tools": [], "denied_tools": []},
                "agent_name": "kiro_default"}}
    meta_file = folder / f"{LOG}.json"
    meta_file.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return [log]  # (the .json is read with its log)


def build(home: Path) -> list[Path]:
    kiro = database(home / ".local/share/kiro-cli/data.sqlite3", True,
                    [(API, kiro_a())],
                    [(API, KIRO_A, kiro_a(), 1770732000000, 1770732092000),
                     (API, KIRO_B, kiro_b(), 1770735600000, 1770735622500)])
    amazon_q = database(home / "Library/Application Support/amazon-q/data.sqlite3", False,
                        [("/home/u/notes", q_old())], [])
    return [kiro, amazon_q, *session_log(home)]
