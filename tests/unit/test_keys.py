"""Key spellings: plain, :symbol and camelCase structural keys; camelize_args."""

from __future__ import annotations

import pytest

from store import AmbiguousRecord, camelize_args
from store.core.keys import canonical_keys, snake_key, strip_symbol_keys


class TestSnakeKey:
    @pytest.mark.parametrize(
        ("key", "plain"),
        [
            ("id", "id"),
            (":id", "id"),
            ("toolCallId", "tool_call_id"),
            (":toolCallId", "tool_call_id"),
            ("tool_call_id", "tool_call_id"),
            ("functionCall", "function_call"),
            ("thoughtSignature", "thought_signature"),
            ("displayContent", "display_content"),
            ("toolUseId", "tool_use_id"),
            ("_sse_event", "_sse_event"),
        ],
    )
    def test_every_spelling_maps_to_snake_case(self, key, plain):
        assert snake_key(key) == plain


class TestCanonicalKeys:
    def test_a_plain_level_is_returned_unchanged(self):
        record = {"id": "c", "function": {}}
        assert canonical_keys(record) == (record, False)

    def test_symbol_keys_are_reported(self):
        assert canonical_keys({":id": "c", "type": "function"}) == (
            {"id": "c", "type": "function"}, True,
        )

    def test_two_spellings_with_different_values_are_ambiguous(self):
        with pytest.raises(AmbiguousRecord) as info:
            canonical_keys({"tool_call_id": "a", "toolCallId": "b"})
        assert info.value.key == "tool_call_id"
        assert "tool_call_id" in str(info.value) and "toolCallId" in str(info.value)

    def test_two_spellings_with_equal_values_are_fine(self):
        assert canonical_keys({"id": "a", ":id": "a"})[0] == {"id": "a"}

    def test_a_null_spelling_yields_to_a_value(self):
        assert canonical_keys({":id": None, "id": "a"})[0] == {"id": "a"}
        assert canonical_keys({"id": "a", ":id": None})[0] == {"id": "a"}

    def test_falsy_values_are_values(self):
        with pytest.raises(AmbiguousRecord):
            canonical_keys({"is_error": False, "isError": True})
        assert canonical_keys({"content": "", "other": 0})[0] == {"content": "", "other": 0}


class TestStripSymbolKeys:
    def test_colons_leave_keys_recursively_but_never_values(self):
        got = strip_symbol_keys({":a": [{":b": ":c"}], "d": {":e": 1}})
        assert got == {"a": [{"b": ":c"}], "d": {"e": 1}}

    def test_a_collision_with_different_values_is_ambiguous(self):
        with pytest.raises(AmbiguousRecord):
            strip_symbol_keys({":a": 1, "a": 2})


class TestCamelizeArgs:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ({"file_path": 1}, {"filePath": 1}),
            ({"a_b_c": 1}, {"aBC": 1}),
            ({"x_1": 1, "x_Y": 2}, {"x_1": 1, "x_Y": 2}),
            ({"old_str": [{"new_value": "keep_me"}]}, {"oldStr": [{"newValue": "keep_me"}]}),
            ({"_private": 1}, {"Private": 1}),
            ({"a__b": 1}, {"a_B": 1}),
            ([{"a_b": 1}, 2], [{"aB": 1}, 2]),
            ({"é_a": 1}, {"éA": 1}),
        ],
        ids=["simple", "multi", "digit-and-upper-unchanged", "nested-arrays-values-kept",
             "leading-underscore", "double-underscore", "top-level-list", "non-ascii-key"],
    )
    def test_snake_case_keys_become_camel_case(self, value, expected):
        assert camelize_args(value) == expected

    def test_on_collision_the_later_key_wins(self):
        assert camelize_args({"foo_bar": 1, "fooBar": 2}) == {"fooBar": 2}
        assert camelize_args({"fooBar": 2, "foo_bar": 1}) == {"fooBar": 1}


def test_a_shape_seen_before_reads_the_same_as_the_first_time() -> None:
    """A level's key order is remembered after its first read (an agent writes the same
    envelope on every line): later levels of that shape give the same names and values, and
    a shape whose keys collide or are symbols is never taken as plain."""
    first = {"parentUuid": "p1", "sessionId": "s", "isSidechain": False, "type": "user"}
    again = {"parentUuid": None, "sessionId": "t", "isSidechain": True, "type": "assistant"}
    for record in (first, again, first):
        out, symbolic = canonical_keys(record)
        assert not symbolic
        assert out == {"parent_uuid": record["parentUuid"], "session_id": record["sessionId"],
                       "is_sidechain": record["isSidechain"], "type": record["type"]}
        assert list(out) == ["parent_uuid", "session_id", "is_sidechain", "type"]

    # two spellings of one key: never remembered as a plain shape
    for _ in range(2):
        assert canonical_keys({"toolCallId": "c", "tool_call_id": None}) == (
            {"tool_call_id": "c"}, False)
        with pytest.raises(AmbiguousRecord):
            canonical_keys({"toolCallId": "c", "tool_call_id": "d"})
    # symbol keys: still said to be symbolic the second time
    for _ in range(2):
        assert canonical_keys({":toolCallId": "c", ":name": "x"}) == (
            {"tool_call_id": "c", "name": "x"}, True)
