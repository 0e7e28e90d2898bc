"""The sessions that touched a file (persistence).

:func:`sessions_touching`: each session with a call whose ``path`` argument view contains
the file's path (a read, an edit, a write, a listing of it: ``store/tools/vocabulary.py``),
or, with ``mentions=True``, a call whose arguments or result text name it (a ``grep`` that
found it, a shell command that ran it). Built on the call search (:mod:`store.audit.search`),
so the alias table, the read-only scan of what is not indexed yet and the agent / project /
time filters are the search's own. Most recently touched first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from store.audit.conditions import ViewCondition
from store.audit.search import CallQuery, iter_calls
from store.audit.sql import check_page
from store.core.errors import UsageError
from store.db.base import reads_once
from store.db.index.search_schema import MIN_TEXT

if TYPE_CHECKING:
    from store.db.store import TranscriptStore

__all__ = ["FileTouch", "sessions_touching"]

#: The calls one question reads at most (a file every session reads would otherwise read
#: the whole store); :attr:`FileTouch` counts say "at least" past it (``scanned_all``).
MAX_SCANNED = 20_000
_NEVER = datetime.min.replace(tzinfo=UTC)


@dataclass(slots=True)
class FileTouch:
    """One session's calls on a file: how many, by which tools (current names), first and
    last time, and how they named it (``path``: an argument naming the file; ``mention``:
    arguments or a result mentioning it)."""

    session_id: str
    agent: str | None
    cwd: str | None
    calls: int = 0
    tools: dict[str, int] = field(default_factory=dict)
    first_at: datetime | None = None
    last_at: datetime | None = None
    via: set[str] = field(default_factory=set)
    #: The position of the last call that touched it (to open the session around it).
    last_position: int = 0


@reads_once
def sessions_touching(
    store: TranscriptStore,
    path: str,
    *,
    mentions: bool = True,
    agent: str | None = None,
    cwd: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = 20,
    offset: int = 0,
) -> tuple[list[FileTouch], bool]:
    """The sessions that touched ``path`` (a file name, a path or its end:
    ``src/app.py`` finds ``/home/me/proj/src/app.py``), most recently touched first, paged;
    and whether every matching call was read (``False``: more than :data:`MAX_SCANNED`
    matched, the counts are lower bounds)."""
    check_page(limit, offset)
    if not isinstance(path, str) or not path.strip():
        raise UsageError("a file path is needed (a name, a path or its end)")
    path = path.strip()
    queries = [CallQuery(views=(ViewCondition("path", path),), agent=agent, cwd=cwd,
                         since=since, until=until)]
    if mentions and len(path) >= MIN_TEXT:
        queries.append(CallQuery(text=path, agent=agent, cwd=cwd, since=since, until=until))
    found: dict[str, FileTouch] = {}
    seen: set[tuple[str, int, int]] = set()
    complete = True
    for number, query in enumerate(queries):
        via = "path" if number == 0 else "mention"
        read = 0
        for match in iter_calls(store, query, preview_chars=0):
            read += 1
            if read > MAX_SCANNED:
                complete = False
                break
            key = (match.session_id, match.position, match.index)
            touch = found.get(match.session_id)
            if touch is None:
                touch = found[match.session_id] = FileTouch(match.session_id, match.agent,
                                                            match.cwd)
            touch.via.add(via)
            if key in seen:
                continue
            seen.add(key)
            touch.calls += 1
            touch.tools[match.name] = touch.tools.get(match.name, 0) + 1
            at = match.created_at
            if touch.first_at is None or at < touch.first_at:
                touch.first_at = at
            if touch.last_at is None or at >= touch.last_at:
                touch.last_at = at
                touch.last_position = match.position
    ordered = sorted(found.values(), key=lambda t: (t.last_at or _NEVER, t.session_id),
                     reverse=True)
    end = None if limit is None else offset + limit
    return ordered[offset:end], complete
