"""The session routes: the transcript page, the repair report, exports, full texts.

Routes (``<id>`` is the percent-quoted session id):

* ``/session/<id>?page=N`` (or ``?at=POSITION``: the page holding that message): the
  transcript, :attr:`Viewer.messages_per_page` messages a page; each call with its arguments
  pretty-printed and its (first) result beside it; invalid calls, error results, dangling
  calls and results without a call marked; texts over ``FOLD_BYTES`` folded.
* ``/session/<id>/repair?target=T&page=N``: what :func:`store.repair` changes for target T.
* ``/session/<id>/export/<target>[?repair=1]``: :func:`store.render` of the session (after
  :func:`store.repair` with ``repair=1``) as a JSON attachment.
* ``/session/<id>/result/<pos>/<idx>``: the full text of result ``idx`` of message ``pos``
  (decoded: :func:`~store.viewer.rendering.decode_result`);
  ``/session/<id>/text/<pos>/<part>``: the full text of part ``part`` of message ``pos``
  (a call's arguments pretty-printed). Both ``text/plain; charset=utf-8``.

Transcripts are loaded whole (``TranscriptStore.load`` has no "positions [a, b)" window) and
kept in a small :class:`TranscriptCache`, checked against the session's ``updated_at`` and
message count on every use, so that paging through a long session loads it once.
"""

from __future__ import annotations

import json
import re
import threading
import time
from bisect import bisect_left
from collections import Counter, OrderedDict
from typing import Any, Protocol

import orjson

import store
from store.core.depth import deep_dumps
from store.viewer.costs import CostBook
from store.viewer.http import BadRequest, NotFound, Request, Response
from store.viewer.layout import page, pager, select, when
from store.viewer.live import activity_stamp
from store.viewer.markup import Markup, html, join, url
from store.viewer.rendering import decode_result
from store.viewer.transcript_html import CallIndex, message_html, part_text


class Viewer(Protocol):
    """What the session routes need of the application (:class:`store.viewer.app.Viewer`)."""

    store: store.TranscriptStore
    messages_per_page: int
    transcripts: TranscriptCache
    costs: CostBook

    def redact(self, text: str) -> str: ...

__all__ = ["TranscriptCache", "route"]

_CHANGES_PER_PAGE = 100


class TranscriptCache:
    """The last few loaded transcripts, by session id, reused while the session's
    ``(updated_at, message_count)`` is unchanged and for at most ``ttl`` seconds (alias
    changes do not touch sessions); redacted with ``redactor`` when given. Thread-safe."""

    def __init__(self, opened: store.TranscriptStore, *, size: int = 4,
                 ttl: float = 60.0, redactor: store.Redactor | None = None) -> None:
        self._store = opened
        self._redactor = redactor
        self._size = size
        self._ttl = ttl
        self._lock = threading.Lock()
        self._items: OrderedDict[str, tuple[tuple[Any, ...], float, store.Transcript,
                                            CallIndex]] = OrderedDict()

    def get(self, session_id: str) -> tuple[store.Transcript, CallIndex]:
        """The session's transcript and its call index (``SessionNotFound`` when none)."""
        info = self._store.get_session(session_id)
        key = (info.updated_at, info.message_count)
        now = time.monotonic()
        with self._lock:
            hit = self._items.get(session_id)
            if hit is not None and hit[0] == key and now - hit[1] < self._ttl:
                self._items.move_to_end(session_id)
                return hit[2], hit[3]
        transcript = self._store.load(session_id)
        if self._redactor is not None:  # every page and download of it shows the copy
            transcript, _ = store.redact_transcript(transcript, self._redactor)
        index = CallIndex(transcript)
        with self._lock:
            self._items[session_id] = (key, now, transcript, index)
            self._items.move_to_end(session_id)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return transcript, index


def route(viewer: Viewer, request: Request, session_id: str, rest: tuple[str, ...]
          ) -> Response:
    """Dispatch ``/session/<id>/...``."""
    if not rest:
        return session_page(viewer, request, session_id)
    kind = rest[0]
    if kind == "repair" and len(rest) == 1:
        return repair_page(viewer, request, session_id)
    if kind == "export" and len(rest) == 2:
        return export(viewer, request, session_id, rest[1])
    if kind in ("result", "text") and len(rest) == 3:
        return full_text(viewer, session_id, kind, rest[1], rest[2])
    raise NotFound(f"no page at {request.path}")


def _sources(sources: list[store.SessionSource]) -> Markup:
    """Where the session came from; a source file deleted since says so, and since when."""
    items = join(
        html('<li class="warn">source gone since {when} (deleted; kept here): '
             "<code>{path}</code></li>", when=when(s.gone_at), path=s.path)
        if s.gone_at is not None else html("<li>source: <code>{path}</code></li>", path=s.path)
        for s in sources)
    return html('<ul class="sources">{items}</ul>', items=items) if sources else Markup("")


def _session_head(info: store.SessionInfo, index: CallIndex,
                  costs: tuple[store.UsageTotals | None, store.UsageTotals | None]) -> Markup:
    tags = join((html('<span class="tag">{t}</span>', t=t) for t in info.tags), " ")
    facts = html(
        "<dl class=\"facts\"><dt>id</dt><dd><code>{sid}</code></dd><dt>provider</dt>"
        "<dd>{provider}</dd><dt>model</dt><dd>{model}</dd><dt>cwd</dt><dd><code>{cwd}</code>"
        "</dd><dt>tags</dt><dd>{tags}</dd><dt>started</dt><dd>{started}</dd>"
        "<dt>last active</dt><dd>{active}</dd><dt>stored</dt><dd>{stored}</dd>"
        "<dt>messages</dt><dd>{messages}</dd><dt>agent</dt><dd>{agent}</dd><dt>cost</dt>"
        "<dd>{cost}{rolled}</dd></dl>",
        sid=info.session_id, provider=info.provider or "–", model=info.model or "–",
        cwd=info.cwd or "–", tags=tags or "–",
        started=when(info.started_at),
        active=when(info.last_active_at), stored=when(info.created_at),
        messages=info.message_count, agent=info.agent or "–", cost=CostBook.cell(costs[0]),
        rolled=html(" <small>({c} with its subagents)</small>", c=CostBook.cell(costs[1]))
        if costs[1] is not None and costs[1].rolled_up else Markup(""))
    counts = html(
        '<p class="counts"><span>{calls} calls</span> <span class="{ic}">{invalid} invalid'
        '</span> <span class="{ec}">{errors} error results</span> <span class="{dc}">'
        "{dangling} dangling</span> <span class=\"{oc}\">{orphans} results without a call"
        "</span></p>",
        calls=index.calls, invalid=index.invalid, errors=index.errors,
        dangling=index.dangling, orphans=index.orphans,
        ic="bad" if index.invalid else "", ec="bad" if index.errors else "",
        dc="warn" if index.dangling else "", oc="warn" if index.orphans else "")
    meta = Markup("")
    if info.metadata:
        pretty = json.dumps(dict(info.metadata), indent=2, ensure_ascii=False, default=str)
        meta = html("<details class=\"meta\"><summary>session metadata</summary>"
                    "<pre>{m}</pre></details>", m=pretty)
    return html("<h1>{title}</h1>{facts}{counts}{meta}",
                title=info.title or info.session_id, facts=facts, counts=counts, meta=meta)


def _lineage(viewer: Viewer, info: store.SessionInfo) -> Markup:
    """Where the session came from (its parent, and the parent's call), and the whole family
    as a tree: the top-level session it descends from, every session below it nested under its
    parent, this one marked; each with its messages, calls and own cost."""
    above = viewer.store.session_ancestors(info.session_id) if info.parent else []
    root = above[-1].session_id if above else info.session_id
    tree = viewer.store.session_tree(root)
    if not tree.children and info.parent is None:
        return Markup("")
    own, _ = viewer.costs.get(activity_stamp(viewer.store))
    link = info.parent
    parent = Markup("")
    if link is not None:
        call = (html(" from call <code>{c}</code>", c=link.parent_call_id)
                if link.parent_call_id else Markup(""))
        parent = html('<p class="parent">{kind} of <a href="{href}"><code>{pid}</code></a>'
                      "{call}</p>", kind=link.kind, href=url("session", link.parent_session_id),
                      pid=link.parent_session_id, call=call)
    return html('<nav class="lineage"><h2>Lineage</h2>{parent}{tree}</nav>', parent=parent,
                tree=_tree_html(viewer, tree, info.session_id, own))


def _tree_html(viewer: Viewer, node: store.SessionTree, here: str,
               own: dict[str, store.UsageTotals]) -> Markup:
    info = node.session
    how = info.parent
    call = (html(" from call <code>{c}</code>", c=how.parent_call_id)
            if how is not None and how.parent_call_id else Markup(""))
    title = viewer.redact(info.title or info.session_id)
    label = (html('<b class="here">{t}</b>', t=title) if info.session_id == here
             else html('<a href="{h}">{t}</a>', h=url("session", info.session_id), t=title))
    kids = join(_tree_html(viewer, child, here, own) for child in node.children)
    return html(
        '<ul class="tree"><li class="{cls}"><span class="kind">{kind}</span> {label}{call} '
        "<small>{n} messages · {calls} calls · {cost}</small>{kids}</li></ul>",
        cls="child" if how is not None else "root", kind=how.kind if how else "session",
        label=label, call=call, n=info.message_count, calls=info.call_count or 0,
        cost=CostBook.cell(own.get(info.session_id)), kids=kids)


def _tools_bar(session_id: str, chosen: str | None = None) -> Markup:
    exports = join(html('<li><span class="target">{t}</span> <a href="{raw}" download>as '
                         'stored</a> · <a href="{fixed}" download>repaired</a></li>', t=t,
                         raw=url("session", session_id, "export", t),
                         fixed=url("session", session_id, "export", t,
                                   query={"repair": "1"}))
                    for t in store.TARGETS)
    form = html('<form class="repair" method="get" action="{action}">{sel} '
                '<button type="submit">repair report</button></form>',
                action=url("session", session_id, "repair"),
                sel=select("provider", "target", store.TARGETS, chosen, blank=None))
    return html('<aside class="session-tools"><div><h2>Export</h2><ul class="exports">'
                "{exports}</ul></div><div><h2>Repair for replay</h2>{form}</div></aside>",
                exports=exports, form=form)


def session_page(viewer: Viewer, request: Request, session_id: str) -> Response:
    """The transcript, one page of messages."""
    transcript, index = viewer.transcripts.get(session_id)
    per = viewer.messages_per_page
    messages = transcript.messages
    pages = max(1, -(-len(messages) // per))
    at = request.int_arg("at", -1)
    if at >= 0:
        number = min(bisect_left(index.positions, at), max(len(messages) - 1, 0)) // per + 1
    else:
        number = request.int_arg("page", 1, minimum=1)
    if number > pages:
        raise NotFound(f"session {session_id!r} has {pages} page(s) of messages, not {number}")
    window = messages[(number - 1) * per:number * per]
    bar = pager(request, number, number < pages, pages=pages)
    stamp = activity_stamp(viewer.store)
    own, rolled = viewer.costs.get(stamp)
    body = html(
        '{head}{tools}<h2 class="transcript-title">Transcript <small>messages {a}–{b} of '
        '{n}</small></h2>{bar}<div class="transcript nav-list">{messages}</div>{bar}',
        head=join((_session_head(transcript.session, index,
                                 (own.get(session_id), rolled.get(session_id))),
                   _lineage(viewer, transcript.session),
                   _sources(viewer.store.session_sources(session_id)))),
        tools=_tools_bar(session_id),
        a=window[0].position if window else 0, b=window[-1].position if window else 0,
        n=len(messages), bar=bar,
        messages=join(message_html(session_id, stored, index, per) for stored in window)
        or html('<p class="empty">No messages.</p>'))
    return page(transcript.session.title or session_id, body,
                live=activity_stamp(viewer.store, session_id), live_session=session_id)


def repair_page(viewer: Viewer, request: Request, session_id: str) -> Response:
    """What repair would change for one target, paged."""
    target = request.arg("target")
    if target not in store.TARGETS:
        raise BadRequest(f"target must be one of {', '.join(store.TARGETS)}, got {target!r}")
    transcript, _ = viewer.transcripts.get(session_id)
    repaired = store.repair(transcript, target)
    changes = repaired.changes
    number = request.int_arg("page", 1, minimum=1)
    shown = changes[(number - 1) * _CHANGES_PER_PAGE:number * _CHANGES_PER_PAGE]
    kinds = Counter(change.kind for change in changes)
    summary = join((html("<li><code>{k}</code>: {n}</li>", k=k, n=n)
                    for k, n in sorted(kinds.items())))
    rows = join(html(
        '<tr><td><code>{kind}</code></td><td>{pos}</td><td><code>{cid}</code></td>'
        '<td class="detail">{detail}</td></tr>', kind=c.kind, cid=c.call_id or "–",
        detail=c.detail,
        pos=html('<a href="{h}">#{p}</a>', p=c.position,
                 h=url("session", session_id, query={"at": c.position},
                       fragment=f"m-{c.position}")) if c.position is not None else "–")
        for c in shown)
    pages = max(1, -(-len(changes) // _CHANGES_PER_PAGE))
    body = html(
        '<p class="crumbs"><a href="{back}">← {title}</a></p><h1>Repair report: {target}</h1>'
        "{tools}<p>{n} change(s) to make the session replayable on <b>{target}</b>{state}."
        "</p><ul class=\"kinds\">{summary}</ul>{bar}<table class=\"changes\"><thead><tr>"
        "<th>change</th><th>position</th><th>call id</th><th>detail</th></tr></thead>"
        "<tbody>{rows}</tbody></table>",
        back=url("session", session_id), title=transcript.session.title or session_id,
        target=target, tools=_tools_bar(session_id, target), n=len(changes),
        state="" if repaired.changed else " (nothing to repair)", summary=summary,
        bar=pager(request, number, number < pages, pages=pages), rows=rows)
    return page(f"repair {target}", body)


def export(viewer: Viewer, request: Request, session_id: str, target: str) -> Response:
    """The rendered request history as a JSON download."""
    if target not in store.TARGETS:
        raise NotFound(f"no export target {target!r}: use one of {', '.join(store.TARGETS)}")
    transcript, _ = viewer.transcripts.get(session_id)
    repaired = request.arg("repair") in ("1", "true", "yes")
    messages = (store.repair(transcript, target).messages
                if repaired else tuple(m.message for m in transcript))
    try:
        rendered = store.render(messages, target)
    except Exception as exc:  # an unrepaired history may be beyond the target's rules
        return Response.text(422, f"cannot render this session for {target} as stored: "
                                  f"{exc}\nexport it repaired (?repair=1) instead\n")
    try:
        body = orjson.dumps(rendered, option=orjson.OPT_INDENT_2)
    except TypeError:  # integers beyond 64 bits, deep nesting: the stdlib writes them
        try:
            text = json.dumps(rendered, indent=2, ensure_ascii=False)
        except RecursionError:  # nested over the limit, stored before the depth rule
            text = deep_dumps(rendered)
        body = text.encode("utf-8", "replace")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", session_id)[:80] or "session"
    name = f"{safe}.{target}{'.repaired' if repaired else ''}.json"
    return Response(200, body, "application/json",
                    [("Content-Disposition", f'attachment; filename="{name}"')])


def full_text(viewer: Viewer, session_id: str, kind: str, raw_position: str,
              raw_index: str) -> Response:
    """The whole text of a result or a part, as plain text."""
    if not raw_position.isdigit() or not raw_index.isdigit():
        raise BadRequest("position and index must be whole numbers")
    position, number = int(raw_position), int(raw_index)
    _, index = viewer.transcripts.get(session_id)
    stored = index.message_at(position)
    if stored is None:
        raise NotFound(f"no message at position {position} in session {session_id!r}")
    if kind == "result":
        results = stored.message.tool_results
        if number >= len(results):
            raise NotFound(f"message {position} has {len(results)} result(s)")
        return Response.text(200, decode_result(results[number].text)[0])
    parts = stored.message.parts
    if number >= len(parts):
        raise NotFound(f"message {position} has {len(parts)} part(s)")
    return Response.text(200, part_text(parts[number]))
