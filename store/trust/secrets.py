"""Secrets out of the search index: the redacted text an index holds, and the keyed digest
that still finds a known secret (domain; stdlib only).

The full-text and argument-view indexes hold :func:`index_text` of what they index: the
built-in detectors' spans (:mod:`store.redaction`) replaced by their markers
(``[REDACTED:github_token]``), so no detected secret sits in an index. Each secret found is
kept beside the index as ``HMAC-SHA256(store key, value)`` (:func:`secret_digest`), with its
kind: ``calls search --secret VALUE`` computes the same digest and finds every call (or result)
that held it, without the index ever holding the value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["index_text", "secret_digest"]

# The detectors (store.redaction: ~8 ms to import) are loaded by the first text to index: a
# search that reads only indexed rows never needs them.
_Detectors = tuple["Callable[[str], Any]", "Callable[[str], str]"]
_loaded: _Detectors | None = None  # (find_secrets, marker)


def _detectors() -> _Detectors:
    global _loaded
    if _loaded is None:
        from store.redaction.redact import find_secrets, marker

        _loaded = (find_secrets, marker)
    return _loaded


def index_text(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` with every detected secret replaced by its marker, and the secrets found as
    (kind, value) pairs in order."""
    find, mark = _loaded or _detectors()
    spans = find(text)
    if not spans:
        return text, []
    out: list[str] = []
    found: list[tuple[str, str]] = []
    last = 0
    for start, end, kind in spans:
        out.append(text[last:start])
        out.append(mark(kind))
        found.append((kind, text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out), found


def secret_digest(key: bytes, value: str) -> str:
    """The keyed digest of a secret's value (hex HMAC-SHA256 under the store's key)."""
    import hashlib  # (OpenSSL's ~2.5 ms import: paid by the first secret, not each search)
    import hmac

    return hmac.new(key, value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
