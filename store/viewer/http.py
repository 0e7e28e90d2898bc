"""The viewer's request and response values, and the two errors a route may raise.

Kept apart from :mod:`store.viewer.app` (routing and the server) so that the pages import
these values without importing the application that imports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

import store

__all__ = ["BadRequest", "NotFound", "Request", "Response"]


class BadRequest(Exception):
    """A parameter the route cannot use: answered with ``400`` and the message."""


class NotFound(Exception):
    """Nothing at this address: answered with ``404`` and the message."""


@dataclass(frozen=True, slots=True)
class Request:
    """One request: ``segments`` are the path's percent-decoded segments (``/a/b%2Fc`` is
    ``("a", "b/c")``); ``query`` maps each parameter to its values in order."""

    method: str
    path: str
    segments: tuple[str, ...]
    query: Mapping[str, list[str]]
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, method: str, target: str, headers: Mapping[str, str]) -> Request:
        """Parse a request target (``/path?query``) as the handler received it."""
        split = urlsplit(target)
        raw = [s for s in split.path.split("/") if s]
        segments = tuple(unquote(s, errors="replace") for s in raw)
        query = parse_qs(split.query, keep_blank_values=True, errors="replace")
        lowered = {k.lower(): v for k, v in headers.items()}
        return cls(method, split.path or "/", segments, query, lowered)

    def arg(self, name: str) -> str | None:
        """The first non-blank value of a parameter, stripped, else ``None`` (``BadRequest``
        for a value holding NUL, which no field of the store can be searched for)."""
        for value in self.query.get(name, ()):
            if value.strip():
                return _no_nul(name, value.strip())
        return None

    def args(self, name: str) -> list[str]:
        """Every non-blank value of a parameter, stripped (NUL: ``BadRequest``)."""
        return [_no_nul(name, v.strip()) for v in self.query.get(name, ()) if v.strip()]

    def int_arg(self, name: str, default: int, *, minimum: int = 0) -> int:
        """An integer parameter (``BadRequest`` when it is not one, or below ``minimum``)."""
        raw = self.arg(name)
        if raw is None:
            return default
        # ASCII digits only ("²".isdigit() is true, int("²") fails), at most nine of them.
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 9 or int(raw) < minimum:
            raise BadRequest(f"{name} must be a whole number from {minimum}, got {raw!r}")
        return int(raw)


def _no_nul(name: str, value: str) -> str:
    if "\x00" in value:
        raise BadRequest(f"{name}: a parameter must not contain NUL")
    return value


@dataclass(slots=True)
class Response:
    """A response: status, body bytes, content type, extra headers."""

    status: int
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def text(cls, status: int, text: str) -> Response:
        """Plain UTF-8 text (lone surrogates replaced)."""
        return cls(status, text.encode("utf-8", "replace"), "text/plain; charset=utf-8")

    @classmethod
    def redirect(cls, location: str, status: int = 303) -> Response:
        """A redirect to a same-origin path (``location`` must start with one ``/``)."""
        if not location.startswith("/") or location.startswith("//"):
            raise store.UsageError(f"not a same-origin path: {location!r}")
        return cls(status, b"", "text/plain; charset=utf-8", [("Location", location)])
