"""Texts as people read them: Markdown rendered to escaped HTML, tool results decoded to their
text, shell commands as command lines, arguments as a list of fields (edge layer).

Contract:

* :func:`markdown` renders CommonMark (with tables and strikethrough) through markdown-it-py
  with raw HTML **off**: any ``<tag>`` in a transcript is text. Links and images never become
  URL attributes: a link is its text followed by its address as text, an image its alt text
  and address, so a transcript can make the page neither load nor point anywhere.
* :func:`decode_result` turns a result recorded as a JSON envelope (Codex's
  ``{"output": "...", "metadata": {...}}``) into its output text, with real newlines, and the
  metadata as facts; any other text is returned as it is.
* :func:`command_line` gives the command a call runs: a shell given a script
  (``["bash", "-lc", X]``) as the script, any other argv as :func:`shlex.join` writes it, a
  string as it is.
* :func:`arguments_html` shows a call's arguments as ``name: value`` fields (multi-line and long
  strings in ``<pre>``, nested values as indented JSON), the command first, as a command line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from store.core.depth import deep_dumps
from store.tools.vocabulary import command_line as vocabulary_command_line
from store.viewer.markup import Markup, html, join

__all__ = ["MARKDOWN_LIMIT", "arguments_html", "command_line", "decode_result", "markdown",
           "pretty"]

#: Texts longer than this (characters) are shown as plain text, folded, not rendered.
MARKDOWN_LIMIT = 200_000
#: An argument's string value longer than this is cut (the whole arguments are one link away).
VALUE_LIMIT = 20_000


def pretty(value: Any) -> str:
    """``value`` as indented JSON (any integer size; unknown types as ``str``; a value nested
    deeper than the recursion limit, stored before the store refused it, compact)."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except RecursionError:
        return deep_dumps(value)


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False, "linkify": False,
                                       "typographer": False})
    parser.enable(["table", "strikethrough"])
    parser.disable("image")  # ![alt](src) reads as "!" and a link: never an <img>

    def link_open(_self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        env.setdefault("links", []).append(
            "" if token.markup == "autolink" else str(token.attrGet("href") or ""))
        return '<span class="link">'

    def link_close(_self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        stack = env.get("links") or [""]
        address = stack.pop()
        return "</span>" + (html(' <span class="url">&lt;{a}&gt;</span>', a=address)
                            if address else "")

    parser.add_render_rule("link_open", link_open)
    parser.add_render_rule("link_close", link_close)
    return parser


def markdown(text: str) -> Markup:
    """``text`` as Markdown rendered to HTML in a ``<div class="md">`` (raw HTML escaped,
    no URL attribute); longer than :data:`MARKDOWN_LIMIT`: plain text in a ``<pre>``."""
    if len(text) > MARKDOWN_LIMIT:
        return html('<pre class="text">{t}</pre>', t=text)
    if not text.isascii():  # lone surrogates replaced: the page always encodes as UTF-8
        text = text.encode("utf-8", "replace").decode("utf-8", "replace")
    rendered = _parser().render(text, {})  # markdown-it escapes every text it writes
    return Markup('<div class="md">' + rendered + "</div>")


def decode_result(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A result's text to show, and facts to show beside it (exit code, duration ...).

    A JSON object whose keys are ``output`` (a string) and at most ``metadata`` (an object)
    is Codex's envelope: its output, and each metadata field as ``(name, value)``. Anything
    else is shown as recorded."""
    stripped = text.lstrip()
    if not stripped.startswith("{") or '"output"' not in text:
        return text, []
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text, []
    if not isinstance(value, dict) or not isinstance(value.get("output"), str) \
            or not set(value) <= {"output", "metadata"}:
        return text, []
    meta = value.get("metadata")
    facts: list[tuple[str, str]] = []
    if isinstance(meta, Mapping):
        facts = [(str(k).replace("_", " "), v if isinstance(v, str) else json.dumps(v))
                 for k, v in meta.items()]
    elif meta is not None:
        facts = [("metadata", json.dumps(meta))]
    return value["output"], facts


def command_line(value: Any) -> str | None:
    """The command a ``command`` argument runs (:func:`store.tools.vocabulary.command_line`:
    a shell given a script shows the script, another argv its shell-quoted join)."""
    return vocabulary_command_line(value)


def _value_html(value: Any, more: str) -> Markup:
    if isinstance(value, str):
        if len(value) > VALUE_LIMIT:
            return html('<pre class="value">{v}</pre><p class="cut">… {n:,} more characters: '
                        '<a href="{more}">the whole arguments</a></p>',
                        v=value[:VALUE_LIMIT], n=len(value) - VALUE_LIMIT, more=more)
        if "\n" in value or len(value) > 120:
            return html('<pre class="value">{v}</pre>', v=value)
        return html('<code class="value">{v}</code>', v=value)
    if isinstance(value, bool) or value is None or isinstance(value, int | float):
        return html('<code class="value">{v}</code>', v=json.dumps(value))
    shown = pretty(value)
    if len(shown) > VALUE_LIMIT:
        return html('<pre class="json">{v}…</pre><p class="cut"><a href="{more}">the whole '
                    "arguments</a></p>", v=shown[:VALUE_LIMIT], more=more)
    return html('<pre class="json">{v}</pre>', v=shown)


def arguments_html(arguments: Any, more: str) -> Markup:
    """A call's arguments as fields; ``more`` is the same-origin path of the whole arguments
    as JSON text. A ``command`` argument comes first, as the command line it runs."""
    if not isinstance(arguments, Mapping):
        return _value_html(arguments, more)
    if not arguments:
        return html('<p class="empty">(no arguments)</p>')
    items: list[Markup] = []
    command = command_line(arguments.get("command"))
    if command is not None:
        items.append(html('<pre class="cmd"><span class="prompt">$ </span>{c}</pre>',
                          c=command))
    fields = [(str(k), v) for k, v in arguments.items()
              if not (k == "command" and command is not None)]
    if fields:
        items.append(html('<dl class="fields">{f}</dl>', f=join(
            html("<dt>{k}</dt><dd>{v}</dd>", k=k, v=_value_html(v, more)) for k, v in fields)))
    return join(items)
