"""The append fast lane (``records.codec.encode_chat_record``, issue 15) gives exactly what the
general path gives (``normalize_message`` then ``encode_message``), and declines whatever it
does not read (the general path then decides, and words any error)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.core.errors import StoreError
from store.core.model import Message
from store.normalize.messages import normalize_message
from store.records.codec import EncodedMessage, encode_chat_record, encode_message


def general(record: dict[str, Any]) -> tuple[Message, EncodedMessage]:
    message = normalize_message(record)
    return message, encode_message(message.parts, message.extras, message.metadata)


def assert_same(record: dict[str, Any]) -> None:
    fast = encode_chat_record(record)
    assert fast is not None, record
    message, encoded = fast
    want_message, want_encoded = general(record)
    assert message == want_message
    # (fields outside the dataclass equality too)
    assert message.source == want_message.source
    assert dict(message.extras) == dict(want_message.extras)
    assert dict(message.metadata) == dict(want_message.metadata)
    for got, want in zip(message.parts, want_message.parts, strict=True):
        assert type(got) is type(want)
        assert getattr(got, "source", None) == getattr(want, "source", None)
        assert dict(getattr(got, "extras", {})) == dict(getattr(want, "extras", {}))
    assert encoded == want_encoded


CALL = {"id": "call_1", "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}

ACCEPTED = [
    {"role": "user", "content": "hello"},
    {"role": "user", "content": ""},
    {"role": "system", "content": "be brief"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "assistant", "content": "two calls", "tool_calls": [
        CALL, {**CALL, "id": "call_2", "function": {"name": "bash", "arguments": ""}}]},
    {"role": "assistant", "content": "bad json", "tool_calls": [
        {**CALL, "function": {"name": "bash", "arguments": '{"cmd": "ls"'}}]},
    {"role": "assistant", "content": "a list", "tool_calls": [
        {**CALL, "function": {"name": "bash", "arguments": "[1, 2]"}}]},
    {"role": "assistant", "content": "big int", "tool_calls": [
        {**CALL, "function": {"name": "bash", "arguments": '{"n": 123456789012345678901234}'}}]},
    {"role": "assistant", "content": "no id", "tool_calls": [
        {"type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
    {"role": "assistant", "tool_calls": []},
    {"role": "assistant", "content": None, "tool_calls": [
        {**CALL, "function": {"name": "bash", "arguments": {"cmd": "ls"}}}]},  # an object
    {"role": "tool", "tool_call_id": "call_1", "content": "file text"},
    {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "x"}]},
    {"role": "tool", "content": "no id"},
    {"role": "tool", "tool_call_id": "call_1", "content": None},
]


@pytest.mark.parametrize("record", ACCEPTED, ids=range(len(ACCEPTED)))
def test_the_fast_lane_gives_what_the_general_path_gives(record: dict[str, Any]) -> None:
    assert_same(record)


DECLINED = [
    {"role": "user", "content": "hi", "id": "msg_1"},  # a message id: the general path
    {"role": "user", "content": "hi", "name": "alice"},  # name goes to extras
    {"role": "User", "content": "hi"},  # role spelling
    {"role": "developer", "content": "hi"},
    {"role": "user", "content": [{"type": "text", "text": "hi"}]},  # blocks
    {"role": "assistant", "content": None, "tool_calls": [{**CALL, "extra": 1}]},
    {"role": "assistant", "content": None, "tool_calls": {"not": "a list"}},
    {"role": "tool", "tool_call_id": 7, "content": "x"},
    {"role": "tool", "tool_call_id": "c", "content": "x", "is_error": True},
    {"role": "tool", "tool_call_id": "c", "content": {"n": 2**70, "nested": float("nan")}},
    {":role": "user", ":content": "symbol keys"},
    {"role": "function", "name": "f", "content": "legacy"},
]


@pytest.mark.parametrize("record", DECLINED, ids=range(len(DECLINED)))
def test_the_fast_lane_declines_what_it_does_not_read(record: dict[str, Any]) -> None:
    assert encode_chat_record(record) is None


def test_an_error_is_worded_by_the_general_path() -> None:
    record = {"role": "assistant", "content": None,
              "tool_calls": [{**CALL, "function": {"name": "", "arguments": "{}"}}]}
    with pytest.raises(StoreError) as general_error:
        general(record)
    with pytest.raises(type(general_error.value)) as fast_error:
        encode_chat_record(record)
    assert str(fast_error.value) == str(general_error.value)


texts = st.text(max_size=30)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
calls = st.builds(
    lambda cid, name, args: {"id": cid, "type": "function",
                             "function": {"name": name, "arguments": args}},
    st.none() | texts, st.text(min_size=1, max_size=12),
    texts | json_values.map(lambda v: __import__("json").dumps(v)),
)
records = st.one_of(
    st.builds(lambda role, content: {"role": role, "content": content},
              st.sampled_from(["user", "system", "assistant"]), st.none() | texts),
    st.builds(lambda content, listed: {"role": "assistant", "content": content,
                                       "tool_calls": listed},
              st.none() | texts, st.lists(calls, max_size=3)),
    st.builds(lambda cid, content: {"role": "tool", "tool_call_id": cid, "content": content},
              st.none() | texts, json_values),
)


@given(records)
def test_generated_records_agree(record: dict[str, Any]) -> None:
    try:
        want = general(record)
    except StoreError as exc:
        with pytest.raises(type(exc)):
            fast = encode_chat_record(record)
            if fast is None:  # declined: the general path raises
                general(record)
        return
    fast = encode_chat_record(record)
    if fast is not None:
        assert fast[0] == want[0] and fast[1] == want[1]
        assert fast[0].source == want[0].source
