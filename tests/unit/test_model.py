"""ToolCall and InvalidToolCall values: construction, equality, the canonical wire form."""

from __future__ import annotations

import dataclasses

import pytest

from store import InvalidToolCall, ToolArgumentsError, ToolCall, UnrecognizedRecord
from store.core.model import make_tool_call, read_wire


class TestToolCall:
    def test_a_call_is_built_directly_from_id_name_and_input(self):
        call = ToolCall(id="c1", name="bash", input={"command": "ls"})
        assert (call.id, call.name, call.input) == ("c1", "bash", {"command": "ls"})
        assert call.arguments_text == '{"command":"ls"}'
        assert call.raw_name is None

    def test_calls_are_frozen(self):
        call = ToolCall(id="c1", name="bash", input={})
        with pytest.raises(dataclasses.FrozenInstanceError):
            call.name = "other"  # type: ignore[misc]

    def test_calls_are_equal_by_id_name_and_input(self):
        a = ToolCall("c1", "bash", {"x": 1}, arguments_text='{ "x" : 1 }')
        b = ToolCall("c1", "bash", {"x": 1})
        assert a == b and hash(a) == hash(b)
        assert a != ToolCall("c2", "bash", {"x": 1})
        assert a != ToolCall("c1", "bash", {"x": 2})
        assert a != ToolCall("c1", "sh", {"x": 1})

    def test_a_call_and_an_invalid_call_are_never_equal(self):
        valid = ToolCall("c1", "f", {})
        invalid = InvalidToolCall("c1", "f", "{", "invalid_json", "bad")
        assert valid != invalid and invalid != valid

    def test_an_empty_name_is_refused(self):
        with pytest.raises(UnrecognizedRecord, match="non-empty name"):
            ToolCall("c1", "", {})

    def test_input_that_cannot_be_serialized_is_refused(self):
        with pytest.raises(ToolArgumentsError):
            ToolCall("c1", "f", {"x": float("nan")})

    def test_to_wire_gives_the_canonical_shape_with_the_id_always_present(self):
        assert ToolCall(None, "f", {"a": "é"}).to_wire() == {
            "id": None,
            "type": "function",
            "function": {"name": "f", "arguments": '{"a":"é"}'},
        }

    def test_to_wire_re_emits_the_stored_text_verbatim(self):
        text = '{\n  "date": "2023-07-01"\n}'
        call = ToolCall.from_wire({"id": "c", "function": {"name": "f", "arguments": text}})
        assert call.to_wire()["function"]["arguments"] == text
        assert call.input == {"date": "2023-07-01"}

    def test_to_wire_writes_the_recorded_name(self):
        call = ToolCall("c", "bash", {}, raw_name="run_shell_command")
        assert call.to_wire()["function"]["name"] == "run_shell_command"
        assert call.display_name == "bash"

    def test_from_wire_reads_every_key_spelling(self):
        record = {":id": "c", ":function": {":name": "f", ":arguments": '{"a":1}'}}
        assert ToolCall.from_wire(record) == ToolCall("c", "f", {"a": 1})

    def test_from_wire_does_not_apply_aliases(self):
        record = {"id": "c", "type": "function",
                  "function": {"name": "run_shell_command", "arguments": "{}"}}
        assert ToolCall.from_wire(record).name == "run_shell_command"

    def test_from_wire_raises_the_parser_error_on_corrupt_arguments(self):
        record = {"id": "c", "function": {"name": "f", "arguments": "{"}}
        with pytest.raises(ToolArgumentsError) as info:
            ToolCall.from_wire(record)
        assert info.value.kind == "invalid_json"

    @pytest.mark.parametrize(
        ("record", "message"),
        [
            ({"id": "c"}, "expected a 'function' object"),
            ({"id": "c", "function": {"name": ""}}, "non-empty function.name"),
            ({"id": 5, "function": {"name": "f"}}, "id must be a string"),
            (["not", "a", "record"], "must be an object"),
        ],
        ids=["no-function", "empty-name", "int-id", "list"],
    )
    def test_from_wire_names_what_is_wrong(self, record, message):
        with pytest.raises(UnrecognizedRecord, match=message):
            ToolCall.from_wire(record)

    def test_a_missing_arguments_key_reads_as_no_arguments(self):
        call = ToolCall.from_wire({"id": "c", "function": {"name": "f"}})
        assert call.input == {} and call.arguments_text == "{}"


class TestInvalidToolCall:
    def test_read_wire_keeps_corrupt_text_and_the_error(self):
        text = '{\n  "subject": "Invitation to attend'
        call = read_wire({"id": None, "function": {"name": "send", "arguments": text}})
        assert isinstance(call, InvalidToolCall)
        assert call.arguments_text == text
        assert call.error_kind == "invalid_json"
        assert call.error_message.startswith("tool call arguments are not valid JSON: ")
        assert call.to_wire()["function"]["arguments"] == text
        assert not call.is_valid

    def test_an_invalid_call_is_never_turned_into_empty_input(self):
        call = make_tool_call("c", "f", "[1, 2]")
        assert isinstance(call, InvalidToolCall)
        assert call.error_kind == "non_object_json"
        assert not hasattr(call, "input")

    def test_non_text_arguments_of_the_wrong_type_keep_their_json(self):
        call = make_tool_call("c", "f", [1, "x"])
        assert isinstance(call, InvalidToolCall)
        assert (call.error_kind, call.arguments_text) == ("unsupported_type", '[1,"x"]')

    def test_the_error_property_rebuilds_the_exception(self):
        call = make_tool_call("c", "f", "{")
        assert isinstance(call, InvalidToolCall)
        assert call.error.kind == "invalid_json"


class TestMakeToolCall:
    def test_object_arguments_are_written_as_compact_text(self):
        call = make_tool_call("c", "f", {"b": 1, "a": "°C"})
        assert isinstance(call, ToolCall)
        assert call.arguments_text == '{"b":1,"a":"°C"}'

    def test_text_arguments_are_kept_verbatim(self):
        call = make_tool_call("c", "f", '{"a": 1,  "b": 2}')
        assert call.arguments_text == '{"a": 1,  "b": 2}'

    def test_extras_are_kept_read_only(self):
        call = make_tool_call("c", "f", "{}", extras={"index": 0})
        assert call.extras == {"index": 0}
        with pytest.raises(TypeError):
            call.extras["index"] = 1  # type: ignore[index]


def test_messages_and_their_parts_pickle_whole_and_stay_frozen() -> None:
    """An import's reader processes send messages to the writer pickled
    (store/core/pickling.py): every field comes back, the objects stay frozen, and a state
    written as ``dataclasses`` writes it (a list of the field values) reads the same."""
    import pickle

    from store import Message, TextPart, ThinkingPart, ToolResult
    from store.importers.parallel import _dumps  # (the workers' pickler: extras as dicts)
    from store.usage.tokens import TokenUsage

    call = ToolCall("c1", "bash", {"command": "ls"}, raw_name="run_shell_command",
                    extras={"index": 0}, source="openai_chat")
    message = Message("assistant", (ThinkingPart("hmm", "sig"), TextPart("hi"), call),
                      source="anthropic", message_id="m1", extras={"model": "x"},
                      metadata={"timestamp": "2025-01-01T00:00:00Z", "uuids": ["u"]})
    result = ToolResult("c1", [{"type": "text", "text": "out"}], is_error=True, name="bash")
    usage = TokenUsage(1, 2, 3, 4, 5, "m", "req", "resp")
    for value in (message, call, result, usage, InvalidToolCall("c2", "x", "{", "invalid_json",
                                                                 "bad")):
        back = pickle.loads(_dumps(value))
        assert type(back) is type(value)
        for f in dataclasses.fields(value):
            assert getattr(back, f.name) == getattr(value, f.name), f.name
        # (a frozen dataclass with slots refuses with TypeError on Python 3.11, bpo-45897)
        first = dataclasses.fields(value)[0].name
        with pytest.raises((dataclasses.FrozenInstanceError, TypeError)):
            setattr(back, first, "changed")
        assert getattr(back, first) == getattr(value, first)
        # the state dataclasses itself writes (field values in order) loads the same
        state = [getattr(value, f.name) for f in dataclasses.fields(value)]
        again = object.__new__(type(value))
        again.__setstate__(state)  # type: ignore[attr-defined]
        assert [getattr(again, f.name) for f in dataclasses.fields(value)] == state
    assert pickle.loads(_dumps(message)).text == "hi"
