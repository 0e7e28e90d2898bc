"""normalize_tool_call over every call shape and key spelling (wire-formats.md, §4 of the
inherited behaviour)."""

from __future__ import annotations

import pytest

from store import (
    AliasTable,
    AmbiguousRecord,
    InvalidToolCall,
    ToolCall,
    UnrecognizedRecord,
    normalize_tool_call,
    parse_text_tool_calls,
)
from store.core.model import ServerToolCall
from store.normalize.calls import read_call

# (id, record, expected id, expected name, expected input, expected source)
SHAPES = [
    ("openai-chat",
     {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}},
     "call_1", "f", {"a": 1}, "openai_chat"),
    ("mistral-no-type-with-index",
     {"id": "rHU0eZiMa", "function": {"name": "f", "arguments": '{"a":1}'}, "index": 0},
     "rHU0eZiMa", "f", {"a": 1}, "openai_chat_untyped"),
    ("openai-missing-arguments",
     {"id": "toolu_vrtx_1", "type": "function", "function": {"name": "f"}, "index": 0},
     "toolu_vrtx_1", "f", {}, "openai_chat"),
    ("gemini-compat-empty-id",
     {"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}},
     "", "f", {}, "openai_chat"),
    ("ollama-native",
     {"function": {"name": "f", "arguments": {"city": "Paris"}, "index": 0}},
     None, "f", {"city": "Paris"}, "ollama"),
    ("legacy-function-call",
     {"function_call": {"name": "f", "arguments": '{\n  "a": 1\n}'}},
     None, "f", {"a": 1}, "legacy_function_call"),
    ("flat-legacy-body",
     {"name": "f", "arguments": '{"a": 1}'},
     None, "f", {"a": 1}, "flat"),
    ("responses-function-call",
     {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f",
      "arguments": '{"a":1}', "status": "completed"},
     "call_1", "f", {"a": 1}, "openai_responses"),
    ("responses-custom-tool-call",
     {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch",
      "input": "*** Begin Patch\n*** End Patch"},
     "call_2", "apply_patch", {"input": "*** Begin Patch\n*** End Patch"},
     "openai_responses_custom"),
    ("anthropic-tool-use",
     {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": "°C"},
      "caller": {"type": "direct"}},
     "toolu_1", "f", {"a": "°C"}, "anthropic"),
    ("gemini-part-camel",
     {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "c2ln"},
     None, "f", {"a": 1}, "gemini_function_call"),
    ("gemini-part-snake-with-id",
     {"function_call": {"name": "f", "args": {}, "id": "call_abc"}},
     "call_abc", "f", {}, "gemini_function_call"),
    ("gemini-bare-function-call",
     {"name": "f", "args": {"a": 1}, "id": "vcyiitct"},
     "vcyiitct", "f", {"a": 1}, "flat"),
    ("bedrock-tool-use",
     {"toolUse": {"toolUseId": "tooluse_1", "name": "f", "input": {"a": 1}}},
     "tooluse_1", "f", {"a": 1}, "bedrock_tool_use"),
    ("cohere-v2",
     {"id": "web_search_eyqpk2grf0f7", "type": "function",
      "function": {"name": "web_search", "arguments": '{"query":"x"}'}},
     "web_search_eyqpk2grf0f7", "web_search", {"query": "x"}, "openai_chat"),
    ("symbol-keyed-object-arguments",
     {":id": "c", ":function": {":name": "f", ":arguments": {":command": "echo hi"}}},
     "c", "f", {"command": "echo hi"}, "symbol_keyed"),
    ("camel-tool-name",
     {"id": "c", "toolName": "f", "arguments": "{}"},
     "c", "f", {}, "flat"),
]


class TestShapes:
    @pytest.mark.parametrize(
        ("record", "call_id", "name", "input", "source"),
        [s[1:] for s in SHAPES], ids=[s[0] for s in SHAPES],
    )
    def test_every_shape_normalizes_to_one_call(self, record, call_id, name, input, source):
        call = normalize_tool_call(record)
        assert isinstance(call, ToolCall)
        assert (call.id, call.name, call.input, call.source) == (call_id, name, input, source)

    def test_text_arguments_stay_byte_for_byte(self):
        text = '{\n  "date": "2023-07-01",  "x" : "é"\n}'
        call = normalize_tool_call({"id": "c", "function": {"name": "f", "arguments": text}})
        assert call.arguments_text == text
        assert call.to_wire()["function"]["arguments"] == text

    def test_object_arguments_become_compact_text_in_key_order(self):
        call = normalize_tool_call({"type": "tool_use", "id": "t", "name": "f",
                                    "input": {"z": 1, "a": "Sacré-Cœur"}})
        assert call.arguments_text == '{"z":1,"a":"Sacré-Cœur"}'

    def test_provider_extras_are_kept(self):
        resp = normalize_tool_call(SHAPES[7][1])
        assert resp.extras == {"item_id": "fc_1", "status": "completed"}
        gem = normalize_tool_call(SHAPES[10][1])
        assert gem.extras == {"thought_signature": "c2ln"}
        anth = normalize_tool_call(SHAPES[9][1])
        assert anth.extras == {"caller": {"type": "direct"}}
        mistral = normalize_tool_call(SHAPES[1][1])
        assert mistral.extras == {"index": 0}
        custom = normalize_tool_call(SHAPES[8][1])
        assert custom.extras["format"] == "custom"


SPELLINGS = [
    {"id": "c", "type": "function",
     "function": {"name": "run_shell_command", "arguments": '{"command":"ls"}'}},
    {":id": "c", ":type": "function",
     ":function": {":name": "run_shell_command", ":arguments": '{"command":"ls"}'}},
    {"id": "c", ":function": {"name": "run_shell_command", ":arguments": '{"command":"ls"}'}},
    {":id": "c", "function": {":name": "run_shell_command", "arguments": {"command": "ls"}}},
    {":id": "c", ":function": {":name": "run_shell_command", ":arguments": {":command": "ls"}}},
    {"id": "c", "function": {"toolName": "run_shell_command", "arguments": {"command": "ls"}}},
]


class TestLegacySpellings:
    @pytest.mark.parametrize("record", SPELLINGS, ids=[str(i) for i in range(len(SPELLINGS))])
    def test_every_spelling_normalizes_to_the_same_call(self, record):
        recorded = normalize_tool_call(record)
        assert recorded == ToolCall("c", "run_shell_command", {"command": "ls"})
        call = AliasTable.default().apply(recorded)
        assert call == ToolCall("c", "bash", {"command": "ls"})
        assert call.raw_name == "run_shell_command"

    def test_string_values_are_never_touched(self):
        call = normalize_tool_call(
            {":id": "c", ":function": {":name": "f", ":arguments": {":path": ":read_file"}}}
        )
        assert call.input == {"path": ":read_file"}

    def test_keys_inside_text_arguments_are_the_tools_data(self):
        call = normalize_tool_call(
            {":id": "c", ":function": {":name": "f", ":arguments": '{":keep": 1}'}}
        )
        assert call.input == {":keep": 1}

    def test_falsy_values_are_values_not_absence(self):
        call = normalize_tool_call({"id": "", "function": {"name": "f", "arguments": ""}})
        assert (call.id, call.input) == ("", {})

    @pytest.mark.parametrize(
        ("record", "key"),
        [
            ({"id": "a", ":id": "b", "function": {"name": "f"}}, "id"),
            ({"id": "a", "function": {"name": "f", ":name": "g"}}, "name"),
            ({"id": "a", "name": "f", "toolName": "g"}, "name"),
            ({"name": "f", "arguments": '{"a":1}', "args": {"a": 2}}, "arguments"),
        ],
        ids=["id", "name", "name-camel-alias", "arguments-vs-args"],
    )
    def test_ambiguous_records_are_rejected_by_key(self, record, key):
        with pytest.raises(AmbiguousRecord) as info:
            normalize_tool_call(record)
        assert info.value.key == key


class TestBadRecords:
    @pytest.mark.parametrize(
        ("record", "message"),
        [
            ({"foo": 1}, "not a tool call: found keys ['foo']"),
            ({"type": "image", "url": "x"}, "not a tool call: found type 'image'"),
            ({"id": "c", "function": {"name": ""}}, "non-empty name"),
            ({"id": 3, "function": {"name": "f"}}, "must be a string"),
            ("text", "must be an object"),
        ],
        ids=["unknown-keys", "unknown-type", "empty-name", "int-id", "not-a-mapping"],
    )
    def test_unrecognised_records_say_what_was_found(self, record, message):
        with pytest.raises(UnrecognizedRecord, match=message.replace("[", r"\[")):
            normalize_tool_call(record)

    def test_server_side_tools_are_not_client_calls(self):
        record = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "advisor", "input": {}}
        assert isinstance(read_call(record), ServerToolCall)
        with pytest.raises(UnrecognizedRecord, match="server-side tool call"):
            normalize_tool_call(record)

    def test_responses_tool_search_is_a_server_call(self):
        call = read_call({"type": "tool_search_call", "id": "ts_1",
                          "arguments": {"paths": ["a"]}})
        assert isinstance(call, ServerToolCall) and call.input == {"paths": ["a"]}

    def test_corrupt_arguments_give_an_invalid_call_with_the_raw_text(self):
        text = '{"subject": "Invitation to attend'
        call = normalize_tool_call({"function_call": {"name": "send", "arguments": text}})
        assert isinstance(call, InvalidToolCall)
        assert (call.arguments_text, call.error_kind) == (text, "invalid_json")


class TestAliases:
    """Normalizers keep the recorded name; a table applies on read (``AliasTable.apply``)."""

    def test_the_normalizer_applies_no_alias(self):
        call = normalize_tool_call({"name": "read_file", "arguments": "{}"})
        assert (call.name, call.raw_name) == ("read_file", None)
        with pytest.raises(TypeError):
            normalize_tool_call({"name": "shell", "arguments": "{}"},
                                aliases=AliasTable())  # type: ignore[call-arg]

    def test_a_custom_table_is_used(self):
        table = AliasTable({"shell": "bash"})
        call = table.apply(normalize_tool_call({"name": "shell", "arguments": "{}"}))
        assert (call.name, call.raw_name) == ("bash", "shell")

    def test_an_empty_table_applies_no_alias(self):
        call = AliasTable().apply(normalize_tool_call({"name": "read_file", "arguments": "{}"}))
        assert (call.name, call.raw_name) == ("read_file", None)

    def test_invalid_calls_are_aliased_too(self):
        call = AliasTable.default().apply(
            normalize_tool_call({"name": "read_file", "arguments": "{"}))
        assert isinstance(call, InvalidToolCall)
        assert (call.name, call.raw_name) == ("read", "read_file")


class TestTextToolCalls:
    def test_hermes_tagged_blocks_are_calls(self):
        calls = parse_text_tool_calls(
            'ok <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
            '<tool_call>{"name": "g", "arguments": {}}</tool_call>'
        )
        assert [(c.name, c.input, c.id) for c in calls] == [("f", {"a": 1}, None), ("g", {}, None)]

    def test_a_raw_json_call_without_tags_is_one_call(self):
        assert parse_text_tool_calls('{"name": "f", "arguments": {"x": "y"}}')[0].input == {
            "x": "y"
        }

    def test_a_corrupt_tagged_block_is_kept_as_an_invalid_call(self):
        (call,) = parse_text_tool_calls("<tool_call>{oops</tool_call>")
        assert isinstance(call, InvalidToolCall) and call.arguments_text == "{oops"

    def test_untagged_prose_is_not_a_call(self):
        with pytest.raises(UnrecognizedRecord, match="not a JSON tool call"):
            parse_text_tool_calls("I will call the tool now.")
