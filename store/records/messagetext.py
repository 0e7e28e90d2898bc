"""The text the message index holds for one stored message (domain; stdlib + orjson).

A message gives up to three rows (``store/db/index/message_index.py``), each (role, body):

* its visible text (``messages.text``: the text parts), under the message's role;
* its reasoning (the ``thinking`` parts of ``messages.parts_json``), under ``thinking``;
* its tool traffic, under ``tool``: each call's recorded name and decoded arguments
  (``store.records.searchtext.call_search_text``), each result's decoded content, each
  provider-side tool call's name and input. A ``tool`` message's own text joins this row.

Each body is redacted (``store.trust.secrets.index_text``: the detectors' markers instead of
the secrets), so no detected secret is in the index or a snippet; NUL and the snippet marks
(``store.core.textquery.HIT_START``/``HIT_END``) become U+FFFD; a body is cut to
:data:`MAX_BODY` characters (PostgreSQL's ``tsvector`` holds at most 1 MB).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from store.core.arguments import loads_json
from store.core.textquery import HIT_END, HIT_START
from store.records.searchtext import call_search_text, json_search_text, result_search_text
from store.trust.secrets import index_text

__all__ = ["MAX_BODY", "ROLE_THINKING", "ROLE_TOOL", "indexable", "message_rows"]

#: The most characters of one part of a message the index holds (the rest is not searched).
MAX_BODY = 100_000
ROLE_THINKING = "thinking"
ROLE_TOOL = "tool"

_REPLACED = str.maketrans({"\x00": "\ufffd", HIT_START: "\ufffd", HIT_END: "\ufffd"})


def indexable(text: str) -> str:
    """``text`` as the index holds it: redacted, without NUL or snippet marks, cut."""
    if len(text) > 4 * MAX_BODY:  # (redaction scans what is kept, and a little more)
        text = text[:4 * MAX_BODY]
    body = index_text(text)[0].translate(_REPLACED)
    return body[:MAX_BODY]


def _decoded(build: Any, stored: Any) -> str:
    try:
        return str(build(stored))
    except (ValueError, RecursionError, MemoryError):
        return ""  # a value no reader can walk (verify reports it): nothing to index


def message_rows(role: str, text: str, parts_json: str, calls: Iterable[tuple[str, str]],
                 results: Iterable[str]) -> list[tuple[str, str]]:
    """The (role, body) rows of one message (see the module docstring): ``calls`` are
    (raw name, ``wire_json``) pairs, ``results`` their ``content_json``. Empty bodies give no
    row."""
    thinking: list[str] = []
    tool: list[str] = []
    try:
        parts = loads_json(parts_json) if parts_json else []
    except ValueError:
        parts = []
    for item in parts if isinstance(parts, list) else ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "thinking" and isinstance(item.get("text"), str):
            thinking.append(item["text"])
        elif kind == "server_tool_call":
            tool.append(f"{item.get('name') or ''}{_decoded(json_search_text, item.get('input'))}")
    for raw_name, wire in calls:
        tool.append(f"{raw_name}{_decoded(call_search_text, wire)}")
    for content in results:
        tool.append(_decoded(result_search_text, content))
    rows: dict[str, list[str]] = {}
    if text.strip():
        rows.setdefault(ROLE_TOOL if role == ROLE_TOOL else role, []).append(text)
    if thinking:
        rows.setdefault(ROLE_THINKING, []).extend(thinking)
    if tool:
        rows.setdefault(ROLE_TOOL, []).extend(tool)
    out: list[tuple[str, str]] = []
    for name, pieces in rows.items():
        body = indexable("\n".join(pieces).strip())
        if body.strip():
            out.append((name, body))
    return out
