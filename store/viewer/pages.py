"""The list pages: tools (with the usage chart) and call search (the session list is
:mod:`store.viewer.sessions`).

* ``/tools``: the usage chart and, per tool, calls, sessions, invalid calls, error results,
  calls without a result, first and last seen; ``since`` / ``until`` narrow both.
* ``/search``: :func:`store.search_calls` with the CLI's filters (``tool``, ``raw_name``,
  ``session``, ``since``, ``until``, ``status`` (repeatable), ``where`` and ``contains``
  (one ``PATH=VALUE`` a line), ``text``), oldest first, each match linking to its call in
  its session.

The store has no total counts for these lists, so the pagers offer previous / next (a page
is read with one extra row to know whether a next one exists).
"""

from __future__ import annotations

from typing import Literal, Protocol

import store
from store.viewer.chart import usage_series, usage_svg
from store.viewer.http import BadRequest, Request, Response
from store.viewer.layout import datalist, field, page, pager, parse_time, when
from store.viewer.markup import Markup, html, join, url
from store.viewer.sessions import tool_names

_Redactor = store.Redactor


class Viewer(Protocol):
    """What the list pages need of the application (:class:`store.viewer.app.Viewer`)."""

    store: store.TranscriptStore
    page_size: int
    redactor: _Redactor | None

    def redact(self, text: str) -> str: ...

__all__ = ["search_page", "tools_page"]

def tools_page(viewer: Viewer, request: Request) -> Response:
    """Usage per tool: the chart and the table."""
    per = viewer.page_size
    number = request.int_arg("page", 1, minimum=1)
    since = parse_time(request.arg("since"), "since")
    until = parse_time(request.arg("until"), "until", end=True)
    if since is not None and until is not None and since >= until:
        raise BadRequest("since must be before until")
    usage = store.tool_usage(viewer.store, since=since, until=until, limit=per + 1,
                             offset=(number - 1) * per)
    has_next, usage = len(usage) > per, usage[:per]
    chart = usage_svg(usage_series(viewer.store, since, until)) if number == 1 else Markup("")
    period = {"since": request.arg("since"), "until": request.arg("until")}

    def search(name: str, **extra: str) -> str:
        return url("search", query={"tool": name, **period, **extra})

    rows = join(html(
        '<tr><td><a href="{find}" class="tool">{name}</a>{raw}</td>'
        '<td class="num">{calls}</td><td class="num"><a href="{sessions_href}">{sessions}</a>'
        '</td><td class="num {ic}"><a href="{inv_href}">{invalid}</a></td>'
        '<td class="num {ec}"><a href="{err_href}">{errors}</a></td>'
        '<td class="num {dc}"><a href="{none_href}">{none}</a></td><td>{first}</td>'
        "<td>{last}</td></tr>",
        find=search(u.name), name=u.name,
        raw=html('<br><small>recorded as {r}</small>', r=", ".join(u.raw_names))
        if u.raw_names != (u.name,) else Markup(""),
        calls=u.calls, sessions=u.sessions, invalid=u.invalid_calls, errors=u.error_results,
        none=u.calls_without_result, first=when(u.first_seen), last=when(u.last_seen),
        sessions_href=url("sessions", query={"tool": u.name}),
        inv_href=search(u.name, status="invalid"), err_href=search(u.name, status="error"),
        none_href=search(u.name, status="no_result"),
        ic="bad" if u.invalid_calls else "", ec="bad" if u.error_results else "",
        dc="warn" if u.calls_without_result else "")
        for u in usage)
    table = html(
        '<table class="tools nav-list"><thead><tr><th>tool</th><th>calls</th><th>sessions</th>'
        "<th>invalid calls</th><th>error results</th><th>no result</th><th>first seen</th>"
        "<th>last seen</th></tr></thead><tbody>{rows}</tbody></table>", rows=rows
    ) if usage else html('<p class="empty">No tool calls.</p>')
    form = html('<form class="filters" method="get" action="/tools">{since}{until}'
                '<button type="submit">show</button> <a href="/tools">all time</a></form>',
                since=field("from", "since", request.arg("since"), kind="date"),
                until=field("to", "until", request.arg("until"), kind="date"))
    bar = pager(request, number, has_next)
    body = html("<h1>Tools</h1>{form}{chart}{bar}{table}", form=form, chart=chart, bar=bar,
                table=table)
    return page("Tools", body, current="/tools")


def _condition(line: str, op: Literal["eq", "contains"]) -> store.ArgumentCondition:
    try:
        return store.ArgumentCondition.parse(line, op)
    except store.UsageError as exc:
        raise BadRequest(str(exc)) from None


def _lines(request: Request, name: str) -> list[str]:
    return [line.strip() for value in request.args(name) for line in value.splitlines()
            if line.strip()]


def _query(request: Request) -> store.CallQuery:
    try:
        return store.CallQuery(
            tool=request.arg("tool"), raw_name=request.arg("raw_name"),
            session_id=request.arg("session"),
            since=parse_time(request.arg("since"), "since"),
            until=parse_time(request.arg("until"), "until", end=True),
            status=tuple(request.args("status")) or None,
            where=tuple(_condition(w, "eq") for w in _lines(request, "where"))
            + tuple(_condition(c, "contains") for c in _lines(request, "contains")),
            text=request.arg("text"), agent=request.arg("agent"), cwd=request.arg("cwd"),
            views=tuple(store.ViewCondition(view, value, "icontains")
                        for view in ("command", "path")
                        if (value := request.arg(view)) is not None))
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


def _search_form(request: Request, tools: list[str]) -> Markup:
    chosen = set(request.args("status"))
    statuses = join(html('<label class="check"><input type="checkbox" name="status" '
                         'value="{s}"{c}> {s}</label>', s=s,
                         c=Markup(" checked") if s in chosen else Markup(""))
                    for s in store.CALL_STATUSES)
    return html(
        '<form class="filters search" method="get" action="/search">{tool}{raw}{session}'
        "{agent}{cwd}{since}{until}{command}{path}{text}"
        "<fieldset><legend>status (any of)</legend>{statuses}</fieldset>"
        '<label class="area">arguments equal (one PATH=JSON a line)<textarea name="where" '
        'rows="2" placeholder="options.mode=&quot;fast&quot;">{where}</textarea></label>'
        '<label class="area">arguments contain (one PATH=TEXT a line)<textarea '
        'name="contains" rows="2" placeholder="command=rm -rf">{contains}</textarea></label>'
        '<div><button type="submit">search</button> <a href="/search">clear</a></div>'
        "{tools}</form>",
        tool=field("tool", "tool", request.arg("tool"), datalist="tool-names"),
        raw=field("recorded name", "raw_name", request.arg("raw_name")),
        session=field("session", "session", request.arg("session")),
        agent=field("agent", "agent", request.arg("agent"), placeholder="claude-code"),
        cwd=field("project folder", "cwd", request.arg("cwd"), placeholder="/home/me/app"),
        command=field("shell command contains", "command", request.arg("command"),
                      placeholder="rm -rf"),
        path=field("file path contains", "path", request.arg("path"), placeholder="src/"),
        since=field("from", "since", request.arg("since"), kind="date"),
        until=field("to", "until", request.arg("until"), kind="date"),
        text=field("full text", "text", request.arg("text"), placeholder="3+ characters"),
        statuses=statuses, where="\n".join(_lines(request, "where")),
        contains="\n".join(_lines(request, "contains")),
        tools=datalist("tool-names", tools))


def search_page(viewer: Viewer, request: Request) -> Response:
    """Call search."""
    per = viewer.page_size
    number = request.int_arg("page", 1, minimum=1)
    form = _search_form(request, tool_names(viewer.store))
    try:
        query = _query(request)
    except BadRequest as exc:
        body = html('<h1>Search calls</h1>{form}<p class="error">{e}</p>', form=form, e=exc)
        return page("Search", body, status=400, current="/search")
    matches = store.search_calls(viewer.store, query, limit=per + 1, offset=(number - 1) * per,
                                 redactor=viewer.redactor)
    has_next, matches = len(matches) > per, matches[:per]
    total = (store.count_calls(viewer.store, query) if has_next or number > 1
             else len(matches))
    rows = join(html(
        '<tr class="{cls}"><td><a href="{href}">{title}</a><br><small>#{pos}.{idx}</small>'
        '</td><td>{time}</td><td><span class="tool">{name}</span>{raw}</td>'
        '<td><span class="badge {scls}">{status}</span></td><td><code class="args">{args}'
        '</code></td><td>{flag}<span class="preview">{result}</span></td></tr>',
        cls="match", href=url("session", m.session_id, query={"at": m.position},
                              fragment=f"c-{m.position}-{m.index}"),
        title=m.session_id, pos=m.position, idx=m.index, time=when(m.created_at),
        name=m.name, raw=html("<br><small>recorded as {r}</small>", r=m.raw_name)
        if m.raw_name != m.name else Markup(""),
        scls="" if m.arguments_status in ("valid", "empty") else "bad",
        status=m.arguments_status,
        args=_cut(m.arguments_text, 240),
        flag=html('<span class="badge {c}">{s}</span> ', s=m.result_status,
                  c="bad" if m.result_is_error else "warn" if m.result_is_error is None
                  else ""),
        result="(no result)" if m.result_preview is None else _cut(m.result_preview, 240))
        for m in matches)
    table = html('<table class="matches nav-list"><thead><tr><th>session · call</th><th>time</th>'
                 "<th>tool</th><th>arguments status</th><th>arguments</th><th>result</th>"
                 "</tr></thead>"
                 "<tbody>{rows}</tbody></table>", rows=rows) if matches else html(
        '<p class="empty">No calls match.</p>')
    bar = pager(request, number, has_next)
    first = (number - 1) * per
    totals = html('<p class="totals">{n} {calls}{shown}</p>', n=f"{total:,}",
                  calls="call" if total == 1 else "calls",
                  shown=f" (showing {first + 1}-{first + len(matches)})"
                  if matches and total > len(matches) else "")
    body = html("<h1>Search calls</h1>{form}{totals}{bar}{table}{bar}", form=form, bar=bar,
                table=table, totals=totals)
    return page("Search", body, current="/search")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
