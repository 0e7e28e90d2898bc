"""The readers of Qwen Code, Kimi CLI and GitHub Copilot CLI without a database: detection
beside the formats they resemble, their folders, their token counts (own small records)."""

from __future__ import annotations

import json
from pathlib import Path

from store import agent_folders
from store.importers.formats import detect_format, read_sessions
from store.usage.tokens import TokenUsage, qwen_code_usage


def jsonl(path: Path, records: list[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                            for r in records), encoding="utf-8")
    return path


# -- Qwen Code ---------------------------------------------------------------------------------


def qwen(uuid: str, kind: str, **fields: object) -> dict[str, object]:
    return {"uuid": uuid, "parentUuid": None, "sessionId": "qs", "timestamp":
            "2025-09-18T09:00:00.000Z", "type": kind, "cwd": "/w", "version": "0.0.14",
            **fields}


class TestQwenCode:
    def test_a_file_opening_with_a_system_record_is_qwen_not_claude_code(self, tmp_path):
        title = qwen("s1", "system", subtype="custom_title",
                     systemPayload={"customTitle": "Mine"})
        user = qwen("u1", "user", message={"role": "user", "parts": [{"text": "hello"}]})
        claude = {"type": "user", "uuid": "c1", "parentUuid": None, "sessionId": "cs",
                  "message": {"role": "user", "content": "hi"}}

        assert detect_format(Path("x.jsonl"), [title, user]) == "qwen-code"
        assert detect_format(Path("x.jsonl"), [user]) == "qwen-code"
        assert detect_format(Path("x.jsonl"), [claude]) == "claude-code"
        parsed = read_sessions(jsonl(tmp_path / "qs.jsonl", [title, user]), settle=0)
        assert [(s.session_id, s.title, s.agent) for s in parsed.sessions] == [
            ("qs", "Mine", "qwen-code")]

    def test_notifications_do_not_title_a_session_and_results_without_status_use_the_response(
            self, tmp_path):
        records = [
            qwen("n1", "user", subtype="notification",
                 message={"role": "user", "parts": [{"text": "Background task done"}]}),
            qwen("u1", "user", message={"role": "user", "parts": [{"text": "Run it"}]}),
            qwen("a1", "assistant", model="qwen3-coder", message={"role": "model", "parts": [
                {"functionCall": {"id": "c1", "name": "run_shell_command",
                                  "args": {"command": "false"}}}]}),
            qwen("t1", "tool_result", message={"role": "user", "parts": [{"functionResponse": {
                "id": "c1", "name": "run_shell_command", "response": {"error": "exit 1"}}}]}),
            qwen("x1", "mystery"),
        ]
        parsed = read_sessions(jsonl(tmp_path / "qs.jsonl", records), settle=0)

        session = parsed.sessions[0]
        assert session.title == "Run it"
        assert session.items[0].metadata["qwen_subtype"] == "notification"
        assert session.items[-1].tool_results[0].is_error
        assert [p.line for p in parsed.problems] == [5]

    def test_usage_reads_the_api_names_and_the_early_short_names_alike(self):
        api = qwen_code_usage({"promptTokenCount": 100, "candidatesTokenCount": 10,
                               "cachedContentTokenCount": 60, "thoughtsTokenCount": 5,
                               "totalTokenCount": 115}, model="m")
        short = qwen_code_usage({"input": 100, "output": 10, "cached": 60, "thoughts": 5,
                                 "tool": 0, "total": 115}, model="m")

        assert api == short == TokenUsage(40, 15, 0, 60, 5, "m")
        assert qwen_code_usage({"totalTokenCount": 0}) is None
        assert qwen_code_usage("nope") is None

    def test_its_folders_move_with_qwen_runtime_dir(self, tmp_path):
        home = tmp_path / "home"
        (home / ".qwen" / "projects" / "-w" / "chats").mkdir(parents=True)
        (home / ".qwen" / "tmp" / "ab12" / "chats").mkdir(parents=True)
        moved = tmp_path / "runtime"
        (moved / "projects" / "-x" / "chats").mkdir(parents=True)

        assert agent_folders(home, {}) == [
            ("qwen-code", home / ".qwen" / "projects" / "-w" / "chats"),
            ("qwen-code", home / ".qwen" / "tmp" / "ab12" / "chats")]
        assert agent_folders(home, {"QWEN_RUNTIME_DIR": str(moved)}) == [
            ("qwen-code", moved / "projects" / "-x" / "chats")]
