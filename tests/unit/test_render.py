"""render(): exact output per target for a small mixed history, and the replay details
(byte-faithful argument text, Gemini thought signatures, same-provider extras)."""

from __future__ import annotations

import pytest
from provider_rules import validate

from store import Message, TextPart, ThinkingPart, ToolResult, normalize_message
from store.core.model import OpaquePart, make_tool_call
from store.replay.render import PLACEHOLDER_USER_TEXT, render
from store.replay.repair import repair
from store.replay.targets import TARGETS

PRETTY = '{\n  "city": "Paris",\n  "unit": "°C"\n}'  # pretty-printed, non-ASCII: sent as is
COMPACT = '{"tz":"Europe/Rome"}'
CALL_A = make_tool_call("toolu_01A", "get_weather", PRETTY)
CALL_B = make_tool_call("toolu_01B", "get_time", COMPACT)
MIXED = [
    Message("system", (TextPart("Be brief."),)),
    Message("user", (TextPart("Weather in Paris, time in Rome?"),)),
    Message("assistant", (ThinkingPart("plan", "sig-1"), TextPart("Checking."), CALL_A, CALL_B)),
    Message("user", (ToolResult("toolu_01A", {"temp": 18, "unit": "°C"}),
                     ToolResult("toolu_01B", "timeout", is_error=True))),
    Message("assistant", (TextPart("18°C; 12:00."),)),
]
QUESTION = "Weather in Paris, time in Rome?"
WEATHER_TEXT = '{"temp":18,"unit":"°C"}'

EXPECTED = {
    "openai-chat": {"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "toolu_01A", "type": "function",
             "function": {"name": "get_weather", "arguments": PRETTY}},
            {"id": "toolu_01B", "type": "function",
             "function": {"name": "get_time", "arguments": COMPACT}},
        ]},
        {"role": "tool", "tool_call_id": "toolu_01A", "content": WEATHER_TEXT},
        {"role": "tool", "tool_call_id": "toolu_01B", "content": "timeout"},
        {"role": "assistant", "content": "18°C; 12:00."},
    ]},
    "openai-responses": {"input": [
        {"type": "message", "role": "system",
         "content": [{"type": "input_text", "text": "Be brief."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Checking."}]},
        {"type": "function_call", "call_id": "toolu_01A", "name": "get_weather",
         "arguments": PRETTY},
        {"type": "function_call", "call_id": "toolu_01B", "name": "get_time",
         "arguments": COMPACT},
        {"type": "function_call_output", "call_id": "toolu_01A", "output": WEATHER_TEXT},
        {"type": "function_call_output", "call_id": "toolu_01B", "output": "timeout"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "18°C; 12:00."}]},
    ]},
    "anthropic": {"system": "Be brief.", "messages": [
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_weather",
             "input": {"city": "Paris", "unit": "°C"}},
            {"type": "tool_use", "id": "toolu_01B", "name": "get_time",
             "input": {"tz": "Europe/Rome"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A", "content": WEATHER_TEXT},
            {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "timeout",
             "is_error": True},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "18°C; 12:00."}]},
    ]},
    "gemini": {"systemInstruction": {"parts": [{"text": "Be brief."}]}, "contents": [
        {"role": "user", "parts": [{"text": QUESTION}]},
        {"role": "model", "parts": [
            {"text": "Checking."},
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris", "unit": "°C"},
                              "id": "toolu_01A"}},
            {"functionCall": {"name": "get_time", "args": {"tz": "Europe/Rome"},
                              "id": "toolu_01B"}},
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather",
                                  "response": {"temp": 18, "unit": "°C"}, "id": "toolu_01A"}},
            {"functionResponse": {"name": "get_time", "response": {"error": "timeout"},
                                  "id": "toolu_01B"}},
        ]},
        {"role": "model", "parts": [{"text": "18°C; 12:00."}]},
    ]},
    "bedrock": {"system": [{"text": "Be brief."}], "messages": [
        {"role": "user", "content": [{"text": QUESTION}]},
        {"role": "assistant", "content": [
            {"text": "Checking."},
            {"toolUse": {"toolUseId": "toolu_01A", "name": "get_weather",
                         "input": {"city": "Paris", "unit": "°C"}}},
            {"toolUse": {"toolUseId": "toolu_01B", "name": "get_time",
                         "input": {"tz": "Europe/Rome"}}},
        ]},
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": "toolu_01A",
                            "content": [{"json": {"temp": 18, "unit": "°C"}}],
                            "status": "success"}},
            {"toolResult": {"toolUseId": "toolu_01B", "content": [{"text": "timeout"}],
                            "status": "error"}},
        ]},
        {"role": "assistant", "content": [{"text": "18°C; 12:00."}]},
    ]},
}


@pytest.mark.parametrize("target", TARGETS)
def test_exact_output_for_a_small_mixed_history(target):
    assert repair(MIXED, target).changes == ()
    body = render(MIXED, target)
    assert body == EXPECTED[target]
    assert validate(target, body) == []


@pytest.mark.parametrize("target", ["openai-chat", "openai-responses"])
def test_argument_text_is_sent_byte_for_byte(target):
    body = render(MIXED, target)
    if target == "openai-chat":
        sent = [c["function"]["arguments"] for c in body["messages"][2]["tool_calls"]]
    else:
        sent = [i["arguments"] for i in body["input"] if i["type"] == "function_call"]
    assert sent == [PRETTY, COMPACT]
    assert [s.encode() for s in sent] == [CALL_A.arguments_text.encode(), COMPACT.encode()]


GEMINI_TURN = {"role": "model", "parts": [
    {"functionCall": {"name": "generate_topic", "args": {}}, "thoughtSignature": "Es8F+/ab=="},
    {"functionCall": {"name": "generate_topic", "args": {"n": 2}}},
    {"text": "and", "thoughtSignature": "Tx-_9"},
]}


def gemini_history():
    model = normalize_message(GEMINI_TURN)
    return [normalize_message({"role": "user", "parts": [{"text": "topics"}]}), model,
            normalize_message({"role": "user", "parts": [
                {"functionResponse": {"name": "generate_topic", "response": {"v": "cars"}}},
                {"functionResponse": {"name": "generate_topic", "response": {"v": "bees"}}},
            ]})]


def test_gemini_thought_signatures_are_echoed_exactly_where_they_were():
    body = render(repair(gemini_history(), "gemini").messages, "gemini")
    assert body["contents"][1] == GEMINI_TURN
    assert body["contents"][2]["parts"][1] == {
        "functionResponse": {"name": "generate_topic", "response": {"v": "bees"}}}
    assert validate("gemini", body) == []


def test_gemini_signatures_are_echoed_even_when_not_same_provider():
    body = render(repair(gemini_history(), "gemini").messages, "gemini", same_provider=False)
    assert body["contents"][1]["parts"][0]["thoughtSignature"] == "Es8F+/ab=="


def test_an_openai_compatible_gemini_signature_goes_on_the_first_call():
    message = normalize_message({
        "role": "assistant", "thought_signature": "AVSo+x=", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "now", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "now", "arguments": "{}"}}]})
    history = [Message("user", (TextPart("time?"),)), message,
               Message("tool", (ToolResult("c1", "12:00"),)),
               Message("tool", (ToolResult("c2", "12:01"),))]
    parts = render(history, "gemini")["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == ["AVSo+x=", None]


@pytest.mark.parametrize("target", ["openai-chat", "openai-responses", "anthropic", "bedrock"])
def test_other_targets_never_get_gemini_signatures(target):
    body = render(repair(gemini_history(), target).messages, target)
    assert "thoughtSignature" not in repr(body) and "Es8F" not in repr(body)
    assert validate(target, body) == []


RESPONSES_ITEMS = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell",
     "arguments": '{"command": ["ls"]}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
]


def test_responses_reasoning_items_and_item_ids_are_echoed_to_the_same_provider():
    history = [normalize_message(item) for item in RESPONSES_ITEMS]
    assert render(history, "openai-responses") == {"input": [
        RESPONSES_ITEMS[0], RESPONSES_ITEMS[1],
        {"type": "function_call", "call_id": "call_1", "name": "shell",
         "arguments": '{"command": ["ls"]}', "id": "fc_1"},
        RESPONSES_ITEMS[3],
    ]}


def test_responses_extras_are_not_sent_elsewhere():
    history = [normalize_message(item) for item in RESPONSES_ITEMS]
    body = render(history, "openai-responses", same_provider=False)
    assert [i["type"] for i in body["input"]] == [
        "message", "function_call", "function_call_output"]
    assert "id" not in body["input"][1]
    chat = render(history, "openai-chat")
    assert "fc_1" not in repr(chat) and "gAAA" not in repr(chat)


def test_a_reasoning_item_without_what_it_produced_is_not_sent():
    history = [Message("user", (TextPart("x"),), "openai_responses"),
               Message("assistant", (OpaquePart("reasoning", {"type": "reasoning", "id": "rs"}),),
                       "openai_responses")]
    assert render(history, "openai-responses") == {"input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}]}


def anthropic_history():
    return [normalize_message({"role": "user", "content": "hi"}),
            normalize_message({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig=="},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": ""},
                {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}]}),
            normalize_message({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1",
                 "content": [{"type": "text", "text": "r", "cache_control": {}}]}]})]


def test_anthropic_thinking_is_echoed_with_its_signature_to_anthropic():
    body = render(anthropic_history(), "anthropic")
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "plan", "signature": "sig=="},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1",
         "content": [{"type": "text", "text": "r"}]}]
    assert validate("anthropic", body) == []


def test_anthropic_thinking_is_not_sent_when_not_same_provider():
    body = render(anthropic_history(), "anthropic", same_provider=False)
    assert [b["type"] for b in body["messages"][1]["content"]] == ["tool_use"]
    gemini = render(anthropic_history(), "gemini")
    assert "sig==" not in repr(gemini)


def test_alternation_placeholder_and_late_system_messages():
    history = [
        Message("assistant", (TextPart("Welcome back."),)),
        Message("system", (TextPart("Note: the repo moved."),)),
        Message("user", (TextPart("ok"),)),
        Message("user", (TextPart(""),)),
    ]
    anthropic = render(history, "anthropic")
    assert anthropic == {"messages": [
        {"role": "user", "content": [{"type": "text", "text": PLACEHOLDER_USER_TEXT}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Welcome back."}]},
        {"role": "user", "content": [{"type": "text", "text": "Note: the repo moved."},
                                     {"type": "text", "text": "ok"}]},
    ]}
    assert render(history, "openai-chat")["messages"][1] == {
        "role": "system", "content": "Note: the repo moved."}
    for target in TARGETS:
        assert validate(target, render(history, target)) == [], target


def test_bedrock_result_content_forms():
    history = [Message("user", (TextPart("go"),)),
               Message("assistant", tuple(make_tool_call(f"t{n}", "f", "{}") for n in range(4))),
               Message("user", (ToolResult("t0", [{"text": "a"}, {"json": {"b": 1}}]),
                                ToolResult("t1", ""),
                                ToolResult("t2", [{"type": "text", "text": "x"}]),
                                ToolResult("t3", 42)))]
    content = [b["toolResult"]["content"]
               for b in render(history, "bedrock")["messages"][2]["content"]]
    assert content == [[{"text": "a"}, {"json": {"b": 1}}], [{"text": "(no output)"}],
                       [{"text": "x"}], [{"text": "42"}]]


def test_gemini_wraps_non_object_results():
    history = [Message("user", (TextPart("go"),)),
               Message("assistant", (make_tool_call("a", "f", "{}"),
                                     make_tool_call("b", "g", "{}"))),
               Message("tool", (ToolResult("a", "plain"),)),
               Message("tool", (ToolResult("b", [{"type": "text", "text": "x"}]),))]
    parts = render(history, "gemini")["contents"][2]["parts"]
    assert [p["functionResponse"]["response"] for p in parts] == [{"output": "plain"},
                                                                 {"output": "x"}]


def test_an_unrepaired_invalid_call_still_renders():
    bad = make_tool_call("c", "f", '{"a": ')
    history = [Message("user", (TextPart("x"),)), Message("assistant", (bad,)),
               Message("tool", (ToolResult("c", "r"),))]
    assert render(history, "anthropic")["messages"][1]["content"][0]["input"] == {
        "_invalid_arguments": '{"a": ', "_error": "invalid_json"}
    assert render(history, "openai-chat")["messages"][1]["tool_calls"][0]["function"][
        "arguments"] == '{"a": '


def test_an_empty_history_renders_empty():
    assert render([], "anthropic") == {"messages": []}
    assert render([], "gemini") == {"contents": []}
    assert render([], "openai-chat") == {"messages": []}


def test_unknown_target_is_refused():
    with pytest.raises(ValueError, match="unknown render target"):
        render([], "claude")  # type: ignore[arg-type]
