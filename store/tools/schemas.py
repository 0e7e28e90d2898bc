"""Tool parameter schemas: declare, export and import JSON Schema, validate model arguments.

Contract (inherited from Pikuri's ``Tool::Parameters``):

* **Declaration.** ``Parameters.builder().required_string("path", "File to read")
  .optional_integer("limit").build()``, or ``Parameters.build(lambda p: ...)``: string, integer,
  number, boolean, enum (string values) and string array, each ``required_*``/``optional_*``.
  A duplicate name raises ``ParametersError``. Built ``Parameters`` are frozen: declaring on
  them (or on their builder again), setting or deleting an attribute raises
  ``FrozenParametersError``. Equality is by value, declaration order included.
* **Export.** ``to_json_schema()``: ``{"type": "object", "properties": {name: {"type", "description"
  (left out when empty), "enum" | "items": {"type": "string"}}}, "required": [declaration order]}``.
* **Import.** ``from_json_schema`` reads that subset back (``from_json_schema(p.to_json_schema())
  == p``). The top level must be ``"type": "object"``; annotations (``$schema``, ``title``, ...)
  and ``"additionalProperties": false`` are accepted; any other keyword, or a malformed
  ``properties``/``required``/``enum``/``description``, raises ``ParametersError`` naming it.
  Properties are read leniently so auditing real tool definitions does not fail on the first
  complex one: a known type with keywords we do not enforce (``default``, ``format``,
  ``minimum``, ...) keeps its type; no ``type``, an unknown or multiple type, a non-string enum,
  a nested object or an array of non-strings gives an **any** parameter, which accepts every
  JSON value (and exports as ``{}``).
* **Validation.** ``validate(args)`` returns only the declared keys, in declaration order, with
  coercions applied; absent optional ones are left out, and ``null`` counts as absent. Else it
  raises ``ArgumentValidationError`` with every problem at once: a non-object alone gives
  ``Arguments must be an object, got <python type>.``; otherwise unknown keys first (with a
  ``difflib`` "Did you mean"), then each declared parameter in order (``Parameter `n` must
  be ..., got ...`` or ``Missing required parameter `n` (type): description``). The message is
  the problems, a blank line, ``Expected schema:`` and one ``- name (type, required|optional):
  description`` line per parameter. ``validate_arguments`` returns the problems, never raises.
* **Coercions.** integer: ints, whole finite floats, whole base-10 strings after trimming
  (``" 7 "``, ``"1.0"``; no exponent). number: ints, finite floats, decimal strings after
  trimming (``"1e3"`` is ``1000.0``; no NaN/Infinity). boolean: ``True``/``False`` and exactly
  ``"true"``/``"false"`` after trimming. A ``bool`` is never an integer or a number. Strings,
  enum values and string arrays (list or tuple; the first bad index is named) are not coerced.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, Self, cast, get_args

from store.core.errors import ArgumentValidationError, FrozenParametersError, ParametersError

__all__ = [
    "PARAMETER_TYPES",
    "Parameter",
    "ParameterType",
    "Parameters",
    "ParametersBuilder",
    "validate_arguments",
]

ParameterType = Literal["string", "integer", "number", "boolean", "enum", "string_array", "any"]
#: Every parameter kind; ``any`` only comes from ``from_json_schema`` (or ``add``).
PARAMETER_TYPES: tuple[ParameterType, ...] = get_args(ParameterType)

# Kinds whose JSON Schema type name is the kind's own name.
_SCALARS = ("string", "integer", "number", "boolean")
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+(?:\.0*)?")
_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# Top-level keywords that only annotate: accepted and ignored by ``from_json_schema``.
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "$defs", "definitions", "title", "description", "examples"}
)
_TOP_LEVEL = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties"}
_SHOWN_MAX = 80


@dataclass(frozen=True, slots=True)
class Parameter:
    """One declared parameter; ``enum`` holds the values of an ``enum`` parameter only."""

    name: str
    type: ParameterType
    required: bool
    description: str = ""
    enum: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ParametersError(f"parameter name must be a non-empty string, got {self.name!r}")
        if self.type not in PARAMETER_TYPES:
            known = ", ".join(PARAMETER_TYPES)
            raise ParametersError(
                f"parameter `{self.name}` has unknown type {self.type!r} (known: {known})"
            )
        if not isinstance(self.required, bool) or not isinstance(self.description, str):
            raise ParametersError(f"parameter `{self.name}`: bad required flag or description")
        if self.type != "enum":
            if self.enum is not None:
                raise ParametersError(f"parameter `{self.name}` ({self.type}) has enum values")
            return
        values = () if self.enum is None or isinstance(self.enum, str) else tuple(self.enum)
        if (
            not values
            or not all(isinstance(v, str) for v in values)
            or len(set(values)) < len(values)
        ):
            raise ParametersError(
                f"enum parameter `{self.name}` needs distinct string values, got {self.enum!r}"
            )
        object.__setattr__(self, "enum", values)

    @property
    def label(self) -> str:
        """The kind as messages show it: ``string``, ``enum: `r` | `w```, ``array of strings``."""
        if self.type == "enum":
            return "enum: " + " | ".join(f"`{v}`" for v in self.enum or ())
        if self.type == "string_array":
            return "array of strings"
        return self.type


class _Declarations:
    """The declaration methods, shared by the builder and the (frozen) ``Parameters``."""

    __slots__ = ()

    def _ensure_open(self) -> None:
        raise NotImplementedError

    def _append(self, parameter: Parameter) -> None:
        raise NotImplementedError

    def add(self, parameter: Parameter) -> Self:
        """Declare a ready-made ``Parameter`` (the only way to declare an ``any`` one)."""
        self._ensure_open()
        self._append(parameter)
        return self

    def _declare(
        self,
        name: str,
        kind: ParameterType,
        required: bool,
        description: str,
        values: Iterable[str] | None = None,
    ) -> Self:
        self._ensure_open()
        if isinstance(values, str):
            raise ParametersError(f"enum parameter `{name}` needs a list of values, not a string")
        enum = None if values is None else tuple(values)
        return self.add(Parameter(name, kind, required, description, enum))

    def required_string(self, name: str, description: str = "") -> Self:
        return self._declare(name, "string", True, description)

    def optional_string(self, name: str, description: str = "") -> Self:
        return self._declare(name, "string", False, description)

    def required_integer(self, name: str, description: str = "") -> Self:
        return self._declare(name, "integer", True, description)

    def optional_integer(self, name: str, description: str = "") -> Self:
        return self._declare(name, "integer", False, description)

    def required_number(self, name: str, description: str = "") -> Self:
        return self._declare(name, "number", True, description)

    def optional_number(self, name: str, description: str = "") -> Self:
        return self._declare(name, "number", False, description)

    def required_boolean(self, name: str, description: str = "") -> Self:
        return self._declare(name, "boolean", True, description)

    def optional_boolean(self, name: str, description: str = "") -> Self:
        return self._declare(name, "boolean", False, description)

    def required_enum(self, name: str, values: Iterable[str], description: str = "") -> Self:
        return self._declare(name, "enum", True, description, values)

    def optional_enum(self, name: str, values: Iterable[str], description: str = "") -> Self:
        return self._declare(name, "enum", False, description, values)

    def required_string_array(self, name: str, description: str = "") -> Self:
        return self._declare(name, "string_array", True, description)

    def optional_string_array(self, name: str, description: str = "") -> Self:
        return self._declare(name, "string_array", False, description)


class ParametersBuilder(_Declarations):
    """Collects declarations; ``build()`` returns the frozen ``Parameters`` and closes it."""

    __slots__ = ("_built", "_parameters")

    def __init__(self) -> None:
        self._parameters: list[Parameter] = []
        self._built = False

    def _ensure_open(self) -> None:
        if self._built:
            raise FrozenParametersError("these parameters are already built; cannot declare more")

    def _append(self, parameter: Parameter) -> None:
        if any(p.name == parameter.name for p in self._parameters):
            raise ParametersError(f"duplicate parameter `{parameter.name}`")
        self._parameters.append(parameter)

    def build(self) -> Parameters:
        parameters = Parameters(self._parameters)
        self._built = True
        return parameters


class Parameters(_Declarations):
    """A frozen, ordered set of declared parameters (see the module docstring)."""

    __slots__ = ("_by_name", "_parameters")
    _by_name: Mapping[str, Parameter]
    _parameters: tuple[Parameter, ...]

    def __init__(self, parameters: Iterable[Parameter] = ()) -> None:
        by_name: dict[str, Parameter] = {}
        for parameter in parameters:
            if not isinstance(parameter, Parameter):
                raise ParametersError(f"expected a Parameter, got {type(parameter).__name__}")
            if parameter.name in by_name:
                raise ParametersError(f"duplicate parameter `{parameter.name}`")
            by_name[parameter.name] = parameter
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_parameters", tuple(by_name.values()))

    @staticmethod
    def builder() -> ParametersBuilder:
        return ParametersBuilder()

    @staticmethod
    def build(declare: Callable[[ParametersBuilder], object]) -> Parameters:
        """``Parameters.build(lambda p: p.required_string("path").optional_integer("n"))``."""
        builder = ParametersBuilder()
        declare(builder)
        return builder.build()

    def _ensure_open(self) -> None:
        raise FrozenParametersError("Parameters are frozen once built; cannot declare more")

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise FrozenParametersError(f"Parameters are frozen once built; cannot set `{name}`")

    def __delattr__(self, name: str) -> NoReturn:
        raise FrozenParametersError(f"Parameters are frozen once built; cannot delete `{name}`")

    def __reduce__(self) -> tuple[type[Parameters], tuple[tuple[Parameter, ...]]]:
        return (Parameters, (self._parameters,))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters)

    def __len__(self) -> int:
        return len(self._parameters)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> Parameter:
        return self._by_name[name]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Parameters):
            return NotImplemented
        return self._parameters == other._parameters

    def __hash__(self) -> int:
        return hash(self._parameters)

    def __repr__(self) -> str:
        return f"Parameters({self._parameters!r})"

    def to_json_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {p.name: _property_schema(p) for p in self._parameters},
            "required": [p.name for p in self._parameters if p.required],
        }

    @staticmethod
    def from_json_schema(schema: Mapping[str, Any]) -> Parameters:
        """Read the supported JSON Schema subset; see the module docstring for leniency."""
        if not isinstance(schema, Mapping):
            raise ParametersError(f"JSON Schema must be an object, got {_type_name(schema)}")
        if schema.get("type") != "object":
            found = f"got {_show(schema['type'])}" if "type" in schema else "it is missing"
            raise ParametersError(f'unsupported JSON Schema: "type" must be "object", {found}')
        unknown = sorted(str(k) for k in schema if k not in _TOP_LEVEL)
        if unknown:
            raise ParametersError(f"unsupported JSON Schema keyword(s): {', '.join(unknown)}")
        if schema.get("additionalProperties", False) is not False:
            raise ParametersError(
                'unsupported JSON Schema: "additionalProperties" must be false '
                "(unknown arguments are always rejected)"
            )
        properties = schema.get("properties", {})
        if not isinstance(properties, Mapping):
            raise ParametersError(f'"properties" must be an object, got {_type_name(properties)}')
        required = schema.get("required", [])
        if not isinstance(required, list | tuple) or not all(isinstance(r, str) for r in required):
            raise ParametersError(f'"required" must be a list of strings, got {_show(required)}')
        undeclared = [r for r in required if r not in properties]
        if undeclared:
            shown = ", ".join(f"`{r}`" for r in undeclared)
            raise ParametersError(f'"required" names undeclared properties: {shown}')
        return Parameters(
            _parameter_from_schema(name, prop, name in required)
            for name, prop in properties.items()
        )

    def validate(self, args: object) -> dict[str, Any]:
        """The validated arguments, or ``ArgumentValidationError`` listing every problem."""
        values, problems = _check(self, args)
        if problems:
            message = "\n".join(problems) + "\n\nExpected schema:\n" + _listing(self)
            raise ArgumentValidationError(message, tuple(problems))
        return values


def validate_arguments(params: Parameters, args: object) -> list[str]:
    """Every problem ``params.validate(args)`` would report; empty when valid. Never raises."""
    return _check(params, args)[1]


def _property_schema(p: Parameter) -> dict[str, Any]:
    json_type = {"enum": "string", "string_array": "array", "any": None}.get(p.type, p.type)
    schema: dict[str, Any] = {} if json_type is None else {"type": json_type}
    if p.description:
        schema["description"] = p.description
    if p.type == "enum":
        schema["enum"] = list(p.enum or ())
    elif p.type == "string_array":
        schema["items"] = {"type": "string"}
    return schema


def _parameter_from_schema(name: object, prop: object, required: bool) -> Parameter:
    if not isinstance(name, str):
        raise ParametersError(f"property names must be strings, got {name!r}")
    if prop is True:
        return Parameter(name, "any", required)
    if not isinstance(prop, Mapping):
        raise ParametersError(f"property `{name}`: schema must be an object, got {_show(prop)}")
    description = prop.get("description", "")
    if not isinstance(description, str):
        raise ParametersError(f"property `{name}`: description must be a string")
    kind = prop.get("type")
    if kind is not None and not isinstance(kind, str | list):
        raise ParametersError(f"property `{name}`: type must be a string, got {_show(kind)}")
    if "enum" in prop:
        values = prop["enum"]
        if not isinstance(values, list | tuple) or not values:
            raise ParametersError(f"property `{name}`: enum must be a non-empty list")
        if kind in (None, "string") and all(isinstance(v, str) for v in values):
            return Parameter(name, "enum", required, description, tuple(values))
    elif kind in _SCALARS:
        return Parameter(name, cast(ParameterType, kind), required, description)
    elif kind == "array":
        items = prop.get("items")
        if isinstance(items, Mapping) and items.get("type") == "string":
            return Parameter(name, "string_array", required, description)
    return Parameter(name, "any", required, description)


class _Mistyped(Exception):
    """Internal: a value does not fit; ``args[0]`` says why ("must be ..., got ...")."""


def _type_name(value: object) -> str:
    return "list" if isinstance(value, tuple) else type(value).__name__


def _show(value: object) -> str:
    """A value as JSON text (``repr`` when it is not JSON), cut to a readable length."""
    if isinstance(value, str) and len(value) > _SHOWN_MAX:
        value = value[:_SHOWN_MAX]
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= _SHOWN_MAX else text[: _SHOWN_MAX - 3] + "..."


def _or_list(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _check(params: Parameters, args: object) -> tuple[dict[str, Any], list[str]]:
    if not isinstance(args, Mapping):
        return {}, [f"Arguments must be an object, got {_type_name(args)}."]
    problems: list[str] = []
    names = list(params.names)
    for key in args:
        if key in params:
            continue
        problem = f"Unknown parameter `{key}`."
        matches = difflib.get_close_matches(str(key), names)
        # Best first; among equally close names, declaration order (difflib reverses ties).
        score = {m: difflib.SequenceMatcher(None, m, str(key)).ratio() for m in matches}
        matches.sort(key=lambda m: (-score[m], names.index(m)))
        if matches:
            problem += f" Did you mean {_or_list(matches)}?"
        problems.append(problem)
    values: dict[str, Any] = {}
    for p in params:
        value = args.get(p.name)
        if value is None:
            if p.required:
                detail = f": {p.description}" if p.description else ""
                problems.append(f"Missing required parameter `{p.name}` ({p.label}){detail}")
            continue
        try:
            values[p.name] = _coerce(p, value)
        except _Mistyped as exc:
            problems.append(f"Parameter `{p.name}` {exc.args[0]}.")
    return values, problems


def _coerce(p: Parameter, value: object) -> Any:
    kind = p.type
    if kind == "integer":
        return _integer(value)
    if kind == "number":
        return _number(value)
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip() in ("true", "false"):
            return value.strip() == "true"
        raise _Mistyped(f"must be a boolean, got {_show(value)}")
    if kind == "string":
        if isinstance(value, str):
            return value
        raise _Mistyped(f"must be a string, got {_show(value)}")
    if kind == "enum":
        if isinstance(value, str) and value in (p.enum or ()):
            return value
        allowed = ", ".join(f"`{v}`" for v in p.enum or ())
        raise _Mistyped(f"must be one of {allowed}, got {_show(value)}")
    if kind == "string_array":
        if not isinstance(value, list | tuple):
            raise _Mistyped(f"must be an array of strings, got {_show(value)}")
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise _Mistyped(f"must be an array of strings, got {_show(item)} at index {index}")
        return list(value)
    return value  # any


def _integer(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER_TEXT.fullmatch(text):
            try:
                return int(text.partition(".")[0])
            except ValueError:  # beyond the interpreter's integer-digit limit
                pass
    raise _Mistyped(f"must be an integer, got {_show(value)}")


def _number(value: object) -> int | float:
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER_TEXT.fullmatch(text):
            number = float(text)
            if math.isfinite(number):
                return number
    raise _Mistyped(f"must be a number, got {_show(value)}")


def _listing(params: Parameters) -> str:
    lines = []
    for p in params:
        line = f"- {p.name} ({p.label}, {'required' if p.required else 'optional'})"
        lines.append(line + (f": {p.description}" if p.description else ""))
    return "\n".join(lines) or "(no parameters)"
