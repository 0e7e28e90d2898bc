"""``/messages``: full-text search over every message (``TranscriptStore.search_messages``).

Parameters: ``q`` (the query language of ``store.core.textquery``: words ANDed, "phrases",
prefix*, -word), ``role``, ``agent``, ``cwd`` (the project folder or below), ``since`` /
``until`` (dates, both inclusive), ``session``, ``page``. Best match first; each hit links
to its message in its session, its snippet escaped with the matched words in ``<mark>``. A
query the language cannot read is a ``400`` naming the problem. The viewer is read-only:
when the index is behind (messages stored since the last catch-up), the page says so.
"""

from __future__ import annotations

from typing import Protocol

import store
from store.viewer.http import BadRequest, Request, Response
from store.viewer.layout import field, page, pager, parse_time, select, when
from store.viewer.markup import Markup, html, join, url

__all__ = ["messages_page"]

#: The parts a search can be confined to (``store.core.textquery.SEARCH_ROLES``).
ROLES = ("user", "assistant", "system", "developer", "tool", "thinking")


class Viewer(Protocol):
    store: store.TranscriptStore
    page_size: int

    def redact(self, text: str) -> str: ...


def _form(request: Request) -> Markup:
    return html(
        '<form class="filters search" method="get" action="/messages">{q}{role}{agent}{cwd}'
        "{since}{until}{session}"
        '<div><button type="submit">search</button> <a href="/messages">clear</a></div>'
        '<p class="hint">Words (all must match), "a phrase", prefix*, -word to leave out.</p>'
        "</form>",
        q=field("text", "q", request.arg("q"), placeholder="lm studio"),
        role=select("part", "role", ROLES, request.arg("role")),
        agent=field("agent", "agent", request.arg("agent"), placeholder="claude-code"),
        cwd=field("project folder", "cwd", request.arg("cwd"), placeholder="/home/me/app"),
        since=field("from", "since", request.arg("since"), kind="date"),
        until=field("to", "until", request.arg("until"), kind="date"),
        session=field("session", "session", request.arg("session")))


def _snippet(viewer: Viewer, hit: store.MessageHit) -> Markup:
    """The snippet escaped, each matched word in ``<mark>`` (the viewer's redaction too)."""
    return join(html("<mark>{t}</mark>", t=viewer.redact(text)) if matched
                else html("{t}", t=viewer.redact(text)) for text, matched in hit.segments())


def messages_page(viewer: Viewer, request: Request) -> Response:
    """Message search."""
    per = viewer.page_size
    number = request.int_arg("page", 1, minimum=1)
    form = _form(request)
    query = request.arg("q")
    behind = viewer.store.messages_behind()
    note = html('<p class="note">{n} session{s} with messages not indexed yet: run '
                "<code>transcript-store db index</code> to search them.</p>", n=f"{behind:,}",
                s="s" if behind != 1 else "") if behind else Markup("")
    if not query:
        body = html("<h1>Search messages</h1>{form}{note}", form=form, note=note)
        return page("Messages", body, current="/messages")
    try:
        hits = viewer.store.search_messages(
            query, agent=request.arg("agent"), project=request.arg("cwd"),
            since=parse_time(request.arg("since"), "since"),
            until=parse_time(request.arg("until"), "until", end=True),
            role=request.arg("role"), session_id=request.arg("session"),
            limit=per + 1, offset=(number - 1) * per)
    except (BadRequest, store.UsageError) as exc:
        body = html('<h1>Search messages</h1>{form}<p class="error">{e}</p>', form=form, e=exc)
        return page("Messages", body, status=400, current="/messages")
    has_next, hits = len(hits) > per, hits[:per]
    rows = join(html(
        '<tr class="match"><td><a href="{href}">{title}</a><br><small>#{pos} · {agent}'
        '</small></td><td>{time}</td><td><span class="badge">{role}</span></td>'
        '<td class="snippet">{snippet}</td></tr>',
        href=url("session", h.session_id, query={"at": h.position}, fragment=f"m-{h.position}"),
        title=viewer.redact(h.title) if h.title else h.session_id, pos=h.position,
        agent=h.agent or "-", time=when(h.created_at), role=h.role,
        snippet=_snippet(viewer, h)) for h in hits)
    table = html('<table class="matches nav-list"><thead><tr><th>session · message</th>'
                 "<th>time</th><th>part</th><th>text</th></tr></thead><tbody>{rows}</tbody></table>",
                 rows=rows) if hits else html('<p class="empty">No messages match.</p>')
    bar = pager(request, number, has_next)
    body = html("<h1>Search messages</h1>{form}{note}{bar}{table}{bar}", form=form, note=note,
                bar=bar, table=table)
    return page("Messages", body, current="/messages")
