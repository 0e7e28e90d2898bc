"""The text that full-text search looks in: decoded, never JSON escape sequences (domain).

A call's searchable text is built from its **arguments as decoded JSON**: every object key,
every string (its characters, not its JSON escapes: a newline is a newline, never ``\\n``),
every number (its JSON text) and ``true``/``false``/``null``, in document order, each on a line
of its own (the text starts and ends with a line break too, so ``"\nls\n"`` finds a value
``ls`` whole).
A call whose arguments are not valid JSON contributes the recorded argument text as it is.
A result's searchable text is built the same way from its recorded content (a JSON string is
its characters). So ``--text nfoo`` never matches a newline followed by ``foo``, and ``--text
'é'`` matches whether the model wrote ``é`` or ``\\u00e9``.

Matching is a case-insensitive substring test (:func:`text_matches`: ``str.lower`` on both
sides); the indexes of ``store.db.search_index`` find the same matches (FTS5 trigram on
SQLite, pg_trgm ``ILIKE`` on PostgreSQL; both fold case per character, so the three agree for
every character whose lower case is one character).

Only stdlib and orjson: the reference of the differential tests uses it directly.
"""

from __future__ import annotations

from typing import Any

import orjson

from store.core.arguments import loads_json

__all__ = ["call_search_text", "json_search_text", "result_search_text", "text_matches"]

_SEPARATOR = "\n"


def _walk(value: Any, out: list[str]) -> None:
    """Append the searchable pieces of ``value`` in document order (iterative: a value
    stored nested deeper than the recursion limit is walked like any other)."""
    stack = [value]
    pop = stack.pop
    push = out.append
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            push(item)
        elif kind is dict:
            pairs = [piece for pair in item.items() for piece in pair]  # key (a str), value
            pairs.reverse()
            stack.extend(pairs)
        elif kind is list:
            stack.extend(reversed(item))
        elif item is None:
            push("null")
        elif item is True:
            push("true")
        elif item is False:
            push("false")
        elif kind is int:
            push(str(item))
        else:
            push(orjson.dumps(item).decode() if kind is float else str(item))


def json_search_text(value: Any) -> str:
    """The searchable text of a decoded JSON value (see the module docstring)."""
    if type(value) is str:
        return f"\n{value}\n"  # the commonest result: one string
    out: list[str] = [""]
    _walk(value, out)
    out.append("")
    return _SEPARATOR.join(out)


def call_search_text(wire_json: str) -> str:
    """The searchable text of a call, from its canonical wire record (``tool_calls.wire_json``):
    its arguments decoded, or the recorded argument text when it is not valid JSON."""
    record = orjson.loads(wire_json)
    function = record.get("function") if type(record) is dict else None
    text = function.get("arguments") if type(function) is dict else None
    if not isinstance(text, str):
        return json_search_text(text)
    try:
        return json_search_text(loads_json(text))
    except ValueError:
        return f"\n{text}\n"


def result_search_text(content_json: str) -> str:
    """The searchable text of a result, from its recorded content (``content_json``)."""
    try:
        return json_search_text(loads_json(content_json))
    except ValueError:
        return f"\n{content_json}\n"


def text_matches(text: str, needle: str) -> bool:
    """Whether ``needle`` is in ``text``, case-insensitively (the search's rule)."""
    return needle.lower() in text.lower()
