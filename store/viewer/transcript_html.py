"""Messages as HTML: roles, text, calls with their results beside them (edge layer).

Contract: :func:`message_html` writes one stored message; every value from the transcript
(texts, names, ids, arguments, results) goes through the escaping helpers, so markup in a
transcript shows as text. Prompts and answers are Markdown rendered with raw HTML off
(:mod:`store.viewer.rendering`); thinking is folded in a ``<details>``. A call shows its
arguments as fields (a command as its command line; the raw text and the parser's error when
they are invalid) and its first result beside it, decoded to its text (Codex's JSON envelope
unwrapped), or a "dangling" mark when it has none; error results are marked. A message made
only of results already shown beside their calls gets no card, only its ``#m-N`` anchor; any
other result (one without a call, or a call's second result) is shown where it is, marked.
Long texts are folded (:func:`~store.viewer.layout.folded`) with the full text one request
away.
"""

from __future__ import annotations

from bisect import bisect_left

import store
from store.viewer.layout import folded, size, when
from store.viewer.markup import Markup, html, join, url
from store.viewer.rendering import arguments_html, decode_result, markdown, pretty

__all__ = ["CallIndex", "message_html", "part_text", "pretty"]

#: The roles whose texts are Markdown (prompts and answers; a tool's output is shown as is).
_MARKDOWN_ROLES = frozenset({"user", "assistant", "system", "developer"})

#: A call's or a result's place: (message position, index within the message).
CallRef = tuple[int, int]


def part_text(part: store.Part) -> str:
    """The full display text of a message part (a call: its arguments)."""
    if isinstance(part, store.TextPart | store.ThinkingPart):
        return part.text
    if isinstance(part, store.ToolCall):
        return pretty(part.input)
    if isinstance(part, store.InvalidToolCall):
        return part.arguments_text
    if isinstance(part, store.ToolResult):
        return decode_result(part.text)[0]
    if isinstance(part, store.ServerToolCall):
        return pretty(part.input)
    return pretty(part.data)


class CallIndex:
    """Where each call's result is, counted once per loaded transcript.

    ``beside[(pos, idx)]`` is the result reference shown beside call ``idx`` of message
    ``pos`` (its first linked result); ``calls``, ``invalid``, ``errors`` (calls whose
    result is an error), ``dangling`` (calls without a result) and ``orphans`` (results
    without a call) count over the whole session.
    """

    def __init__(self, transcript: store.Transcript) -> None:
        self.positions = [m.position for m in transcript.messages]
        self.by_position = {m.position: m for m in transcript.messages}
        self.links: dict[CallRef, CallRef] = dict(transcript.links)
        self.beside: dict[CallRef, CallRef] = {}
        for result_ref, call_ref in sorted(self.links.items()):
            self.beside.setdefault(call_ref, result_ref)
        self.shown = set(self.beside.values())
        self.calls = self.invalid = self.errors = self.dangling = self.orphans = 0
        for stored in transcript.messages:
            message = stored.message
            for number, call in enumerate(message.tool_calls):
                self.calls += 1
                self.invalid += isinstance(call, store.InvalidToolCall)
                result = self.result((stored.position, number))
                self.dangling += result is None
                self.errors += result is not None and result[2].is_error
            for number in range(len(message.tool_results)):
                self.orphans += (stored.position, number) not in self.links

    def message_at(self, position: int) -> store.StoredMessage | None:
        return self.by_position.get(position)

    def result(self, call: CallRef) -> tuple[int, int, store.ToolResult] | None:
        """The result shown beside a call: its position, index and value."""
        ref = self.beside.get(call)
        if ref is None:
            return None
        return ref[0], ref[1], self.by_position[ref[0]].message.tool_results[ref[1]]

    def page_of(self, position: int, per_page: int) -> int:
        return bisect_left(self.positions, position) // per_page + 1


def _call_link(session_id: str, index: CallIndex, call: CallRef, per_page: int,
               here: int) -> str:
    anchor = f"c-{call[0]}-{call[1]}"
    number = index.page_of(call[0], per_page)
    if number == here:
        return "#" + anchor
    return url("session", session_id, query={"page": number}, fragment=anchor)


def _message_link(session_id: str, index: CallIndex, position: int, per_page: int,
                  here: int) -> str:
    number = index.page_of(position, per_page)
    if number == here:
        return f"#m-{position}"
    return url("session", session_id, query={"page": number}, fragment=f"m-{position}")


def _call_html(session_id: str, position: int, part_number: int, number: int,
               call: store.ToolCall | store.InvalidToolCall, index: CallIndex,
               per_page: int, here: int) -> Markup:
    badges: list[Markup] = []
    classes = ["call"]
    if call.raw_name is not None:
        badges.append(html('<span class="badge">recorded as {r}</span>', r=call.raw_name))
    args_url = url("session", session_id, "text", position, part_number)
    if isinstance(call, store.InvalidToolCall):
        classes.append("invalid")
        badges.append(html('<span class="badge bad">invalid arguments: {k}</span>',
                           k=call.error_kind))
        arguments = html('{args}<p class="parse-error">{msg}</p>',
                         args=folded(call.arguments_text, args_url, css="json"),
                         msg=call.error_message)
    else:
        arguments = arguments_html(call.input, args_url)
    found = index.result((position, number))
    if found is None:
        classes.append("dangling")
        badges.append(html('<span class="badge warn">dangling: no result</span>'))
        result = html('<p class="no-result">No result was recorded for this call.</p>')
    else:
        rpos, ridx, value = found
        if value.is_error:
            classes.append("error")
            badges.append(html('<span class="badge bad">error result</span>'))
        result = html('<h4>result <a class="at" href="{h}">#{p}</a>{flag}</h4>{text}',
                      h=_message_link(session_id, index, rpos, per_page, here), p=rpos,
                      flag=Markup(' <span class="badge bad">error</span>')
                      if value.is_error else Markup(""),
                      text=result_text(value, url("session", session_id, "result", rpos,
                                                  ridx)))
    return html(
        '<details class="{cls}" id="c-{pos}-{n}" open><summary><span class="tool">{name}'
        '</span> <code class="id">{cid}</code> {badges}</summary><div class="call-body">'
        '<div class="args"><h4>arguments</h4>{arguments}</div><div class="result">{result}'
        "</div></div></details>",
        cls=" ".join(classes), pos=position, n=number, name=call.name,
        cid=call.id if call.id is not None else "(no id)", badges=join(badges, " "),
        arguments=arguments, result=result)


def result_text(result: store.ToolResult, source: str) -> Markup:
    """A result's text as decoded (:func:`~store.viewer.rendering.decode_result`), folded when
    long, its envelope's facts (exit code, duration ...) above it."""
    text, facts = decode_result(result.text)
    shown = join(html('<span class="fact">{k}: <b>{v}</b></span>', k=k, v=v)
                 for k, v in facts)
    return html("{facts}{text}", facts=html('<p class="facts">{f}</p>', f=shown)
                if facts else Markup(""), text=folded(text, source, css="result-text"))


def _result_html(session_id: str, position: int, number: int, result: store.ToolResult,
                 index: CallIndex, per_page: int, here: int) -> Markup:
    call = index.links.get((position, number))
    if call is None:
        note = html('<span class="badge warn">result without a call</span> '
                    'names call <code>{c}</code>', c=result.call_id or "(none)")
    else:
        note = html('<span class="badge warn">another result</span> of '
                    '<a href="{h}">call {p}.{i}</a>', p=call[0], i=call[1],
                    h=_call_link(session_id, index, call, per_page, here))
    flag = Markup(' <span class="badge bad">error</span>') if result.is_error else Markup("")
    return html('<section class="loose-result">{note}{flag}{text}</section>', note=note,
                flag=flag, text=result_text(result, url("session", session_id, "result",
                                                        position, number)))


def message_html(session_id: str, stored: store.StoredMessage, index: CallIndex,
                 per_page: int) -> Markup:
    """One message as an ``<article id="m-POSITION">``."""
    message, position = stored.message, stored.position
    here = index.page_of(position, per_page)
    results = message.tool_results
    head = html('<header><a class="pos" href="#m-{p}">#{p}</a> <span class="role">{role}'
                '</span> {time}{src}</header>', p=position, role=message.role,
                time=when(stored.created_at),
                src=html(' <span class="src">{s}</span>', s=message.source)
                if message.source else Markup(""))
    only_shown = results and all(
        isinstance(p, store.ToolResult) or (isinstance(p, store.TextPart) and not p.text.strip())
        for p in message.parts) and all((position, n) in index.shown for n in range(len(results)))
    if only_shown:
        # No card: the results are read beside their calls; the anchor keeps #m-N links.
        first = index.links[(position, 0)]
        return html('<span class="anchor" id="m-{p}" data-call="c-{c}-{i}"></span>',
                    p=position, c=first[0], i=first[1])
    body: list[Markup] = []
    call_number = result_number = 0
    for part_number, part in enumerate(message.parts):
        text_url = url("session", session_id, "text", position, part_number)
        if isinstance(part, store.TextPart):
            if part.text.strip():
                body.append(markdown(part.text) if message.role in _MARKDOWN_ROLES
                            else folded(part.text, text_url, css="text"))
        elif isinstance(part, store.ThinkingPart):
            body.append(html('<details class="thinking"><summary>thinking ({n})</summary>'
                             "{t}</details>", n=size(len(part.text)),
                             t=markdown(part.text)))
        elif isinstance(part, store.ToolCall | store.InvalidToolCall):
            body.append(_call_html(session_id, position, part_number, call_number, part,
                                   index, per_page, here))
            call_number += 1
        elif isinstance(part, store.ToolResult):
            ref = (position, result_number)
            if ref not in index.shown:
                body.append(_result_html(session_id, position, result_number, part, index,
                                         per_page, here))
            result_number += 1  # (one shown beside its call is not repeated here)
        elif isinstance(part, store.ServerToolCall):
            body.append(html('<section class="server-call"><h4>server tool <span class="tool">'
                             '{n}</span></h4>{t}</section>', n=part.name,
                             t=folded(part_text(part), text_url, css="json")))
        else:
            body.append(html('<details class="opaque"><summary>{k}</summary>{t}</details>',
                             k=part.kind, t=folded(part_text(part), text_url, css="json")))
    return html('<article class="msg role-{role}" id="m-{p}">{head}{body}</article>',
                role=message.role, p=position, head=head,
                body=join(body) or html('<p class="empty">(empty)</p>'))
