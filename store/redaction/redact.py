"""Secret redaction for every output that shows transcripts (domain: stdlib only).

``Redactor()`` finds secrets with the built-in detectors (:mod:`store.redaction.detectors`, listed
below) and the caller's own patterns, and replaces each one with a marker naming what it was:
``[REDACTED:<kind>]``. Only the secret itself is replaced: ``Bearer [REDACTED:bearer_token]``,
``postgres://app:[REDACTED:url_password]@db/x``, ``"password": "[REDACTED:password]"``.

Built-in kinds (most specific first; gitleaks' and detect-secrets' rule lists are the
reference): ``private_key`` (PEM, OpenSSH, PGP blocks; to the END line, or without one to the
end of the key body, as ``head id_rsa`` prints it; JSON-escaped newlines too),
``anthropic_api_key``, ``openai_api_key``, ``aws_access_key_id``, ``github_token``,
``gitlab_token``, ``slack_token``, ``slack_app_token``, ``slack_webhook``, ``stripe_key``,
``google_api_key``, ``huggingface_token``, ``npm_token``, ``pypi_token``, ``twilio_key``,
``sendgrid_api_key``, ``mailgun_api_key``, ``discord_webhook``, ``discord_bot_token``,
``aws_secret_access_key`` (also the camelCase ``"SecretAccessKey"`` of ``aws sts``),
``aws_session_token``, ``azure_storage_key``, ``db_password`` (``;Password=`` of connection
strings), ``bearer_token``, ``basic_auth``, ``cli_password`` (``curl -u user:pw``),
``url_password``, ``jwt``, ``password`` (the value of a ``password`` / ``passwd`` /
``passphrase`` key: ``k=v``, ``k: v``, ``"k": "v"``, ``?password=``, ``sslpassword=``) and
``secret`` (the same for ``secret``, ``token``, ``api_key`` and the like; 8+ characters).
Placeholders (``${VAR}``, ``<token>``, ``***``), code (``password=self.password``) and
stop-words are left alone.

All detectors run over the original text in one pass each; :func:`find_secrets` keeps the
leftmost span, the longest at one start, the detector listed first for equal spans, and trims
(never drops) a span that starts inside a chosen one. Every built-in detector runs in linear
time (see :mod:`store.redaction.detectors`); a user's own pattern is the user's to keep
linear. Markers are never matched again, so redacting twice changes nothing.

A user pattern replaces its whole match, or only its group named ``secret`` when it has one;
its kind is the name given with it (default ``pattern``).

``redact(value)`` takes a string or any JSON value (dicts, lists, tuples; nested) and returns
``(redacted copy, number of replacements)``; string keys of objects are redacted too (two keys
that become the same marker are kept apart as ``<marker>#2``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

from store.redaction.detectors import DETECTORS, MARKER, Detector, marker

__all__ = ["BUILTIN_DETECTORS", "Detector", "Redactor", "find_secrets", "hide_passwords",
           "marker"]

T = TypeVar("T")

#: The built-in detectors, most specific first (the order breaks ties between equal spans).
BUILTIN_DETECTORS: tuple[Detector, ...] = DETECTORS

_ALNUM = re.compile(r"[A-Za-z0-9]")

PatternSpec = str | re.Pattern[str] | tuple[str, str | re.Pattern[str]] | Detector


def _outside_markers(start: int, end: int, starts: list[int], ends: list[int]
                     ) -> Iterator[tuple[int, int]]:
    """The parts of [start, end) outside the existing markers (given sorted, disjoint)."""
    index = bisect_right(ends, start)
    while index < len(starts) and starts[index] < end:
        if starts[index] > start:
            yield start, starts[index]
        start = max(start, ends[index])
        index += 1
    if start < end:
        yield start, end


class _KeywordGates:
    """Which detectors of a list pass their keyword gate in a text, in one pass: an RE2 set
    (google-re2, linear) of every keyword, whose matches name the detectors to run. The
    answer is exactly the inline gate's (a keyword is a literal: RE2 finds it in the
    lower-cased text exactly where ``in`` does); without RE2, or for a text RE2 cannot take
    (a lone surrogate), :meth:`passing` gives ``None`` and the gates are checked inline."""

    __slots__ = ("_always", "_known", "_owners", "_set")

    def __init__(self, detectors: tuple[Detector, ...]) -> None:
        self._always = tuple(rank for rank, det in enumerate(detectors) if not det.keywords)
        self._known: dict[tuple[int, ...], tuple[int, ...]] = {}
        words = sorted({word for det in detectors for word in det.keywords})
        owners: dict[str, list[int]] = {word: [] for word in words}
        for rank, det in enumerate(detectors):
            for word in det.keywords:
                owners[word].append(rank)
        self._owners = [tuple(owners[word]) for word in words]
        self._set: Any = None
        if words:
            try:
                import re2  # type: ignore[import-untyped]  # google-re2
            except ImportError:  # pragma: no cover - a base dependency; the inline gates stand in
                return
            found = re2.Set.SearchSet(re2.Options())
            for word in words:
                found.Add(re2.escape(word))
            found.Compile()
            self._set = found

    def passing(self, lowered: str) -> tuple[int, ...] | None:
        """The ranks (ascending) of the detectors whose keyword gate ``lowered`` (the
        lower-cased text) passes, the detectors without keywords included; None: check the
        gates inline."""
        if self._set is None:
            return None if self._owners else self._always
        try:
            hits = self._set.Match(lowered)
        except UnicodeError:  # a lone surrogate: RE2 takes UTF-8 only
            return None
        if not hits:
            return self._always
        key = tuple(hits)
        ranks = self._known.get(key)
        if ranks is None:
            found = set(self._always)
            for hit in hits:
                found.update(self._owners[hit])
            ranks = tuple(sorted(found))
            if len(self._known) < 4096:
                self._known[key] = ranks
        return ranks


#: The gates of each list of detectors, by the list's identity (the list is kept, so its id
#: is not reused): hashing thirty detectors per text would cost more than the gates save.
_GATES: dict[int, tuple[tuple[Detector, ...], _KeywordGates]] = {}


def _keyword_gates(detectors: tuple[Detector, ...]) -> _KeywordGates:
    known = _GATES.get(id(detectors))
    if known is not None and known[0] is detectors:
        return known[1]
    if len(_GATES) >= 64:  # (lists made per call: keep the most recent few)
        _GATES.clear()
    gates = _KeywordGates(detectors)
    _GATES[id(detectors)] = (detectors, gates)
    return gates


def find_secrets(text: str, detectors: Iterable[Detector] = BUILTIN_DETECTORS,
                 ) -> list[tuple[int, int, str]]:
    """The secrets in ``text`` as sorted, non-overlapping ``(start, end, kind)`` spans.

    Leftmost first; at the same start the longest; at the same span the detector listed first.
    A span that starts inside an earlier, chosen one keeps only its part after it (so the union
    of what the detectors found is covered). Existing ``[REDACTED:kind]`` markers are skipped.
    O(n + k log k) for n characters and k candidate spans, given linear detectors."""
    marks = [found.span() for found in MARKER.finditer(text)]
    starts = [s for s, _ in marks]
    ends = [e for _, e in marks]
    lowered = text.lower()  # for the keyword gates only (its offsets are never used)
    candidates: list[tuple[int, int, int, str]] = []
    listed = detectors if type(detectors) is tuple else tuple(detectors)
    ranks = _keyword_gates(listed).passing(lowered)
    for rank in range(len(listed)) if ranks is None else ranks:
        det = listed[rank]
        keywords = det.keywords
        if ranks is None and keywords:  # the keyword gate inline (most texts pass none)
            for word in keywords:
                if word in lowered:
                    break
            else:
                continue
        gate = det.gate
        if gate is not None and gate.search(text) is None:
            continue
        for start, end in det.spans(text, lowered, gated=True):
            pieces = _outside_markers(start, end, starts, ends) if marks else ((start, end),)
            for s, e in pieces:
                candidates.append((s, -e, rank, det.kind))
    candidates.sort()
    chosen: list[tuple[int, int, str]] = []
    covered = 0
    for start, neg_end, _rank, kind in candidates:
        end = -neg_end
        if end <= covered:
            continue
        start = max(start, covered)
        if not _ALNUM.search(text, start, end):
            continue
        chosen.append((start, end, kind))
        covered = end
    return chosen


def _replaced(text: str, spans: list[tuple[int, int, str]]) -> str:
    pieces: list[str] = []
    last = 0
    for start, end, kind in spans:
        pieces.append(text[last:start])
        pieces.append(marker(kind))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


class Redactor:
    """Replace secrets with ``[REDACTED:<kind>]`` markers (see the module docstring).

    ``patterns``: the caller's own, each a regex (kind ``pattern``), a ``(kind, regex)`` pair or
    a :class:`Detector`. ``builtins=False`` leaves the built-in detectors out.
    """

    __slots__ = ("_detectors",)

    def __init__(self, patterns: Iterable[PatternSpec] = (), *, builtins: bool = True) -> None:
        own: list[Detector] = []
        for spec in patterns:
            if isinstance(spec, Detector):
                own.append(spec)
            elif isinstance(spec, tuple):
                kind, pattern = spec
                own.append(Detector(kind, pattern))  # type: ignore[arg-type]
            else:
                own.append(Detector("pattern", spec))  # type: ignore[arg-type]
        self._detectors: tuple[Detector, ...] = (
            (*BUILTIN_DETECTORS, *own) if builtins else tuple(own)
        )

    @property
    def detectors(self) -> tuple[Detector, ...]:
        return self._detectors

    def __repr__(self) -> str:
        return f"Redactor({[d.kind for d in self._detectors]!r})"

    def redact_text(self, text: str) -> tuple[str, int]:
        """``text`` with every secret replaced, and the number of replacements."""
        if not text:
            return text, 0
        spans = find_secrets(text, self._detectors)
        if not spans:
            return text, 0
        return _replaced(text, spans), len(spans)

    def redact(self, value: T) -> tuple[T, int]:
        """A copy of a string or JSON value (dicts, lists, tuples; nested) with every string
        redacted, object keys included, and the number of replacements. Non-string values
        are kept."""
        if isinstance(value, str):
            text, count = self.redact_text(value)
            return text, count  # type: ignore[return-value]
        if not isinstance(value, Mapping | list | tuple):
            return value, 0
        # Iterative (a value nested deeper than the recursion limit, stored before the store
        # refused such values, is redacted like any other): one frame per open container,
        # its copy filled in order and put in its parent's slot when the container is done.
        total = 0
        root: list[Any] = [None]
        stack: list[_Frame] = [_Frame(value, root, 0)]
        while stack:
            frame = stack[-1]
            entry = next(frame.items, None)
            if entry is None:
                stack.pop()
                done = frame.out
                frame.parent[frame.slot] = tuple(done) if frame.tuple else done
                continue
            key, item = entry
            out = frame.out
            if frame.mapping:
                if isinstance(key, str):
                    key, count = self.redact_text(key)
                    total += count
                    if count and key in out:  # two secret keys, one marker: keep both
                        key = _distinct(key, out)
            else:
                key = len(out)
                out.append(None)
            if isinstance(item, str):
                out[key], count = self.redact_text(item)
                total += count
            elif isinstance(item, Mapping | list | tuple):
                out[key] = None  # (the slot, in order; filled when the child is done)
                stack.append(_Frame(item, out, key))
            else:
                out[key] = item
        return root[0], total

    def __call__(self, text: str) -> str:
        """``text`` redacted (the count dropped)."""
        return self.redact_text(text)[0]


class _Frame:
    """A container being copied by :meth:`Redactor.redact`."""

    __slots__ = ("items", "mapping", "out", "parent", "slot", "tuple")

    def __init__(self, value: Any, parent: Any, slot: Any) -> None:
        self.mapping = isinstance(value, Mapping)
        self.tuple = isinstance(value, tuple)
        self.items: Iterator[tuple[Any, Any]] = (
            iter(value.items()) if self.mapping else ((None, item) for item in value))
        self.out: Any = {} if self.mapping else []
        self.parent = parent
        self.slot = slot


def _distinct(key: str, taken: Mapping[Any, Any]) -> str:
    number = 2
    while f"{key}#{number}" in taken:
        number += 1
    return f"{key}#{number}"


_PASSWORD_KINDS = ("url_password", "password", "cli_password", "basic_auth",
                   "private_key")
_PASSWORD_DETECTORS = tuple(d for d in BUILTIN_DETECTORS if d.kind in _PASSWORD_KINDS)


def hide_passwords(text: str) -> str:
    """``text`` with every password the built-in detectors recognise replaced by ``***``
    (URL user info, ``password=`` / ``sslpassword=`` parameters, DSN and connection-string
    passwords): for error messages and log lines, which must never show one."""
    if not text:
        return text
    spans = find_secrets(text, _PASSWORD_DETECTORS)
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end, _kind in spans:
        pieces.append(text[last:start])
        pieces.append("***")
        last = end
    pieces.append(text[last:])
    return "".join(pieces)

