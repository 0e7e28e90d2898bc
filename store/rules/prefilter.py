"""What text a call must hold for a rule to match it: the prefilter of ``rules check``
(domain; the SQL that asks the search index is ``store/audit/detections.py``).

A rule's **requirement** is read off its condition (:func:`requirement`): clauses that must all
hold, each a set of **terms** one of which must be in the call's searchable text (the decoded
arguments, folded, that the search index holds: :mod:`store.records.searchtext`). A call that
holds no term of some clause cannot match the rule, so only the calls the index finds are
mapped and evaluated, with the full Sigma semantics (:mod:`store.rules.sigma`). ``None``: the
rule cannot be prefiltered (a ``not`` alone, a field the arguments do not hold such as
``Tool`` or ``Agent``, a regular expression without a literal of three characters); the check
then evaluates every call.

How a test gives its terms (all lower case, at least :data:`MIN_TERM` characters):

* a string value (``contains``/``startswith``/``endswith``/equals, wildcards, ``cased``): its
  longest **run** of characters other than white space, quotes and backslashes (shell
  parsing removes quotes and joins argv words with spaces, so a longer piece may not be in
  the arguments as written); for the fields made of paths (``Image``, ``ParentImage``,
  ``TargetFilename``, ``CurrentDirectory``) runs also stop at ``/`` (a path is joined with the
  session's cwd and normalised: components survive, not their joins), and for ``Arguments``
  (compact JSON) at JSON punctuation and escapes;
* a regular expression: the literals it cannot match without (sequences of literal
  characters; an alternation gives one clause of its branches' literals), by
  :mod:`re._parser`;
* a file name (``TargetFilename``): the literal with its inner slashes when it has no other
  break (or the part after a slash, with a working-directory key: :func:`_file_term`);
* a program name shorter than three characters (``Image|endswith: /rm``): the name after each
  character that can precede a command word (``"\\nrm"``, ``" rm"``, ``"|rm"``, ``"/rm"`` ...);
* ``SecretKind|exists: true``: the redaction marker (``[redacted:``), which the index holds
  wherever the detectors found a secret.

An ``Image`` that ends with a literal (``endswith``, equals) has its last component from the
command word (or, for a file event, the agent), so that component is its term. Terms of
other path fields may also come from the session's cwd or agent (:attr:`Term.context`):
the caller evaluates every call of a session whose cwd or agent holds one. What the terms
cannot see, the caller adds as candidates: calls not indexed yet, and shell command lines
whose quotes or backslashes sit inside a word (``cu''rl``), which the shell parser joins, and
paths the mapping normalises (``a/../b``, ``a/./b``, ``a//b``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["AGENT", "MIN_TERM", "SECRET_TERM", "Requirement", "Term", "requirement"]

#: Trigram indexes need three characters.
MIN_TERM = 3
#: The folded start of every redaction marker (``store.redaction``: ``[REDACTED:kind]``).
SECRET_TERM = "[redacted:"
#: A :attr:`Term.context` starting with this: only the agent (``Image`` of a file event is
#: ``/<agent>``) may end with the rest, never the cwd.
AGENT = "\x00"
#: At most this many clauses per rule (the most selective ones).
_MAX_CLAUSES = 2

_PATH_FIELDS = frozenset({"Image", "ParentImage", "TargetFilename", "CurrentDirectory"})
_TEXT_FIELDS = frozenset({"CommandLine", "ParentCommandLine", "Url", "Pattern"})
_IMAGE_FIELDS = frozenset({"Image", "ParentImage"})
#: The keys of a shell call's working directory (store.rules.events), as lines of the
#: searchable text.
_WORKDIR_KEYS = tuple(f"\n{key}\n" for key in ("workdir", "dir_path", "directory", "cwd",
                                                 "working_dir"))
_BREAK = frozenset(" \t\n\r\x0b\x0c'\"\\`")
_PATH_BREAK = _BREAK | {"/"}
_JSON_BREAK = _BREAK | set("{}[]:,")
#: What may stand before a command word in a command line (and the line break that starts
#: each value in the searchable text).
_BEFORE_WORD = ("\n", " ", "\t", ";", "|", "&", "(", "`", "/", "{", '"', "'", "\\", "=", "!",
                ")", "<", ">")


@dataclass(frozen=True, slots=True, order=True)
class Term:
    """Text the searchable text of a matching call holds, unless (a path field) the session's
    cwd or agent holds ``context``."""

    text: str
    context: str = ""
    #: Texts one of which the searchable text must hold as well (a conjunction).
    also: tuple[str, ...] = ()


#: Clauses that must all hold; each a set of terms one of which must.
Requirement = tuple[frozenset[Term], ...]


def requirement(trees: Iterable[Any]) -> Requirement | None:
    """The requirement of a rule whose conditions are the pySigma trees ``trees`` (ORed)."""
    needs = [_node(tree) for tree in trees]
    return _either(needs)


def _node(node: Any) -> Requirement | None:
    from sigma.conditions import (
        ConditionAND,
        ConditionFieldEqualsValueExpression,
        ConditionOR,
    )

    if isinstance(node, ConditionAND):
        return _both([_node(a) for a in node.args])
    if isinstance(node, ConditionOR):
        return _either([_node(a) for a in node.args])
    if isinstance(node, ConditionFieldEqualsValueExpression):
        return _field(node.field, node.value)
    return None  # not, a keyword (any field), anything else


def _score(clause: frozenset[Term]) -> tuple[int, int]:
    """Higher is more selective: the shortest term longer, fewer terms."""
    return (min(len(t.text) for t in clause), -len(clause))


def _rank(clause: frozenset[Term]) -> tuple[tuple[int, int], list[Term]]:
    return _score(clause), sorted(clause)


def _both(parts: list[Requirement | None]) -> Requirement | None:
    clauses = {c for part in parts if part for c in part}
    if not clauses:
        return None
    best = sorted(clauses, key=_rank, reverse=True)
    return tuple(best[:_MAX_CLAUSES])


def _either(parts: list[Requirement | None]) -> Requirement | None:
    """Any of ``parts``: one clause, the union of each part's most selective clause."""
    if not parts or any(p is None for p in parts):
        return None
    if len(parts) == 1:
        return parts[0]
    union: set[Term] = set()
    for part in parts:
        assert part is not None
        clauses: list[frozenset[Term]] = list(part)
        clauses.sort(key=_rank)
        union.update(clauses[-1])
    return (frozenset(union),)


def _field(name: str, value: Any) -> Requirement | None:
    from sigma import types as t

    if name == "SecretKind":
        if isinstance(value, t.SigmaExists) and not value.exists:
            return None
        return (frozenset({Term(SECRET_TERM)}),)
    if name in _PATH_FIELDS:
        kind = "path"
    elif name in _TEXT_FIELDS or name.startswith("Arguments."):
        kind = "text"
    elif name == "Arguments":
        kind = "json"
    else:
        return None  # Tool, RawTool, Agent, User, fields no event has
    if isinstance(value, t.SigmaExpansion):
        return _either([_value(name, kind, v) for v in value.values])
    return _value(name, kind, value)


def _value(name: str, kind: str, value: Any) -> Requirement | None:
    from sigma import types as t

    last = False  # an Image that ends with the literal: its last component is the program's
    if isinstance(value, t.SigmaRegularExpression):
        literals = _regex(str(value.regexp))
    elif isinstance(value, t.SigmaString):
        parts = list(value.iter_parts())
        literals = [frozenset({p}) for p in parts if isinstance(p, str)]
        last = (name in _IMAGE_FIELDS and len(literals) == 1 and isinstance(parts[-1], str)
                and "/" in parts[-1])
    else:
        return None
    clauses: list[frozenset[Term]] = []
    if last:
        word = str(parts[-1]).rsplit("/", 1)[1].lower()
        term = _term("path", word) if word else None
        if term is not None:  # the command word, or (file events) the agent: never the cwd
            return (frozenset({Term(term.text, AGENT + word)}),) if term.text == word else None
    for literal_set in literals:
        files = [_file_term(literal) for literal in literal_set] if (
            name == "TargetFilename") else []
        if files and all(f is not None for f in files):
            clauses.append(frozenset(t for f in files if f is not None for t in f))
            continue
        terms = [_term(kind, literal) for literal in literal_set]
        if terms and all(term is not None for term in terms):
            clauses.append(frozenset(term for term in terms if term is not None))
        elif name in _IMAGE_FIELDS and len(literal_set) == 1:
            short = _short_program(next(iter(literal_set)))
            if short:
                clauses.append(frozenset(Term(before + short, AGENT + short if last else short)
                                         for before in _BEFORE_WORD))
    if not clauses:
        return None
    return _both([(c,) for c in clauses])


def _file_term(literal: str) -> frozenset[Term] | None:
    """A file name's literal with its slashes (``/.kube/config`` -> ``.kube/config``): a path
    argument holds it as written, unless its first components come from the session's cwd
    (the context) or, for a shell redirection, from the call's working-directory argument:
    then the arguments hold that argument's key and the rest (``config``), or the start at the
    end of a line (``.kube\\n``: the argument's value ends there). Paths the mapping
    normalises (``/../``, ``/./``, ``//``) the caller evaluates anyway."""
    text = literal.lower().lstrip("/")
    if len(text) < MIN_TERM or any(ch in _BREAK or not " " <= ch <= "~" for ch in text):
        return None
    terms = {Term(text, text)}
    for at, ch in enumerate(text):
        if ch == "/" and text[at + 1:]:
            # the working directory ends with text[:at] (its value's line ends there, maybe
            # after a slash) and the redirection's target starts with text[at + 1:]
            rest, start = text[at + 1:], text[:at]
            if len(rest) >= len(start) + 1 and len(rest) >= MIN_TERM:
                terms.add(Term(rest, "", _WORKDIR_KEYS))
            elif len(start) + 1 >= MIN_TERM:
                terms.update(Term(start + end, "", _WORKDIR_KEYS) for end in ("\n", "/\n"))
            else:
                return None
    return frozenset(terms)


def _short_program(literal: str) -> str | None:
    """``rm`` of ``/rm`` or ``/bin/rm``: a last path component shorter than a term (the word
    a command line starts with), else None."""
    if "/" not in literal:
        return None
    program = literal.rsplit("/", 1)[1].lower()
    if not 0 < len(program) < MIN_TERM or any(ch in _PATH_BREAK for ch in program):
        return None
    return program if len(program) + 1 >= MIN_TERM else None


def _term(kind: str, literal: str) -> Term | None:
    """The longest run of ``literal`` (see the module docstring) as a term, if long enough."""
    breaks = _PATH_BREAK if kind == "path" else _JSON_BREAK if kind == "json" else _BREAK
    runs: list[str] = []
    current: list[str] = []
    skip = 0
    for i, ch in enumerate(literal.lower()):
        if skip:
            skip -= 1
            continue
        if ch in breaks or not (" " <= ch <= "~"):
            runs.append("".join(current))
            current = []
            if kind == "json" and ch == "\\":  # \n, \", \u0001 ...: the escape is not text
                skip = 5 if literal[i + 1:i + 2] == "u" else 1
            continue
        current.append(ch)
    runs.append("".join(current))
    best = max(reversed(runs), key=len)  # the last of the longest: /dev/tcp -> tcp
    if len(best) < MIN_TERM:
        return None
    return Term(best, best if kind == "path" else "")


def _regex(pattern: str) -> list[frozenset[str]]:
    """Sets of literals a regular expression needs: each set, one of its members."""
    sre = importlib.import_module("re._parser")  # the standard library's regex parser
    try:
        parsed = sre.parse(pattern)
    except Exception:  # noqa: BLE001 - pySigma accepted it; an unknown construct: no terms
        return []
    return _sequence(list(parsed))


def _sequence(items: list[Any]) -> list[frozenset[str]]:
    c = _CONSTANTS

    out: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(frozenset({"".join(run)}))
            run.clear()

    for op, arg in items:
        if op is c.LITERAL:
            run.append(chr(arg))
            continue
        flush()
        if op is c.SUBPATTERN:
            out += _sequence(list(arg[-1]))
        elif op is c.BRANCH:
            branches = [_sequence(list(b)) for b in arg[1]]
            if branches and all(branches):
                out.append(frozenset().union(*(_best(b) for b in branches)))
        elif op in _REPEATS:
            low, _, sub = arg
            if low >= 1:
                out += _sequence(list(sub))
        elif op is getattr(c, "ATOMIC_GROUP", None):
            out += _sequence(list(arg))
    flush()
    return out


_CONSTANTS: Any = importlib.import_module("re._constants")


def _repeats() -> tuple[Any, ...]:
    c = _CONSTANTS
    return tuple(getattr(c, n) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
                 if hasattr(c, n))


_REPEATS = _repeats()


def _best(sets: list[frozenset[str]]) -> frozenset[str]:
    return max(sets, key=lambda s: (min(len(x) for x in s), -len(s), sorted(s)))
