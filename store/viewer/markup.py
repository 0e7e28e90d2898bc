"""A tiny HTML template helper that escapes by default (edge layer; stdlib only).

Contract: every value that reaches a page goes through :func:`escape` unless it is already a
:class:`Markup` (HTML this package built). :func:`html` fills a *trusted* template (a literal
in this package's code) with ``str.format`` after escaping each value, so an untrusted value
can never open a tag, an attribute or an entity. URLs are built by :func:`url` only: a path of
percent-quoted segments starting with ``/``, and an encoded query, so no link the viewer
writes can point to another origin or use a ``javascript:`` scheme.
"""

from __future__ import annotations

import html as _html
from collections.abc import Iterable, Mapping
from urllib.parse import quote, urlencode

__all__ = ["Markup", "escape", "html", "join", "url"]


class Markup(str):
    """Text that is already safe HTML (built by this package from escaped values)."""

    __slots__ = ()


def escape(value: object) -> Markup:
    """``value`` as HTML text: ``Markup`` as is, anything else ``str()``-ed and escaped
    (``& < > " '``). Lone surrogates are replaced so the page always encodes as UTF-8."""
    if isinstance(value, Markup):
        return value
    text = value if isinstance(value, str) else str(value)
    if not text.isascii():
        text = text.encode("utf-8", "replace").decode("utf-8", "replace")
    return Markup(_html.escape(text, quote=True))


def html(template: str, /, **values: object) -> Markup:
    """Fill a trusted ``template`` (``{name}`` fields) with escaped ``values``."""
    return Markup(template.format(**{k: escape(v) for k, v in values.items()}))


def join(items: Iterable[object], sep: str = "") -> Markup:
    """Escaped items joined by a trusted separator."""
    return Markup(sep.join(escape(item) for item in items))


def url(*segments: object, query: Mapping[str, object] | None = None,
        fragment: str | None = None) -> str:
    """``/seg1/seg2?query#fragment`` with every segment percent-quoted (``/`` too) and the
    query URL-encoded (``None`` and empty values dropped; list values repeated). Returns a
    plain ``str``: it still goes through :func:`escape` when written into an attribute."""
    path = "/" + "/".join(quote(str(s), safe="") for s in segments)
    if query:
        pairs: list[tuple[str, str]] = []
        for key, value in query.items():
            values = value if isinstance(value, list | tuple) else [value]
            pairs.extend((key, str(v)) for v in values if v is not None and v != "")
        if pairs:
            path += "?" + urlencode(pairs)
    if fragment:
        path += "#" + quote(fragment, safe="-_.")
    return path
