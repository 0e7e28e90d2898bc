"""A secret detector: what it finds and how (the base of every family; domain: stdlib only).

See the package docstring for the linear-time rules R1-R4 every pattern follows."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from store.core.errors import UsageError

__all__ = ["MARKER", "Detector", "Finder", "Span", "detector", "marker"]

Span = tuple[int, int]
Finder = Callable[[str], Iterator[Span]]

_KIND = re.compile(r"[a-z][a-z0-9_]*")
#: A marker already in the text: never redacted again.
MARKER = re.compile(r"\[REDACTED:[a-z][a-z0-9_]{0,64}\]")
ALNUM = re.compile(r"[A-Za-z0-9]")



def _compiled(pattern: object) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern):
        return pattern
    if not isinstance(pattern, str):
        raise UsageError(f"a redaction pattern must be a regular expression, got {pattern!r}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"not a regular expression: {pattern!r}: {exc}") from None


def marker(kind: str) -> str:
    """The replacement text of a secret of ``kind``."""
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True, slots=True)
class Detector:
    """A kind of secret and how to find it: a compiled ``pattern`` (the span replaced is the
    first participating group whose name starts with ``secret``, else the whole match; ``accept``
    may veto or trim it) or a ``func`` yielding ``(start, end)`` spans. ``source`` names the
    public rule it follows."""

    kind: str
    pattern: re.Pattern[str] | None = None
    func: Finder | None = None
    accept: Callable[[str, int, int, str], Span | None] | None = None
    #: Lower-case strings of which at least one occurs (case-insensitively) in any match: when
    #: none is in the text, the detector is skipped (one C-speed ``in`` each; gitleaks "keywords").
    keywords: tuple[str, ...] = ()
    source: str = ""
    #: A pattern of which every match holds a match (searched in the text as it is): when the
    #: text holds none, the detector is skipped. For the detectors no keyword can gate (a run
    #: of hex or token characters): a literal at its start makes ``re`` skip ahead in C, where
    #: the detector's own pattern, opening with a look-behind, is tried at every position.
    gate: re.Pattern[str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not _KIND.fullmatch(self.kind):
            raise UsageError(
                f"a redaction kind must be lower-case letters, digits and _, got {self.kind!r}")
        if isinstance(self.pattern, str | bytes):
            object.__setattr__(self, "pattern", _compiled(self.pattern))
        if isinstance(self.gate, str | bytes):
            object.__setattr__(self, "gate", _compiled(self.gate))
        if (self.pattern is None) == (self.func is None):
            raise UsageError("a detector needs exactly one of pattern and func")
        if self.pattern is not None and (not self.pattern.pattern or self.pattern.match("")):
            raise UsageError(f"redaction pattern {self.pattern.pattern!r} matches empty text")

    def spans(self, text: str, lowered: str | None = None, *, gated: bool = False
              ) -> Iterator[Span]:
        """The ``(start, end)`` of each secret this detector finds in ``text`` (``lowered``:
        ``text.lower()``, when the caller has it already; ``gated``: the caller has checked
        the keywords and the gate already)."""
        if not gated:
            if self.keywords:
                if lowered is None:
                    lowered = text.lower()
                if not any(word in lowered for word in self.keywords):
                    return
            if self.gate is not None and self.gate.search(text) is None:
                return
        if self.func is not None:
            yield from self.func(text)
            return
        assert self.pattern is not None
        groups = [name for name in self.pattern.groupindex if name.startswith("secret")]
        for found in self.pattern.finditer(text):
            start, end = found.span()
            name = ""
            for name in groups:
                if found.start(name) >= 0:
                    start, end = found.span(name)
                    break
            if self.accept is not None:
                trimmed = self.accept(text, start, end, name)
                if trimmed is None:
                    continue
                start, end = trimmed
            if end > start:
                yield start, end


def detector(kind: str, pattern: str, *, keywords: Iterable[str] = (),
             accept: Callable[[str, int, int, str], Span | None] | None = None,
             source: str = "", gate: str | None = None) -> Detector:
    """A pattern detector. Patterns are compiled with ``re.ASCII``: case-insensitive parts match
    ASCII letters only (so a keyword gate on ``text.lower()`` can never skip a real match);
    ``gate`` too (see :attr:`Detector.gate`)."""
    return Detector(kind, re.compile(pattern, re.ASCII), accept=accept,
                    keywords=tuple(keywords), source=source,
                    gate=re.compile(gate, re.ASCII) if gate is not None else None)
