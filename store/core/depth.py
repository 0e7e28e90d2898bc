"""How deeply a JSON value nests, measured without recursion (domain: stdlib + orjson).

A value nested deeper than the recursion limit breaks every reader that walks it recursively
(Python's own ``repr`` and ``==``, orjson's encoder, which refuses more than 254 levels,
and the walks of the search text, the redactor and the exporters). So the store refuses, at
append, any stored JSON (arguments, result content, parts, extras, metadata) nested deeper
than :data:`MAX_DEPTH` (``store.core.errors.NestingTooDeep``), and the readers of values
stored before that rule (by an older version, or by SQL) measure with :func:`json_depth` /
:func:`text_depth` before they walk.

Depth counts containers: a scalar is 0 deep, ``{}`` and ``[]`` 1, ``{"a": [1]}`` 2.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

import orjson

__all__ = ["MAX_DEPTH", "deep_dumps", "json_depth", "text_depth", "text_within"]

#: The deepest nesting the store accepts: far below Python's recursion limit (1,000) and
#: below orjson's encoder limit (254 levels), so that every accepted value can be decoded,
#: encoded again, compared and walked by any reader.
MAX_DEPTH = 200

# A JSON string (its escapes skipped whole); unrolled, so linear.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def text_depth(text: str) -> int:
    """How deeply the JSON text ``text`` nests (its brackets outside strings); for text that
    is not JSON, an upper bound of the brackets' nesting. Linear, no recursion."""
    if "[" not in text and "{" not in text:
        return 0
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(0, max(accumulate(map(_STEP.__getitem__, brackets)), default=0))


def text_within(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``text`` nests at most ``limit`` deep: a count of its opening
    brackets first (the commonest answer, at C speed), then :func:`text_depth`."""
    return text.count("{") + text.count("[") <= limit or text_depth(text) <= limit


def json_depth(value: Any, limit: int | None = None) -> int:
    """How deeply the decoded JSON value ``value`` nests (iterative). With ``limit``, stops as
    soon as the depth is over it (returns ``limit + 1``)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is dict:
            children: Any = item.values()
        elif kind is list or kind is tuple:
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if limit is not None and depth > limit:
                return depth
        stack.extend((child, depth) for child in children)
    return deepest


def deep_dumps(value: Any) -> str:
    """Compact JSON text of a decoded JSON value, as orjson writes it, at any depth
    (iterative: orjson's encoder refuses more than 254 levels, and the stdlib's recurses).
    For the readers of a value stored before :data:`MAX_DEPTH` was enforced."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Close:
            out.append(item.text)
            continue
        kind = type(item)
        if kind is dict:
            out.append("{")
            stack.append(_CLOSE_OBJECT)
            entries: list[Any] = []
            for number, (key, child) in enumerate(item.items()):
                entries.append(_Close(("," if number else "") + orjson.dumps(key).decode()
                                      + ":"))
                entries.append(child)
            entries.reverse()
            stack.extend(entries)
        elif kind is list or kind is tuple:
            out.append("[")
            stack.append(_CLOSE_ARRAY)
            elements: list[Any] = []
            for number, child in enumerate(item):
                if number:
                    elements.append(_COMMA)
                elements.append(child)
            elements.reverse()
            stack.extend(elements)
        elif kind is int:
            out.append(str(item))  # exact beyond 64 bits
        else:
            out.append(orjson.dumps(item).decode())
    return "".join(out)


class _Close:
    """A piece of punctuation waiting on the stack of :func:`deep_dumps`."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_CLOSE_OBJECT = _Close("}")
_CLOSE_ARRAY = _Close("]")
_COMMA = _Close(",")
