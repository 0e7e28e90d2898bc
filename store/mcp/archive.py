"""The tools agents call (edge layer; public API only).

One method of :class:`Archive` per tool, marked with :func:`tool` (its name and what an
agent reads about it). The inputs are the method's parameters: the SDK derives each tool's
JSON Schema from their annotations (``Field`` gives the description and the bounds), checks
every call against it, and answers a bad input with a tool error naming the field. Each
method returns a JSON value; :mod:`store.mcp.registry` puts the marked methods on the server
and turns a ``StoreError`` into a tool error. Adding a tool is one marked method (see
``search_messages``).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field

import store
from store.mcp.sessions import session_window
from store.mcp.shapes import (
    DEFAULT_CHARS,
    DEFAULT_LIMIT,
    MAX_CHARS,
    MAX_LIMIT,
    Shaper,
    iso,
    page,
    session_summary,
)

F = TypeVar("F", bound=Callable[..., Any])

#: The marks :func:`tool` leaves: method name -> (tool name, description).
TOOL_MARK = "_mcp_tool"

# The inputs several tools share (the schema the SDK derives says the same everywhere).
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"Items per page (1-{MAX_LIMIT}).")]
Offset = Annotated[int, Field(ge=0, description="Items to skip: the next_offset of the page "
                                                "before.")]
MaxChars = Annotated[int, Field(ge=20, le=MAX_CHARS,
                                description="Longest text shown per field; longer texts are "
                                            "cut with a note.")]
Since = Annotated[str | None, Field(
    description="Only at or after this time: 2025-07-14, 2025-07-14T09:30Z, 7d, 12h, 2w, "
                "today, yesterday (no zone: the server's local time).")]
Until = Annotated[str | None, Field(description="Only before this time (same forms as since).")]
Agent = Annotated[str | None, Field(
    description="Only sessions recorded by this agent: claude-code, codex, gemini-cli, "
                "qwen-code, copilot-cli, cline, ...")]
Project = Annotated[str | None, Field(
    description="Only sessions run in this folder or below it (an absolute path: the "
                "project).")]
InSession = Annotated[str | None, Field(description="Only this session (id or a unique "
                                                    "start).")]
SessionId = Annotated[str, Field(min_length=1,
                                 description="A session id, or a unique start of one.")]

LEVELS = ("informational", "low", "medium", "high", "critical")


def tool(name: str, description: str) -> Callable[[F], F]:
    """Mark an :class:`Archive` method as the tool ``name``."""
    def mark(function: F) -> F:
        setattr(function, TOOL_MARK, (name, description))
        return function
    return mark


def parse_when(text: str | None, what: str) -> datetime | None:
    """A ``since`` / ``until`` input as an aware UTC time (``UsageError`` naming it)."""
    if text is None or not text.strip():
        return None
    from store.cli.timespec import FORMS, parse_time

    try:
        return parse_time(text)
    except ValueError:
        raise store.UsageError(f"{what}: {text!r} is not a time; use {FORMS}") from None


class Archive:
    """The store as the tools see it: read-only, through ``shaper`` (redaction, cuts)."""

    def __init__(self, opened: store.TranscriptStore, shaper: Shaper) -> None:
        self.store = opened
        self.shaper = shaper

    # -- helpers ------------------------------------------------------------------------------

    def resolve(self, session_id: str) -> str:
        """The full id ``session_id`` names (a unique prefix too); else a ``SessionNotFound``
        saying what it might have meant."""
        try:
            return self.store.resolve_session_id(session_id.strip())
        except store.SessionNotFound:
            recent = [s.session_id for s in self.store.list_sessions(limit=2000)]
            near = difflib.get_close_matches(session_id, recent, n=3, cutoff=0.5)
            near += [s for s in recent if session_id.lower() in s.lower() and s not in near]
            hint = (f"; did you mean {', '.join(repr(n) for n in near[:3])}?" if near
                    else "; list_sessions shows the stored ones")
            error = store.SessionNotFound(session_id)
            error.args = (f"no session matches {session_id!r}{hint}",)
            raise error from None

    # -- the tools ----------------------------------------------------------------------------

    @tool("search_messages",
          "Full-text search over every message of past sessions: what the user asked, what "
          "the agent answered or reasoned, tool arguments and results. Words must all match; "
          "\"a phrase\" in double quotes, prefix*, -word to leave out. Best match first, each "
          "with a snippet; read more with get_session around its position.")
    def search_messages(
        self,
        query: Annotated[str, Field(min_length=1, max_length=1000,
                                    description="Words (all must match), \"a phrase\", "
                                                "prefix*, -word.")],
        role: Annotated[Literal["user", "assistant", "system", "developer", "tool",
                                "thinking"] | None,
                        Field(description="Only this part of the messages: user prompts, "
                                          "assistant answers, tool calls and results, "
                                          "thinking ...")] = None,
        agent: Agent = None,
        project: Project = None,
        session_id: InSession = None,
        since: Since = None,
        until: Until = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Any:
        found = self.store.search_messages(
            query, agent=agent or None, project=project or None,
            since=parse_when(since, "since"), until=parse_when(until, "until"), role=role,
            session_id=self.resolve(session_id) if session_id else None, limit=limit + 1,
            offset=offset)
        items = [{
            "session_id": hit.session_id, "position": hit.position, "role": hit.role,
            "at": iso(hit.created_at), "agent": hit.agent, "cwd": self.shaper.redact(hit.cwd),
            "title": self.shaper.redact(hit.title),
            "snippet": self.shaper.redact(hit.plain_snippet),
        } for hit in found]
        return page(items, limit, offset)

    @tool("search_calls",
          "Search the tool calls of past agent sessions: by tool (bash, read, edit, grep ... "
          "across agents), shell command, file path, text in arguments or results, status, "
          "agent, project, session and time. Oldest first; each call with the start of its "
          "result. Use it to find what was run or tried before.")
    def search_calls(
        self,
        tool: Annotated[str | None, Field(description="Tool name (current name: bash, read, "
                                                       "edit, write, grep, ...).")] = None,
        command: Annotated[str | None, Field(description="Shell command containing this "
                                                          "text.")] = None,
        path: Annotated[str | None, Field(description="File path argument containing this "
                                                       "text.")] = None,
        text: Annotated[str | None, Field(min_length=3, description="Text in the arguments "
                                                                     "or the result.")] = None,
        status: Annotated[Literal["ok", "empty", "invalid", "invalid_json",
                                  "non_object_json", "unsupported_type", "error",
                                  "no_result"] | None,
                          Field(description="ok (arguments valid), empty (no arguments), "
                                            "invalid (arguments that do not parse: "
                                            "invalid_json, non_object_json, "
                                            "unsupported_type), error (an error result), "
                                            "no_result. Each call says arguments_status and "
                                            "result_status.")] = None,
        agent: Agent = None,
        project: Project = None,
        session_id: InSession = None,
        since: Since = None,
        until: Until = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
        max_chars: MaxChars = DEFAULT_CHARS,
    ) -> Any:
        views = tuple(store.ViewCondition(view, value) for view, value
                      in (("command", command), ("path", path)) if value)
        query = store.CallQuery(
            tool=tool or None, session_id=self.resolve(session_id) if session_id else None,
            since=parse_when(since, "since"), until=parse_when(until, "until"),
            status=status, text=text or None, views=views, agent=agent or None,
            cwd=project or None)
        found = store.search_calls(self.store, query, limit=limit + 1, offset=offset,
                                   preview_chars=max_chars, redactor=self.shaper.redactor)
        items = [{
            "session_id": m.session_id, "position": m.position, "index": m.index,
            "at": iso(m.created_at), "tool": m.name, "raw_tool": m.raw_name,
            "arguments_status": m.arguments_status, "result_status": m.result_status,
            "agent": m.agent, "cwd": self.shaper.redact(m.cwd),
            "arguments": self.shaper.text(m.arguments_text, max_chars),
            "result_is_error": m.result_is_error, "result": m.result_preview,
        } for m in found]
        return page(items, limit, offset)

    @tool("get_session",
          "Read one past session: its metadata and a window of its messages (the last turns, "
          "or the messages around a position), each call with its result. Long texts are cut.")
    def get_session(
        self,
        session_id: SessionId,
        last_turns: Annotated[int, Field(ge=1, le=50, description="The last N turns (a turn "
                                         "starts at a user prompt); ignored with around."
                                         )] = 2,
        around: Annotated[int | None, Field(ge=0, description="Show the messages around this "
                                            "position instead (from search_calls).")] = None,
        before: Annotated[int, Field(ge=0, le=MAX_LIMIT, description="Messages before "
                                     "around.")] = 5,
        after: Annotated[int, Field(ge=0, le=MAX_LIMIT, description="Messages after "
                                    "around.")] = 10,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most messages shown."
                                    )] = 40,
        max_chars: MaxChars = DEFAULT_CHARS,
    ) -> Any:
        return session_window(self.store, self.resolve(session_id), self.shaper,
                              last_turns=last_turns, around=around, before=before,
                              after=after, limit=limit, max_chars=max_chars)

    @tool("sessions_touching_file",
          "The past sessions that touched a file: calls whose path argument names it (read, "
          "edit, write ...) and, with mentions, calls whose arguments or results mention it. "
          "Most recent first, with the tools used and where to open each session.")
    def sessions_touching_file(
        self,
        path: Annotated[str, Field(min_length=1, description="A file name, path, or the end "
                                                              "of one (src/app.py).")],
        mentions: Annotated[bool, Field(description="Also calls whose arguments or results "
                                                     "mention the path.")] = True,
        agent: Agent = None,
        project: Project = None,
        since: Since = None,
        until: Until = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Any:
        found, complete = store.sessions_touching(
            self.store, path, mentions=mentions, agent=agent or None, cwd=project or None,
            since=parse_when(since, "since"), until=parse_when(until, "until"),
            limit=limit + 1, offset=offset)
        items = [{"session_id": t.session_id, "agent": t.agent,
                  "cwd": self.shaper.redact(t.cwd), "calls": t.calls, "tools": t.tools,
                  "first_at": iso(t.first_at), "last_at": iso(t.last_at),
                  "via": sorted(t.via), "open_around": t.last_position} for t in found]
        extra: dict[str, Any] = {} if complete else {
            "note": "many calls matched: counts are lower bounds"}
        return page(items, limit, offset, **extra)

    @tool("list_sessions",
          "List past sessions, most recently active first: by agent, project folder, title "
          "and time; with their sizes and parents.")
    def list_sessions(
        self,
        agent: Agent = None,
        project: Project = None,
        title: Annotated[str | None, Field(description="Title containing this text.")] = None,
        since: Annotated[str | None, Field(description="With a message at or after this "
                                           "time: 2025-07-14, 7d, yesterday ...")] = None,
        until: Until = None,
        roots: Annotated[bool, Field(description="Only sessions without a parent (no "
                                                  "subagents or forks).")] = False,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Any:
        filters: dict[str, Any] = {
            "agent": agent or None, "cwd": project or None, "title_contains": title or None,
            "since": parse_when(since, "since"), "until": parse_when(until, "until"),
            "roots": roots}
        found = self.store.list_sessions(limit=limit, offset=offset, **filters)
        total = self.store.count_sessions(**filters)
        return page([session_summary(s, self.shaper) for s in found], limit, offset,
                    total=total)

    @tool("tool_usage",
          "How much each tool was used: calls, sessions, invalid calls, error results, calls "
          "without a result, first and last use; most used first.")
    def tool_usage(
        self,
        agent: Agent = None,
        project: Project = None,
        session_id: Annotated[str | None, Field(description="Only this session.")] = None,
        since: Since = None,
        until: Until = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Any:
        found = store.tool_usage(
            self.store, since=parse_when(since, "since"), until=parse_when(until, "until"),
            session_id=self.resolve(session_id) if session_id else None,
            agent=agent or None, cwd=project or None, limit=limit + 1, offset=offset)
        items = [{"tool": u.name, "raw_names": list(u.raw_names), "calls": u.calls,
                  "sessions": u.sessions, "invalid_calls": u.invalid_calls,
                  "error_results": u.error_results,
                  "calls_without_result": u.calls_without_result,
                  "first_seen": iso(u.first_seen), "last_seen": iso(u.last_seen)}
                 for u in found]
        return page(items, limit, offset)

    @tool("usage_cost",
          "Token usage and estimated cost (USD, from a dated price table; unknown models are "
          "not priced) per day, week, month, model, agent, project or session.")
    def usage_cost(
        self,
        by: Literal["day", "week", "month", "model", "agent", "project", "session"] = "day",
        agent: Agent = None,
        project: Project = None,
        session_id: Annotated[str | None, Field(description="Only this session.")] = None,
        since: Since = None,
        until: Until = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
    ) -> Any:
        rows = store.usage_report(
            self.store, by=by, since=parse_when(since, "since"),
            until=parse_when(until, "until"), agent=agent or None, cwd=project or None,
            session_id=self.resolve(session_id) if session_id else None)
        items = [{"key": self.shaper.redact(t.key), "input_tokens": t.input_tokens,
                  "output_tokens": t.output_tokens,
                  "cache_creation_tokens": t.cache_creation_tokens,
                  "cache_read_tokens": t.cache_read_tokens,
                  "reasoning_tokens": t.reasoning_tokens, "total_tokens": t.total_tokens,
                  "responses": t.responses, "cost_usd": round(t.cost_usd, 6),
                  "models": sorted(t.models), "unpriced_models": sorted(t.unpriced_models)}
                 for t in rows[offset:offset + limit + 1]]
        return page(items, limit, offset, total=len(rows))

    @tool("findings",
          "Security findings saved by the Sigma rules over past tool calls (rules check "
          "--save): rule, level, the call and the text that matched (secrets redacted).")
    def findings(
        self,
        session_id: Annotated[str | None, Field(description="Only this session.")] = None,
        min_level: Annotated[Literal["informational", "low", "medium", "high", "critical"]
                             | None, Field(description="Only findings at this level or "
                                                        "above.")] = None,
        limit: Limit = DEFAULT_LIMIT,
        offset: Offset = 0,
        max_chars: MaxChars = DEFAULT_CHARS,
    ) -> Any:
        levels = list(LEVELS[LEVELS.index(min_level):]) if min_level else None
        found = store.load_findings(
            self.store, session_id=self.resolve(session_id) if session_id else None,
            min_level=levels, limit=limit + 1, offset=offset)
        items = [{"rule_id": f.rule_id, "title": f.title, "level": f.level,
                  "tags": list(f.tags), "session_id": f.session_id, "position": f.position,
                  "call_index": f.call_index, "tool": f.tool, "agent": f.agent,
                  "field": f.field, "matched": self.shaper.text(f.matched, max_chars),
                  "at": iso(f.time)} for f in found]
        return page(items, limit, offset)

    @tool("lineage",
          "A session's family: the sessions it descends from (parent, its parent ...) and "
          "the sessions below it (subagents, forks, continuations), with their sizes.")
    def lineage(
        self,
        session_id: SessionId,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most sessions listed "
                                                                    "below it.")] = 50,
    ) -> Any:
        sid = self.resolve(session_id)
        ancestors = self.store.session_ancestors(sid)
        tree = self.store.session_tree(sid)
        below = [{"depth": depth, **session_summary(node.session, self.shaper)}
                 for depth, node in tree.walk() if depth > 0]
        me = tree.session
        return {"session": session_summary(me, self.shaper),
                "ancestors": [session_summary(a, self.shaper) for a in ancestors],
                "parent_call_id": me.parent.parent_call_id if me.parent else None,
                "descendants": below[:limit], "descendant_count": len(below),
                "truncated": len(below) > limit}
