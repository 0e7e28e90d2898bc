"""Fuzzing the normalizer and the argument parser with hostile input.

Random JSON values (and records built from the real structural key names, in plain,
``:symbol`` and camelCase spellings, so that the fuzzer reaches deep into every reader) and
random bytes go through ``normalize_message``, ``normalize_tool_call``, ``normalize_payload``,
``parse_arguments`` and the append preparation (normalize + encode + limits). The contract:
they return a value or raise a ``StoreError`` subclass, nothing else (no ``TypeError``,
``KeyError``, ``AttributeError``, ``RecursionError`` ...); ``parse_arguments`` of bytes raises
only ``ToolArgumentsError``.

The default profile runs a few hundred examples per test; ``HYPOTHESIS_PROFILE=fuzz`` runs
20,000 each.
"""

from __future__ import annotations

import traceback
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store import (
    Message,
    StoreError,
    ToolArgumentsError,
    normalize_message,
    normalize_payload,
    normalize_tool_call,
    parse_arguments,
)
from store.db.writing.writer import prepare_append

# -- strategies ------------------------------------------------------------------------------

STRUCTURAL = [
    "role", "content", "tool_calls", "function", "arguments", "type", "id", "name", "parts",
    "function_call", "tool_use", "tool_call_id", "call_id", "input", "args", "output", "text",
    "message", "payload", "timestamp", "uuid", "session_id", "choices", "candidates",
    "messages", "contents", "tool_use_id", "tool_result", "function_response", "response",
    "is_error", "status", "thinking", "signature", "thought", "thought_signature", "summary",
    "error", "tool_name", "result", "reasoning_content", "tool_plan", "index", "system",
]


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.capitalize() for word in rest)


SPELLINGS = sorted({s for k in STRUCTURAL for s in (k, ":" + k, _camel(k), ":" + _camel(k))})

ROLES = ["user", "assistant", "system", "developer", "tool", "function", "model", "human",
         "ai", "toolResult", "tool_result", "ipython", "USER", "nobody", ""]
TYPES = ["function", "function_call", "custom_tool_call", "function_call_output",
         "custom_tool_call_output", "tool_use", "tool_result", "toolCall", "tool_call", "text",
         "input_text", "output_text", "thinking", "redacted_thinking", "reasoning", "message",
         "server_tool_use", "mcp_tool_use", "web_search_call", "tool_search_call",
         "tool_execution_end", "compaction", "branch_summary", "system", "user", "assistant",
         "session", "session_meta", "response_item", "event_msg", "image", "x_output",
         "x_result", ""]

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(ROLES + TYPES + ["{}", "null", '{"a": 1}', "[1]", "{", '"x"'])
)


def json_values(leaves: st.SearchStrategy[Any] = scalars) -> st.SearchStrategy[Any]:
    """Any JSON value: objects with random keys or structural key names."""
    keys = st.sampled_from(SPELLINGS) | st.text(max_size=8)
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=10,
    )


small_json = json_values()
roles = st.sampled_from(ROLES)
types = st.sampled_from(TYPES)
argument_texts = st.sampled_from(['{"path": "a"}', "{broken", "[]", "null", "", '"{}"'])


def _records(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Dicts shaped like records: structural keys, plausible values (``inner`` one level
    down) at every level."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        keys = draw(st.lists(st.sampled_from(SPELLINGS), min_size=1, max_size=5, unique=True))
        out: dict[str, Any] = {}
        for key in keys:
            plain = key.lstrip(":").lower()
            if plain == "role" and draw(st.integers(0, 3)):
                out[key] = draw(roles)
            elif plain == "type" and draw(st.integers(0, 3)):
                out[key] = draw(types)
            else:
                out[key] = draw(inner | st.lists(inner, max_size=3) | small_json | argument_texts)
        if not draw(st.integers(0, 4)):
            out[draw(st.text(max_size=6))] = draw(small_json)
        return out

    return build()


# Records nested three levels deep (a message > its calls > a function object).
_level1 = _records(small_json)
_level2 = _records(_level1)
record_like = _records(_level2)
anything = small_json | record_like | st.lists(record_like, max_size=3)

# -- the contract ----------------------------------------------------------------------------


# Bugs the fuzzer found that are not fixed yet, tolerated (only there) so that it keeps
# looking for others; each must be pinned by a strict xfail test. None at the moment.
KNOWN_BUGS: set[tuple[str, str]] = set()


def _known_bug(exc: BaseException) -> bool:
    functions = {frame.name for frame in traceback.extract_tb(exc.__traceback__)}
    return any(type(exc).__name__ == kind and where in functions for kind, where in KNOWN_BUGS)


def only_store_errors(function: Any, value: Any) -> Any:
    """Call ``function(value)``; a ``StoreError`` is fine, any other exception fails."""
    try:
        return function(value)
    except StoreError:
        return None
    except Exception as exc:  # pragma: no cover - what the fuzzer is looking for
        if _known_bug(exc):
            return None
        pytest.fail(f"{function.__name__} raised {type(exc).__name__}: {exc!r} "
                    f"for input {value!r}")


def _prepare_one(value: Any) -> Any:
    return prepare_append([value], ["k"])


@given(anything)
def test_every_entry_point_returns_or_raises_a_store_error(value):
    """One hostile value through every entry point (drawing the value is the costly part)."""
    message = only_store_errors(normalize_message, value)
    assert message is None or isinstance(message, Message)
    only_store_errors(normalize_tool_call, value)
    messages = only_store_errors(normalize_payload, value)
    assert messages is None or all(isinstance(m, Message) for m in messages)
    # What ``append`` does before touching the database: normalize, encode, check limits.
    only_store_errors(_prepare_one, value)
    try:
        parsed = parse_arguments(value)
    except ToolArgumentsError:
        pass
    else:
        assert type(parsed) is dict


@given(st.binary(max_size=200))
def test_parse_arguments_of_bytes_raises_only_tool_arguments_error(data):
    for raw in (data, bytearray(data)):
        try:
            parsed = parse_arguments(raw)
        except ToolArgumentsError:
            continue
        assert type(parsed) is dict


@given(json_values())
def test_parse_arguments_of_json_text_agrees_with_the_value(value):
    """Text of a random JSON value: an object gives that object, null gives {}, anything
    else a ``ToolArgumentsError``."""
    import json

    text = json.dumps(value, ensure_ascii=False)
    try:
        parsed = parse_arguments(text)
    except ToolArgumentsError as exc:
        assert not isinstance(value, dict) and value is not None
        assert exc.kind == "non_object_json"
        return
    assert parsed == (value if isinstance(value, dict) else {})


@given(st.binary(max_size=200))
def test_the_normalizer_refuses_bytes_with_store_errors(data):
    for function in (normalize_message, normalize_tool_call, normalize_payload, _prepare_one):
        only_store_errors(function, data)
    # Bytes where text or arguments are expected inside a record.
    for record in ({"role": "user", "content": data},
                   {"role": "assistant", "tool_calls": [
                       {"id": "c", "type": "function",
                        "function": {"name": "f", "arguments": data}}]},
                   {"type": "function_call", "call_id": "c", "name": "f", "arguments": data},
                   {"id": "c", "type": "function", "function": {"name": "f", "arguments": data}}):
        for function in (normalize_message, normalize_tool_call, _prepare_one):
            only_store_errors(function, record)


@given(st.binary(max_size=200))
def test_decoded_bytes_as_text_go_through_without_surprises(data):
    """Random bytes decoded leniently (lone surrogates included) as text fields."""
    text = data.decode("utf-8", "surrogateescape")
    for raw in (text, data.decode("latin-1")):
        only_store_errors(parse_arguments, raw)
        for record in ({"role": "user", "content": raw},
                       {"role": "assistant", "tool_calls": [
                           {"id": raw, "type": "function",
                            "function": {"name": raw or "f", "arguments": raw}}]},
                       {"role": "tool", "tool_call_id": raw, "content": raw}):
            only_store_errors(normalize_message, record)
            only_store_errors(_prepare_one, record)


# -- bugs found by the fuzzer -----------------------------------------------------------------

NOT_AN_OBJECT = [
    pytest.param({"role": "model", "parts": [{"functionResponse": []}]}, id="gemini-list"),
    pytest.param({"parts": [{"function_response": "done"}]}, id="gemini-text"),
    pytest.param({"role": "user", "content": [{"toolResult": "done"}]}, id="bedrock-text"),
    pytest.param({"role": "user", "content": [{"toolResult": ["done"]}]}, id="bedrock-list"),
]


@pytest.mark.parametrize("record", NOT_AN_OBJECT)
def test_a_result_body_that_is_not_an_object_is_an_unrecognized_record(record):
    from store import UnrecognizedRecord

    with pytest.raises(UnrecognizedRecord):
        normalize_message(record)
