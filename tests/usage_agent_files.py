"""Small agent files with token usage, written for these tests from each agent's format
(Claude Code project JSONL, Codex rollout, Gemini CLI chat), never copied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

SONNET = "claude-sonnet-4-20250514"


def _usage(inp: int, out: int, create: int, read: int) -> dict[str, Any]:
    return {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": create,
            "cache_read_input_tokens": read, "service_tier": "standard"}


def claude_lines(session: str, day: str, *, model: str = SONNET,
                 prefix: str = "m") -> list[dict[str, Any]]:
    """A user prompt, then one response written as three lines (thinking, text, tool_use: one
    message id and request id, the output count growing), its result, and a one-line reply."""
    base = {"sessionId": session, "cwd": "/work/demo", "version": "1.0.98",
            "userType": "external", "isSidechain": False}
    block = [{"type": "thinking", "thinking": "look", "signature": "sig"},
             {"type": "text", "text": "Listing."},
             {"type": "tool_use", "id": f"toolu_{prefix}1", "name": "Bash",
              "input": {"command": "ls -la"}}]
    lines: list[dict[str, Any]] = [{**base, "type": "user", "uuid": f"{prefix}-u1",
                                    "timestamp": f"{day}T10:00:00.000Z",
                                    "message": {"role": "user", "content": "list files"}}]
    for i, (content, out) in enumerate(zip(block, (3, 9, 120), strict=True)):
        lines.append({**base, "type": "assistant", "uuid": f"{prefix}-a{i}",
                      "requestId": f"req_{prefix}1", "timestamp": f"{day}T10:00:0{i + 1}.000Z",
                      "message": {"id": f"msg_{prefix}1", "type": "message", "role": "assistant",
                                  "model": model, "content": [content],
                                  "stop_reason": "tool_use" if i == 2 else None,
                                  "usage": _usage(4, out, 1500, 12000)}})
    lines.append({**base, "type": "user", "uuid": f"{prefix}-u2",
                  "timestamp": f"{day}T10:00:05.000Z",
                  "message": {"role": "user", "content": [
                      {"type": "tool_result", "tool_use_id": f"toolu_{prefix}1",
                       "content": "total 8\n" + "-rw-r--r-- 1 me me 10 a.txt\n" * 20}]}})
    lines.append({**base, "type": "assistant", "uuid": f"{prefix}-a9",
                  "requestId": f"req_{prefix}2", "timestamp": f"{day}T10:00:07.000Z",
                  "message": {"id": f"msg_{prefix}2", "type": "message", "role": "assistant",
                              "model": model, "content": [{"type": "text", "text": "Done."}],
                              "stop_reason": "end_turn", "usage": _usage(7, 41, 300, 13500)}})
    return lines


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def codex_lines(session: str = "0199aaaa-0000-7000-8000-00000000c0de") -> list[dict[str, Any]]:
    """A rollout: meta, turn context, a user message, a shell call, two token_count events
    (the second a repeat of the first's totals), its output, a reply, a third event."""
    def event(total: dict[str, int], last: dict[str, int], at: str) -> dict[str, Any]:
        return {"timestamp": at, "type": "event_msg", "payload": {
            "type": "token_count", "info": {"total_token_usage": total,
                                            "last_token_usage": last,
                                            "model_context_window": 258400}}}

    first = {"input_tokens": 9000, "cached_input_tokens": 8000, "output_tokens": 60,
             "reasoning_output_tokens": 20, "total_tokens": 9060}
    second = {"input_tokens": 9500, "cached_input_tokens": 9000, "output_tokens": 30,
              "reasoning_output_tokens": 0, "total_tokens": 9530}
    total2 = {k: first[k] + second[k] for k in first}
    return [
        {"timestamp": "2025-11-17T21:00:00.000Z", "type": "session_meta",
         "payload": {"id": session, "cwd": "/work/codex", "model_provider": "openai",
                     "cli_version": "0.58.0"}},
        {"timestamp": "2025-11-17T21:00:00.100Z", "type": "turn_context",
         "payload": {"model": "gpt-5.1-codex", "cwd": "/work/codex"}},
        {"timestamp": "2025-11-17T21:00:01.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "run the tests"}]}},
        {"timestamp": "2025-11-17T21:00:02.000Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "call_id": "call_1",
                     "arguments": "{\"command\":[\"pytest\",\"-q\"]}"}},
        event(first, first, "2025-11-17T21:00:02.500Z"),
        event(first, first, "2025-11-17T21:00:02.600Z"),
        {"timestamp": "2025-11-17T21:00:03.000Z", "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "call_1",
                     "output": "{\"output\":\"3 passed\",\"metadata\":{\"exit_code\":0}}"}},
        {"timestamp": "2025-11-17T21:00:04.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "All pass."}]}},
        event(total2, second, "2025-11-17T21:00:04.500Z"),
    ]


def gemini_chat(session: str = "9a7e0000-0000-4000-8000-0000000000ge") -> dict[str, Any]:
    """A legacy Gemini CLI chat document: a prompt and a model reply with tokens."""
    return {"sessionId": session, "projectHash": "abc", "startTime": "2025-10-01T08:00:00.000Z",
            "lastUpdated": "2025-10-01T08:00:05.000Z", "messages": [
                {"id": "g1", "timestamp": "2025-10-01T08:00:00.000Z", "type": "user",
                 "content": "hello"},
                {"id": "g2", "timestamp": "2025-10-01T08:00:03.000Z", "type": "gemini",
                 "content": "Hi.", "model": "gemini-2.5-pro",
                 "tokens": {"input": 5000, "output": 40, "cached": 3000, "thoughts": 100,
                            "tool": 10, "total": 5150}}]}
