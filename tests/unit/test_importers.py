"""read_sessions / detect_format over every import format (own small fixtures, no database)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from store import ConfigurationError, RecordError, TextPart, ThinkingPart, ToolCall, ToolResult
from store.importers.formats import (
    FORMATS,
    ImportFileError,
    decode_codex_output,
    detect_format,
    path_session_id,
    read_sessions,
)

NEVER = math.inf  # settle: the file is never taken as complete (growth is expected)


def jsonl(path: Path, records, tail: str = "") -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("".join(line + "\n" for line in lines) + tail, encoding="utf-8")
    return path


# -- Claude Code fixtures ------------------------------------------------------------------------


def cc(uuid, parent, kind, message, *, sid="sess-1", side=False, **extra):
    return {"parentUuid": parent, "isSidechain": side, "userType": "external", "cwd": "/w",
            "sessionId": sid, "version": "1.0.98", "gitBranch": "main", "type": kind,
            "message": message, "uuid": uuid, "timestamp": "2025-09-03T00:52:34.495Z", **extra}


def cc_assistant(uuid, parent, msg_id, block, *, stop=None, **kw):
    return cc(uuid, parent, "assistant",
              {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4",
               "content": [block], "stop_reason": stop}, requestId="req_1", **kw)


def cc_result(uuid, parent, call_id, content, **kw):
    return cc(uuid, parent, "user", {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": content}]}, **kw)


def tool_use(call_id, name="Read", **arguments):
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def claude_code_lines():
    """A prompt, a turn split over 3 lines (text + 2 calls), results out of order with a
    sub-agent's sidechain lines between them, a summary and a snapshot line."""
    return [
        {"type": "summary", "summary": "Fix the tests", "leafUuid": "u9"},
        cc("u1", None, "user", {"role": "user", "content": "fix the tests"}),
        cc_assistant("u2", "u1", "msg_A", {"type": "text", "text": "Looking."}),
        cc_assistant("u3", "u2", "msg_A", tool_use("toolu_1", path="a.py")),
        cc_assistant("u4", "u3", "msg_A", tool_use("toolu_2", "Task", prompt="sub")),
        cc_result("u5", "u4", "toolu_1", "print(1)"),
        cc("s1", None, "user", {"role": "user", "content": "sub"}, side=True),
        cc_assistant("s2", "s1", "msg_S", {"type": "text", "text": "sub done"}, side=True,
                     stop="end_turn"),
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
        cc_result("u6", "u5", "toolu_2", [{"type": "text", "text": "done"}]),
        cc_assistant("u9", "u6", "msg_B", {"type": "text", "text": "All green."},
                     stop="end_turn"),
    ]


class TestClaudeCode:
    def test_turns_are_regrouped_and_sidechains_kept_apart(self, tmp_path):
        parsed = read_sessions(jsonl(tmp_path / "s.jsonl", claude_code_lines()), settle=NEVER)
        assert parsed.format == "claude-code" and parsed.problems == []
        main, side = parsed.sessions
        assert (main.session_id, side.session_id) == ("sess-1", "sess-1:sidechain")
        assert main.keys == ["u1", "msg_A", "u5", "u6", "msg_B"]
        assert main.lines == [2, 3, 6, 10, 11]
        turn = main.items[1]
        assert turn.role == "assistant" and turn.message_id == "msg_A"
        assert [type(p) for p in turn.parts] == [TextPart, ToolCall, ToolCall]
        assert [c.id for c in turn.tool_calls] == ["toolu_1", "toolu_2"]
        assert turn.metadata["uuids"] == ["u2", "u3", "u4"]
        assert turn.metadata["lines"] == [3, 4, 5]
        assert side.keys == ["s1", "msg_S"] and side.tags == ("claude-code", "sidechain")
        assert side.metadata["parent_session"] == "sess-1"
        assert main.title == "Fix the tests" and main.provider == "anthropic"
        assert (main.model, main.cwd) == ("claude-sonnet-4", "/w")
        assert parsed.skipped == {"claude-code: summary line": 1,
                                  "claude-code: file-history-snapshot line": 1}

    def test_out_of_order_results_keep_their_call_ids(self, tmp_path):
        lines = claude_code_lines()
        lines[5], lines[9] = lines[9], lines[5]
        main = read_sessions(jsonl(tmp_path / "s.jsonl", lines), settle=NEVER).sessions[0]
        results = [r for m in main.items for r in m.tool_results]
        assert [r.call_id for r in results] == ["toolu_2", "toolu_1"]
        assert results[0].content == [{"type": "text", "text": "done"}]

    def test_a_trailing_turn_is_deferred_until_it_is_complete(self, tmp_path):
        prompt = cc("u1", None, "user", {"role": "user", "content": "go"})
        split = [cc_assistant(f"a{i}", f"a{i - 1}" if i else "u1", "msg_G",
                              tool_use(f"toolu_{i}", path=f"{i}.py")) for i in range(5)]
        path = tmp_path / "grow.jsonl"
        first = read_sessions(jsonl(path, [prompt, *split[:3]]), settle=NEVER)
        assert first.sessions[0].keys == ["u1"]
        assert [d.line for d in first.deferred] == [2, 3, 4]
        assert "held back" in str(first.deferred[0])
        second = read_sessions(jsonl(path, [prompt, *split, cc_result("r", "a4", "toolu_0", "")]),
                               settle=NEVER)
        turn = second.sessions[0].items[1]
        assert second.sessions[0].keys == ["u1", "msg_G", "r"] and second.deferred == []
        assert [c.id for c in turn.tool_calls] == [f"toolu_{i}" for i in range(5)]

    def test_a_trailing_turn_with_a_stop_reason_or_in_a_settled_file_is_complete(self, tmp_path):
        prompt = cc("u1", None, "user", {"role": "user", "content": "go"})
        done = cc_assistant("a1", "u1", "msg_E", {"type": "text", "text": "bye"}, stop="end_turn")
        parsed = read_sessions(jsonl(tmp_path / "a.jsonl", [prompt, done]), settle=NEVER)
        assert parsed.sessions[0].keys == ["u1", "msg_E"]
        open_turn = cc_assistant("a1", "u1", "msg_E", {"type": "text", "text": "bye"})
        parsed = read_sessions(jsonl(tmp_path / "b.jsonl", [prompt, open_turn]), settle=0)
        assert parsed.sessions[0].keys == ["u1", "msg_E"] and parsed.deferred == []

    def test_bad_lines_are_reported_with_their_numbers(self, tmp_path):
        lines = [*claude_code_lines()[:3], "{not json", '"a string"',
                 cc("u7", "u2", "user", {"role": "alien", "content": "?"}),
                 *claude_code_lines()[3:]]
        parsed = read_sessions(jsonl(tmp_path / "s.jsonl", lines), settle=NEVER)
        assert [p.line for p in parsed.problems] == [4, 5, 6]
        assert "not JSON" in parsed.problems[0].message
        assert "unknown message role 'alien'" in parsed.problems[2].message
        assert str(parsed.problems[0]).startswith(f"{tmp_path / 's.jsonl'}:4: ")
        assert parsed.sessions[0].keys == ["u1", "msg_A", "u5", "u6", "msg_B"]

    def test_a_repeated_line_is_not_stored_twice(self, tmp_path):
        lines = claude_code_lines()
        lines.insert(4, lines[3])  # u3 twice inside the turn
        lines.append(lines[5])  # the u5 result again
        main = read_sessions(jsonl(tmp_path / "s.jsonl", lines), settle=0).sessions[0]
        assert len(main.items[1].tool_calls) == 2
        assert main.keys == ["u1", "msg_A", "u5", "u6", "msg_B"]


# -- Codex ---------------------------------------------------------------------------------------


def codex_line(kind, payload, ts="2025-11-17T21:30:28.664Z"):
    return {"timestamp": ts, "type": kind, "payload": payload}


ENVELOPE = json.dumps({"output": "a.txt\nb.txt\n", "metadata": {"exit_code": 0}})


def codex_lines():
    return [
        codex_line("session_meta", {"id": "0199-codex", "cwd": "/repo", "cli_version": "0.58.0",
                                    "model_provider": "openai", "originator": "codex_cli_rs"}),
        codex_line("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": "ls"}]}),
        codex_line("turn_context", {"cwd": "/repo", "model": "gpt-5.1-codex"}),
        codex_line("event_msg", {"type": "token_count"}),
        codex_line("response_item", {"type": "ghost_snapshot", "ghost_commit": {}}),
        codex_line("response_item", {"type": "function_call", "name": "shell",
                                     "arguments": '{"command":["ls"]}', "call_id": "call_1"}),
        codex_line("response_item", {"type": "function_call_output", "call_id": "call_1",
                                     "output": ENVELOPE}),
        codex_line("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                                     "call_id": "call_2", "input": "*** Begin Patch\n"}),
        codex_line("response_item", {"type": "custom_tool_call_output", "call_id": "call_2",
                                     "output": "Exit code: 0\nWall time: 0.1s"}),
    ]


class TestCodex:
    def test_rollout(self, tmp_path):
        parsed = read_sessions(jsonl(tmp_path / "rollout.jsonl", codex_lines()), settle=NEVER)
        assert parsed.format == "codex" and parsed.problems == []
        (session,) = parsed.sessions
        assert session.session_id == "0199-codex"
        assert (session.provider, session.model, session.cwd) == ("openai", "gpt-5.1-codex",
                                                                  "/repo")
        assert session.metadata["cli_version"] == "0.58.0"
        assert session.keys == [f"0199-codex:{n}" for n in (2, 6, 7, 8, 9)]
        assert [m.role for m in session.items] == ["user", "assistant", "tool", "assistant",
                                                   "tool"]
        assert session.items[1].metadata["model"] == "gpt-5.1-codex"
        assert parsed.skipped == {"codex: session_meta": 1, "codex: turn_context": 1,
                                  "codex: event_msg": 1, "codex: response_item ghost_snapshot": 1}

    def test_double_encoded_outputs_are_kept_verbatim_and_decoded_for_display(self, tmp_path):
        session = read_sessions(jsonl(tmp_path / "r.jsonl", codex_lines())).sessions[0]
        (result,) = session.items[2].tool_results
        assert result.content == ENVELOPE
        assert decode_codex_output(result.content) == "a.txt\nb.txt\n"
        (plain,) = session.items[4].tool_results
        assert decode_codex_output(plain.content) == plain.content  # no envelope: unchanged
        assert decode_codex_output('{"output": 1}') == '{"output": 1}'
        assert decode_codex_output('{"output": "x", "other": 1}') == '{"output": "x", "other": 1}'
        assert decode_codex_output("{broken") == "{broken"

    def test_custom_tool_calls_keep_their_raw_input(self, tmp_path):
        session = read_sessions(jsonl(tmp_path / "r.jsonl", codex_lines())).sessions[0]
        (call,) = session.items[3].tool_calls
        assert (call.id, call.name) == ("call_2", "apply_patch")
        assert "*** Begin Patch" in json.dumps(call.to_wire())

    def test_old_rollouts_without_envelopes(self, tmp_path):
        lines = [{"id": "old-1", "timestamp": "2025-05-01T00:00:00Z", "instructions": None},
                 {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                  "text": "hi"}]},
                 {"record_type": "state"},
                 {"type": "function_call", "name": "shell", "arguments": "{}",
                  "call_id": "c1"},
                 {"type": "function_call_output", "call_id": "c1", "output": "ok"}]
        parsed = read_sessions(jsonl(tmp_path / "old.jsonl", lines), format="codex")
        (session,) = parsed.sessions
        assert session.session_id == "old-1"
        assert session.keys == ["old-1:2", "old-1:4", "old-1:5"]
        assert {m.source for m in session.items} == {"codex"}
        assert parsed.skipped == {"codex: session header": 1, "codex: state record": 1}


# -- Gemini CLI ----------------------------------------------------------------------------------


def gemini_chat(extra_messages=()):
    return {
        "sessionId": "gem-1", "projectHash": "abc", "startTime": "2025-10-01T10:00:00Z",
        "lastUpdated": "2025-10-01T10:05:00Z",
        "messages": [
            {"id": "m1", "timestamp": "2025-10-01T10:00:00Z", "type": "user",
             "content": "read the config"},
            {"id": "m2", "timestamp": "2025-10-01T10:00:02Z", "type": "gemini",
             "content": "Reading it.", "model": "gemini-2.5-pro",
             "thoughts": [{"subject": "Plan", "description": "read both",
                           "timestamp": "2025-10-01T10:00:01Z"}],
             "toolCalls": [
                 {"id": "read_file-1", "name": "read_file", "args": {"path": "a.toml"},
                  "result": [{"functionResponse": {"id": "read_file-1", "name": "read_file",
                                                   "response": {"output": "x = 1"}}}],
                  "status": "success", "displayName": "ReadFile", "resultDisplay": "1 line"},
                 {"id": "read_file-2", "name": "read_file", "args": {"path": "missing.toml"},
                  "result": [{"functionResponse": {"id": "read_file-2", "name": "read_file",
                                                   "response": {"error": "not found"}}}],
                  "status": "error"}]},
            {"id": "m3", "timestamp": "2025-10-01T10:00:03Z", "type": "info",
             "content": "Request cancelled."},
            *extra_messages,
            {"id": "m4", "timestamp": "2025-10-01T10:00:04Z", "type": "gemini",
             "content": "One file is missing."},
        ],
    }


class TestGeminiCli:
    def test_calls_and_results(self, tmp_path):
        path = tmp_path / "session-1.json"
        path.write_text(json.dumps(gemini_chat()), encoding="utf-8")
        parsed = read_sessions(path, settle=0)
        assert parsed.format == "gemini-cli" and parsed.problems == []
        (session,) = parsed.sessions
        assert session.session_id == "gem-1" and session.model == "gemini-2.5-pro"
        assert session.keys == ["m1", "m2", "m2:results", "m4"]
        assert session.item_indexes == [0, 1, 1, 3]
        user, assistant, results, last = session.items
        assert [type(p) for p in assistant.parts] == [ThinkingPart, TextPart, ToolCall, ToolCall]
        assert [c.input for c in assistant.tool_calls] == [{"path": "a.toml"},
                                                           {"path": "missing.toml"}]
        ok, failed = results.tool_results
        assert (ok.call_id, ok.content, ok.is_error) == ("read_file-1", {"output": "x = 1"},
                                                         False)
        assert (failed.call_id, failed.is_error) == ("read_file-2", True)
        assert "result" not in assistant.tool_calls[0].extras
        assert parsed.skipped == {"gemini-cli: info message": 1}

    def test_the_last_message_waits_while_the_chat_may_grow(self, tmp_path):
        path = tmp_path / "session-1.json"
        path.write_text(json.dumps(gemini_chat()), encoding="utf-8")
        parsed = read_sessions(path, settle=NEVER)
        assert parsed.sessions[0].keys == ["m1", "m2", "m2:results"]
        assert [d.item for d in parsed.deferred] == [3]

    def test_an_unknown_message_type_is_a_problem_with_its_index(self, tmp_path):
        path = tmp_path / "session-1.json"
        path.write_text(json.dumps(gemini_chat([{"id": "x", "type": "alien"}])),
                        encoding="utf-8")
        parsed = read_sessions(path, settle=0)
        assert [(p.item, p.line) for p in parsed.problems] == [(3, None)]
        assert "item 3" in str(parsed.problems[0])
        assert parsed.sessions[0].keys[-1] == "m4"


# -- Kward ---------------------------------------------------------------------------------------


def kward_lines():
    return [
        {"type": "session", "version": 2, "id": "kw-1", "timestamp": "2025-06-01T10:00:00Z",
         "cwd": "/home/dev", "provider": "openai", "model": "gpt-4o"},
        {":type": "message", ":id": "m1", ":parentId": None,
         ":message": {":role": "user", ":content": "run the tests"}},
        {":type": "message", ":id": "m2", ":parentId": "m1", ":message": {
            ":role": "assistant", ":content": "", ":tool_calls": [{
                ":id": "call_k1", ":type": "function", ":function": {
                    ":name": "run_shell_command", ":arguments": {":command": "pytest"}}}]}},
        "not json at all",
        {"type": "tool_execution_end", "id": "m3", "toolCallId": "call_k1", "toolName": "bash",
         "args": {"command": "pytest"}, "result": "1 failed", "isError": True},
        {"type": "leaf", "id": "l1", "targetId": "m3"},
        {"type": "label", "id": "l2", "targetId": "m3", "label": "x"},
        {"type": "compaction", "id": "m4", "parentId": "m3", "summary": "tests were run"},
        {"type": "message", "parentId": "m4", "message": {"role": "assistant",
                                                          "content": "Fixed."}},
    ]


class TestKward:
    def test_session_records_in_any_key_spelling(self, tmp_path):
        parsed = read_sessions(jsonl(tmp_path / "kw.jsonl", kward_lines()))
        assert parsed.format == "kward"
        (session,) = parsed.sessions
        assert (session.session_id, session.provider, session.model, session.cwd) == (
            "kw-1", "openai", "gpt-4o", "/home/dev")
        assert session.keys == ["m1", "m2", "m3", "m4", "kw-1:9"]
        (call,) = session.items[1].tool_calls
        assert (call.id, call.name, call.input) == ("call_k1", "run_shell_command",
                                                    {"command": "pytest"})
        (result,) = session.items[2].tool_results
        assert (result.call_id, result.is_error) == ("call_k1", True)
        assert [(p.line, p.message[:8]) for p in parsed.problems] == [(4, "not JSON")]
        assert parsed.skipped == {"kward: session header": 1, "kward: leaf record": 1,
                                  "kward: label record": 1}

    def test_a_reused_record_id_is_reported_not_dropped(self, tmp_path):
        lines = kward_lines()
        lines.append({"type": "message", "id": "m1", "message": {"role": "user",
                                                                 "content": "other"}})
        lines.append(lines[1])  # the very same record again: a duplicate
        parsed = read_sessions(jsonl(tmp_path / "kw.jsonl", lines))
        session = parsed.sessions[0]
        assert session.keys[-1] == "m1@line10"
        assert [p.line for p in parsed.problems] == [4, 10]
        assert parsed.skipped["kward: duplicate record"] == 1


# -- plain message lists -------------------------------------------------------------------------


CHAT = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "weather?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
]


class TestPlainLists:
    def test_openai_chat_json_array(self, tmp_path):
        path = tmp_path / "chat.json"
        path.write_text(json.dumps(CHAT), encoding="utf-8")
        parsed = read_sessions(path)
        assert parsed.format == "openai-chat"
        (session,) = parsed.sessions
        sid = path_session_id(path)
        assert session.session_id == sid and sid.startswith("file:") and len(sid) == 21
        assert session.keys == [f"{sid}:{i}" for i in range(4)]
        assert not session.items[2].tool_calls[0].is_valid  # kept, flagged invalid
        assert read_sessions(path).sessions[0].session_id == sid  # stable

    def test_openai_chat_jsonl_with_bad_lines(self, tmp_path):
        lines = [json.dumps(CHAT[1]), "", "{oops", json.dumps({"role": 3}), json.dumps(CHAT[3])]
        path = tmp_path / "chat.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        parsed = read_sessions(path)
        sid = path_session_id(path)
        assert parsed.sessions[0].keys == [f"{sid}:1", f"{sid}:5"]
        assert [p.line for p in parsed.problems] == [3, 4]

    def test_responses_input_object(self, tmp_path):
        path = tmp_path / "resp.json"
        path.write_text(json.dumps({"instructions": "be brief", "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                             "text": "grep"}]},
            {"type": "function_call", "call_id": "c1", "name": "grep", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "none"}]}),
            encoding="utf-8")
        parsed = read_sessions(path)
        assert parsed.format == "openai-responses"
        session = parsed.sessions[0]
        assert [m.role for m in session.items] == ["system", "user", "assistant", "tool"]
        assert session.keys[0].endswith(":system")

    def test_anthropic_request_with_system(self, tmp_path):
        path = tmp_path / "anthropic.json"
        path.write_text(json.dumps({"model": "claude-x", "system": "be brief", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [tool_use("toolu_1", "lookup", q="a")]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                          "content": "b", "is_error": True}]}]}),
            encoding="utf-8")
        parsed = read_sessions(path)
        assert parsed.format == "anthropic"
        session = parsed.sessions[0]
        assert (session.provider, session.model) == ("anthropic", "claude-x")
        assert [m.role for m in session.items] == ["system", "user", "assistant", "user"]
        assert session.items[3].tool_results[0].is_error

    def test_a_bad_item_in_a_json_list_is_reported_by_index(self, tmp_path):
        path = tmp_path / "chat.json"
        path.write_text(json.dumps([CHAT[1], {"role": "alien"}, 7, CHAT[3]]), encoding="utf-8")
        parsed = read_sessions(path, format="openai-chat")
        assert [p.item for p in parsed.problems] == [1, 2]
        assert len(parsed.sessions[0].items) == 2


# -- detection and bad files ---------------------------------------------------------------------


class TestDetectionAndFiles:
    def test_formats(self):
        """Every name ``--format`` took before the registry, each once (the plain lists
        first, then the registry's agents)."""
        assert FORMATS[:3] == ("openai-chat", "openai-responses", "anthropic")
        assert len(FORMATS) == len(set(FORMATS))
        assert set(FORMATS) >= {"openai-chat", "openai-responses", "anthropic", "claude-code",
                                "codex", "gemini-cli", "kward", "cline", "roo-code",
                                "openhands", "transcript-store", "qwen-code", "kimi-cli",
                                "copilot-cli", "crush", "opencode", "goose"}

    @pytest.mark.parametrize(("records", "expected"), [
        (claude_code_lines()[:2], "claude-code"),
        (codex_lines()[:1], "codex"),
        ([gemini_chat()], "gemini-cli"),
        (kward_lines()[1:2], "kward"),
        ([CHAT], "openai-chat"),
        ([{"input": []}], "openai-responses"),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}],
         "openai-responses"),
        ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}],
         "anthropic"),
    ])
    def test_detect_format(self, records, expected):
        assert detect_format(Path("x.jsonl"), records) == expected

    def test_an_undetectable_file_is_a_file_error(self, tmp_path):
        path = tmp_path / "package.json"
        path.write_text('{"name": "x", "version": "1.0.0"}', encoding="utf-8")
        with pytest.raises(ImportFileError, match="cannot tell the format"):
            read_sessions(path)

    def test_unknown_format_name(self, tmp_path):
        with pytest.raises(ConfigurationError, match="unknown import format 'yaml'"):
            read_sessions(tmp_path / "x.json", format="yaml")

    def test_unreadable_files(self, tmp_path):
        bad = tmp_path / "latin1.jsonl"
        bad.write_bytes(b'{"role": "user", "content": "caf\xe9"}\n')
        with pytest.raises(ImportFileError, match="not UTF-8") as caught:
            read_sessions(bad)
        assert isinstance(caught.value, RecordError) and caught.value.path == bad
        with pytest.raises(ImportFileError, match="is a directory"):
            read_sessions(tmp_path)
        with pytest.raises(ImportFileError, match="cannot open"):
            read_sessions(tmp_path / "missing.json")
        fifo = tmp_path / "pipe.jsonl"
        os.mkfifo(fifo)
        with pytest.raises(ImportFileError, match="not a regular file"):
            read_sessions(fifo)

    def test_an_empty_file_has_nothing(self, tmp_path):
        path = tmp_path / "empty.jsonl"
        path.write_text("\n", encoding="utf-8")
        assert read_sessions(path).sessions == []

    def test_a_last_line_being_written_is_deferred_until_settled(self, tmp_path):
        path = jsonl(tmp_path / "k.jsonl", kward_lines()[:2], tail='{"type": "mess')
        growing = read_sessions(path, settle=NEVER)
        assert [d.line for d in growing.deferred] == [3] and growing.problems == []
        settled = read_sessions(path, settle=0)
        assert [p.line for p in settled.problems] == [3] and settled.deferred == []

    def test_a_line_separator_inside_a_string_is_not_a_line_break(self, tmp_path):
        path = tmp_path / "chat.jsonl"
        path.write_text(json.dumps({"role": "user", "content": "a\u2028b"}, ensure_ascii=False)
                        + "\r\n", encoding="utf-8")
        (message,) = read_sessions(path).sessions[0].items
        assert message.text == "a\u2028b"


def test_results_are_tool_results(tmp_path):
    session = read_sessions(jsonl(tmp_path / "r.jsonl", codex_lines())).sessions[0]
    assert all(isinstance(p, ToolResult) for p in session.items[2].parts)


def test_a_gemini_chat_ending_with_the_users_message_defers_nothing(tmp_path):
    chat = gemini_chat()
    chat["messages"].append({"id": "m5", "type": "user", "content": "thanks"})
    path = tmp_path / "session-2.json"
    path.write_text(json.dumps(chat), encoding="utf-8")
    parsed = read_sessions(path, settle=NEVER)
    assert parsed.deferred == [] and parsed.sessions[0].keys[-2:] == ["m4", "m5"]
