"""Message search: the query language, and what a hit is (domain; stdlib only).

**The query language** (what ``TranscriptStore.search_messages`` and ``transcript-store
search`` take), chosen so that whatever a user types is either searched as written or refused
with a :class:`~store.core.errors.SearchQueryError` naming the problem; nothing typed is read
as an operator of the engine underneath:

* ``lm studio``: words, separated by spaces; **every** word must be in the message (AND).
  ``AND``, ``OR`` and ``NOT`` are words like any other.
* ``"lm studio"``: a phrase, the words next to each other in this order.
* ``stud*``: a prefix: words starting with ``stud``. Only letters and digits go before the
  ``*``; a ``*`` anywhere else, or alone, is refused.
* ``-word`` / ``-"a phrase"``: leave out the messages that hold it. A query needs at least one
  word to find.
* Case does not matter; accents do (``cafe`` does not find ``café``). Punctuation separates
  words (``lm-studio`` is the phrase ``lm studio``; PostgreSQL also keeps a hyphenated word,
  a path or an address whole, so the backends may differ on those). A word of punctuation
  only (``-``, ``&&``) finds nothing and is left out.
* An unclosed ``"`` is refused, as is an empty phrase, a query of more than
  :data:`MAX_TERMS` terms or :data:`MAX_QUERY` characters.

**A hit** (:class:`MessageHit`) is one message: the best-ranked part of it that matched
(``role``: the message's role for its visible text, ``thinking`` for its reasoning, ``tool``
for its calls and results), with a snippet of that part whose matched words sit between
:data:`HIT_START` and :data:`HIT_END` (characters that never occur in indexed text:
:func:`MessageHit.segments` splits on them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from store.core.errors import SearchQueryError

__all__ = [
    "HIT_END",
    "HIT_START",
    "MAX_QUERY",
    "MAX_TERMS",
    "SEARCH_ROLES",
    "MessageHit",
    "QueryTerm",
    "TextQuery",
    "fts5_match",
    "parse_text_query",
]

#: The marks around a matched word in a snippet (Unicode private-use characters, taken out
#: of any text before it is indexed).
HIT_START = "\ue000"
HIT_END = "\ue001"
#: What a search can be confined to: a message role (its visible text), ``thinking`` (the
#: reasoning kept with a message) or ``tool`` (calls' names and arguments, and results).
SEARCH_ROLES = ("user", "assistant", "system", "developer", "tool", "thinking")
MAX_TERMS = 32
MAX_QUERY = 1000

_WORDISH = re.compile(r"[^\W_]")  # a letter or digit: something an engine indexes
_PREFIX = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One term: a word or phrase (``text``), a prefix (``prefix``: ``text`` is letters and
    digits), or a term to leave out (``negated``)."""

    text: str
    prefix: bool = False
    negated: bool = False


@dataclass(frozen=True, slots=True)
class TextQuery:
    """A parsed query: the terms to find (all of them) and those to leave out."""

    query: str
    terms: tuple[QueryTerm, ...]

    @property
    def positive(self) -> tuple[QueryTerm, ...]:
        return tuple(t for t in self.terms if not t.negated)

    @property
    def negative(self) -> tuple[QueryTerm, ...]:
        return tuple(t for t in self.terms if t.negated)


def parse_text_query(query: str) -> TextQuery:
    """``query`` read by the query language of this module; :class:`SearchQueryError` when it
    cannot be (the error's ``problem`` says why)."""
    if not isinstance(query, str):
        raise SearchQueryError(repr(query), "a query is text")
    if len(query) > MAX_QUERY:
        raise SearchQueryError(query[:40] + "…", f"longer than {MAX_QUERY} characters")
    terms: list[QueryTerm] = []
    i, n = 0, len(query)
    while i < n:
        if query[i].isspace():
            i += 1
            continue
        negated = False
        if query[i] == "-" and i + 1 < n and not query[i + 1].isspace():
            negated = True
            i += 1
        if query[i] == '"':
            end = query.find('"', i + 1)
            if end < 0:
                raise SearchQueryError(query, "a quote is not closed")
            phrase = query[i + 1:end].strip()
            if not phrase:
                raise SearchQueryError(query, 'an empty phrase ("")')
            i = end + 1
            if i < n and query[i] == "*":
                raise SearchQueryError(query, "a * ends a word, not a phrase")
            if _WORDISH.search(phrase):
                terms.append(QueryTerm(" ".join(phrase.split()), False, negated))
            continue
        start = i
        while i < n and not query[i].isspace() and query[i] != '"':
            i += 1
        word = query[start:i]
        prefix = word.endswith("*")
        stem = word[:-1] if prefix else word
        if "*" in stem or (prefix and not _PREFIX.fullmatch(stem)):
            raise SearchQueryError(query, f"{word!r}: a * goes at the end of a word of letters "
                                          "and digits (a prefix search)")
        if _WORDISH.search(stem):
            terms.append(QueryTerm(stem, prefix, negated))
    if len(terms) > MAX_TERMS:
        raise SearchQueryError(query, f"more than {MAX_TERMS} terms")
    if not any(not t.negated for t in terms):
        raise SearchQueryError(query, "nothing to find: a query needs a word of letters or "
                                      "digits that is not left out (-word)")
    return TextQuery(query, tuple(terms))


def _fts5_term(term: QueryTerm) -> str:
    quoted = '"' + term.text.replace('"', '""') + '"'
    return quoted + "*" if term.prefix else quoted


def fts5_match(query: TextQuery) -> str:
    """The FTS5 ``MATCH`` expression of ``query``: every term a quoted string (so nothing in
    it is an FTS5 operator), the positive ones ANDed, the negative ones taken out with
    ``NOT``."""
    found = " AND ".join(_fts5_term(t) for t in query.positive)
    if not query.negative:
        return found
    return f"({found}) NOT (" + " OR ".join(_fts5_term(t) for t in query.negative) + ")"


@dataclass(frozen=True, slots=True)
class MessageHit:
    """A message found by :meth:`TranscriptStore.search_messages`.

    ``role`` is the part of the message that matched (its role for its visible text,
    ``thinking``, ``tool``); ``snippet`` a piece of that part (redacted, as indexed) with each
    matched word between :data:`HIT_START` and :data:`HIT_END`; ``rank`` the engine's
    relevance (higher is better; comparable within one search only: SQLite's bm25 negated,
    PostgreSQL's ``ts_rank``). ``agent``, ``cwd`` and ``title`` are the session's."""

    session_id: str
    position: int
    role: str
    created_at: datetime
    agent: str | None
    cwd: str | None
    title: str | None
    snippet: str
    rank: float

    def segments(self) -> tuple[tuple[str, bool], ...]:
        """The snippet as (text, matched) pieces in order, without the marks."""
        out: list[tuple[str, bool]] = []
        rest = self.snippet
        while rest:
            start = rest.find(HIT_START)
            if start < 0:
                out.append((rest, False))
                break
            if start:
                out.append((rest[:start], False))
            end = rest.find(HIT_END, start + 1)
            if end < 0:
                end = len(rest)
            if end > start + 1:
                out.append((rest[start + 1:end], True))
            rest = rest[end + 1:]
        return tuple(out)

    @property
    def plain_snippet(self) -> str:
        """The snippet without the marks."""
        return self.snippet.replace(HIT_START, "").replace(HIT_END, "")

    def highlights(self) -> list[tuple[int, int]]:
        """(start, end) of each matched word in :attr:`plain_snippet` (characters)."""
        out: list[tuple[int, int]] = []
        at = 0
        for text, matched in self.segments():
            if matched:
                out.append((at, at + len(text)))
            at += len(text)
        return out
