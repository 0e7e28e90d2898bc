"""PEM private keys: code, not one regex (rule R4: never scan to a missing terminator)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from store.redaction.detectors.base import Detector, Span

__all__ = ["PEM_BEGIN", "PEM_END_WINDOW", "PRIVATE_KEY"]


# ---------------------------------------------------------------------------------------------
# Private keys (code, not one regex: see R4)
# ---------------------------------------------------------------------------------------------

# "-----BEGIN" then at most 41 tries of the lazy label: constant per start (R1, R2).
PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}? PRIVATE KEY(?: BLOCK)?-----")
# The END line, or what is left of it: two disjoint bounded runs (R2, R3).
_PEM_END = re.compile(r"-----END[ A-Z0-9]{0,60}-{0,5}")
# Rest of the BEGIN line (a key flattened to one line with spaces): one bounded class run.
_PEM_SAME_LINE = re.compile(r"[A-Za-z0-9+/= \t]{0,65536}+")
# One body line: an optional prefix (indentation, "> ", "  12\t" / "  12→" line numbers), then
# base64 or a "Header: value" line, then a line break (\n, \r\n, or the JSON escapes \\n) or a
# zero-width end (-----END on the same line, a closing quote, end of text). All repeats are
# bounded and possessive where the next token is disjoint (R2, R3). The caller matches this at
# increasing positions, so each character is read by one line match (R4).
_PEM_PREFIX = r"[ \t>]{0,16}(?:[0-9]{1,9}(?:\t|→|:|\|)[ \t]{0,4})?"
_PEM_LINE = re.compile(
    r"(?P<body>" + _PEM_PREFIX
    + r"(?P<content>[A-Za-z0-9+/=]{1,65536}+|[A-Za-z][A-Za-z0-9\-]{1,40}:[^\r\n\\]{0,256}+)?)"
    r"[ \t]{0,16}(?:\r?\n|(?:\\{1,2}r)?\\{1,2}n|(?=-----END|[\"'\]},)]|\Z))"
)
_PEM_END_LINE = re.compile(_PEM_PREFIX + r"(?=-----END)")
#: An END further than this from its BEGIN is not used (the body lines decide the span).
PEM_END_WINDOW = 16384
# Some key material between BEGIN and a far END (else: code such as START = "-----BEGIN ...").
_PEM_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{32}")


def _private_keys(text: str) -> Iterator[Span]:
    """PEM / OpenSSH / PGP private keys: from the BEGIN line to the END line, or, without an END,
    to the end of the key body (the base64 lines after BEGIN; the end of the text for output of
    ``head id_rsa``).

    Linear: ``PEM_BEGIN.search`` resumes after each consumed key; the body loop reads each line
    once; ``str.find("-----END")`` runs again only after passing the last END found (a text with
    no END costs one ``find``); the "no other BEGIN in between" ``find`` stops at the first BEGIN;
    the key-material search runs only when no BEGIN lies before that END, so the next BEGIN is
    beyond it and each region is searched once."""
    pos = 0
    next_end = -2  # position of the first "-----END" at/after the last search; -1: none
    length = len(text)
    while True:
        begin = PEM_BEGIN.search(text, pos)
        if begin is None:
            return
        start, after = begin.span()
        stop = after
        # 1. the key body, line by line.
        same = _PEM_SAME_LINE.match(text, after)
        q = same.end() if same else after
        content_end = q
        while content_end > after and text[content_end - 1] in " \t":
            content_end -= 1
        stop = content_end  # the key flattened onto the BEGIN line, if any
        while q < length:
            line = _PEM_LINE.match(text, q)
            if line is None or line.end() == q:
                break
            if line.group("content"):
                stop = line.end("body")
            q = line.end()
        end_here = _PEM_END_LINE.match(text, q) if q < length else None
        if end_here is not None:
            stop = _PEM_END.match(text, end_here.end()).end()  # type: ignore[union-attr]
        else:
            # 2. an END further on, when no other BEGIN comes first (unusual formatting).
            if next_end != -1 and next_end < after:
                next_end = text.find("-----END", after)
            if (next_end != -1 and next_end - after <= PEM_END_WINDOW
                    and text.find("-----BEGIN", after, next_end) == -1
                    and _PEM_KEY_MATERIAL.search(text, after, next_end)):
                stop = max(stop, _PEM_END.match(text, next_end).end())  # type: ignore[union-attr]
        yield start, stop
        pos = max(stop, after)



PRIVATE_KEY = Detector(
    "private_key", func=_private_keys, keywords=("-----begin",),
    source="gitleaks private-key; detect-secrets PrivateKeyDetector",
)
