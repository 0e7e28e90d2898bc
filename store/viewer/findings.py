"""The findings page: the built-in Sigma rules run live over the stored calls, and what
``rules check --save`` stored, each finding linked to its call.

``/findings``: first the live check: the rules run now (read-only, :func:`store.check_rules`)
over every stored call when there are at most :data:`LIVE_CALLS` of them, their findings
kept until the store's activity stamp changes; the page says when they ran, over how many
calls, and which findings ``rules check --save`` has not stored yet. A larger store, or one
without the ``rules`` extra, is told so. Then the saved findings, most recent call first,
``Viewer.page_size`` a page (``?page=``), filtered by ``level`` (that level and above) and
``session``. Each row links to the call in its session page
(``/session/<id>?at=<position>#c-<position>-<index>``). The matched text is shown through the
viewer's redactor too.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Protocol

import store
from store.viewer.http import BadRequest, Request, Response
from store.viewer.layout import field, page, pager, select, when
from store.viewer.live import activity_stamp
from store.viewer.markup import Markup, html, join, url

__all__ = ["LIVE_CALLS", "LiveFindings", "findings_page"]

LEVELS = ("informational", "low", "medium", "high", "critical")
#: The live check runs on stores with at most this many calls (a second or two).
LIVE_CALLS = 50_000


class LiveFindings:
    """The findings of the built-in rules over every stored call, run again only when the
    store's activity stamp changes; ``None`` with the reason when they cannot run."""

    def __init__(self, opened: store.TranscriptStore) -> None:
        self._store = opened
        self._lock = threading.Lock()
        self._stamp: str | None = None
        self._value: tuple[datetime, int, list[store.Finding] | None, str] | None = None

    def get(self, stamp: str) -> tuple[datetime, int, list[store.Finding] | None, str]:
        """``(when they ran, calls stored, findings or None, why not)``."""
        with self._lock:
            if self._value is None or stamp != self._stamp:
                calls = self._store.count_calls()
                found: list[store.Finding] | None = None
                why = ""
                if calls > LIVE_CALLS:
                    why = (f"{calls:,} calls stored: the rules run live on up to "
                           f"{LIVE_CALLS:,}; run `transcript-store rules check --save`")
                else:
                    try:
                        found = store.check_rules(self._store)
                    except store.MissingExtra as exc:
                        why = str(exc)
                self._value = (datetime.now(UTC), calls, found, why)
                self._stamp = stamp
            return self._value


class Viewer(Protocol):
    store: store.TranscriptStore
    page_size: int
    live_findings: LiveFindings

    def redact(self, text: str) -> str: ...


def _live(viewer: Viewer, stamp: str) -> Markup:
    ran, calls, found, why = viewer.live_findings.get(stamp)
    if found is None:
        return html('<section class="live"><h2>Live check</h2><p class="note">{w}</p>'
                    "</section>", w=why)
    saved = {(f.session_id, f.position, f.call_index, f.rule_id)
             for f in store.load_findings(viewer.store)}
    unsaved = [f for f in found
               if (f.session_id, f.position, f.call_index, f.rule_id) not in saved]
    head = html(
        '<p class="totals">The built-in rules ran {ran} over {calls} stored call{cs}: '
        "<b>{n} finding{ns}</b>, {u} of them not saved by <code>rules check --save</code>."
        "</p>", ran=when(ran), calls=f"{calls:,}", cs="" if calls == 1 else "s",
        n=f"{len(found):,}", ns="" if len(found) == 1 else "s", u=f"{len(unsaved):,}")
    shown = sorted(unsaved, key=lambda f: (LEVELS.index(f.level) if f.level in LEVELS else 0),
                   reverse=True)[:viewer.page_size]
    table = _table(viewer, shown) if shown else Markup("")
    return html('<section class="live"><h2>Live check</h2>{head}{table}</section>',
                head=head, table=table)


def _table(viewer: Viewer, found: list[store.Finding]) -> Markup:
    rows = join(html(
        '<tr class="match"><td><span class="badge level-{level}">{level}</span></td>'
        "<td>{title}<br><small>{tags}</small></td>"
        '<td><a href="{href}">{session}</a><br><small>#{pos}.{idx} · {call}</small></td>'
        "<td>{time}</td><td>{agent}</td><td><span class=\"tool\">{tool}</span>{raw}</td>"
        '<td><code class="args">{matched}</code></td></tr>',
        level=f.level, title=f.title, tags=" ".join(f.tags),
        href=url("session", f.session_id, query={"at": f.position},
                 fragment=f"c-{f.position}-{f.call_index}"),
        session=f.session_id, pos=f.position, idx=f.call_index, call=f.call_id,
        time=when(f.time), agent=f.agent or "", tool=f.tool,
        raw=html("<br><small>recorded as {r}</small>", r=f.raw_tool)
        if f.raw_tool != f.tool else Markup(""),
        matched=_cut(viewer.redact(f.matched), 300))
        for f in found)
    return html('<table class="matches nav-list"><thead><tr><th>level</th><th>rule</th>'
                "<th>session · call</th><th>time</th><th>agent</th><th>tool</th>"
                "<th>matched</th></tr></thead><tbody>{rows}</tbody></table>", rows=rows)


def findings_page(viewer: Viewer, request: Request) -> Response:
    """Saved findings."""
    per = viewer.page_size
    number = request.int_arg("page", 1, minimum=1)
    level = request.arg("level") or None
    if level is not None and level not in LEVELS:
        raise BadRequest(f"level must be one of {', '.join(LEVELS)}")
    session_id = request.arg("session") or None
    levels = LEVELS[LEVELS.index(level):] if level else None
    found = store.load_findings(viewer.store, session_id=session_id, min_level=levels,
                                limit=per + 1, offset=(number - 1) * per)
    has_next, found = len(found) > per, found[:per]
    form = html('<form class="filters" method="get" action="/findings">{level}{session}'
                '<button type="submit">Filter</button></form>',
                level=select("level and above", "level", LEVELS, level),
                session=field("session", "session", session_id))
    table = _table(viewer, found) if found else html(
        '<p class="empty">No findings. Run <code>transcript-store rules check --save</code> '
        "to store them.</p>")
    bar = pager(request, number, has_next)
    stamp = activity_stamp(viewer.store)
    live = _live(viewer, stamp) if number == 1 else Markup("")
    body = html("<h1>Findings</h1>{live}<h2>Saved findings</h2>{form}{bar}{table}{bar}",
                live=live, form=form, bar=bar, table=table)
    return page("Findings", body, current="/findings", live=stamp)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
