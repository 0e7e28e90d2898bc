"""The shape of a Sigma rule document, checked before pySigma reads it (domain).

pySigma checks most of a rule, but a value of the wrong type in some places (a number as a
search identifier, a list of numbers as the condition, a number as a field name) reaches
code that raises ``TypeError`` or ``AttributeError``. :func:`check_document` walks a parsed
YAML document first and raises :class:`~store.core.errors.RuleError` saying "not a Sigma rule"
and naming the field (``detection.sel``, ``detection.condition[0]``, ``tags``) for every value
whose type a Sigma rule cannot have. It checks types only: a missing title or an unknown
modifier is left to pySigma, whose message names them. The walk visits at most
:data:`MAX_NODES` values (YAML aliases can make a small text a huge tree).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, NoReturn

from store.core.errors import RuleError

__all__ = ["MAX_NODES", "check_document"]

#: The most values one document may hold (aliases expanded).
MAX_NODES = 100_000

_Scalar = (str, int, float, bool, type(None))
_TEXT_KEYS = ("title", "id", "name", "status", "description", "author", "level", "license",
              "taxonomy", "action")
_LIST_OF_TEXT = ("tags", "references", "falsepositives", "fields", "scope")
_DATES = ("date", "modified")


def check_document(document: Any, where: str) -> None:
    """``RuleError`` ("``where``: not a Sigma rule: ...") naming the first field of
    ``document`` (one parsed YAML document; ``None``, an empty one, passes) whose type no
    Sigma rule has."""
    if document is None:
        return
    budget = [MAX_NODES]
    if not isinstance(document, Mapping):
        _fail(where, "", f"a document must be a mapping of fields, not {_kind(document)}")
    for key in document:
        if not isinstance(key, str):
            _fail(where, "", f"field name {key!r} is {_kind(key)}, not text")
    for key in _TEXT_KEYS:
        if key in document and not isinstance(document[key], str | type(None)):
            _fail(where, key, f"must be text, not {_kind(document[key])}")
    for key in _DATES:
        if key in document and not isinstance(document[key], str | datetime.date | type(None)):
            _fail(where, key, f"must be a date (yyyy-mm-dd), not {_kind(document[key])}")
    for key in _LIST_OF_TEXT:
        value = document.get(key)
        if value is None or isinstance(value, str):
            continue
        if not isinstance(value, list):
            _fail(where, key, f"must be a list of text, not {_kind(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                _fail(where, f"{key}[{i}]", f"must be text, not {_kind(item)}")
    logsource = document.get("logsource")
    if logsource is not None:
        if not isinstance(logsource, Mapping):
            _fail(where, "logsource", f"must be a mapping, not {_kind(logsource)}")
        for key, value in logsource.items():
            if not isinstance(key, str):
                _fail(where, "logsource", f"key {key!r} is {_kind(key)}, not text")
            if not isinstance(value, str | type(None)):
                _fail(where, f"logsource.{key}", f"must be text, not {_kind(value)}")
    related = document.get("related")
    if related is not None:
        if not isinstance(related, list):
            _fail(where, "related", f"must be a list, not {_kind(related)}")
        for i, item in enumerate(related):
            if not isinstance(item, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in item.items()):
                _fail(where, f"related[{i}]", "must be a mapping of id and type")
    if "detection" in document:
        _detection(document["detection"], where, budget)


def _detection(detection: Any, where: str, budget: list[int]) -> None:
    if not isinstance(detection, Mapping):
        _fail(where, "detection", f"must be a mapping, not {_kind(detection)}")
    for name, item in detection.items():
        if not isinstance(name, str):
            _fail(where, "detection", f"identifier {name!r} is {_kind(name)}, not text")
        path = f"detection.{name}"
        if name == "condition":
            conditions = item if isinstance(item, list) else [item]
            for i, condition in enumerate(conditions):
                if not isinstance(condition, str):
                    at = f"{path}[{i}]" if isinstance(item, list) else path
                    _fail(where, at, f"must be text (such as 'sel and not filter'), "
                                     f"not {_kind(condition)}")
            continue
        if name == "timeframe":
            if not isinstance(item, str):
                _fail(where, path, f"must be text (such as 5m), not {_kind(item)}")
            continue
        _search(item, where, path, budget)


def _search(item: Any, where: str, path: str, budget: list[int]) -> None:
    """A search identifier: a mapping of fields to values, a list of such mappings or of
    keywords, or one keyword."""
    _spend(budget, where, path)
    if isinstance(item, Mapping):
        _fields(item, where, path, budget)
    elif isinstance(item, list):
        for i, member in enumerate(item):
            _spend(budget, where, path)
            if isinstance(member, Mapping):
                _fields(member, where, f"{path}[{i}]", budget)
            elif not isinstance(member, _Scalar):
                _fail(where, f"{path}[{i}]", f"must be a mapping of fields or a keyword, "
                                             f"not {_kind(member)}")
    elif not isinstance(item, _Scalar):
        _fail(where, path, f"must be a mapping of fields, a list or a keyword, "
                           f"not {_kind(item)}")


def _fields(item: Mapping[Any, Any], where: str, path: str, budget: list[int]) -> None:
    for field, value in item.items():
        _spend(budget, where, path)
        if not isinstance(field, str | type(None)):
            _fail(where, path, f"field name {field!r} is {_kind(field)}, not text")
        at = f"{path}.{field}"
        values = value if isinstance(value, list) else [value]
        for i, one in enumerate(values):
            _spend(budget, where, at)
            if not isinstance(one, _Scalar):
                shown = f"{at}[{i}]" if isinstance(value, list) else at
                _fail(where, shown, f"a value must be text, a number, true/false or null, "
                                    f"not {_kind(one)}")


def _spend(budget: list[int], where: str, path: str) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        _fail(where, path, f"the document holds more than {MAX_NODES} values "
                           "(YAML aliases expanded)")


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _fail(where: str, path: str, problem: str) -> NoReturn:
    at = f"field {path!r}: " if path else ""
    raise RuleError(f"{where}: not a Sigma rule: {at}{problem}")
