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


# -- Kimi CLI ----------------------------------------------------------------------------------


def wire(stamp: float, kind: str, **payload: object) -> dict[str, object]:
    return {"timestamp": stamp, "message": {"type": kind, "payload": payload}}


HEADER = {"type": "metadata", "protocol_version": "1.10"}


class TestKimiCli:
    def test_wire_and_context_lines_are_told_apart_from_chat_messages(self):
        assert detect_format(Path("wire.jsonl"), [HEADER]) == "kimi-cli"
        assert detect_format(Path("wire.jsonl"), [wire(1.0, "TurnBegin", user_input="hi")]) \
            == "kimi-cli"
        assert detect_format(Path("context.jsonl"), [
            {"role": "user", "content": "hi"}, {"role": "_checkpoint", "id": 0}]) == "kimi-cli"
        assert detect_format(Path("c.jsonl"), [{"role": "user", "content": "hi"}]) == \
            "openai-chat"

    def test_a_step_still_streaming_waits_until_the_file_settles(self, tmp_path):
        path = jsonl(tmp_path / "sessions" / "h" / "k1" / "wire.jsonl", [
            HEADER, wire(1.0, "TurnBegin", user_input="go"), wire(2.0, "StepBegin", n=1),
            wire(3.0, "ContentPart", type="text", text="Working")])

        young = read_sessions(path, settle=float("inf"))
        assert [len(s.items) for s in young.sessions] == [1]
        assert [d.line for d in young.deferred] == [4]
        settled = read_sessions(path, settle=0)
        assert [m.role for m in settled.sessions[0].items] == ["user", "assistant"]
        assert settled.sessions[0].usage == {}  # no StatusUpdate: no usage made up

    def test_a_context_file_is_read_only_when_no_wire_sits_beside_it(self, tmp_path):
        lines = [{"role": "_system_prompt", "content": "sys"}, {"role": "_checkpoint", "id": 0},
                 {"role": "user", "content": "hello"},
                 {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
                 {"role": "_usage", "token_count": 12}]
        alone = read_sessions(jsonl(tmp_path / "a" / "s-old" / "context.jsonl", lines),
                              settle=0)
        assert [(s.session_id, [m.role for m in s.items]) for s in alone.sessions] == [
            ("s-old", ["user", "assistant"])]
        jsonl(tmp_path / "b" / "s-new" / "wire.jsonl", [HEADER])
        beside = read_sessions(jsonl(tmp_path / "b" / "s-new" / "context.jsonl", lines),
                               settle=0)
        assert beside.sessions == [] and beside.problems == []

    def test_the_walk_leaves_a_session_folders_state_and_meta_files_out(self, tmp_path):
        from store.importers.walk import iter_import_files

        folder = tmp_path / "sessions" / "h" / "s1"
        jsonl(folder / "wire.jsonl", [HEADER])
        (folder / "state.json").write_text("{}")
        jsonl(folder / "subagents" / "a1" / "wire.jsonl", [HEADER])
        (folder / "subagents" / "a1" / "meta.json").write_text("{}")
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "state.json").write_text("[]")

        found = sorted(p.relative_to(tmp_path).as_posix()
                       for p in iter_import_files([tmp_path]) if isinstance(p, Path))
        assert found == ["elsewhere/state.json", "sessions/h/s1/subagents/a1/wire.jsonl",
                         "sessions/h/s1/wire.jsonl"]

    def test_usage_takes_the_four_counts_as_they_are(self):
        from store.usage.tokens import kimi_cli_usage

        assert kimi_cli_usage({"input_other": 5, "output": 7, "input_cache_read": 100,
                               "input_cache_creation": 3}, model="k2") == TokenUsage(
            5, 7, 3, 100, 0, "k2")
        assert kimi_cli_usage({"input_other": 0, "output": 0}) is None

    def test_its_folder_moves_with_kimi_share_dir(self, tmp_path):
        home = tmp_path / "home"
        (home / ".kimi" / "sessions").mkdir(parents=True)
        moved = tmp_path / "share"
        (moved / "sessions").mkdir(parents=True)

        assert agent_folders(home, {}) == [("kimi-cli", home / ".kimi" / "sessions")]
        assert agent_folders(home, {"KIMI_SHARE_DIR": str(moved)}) == [
            ("kimi-cli", moved / "sessions")]


# -- GitHub Copilot CLI -----------------------------------------------------------------------


def event(n: int, kind: str, data: dict[str, object], **envelope: object) -> dict[str, object]:
    return {"type": kind, "data": data, "id": f"e{n}", "timestamp":
            f"2025-09-19T10:00:{n:02d}.000Z", "parentId": f"e{n - 1}" if n else None,
            **envelope}


class TestCopilotCli:
    def test_events_are_told_apart_from_other_envelopes(self):
        start = event(0, "session.start", {"sessionId": "s", "copilotVersion": "0.0.330"})

        assert detect_format(Path("events.jsonl"), [start]) == "copilot-cli"
        assert detect_format(Path("events.jsonl"), [
            event(1, "user.message", {"content": "hi"})]) == "copilot-cli"

    def test_a_tool_the_user_ran_gets_its_call_and_legacy_subagents_their_parent_call(
            self, tmp_path):
        records = [
            event(1, "user.message", {"content": "hi"}),
            event(2, "tool.execution_start", {"toolCallId": "u1", "toolName": "bash",
                                              "arguments": {"command": "ls"}}),
            event(3, "tool.execution_complete", {"toolCallId": "u1", "success": True,
                                                 "result": {"content": "a.txt"}}),
            event(4, "assistant.message", {"messageId": "m", "content": "sub",
                                           "parentToolCallId": "toolu_t",
                                           "toolRequests": []}),
            {"type": "user.message", "data": "not an object", "id": "bad"},
        ]
        parsed = read_sessions(jsonl(tmp_path / "s" / "events.jsonl", records), settle=0)

        main, sub = parsed.sessions
        assert (main.session_id, [m.role for m in main.items]) == ("s", ["user", "assistant",
                                                                         "tool"])
        assert main.items[1].tool_calls[0].name == "bash"
        assert main.items[2].tool_results[0].call_id == "u1"
        assert sub.session_id == "s:agent-toolu_t"
        assert sub.metadata["parent_call_id"] == "toolu_t"
        assert [p.line for p in parsed.problems] == [5]

    def test_its_folders_move_with_copilot_home(self, tmp_path):
        home = tmp_path / "home"
        (home / ".copilot" / "session-state").mkdir(parents=True)
        moved = tmp_path / "copilot"
        (moved / "session-state").mkdir(parents=True)
        (moved / "history-session-state").mkdir(parents=True)

        assert agent_folders(home, {}) == [("copilot-cli", home / ".copilot" / "session-state")]
        assert agent_folders(home, {"COPILOT_HOME": str(moved)}) == [
            ("copilot-cli", moved / "session-state"),
            ("copilot-cli", moved / "history-session-state")]
