"""What the call index holds for one call or one result, from its stored values (domain;
pure functions, run by the search catch-up, ``store/db/index/search_index.py``, in its worker
processes, ``store/db/index/ahead.py``, and where an import reads its files,
``store/records/prepared.py``).

A call gives its decoded, redacted, folded search text (``store.records.searchtext``,
``store.trust.secrets.index_text``), the secrets found in it (their keyed digests go to
``call_secrets``) and its argument views (``store.tools.vocabulary.argument_views``, redacted);
a result its text and secrets. ``verify`` (``store/db/index/index_check.py``) recomputes the
same with the same functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from store.core.arguments import loads_json
from store.core.logs import logger
from store.records.searchtext import call_search_text, fold, result_search_text
from store.tools.vocabulary import VIEW_NAMES, argument_views
from store.trust.secrets import index_text

__all__ = ["call_made", "make_items", "result_made", "searchable", "view_texts"]

#: (the catch-up's logger: its warnings keep the name they had before these moved here)
_log = logger("store.db.index.search_index")


def searchable(build: Callable[[str], str], stored: str, sid: str, position: int) -> str:
    """The search text of one stored item; an item whose text cannot be built (a value no
    reader can walk, stored before append refused it) is indexed with none and logged, so it
    never stops the chunk or the search (``verify`` reports it)."""
    try:
        return build(stored)
    except (ValueError, RecursionError, MemoryError) as exc:
        _log.warning("session %r, message %d: no search text (%s: %s)", sid, position,
                     type(exc).__name__, exc)
        return ""


def call_made(inputs: tuple[str, int, str, Any, str]
              ) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    """What the catch-up writes for one call, from (session, position, raw name, queryable
    arguments, wire text): its folded, redacted search text, the secrets found in it, its
    argument views."""
    sid, pos, raw_name, arguments, wire = inputs
    body, secrets = index_text(searchable(call_search_text, wire, sid, pos))
    return fold(body), secrets, list(view_texts(raw_name, arguments))


def result_made(inputs: tuple[str, int, str]) -> tuple[str, list[tuple[str, str]]]:
    """What the catch-up writes for one result, from (session, position, content): its
    folded, redacted search text and the secrets found in it."""
    sid, pos, content = inputs
    body, secrets = index_text(searchable(result_search_text, content, sid, pos))
    return fold(body), secrets


def make_items(inputs: list[tuple[Any, ...]]) -> list[Any]:
    """:func:`call_made` / :func:`result_made` of each (a worker's job: a call's inputs
    have five values, a result's three)."""
    return [call_made(i) if len(i) == 5 else result_made(i) for i in inputs]


def _redacted(value: str) -> str:
    return index_text(value)[0]


def view_texts(raw_name: str, arguments: Any, redact: Callable[[str], str] = _redacted
               ) -> Iterator[tuple[str, str]]:
    """(view, text) of each argument view a call has (``store.tools.vocabulary.argument_views``,
    from the stored queryable copy of its arguments: JSON text on SQLite, JSONB on PostgreSQL,
    whose NUL the writer made U+FFFD, as the views do)."""
    if arguments is None:
        return
    if isinstance(arguments, str | bytes):
        arguments = loads_json(arguments)
    if type(arguments) is not dict:
        return
    for view, value in zip(VIEW_NAMES, argument_views(raw_name, arguments), strict=True):
        if value is not None:
            yield view, redact(value)
