"""What a call search finds, as rows become matches (persistence; stdlib only, no
SQLAlchemy): the query (:class:`CallQuery`), a match (:class:`CallMatch`), each call's first
result, and the match made of a row of the search statement. Shared by the store's search
(``store.audit.search``) and the stdlib one of an SQLite file (``store.audit.lite_search``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from store.audit.conditions import ArgumentCondition, ViewCondition
from store.core.arguments import CALL_STATUSES, arguments_status, loads_json, result_status
from store.core.errors import UsageError
from store.core.model import ToolCall, content_text
from store.core.times import aware
from store.db.index.search_schema import MIN_TEXT
from store.records.codec import decode_call
from store.tools.actions import tool_action
from store.tools.names import AliasTable

if TYPE_CHECKING:  # (redaction is imported by --redact only)
    from store.redaction.redact import Redactor

__all__ = ["CallMatch", "CallQuery", "first_results", "match_row"]


@dataclass(frozen=True, slots=True)
class CallQuery:
    """The filters of a call search; every one given must hold (``status``: any of them)."""

    tool: str | None = None
    raw_name: str | None = None
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    status: str | tuple[str, ...] | None = None
    where: tuple[ArgumentCondition, ...] = ()
    text: str | None = None
    views: tuple[ViewCondition, ...] = ()
    #: Only calls of sessions recorded by this agent (``claude-code``, ``codex`` ...).
    agent: str | None = None
    #: Only calls of sessions whose working folder is this one or below it.
    cwd: str | None = None
    #: With ``session_id``: the calls of that session and of every session below it (its
    #: subagents, forks and continuations, store/db/reading/lineage.py).
    with_children: bool = False
    #: Use no derived row (search index, argument views): scan every call of the scope
    #: exactly (slower; the answer then rests on the transcript alone).
    exact: bool = False

    def __post_init__(self) -> None:
        statuses = (self.status,) if isinstance(self.status, str) else self.status
        if statuses is not None:
            statuses = tuple(statuses)
            unknown = [s for s in statuses if s not in CALL_STATUSES]
            if unknown or not statuses:
                raise UsageError(
                    f"unknown call status {unknown or statuses!r}: use {', '.join(CALL_STATUSES)}"
                )
        object.__setattr__(self, "status", statuses)
        conditions = tuple(self.where)
        if not all(isinstance(c, ArgumentCondition) for c in conditions):
            raise UsageError("CallQuery.where takes ArgumentCondition values")
        object.__setattr__(self, "where", conditions)
        views = tuple(self.views)
        if not all(isinstance(c, ViewCondition) for c in views):
            raise UsageError("CallQuery.views takes ViewCondition values")
        object.__setattr__(self, "views", views)
        if self.with_children and self.session_id is None:
            raise UsageError("with_children needs a session_id")
        if self.text is not None and len(self.text) < MIN_TEXT:
            raise UsageError(f"a full-text search needs at least {MIN_TEXT} characters")


@dataclass(frozen=True, slots=True)
class CallMatch:
    """A call found by a search, with the time of its message and its first result.

    ``arguments_text`` is the argument text as recorded; ``result_preview`` the first result as
    text (cut to the preview length, ``None`` when the call has no result). ``redactions``
    counts the secrets replaced in this match.
    """

    session_id: str
    position: int
    index: int
    call_id: str
    name: str
    raw_name: str
    status: str
    arguments_text: str
    arguments_error: str | None
    created_at: datetime
    result_preview: str | None
    result_is_error: bool | None
    redactions: int = 0
    #: The agent and working folder of the call's session.
    agent: str | None = None
    cwd: str | None = None

    @property
    def arguments_status(self) -> str:
        """The arguments' state as outputs name it: ``valid``, ``empty``, ``invalid_json`` ...
        (``status`` is the stored name: ``ok`` for ``valid``)."""
        return arguments_status(self.status)

    @property
    def result_status(self) -> str:
        """The result's state: ``ok``, ``error`` or ``no_result``."""
        return result_status(self.result_is_error)


def first_results(
    conn: Any, keys: Sequence[tuple[str, int, int]]
) -> dict[tuple[str, int, int], tuple[bool, str]]:
    """The first linked result (is_error, content_json) of each call (ix_tool_results_call)."""
    out: dict[tuple[str, int, int], tuple[bool, str]] = {}
    if not keys:
        return out
    postgres = conn.dialect.name == "postgresql"
    if postgres:
        from store.db.schema.citusprobe import is_citus
    if postgres and not is_citus(conn):
        # The keys as arrays joined to ix_tool_results_call: PostgreSQL plans an OR of 250
        # keys in ~160 ms (measured; the query then runs in 15), the join in 1 (issue 23).
        rows = conn.exec_driver_sql(
            "SELECT r.session_id, r.call_position, r.call_index, r.is_error, r.content_json "
            "FROM unnest(CAST(%s AS VARCHAR[]), CAST(%s AS INTEGER[]), CAST(%s AS INTEGER[])) "
            "AS k(session_id, position, call_index) JOIN tool_results AS r "
            "ON r.session_id = k.session_id AND r.call_position = k.position "
            "AND r.call_index = k.call_index ORDER BY r.session_id, r.position, r.result_index",
            tuple(list(column) for column in zip(*keys, strict=True)))
    else:
        # OR of the keys, not a row-value IN list (which SQLite answers with a scan); driver
        # SQL, because building it as a Core construct cost more than running it.
        mark = "%s" if postgres else "?"
        condition = " OR ".join(
            [f"(session_id = {mark} AND call_position = {mark} AND call_index = {mark})"]
            * len(keys))
        rows = conn.exec_driver_sql(
            "SELECT session_id, call_position, call_index, is_error, content_json "
            f"FROM tool_results WHERE {condition} ORDER BY session_id, position, result_index",
            tuple(value for key in keys for value in key))
    for sid, pos, idx, is_error, content in rows.fetchall():  # (not a fetch per row)
        out.setdefault((sid, pos, idx), (bool(is_error), content))
    return out


def match_row(
    row: Any,
    aliases: AliasTable,
    result: tuple[bool, str] | None,
    preview_chars: int | None,
    redactor: Redactor | None,
    agent: str | None = None,
    cwd: str | None = None,
    scoped: bool = False,
) -> CallMatch:
    sid, pos, idx, call_id, raw, status, error, wire, extras, source, minted, created = row
    call = decode_call(call_id, wire, status, error, extras, source, bool(minted))
    action = tool_action(raw, call.input) if isinstance(call, ToolCall) else None
    arguments = call.arguments_text
    redactions = 0
    preview: str | None = None
    if result is not None:
        preview = content_text(loads_json(result[1]))
    if redactor is not None:
        arguments, count = redactor.redact_text(arguments)
        redactions += count
        if error is not None:
            error, count = redactor.redact_text(error)
            redactions += count
        if preview is not None:
            preview, count = redactor.redact_text(preview)
            redactions += count
    if preview is not None and preview_chars is not None and len(preview) > preview_chars:
        preview = preview[:preview_chars] + "…"
    return CallMatch(sid, pos, idx, call_id,
                     aliases.display_name(raw, agent if scoped else None, action), raw, status,
                     arguments, error, aware(created), preview,
                     None if result is None else result[0], redactions, agent, cwd)
