"""The one strict tool-argument parser, and the canonical argument text.

Contract (inherited-behaviour §1): every path that turns tool-call arguments into a dict goes
through :func:`parse_arguments`. In order:

1. ``None`` gives ``{}``.
2. A mapping is the canonical dict (string keys required): returned as a plain ``dict``.
3. Text (``str``, or ``bytes``/``bytearray`` decoded as strict UTF-8) that is empty or only
   ASCII whitespace/NUL gives ``{}``; non-ASCII spaces are not blank.
4. Text equal to ``null`` in any letter case, after stripping, gives ``{}``.
5. Any other type raises ``unsupported_type``.
6. JSON text decoding to an object gives a dict; JSON ``null`` gives ``{}``.
7. Any other JSON value raises ``non_object_json`` (a double-encoded object is not unwrapped).
8. Text that is not JSON raises ``invalid_json``.

Decoding is exact: ``NaN``/``Infinity`` are invalid, integers beyond 64 bits stay exact ints
(orjson turns them into floats; we detect that and re-decode with the stdlib decoder), and the
last of duplicate keys wins.

:func:`dumps_arguments` gives the canonical argument text: compact, raw UTF-8, keys in the
input's order (orjson's default output). It refuses what cannot round-trip (non-string keys,
NaN, cycles, non-JSON types) with ``unsupported_type`` rather than coercing it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from store.core.errors import RecordError, ToolArgumentsError

__all__ = [
    "ARGUMENTS_STATUSES",
    "ARGUMENT_STATUSES",
    "CALL_STATUSES",
    "RESULT_STATUSES",
    "argument_status",
    "arguments_status",
    "dumps_arguments",
    "dumps_json",
    "loads_json",
    "parse_arguments",
    "parse_object_text",
    "result_status",
]

#: What storage records about a call's arguments: ``ok`` (an object), ``empty`` (no arguments:
#: absent, blank, ``null``), or the error kind of the parser.
ARGUMENT_STATUSES = ("ok", "empty", "invalid_json", "non_object_json", "unsupported_type")
#: Status filters of the call search (``store.audit.search.CallQuery``): the argument statuses,
#: ``invalid`` (any status but ``ok`` and ``empty``), ``error`` (a linked result is an error)
#: and ``no_result``. Here, in the domain, so that the command line's options need no database
#: code.
CALL_STATUSES: tuple[str, ...] = (*ARGUMENT_STATUSES, "invalid", "error", "no_result")

#: What outputs call a call's arguments' state (``arguments_status``; issue 33 item 4): the
#: stored status, with ``ok`` said as ``valid`` so that it is never read as the result's.
ARGUMENTS_STATUSES = ("valid", "empty", "invalid_json", "non_object_json", "unsupported_type")
#: What outputs call a call's result state (``result_status``): ``ok``, ``error`` (the result
#: says the call failed) or ``no_result`` (none answered it).
RESULT_STATUSES = ("ok", "error", "no_result")


def arguments_status(stored: str) -> str:
    """A call's arguments' state as outputs name it (:data:`ARGUMENTS_STATUSES`), from the
    status stored (:data:`ARGUMENT_STATUSES`)."""
    return "valid" if stored == "ok" else stored


def result_status(is_error: bool | None) -> str:
    """A call's result state as outputs name it (:data:`RESULT_STATUSES`): ``None`` is no
    result."""
    return "no_result" if is_error is None else "error" if is_error else "ok"


# ASCII whitespace and NUL: what rule 3 strips. Non-ASCII spaces (NBSP, U+3000) stay.
_BLANK = " \t\n\r\f\v\x00"
# Floats at or beyond this magnitude may be an orjson-rounded integer literal.
_BIG = 2.0**63
_JSON_TYPE_NAMES = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}


def _reject_constant(name: str) -> Any:
    raise RecordError(f"{name} is not valid JSON")  # caught: the text is invalid_json


_EXACT_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _may_hold_rounded_int(value: Any) -> bool:
    """True when a decoded value holds a float that may be a rounded big integer literal."""
    stack = [value]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            # (scalars are looked at here, not pushed: most values of an object are)
            for inner in item.values():
                kind = type(inner)
                if kind is str or kind is int or kind is bool or inner is None:
                    continue
                if kind is float:
                    if abs(inner) >= _BIG:
                        return True
                    continue
                push(inner)
        elif kind is list:
            extend(item)
        elif kind is float and abs(item) >= _BIG:
            return True
    return False


def loads_json(text: str | bytes) -> Any:
    """Decode JSON exactly (see the module contract); raises ``ValueError`` subclasses.

    orjson is the fast path; when its result holds a float large enough to be a rounded
    integer literal, the stdlib decoder re-reads the text so that big integers stay exact.
    """
    value = orjson.loads(text)
    kind = type(value)
    if (kind is dict or kind is list or kind is float) and _may_hold_rounded_int(value):
        if isinstance(text, bytes | bytearray):
            text = bytes(text).decode("utf-8")
        value = _EXACT_DECODER.decode(text)
    return value


def parse_object_text(text: str) -> dict[str, Any] | None:
    """The hot path of :func:`parse_arguments` for text: the dict when ``text`` is plainly a
    JSON object, else ``None`` (the caller then applies the full rules, which also report
    errors). Gives exactly what ``parse_arguments(text)`` gives whenever it returns a dict.
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if type(value) is not dict:
        return None
    for item in value.values():
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is float and abs(item) < _BIG:
            continue
        if (kind is dict or kind is list or kind is float) and _may_hold_rounded_int(item):
            return _EXACT_DECODER.decode(text)  # type: ignore[no-any-return]
    return value


def _type_name(value: object) -> str:
    return type(value).__name__


def parse_arguments(raw: object) -> dict[str, Any]:
    """Turn tool-call arguments into a dict, by the rules in the module docstring.

    Raises :class:`~store.core.errors.ToolArgumentsError` with ``.kind`` set.
    """
    if raw is None:
        return {}
    kind = type(raw)
    if kind is str:
        text: str = raw  # type: ignore[assignment]
    elif kind is dict or isinstance(raw, Mapping):
        return _as_dict(raw)  # type: ignore[arg-type]
    elif kind is bytes or kind is bytearray:
        try:
            text = bytes(raw).decode("utf-8")  # type: ignore[call-overload]
        except UnicodeDecodeError as exc:
            raise ToolArgumentsError(
                "invalid_json", f"tool call arguments are not valid JSON: invalid UTF-8 ({exc})"
            ) from None
    else:
        raise ToolArgumentsError(
            "unsupported_type",
            f"tool call arguments expected JSON text or an object, got {_type_name(raw)}",
        )
    stripped = text.strip(_BLANK)
    if not stripped or (len(stripped) == 4 and stripped.lower() == "null"):
        return {}
    try:
        value = loads_json(stripped)
    except (ValueError, RecursionError) as exc:
        detail = str(exc) or type(exc).__name__
        raise ToolArgumentsError(
            "invalid_json", f"tool call arguments are not valid JSON: {detail}"
        ) from None
    if type(value) is dict:
        return value
    if value is None:
        return {}
    json_type = _JSON_TYPE_NAMES.get(type(value), "value")
    raise ToolArgumentsError(
        "non_object_json", f"tool call arguments must be a JSON object, got {json_type}"
    )


def _as_dict(raw: Mapping[Any, Any]) -> dict[str, Any]:
    for key in raw:
        if type(key) is not str:
            raise ToolArgumentsError(
                "unsupported_type",
                "tool call arguments expected JSON text or an object, "
                f"got an object with a {_type_name(key)} key ({key!r})",
            )
    return raw if type(raw) is dict else dict(raw)


def argument_status(raw: object) -> str:
    """The status storage records for raw arguments.

    ``ok`` (a non-empty object), ``empty`` (no arguments: absent, blank, ``null`` or ``{}``),
    or the parser's error kind.
    """
    try:
        parsed = parse_arguments(raw)
    except ToolArgumentsError as exc:
        return exc.kind
    return "ok" if parsed else "empty"


def dumps_arguments(arguments: Mapping[str, Any]) -> str:
    """The canonical argument text: compact JSON, raw UTF-8, keys in the input's order.

    Raises ``ToolArgumentsError`` (``unsupported_type``) for anything that cannot round-trip
    exactly: non-string keys, NaN or infinite floats, cycles, values of non-JSON types.
    """
    return dumps_json(arguments)


def dumps_json(value: Any) -> str:
    """Any JSON value as canonical compact text (see :func:`dumps_arguments`)."""
    arguments = value
    try:
        text = orjson.dumps(arguments)
    except TypeError:
        # orjson refuses integers beyond 64 bits, deep nesting, non-str keys and foreign types;
        # find out which, and write big integers exactly with the stdlib encoder.
        _check_jsonable(arguments)
        try:
            return json.dumps(
                arguments, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            )
        except (ValueError, RecursionError) as exc:
            raise ToolArgumentsError(
                "unsupported_type",
                f"tool call arguments expected JSON text or an object, got {exc}",
            ) from None
    # orjson writes NaN and infinities as null: refuse them instead of fabricating a value.
    if type(arguments) is not str and b"null" in text and _has_nonfinite(arguments):
        _check_jsonable(arguments)  # (names where)
    return text.decode("utf-8")


def _has_nonfinite(value: object) -> bool:
    """Whether a value orjson has just written holds a NaN or an infinite float (all it
    writes as ``null`` that is not ``None``: its keys are strings, its strings valid and it
    has no cycle, or orjson would have refused it)."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is dict:
            extend(item.values())  # type: ignore[attr-defined]
        elif kind is list or kind is tuple:
            extend(item)  # type: ignore[arg-type]
        elif kind is float:
            if not math.isfinite(item):  # type: ignore[arg-type]
                return True
        elif kind is str or kind is int or kind is bool or item is None:
            continue  # (most values: no ABC check for them)
        elif isinstance(item, Mapping):
            extend(item.values())
        elif isinstance(item, list | tuple):
            extend(item)
    return False


def _check_jsonable(value: object) -> None:
    """Raise ``unsupported_type`` naming the first value that is not exact JSON.

    Iterative (any depth), linear in the size of the value: a path is only spelled out when
    there is something to report.
    """
    # Each entry: (value, node, leaving); nodes[i] = (parent node, key) for the error path.
    nodes: list[tuple[int, object]] = [(-1, "$")]
    on_path: set[int] = set()  # containers on the current path: seeing one again is a cycle
    stack: list[tuple[object, int, bool]] = [(value, 0, False)]

    def where(node: int) -> str:
        parts: list[str] = []
        while node > 0:
            node, key = nodes[node]
            parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
        if len(parts) > 12:
            parts = parts[:6] + [f"...({len(parts) - 12} levels)..."] + parts[-6:]
        return "$" + "".join(reversed(parts))

    while stack:
        item, node, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            continue
        kind = type(item)
        if kind is str:
            _check_text(item, node, where)  # type: ignore[arg-type]
            continue
        if item is None or kind is bool or kind is int:
            continue
        if kind is float:
            if not math.isfinite(item):  # type: ignore[arg-type]
                _unsupported(f"a non-finite number ({item!r}) at {where(node)}")
            continue
        if isinstance(item, Mapping | list | tuple):
            if id(item) in on_path:
                _unsupported(f"a cyclic structure at {where(node)}")
            on_path.add(id(item))
            stack.append((item, node, True))
            if isinstance(item, Mapping):
                for key, child in item.items():
                    if type(key) is not str:
                        _unsupported(
                            f"an object with a {_type_name(key)} key ({key!r}) at {where(node)}"
                        )
                    _check_text(key, node, where)
                    nodes.append((node, key))
                    stack.append((child, len(nodes) - 1, False))
            else:
                for index, child in enumerate(item):
                    nodes.append((node, index))
                    stack.append((child, len(nodes) - 1, False))
            continue
        if isinstance(item, str | int | float):
            continue
        _unsupported(f"a {_type_name(item)} at {where(node)}")


def _check_text(text: str, node: int, where: Callable[[int], str]) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        _unsupported(f"a string with a lone surrogate at {where(node)}")


def _unsupported(what: str) -> None:
    raise ToolArgumentsError(
        "unsupported_type", f"tool call arguments expected JSON text or an object, got {what}"
    )
