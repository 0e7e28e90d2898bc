"""Tool parameter schemas: declaration, freezing, JSON Schema both ways, validation, coercion."""

from __future__ import annotations

import math
import pickle
from typing import Any

import pytest

from store.core.errors import ArgumentValidationError, FrozenParametersError, ParametersError
from store.tools.schemas import Parameter, Parameters, ParametersBuilder, validate_arguments


def one(kind: str, required: bool = True, **extra: Any) -> Parameters:
    """Parameters with a single parameter ``x`` of the given kind."""
    return Parameters([Parameter("x", kind, required, **extra)])  # type: ignore[arg-type]


def read_file() -> Parameters:
    return (
        Parameters.builder()
        .required_string("path", "File to read")
        .optional_integer("limit", "Max lines")
        .required_enum("mode", ["r", "w"], "Open mode")
        .optional_boolean("follow")
        .build()
    )


READ_FILE_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read"},
        "limit": {"type": "integer", "description": "Max lines"},
        "mode": {"type": "string", "description": "Open mode", "enum": ["r", "w"]},
        "follow": {"type": "boolean"},
    },
    "required": ["path", "mode"],
}


def problems_for(params: Parameters, args: object) -> tuple[str, ...]:
    with pytest.raises(ArgumentValidationError) as caught:
        params.validate(args)
    return caught.value.problems


class TestDeclaration:
    @pytest.mark.parametrize(
        ("declare", "expected"),
        [
            (lambda b: b.required_string("a", "d"), Parameter("a", "string", True, "d")),
            (lambda b: b.optional_string("a"), Parameter("a", "string", False)),
            (lambda b: b.required_integer("a"), Parameter("a", "integer", True)),
            (lambda b: b.optional_integer("a", "d"), Parameter("a", "integer", False, "d")),
            (lambda b: b.required_number("a"), Parameter("a", "number", True)),
            (lambda b: b.optional_number("a"), Parameter("a", "number", False)),
            (lambda b: b.required_boolean("a"), Parameter("a", "boolean", True)),
            (lambda b: b.optional_boolean("a"), Parameter("a", "boolean", False)),
            (
                lambda b: b.required_enum("a", ["x", "y"], "d"),
                Parameter("a", "enum", True, "d", ("x", "y")),
            ),
            (lambda b: b.optional_enum("a", ("x",)), Parameter("a", "enum", False, "", ("x",))),
            (lambda b: b.required_string_array("a"), Parameter("a", "string_array", True)),
            (lambda b: b.optional_string_array("a"), Parameter("a", "string_array", False)),
            (lambda b: b.add(Parameter("a", "any", False)), Parameter("a", "any", False)),
        ],
        ids=[
            "required_string",
            "optional_string",
            "required_integer",
            "optional_integer",
            "required_number",
            "optional_number",
            "required_boolean",
            "optional_boolean",
            "required_enum",
            "optional_enum",
            "required_string_array",
            "optional_string_array",
            "add_any",
        ],
    )
    def test_each_declaration_method_declares_its_parameter(self, declare, expected):
        builder = Parameters.builder()
        declare(builder)
        assert tuple(builder.build()) == (expected,)

    def test_names_are_a_tuple_in_declaration_order(self):
        assert read_file().names == ("path", "limit", "mode", "follow")

    def test_iteration_yields_the_parameter_objects(self):
        assert list(read_file()) == [
            Parameter("path", "string", True, "File to read"),
            Parameter("limit", "integer", False, "Max lines"),
            Parameter("mode", "enum", True, "Open mode", ("r", "w")),
            Parameter("follow", "boolean", False),
        ]

    def test_build_with_a_function_equals_the_builder_chain(self):
        built = Parameters.build(
            lambda p: (
                p.required_string("path", "File to read")
                .optional_integer("limit", "Max lines")
                .required_enum("mode", ["r", "w"], "Open mode")
                .optional_boolean("follow")
            )
        )
        assert built == read_file()

    def test_a_builder_is_a_parameters_builder_and_chains(self):
        builder = Parameters.builder()
        assert isinstance(builder, ParametersBuilder)
        assert builder.required_string("a") is builder

    def test_lookup_by_name_and_membership(self):
        params = read_file()
        assert params["limit"] == Parameter("limit", "integer", False, "Max lines")
        assert "mode" in params
        assert "nope" not in params
        assert len(params) == 4

    @pytest.mark.parametrize(
        "declare",
        [
            lambda b: b.required_string("a").required_string("a"),
            lambda b: b.required_string("a").optional_integer("a"),
            lambda b: b.optional_enum("a", ["x"]).required_string_array("a"),
        ],
        ids=["same_kind", "required_then_optional", "enum_then_array"],
    )
    def test_a_duplicate_name_raises(self, declare):
        with pytest.raises(ParametersError, match=r"^duplicate parameter `a`$"):
            declare(Parameters.builder())

    def test_a_duplicate_name_in_the_constructor_raises(self):
        with pytest.raises(ParametersError, match=r"^duplicate parameter `a`$"):
            Parameters([Parameter("a", "string", True), Parameter("a", "integer", False)])

    def test_a_duplicate_is_not_a_frozen_error(self):
        with pytest.raises(ParametersError) as caught:
            Parameters.builder().required_string("a").required_string("a")
        assert not isinstance(caught.value, FrozenParametersError)

    @pytest.mark.parametrize(
        ("make", "message"),
        [
            (lambda: Parameter("", "string", True), "parameter name must be a non-empty string"),
            (lambda: Parameter("a", "float", True), "parameter `a` has unknown type 'float'"),  # type: ignore[arg-type]
            (lambda: Parameter("a", "string", True, "", ("x",)), "parameter `a` (string) has enum"),
            (lambda: Parameter("a", "enum", True), "enum parameter `a` needs distinct string"),
            (lambda: Parameter("a", "enum", True, "", ()), "enum parameter `a` needs distinct"),
            (lambda: Parameter("a", "enum", True, "", ("x", "x")), "enum parameter `a` needs"),
            (lambda: Parameter("a", "enum", True, "", ("x", 1)), "enum parameter `a` needs"),  # type: ignore[arg-type]
            (lambda: Parameter("a", "string", "yes"), "parameter `a`: bad required flag"),  # type: ignore[arg-type]
            (lambda: Parameter("a", "string", True, None), "parameter `a`: bad required flag"),  # type: ignore[arg-type]
            (
                lambda: Parameters.builder().required_enum("a", "rw"),
                "enum parameter `a` needs a list of values, not a string",
            ),
            (lambda: Parameters([("a", "string")]), "expected a Parameter, got tuple"),  # type: ignore[list-item]
        ],
        ids=[
            "empty_name",
            "unknown_type",
            "enum_values_on_a_string",
            "enum_without_values",
            "enum_with_no_values",
            "enum_with_repeated_values",
            "enum_with_a_non_string_value",
            "required_not_a_bool",
            "description_not_a_string",
            "enum_values_given_as_one_string",
            "not_a_parameter",
        ],
    )
    def test_a_bad_declaration_raises_parameters_error(self, make, message):
        with pytest.raises(ParametersError) as caught:
            make()
        assert str(caught.value).startswith(message)

    def test_enum_values_given_as_a_list_are_stored_as_a_tuple(self):
        assert Parameter("a", "enum", True, "", ["x"]).enum == ("x",)  # type: ignore[arg-type]


class TestFrozen:
    @pytest.mark.parametrize(
        "mutate",
        [
            lambda p: p.required_string("new"),
            lambda p: p.optional_integer("new"),
            lambda p: p.required_enum("new", ["a"]),
            lambda p: p.optional_string_array("new"),
            lambda p: p.add(Parameter("new", "any", False)),
            lambda p: p.required_string(""),
            lambda p: setattr(p, "_parameters", ()),
            lambda p: setattr(p, "extra", 1),
            lambda p: delattr(p, "_parameters"),
        ],
        ids=[
            "required_string",
            "optional_integer",
            "required_enum",
            "optional_string_array",
            "add",
            "even_an_invalid_declaration",
            "set_existing_attribute",
            "set_new_attribute",
            "delete_attribute",
        ],
    )
    def test_mutating_built_parameters_raises_and_changes_nothing(self, mutate):
        params = read_file()
        with pytest.raises(FrozenParametersError, match="^Parameters are frozen once built"):
            mutate(params)
        assert params == read_file()
        assert params.names == ("path", "limit", "mode", "follow")

    def test_the_builder_is_closed_once_built(self):
        builder = Parameters.builder().required_string("a")
        built = builder.build()
        with pytest.raises(FrozenParametersError, match="already built; cannot declare more$"):
            builder.optional_string("b")
        assert built.names == ("a",)
        assert builder.build() == built

    def test_the_frozen_error_is_a_parameters_error_and_an_attribute_error(self):
        with pytest.raises(FrozenParametersError) as caught:
            read_file().required_string("x")
        assert isinstance(caught.value, ParametersError)
        assert isinstance(caught.value, AttributeError)

    def test_a_parameter_is_immutable(self):
        parameter = Parameter("a", "string", True)
        with pytest.raises(AttributeError):
            parameter.name = "b"  # type: ignore[misc]

    def test_parameters_survive_pickling(self):
        params = read_file()
        assert pickle.loads(pickle.dumps(params)) == params


class TestEquality:
    @pytest.mark.parametrize(
        "other",
        [
            Parameters.builder().required_string("path", "other").build(),
            Parameters.builder().optional_string("path", "File").build(),
            Parameters.builder().required_integer("path", "File").build(),
            Parameters.builder().required_string("path", "File").optional_string("x").build(),
            Parameters(),
        ],
        ids=["description", "required", "type", "extra_parameter", "empty"],
    )
    def test_parameters_differing_in_any_field_are_unequal(self, other):
        assert Parameters.builder().required_string("path", "File").build() != other

    def test_declaration_order_is_part_of_equality(self):
        ab = Parameters.builder().required_string("a").required_string("b").build()
        ba = Parameters.builder().required_string("b").required_string("a").build()
        assert ab != ba

    def test_equal_parameters_are_equal_and_hash_alike(self):
        assert read_file() == read_file()
        assert hash(read_file()) == hash(read_file())
        assert len({read_file(), read_file()}) == 1

    def test_parameters_are_not_equal_to_their_schema(self):
        assert read_file() != READ_FILE_SCHEMA


class TestToJsonSchema:
    def test_it_exports_types_descriptions_enums_and_required_in_declaration_order(self):
        assert read_file().to_json_schema() == READ_FILE_SCHEMA

    def test_required_keeps_declaration_order_across_optionals(self):
        params = (
            Parameters.builder()
            .required_string("z")
            .optional_string("a")
            .required_string("m")
            .required_string("b")
            .build()
        )
        assert params.to_json_schema()["required"] == ["z", "m", "b"]
        assert list(params.to_json_schema()["properties"]) == ["z", "a", "m", "b"]

    def test_no_parameters_still_has_properties_and_required(self):
        assert Parameters().to_json_schema() == {"type": "object", "properties": {}, "required": []}

    @pytest.mark.parametrize(
        ("parameter", "expected"),
        [
            (Parameter("x", "string", True), {"type": "string"}),
            (Parameter("x", "number", True, "n"), {"type": "number", "description": "n"}),
            (Parameter("x", "enum", False, "", ("a",)), {"type": "string", "enum": ["a"]}),
            (
                Parameter("x", "string_array", True, "tags"),
                {"type": "array", "description": "tags", "items": {"type": "string"}},
            ),
            (Parameter("x", "any", True), {}),
            (Parameter("x", "any", True, "blob"), {"description": "blob"}),
        ],
        ids=["string", "number_described", "enum", "string_array", "any", "any_described"],
    )
    def test_each_kind_exports_its_property_schema(self, parameter, expected):
        assert Parameters([parameter]).to_json_schema()["properties"] == {"x": expected}

    def test_an_empty_description_is_left_out(self):
        schema = Parameters.builder().required_string("a", "").build().to_json_schema()
        assert "description" not in schema["properties"]["a"]

    def test_the_export_is_a_fresh_copy(self):
        params = read_file()
        params.to_json_schema()["properties"]["mode"]["enum"].append("x")
        assert params.to_json_schema() == READ_FILE_SCHEMA


class TestFromJsonSchema:
    @pytest.mark.parametrize(
        "params",
        [
            read_file(),
            Parameters(),
            Parameters(
                [
                    Parameter("a", "number", False, "n"),
                    Parameter("b", "string_array", True),
                    Parameter("c", "any", True, "anything"),
                    Parameter("d", "any", False),
                    Parameter("e", "enum", False, "", ("only",)),
                ]
            ),
        ],
        ids=["read_file", "empty", "every_other_kind"],
    )
    def test_parameters_round_trip_through_json_schema(self, params):
        assert Parameters.from_json_schema(params.to_json_schema()) == params

    def test_a_schema_in_the_subset_round_trips_exactly(self):
        assert Parameters.from_json_schema(READ_FILE_SCHEMA).to_json_schema() == READ_FILE_SCHEMA

    def test_required_and_properties_may_be_absent(self):
        assert Parameters.from_json_schema({"type": "object"}) == Parameters()
        assert tuple(Parameters.from_json_schema({"type": "object", "properties": {"a": {}}})) == (
            Parameter("a", "any", False),
        )

    @pytest.mark.parametrize(
        ("prop", "expected"),
        [
            ({"type": "string", "default": "x", "title": "T"}, Parameter("p", "string", True)),
            ({"type": "string", "format": "uri"}, Parameter("p", "string", True)),
            ({"type": "integer", "minimum": 1, "maximum": 9}, Parameter("p", "integer", True)),
            ({"type": "number", "examples": [1.5]}, Parameter("p", "number", True)),
            ({"type": "boolean", "default": False}, Parameter("p", "boolean", True)),
            (
                {"type": "string", "enum": ["a"], "default": "a"},
                Parameter("p", "enum", True, "", ("a",)),
            ),
            ({"enum": ["a", "b"]}, Parameter("p", "enum", True, "", ("a", "b"))),
            (
                {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 3},
                Parameter("p", "string_array", True),
            ),
            (
                {"type": "string", "description": "D", "x-extra": 1},
                Parameter("p", "string", True, "D"),
            ),
        ],
        ids=[
            "default_and_title",
            "format",
            "minimum_and_maximum",
            "examples",
            "boolean_default",
            "enum_with_default",
            "enum_without_type",
            "array_keywords",
            "vendor_keyword",
        ],
    )
    def test_extra_keywords_on_a_known_type_are_ignored(self, prop, expected):
        schema = {"type": "object", "properties": {"p": prop}, "required": ["p"]}
        assert tuple(Parameters.from_json_schema(schema)) == (expected,)

    @pytest.mark.parametrize(
        "prop",
        [
            {},
            {"description": "D"},
            {"type": "strng"},
            {"type": "null"},
            {"type": ["string", "null"]},
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "array", "items": {"type": "integer"}},
            {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
            {"type": "array"},
            {"type": "array", "items": [{"type": "string"}]},
            {"type": "integer", "enum": [1, 2]},
            {"type": "integer", "enum": ["1", "2"]},
            {"enum": ["a", 1]},
            {"$ref": "#/$defs/Thing"},
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            True,
        ],
        ids=[
            "no_type",
            "description_only",
            "unknown_type",
            "null_type",
            "multiple_types",
            "nested_object",
            "array_of_integers",
            "array_of_arrays",
            "array_without_items",
            "tuple_items",
            "integer_enum",
            "string_enum_on_integer",
            "mixed_enum",
            "ref",
            "any_of",
            "true_schema",
        ],
    )
    def test_a_complex_property_becomes_an_any_parameter(self, prop):
        schema = {"type": "object", "properties": {"p": prop}, "required": ["p"]}
        params = Parameters.from_json_schema(schema)
        description = prop.get("description", "") if isinstance(prop, dict) else ""
        assert tuple(params) == (Parameter("p", "any", True, description),)
        assert params.validate({"p": {"deep": [1, None, "x"]}}) == {"p": {"deep": [1, None, "x"]}}

    @pytest.mark.parametrize(
        "schema",
        [
            {"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema"},
            {"type": "object", "title": "Args", "description": "Tool args"},
            {"type": "object", "additionalProperties": False},
            {"type": "object", "$defs": {"Thing": {"type": "string"}}, "$comment": "c"},
        ],
        ids=["dollar_schema", "title_and_description", "no_additional_properties", "defs"],
    )
    def test_top_level_annotations_are_accepted(self, schema):
        assert Parameters.from_json_schema(schema) == Parameters()

    @pytest.mark.parametrize(
        ("schema", "message"),
        [
            (["type", "object"], "JSON Schema must be an object, got list"),
            ({"type": "array"}, 'unsupported JSON Schema: "type" must be "object", got "array"'),
            ({"properties": {}}, 'unsupported JSON Schema: "type" must be "object", it is missing'),
            (
                {"type": "object", "oneOf": [], "allOf": []},
                "unsupported JSON Schema keyword(s): allOf, oneOf",
            ),
            (
                {"type": "object", "additionalProperties": True},
                'unsupported JSON Schema: "additionalProperties" must be false '
                "(unknown arguments are always rejected)",
            ),
            ({"type": "object", "properties": []}, '"properties" must be an object, got list'),
            ({"type": "object", "required": "a"}, '"required" must be a list of strings, got "a"'),
            ({"type": "object", "required": [1]}, '"required" must be a list of strings, got [1]'),
            (
                {"type": "object", "properties": {"a": {}}, "required": ["a", "b", "c"]},
                '"required" names undeclared properties: `b`, `c`',
            ),
            (
                {"type": "object", "properties": {"a": "string"}},
                'property `a`: schema must be an object, got "string"',
            ),
            (
                {"type": "object", "properties": {"a": False}},
                "property `a`: schema must be an object, got false",
            ),
            (
                {"type": "object", "properties": {"a": {"type": "string", "description": 5}}},
                "property `a`: description must be a string",
            ),
            (
                {"type": "object", "properties": {"a": {"type": 5}}},
                "property `a`: type must be a string, got 5",
            ),
            (
                {"type": "object", "properties": {"a": {"type": "string", "enum": "ab"}}},
                "property `a`: enum must be a non-empty list",
            ),
            (
                {"type": "object", "properties": {"a": {"enum": []}}},
                "property `a`: enum must be a non-empty list",
            ),
            (
                {"type": "object", "properties": {"a": {"enum": ["x", "x"]}}},
                "enum parameter `a` needs distinct string values, got ('x', 'x')",
            ),
            (
                {"type": "object", "properties": {"": {"type": "string"}}},
                "parameter name must be a non-empty string, got ''",
            ),
            (
                {"type": "object", "properties": {1: {"type": "string"}}},
                "property names must be strings, got 1",
            ),
        ],
        ids=[
            "not_a_mapping",
            "not_an_object_type",
            "missing_type",
            "unsupported_keywords",
            "additional_properties_allowed",
            "properties_not_a_mapping",
            "required_not_a_list",
            "required_not_strings",
            "required_names_undeclared",
            "property_not_a_schema",
            "false_property_schema",
            "description_not_a_string",
            "type_not_a_string",
            "enum_not_a_list",
            "enum_empty",
            "enum_repeated",
            "empty_property_name",
            "non_string_property_name",
        ],
    )
    def test_a_schema_outside_the_subset_raises_naming_the_problem(self, schema, message):
        with pytest.raises(ParametersError) as caught:
            Parameters.from_json_schema(schema)
        assert str(caught.value) == message


class TestValidate:
    def test_valid_arguments_come_back_in_declaration_order(self):
        result = read_file().validate({"follow": True, "mode": "w", "limit": 3, "path": "a"})
        assert list(result.items()) == [
            ("path", "a"),
            ("limit", 3),
            ("mode", "w"),
            ("follow", True),
        ]

    def test_absent_optionals_are_left_out(self):
        assert read_file().validate({"mode": "r", "path": "a"}) == {"path": "a", "mode": "r"}

    @pytest.mark.parametrize(
        ("args", "expected"),
        [
            ({"path": "a", "mode": "r", "limit": None}, {"path": "a", "mode": "r"}),
            ({"path": "a", "mode": "r", "follow": None}, {"path": "a", "mode": "r"}),
        ],
        ids=["integer", "boolean"],
    )
    def test_a_null_optional_counts_as_absent(self, args, expected):
        assert read_file().validate(args) == expected

    def test_a_null_required_counts_as_missing(self):
        assert problems_for(read_file(), {"path": None, "mode": "r"}) == (
            "Missing required parameter `path` (string): File to read",
        )

    def test_the_input_is_not_changed(self):
        args = {"path": "a", "mode": "r", "limit": "5"}
        read_file().validate(args)
        assert args == {"path": "a", "mode": "r", "limit": "5"}

    def test_no_parameters_accept_an_empty_object(self):
        assert Parameters().validate({}) == {}

    @pytest.mark.parametrize(
        ("args", "name"),
        [
            ([1, 2], "list"),
            ((1, 2), "list"),
            ("{}", "str"),
            (3, "int"),
            (1.5, "float"),
            (True, "bool"),
            (None, "NoneType"),
        ],
        ids=["list", "tuple", "str", "int", "float", "bool", "none"],
    )
    def test_a_non_object_is_the_single_problem(self, args, name):
        assert problems_for(read_file(), args) == (f"Arguments must be an object, got {name}.",)

    def test_every_problem_is_reported_unknown_keys_first_then_declaration_order(self):
        args = {"follow": "yes", "pth": "a", "limit": "abc", "colour": 1, "mode": "x"}
        assert problems_for(read_file(), args) == (
            "Unknown parameter `pth`. Did you mean `path`?",
            "Unknown parameter `colour`.",
            "Missing required parameter `path` (string): File to read",
            'Parameter `limit` must be an integer, got "abc".',
            'Parameter `mode` must be one of `r`, `w`, got "x".',
            'Parameter `follow` must be a boolean, got "yes".',
        )

    @pytest.mark.parametrize(
        ("names", "key", "problem"),
        [
            (["path"], "pth", "Unknown parameter `pth`. Did you mean `path`?"),
            (["limit", "path"], "paht", "Unknown parameter `paht`. Did you mean `path`?"),
            (
                ["path_a", "path_b"],
                "path",
                "Unknown parameter `path`. Did you mean `path_a` or `path_b`?",
            ),
            (
                ["file_a", "file_b", "file_c"],
                "file",
                "Unknown parameter `file`. Did you mean `file_a`, `file_b` or `file_c`?",
            ),
            (["path"], "zzz", "Unknown parameter `zzz`."),
            ([], "path", "Unknown parameter `path`."),
            (["a1"], 1, "Unknown parameter `1`. Did you mean `a1`?"),
            (
                ["path_b", "path_a"],
                "path",
                "Unknown parameter `path`. Did you mean `path_b` or `path_a`?",
            ),
            (["pat", "path"], "pth", "Unknown parameter `pth`. Did you mean `path` or `pat`?"),
        ],
        ids=[
            "one",
            "best_of_several",
            "two",
            "three",
            "none",
            "no_parameters",
            "non_string_key",
            "ties_in_declaration_order",
            "closest_first",
        ],
    )
    def test_an_unknown_key_suggests_close_names(self, names, key, problem):
        builder = Parameters.builder()
        for name in names:
            builder.optional_string(name)
        assert problems_for(builder.build(), {key: "v"}) == (problem,)

    @pytest.mark.parametrize(
        ("declare", "problem"),
        [
            (
                lambda b: b.required_string("path", "File"),
                "Missing required parameter `path` (string): File",
            ),
            (lambda b: b.required_string("path"), "Missing required parameter `path` (string)"),
            (
                lambda b: b.required_integer("n", "Count"),
                "Missing required parameter `n` (integer): Count",
            ),
            (lambda b: b.required_number("n"), "Missing required parameter `n` (number)"),
            (lambda b: b.required_boolean("n"), "Missing required parameter `n` (boolean)"),
            (
                lambda b: b.required_enum("m", ["r", "w"], "Mode"),
                "Missing required parameter `m` (enum: `r` | `w`): Mode",
            ),
            (
                lambda b: b.required_string_array("t"),
                "Missing required parameter `t` (array of strings)",
            ),
            (lambda b: b.add(Parameter("j", "any", True)), "Missing required parameter `j` (any)"),
        ],
        ids=[
            "described",
            "undescribed",
            "integer",
            "number",
            "boolean",
            "enum",
            "string_array",
            "any",
        ],
    )
    def test_a_missing_required_parameter_names_type_and_description(self, declare, problem):
        builder = Parameters.builder()
        declare(builder)
        assert problems_for(builder.build(), {}) == (problem,)

    def test_the_message_lists_the_problems_then_the_expected_schema(self):
        params = read_file().to_json_schema()
        with pytest.raises(ArgumentValidationError) as caught:
            Parameters.from_json_schema(params).validate({"pth": "a", "mode": 1})
        assert str(caught.value) == (
            "Unknown parameter `pth`. Did you mean `path`?\n"
            "Missing required parameter `path` (string): File to read\n"
            "Parameter `mode` must be one of `r`, `w`, got 1.\n"
            "\n"
            "Expected schema:\n"
            "- path (string, required): File to read\n"
            "- limit (integer, optional): Max lines\n"
            "- mode (enum: `r` | `w`, required): Open mode\n"
            "- follow (boolean, optional)"
        )
        assert caught.value.message == str(caught.value)

    def test_the_message_for_no_parameters_says_so(self):
        with pytest.raises(ArgumentValidationError) as caught:
            Parameters().validate({"a": 1})
        assert str(caught.value) == "Unknown parameter `a`.\n\nExpected schema:\n(no parameters)"

    def test_the_error_is_a_value_error_with_a_problems_tuple(self):
        with pytest.raises(ValueError) as caught:
            read_file().validate({})
        assert isinstance(caught.value, ArgumentValidationError)
        assert caught.value.problems == (
            "Missing required parameter `path` (string): File to read",
            "Missing required parameter `mode` (enum: `r` | `w`): Open mode",
        )

    def test_a_long_value_is_cut_in_the_message(self):
        (problem,) = problems_for(one("integer"), {"x": "9" * 200 + "x"})
        assert problem == 'Parameter `x` must be an integer, got "' + "9" * 76 + "...."
        assert len(problem) == len("Parameter `x` must be an integer, got ") + 80 + 1

    def test_a_non_json_value_is_shown_with_repr(self):
        assert problems_for(one("string"), {"x": {1, 2}}) == (
            "Parameter `x` must be a string, got {1, 2}.",
        )


class TestValidateArguments:
    @pytest.mark.parametrize(
        ("args", "expected"),
        [
            ({"path": "a", "mode": "r"}, []),
            ([], ["Arguments must be an object, got list."]),
            (
                {"mode": "r", "limit": 1.5},
                [
                    "Missing required parameter `path` (string): File to read",
                    "Parameter `limit` must be an integer, got 1.5.",
                ],
            ),
        ],
        ids=["valid", "non_object", "several_problems"],
    )
    def test_it_returns_the_problems_instead_of_raising(self, args, expected):
        assert validate_arguments(read_file(), args) == expected


def accepted(kind: str, value: object, **extra: Any) -> object:
    return one(kind, **extra).validate({"x": value})["x"]


class TestIntegerCoercion:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (42, 42),
            (-3, -3),
            (0, 0),
            (2**70, 2**70),
            (1.0, 1),
            (-2.0, -2),
            (1e20, 10**20),
            ("42", 42),
            (" 7 ", 7),
            ("\t-3\n", -3),
            ("+5", 5),
            ("1.0", 1),
            ("1.", 1),
            ("-0.00", 0),
            ("123456789012345678901234567890", 123456789012345678901234567890),
        ],
        ids=[
            "int",
            "negative_int",
            "zero",
            "big_int",
            "whole_float",
            "negative_whole_float",
            "big_whole_float",
            "digits",
            "padded_digits",
            "whitespace_negative",
            "plus_sign",
            "whole_decimal_text",
            "trailing_point",
            "negative_zero_text",
            "big_digits",
        ],
    )
    def test_an_integer_accepts(self, value, expected):
        result = accepted("integer", value)
        assert result == expected
        assert type(result) is int

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            (True, "true"),
            (False, "false"),
            (1.5, "1.5"),
            (math.nan, "NaN"),
            (math.inf, "Infinity"),
            (-math.inf, "-Infinity"),
            ("abc", '"abc"'),
            ("1.5", '"1.5"'),
            ("1e3", '"1e3"'),
            ("", '""'),
            ("   ", '"   "'),
            ("1_000", '"1_000"'),
            ("0x10", '"0x10"'),
            ("١٢", '"١٢"'),
            ("nan", '"nan"'),
            ("1 2", '"1 2"'),
            ([1], "[1]"),
            ({"v": 1}, '{"v": 1}'),
        ],
        ids=[
            "true",
            "false",
            "fraction",
            "nan",
            "infinity",
            "negative_infinity",
            "letters",
            "fraction_text",
            "exponent_text",
            "empty_text",
            "blank_text",
            "underscores",
            "hex",
            "non_ascii_digits",
            "nan_text",
            "two_numbers",
            "list",
            "object",
        ],
    )
    def test_an_integer_rejects(self, value, shown):
        assert problems_for(one("integer"), {"x": value}) == (
            f"Parameter `x` must be an integer, got {shown}.",
        )

    def test_a_bool_is_not_an_integer(self):
        assert validate_arguments(one("integer"), {"x": True}) == [
            "Parameter `x` must be an integer, got true."
        ]


class TestNumberCoercion:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (3, 3),
            (2.5, 2.5),
            (-0.5, -0.5),
            (" 2.5 ", 2.5),
            ("1e3", 1000.0),
            ("-1E-2", -0.01),
            (".5", 0.5),
            ("7", 7.0),
            ("+4.", 4.0),
        ],
        ids=[
            "int",
            "float",
            "negative_float",
            "padded_text",
            "exponent_text",
            "negative_exponent_text",
            "leading_point",
            "digits_text",
            "plus_trailing_point",
        ],
    )
    def test_a_number_accepts(self, value, expected):
        result = accepted("number", value)
        assert result == expected
        assert type(result) is type(expected)

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            (True, "true"),
            (False, "false"),
            (math.nan, "NaN"),
            (math.inf, "Infinity"),
            (-math.inf, "-Infinity"),
            ("nan", '"nan"'),
            ("NaN", '"NaN"'),
            ("inf", '"inf"'),
            ("Infinity", '"Infinity"'),
            ("-Infinity", '"-Infinity"'),
            ("1e999", '"1e999"'),
            ("abc", '"abc"'),
            ("", '""'),
            ("1_0", '"1_0"'),
            ("1.2.3", '"1.2.3"'),
            (".", '"."'),
            ([2.5], "[2.5]"),
        ],
        ids=[
            "true",
            "false",
            "nan",
            "infinity",
            "negative_infinity",
            "nan_text",
            "nan_text_capitals",
            "inf_text",
            "infinity_text",
            "negative_infinity_text",
            "overflowing_text",
            "letters",
            "empty_text",
            "underscores",
            "two_points",
            "lone_point",
            "list",
        ],
    )
    def test_a_number_rejects(self, value, shown):
        assert problems_for(one("number"), {"x": value}) == (
            f"Parameter `x` must be a number, got {shown}.",
        )


class TestBooleanCoercion:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (True, True),
            (False, False),
            ("true", True),
            ("false", False),
            ("  true\n", True),
            ("\tfalse ", False),
        ],
        ids=["true", "false", "true_text", "false_text", "padded_true_text", "padded_false_text"],
    )
    def test_a_boolean_accepts(self, value, expected):
        assert accepted("boolean", value) is expected

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            ("True", '"True"'),
            ("FALSE", '"FALSE"'),
            ("yes", '"yes"'),
            ("no", '"no"'),
            ("1", '"1"'),
            ("", '""'),
            (1, "1"),
            (0, "0"),
            (1.0, "1.0"),
            ([True], "[true]"),
        ],
        ids=[
            "capital_true",
            "upper_false",
            "yes",
            "no",
            "one_text",
            "empty",
            "one",
            "zero",
            "one_float",
            "list",
        ],
    )
    def test_a_boolean_rejects(self, value, shown):
        assert problems_for(one("boolean"), {"x": value}) == (
            f"Parameter `x` must be a boolean, got {shown}.",
        )


class TestStringEnumAndArrayParameters:
    @pytest.mark.parametrize(
        "value", ["", " padded ", "42", "true"], ids=["empty", "padded", "digits", "true_text"]
    )
    def test_a_string_is_kept_exactly(self, value):
        assert accepted("string", value) == value

    @pytest.mark.parametrize(
        ("value", "shown"),
        [(5, "5"), (1.5, "1.5"), (False, "false"), (["a"], '["a"]'), ({"a": "b"}, '{"a": "b"}')],
        ids=["int", "float", "bool", "list", "object"],
    )
    def test_a_string_is_not_coerced_from_other_types(self, value, shown):
        assert problems_for(one("string"), {"x": value}) == (
            f"Parameter `x` must be a string, got {shown}.",
        )

    def test_an_enum_accepts_a_listed_value(self):
        assert accepted("enum", "w", enum=("r", "w")) == "w"

    @pytest.mark.parametrize(
        ("value", "shown"),
        [("x", '"x"'), (" r", '" r"'), ("R", '"R"'), (1, "1"), (["r"], '["r"]')],
        ids=["unlisted", "padded", "wrong_case", "int", "list"],
    )
    def test_an_enum_rejects_anything_else(self, value, shown):
        assert problems_for(one("enum", enum=("r", "w")), {"x": value}) == (
            f"Parameter `x` must be one of `r`, `w`, got {shown}.",
        )

    @pytest.mark.parametrize(
        ("value", "expected"),
        [([], []), (["a", ""], ["a", ""]), (("a", "b"), ["a", "b"])],
        ids=["empty", "strings", "tuple"],
    )
    def test_a_string_array_accepts_lists_of_strings(self, value, expected):
        result = accepted("string_array", value)
        assert result == expected
        assert type(result) is list

    @pytest.mark.parametrize(
        ("value", "problem"),
        [
            ("a", 'must be an array of strings, got "a"'),
            ('["a"]', 'must be an array of strings, got "[\\"a\\"]"'),
            ({"a": 1}, 'must be an array of strings, got {"a": 1}'),
            ([1], "must be an array of strings, got 1 at index 0"),
            (["a", "b", None, 3], "must be an array of strings, got null at index 2"),
            (["a", ["b"]], 'must be an array of strings, got ["b"] at index 1'),
        ],
        ids=["string", "json_text", "object", "first_item", "first_bad_of_two", "nested"],
    )
    def test_a_string_array_rejects_and_names_the_first_bad_index(self, value, problem):
        assert problems_for(one("string_array"), {"x": value}) == (f"Parameter `x` {problem}.",)

    @pytest.mark.parametrize(
        "value",
        [0, "s", False, [1, "a"], {"k": {"n": None}}],
        ids=["int", "str", "bool", "list", "object"],
    )
    def test_an_any_parameter_accepts_every_json_value_unchanged(self, value):
        assert accepted("any", value) == value
