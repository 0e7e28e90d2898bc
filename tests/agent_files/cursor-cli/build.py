"""cursor-agent's chat stores as the agent keeps them (our own chats, written from what
public references of the store document; Cursor is closed source): per chat
``~/.cursor/chats/<md5 of the folder>/<chat id>/store.db`` with ``meta`` (row ``"0"``:
hex-encoded JSON) and ``blobs`` (SHA-256 ids: message JSON in the AI SDK's shape, and
protobuf blobs listing the messages, field 1, with the folder's path beside them). One chat
with calls, results, an error, a call with no result, a second blob level, the context the
agent wraps around prompts; an older chat whose prompts are plain text and whose root names
no folder; a chat created but never sent (no root blob yet)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = ("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)",
          "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")

CWD = "/home/u/api"
MAIN = "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e"
OLD = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
FRESH = "f0e1d2c3-b4a5-4968-8776-655443322110"


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def listing(ids: list[str], *extra: tuple[int, bytes]) -> bytes:
    return b"".join(field(1, bytes.fromhex(i)) for i in ids) + b"".join(
        field(n, v) for n, v in extra)


def blob(data: bytes) -> tuple[str, bytes]:
    return hashlib.sha256(data).hexdigest(), data


def message(role: str, content: Any, **fields: Any) -> bytes:
    return json.dumps({"role": role, "content": content, **fields}).encode("utf-8")


def call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool-call", "toolCallId": call_id, "toolName": name, "args": args}


def result(call_id: str, name: str, value: Any, error: bool = False) -> dict[str, Any]:
    found = {"type": "tool-result", "toolCallId": call_id, "toolName": name, "result": value}
    if error:
        found["isError"] = True
    return found


def write(path: Path, meta: dict[str, Any], blobs: list[tuple[str, bytes]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    for statement in SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps(meta).encode("utf-8").hex(),))
    conn.executemany("INSERT OR IGNORE INTO blobs VALUES (?, ?)", blobs)
    conn.commit()
    conn.close()
    return path


def main_chat() -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
    system = blob(message("system", "You are a coding agent running in a terminal."))
    ask = blob(message("user", [{"type": "text", "text": (
        "<user_info>\nOS Version: linux 6.8\nShell: bash\n</user_info>\n\n<user_query>\n"
        "Why does the health check fail?\n</user_query>")}]))
    look = blob(message("assistant", [
        {"type": "reasoning", "text": "Probe the endpoint, then read the handler."},
        {"type": "text", "text": "Let me probe it and read the handler."},
        call("tool_01", "Shell", {"command": "curl -s localhost:8080/health",
                                  "working_directory": CWD}),
        call("tool_02", "Read", {"path": "src/health.go"})], id="1"))
    seen = blob(message("tool", [
        result("tool_01", "Shell", "curl: (7) Failed to connect: Connection refused", True),
        result("tool_02", "Read", [{"type": "text", "text": "package main\n"}])], id="2"))
    turn = blob(listing([look[0], seen[0]]))  # (a second level: a blob listing blobs)
    edit = blob(message("assistant", [call("tool_03", "Edit", {
        "path": "src/health.go", "old_string": ":8081", "new_string": ":8080"})], id="1"))
    again = blob(message("user", [{"type": "text", "text":
                                   "<user_query>\nRun the tests again\n</user_query>"}]))
    grep = blob(message("assistant", [call("tool_04", "Grep", {"pattern": "func Health"})],
                        id="1"))
    found = blob(message("tool", [result("tool_04", "Grep", "src/health.go:12")], id="2"))
    done = blob(message("assistant", [{"type": "text", "text": "The port is fixed."}], id="1"))
    root = blob(listing([system[0], ask[0], turn[0], edit[0], again[0], grep[0], found[0],
                         done[0]], (3, b"gpt-5"), (4, CWD.encode("utf-8"))))
    meta = {"agentId": MAIN, "latestRootBlobId": root[0], "name": "Health check fails",
            "mode": "auto-run", "createdAt": 1760004000000, "lastUsedModel": "gpt-5"}
    return meta, [system, ask, look, seen, turn, edit, again, grep, found, done, root]


def old_chat() -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
    ask = blob(message("user", "List the files here"))
    ls = blob(message("assistant", [call("tool_a", "LS", {"path": "."})], id="1"))
    out = blob(message("tool", [result("tool_a", "LS", "go.mod\nmain.go")], id="2"))
    done = blob(message("assistant", "There are two files.", id="1"))
    root = blob(listing([ask[0], ls[0], out[0], done[0]]))
    meta = {"agentId": OLD, "latestRootBlobId": root[0], "name": "List files",
            "mode": "manual", "createdAt": 1755000000000, "lastUsedModel": "claude-4-sonnet"}
    return meta, [ask, ls, out, done, root]


def build(home: Path) -> list[Path]:
    chats = home / ".cursor/chats"
    folder = hashlib.md5(CWD.encode("utf-8"), usedforsecurity=False).hexdigest()
    meta, blobs = main_chat()
    main = write(chats / folder / MAIN / "store.db", meta, blobs)
    meta, blobs = old_chat()
    other = hashlib.md5(b"/home/u/tmp", usedforsecurity=False).hexdigest()
    old = write(chats / other / OLD / "store.db", meta, blobs)
    fresh = write(chats / folder / FRESH / "store.db",
                  {"agentId": FRESH, "latestRootBlobId": "0" * 64, "name": "New Agent",
                   "mode": "auto-run", "createdAt": 1760009000000, "lastUsedModel": "gpt-5"},
                  [])
    return [main, old, fresh]
