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

Matching is a case-insensitive substring test (:func:`text_matches`): the needle folded by
:func:`fold` (Unicode full case folding, ``str.casefold``) is a substring of the folded text.
The index of ``store.db.index.search_index`` holds the folded text, and the needle is folded in
Python before it reaches SQL (FTS5 trigram on SQLite, pg_trgm ``LIKE`` on PostgreSQL), so
the index and the exact scan of what is not indexed yet answer the same, and neither depends
on the database's own case folding (PostgreSQL's ``lower()`` follows the database's locale,
and never folds ``ß`` to ``ss`` or ``ς`` to ``σ``). The rule, by example: ``ΣΟΦΟΣ``,
``σοφος`` and ``σοφοσ`` find each other (final sigma folds to ``σ``); ``STRASSE``,
``straße`` and ``STRAẞE`` find each other (``ß`` folds to ``ss``); Turkish dotted ``İ``
folds to ``i`` + U+0307 (so ``İSTANBUL`` finds ``i̇stanbul`` but ``istanbul`` does not find
it), and dotless ``ı`` stays itself (``ı`` and ``I`` do not find each other): there is no
locale-specific (Turkish) folding.

Only stdlib and orjson: the reference of the differential tests uses it directly.
"""

from __future__ import annotations

from typing import Any

import orjson

from store.core.arguments import loads_json

__all__ = ["call_search_text", "fold", "json_search_text", "result_search_text",
           "text_matches"]

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


def fold(text: str) -> str:
    """The one case folding of full-text search: Unicode full case folding
    (``str.casefold``), without locale or context. The index holds folded text and every
    needle is folded here, so the index and the exact scan of the unindexed tail give the
    same answers on both backends, whatever the database's own ``lower()`` does."""
    return text.casefold()


def text_matches(text: str, needle: str) -> bool:
    """Whether ``needle`` is in ``text``, case-insensitively: ``fold(needle)`` is a
    substring of ``fold(text)`` (the search's rule)."""
    return fold(needle) in fold(text)
