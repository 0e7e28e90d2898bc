"""Sigma rules over every stored call (persistence side of store/rules).

:func:`check_rules` scans the calls (one pass over ``tool_calls`` in key order; the sessions'
agent and cwd read once; the messages joined only for a time range), resolves each call's tool
through the alias table as stored now, and asks a :class:`~store.rules.engine.RuleSet` which
rules match. The arguments are read as the stored JSON text: the rule set's cache is keyed by
it, so a call seen before (same tool, agent, cwd and arguments) costs a dictionary lookup. The
matched text of a finding has its secrets redacted (:class:`~store.redaction.redact.Redactor`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import Connection, Text, and_, cast, or_, select

from store.audit.candidates import Candidates, candidates
from store.audit.sql import aware, connect, time_filters
from store.core.errors import UsageError
from store.db.base import alias_table
from store.db.schema.tables import messages, sessions, tool_calls
from store.db.schema.wiretext import wire_column
from store.redaction.redact import Redactor
from store.rules.engine import RuleSet
from store.rules.events import CallRecord
from store.rules.findings import Finding
from store.rules.sigma import Rule
from store.tools.actions import tool_action

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["check_rules", "iter_call_records", "new_calls", "next_positions"]

_FETCH = 5000


def check_rules(
    opened: TranscriptStore,
    rules: RuleSet | Iterable[Rule] | None = None,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    agent: str | None = None,
    session_id: str | None = None,
    progress: Callable[[int], None] | None = None,
    starts: Mapping[str, int] | None = None,
    prefilter: bool = True,
    warn: Callable[[str], None] | None = None,
) -> list[Finding]:
    """Findings of ``rules`` (default: the built-in pack) over the stored calls, in call order
    (session, position, call index; a call's findings in rule order). ``since``/``until``:
    the time of the call's message; ``agent``: the session's agent; ``progress`` is told
    how many calls were checked every 5,000; ``starts``: only these sessions, each from this
    position on (the calls an import just stored: :func:`new_calls`). ``prefilter``: ask the
    search index which calls the rules can match and evaluate only those
    (:mod:`store.audit.candidates`); False evaluates every call (the same findings). The
    prefilter never trusts derived rows it cannot vouch for: a session whose search index or
    views differ from what its transcript gives is evaluated whole, and ``warn`` is told."""
    if rules is None:
        from store.rules.engine import builtin_rules

        rules = builtin_rules()
    ruleset = rules if isinstance(rules, RuleSet) else RuleSet(rules)
    only: Candidates | None = None
    if prefilter and starts is None:
        only = candidates(opened, ruleset.rules, agent=agent, session_id=session_id,
                          warn=warn)
    redactor = Redactor()
    found: list[Finding] = []
    seen = 0
    for call, text in iter_call_records(opened, since=since, until=until, agent=agent,
                                        session_id=session_id, starts=starts, only=only,
                                        search_text=ruleset.reads_secrets):
        seen += 1
        if progress is not None and seen % _FETCH == 0:
            progress(seen)
        subset = None if only is None else only.rules.get(
            (call.session_id, call.position, call.call_index))
        for match in ruleset.check(call, text, subset):
            found.append(Finding(
                rule_id=match.rule.id, title=match.rule.title, level=match.rule.level,
                tags=match.rule.tags, session_id=call.session_id, position=call.position,
                call_index=call.call_index, call_id=call.call_id, agent=call.agent,
                tool=call.tool, raw_tool=call.raw_tool, field=match.field,
                matched=redactor(match.matched)))
    if progress is not None:
        progress(seen)
    return _with_times(opened, found)


def iter_call_records(
    opened: TranscriptStore, *, since: datetime | None = None, until: datetime | None = None,
    agent: str | None = None, session_id: str | None = None,
    starts: Mapping[str, int] | None = None, only: Candidates | None = None,
    search_text: bool = False,
) -> Iterator[tuple[CallRecord, str]]:
    """Stored calls as :class:`CallRecord` s with their arguments' stored JSON text, in key
    order: every call, or ``starts`` (these sessions from these positions), or ``only`` (the
    candidates of a prefilter). ``search_text``: fill the records' searchable text."""
    if since is not None and until is not None and aware(since) >= aware(until):
        raise UsageError("--since must be before --until")
    c = tool_calls
    with connect(opened) as conn:
        aliases = alias_table(conn)
        query = select(sessions.c.session_id, sessions.c.agent, sessions.c.cwd)
        if session_id is not None:
            query = query.where(sessions.c.session_id == session_id)
        if agent is not None:
            query = query.where(sessions.c.agent == agent)
        about = {row[0]: (row[1], row[2]) for row in conn.execute(query)}
        if starts is not None:
            about = {sid: who for sid, who in about.items() if sid in starts}
        if not about:
            return
        columns = [c.c.session_id, c.c.position, c.c.call_index, c.c.call_id, c.c.raw_name,
                   cast(c.c.arguments, Text)]
        if search_text:
            columns.append(wire_column(c, conn.dialect.name == "postgresql"))
        calls = select(*columns)
        timed = time_filters(since, until)
        if timed:
            m = messages
            calls = calls.join(m, and_(m.c.session_id == c.c.session_id,
                                       m.c.position == c.c.position)).where(*timed)
        if session_id is not None:
            calls = calls.where(c.c.session_id == session_id)
        calls = calls.order_by(c.c.session_id, c.c.position, c.c.call_index)
        rows: Iterable[Any]
        if starts is not None:
            rows = (row for sid in sorted(about) for row in conn.execute(calls.where(
                c.c.session_id == sid, c.c.position >= starts[sid])))
        elif only is not None:
            rows = _candidate_rows(conn, calls, only, about)
        else:
            rows = conn.execution_options(stream_results=True, yield_per=_FETCH).execute(calls)
        names: dict[tuple[str, str | None, str | None], str] = {}
        for sid, position, index, call_id, raw, text, *wire in rows:
            session = about.get(sid)
            if session is None:
                continue
            who, cwd = session
            arguments: Any = orjson.loads(text) if text else None
            action = tool_action(raw, arguments)  # (an editor's view is a read)
            key = (raw, who, action)
            tool = names.get(key)
            if tool is None:
                tool = names[key] = aliases.display_name(raw, who, action)
            free = only is not None and only.secret_free(sid, position, index)
            yield CallRecord(sid, position, index, call_id, raw, tool, who, cwd, arguments,
                             wire[0] if wire else None, free), text or "null"


def _candidate_rows(conn: Connection, calls: Any, only: Candidates,
                    about: Mapping[str, Any]) -> list[Any]:
    """The rows of the candidate calls, in key order (whole sessions from their start, then
    the keys found, per session in chunks of positions: the primary key answers each)."""
    c = tool_calls
    picked: dict[tuple[str, int, int], Any] = {}
    for sid, start in only.starts.items():
        if sid in about:
            for row in conn.execute(calls.where(c.c.session_id == sid,
                                                c.c.position >= start)):
                picked[(row[0], row[1], row[2])] = row
    by_session: dict[str, set[int]] = {}
    for sid, position, _index in only.keys:
        if sid in about and position < only.starts.get(sid, position + 1):
            by_session.setdefault(sid, set()).add(position)
    for sid, positions in by_session.items():
        ordered = sorted(positions)
        for at in range(0, len(ordered), 500):
            for row in conn.execute(calls.where(c.c.session_id == sid,
                                                c.c.position.in_(ordered[at:at + 500]))):
                key = (row[0], row[1], row[2])
                if key in only.keys:
                    picked[key] = row
    return [picked[key] for key in sorted(picked)]


def next_positions(opened: TranscriptStore) -> dict[str, int]:
    """Each session's next position: taken before an import, then handed to
    :func:`new_calls` after it."""
    with connect(opened) as conn:
        return {str(sid): int(n) for sid, n in conn.execute(
            select(sessions.c.session_id, sessions.c.next_position))}


def new_calls(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """The ``starts`` of :func:`check_rules` for what was stored between two
    :func:`next_positions`: a new session from 0, a longer one from where it ended, one that
    was cut and written again (shorter than before) from 0 again."""
    starts: dict[str, int] = {}
    for sid, end in after.items():
        was = before.get(sid)
        if was is None or end < was:
            starts[sid] = 0
        elif end > was:
            starts[sid] = was
    return starts


def _with_times(opened: TranscriptStore, found: list[Finding]) -> list[Finding]:
    """``found`` with the time of each call's message."""
    if not found:
        return found
    m = messages
    wanted: dict[str, set[int]] = {}
    for f in found:
        wanted.setdefault(f.session_id, set()).add(f.position)
    times: dict[tuple[str, int], datetime] = {}
    pieces = [(sid, sorted(positions)[at:at + 500]) for sid, positions in sorted(wanted.items())
              for at in range(0, len(positions), 500)]
    with connect(opened) as conn:
        for start in range(0, len(pieces), 50):  # 50 sessions a statement, each by its key
            rows = conn.execute(select(m.c.session_id, m.c.position, m.c.created_at).where(
                or_(*(and_(m.c.session_id == sid, m.c.position.in_(chunk))
                      for sid, chunk in pieces[start:start + 50]))))
            for sid, position, created in rows:
                times[(sid, position)] = aware(created)
    from dataclasses import replace

    return [replace(f, time=times.get((f.session_id, f.position))) for f in found]
