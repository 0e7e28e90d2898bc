"""Page shell and shared pieces of the viewer's pages: head, navigation, pager, form fields,
time parameters, folded long text.

Contract: every function returns :class:`~store.viewer.markup.Markup` built with the escaping
helpers, so untrusted values passed in come out as text. The page links only this origin's
own stylesheet, script and icon.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, time, timedelta

import store
from store.viewer.http import BadRequest, Request, Response
from store.viewer.markup import Markup, html, join, url

__all__ = [
    "FOLD_BYTES",
    "PREVIEW_CHARS",
    "field",
    "folded",
    "page",
    "pager",
    "parse_time",
    "select",
    "when",
]

#: Texts longer than this (UTF-8 bytes) are folded and loaded on demand.
FOLD_BYTES = 2048
#: How much of a folded text the page shows before it is opened.
PREVIEW_CHARS = 600

_NAV = (("/sessions", "Sessions"), ("/messages", "Messages"), ("/usage", "Usage"),
        ("/tools", "Tools"), ("/search", "Calls"), ("/findings", "Findings"))


def page(title: str, body: Markup, *, status: int = 200, current: str = "",
         live: str | None = None, live_session: str | None = None) -> Response:
    """A whole HTML page around ``body``, with the search box over every message in its
    header. ``live``: the page's activity stamp (:mod:`store.viewer.live`), which the script
    compares with ``/live`` (``?session=`` ``live_session``) to show what is new."""
    attrs = Markup("")
    if live is not None:
        attrs = html(' data-live="{s}"', s=live)
        if live_session is not None:
            attrs = html('{a} data-live-session="{i}"', a=attrs, i=live_session)
    nav = join(html('<a href="{href}"{cls}>{label}</a>', href=href, label=label,
                    cls=Markup(' class="current"') if href == current else Markup(""))
               for href, label in _NAV)
    document = html(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<meta name=\"referrer\" content=\"no-referrer\">"
        "<title>{title} · transcript-store</title>"
        "<link rel=\"icon\" href=\"/static/favicon.svg\" type=\"image/svg+xml\">"
        "<link rel=\"stylesheet\" href=\"/static/viewer.css\">"
        "<script src=\"/static/viewer.js\" defer></script></head>"
        "<body{attrs}><header><a class=\"brand\" href=\"/sessions\">transcript-store</a>"
        "<nav>{nav}</nav><form class=\"quick\" role=\"search\" method=\"get\" "
        "action=\"/messages\"><input type=\"search\" name=\"q\" id=\"quick-search\" "
        "placeholder=\"search every message  (/)\" aria-label=\"search every message\">"
        "</form><span class=\"ro\">read-only</span></header><main>{body}</main>"
        "<footer class=\"keys\">keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous · <kbd>Enter"
        "</kbd> open · <kbd>/</kbd> search · <kbd>Esc</kbd> leave the search</footer>"
        "<p id=\"live-note\" class=\"live-note\" hidden><button type=\"button\" "
        "id=\"live-reload\">new activity: reload</button></p></body></html>\n",
        title=title, nav=nav, body=body, attrs=attrs)
    return Response(status, document.encode("utf-8", "replace"))


def pager(request: Request, page_number: int, has_next: bool, *,
          pages: int | None = None, param: str = "page") -> Markup:
    """Previous / next links keeping every other parameter; ``pages`` when the total is
    known."""
    def link(number: int, label: str, rel: str) -> Markup:
        query = {k: v for k, v in request.query.items() if k != param}
        query[param] = [str(number)]
        return html('<a rel="{rel}" href="{href}">{label}</a>', rel=rel, label=label,
                    href=url(*request.segments, query=query))

    parts: list[Markup] = []
    if page_number > 1:
        parts.append(link(1, "« first", "first"))
        parts.append(link(page_number - 1, "‹ previous", "prev"))
    total = f" of {pages}" if pages is not None else ""
    parts.append(html('<span class="here">page {n}{total}</span>', n=page_number,
                      total=total))
    if has_next:
        parts.append(link(page_number + 1, "next ›", "next"))
    if pages is not None and page_number < pages:
        parts.append(link(pages, "last »", "last"))
    return html('<nav class="pager">{parts}</nav>', parts=join(parts, " "))


def field(label: str, name: str, value: str | None, *, kind: str = "text",
          placeholder: str = "", datalist: str | None = None) -> Markup:
    """A labelled ``<input>``."""
    listed = html(' list="{d}"', d=datalist) if datalist else Markup("")
    return html('<label>{label} <input type="{kind}" name="{name}" value="{value}" '
                'placeholder="{placeholder}"{listed}></label>', label=label, kind=kind,
                name=name, value=value or "", placeholder=placeholder, listed=listed)


def select(label: str, name: str, options: Iterable[str], chosen: str | None, *,
           blank: str | None = "any") -> Markup:
    """A labelled ``<select>`` (``blank``: the label of an empty first option)."""
    items: list[Markup] = []
    if blank is not None:
        items.append(html('<option value="">{b}</option>', b=blank))
    for option in options:
        items.append(html('<option value="{o}"{sel}>{o}</option>', o=option,
                          sel=Markup(" selected") if option == chosen else Markup("")))
    return html('<label>{label} <select name="{name}">{items}</select></label>',
                label=label, name=name, items=join(items))


def datalist(list_id: str, values: Sequence[str]) -> Markup:
    """A ``<datalist>`` of suggestions."""
    return html('<datalist id="{i}">{o}</datalist>', i=list_id,
                o=join(html('<option value="{v}">', v=v) for v in values))


def parse_time(raw: str | None, name: str, *, end: bool = False) -> datetime | None:
    """A time parameter: ``YYYY-MM-DD`` (a whole day: its start, or with ``end=True`` the
    start of the next day, so that an end date is inclusive) or ISO 8601 (naive is UTC)."""
    if raw is None:
        return None
    try:
        if len(raw) == 10:
            day = date.fromisoformat(raw)
            start = datetime.combine(day, time(), UTC)
            return start + timedelta(days=1) if end else start
        return store.as_utc(datetime.fromisoformat(raw.replace("Z", "+00:00")))
    except (ValueError, OverflowError, store.UsageError):  # 9999-12-31 + 1 day overflows
        raise BadRequest(f"{name}: not a date (YYYY-MM-DD) or ISO 8601 time: {raw!r}") from None


def when(value: datetime | None) -> Markup:
    """A time as ``<time>`` (UTC, to the second)."""
    if value is None:
        return Markup("–")
    utc = value.astimezone(UTC)
    return html('<time datetime="{iso}">{shown}</time>', iso=utc.isoformat(),
                shown=utc.strftime("%Y-%m-%d %H:%M:%S"))


def size(n: int) -> str:
    """A byte count for people."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


def folded(text: str, source: str, *, css: str = "") -> Markup:
    """``text`` in a ``<pre>``; when longer than :data:`FOLD_BYTES`, only a preview, and a
    ``<details>`` that loads the whole text from ``source`` (a same-origin path answering
    ``text/plain``) when opened, with a plain link for pages without script. An empty text
    shows as ``(empty)``."""
    if not text:
        return html('<p class="empty">(empty)</p>')
    data = text.encode("utf-8", "replace")
    if len(data) <= FOLD_BYTES:
        return html('<pre class="{css}">{t}</pre>', css=css, t=text)
    return html(
        '<div class="fold"><pre class="preview {css}">{preview}…</pre>'
        '<details class="more" data-src="{src}"><summary>show all ({size})</summary>'
        '<pre class="full {css}"></pre><p class="raw"><a href="{src}">open as plain text</a>'
        '</p></details></div>',
        css=css, preview=text[:PREVIEW_CHARS], src=source, size=size(len(data)))
