"""The one strict argument parser (inherited-behaviour §1) and the canonical argument text."""

from __future__ import annotations

import math
from collections import OrderedDict

import pytest

from store import ToolArgumentsError, argument_status, dumps_arguments, parse_arguments
from store.core.arguments import loads_json

EMPTY_CASES = [
    (None, "none"),
    ("", "empty-text"),
    ("   \t\n\r ", "ascii-whitespace"),
    ("\x00\x00", "nul"),
    (" \x00null\n", "null-padded"),
    ("NULL", "null-upper"),
    ("nUlL", "null-mixed"),
    (b"", "empty-bytes"),
    (bytearray(b" null "), "null-bytearray"),
    ("{}", "empty-object"),
]


class TestParseArguments:
    @pytest.mark.parametrize("raw", [c[0] for c in EMPTY_CASES], ids=[c[1] for c in EMPTY_CASES])
    def test_no_arguments_give_an_empty_dict(self, raw):
        assert parse_arguments(raw) == {}

    def test_a_mapping_is_returned_as_the_canonical_dict(self):
        raw = {"path": "a.txt", ":keep": 1}
        assert parse_arguments(raw) is raw

    def test_a_non_dict_mapping_becomes_a_plain_dict(self):
        from types import MappingProxyType

        got = parse_arguments(MappingProxyType({"a": 1}))
        assert type(got) is dict and got == {"a": 1}

    def test_a_mapping_with_a_non_string_key_is_rejected(self):
        with pytest.raises(ToolArgumentsError) as info:
            parse_arguments({1: "x"})
        assert info.value.kind == "unsupported_type"
        assert "int key" in str(info.value)

    @pytest.mark.parametrize(
        ("raw", "type_name"),
        [([1], "list"), (3, "int"), (2.5, "float"), (True, "bool"), ((1,), "tuple")],
        ids=["list", "int", "float", "bool", "tuple"],
    )
    def test_other_types_raise_unsupported_type(self, raw, type_name):
        with pytest.raises(ToolArgumentsError) as info:
            parse_arguments(raw)
        assert info.value.kind == "unsupported_type"
        assert str(info.value) == (
            f"tool call arguments expected JSON text or an object, got {type_name}"
        )

    @pytest.mark.parametrize(
        ("raw", "json_type"),
        [
            ("[1, 2]", "array"),
            ("42", "number"),
            ("1.5", "number"),
            ('"text"', "string"),
            ("true", "boolean"),
            ('"{\\"a\\":1}"', "string"),
        ],
        ids=["array", "int", "float", "string", "boolean", "double-encoded-object"],
    )
    def test_non_object_json_raises_non_object_json(self, raw, json_type):
        with pytest.raises(ToolArgumentsError) as info:
            parse_arguments(raw)
        assert info.value.kind == "non_object_json"
        assert str(info.value) == f"tool call arguments must be a JSON object, got {json_type}"

    @pytest.mark.parametrize(
        "raw",
        [
            '{"subject": "Invitation to attend',
            "{'a': 1}",
            '{"a": NaN}',
            '{"a": Infinity}',
            '{"a": -Infinity}',
            '{"a": 1e400}',
            "\u00a0{}",
            "{}\u3000",
            "nul",
            b"\xff\xfe",
        ],
        ids=[
            "truncated", "single-quotes", "nan", "infinity", "minus-infinity", "overflow",
            "nbsp-is-not-blank", "ideographic-space-is-not-blank", "almost-null", "bad-utf8",
        ],
    )
    def test_text_that_is_not_json_raises_invalid_json(self, raw):
        with pytest.raises(ToolArgumentsError) as info:
            parse_arguments(raw)
        assert info.value.kind == "invalid_json"
        assert str(info.value).startswith("tool call arguments are not valid JSON: ")
        assert isinstance(info.value, ValueError)

    def test_json_null_gives_an_empty_dict(self):
        assert parse_arguments(" null ") == {}

    def test_integers_beyond_64_bits_stay_exact(self):
        big = 2**80 + 1
        got = parse_arguments(f'{{"n": {big}, "m": [-{big}], "f": 1.5}}')
        assert got == {"n": big, "m": [-big], "f": 1.5}
        assert type(got["n"]) is int

    def test_the_largest_unsigned_64_bit_integer_stays_exact(self):
        assert parse_arguments('{"n": 18446744073709551615}') == {"n": 18446744073709551615}

    def test_large_floats_are_not_turned_into_integers(self):
        got = parse_arguments('{"f": 1e300}')
        assert got == {"f": 1e300} and type(got["f"]) is float

    def test_duplicate_keys_keep_the_last_value(self):
        assert parse_arguments('{"a": 1, "a": 2}') == {"a": 2}

    def test_bytes_are_decoded_as_utf8(self):
        assert parse_arguments('{"t": "°C"}'.encode()) == {"t": "°C"}

    def test_the_error_pickles_with_its_kind(self):
        import pickle

        err = ToolArgumentsError("invalid_json", "tool call arguments are not valid JSON: x")
        back = pickle.loads(pickle.dumps(err))
        assert back.kind == "invalid_json" and str(back) == str(err)


class TestArgumentStatus:
    @pytest.mark.parametrize(
        ("raw", "status"),
        [
            ('{"a": 1}', "ok"),
            ({"a": 1}, "ok"),
            (None, "empty"),
            ("", "empty"),
            ("{}", "empty"),
            ("null", "empty"),
            ("[1]", "non_object_json"),
            ("{", "invalid_json"),
            (5, "unsupported_type"),
        ],
    )
    def test_status_names_the_outcome(self, raw, status):
        assert argument_status(raw) == status


class TestDumpsArguments:
    def test_output_is_compact_raw_utf8_in_key_order(self):
        text = dumps_arguments({"z": "é/<>&", "a": [1, {"b": None}]})
        assert text == '{"z":"é/<>&","a":[1,{"b":null}]}'

    def test_big_integers_are_written_exactly(self):
        assert dumps_arguments({"n": 2**70}) == '{"n":1180591620717411303424}'

    @pytest.mark.parametrize(
        ("value", "fragment"),
        [
            ({"x": math.nan}, "non-finite"),
            ({"x": math.inf}, "non-finite"),
            ({"x": {1: 2}}, "int key"),
            ({"x": object()}, "object at $.x"),
            ({"x": "\ud800"}, "lone surrogate"),
        ],
        ids=["nan", "inf", "int-key", "object", "surrogate"],
    )
    def test_values_that_cannot_round_trip_are_refused(self, value, fragment):
        with pytest.raises(ToolArgumentsError) as info:
            dumps_arguments(value)
        assert info.value.kind == "unsupported_type"
        assert fragment in str(info.value)

    @pytest.mark.parametrize(
        "value",
        [
            {"a": None, "b": [1.5, {"c": math.nan}]},
            {"a": OrderedDict({"b": None, "c": -math.inf})},
            {"x": None, "y": (1, (math.inf,))},
            {"s": "text", "t": True, "n": 3, "z": None, "l": ["x", False, 7, None, math.nan]},
        ],
        ids=["nested", "mapping", "tuple", "after scalars"],
    )
    def test_a_non_finite_number_beside_nulls_is_refused(self, value):
        # (orjson writes both as null: the nulls must not hide it)
        with pytest.raises(ToolArgumentsError, match="non-finite"):
            dumps_arguments(value)

    def test_nulls_and_finite_floats_are_written(self):
        value = {"a": None, "b": [0.5, None, {"c": 1e308, "d": -0.0}], "e": OrderedDict(f=None)}
        assert dumps_arguments(value) == \
            '{"a":null,"b":[0.5,null,{"c":1e+308,"d":-0.0}],"e":{"f":null}}'

    def test_a_cycle_is_refused(self):
        value: dict = {"a": []}
        value["a"].append(value)
        with pytest.raises(ToolArgumentsError, match="cyclic"):
            dumps_arguments(value)

    def test_a_shared_subtree_is_not_a_cycle(self):
        shared = [1, 2]
        assert dumps_arguments({"a": shared, "b": shared}) == '{"a":[1,2],"b":[1,2]}'

    def test_a_real_null_is_kept(self):
        assert dumps_arguments({"a": None}) == '{"a":null}'


class TestLoadsJson:
    def test_deep_nesting_is_a_value_error_not_a_crash(self):
        with pytest.raises(ValueError):
            loads_json("[" * 100_000 + "]" * 100_000)
