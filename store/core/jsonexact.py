"""Exact JSON equality and path lookup: the reference semantics of the argument conditions,
and the functions SQLite connections register for them (``json_same``, ``json_at``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from store.core.arguments import dumps_json, loads_json
from store.core.errors import UsageError

__all__ = ["json_at", "json_same", "same_json"]



def _exact(value: Any) -> Any:
    """A value in a form whose ``==`` is JSON equality (numbers by exact value, bools apart
    from numbers, objects unordered)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int | float | Decimal):
        return ("number", Decimal(str(value)) if isinstance(value, float) else Decimal(value))
    if isinstance(value, list):
        return ("array", tuple(_exact(v) for v in value))
    if isinstance(value, Mapping):
        return ("object", frozenset((k, _exact(v)) for k, v in value.items()))
    raise UsageError(f"not a JSON value: {type(value).__name__}")


def _parse_exact(text: str) -> Any:
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


def same_json(a: Any, b: Any) -> bool:
    """JSON equality of two Python values (the semantics of ``eq``)."""
    return bool(_exact(a) == _exact(b))


def json_same(a_text: str | None, b_text: str | None) -> int | None:
    """SQLite function: whether two JSON texts are the same JSON value (exact numbers)."""
    if a_text is None or b_text is None:
        return None
    try:
        return int(_exact(_parse_exact(a_text)) == _exact(_parse_exact(b_text)))
    except (ValueError, InvalidOperation):
        return 0


def json_at(document: str | None, path_json: str | None) -> str | None:
    """SQLite function: the JSON text at a path (a JSON array of keys and indexes) of a JSON
    document, ``NULL`` when there is nothing there (a key step on an array, or the reverse)."""
    if document is None or path_json is None:
        return None
    try:
        value = loads_json(document)
    except ValueError:
        return None
    for step in orjson.loads(path_json):
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                return None
            value = value[step]
        else:
            if not isinstance(value, dict) or step not in value:
                return None
            value = value[step]
    return dumps_json(value)
