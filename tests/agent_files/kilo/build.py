"""Kilo's CLI database ``~/.local/share/kilo/kilo.db`` as the CLI (a fork of OpenCode, its
tables) writes it: our own sessions, written from what ``Kilo-Org/kilocode``
``packages/opencode/src/storage/db.ts`` and ``global/index.ts`` show (the file and its
place) and OpenCode's ``session.sql.ts`` / ``message-v2.ts`` (the rows): a session with
calls (one failing, one still running: no result), token counts, and an ``explore``
subagent spawned by its ``task`` call."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from agent_databases import OPENCODE_SCHEMA

MAIN = "ses_3a1f0c2b7ffeKiloPaginate01"
CHILD = "ses_3a1f0c2b7ffeKiloHelpers01"
DIRECTORY = "/home/u/api"
T = 1_767_000_000_000  # 2025-12-29T09:20:00Z, in milliseconds
MODEL = "anthropic/claude-sonnet-4.5"


def tool(call_id: str, name: str, arguments: dict[str, Any], status: str,
         output: str = "", metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    state: dict[str, Any] = {"status": status, "input": arguments, "time": {"start": T}}
    if status == "completed":
        state.update(output=output, title=name, metadata=metadata or {},
                     time={"start": T, "end": T + 900})
    elif status == "error":
        state.update(error=output, time={"start": T, "end": T + 900})
    return {"type": "tool", "callID": call_id, "tool": name, "state": state}


def assistant(at: int, parent: str, tokens: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "time": {"created": at, "completed": at + 9000},
            "parentID": parent, "modelID": MODEL, "providerID": "kilo", "mode": "code",
            "agent": "code", "path": {"cwd": DIRECTORY, "root": DIRECTORY}, "cost": 0,
            "tokens": tokens, "finish": "stop"}


def user(at: int) -> dict[str, Any]:
    return {"role": "user", "time": {"created": at}, "agent": "code",
            "model": {"providerID": "kilo", "modelID": MODEL}}


def build(home: Path) -> list[Path]:
    path = home / ".local/share/kilo/kilo.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(OPENCODE_SCHEMA)
    conn.execute("INSERT INTO project VALUES ('prj_api', ?, 'git', 'api', ?, ?)",
                 (DIRECTORY, T, T))

    def session(sid: str, title: str, at: int, parent: str | None = None) -> None:
        conn.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, "
                     "version, time_created, time_updated) VALUES (?, 'prj_api', ?, ?, ?, ?, "
                     "'7.0.12', ?, ?)", (sid, parent, sid[-8:], DIRECTORY, title, at, at))

    def message(mid: str, sid: str, info: dict[str, Any]) -> None:
        at = info["time"]["created"]
        conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                     (mid, sid, at, at, json.dumps(info)))

    def part(pid: str, mid: str, sid: str, data: dict[str, Any]) -> None:
        conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                     (pid, mid, sid, T, T, json.dumps(data)))

    session(MAIN, "Add pagination to the users endpoint", T)
    message("msg_k01", MAIN, user(T))
    part("prt_k01", "msg_k01", MAIN, {"type": "text",
                                      "text": "Add pagination to the users endpoint"})
    message("msg_k02", MAIN, assistant(T + 2000, "msg_k01", {
        "input": 2400, "output": 310, "reasoning": 40, "cache": {"read": 18000, "write": 1200}}))
    for n, data in enumerate([
            {"type": "step-start"},
            {"type": "reasoning", "text": "Read the handler, then the tests."},
            {"type": "text", "text": "Reading the users handler."},
            tool("call_k1", "read", {"filePath": "/home/u/api/src/users.ts"}, "completed",
                 "export function listUsers() {}"),
            tool("call_k2", "grep", {"pattern": "limit", "path": "/home/u/api/src"},
                 "completed", "src/db.ts:12: limit"),
            tool("call_k3", "bash", {"command": "npm test -- users",
                                     "description": "Run the users tests"}, "error",
                 "npm ERR! Test failed. exit code 1"),
            tool("call_k4", "task", {"description": "Find pagination helpers",
                                     "prompt": "Find existing pagination helpers",
                                     "subagent_type": "explore"}, "completed",
                 "src/paging.ts exports paginate()", {"sessionId": CHILD}),
            tool("call_k5", "edit", {"filePath": "/home/u/api/src/users.ts",
                                     "oldString": "listUsers()",
                                     "newString": "listUsers(page)"}, "running"),
            {"type": "step-finish", "reason": "tool-calls"}]):
        part(f"prt_k02_{n:02d}", "msg_k02", MAIN, data)
    message("msg_k03", MAIN, assistant(T + 40000, "msg_k01", {
        "input": 120, "output": 30, "reasoning": 0, "cache": {"read": 0, "write": 0}}))
    part("prt_k03", "msg_k03", MAIN, {"type": "text", "text": "Pagination is half done."})

    session(CHILD, "Find pagination helpers (@explore subagent)", T + 5000, MAIN)
    message("msg_kc1", CHILD, user(T + 5000))
    part("prt_kc1", "msg_kc1", CHILD, {"type": "text",
                                       "text": "Find existing pagination helpers"})
    message("msg_kc2", CHILD, assistant(T + 6000, "msg_kc1", {
        "input": 800, "output": 60, "reasoning": 0, "cache": {"read": 0, "write": 0}}))
    part("prt_kc2", "msg_kc2", CHILD, tool("call_kc1", "glob", {"pattern": "src/**/pag*.ts"},
                                           "completed", "src/paging.ts"))
    conn.close()
    return [path]
