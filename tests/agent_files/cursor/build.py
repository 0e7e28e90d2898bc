"""Cursor's global ``state.vscdb`` as the editor keeps it (our own chats, written from what
public studies of the store and open archives' readers document; Cursor is closed source):
the ``ItemTable`` of editor state (never read) and ``cursorDiskKV`` with a current chat
(``_v`` 10: headers only, one bubble row per message, a subagent's chat, a chat never used,
a bubble no chat lists) at the Linux place, and at the macOS place an older chat (``_v`` 3)
that keeps its bubbles inline and uses the older tool names."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = ("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
          "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")

MAIN = "7c1e2d3f-4a5b-4c6d-8e9f-a0b1c2d3e4f5"
CHILD = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
EMPTY = "11112222-3333-4444-8555-666677778888"
OLD = "3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7"


def bubble(bid: str, kind: int, at: str, text: str = "", **fields: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"_v": 3, "type": kind, "bubbleId": bid, "text": text,
                             "richText": "", "createdAt": at, "requestId": f"req-{bid[:4]}",
                             "isAgentic": True, "unifiedMode": 2, "codeBlocks": [],
                             "tokenCount": {"inputTokens": 0, "outputTokens": 0}}
    found.update(fields)
    return found


def tool(name: str, call_id: str, status: str, args: dict[str, Any] | None = None,
         result: Any = None, params: dict[str, Any] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"tool": 15, "name": name, "toolCallId": call_id, "status": status,
                             "rawArgs": json.dumps(args) if args is not None else "",
                             "params": json.dumps(params) if params is not None else "",
                             "additionalData": {}, "userDecision": "accepted"}
    if result is not None:
        found["result"] = result if isinstance(result, str) else json.dumps(result)
    return found


def main_bubbles() -> list[dict[str, Any]]:
    return [
        bubble("b-u1", 1, "2025-11-03T10:00:05.120Z",
               "Add rate limiting to the /orders endpoint",
               workspaceUris=["file:///home/u/shop"],
               modelInfo={"modelName": "claude-4.5-sonnet"}),
        bubble("b-a1", 2, "2025-11-03T10:00:09.400Z", "I'll look at the router first.",
               thinking={"text": "Find where /orders is routed.", "signature": "sig-a1"},
               tokenCount={"inputTokens": 12400, "outputTokens": 310}),
        bubble("b-a2", 2, "2025-11-03T10:00:12.010Z", toolFormerData=tool(
            "run_terminal_cmd", "toolu_c01", "completed",
            {"command": "npm test -- orders", "is_background": False,
             "explanation": "Run the orders tests"},
            {"output": "3 passing", "exitCode": 0})),
        bubble("b-a3", 2, "2025-11-03T10:00:15.500Z", toolFormerData=tool(
            "read_file_v2", "toolu_c02", "error",
            params={"targetFile": "src/limits.ts"}, args={"target_file": "src/limits.ts"},
            result={"error": "File not found: src/limits.ts"})),
        bubble("b-a4", 2, "2025-11-03T10:00:20.000Z", toolFormerData=tool(
            "task_v2", "toolu_c03", "completed",
            {"description": "Find the router", "prompt": "Where is /orders routed?"},
            {"composerId": CHILD, "summary": "src/routes/orders.ts"})),
        bubble("b-a5", 2, "2025-11-03T10:01:02.300Z", toolFormerData=tool(
            "edit_file_v2", "toolu_c04", "loading",
            {"target_file": "src/routes/orders.ts", "instructions": "Add the limiter",
             "code_edit": "router.use(limiter)"}),
               tokenCount={"inputTokens": 18200, "outputTokens": 820}),
        bubble("b-a6", 2, "2025-11-03T10:01:30.000Z", "The limiter is in place."),
        bubble("b-u2", 1, "2025-11-03T10:04:00.000Z", "Use 100 requests per minute"),
        bubble("b-a7", 2, "2025-11-03T10:04:06.000Z", toolFormerData=tool(
            "search_replace", "toolu_c05", "cancelled",
            {"file_path": "src/routes/orders.ts", "old_string": "max: 60",
             "new_string": "max: 100"})),
        bubble("b-a8", 2, "2025-11-03T10:04:09.000Z", "Tell me when to apply the change.",
               tokenCount={"inputTokens": 19100, "outputTokens": 95}),
    ]


def child_bubbles() -> list[dict[str, Any]]:
    return [
        bubble("c-u1", 1, "2025-11-03T10:00:20.500Z", "Where is /orders routed?",
               workspaceProjectDir="/home/u/shop"),
        bubble("c-a1", 2, "2025-11-03T10:00:24.000Z", toolFormerData=tool(
            "grep", "toolu_s01", "completed", {"pattern": "'/orders'", "path": "src"},
            "src/routes/orders.ts:3")),
        bubble("c-a2", 2, "2025-11-03T10:00:27.000Z", toolFormerData=tool(
            "glob_file_search", "toolu_s02", "completed",
            {"glob_pattern": "**/routes/*.ts", "target_directory": "src"},
            {"files": ["src/routes/orders.ts"]}),
               tokenCount={"inputTokens": 3100, "outputTokens": 140}),
        bubble("c-a3", 2, "2025-11-03T10:00:30.000Z", "It is in src/routes/orders.ts."),
    ]


def composer(cid: str, name: str, created: int, updated: int | None,
             bubbles: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "_v": 10, "composerId": cid, "name": name, "text": "", "richText": "",
        "createdAt": created, "hasLoaded": True, "status": "completed",
        "unifiedMode": "agent", "forceMode": "edit", "isAgentic": True,
        "fullConversationHeadersOnly": [
            {"bubbleId": b["bubbleId"], "type": b["type"],
             **({"serverBubbleId": f"s-{b['bubbleId']}"} if b["type"] == 2 else {})}
            for b in bubbles],
        "conversationMap": {}, "context": {"fileSelections": [], "mentions": {}},
        "modelConfig": {"modelName": "claude-4.5-sonnet", "maxMode": False},
        "blobEncryptionKey": "not-a-real-key", "speculativeSummarizationEncryptionKey": "x",
    }
    if updated is not None:
        found["lastUpdatedAt"] = updated
    found.update(fields)
    return found


def write(path: Path, rows: list[tuple[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    for statement in SCHEMA:
        conn.execute(statement)
    conn.executemany("INSERT INTO ItemTable VALUES (?, ?)", [
        ("cursorAuth/accessToken", "not-read"),
        ("workbench.panel.composerChatViewPane.hidden", "false")])
    conn.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", [
        (key, value if isinstance(value, bytes) else json.dumps(value))
        for key, value in rows])
    conn.commit()
    conn.close()
    return path


def build(home: Path) -> list[Path]:
    main, child = main_bubbles(), child_bubbles()
    rows: list[tuple[str, Any]] = [
        (f"composerData:{MAIN}", composer(MAIN, "Rate limit the orders endpoint",
                                          1762164004000, 1762164250000, main,
                                          subComposerIds=[CHILD])),
        (f"composerData:{CHILD}", composer(CHILD, "Find the router", 1762164020300,
                                           1762164031000, child, isSubagent=True)),
        (f"composerData:{EMPTY}", composer(EMPTY, "", 1762165000000, None, [])),
        *((f"bubbleId:{MAIN}:{b['bubbleId']}", b) for b in main),
        *((f"bubbleId:{CHILD}:{b['bubbleId']}", json.dumps(b).encode("utf-8"))
          for b in child),
        (f"bubbleId:{MAIN}:b-undone", bubble("b-undone", 2, "2025-11-03T10:03:00.000Z",
                                             "A reply the user reverted.")),
        ("checkpointId:" + MAIN + ":cp1", {"files": []}),
    ]
    linux = write(home / ".config/Cursor/User/globalStorage/state.vscdb", rows)
    old_bubbles = [
        {"type": 1, "bubbleId": "o-u1", "text": "What does the docs folder hold?"},
        {"type": 2, "bubbleId": "o-a1", "text": "", "toolFormerData": tool(
            "list_dir", "toolu_o01", "completed", {"relative_workspace_path": "docs"},
            "api.md\nsetup.md")},
        {"type": 2, "bubbleId": "o-a2", "text": "", "toolFormerData": tool(
            "codebase_search", "toolu_o02", "completed", {"query": "setup steps"},
            "docs/setup.md:1")},
        {"type": 2, "bubbleId": "o-a3", "text": "", "toolFormerData": tool(
            "web_search", "toolu_o03", "error", {"search_term": "express rate limit"},
            "search failed")},
        {"type": 2, "bubbleId": "o-a4", "text": "It holds the API and setup guides."},
    ]
    old = composer(OLD, "Docs folder", 1749650400000, 1749650465000, [], _v=3,
                   conversation=old_bubbles, modelConfig={"modelName": "gpt-4.1"})
    del old["fullConversationHeadersOnly"]
    mac = write(home / "Library/Application Support/Cursor/User/globalStorage/state.vscdb",
                [(f"composerData:{OLD}", old)])
    return [linux, mac]
