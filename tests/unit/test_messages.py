"""normalize_message / normalize_payload over every message shape (own small fixtures)."""

from __future__ import annotations

import pytest

from store import (
    AliasTable,
    InvalidToolCall,
    NotAMessage,
    ServerToolCall,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    UnrecognizedRecord,
    normalize_message,
    normalize_payload,
)


def calls_of(message):
    return [(c.id, c.name, c.input if isinstance(c, ToolCall) else c.error_kind)
            for c in message.tool_calls]


def results_of(message):
    return [(r.call_id, r.content, r.is_error, r.name) for r in message.tool_results]


class TestChatFamily:
    def test_openai_assistant_with_text_and_parallel_calls(self):
        msg = normalize_message({
            "role": "assistant", "content": "I'll search.",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}},
            ],
        })
        assert (msg.role, msg.text, msg.source) == ("assistant", "I'll search.", "openai_chat")
        assert calls_of(msg) == [("a", "f", {}), ("b", "f", {"x": 1})]

    def test_openai_tool_result(self):
        msg = normalize_message({"role": "tool", "tool_call_id": "a", "content": "42"})
        assert msg.role == "tool"
        assert results_of(msg) == [("a", "42", False, None)]

    def test_tool_result_content_parts_are_kept_as_recorded(self):
        content = [{"type": "document", "document": {"data": {"a": 1}}}]
        msg = normalize_message({"role": "tool", "tool_call_id": "c", "content": content})
        assert msg.tool_results[0].content == content

    def test_legacy_function_call_and_function_result(self):
        call = normalize_message({"role": "assistant", "content": None,
                                  "function_call": {"name": "f", "arguments": '{"a": 1}'}})
        assert calls_of(call) == [(None, "f", {"a": 1})]
        assert call.source == "legacy_function_call"
        result = normalize_message({"role": "function", "name": "f", "content": "ok"})
        assert results_of(result) == [(None, "ok", False, "f")]
        assert result.source == "legacy_function_call"

    def test_an_empty_legacy_function_call_beside_real_calls_is_not_a_call(self):
        msg = normalize_message({
            "role": "assistant", "content": "",
            "function_call": {"name": "", "arguments": ""},
            "tool_calls": [{"id": "toolu_bdrk_1", "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                            "custom": {"name": "", "input": ""}}],
        })
        assert calls_of(msg) == [("toolu_bdrk_1", "f", {})]
        assert msg.extras["function_call"] == {"name": "", "arguments": ""}

    def test_cohere_tool_plan_is_kept(self):
        msg = normalize_message({"role": "assistant", "tool_plan": "I will search.",
                                 "tool_calls": [{"id": "s_1", "type": "function",
                                                 "function": {"name": "s", "arguments": "{}"}}]})
        assert msg.source == "cohere" and msg.extras["tool_plan"] == "I will search."

    def test_ollama_native_call_and_result_by_name(self):
        msg = normalize_message({"role": "assistant", "content": "",
                                 "tool_calls": [{"function": {"name": "w",
                                                              "arguments": {"city": "Oslo"}}}]})
        assert calls_of(msg) == [(None, "w", {"city": "Oslo"})]
        result = normalize_message({"role": "tool", "content": "cold", "tool_name": "w"})
        assert results_of(result) == [(None, "cold", False, "w")] and result.source == "ollama"

    def test_user_participant_name_is_not_dropped(self):
        msg = normalize_message({"role": "user", "content": "hi", "name": "alice"})
        assert msg.extras == {"name": "alice"}

    def test_symbol_and_camel_keyed_records(self):
        msg = normalize_message({
            ":role": "assistant",
            ":toolCalls": [{":id": "c", ":function": {":name": "run_shell_command",
                                                      ":arguments": {":command": "ls"}}}],
        })
        assert calls_of(msg) == [("c", "run_shell_command", {"command": "ls"})]
        result = normalize_message({":role": "tool", "toolCallId": "c", ":content": "x",
                                    "displayContent": "shown"})
        assert results_of(result) == [("c", "x", False, None)]
        assert result.tool_results[0].extras["display_content"] == "shown"


class TestTypedBlocks:
    def test_anthropic_thinking_text_and_tool_use(self):
        msg = normalize_message({
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                 "input": {"path": "a"}},
            ],
            "stop_reason": "tool_use",
        })
        assert msg.source == "anthropic" and msg.message_id == "msg_1"
        assert isinstance(msg.parts[0], ThinkingPart) and msg.parts[0].signature == "sig"
        assert msg.text == "Let me check."
        assert calls_of(msg) == [("toolu_1", "read_file", {"path": "a"})]
        assert msg.extras["stop_reason"] == "tool_use"

    def test_anthropic_tool_results_with_error_flag(self):
        msg = normalize_message({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True},
            {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text",
                                                                      "text": "ok"}]},
        ]})
        assert results_of(msg) == [("t1", "boom", True, None),
                                   ("t2", [{"type": "text", "text": "ok"}], False, None)]
        assert msg.tool_results[1].text == "ok"

    def test_server_tool_use_is_recognised_but_not_a_client_call(self):
        msg = normalize_message({"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "advisor", "input": {}},
            {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_1", "content": {}},
        ]})
        assert msg.tool_calls == ()
        assert [type(p) for p in msg.parts][0] is ServerToolCall

    def test_pi_style_tool_call_blocks_and_tool_result_role(self):
        msg = normalize_message({"role": "assistant", "content": [
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}]})
        assert calls_of(msg) == [("c1", "bash", {"command": "ls"})]
        result = normalize_message({"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                                    "content": [{"type": "text", "text": "a"}], "isError": True})
        assert results_of(result) == [("c1", [{"type": "text", "text": "a"}], True, "bash")]

    def test_a_block_without_a_type_is_unrecognised(self):
        with pytest.raises(UnrecognizedRecord, match="without a type"):
            normalize_message({"role": "assistant", "content": [{"foo": 1}]})


class TestResponsesItems:
    def test_function_call_and_output_items(self):
        call = normalize_message({"type": "function_call", "id": "fc_1", "call_id": "call_1",
                                  "name": "f", "arguments": "{}"})
        assert call.role == "assistant" and calls_of(call) == [("call_1", "f", {})]
        out = normalize_message({"type": "function_call_output", "call_id": "call_1",
                                 "output": "done"})
        assert results_of(out) == [("call_1", "done", False, None)]

    def test_message_item_with_input_text(self):
        msg = normalize_message({"type": "message", "role": "user",
                                 "content": [{"type": "input_text", "text": "hi"}]})
        assert (msg.text, msg.source) == ("hi", "openai_responses")

    def test_reasoning_item_is_kept_opaque(self):
        msg = normalize_message({"type": "reasoning", "id": "rs_1", "encrypted_content": "x"})
        assert msg.parts[0].kind == "reasoning" and msg.message_id == "rs_1"


class TestGeminiAndBedrock:
    def test_gemini_parallel_calls_keep_the_signature_on_its_part(self):
        msg = normalize_message({"role": "model", "parts": [
            {"functionCall": {"name": "g", "args": {}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "g", "args": {}}},
        ]})
        assert msg.role == "assistant" and calls_of(msg) == [(None, "g", {}), (None, "g", {})]
        assert [c.extras.get("thought_signature") for c in msg.tool_calls] == ["c2ln", None]

    def test_gemini_function_responses_in_snake_case(self):
        msg = normalize_message({"role": "user", "parts": [
            {"function_response": {"name": "g", "response": {"output": "x"}, "id": "call_1"}}]})
        assert results_of(msg) == [("call_1", {"output": "x"}, False, "g")]

    def test_gemini_text_signature_is_kept_on_the_text_part(self):
        msg = normalize_message({"role": "model", "parts": [{"text": "hi",
                                                             "thoughtSignature": "s"}]})
        part = msg.parts[0]
        assert isinstance(part, TextPart) and part.extras == {"thought_signature": "s"}

    def test_bedrock_tool_use_and_error_result(self):
        call = normalize_message({"role": "assistant", "content": [
            {"text": "<thinking>x</thinking>"},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "f", "input": {"a": 1}}}]})
        assert calls_of(call) == [("tooluse_1", "f", {"a": 1})] and call.source == "bedrock"
        result = normalize_message({"role": "user", "content": [
            {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "bad"}],
                            "status": "error"}}]})
        assert results_of(result) == [("tooluse_1", [{"text": "bad"}], True, None)]


class TestTranscriptLines:
    def test_claude_code_assistant_line(self):
        msg = normalize_message({
            "parentUuid": "p", "isSidechain": True, "sessionId": "s", "type": "assistant",
            "uuid": "u1", "timestamp": "2025-09-03T00:47:19.293Z", "requestId": "r",
            "message": {"id": "msg_1", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                 "input": {"command": "ls"}}]},
        })
        assert (msg.source, msg.message_id) == ("claude_code", "u1")
        assert msg.metadata["is_sidechain"] is True
        assert msg.metadata["provider_message_id"] == "msg_1"
        assert calls_of(msg) == [("toolu_1", "Bash", {"command": "ls"})]

    def test_claude_code_summary_line_is_not_a_message(self):
        with pytest.raises(NotAMessage):
            normalize_message({"type": "summary", "summary": "x", "leafUuid": "u"})

    def test_codex_lines(self):
        msg = normalize_message({"timestamp": "t", "type": "response_item", "payload": {
            "type": "function_call", "name": "shell",
            "arguments": '{"command":["bash","-lc","ls"]}', "call_id": "call_1"}})
        assert msg.source == "codex"
        assert calls_of(msg) == [("call_1", "shell", {"command": ["bash", "-lc", "ls"]})]
        out = normalize_message({"timestamp": "t", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_1",
            "output": '{"output":"a\\n","metadata":{"exit_code":0}}'}})
        assert out.tool_results[0].content == '{"output":"a\\n","metadata":{"exit_code":0}}'
        with pytest.raises(NotAMessage, match="session_meta"):
            normalize_message({"timestamp": "t", "type": "session_meta", "payload": {}})

    def test_kward_records(self):
        msg = normalize_message({"type": "message", "id": "m1", "parentId": None,
                                 "timestamp": "t", "message": {
                                     ":role": "assistant", ":tool_calls": [
                                         {":id": "c", ":function": {":name": "read_file",
                                                                    ":arguments": "{}"}}]}})
        assert (msg.source, msg.message_id) == ("kward", "m1")
        assert calls_of(msg) == [("c", "read_file", {})]
        end = normalize_message({"type": "tool_execution_end", "toolCallId": "c",
                                 "toolName": "read", "args": {"filePath": "a"},
                                 "result": "text", "isError": False})
        assert results_of(end) == [("c", "text", False, "read")]
        with pytest.raises(NotAMessage):
            normalize_message({"type": "session", "version": 2, "id": "s"})


class TestPayloads:
    def test_chat_completion_body(self):
        body = {"choices": [{"message": {"role": "assistant", "content": "x"}}]}
        assert [m.text for m in normalize_payload(body)] == ["x"]

    def test_gemini_candidates_body(self):
        body = {"candidates": [{"content": {"role": "model", "parts": [{"text": "y"}]}}]}
        assert [m.role for m in normalize_payload(body)] == ["assistant"]

    def test_bedrock_output_body(self):
        body = {"output": {"message": {"role": "assistant", "content": [{"text": "z"}]}}}
        assert [m.text for m in normalize_payload(body)] == ["z"]

    def test_request_bodies_and_lists(self):
        body = {"messages": [{"role": "user", "content": "a"},
                             {"role": "assistant", "content": "b"}]}
        assert [m.text for m in normalize_payload(body)] == ["a", "b"]

    def test_an_error_body_is_not_a_message(self):
        with pytest.raises(NotAMessage):
            normalize_payload({"error": {"message": "x"}})


class TestBadMessages:
    @pytest.mark.parametrize(
        ("record", "message"),
        [
            ({"foo": 1}, "not a message: found keys"),
            ({"role": "robot", "content": "x"}, "unknown message role"),
            ({"role": "user", "content": 5}, "content must be text or a list"),
            ({"role": "assistant", "tool_calls": "x"}, "tool_calls must be a list"),
            ([], "must be an object"),
        ],
        ids=["unknown-keys", "unknown-role", "bad-content", "bad-tool-calls", "not-a-mapping"],
    )
    def test_unrecognised_messages_say_what_was_found(self, record, message):
        with pytest.raises(UnrecognizedRecord, match=message):
            normalize_message(record)

    def test_corrupt_arguments_inside_a_message_give_an_invalid_call(self):
        msg = normalize_message({"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}]})
        (call,) = msg.tool_calls
        assert isinstance(call, InvalidToolCall) and call.arguments_text == "{"

    def test_aliases_apply_on_read_only(self):
        raw = normalize_message({"role": "assistant", "tool_calls": [
            {"id": "c", "function": {"name": "shell", "arguments": "{}"}}]})
        assert (raw.tool_calls[0].name, raw.tool_calls[0].raw_name) == ("shell", None)
        msg = AliasTable({"shell": "bash"}).apply_message(raw)
        assert (msg.tool_calls[0].name, msg.tool_calls[0].raw_name) == ("bash", "shell")
        assert isinstance(msg.tool_results, tuple) and ToolResult  # results type exported
