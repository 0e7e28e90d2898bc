"""Key spellings: reading structural keys in any spelling, and camelCase for presentation.

Older records spell a structural key three ways, mixed at any depth (inherited-behaviour §4):
plain (``tool_call_id``), Ruby-symbol style (``":tool_call_id"``, from YAML or Oj dumps) and
camelCase (``toolCallId``). Providers add their own camelCase (Gemini ``functionCall``, Bedrock
``toolUseId``). :func:`canonical_keys` reads one structural level and returns it with every key
in plain snake_case, so the normalizer reads one spelling only. When two spellings of one key
carry different non-null values the record is ambiguous and :class:`AmbiguousRecord` names the
key. Keys *inside* tool arguments are the tool's data and are never renamed here, except that
:func:`strip_symbol_keys` removes the colon of a symbol-keyed Ruby hash.

:func:`camelize_args` is Kward's presentation helper (snake_case to camelCase keys, recursive
through arrays; only ``_`` followed by an ASCII lowercase letter changes; the later key wins a
collision). Stored arguments never go through it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from store.core.errors import AmbiguousRecord

__all__ = ["camelize_args", "canonical_keys", "snake_key", "strip_symbol_keys"]

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])([A-Z])")
_SNAKE_LOWER = re.compile(r"_([a-z])")
# Memo of key -> snake_case key. Structural key names are few; arbitrary keys are bounded below.
_SNAKE: dict[str, str] = {}
_SNAKE_LIMIT = 4096


def snake_key(key: str) -> str:
    """The plain snake_case spelling of a structural key: ``":toolCallId"`` -> ``tool_call_id``."""
    found = _SNAKE.get(key)
    if found is not None:
        return found
    plain = key[1:] if key.startswith(":") else key
    if not plain.islower() or not plain.replace("_", "").isalnum():
        plain = _CAMEL_BOUNDARY.sub(r"_\1", plain).lower() if plain[:1] != "_" else plain
    if len(_SNAKE) < _SNAKE_LIMIT:
        _SNAKE[key] = plain
    return plain


# Plain structural keys seen in provider records: a level whose keys all come from here needs
# no renaming, so canonical_keys returns it as is (the hot path for well-formed records).
_PLAIN_KEYS = frozenset(
    "id type function name arguments index role content tool_calls tool_call_id call_id "
    "input args output status text caller is_error tool_use_id refusal reasoning_content "
    "function_call annotations audio prefix tool_plan thinking signature".split()
)


# Memo of a level's keys, in order, -> their plain names, for levels whose keys are all
# strings, none symbol-style, no two sharing a plain name (then renaming is a zip; agents write
# the same few shapes of envelope on every line). Bounded like _SNAKE, and to small levels.
_SHAPES: dict[tuple[str, ...], tuple[str, ...]] = {}
_SHAPES_LIMIT = 4096
_SHAPE_KEYS = 64


def canonical_keys(record: Mapping[str, Any]) -> tuple[Mapping[str, Any], bool]:
    """One structural level with snake_case keys, and whether any key was symbol-style.

    A key given in two spellings with different non-null values raises ``AmbiguousRecord``;
    a null beside a value yields the value. Non-string keys raise ``AmbiguousRecord`` too.
    The result must be treated as read-only: a level that needs no renaming is returned as is.
    """
    if record.keys() <= _PLAIN_KEYS:
        return record, False
    shape = tuple(record)
    names = _SHAPES.get(shape)
    if names is not None:  # keys seen before in this order, none sharing a plain name
        return dict(zip(names, record.values(), strict=False)), False  # (same length)
    out: dict[str, Any] = {}
    origin: dict[str, str] = {}
    symbolic = False
    for key, value in record.items():
        if type(key) is not str:
            raise AmbiguousRecord(repr(key), (repr(key),))
        name = _SNAKE.get(key) or snake_key(key)
        if key[:1] == ":":
            symbolic = True
        if name in out:
            before = out[name]
            if before is None:
                out[name] = value
                origin[name] = key
            elif value is not None and before != value:
                raise AmbiguousRecord(name, (origin.get(name, name), key))
            continue
        out[name] = value
        if name != key:
            origin[name] = key
    if (not symbolic and len(out) == len(shape) <= _SHAPE_KEYS
            and len(_SHAPES) < _SHAPES_LIMIT):
        _SHAPES[shape] = tuple(out)
    return out, symbolic


def strip_symbol_keys(value: Any) -> Any:
    """Remove the leading colon of every key of a symbol-keyed Ruby hash, recursively.

    Values (strings included) are never touched. Two keys that collide after stripping with
    different values raise ``AmbiguousRecord``.
    """
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, child in value.items():
            name = key[1:] if isinstance(key, str) and key.startswith(":") else key
            stripped = strip_symbol_keys(child)
            if name in out and out[name] != stripped:
                raise AmbiguousRecord(str(name), (str(name), f":{name}"))
            out[name] = stripped
        return out
    if isinstance(value, list | tuple):
        return [strip_symbol_keys(child) for child in value]
    return value


def _camel(key: str) -> str:
    return _SNAKE_LOWER.sub(lambda m: m.group(1).upper(), key)


def camelize_args(value: Any) -> Any:
    """snake_case keys to camelCase, recursively through objects and arrays (presentation only).

    Only ``_`` followed by an ASCII lowercase letter changes; when two keys collide the later
    one wins. Values are never changed.
    """
    if isinstance(value, Mapping):
        return {
            (_camel(key) if isinstance(key, str) else key): camelize_args(child)
            for key, child in value.items()
        }
    if isinstance(value, list | tuple):
        return [camelize_args(child) for child in value]
    return value
