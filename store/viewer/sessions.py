"""``/sessions``: the archive's front page, every session by its own last activity (edge layer).

Columns: the session (title, id; a subagent says whose), agent, project (cwd), model,
messages, calls, cost (:class:`~store.viewer.costs.CostBook`; a top-level session's cost
includes its subagents'), started and last active: the session's own times (revision 0016),
never the import's. ``Viewer.page_size`` a page (``?page=``), with the total and the last page.

Unfiltered, the list is a tree: the top-level sessions, each with the sessions started from it
(subagents, forks, continuations) nested below it. Any filter lists every matching session
flat (subagents too, each naming its parent); ``flat=1`` does so without a filter. Filters:
``q`` (title contains), ``agent``, ``cwd`` (the project folder or below), ``model``,
``provider``, ``tag``, ``tool`` (a current tool name the session called), ``since`` /
``until`` (active in that range, by the sessions' own times; dates are whole days, both
inclusive).
"""

from __future__ import annotations

from typing import Any, Protocol

import store
from store.viewer.costs import CostBook
from store.viewer.http import Request, Response
from store.viewer.layout import datalist, field, page, pager, parse_time, select, when
from store.viewer.live import activity_stamp
from store.viewer.markup import Markup, html, join, url

__all__ = ["sessions_page", "tool_names"]

_CHUNK = 500  # sessions read per query when filtering by tool


class Viewer(Protocol):
    store: store.TranscriptStore
    page_size: int
    costs: CostBook

    def redact(self, text: str) -> str: ...


def tool_names(opened: store.TranscriptStore) -> list[str]:
    """The current tool names, most called first (at most 500): suggestions for a field."""
    return list(opened.count_calls_by_tool())[:500]


def _sessions_using(opened: store.TranscriptStore, tool: str, filters: dict[str, Any],
                    offset: int, limit: int) -> list[store.SessionInfo]:
    """Sessions with a call to ``tool`` (current name) matching ``filters``, paged. The
    public API has no such filter: the sessions are found with the call search, then the
    filtered list is walked in order keeping those."""
    wanted = {m.session_id for m in store.iter_calls(opened, store.CallQuery(tool=tool),
                                                     preview_chars=0)}
    kept: list[store.SessionInfo] = []
    seen = start = 0
    while wanted and len(kept) < offset + limit and seen < len(wanted):
        chunk = opened.list_sessions(**filters, limit=_CHUNK, offset=start)
        for info in chunk:
            if info.session_id in wanted:
                kept.append(info)
                seen += 1
        if len(chunk) < _CHUNK:
            break
        start += _CHUNK
    return kept[offset:offset + limit]


def _project(cwd: str | None) -> Markup:
    if not cwd:
        return Markup("–")
    name = cwd.rstrip("/").rsplit("/", 1)[-1] or cwd
    return html('<a class="project" href="{h}" title="{cwd}">{name}</a>',
                h=url("sessions", query={"cwd": cwd}), cwd=cwd, name=name)


def _row(viewer: Viewer, info: store.SessionInfo, cost: store.UsageTotals | None, *,
         depth: int = 0, flat: bool = False) -> Markup:
    link = info.parent
    note = Markup("")
    if link is not None and (flat or depth == 0):
        note = html(' <small class="lineage">{kind} of <a href="{h}"><code>{p}</code></a>'
                    "</small>", kind=link.kind, h=url("session", link.parent_session_id),
                    p=link.parent_session_id[:12])
    elif link is not None:
        note = html(' <small class="lineage">{kind}</small>', kind=link.kind)
    title = viewer.redact(info.title or info.session_id)
    return html(
        '<tr class="session depth-{d}"><td class="title">'
        '<a href="{href}">{title}</a>{note}<br><code class="sid">{sid}</code></td>'
        "<td>{agent}</td><td>{project}</td><td><small>{model}</small></td>"
        '<td class="num">{n}</td><td class="num">{calls}</td><td class="num">{cost}</td>'
        "<td>{started}</td><td>{active}</td></tr>",
        d=min(depth, 3), href=url("session", info.session_id), title=title, note=note,
        sid=info.session_id, agent=info.agent or "–", project=_project(info.cwd),
        model=info.model or "–", n=info.message_count,
        calls="–" if info.call_count is None else info.call_count,
        cost=CostBook.cell(cost), started=when(info.started_at),
        active=when(info.last_active_at))


def _below(viewer: Viewer, info: store.SessionInfo,
           own: dict[str, store.UsageTotals]) -> list[Markup]:
    """The rows of the sessions below a top-level one, nested (none: one indexed query)."""
    if not viewer.store.session_children(info.session_id):
        return []
    tree = viewer.store.session_tree(info.session_id)
    return [_row(viewer, node.session, own.get(node.session.session_id), depth=depth)
            for depth, node in tree.walk() if depth > 0]


def sessions_page(viewer: Viewer, request: Request) -> Response:
    """The session list."""
    opened = viewer.store
    per = viewer.page_size
    number = request.int_arg("page", 1, minimum=1)
    filters: dict[str, Any] = {
        "provider": request.arg("provider"), "model": request.arg("model"),
        "tag": request.arg("tag"), "title_contains": request.arg("q"),
        "since": parse_time(request.arg("since"), "since"),
        "until": parse_time(request.arg("until"), "until", end=True),
        "agent": request.arg("agent"), "cwd": request.arg("cwd"),
    }
    tool = request.arg("tool")
    flat = tool is not None or request.arg("flat") is not None or any(
        value is not None for value in filters.values())
    stamp = activity_stamp(opened)
    own, rolled = viewer.costs.get(stamp)
    offset = (number - 1) * per
    pages: int | None = None
    if tool is None:
        total = opened.count_sessions(**filters, roots=not flat)
        rows = opened.list_sessions(**filters, roots=not flat, limit=per, offset=offset)
        pages = max(1, -(-total // per))
        has_next = number < pages
    else:
        rows = _sessions_using(opened, tool, filters, offset, per + 1)
        has_next, rows = len(rows) > per, rows[:per]
        total = None
    lines: list[Markup] = []
    for info in rows:
        top = not flat and info.parent is None
        lines.append(_row(viewer, info, (rolled if top else own).get(info.session_id),
                          flat=flat))
        if not flat:
            lines.extend(_below(viewer, info, own))
    agents = opened.agents()
    form = html(
        '<form class="filters" method="get" action="/sessions">{q}{agent}{cwd}{model}{tag}'
        "{tool}{since}{until}{flat}<button type=\"submit\">filter</button> "
        '<a href="/sessions">clear</a>{tools}</form>',
        q=field("title", "q", request.arg("q"), placeholder="contains"),
        agent=select("agent", "agent", agents, request.arg("agent")),
        cwd=field("project folder", "cwd", request.arg("cwd"), placeholder="/home/me/app"),
        model=field("model", "model", request.arg("model")),
        tag=field("tag", "tag", request.arg("tag")),
        tool=field("tool used", "tool", tool, datalist="tool-names"),
        since=field("active from", "since", request.arg("since"), kind="date"),
        until=field("to", "until", request.arg("until"), kind="date"),
        flat=html('<label class="check"><input type="checkbox" name="flat" value="1"{c}> '
                  "flat (subagents as rows)</label>",
                  c=Markup(" checked") if request.arg("flat") else Markup("")),
        tools=datalist("tool-names", tool_names(opened)))
    table = html(
        '<table class="sessions nav-list"><thead><tr><th>session</th><th>agent</th>'
        "<th>project</th><th>model</th><th>messages</th><th>calls</th>"
        '<th title="estimated from the recorded token usage; a top-level session\'s cost '
        "includes its subagents'\">cost</th><th>started</th><th>last active</th></tr></thead>"
        "<tbody>{rows}</tbody></table>", rows=join(lines)) if rows else html(
        '<p class="empty">No sessions match.</p>')
    counted = html('<p class="totals">{n} {what}</p>', n=f"{total:,}",
                   what=("session" if total == 1 else "sessions") if flat else
                   ("top-level session" if total == 1 else "top-level sessions")
                   ) if total is not None else Markup("")
    bar = pager(request, number, has_next, pages=pages)
    body = html("<h1>Sessions</h1>{form}{counted}{bar}{table}{bar}", form=form,
                counted=counted, bar=bar, table=table)
    return page("Sessions", body, current="/sessions", live=stamp)
