"""Secret redaction for exports and audit output (domain: stdlib only).

``Redactor()`` finds secrets with built-in detectors and the caller's own patterns, and
replaces each one with a marker naming what it was: ``[REDACTED:<kind>]``. Built-in kinds:

==========================  ==================================================================
``anthropic_api_key``       ``sk-ant-api03-...`` / ``sk-ant-admin01-...``
``openai_api_key``          ``sk-...``, ``sk-proj-...``, ``sk-svcacct-...``, ``sk-admin-...``
``aws_access_key_id``       ``AKIA`` / ``ASIA`` / ``ABIA`` / ``ACCA`` and 16 more characters
``aws_secret_access_key``   the value of an ``aws_secret_access_key`` assignment (40 chars)
``github_token``            ``ghp_`` / ``gho_`` / ``ghu_`` / ``ghs_`` / ``ghr_`` tokens, and
                            ``github_pat_`` fine-grained tokens
``google_api_key``          ``AIza`` and 35 more characters
``slack_token``             ``xoxb-`` / ``xoxp-`` / ``xoxa-`` / ``xoxr-`` / ``xoxs-`` tokens
``bearer_token``            the token after ``Bearer`` (16+ token characters)
``url_password``            the password of ``scheme://user:password@host``
``private_key``             a PEM ``-----BEGIN ... PRIVATE KEY-----`` block, to its END line
                            (also when JSON escapes its newlines as ``\\n``)
==========================  ==================================================================

Only the secret itself is replaced: ``Bearer [REDACTED:bearer_token]``,
``postgres://app:[REDACTED:url_password]@db/x``. A user pattern replaces its whole match, or
only its group named ``secret`` when it has one; its kind is the name given with it (default
``pattern``). Markers are never matched again, so redacting twice changes nothing.

``redact(value)`` takes a string or any JSON value (dicts, lists, nested; keys are kept) and
returns ``(redacted copy, number of replacements)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from store.errors import UsageError

__all__ = ["BUILTIN_DETECTORS", "Detector", "Redactor", "marker"]

T = TypeVar("T")

_KIND = re.compile(r"[a-z][a-z0-9_]*")
#: A marker already in the text: never redacted again.
_MARKER = re.compile(r"\[REDACTED:[a-z][a-z0-9_]*\]")
# Characters that may not touch a key on its left (so "task-..." is not an "sk-" key).
_LEFT = r"(?<![A-Za-z0-9_\-])"
_RIGHT = r"(?![A-Za-z0-9_\-])"


def marker(kind: str) -> str:
    """The replacement text of a secret of ``kind``."""
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True, slots=True)
class Detector:
    """A kind of secret and the pattern that finds it (only group ``secret``, when present, is
    replaced)."""

    kind: str
    pattern: re.Pattern[str]

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not _KIND.fullmatch(self.kind):
            raise UsageError(
                f"a redaction kind must be lower-case letters, digits and _, got {self.kind!r}"
            )
        if not isinstance(self.pattern, re.Pattern):
            object.__setattr__(self, "pattern", re.compile(self.pattern))
        if not self.pattern.pattern or self.pattern.match(""):
            raise UsageError(f"redaction pattern {self.pattern.pattern!r} matches empty text")


def _detector(kind: str, pattern: str, flags: int = 0) -> Detector:
    return Detector(kind, re.compile(pattern, flags))


#: The built-in detectors, in the order they run (the most specific first).
BUILTIN_DETECTORS: tuple[Detector, ...] = (
    _detector(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
        r"(?:(?!-----END)[\s\S]){16,}?"
        r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
    ),
    _detector("anthropic_api_key", _LEFT + r"sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{20,}"
              + _RIGHT),
    _detector("openai_api_key",
              _LEFT + r"sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_\-]*[0-9])"
              r"(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{20,}" + _RIGHT),
    _detector("aws_access_key_id", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    _detector(
        "aws_secret_access_key",
        r"(?i:aws_secret_access_key|aws_secret_key|secret_access_key)"
        r"[\\\"']{0,2}\s*[:=]\s*[\\\"']{0,2}(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
    ),
    _detector("github_token",
              r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})"
              r"(?![A-Za-z0-9_])"),
    _detector("google_api_key", r"(?<![A-Za-z0-9_\-])AIza[0-9A-Za-z_\-]{35}(?![A-Za-z0-9_\-])"),
    _detector("slack_token",
              r"(?<![A-Za-z0-9\-])xox[abprs]-[0-9]{6,}-[A-Za-z0-9\-]{8,}(?![A-Za-z0-9\-])"),
    _detector("bearer_token",
              r"(?<![A-Za-z0-9])(?i:bearer)\s+(?P<secret>(?=[A-Za-z0-9._~+/=\-]*[0-9])"
              r"[A-Za-z0-9._~+/\-]{16,}=*)(?![A-Za-z0-9._~+/=\-])"),
    _detector(
        "url_password",
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\"'<>\\]+:"
        r"(?P<secret>[^\s/\"'<>\\]+)@(?=[A-Za-z0-9\[])",
    ),
)

PatternSpec = str | re.Pattern[str] | tuple[str, str | re.Pattern[str]] | Detector


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
                own.append(Detector(kind, _compiled(pattern)))
            else:
                own.append(Detector("pattern", _compiled(spec)))
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
        total = 0
        for detector in self._detectors:
            if not detector.pattern.search(text):
                continue
            text, count = _apply(detector, text)
            total += count
        return text, total

    def redact(self, value: T) -> tuple[T, int]:
        """A copy of a string or JSON value (dicts, lists, tuples; nested) with every string
        redacted, and the number of replacements. Keys and non-string values are kept."""
        if isinstance(value, str):
            text, count = self.redact_text(value)
            return text, count  # type: ignore[return-value]
        if isinstance(value, Mapping):
            total = 0
            out: dict[Any, Any] = {}
            for key, item in value.items():
                out[key], count = self.redact(item)
                total += count
            return out, total  # type: ignore[return-value]
        if isinstance(value, list | tuple):
            items = []
            total = 0
            for item in value:
                redacted, count = self.redact(item)
                items.append(redacted)
                total += count
            return (items if isinstance(value, list) else tuple(items)), total  # type: ignore[return-value]
        return value, 0

    def __call__(self, text: str) -> str:
        """``text`` redacted (the count dropped)."""
        return self.redact_text(text)[0]


def _compiled(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    try:
        return pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"not a regular expression: {pattern!r}: {exc}") from None


def _apply(detector: Detector, text: str) -> tuple[str, int]:
    """Replace the detector's matches outside the markers already in ``text``."""
    pieces: list[str] = []
    total = 0
    start = 0
    for found in _MARKER.finditer(text):
        segment, count = _replace(detector, text[start:found.start()])
        pieces.append(segment)
        pieces.append(found.group())
        total += count
        start = found.end()
    segment, count = _replace(detector, text[start:])
    pieces.append(segment)
    return "".join(pieces), total + count


def _replace(detector: Detector, text: str) -> tuple[str, int]:
    if not text:
        return text, 0
    replacement = marker(detector.kind)
    has_secret = "secret" in detector.pattern.groupindex

    def substitute(found: re.Match[str]) -> str:
        if not has_secret or found.start("secret") < 0:
            return replacement
        whole = found.group()
        offset = found.start()
        return (whole[: found.start("secret") - offset] + replacement
                + whole[found.end("secret") - offset:])

    return detector.pattern.subn(substitute, text)
