"""The findings page: what ``rules check --save`` stored, each finding linked to its call.

``/findings``: the saved Sigma findings, most recent call first, ``Viewer.page_size`` a page
(``?page=``), filtered by ``level`` (that level and above) and ``session``. Each row links to
the call in its session page (``/session/<id>?at=<position>#c-<position>-<index>``). The
matched text is shown through the viewer's redactor too.
"""

from __future__ import annotations

import store
from store.viewer.http import BadRequest, Request, Response
from store.viewer.layout import field, page, pager, select, when
from store.viewer.markup import Markup, html, join, url
from store.viewer.pages import Viewer

__all__ = ["findings_page"]

LEVELS = ("informational", "low", "medium", "high", "critical")


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
    form = html('<form class="filters" method="get" action="/findings">{level}{session}'
                '<button type="submit">Filter</button></form>',
                level=select("level and above", "level", LEVELS, level),
                session=field("session", "session", session_id))
    table = html('<table class="matches"><thead><tr><th>level</th><th>rule</th>'
                 "<th>session · call</th><th>time</th><th>agent</th><th>tool</th>"
                 "<th>matched</th></tr></thead><tbody>{rows}</tbody></table>",
                 rows=rows) if found else html(
        '<p class="empty">No findings. Run <code>transcript-store rules check --save</code> '
        "to store them.</p>")
    bar = pager(request, number, has_next)
    body = html("<h1>Findings</h1>{form}{bar}{table}{bar}", form=form, bar=bar, table=table)
    return page("Findings", body, current="/findings")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
