"""The provider validators of tests/provider_rules.py can fail: each rule on a broken history."""

from __future__ import annotations

import copy

import pytest
from provider_rules import (
    validate,
    validate_anthropic,
    validate_bedrock,
    validate_gemini,
    validate_openai_chat,
    validate_openai_responses,
)


def broken(body, edit):
    body = copy.deepcopy(body)
    edit(body)
    return body


def chat_call(call_id, name="f"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


CHAT = {"messages": [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u"},
    {"role": "assistant", "content": None, "tool_calls": [chat_call("a"), chat_call("b")]},
    {"role": "tool", "tool_call_id": "b", "content": "B"},
    {"role": "tool", "tool_call_id": "a", "content": "A"},
    {"role": "assistant", "content": "done"},
]}


class TestOpenAIChat:
    def test_valid(self):
        assert validate_openai_chat(CHAT) == []

    @pytest.mark.parametrize(("edit", "needle"), [
        (lambda b: b["messages"].pop(3), "not answered"),
        (lambda b: b["messages"].insert(3, {"role": "user", "content": "x"}), "not answered"),
        (lambda b: b["messages"].append({"role": "tool", "tool_call_id": "a", "content": "A"}),
         "must follow"),
        (lambda b: b["messages"][4].update(tool_call_id="b"), "answers no open call"),
        (lambda b: b["messages"][2]["tool_calls"][0].update(id=""), "non-empty"),
        (lambda b: b["messages"][2]["tool_calls"][0].update(id="x" * 41), "40 characters"),
        (lambda b: b["messages"][2]["tool_calls"][1].update(id="a"), "repeats"),
        (lambda b: b["messages"][2]["tool_calls"][0]["function"].update(arguments={}),
         "must be a string"),
        (lambda b: b["messages"][5].update(content=None), "needs content"),
        (lambda b: b["messages"][1].update(role="human"), "unknown role"),
        (lambda b: b["messages"][4].update(content=["A"]), "content must be a string"),
        (lambda b: del_after(b["messages"], 3), "never answered"),
    ])
    def test_broken(self, edit, needle):
        problems = validate_openai_chat(broken(CHAT, edit))
        assert any(needle in p for p in problems), problems


def del_after(items, n):
    del items[n:]


RESPONSES = {"input": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "u"}]},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
    {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c2", "output": "2"},
    {"type": "function_call_output", "call_id": "c1", "output": "1"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
]}


class TestOpenAIResponses:
    def test_valid(self):
        assert validate_openai_responses(RESPONSES) == []

    @pytest.mark.parametrize(("edit", "needle"), [
        (lambda b: b["input"].pop(4), "has no output"),
        (lambda b: b["input"].append(dict(b["input"][4])), "answers no open"),
        (lambda b: b["input"].insert(2, b["input"].pop(5)), "answers no open"),
        (lambda b: b["input"][3].update(call_id="c1"), "used by an earlier call"),
        (lambda b: b["input"][2].update(call_id=""), "non-empty"),
        (lambda b: b["input"][2].update(arguments={"a": 1}), "must be a string"),
        (lambda b: b["input"][4].update(output=None), "output must be a string"),
        (lambda b: b["input"][0]["content"][0].update(type="output_text"), "input_text"),
        (lambda b: b["input"].insert(0, {"type": "reasoning", "id": "rs_0"}), "followed by"),
        (lambda b: b["input"].append({"type": "tool_search_call"}), "unknown item type"),
    ])
    def test_broken(self, edit, needle):
        problems = validate_openai_responses(broken(RESPONSES, edit))
        assert any(needle in p for p in problems), problems


ANTHROPIC = {"system": "s", "messages": [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "t", "signature": "sig"},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        {"type": "tool_use", "id": "toolu_2", "name": "f", "input": {"a": 1}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "2"},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text",
                                                                       "text": "1"}],
         "is_error": True},
        {"type": "text", "text": "go on"},
    ]},
    {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
]}


class TestAnthropic:
    def test_valid(self):
        assert validate_anthropic(ANTHROPIC) == []

    @pytest.mark.parametrize(("edit", "needle"), [
        (lambda b: b["messages"].pop(0), "first message must be a user"),
        (lambda b: b["messages"].insert(1, {"role": "user", "content": "again"}),
         "roles must alternate"),
        (lambda b: b["messages"][2]["content"].pop(0), "not answered here"),
        (lambda b: b["messages"][2]["content"][1].update(tool_use_id="toolu_9"), "answers no"),
        (lambda b: b["messages"][2]["content"].append(
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "x"}),
         "tool results must come first"),
        (lambda b: b["messages"][1]["content"][1].update(id="functions.get_temperature:0"),
         "does not match"),
        (lambda b: b["messages"][1]["content"][2].update(id="toolu_1"), "not unique"),
        (lambda b: b["messages"][1]["content"][1].update(input="{}"), "object input"),
        (lambda b: b["messages"][3]["content"][0].update(text=""), "must not be empty"),
        (lambda b: b["messages"][1]["content"][0].pop("signature"), "signature"),
        (lambda b: b["messages"][2]["content"].insert(0, {"type": "tool_use", "id": "x",
                                                          "name": "f", "input": {}}),
         "cannot hold"),
        (lambda b: del_after(b["messages"], 2), "never answered"),
        (lambda b: b["messages"][3].update(role="user"), "roles must alternate"),
        (lambda b: b.update(system=["s"]), "system must be a string"),
        (lambda b: b["messages"][2]["content"][0].update(content={"a": 1}),
         "tool_result content"),
    ])
    def test_broken(self, edit, needle):
        problems = validate_anthropic(broken(ANTHROPIC, edit))
        assert any(needle in p for p in problems), problems


BEDROCK = {"system": [{"text": "s"}], "messages": [
    {"role": "user", "content": [{"text": "hi"}]},
    {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"text": "t", "signature": "s"}}},
        {"toolUse": {"toolUseId": "tooluse_1", "name": "f", "input": {}}},
    ]},
    {"role": "user", "content": [
        {"toolResult": {"toolUseId": "tooluse_1", "content": [{"json": {"a": 1}}],
                        "status": "error"}},
    ]},
    {"role": "assistant", "content": [{"text": "done"}]},
]}


class TestBedrock:
    def test_valid(self):
        assert validate_bedrock(BEDROCK) == []

    @pytest.mark.parametrize(("edit", "needle"), [
        (lambda b: b["messages"].pop(0), "first message must be a user"),
        (lambda b: b["messages"][2]["content"].pop(0), "not answered here"),
        (lambda b: b["messages"][1]["content"][1]["toolUse"].update(
            toolUseId="functions.get_temperature:0"), "does not match"),
        (lambda b: b["messages"][2]["content"][0]["toolResult"].update(content=[]),
         "non-empty list"),
        (lambda b: b["messages"][2]["content"][0]["toolResult"].update(status="failed"),
         "status"),
        (lambda b: b["messages"][3]["content"][0].update(text="  "), "blank"),
        (lambda b: b["messages"][3]["content"][0].update(type="text"), "exactly one key"),
        (lambda b: b["messages"].insert(3, {"role": "user", "content": [{"text": "x"}]}),
         "roles must alternate"),
        (lambda b: b.update(system="s"), "system must be a list"),
    ])
    def test_broken(self, edit, needle):
        problems = validate_bedrock(broken(BEDROCK, edit))
        assert any(needle in p for p in problems), problems


GEMINI = {"systemInstruction": {"parts": [{"text": "s"}]}, "contents": [
    {"role": "user", "parts": [{"text": "hi"}]},
    {"role": "model", "parts": [
        {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "sig"},
        {"functionCall": {"name": "g", "args": {"a": 1}, "id": "abc"}},
    ]},
    {"role": "user", "parts": [
        {"functionResponse": {"name": "f", "response": {"output": 1}}},
        {"functionResponse": {"name": "g", "response": {"output": 2}, "id": "abc"}},
    ]},
    {"role": "model", "parts": [{"text": "done"}]},
]}


class TestGemini:
    def test_valid(self):
        assert validate_gemini(GEMINI) == []

    @pytest.mark.parametrize(("edit", "needle"), [
        (lambda b: b["contents"].pop(0), "first content must be a user"),
        (lambda b: b["contents"][2]["parts"].pop(), "1 function responses answer 2"),
        (lambda b: b["contents"][2]["parts"].reverse(), "is for 'g', the call was 'f'"),
        (lambda b: b["contents"][2]["parts"][1]["functionResponse"].update(id="zzz"), "has id"),
        (lambda b: b["contents"][2]["parts"][0]["functionResponse"].update(response="x"),
         "must be an object"),
        (lambda b: b["contents"].insert(2, {"role": "model", "parts": [{"text": "x"}]}),
         "roles must alternate"),
        (lambda b: b["contents"][0]["parts"].append(
            {"functionResponse": {"name": "f", "response": {}}}), "1 function responses"),
        (lambda b: b["contents"][3].update(role="assistant"), "unknown role"),
        (lambda b: b["contents"][3].update(parts=[]), "non-empty"),
        (lambda b: del_after(b["contents"], 2), "never answered"),
        (lambda b: b["contents"][1]["parts"][0].update(thoughtSignature=1), "thoughtSignature"),
    ])
    def test_broken(self, edit, needle):
        problems = validate_gemini(broken(GEMINI, edit))
        assert any(needle in p for p in problems), problems


def test_validate_dispatches_by_target():
    assert validate("gemini", GEMINI) == [] and validate("anthropic", GEMINI) != []
