"""Hypothesis properties of the domain core."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from store import (
    StoreError,
    ToolArgumentsError,
    ToolCall,
    normalize_message,
    normalize_payload,
    normalize_tool_call,
    parse_arguments,
)
from store.core.arguments import dumps_json
from store.core.keys import snake_key

# Text that survives UTF-8 (no lone surrogates), as JSON text always does.
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**100), max_value=2**100)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=25,
)
json_objects = st.dictionaries(text, json_values, max_size=5)
names = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=10)
ids = st.none() | st.text(st.characters(exclude_categories=("Cs",)), max_size=10)


@given(ids, names, json_objects)
def test_from_wire_of_to_wire_is_the_same_call(call_id, name, arguments):
    call = ToolCall(id=call_id, name=name, input=arguments)
    assert ToolCall.from_wire(call.to_wire()) == call
    # ... and through real JSON text, as storage does it.
    assert ToolCall.from_wire(orjson.loads(orjson.dumps(call.to_wire()))) == call


@given(json_objects)
def test_canonical_text_parses_back_to_the_input(arguments):
    call = ToolCall(id="c", name="f", input=arguments)
    assert parse_arguments(call.arguments_text) == arguments


@given(json_values)
def test_the_normalizer_raises_only_documented_errors_on_any_json(value):
    for function in (normalize_message, normalize_tool_call, normalize_payload):
        try:
            function(value)
        except StoreError:
            pass


@given(st.binary(max_size=64))
def test_the_parser_raises_only_its_own_error_on_any_bytes(raw):
    try:
        assert isinstance(parse_arguments(raw), dict)
    except ToolArgumentsError as exc:
        assert exc.kind in ("invalid_json", "non_object_json")


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _spell(key: str, how: int) -> str:
    return [key, ":" + key, _camel(key), ":" + _camel(key)][how]


def _respell(value, choices, symbolic_args: bool):
    """Respell the structural keys of a record level by level, as older writers did."""
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            how = choices.draw(st.integers(0, 3))
            if key in ("arguments", "input", "args") and isinstance(child, dict):
                if symbolic_args and how in (1, 3):
                    child = {":" + k: v for k, v in child.items()}
                out[_spell(key, how)] = child
                continue
            out[_spell(key, how)] = _respell(child, choices, symbolic_args)
        return out
    if isinstance(value, list):
        return [_respell(v, choices, symbolic_args) for v in value]
    return value


plain_keys = st.text("abcdefghij", min_size=1, max_size=6)


@given(st.data(), ids, st.sampled_from(["run_shell_command", "grep", "read_file"]),
       st.dictionaries(plain_keys, scalars, max_size=4),
       st.sampled_from(["text", "object"]))
def test_every_key_spelling_of_a_record_normalizes_to_the_same_call(
    data, call_id, name, arguments, form
):
    raw_args = dumps_json(arguments) if form == "text" else arguments
    record = {"id": call_id, "type": "function",
              "function": {"name": name, "arguments": raw_args}}
    expected = normalize_tool_call(record)
    respelled = _respell(record, data, symbolic_args=True)
    got = normalize_tool_call(respelled)
    assert got == expected
    assert got.raw_name == expected.raw_name


def test_the_camel_spelling_helper_agrees_with_the_library():
    for key in ("tool_call_id", "tool_calls", "display_content", "function", "id"):
        assert snake_key(_camel(key)) == key
