"""Sessions, forks, tool definitions and aliases: the bookkeeping half of the store
(persistence)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, and_, delete, func, insert, literal, or_, select, update

from store.core.arguments import dumps_json, loads_json
from store.core.errors import (
    AMBIGUOUS_SHOWN,
    AliasError,
    AmbiguousSessionId,
    ConflictError,
    DatabaseError,
    SessionNotFound,
    UsageError,
)
from store.core.lineage import SessionLink
from store.core.transcript import (
    SessionInfo,
    StoredMessage,
    ToolDefinition,
)
from store.db.base import (
    StoreBase,
    _aware,
    _now,
    _session_info,
    _session_row,
    alias_table,
    check_session_id,
    reads_once,
)
from store.db.proofs.tlog import prepare_removal
from store.db.proofs.trust import remove_session, truncated
from store.db.schema.sqlitefile import cwd_pattern, escape_like
from store.db.schema.tables import (
    messages,
    session_sources,
    sessions,
    source_files,
    tool_aliases,
    tool_calls,
    tool_definitions,
    tool_results,
    written_columns,
)
from store.normalize.definitions import normalize_tool_definitions
from store.tools.names import AliasTable

__all__ = ["SESSION_SORTS", "SessionsMixin", "last_activity", "sessions_where"]

#: How ``list_sessions`` can order sessions, newest or largest first: ``active`` (the
#: session's own last activity, ``SessionInfo.last_active_at``: its last message's recorded
#: time, else when it was stored; ``updated`` is its older name, kept for one release),
#: ``started`` (its own first activity), ``messages``, ``calls``. The first ones read the
#: session row (revision 0016); ``calls`` counts every session's calls.
SESSION_SORTS = ("active", "started", "messages", "calls", "updated")


def _cwd_condition(cwd: str) -> Any:
    folder, below = cwd_pattern(cwd)
    return or_(sessions.c.cwd == folder, sessions.c.cwd.like(below, escape="\\"))


def sessions_where(*, agent: str | None = None, cwd: str | None = None) -> Any:
    """The ids of the sessions of ``agent`` whose working folder is ``cwd`` or below it (a
    subquery, for the call and tool queries' ``--agent`` / ``--cwd``)."""
    query = select(sessions.c.session_id)
    if agent is not None:
        query = query.where(sessions.c.agent == agent)
    if cwd is not None:
        query = query.where(_cwd_condition(cwd))
    return query


def last_activity() -> Any:
    """A session's own last activity: its ``last_activity_at``, else (no message yet) when
    it was stored."""
    return func.coalesce(sessions.c.last_activity_at, sessions.c.created_at)


def _order(sort: str) -> list[Any]:
    """The ORDER BY of a sort (see :data:`SESSION_SORTS`); ties by id."""
    if sort not in SESSION_SORTS:
        raise UsageError(f"unknown sort {sort!r}: use {', '.join(SESSION_SORTS)}")
    if sort in ("active", "updated"):  # the session's own last activity (revision 0016)
        key: Any = last_activity()
    elif sort == "started":
        key = func.coalesce(sessions.c.started_at, sessions.c.created_at)
    elif sort == "messages":
        key = sessions.c.next_position
    else:
        key = (select(func.count()).select_from(tool_calls)
               .where(tool_calls.c.session_id == sessions.c.session_id).scalar_subquery())
    return [key.desc(), sessions.c.session_id]




class SessionsMixin(StoreBase):
    """Session metadata, forks, tool definitions and the alias table."""

    # -- sessions -------------------------------------------------------------------------------

    def create_session(
        self,
        session_id: str | None = None,
        *,
        title: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        cwd: str | None = None,
        tags: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        agent: str | None = None,
        parent: SessionLink | None = None,
    ) -> SessionInfo:
        """Create a session (a generated id when none is given); an existing id raises.
        ``agent`` names the agent that records it (aliases scoped to it apply); ``parent``
        the session it descends from (store.core.lineage)."""
        sid = check_session_id(session_id) if session_id is not None else uuid.uuid4().hex
        now = _now()
        row = _session_row(sid, title, provider, model, cwd, tags, metadata, now, agent, parent)
        with self._write() as conn:
            exists = conn.execute(
                select(sessions.c.session_id).where(sessions.c.session_id == sid)
            ).first()
            if exists:
                raise DatabaseError(f"a session with id {sid!r} exists already")
            conn.execute(insert(sessions), [row])
        return self.get_session(sid)

    @reads_once
    def get_session(self, session_id: str) -> SessionInfo:
        """A session's metadata; ``SessionNotFound`` when there is none."""
        if "\x00" in session_id:  # no stored id holds NUL (PostgreSQL cannot even compare one)
            raise SessionNotFound(session_id)
        with self._read() as conn:
            row = conn.execute(
                select(sessions).where(sessions.c.session_id == session_id)
            ).first()
        if row is None:
            raise SessionNotFound(session_id)
        return _session_info(row._mapping)

    @reads_once
    def session_ids(self) -> set[str]:
        """Every stored session's id (an import asks once, then knows which of the sessions
        it reads are new: their first append creates them, with their metadata)."""
        with self._read() as conn:
            return {str(sid) for (sid,) in conn.execute(select(sessions.c.session_id))}

    @reads_once
    def list_sessions(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        tag: str | None = None,
        title_contains: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = 50,
        offset: int = 0,
        agent: str | None = None,
        cwd: str | None = None,
        sort: str = "active",
        parent: str | None = None,
        roots: bool = False,
    ) -> list[SessionInfo]:
        """Sessions, by their own last activity, newest first, filtered and paged
        (``limit=None``: all); ``sort`` orders them otherwise (:data:`SESSION_SORTS`).

        ``cwd``: sessions whose working folder is that folder or below it. ``parent``: the
        sessions whose parent is that session (its subagents, forks and continuations);
        ``roots``: only sessions without a parent.

        ``since`` / ``until``: sessions active in that time range (inclusive, exclusive):
        their own activity, from ``started_at`` to ``ended_at``, meets it. Those are the
        times the sessions recorded (the agent's start and end records, Claude Code and
        Codex line timestamps, Gemini CLI message timestamps ...; the append time only for
        messages that carry none), not when they were imported (revision 0016).
        """
        if (limit is not None and limit < 0) or offset < 0:
            raise UsageError("limit and offset must not be negative")
        query = self._sessions_query(provider, model, tag, title_contains, since, until, agent,
                                     cwd, parent, roots)
        query = query.order_by(*_order(sort))
        if limit is not None:
            query = query.limit(limit)
        with self._read() as conn:
            rows = conn.execute(query.offset(offset)).all()
            calls = _call_counts(conn, [r._mapping["session_id"] for r in rows])
        return [replace(_session_info(r._mapping), call_count=calls.get(r[0], 0))
                for r in rows]

    @reads_once
    def count_sessions(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        tag: str | None = None,
        title_contains: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
        cwd: str | None = None,
        parent: str | None = None,
        roots: bool = False,
    ) -> int:
        """How many sessions :meth:`list_sessions` would list without a limit."""
        query = self._sessions_query(provider, model, tag, title_contains, since, until, agent,
                                     cwd, parent, roots)
        with self._read() as conn:
            return int(conn.execute(select(func.count()).select_from(query.subquery()))
                       .scalar_one())

    def _sessions_query(self, provider: str | None, model: str | None, tag: str | None,
                        title_contains: str | None, since: datetime | None,
                        until: datetime | None, agent: str | None,
                        cwd: str | None = None, parent: str | None = None,
                        roots: bool = False) -> Any:
        query = select(sessions)
        if parent is not None:
            query = query.where(sessions.c.parent_session_id == parent)
        if roots:
            query = query.where(sessions.c.parent_session_id.is_(None))
        if agent is not None:
            query = query.where(sessions.c.agent == agent)
        if cwd is not None:
            query = query.where(_cwd_condition(cwd))
        if provider is not None:
            query = query.where(sessions.c.provider == provider)
        if model is not None:
            query = query.where(sessions.c.model == model)
        if title_contains is not None:
            pattern = "%" + escape_like(title_contains) + "%"
            query = query.where(sessions.c.title.ilike(pattern, escape="\\"))
        if tag is not None:
            query = query.where(
                sessions.c.tags_json.like("%" + escape_like(dumps_json(tag)) + "%", escape="\\")
            )
        # The session's own activity meets the range (revision 0016; a session without a
        # message yet by when it was stored).
        if since is not None:
            query = query.where(last_activity() >= _as_utc(since))
        if until is not None:
            query = query.where(func.coalesce(sessions.c.started_at, sessions.c.created_at)
                                < _as_utc(until))
        return query

    @reads_once
    def agents(self) -> list[str]:
        """The agents that recorded the stored sessions (their names, sorted): what
        ``--agent`` can name, for a "did you mean"."""
        with self._read() as conn:
            return sorted(str(a) for a in conn.execute(
                select(sessions.c.agent).where(sessions.c.agent.is_not(None)).distinct())
                .scalars())

    @reads_once
    def resolve_session_id(self, prefix: str) -> str:
        """The id of the one session whose id is ``prefix`` or starts with it (as git takes
        a unique prefix of a commit id); ``SessionNotFound`` when none does,
        ``AmbiguousSessionId`` (listing the candidates) when several do, unless all but one
        of them descend from that one through parents that match the prefix too (a Claude
        Code session and its ``<id>:sidechain`` subagents): then that one."""
        if "\x00" in prefix or not prefix:
            raise SessionNotFound(prefix)
        with self._read() as conn:
            exact = conn.execute(select(sessions.c.session_id)
                                 .where(sessions.c.session_id == prefix)).first()
            if exact is not None:
                return str(exact[0])
            matches = and_(
                sessions.c.session_id.like(escape_like(prefix) + "%", escape="\\"),
                # (LIKE ignores case on SQLite: the prefix must match exactly)
                func.substr(sessions.c.session_id, 1, len(prefix)) == prefix)
            found = [str(row[0]) for row in conn.execute(
                select(sessions.c.session_id).where(matches)
                .order_by(sessions.c.session_id).limit(AMBIGUOUS_SHOWN + 1))]
            if len(found) > 1:  # the prefix of a session and of its own subagents only?
                roots = [str(row[0]) for row in conn.execute(
                    select(sessions.c.session_id).where(
                        matches, or_(sessions.c.parent_session_id.is_(None),
                                     func.substr(sessions.c.parent_session_id, 1,
                                                 len(prefix)) != prefix))
                    .limit(2))]
                if len(roots) == 1:
                    return roots[0]
        if not found:
            raise SessionNotFound(prefix)
        if len(found) > 1:
            raise AmbiguousSessionId(prefix, tuple(found[:AMBIGUOUS_SHOWN]),
                                     more=len(found) > AMBIGUOUS_SHOWN)
        return found[0]

    @reads_once
    def session_span(self, session_id: str) -> tuple[datetime | None, datetime | None]:
        """A session's own first and last activity (``None`` when it has none yet)."""
        info = self.get_session(session_id)
        return info.started_at, info.ended_at

    def rename_session(self, session_id: str, title: str | None) -> SessionInfo:
        """Set a session's title."""
        with self._write() as conn:
            done = conn.execute(
                update(sessions).where(sessions.c.session_id == session_id)
                .values(title=title, updated_at=_now())
            )
            if done.rowcount == 0:
                raise SessionNotFound(session_id)
        return self.get_session(session_id)

    def tag_session(self, session_id: str, add: Iterable[str] = (),
                    remove: Iterable[str] = ()) -> SessionInfo:
        """Add and remove tags of a session (in one transaction; adding a tag it has, or
        removing one it lacks, changes nothing). Tags keep their order; new ones go last."""
        adding, removing = list(add), list(remove)
        if not all(isinstance(t, str) and t for t in [*adding, *removing]):
            raise UsageError(f"tags must be non-empty strings, got {[*adding, *removing]!r}")
        with self._write() as conn:
            row = conn.execute(select(sessions.c.tags_json)
                               .where(sessions.c.session_id == session_id)).first()
            if row is None:
                raise SessionNotFound(session_id)
            tags = [t for t in loads_json(row[0]) if t not in removing]
            tags += [t for t in dict.fromkeys(adding) if t not in tags]
            conn.execute(update(sessions).where(sessions.c.session_id == session_id)
                         .values(tags_json=dumps_json(tags), updated_at=_now()))
        return self.get_session(session_id)

    def delete_session(self, session_id: str, *, actor: str | None = None) -> None:
        """Delete a session and everything in it, leaving a tombstone (kind ``delete``) so
        that its removal is on the record; a held session is refused (``SessionHeldError``).
        Unlike :meth:`erase`, the bytes are not scrubbed (see store/db/proofs/trust.py). The read
        states of the files it came from go too (``source_files``), so that importing them
        again stores it again."""
        self._forget((session_id,))
        with self._write() as conn:
            paths = conn.execute(select(session_sources.c.path).where(
                session_sources.c.session_id == session_id)).scalars().all()
            remove_session(conn, session_id, kind="delete", reason=None, actor=actor,
                           now=_now())
            if paths:
                conn.execute(delete(source_files).where(source_files.c.path.in_(paths)))

    # -- fork -------------------------------------------------------------------------------------

    def fork(
        self,
        session_id: str,
        at_position: int,
        new_session_id: str | None = None,
        *,
        title: str | None = None,
    ) -> SessionInfo:
        """Copy the messages before ``at_position`` (with their calls, results, links and the
        session's tool definitions) into a new session, for branching and "try again from
        here". The new session's metadata records where it came from."""
        new_id = check_session_id(new_session_id) if new_session_id else uuid.uuid4().hex
        if at_position < 0:
            raise UsageError("at_position must not be negative")
        now = _now()
        with self._write() as conn:
            source = conn.execute(
                select(sessions).where(sessions.c.session_id == session_id)
            ).first()
            if source is None:
                raise SessionNotFound(session_id)
            if conn.execute(select(sessions.c.session_id)
                            .where(sessions.c.session_id == new_id)).first() is not None:
                raise DatabaseError(f"a session with id {new_id!r} exists already")
            src = source._mapping
            length = int(src["next_position"])
            if at_position > length:
                raise UsageError(
                    f"session {session_id!r} has {length} messages: fork at a position from 0 "
                    f"to {length}, not {at_position}")
            copied = at_position
            metadata = {**loads_json(src["metadata_json"]),
                        "forked_from": {"session_id": session_id, "position": copied}}
            head = conn.execute(select(messages.c.digest).where(and_(
                messages.c.session_id == session_id, messages.c.position == copied - 1))
            ).scalar() if copied else None
            conn.execute(insert(sessions), [{
                "session_id": new_id, "chain_digest": head,
                "title": title if title is not None else src["title"],
                "provider": src["provider"], "model": src["model"], "cwd": src["cwd"],
                "agent": src["agent"], "tags_json": src["tags_json"],
                "metadata_json": dumps_json(metadata),
                "created_at": now, "updated_at": now, "next_position": copied,
                "parent_session_id": session_id, "lineage": "fork",
            }])
            for table in (messages, tool_calls, tool_results, tool_definitions):
                columns = [c for c in written_columns(table) if c.name != "session_id"]
                query = select(literal(new_id).label("session_id"), *columns).where(
                    table.c.session_id == session_id)
                if "position" in table.c:
                    query = query.where(table.c.position < copied)
                conn.execute(insert(table).from_select(
                    ["session_id", *[c.name for c in columns]], query))
            if copied:  # its activity: the copied messages' (revision 0016)
                _reset_activity(conn, new_id)
        return self.get_session(new_id)

    def truncate(self, session_id: str, position: int, *,
                 expected_length: int | None = None,
                 expected_last: StoredMessage | None = None) -> int:
        """Delete the messages at ``position`` and after (with their calls and results), so
        that the session ends before ``position``; returns how many were deleted.

        ``expected_length`` makes it a compare-and-delete by count: when the session no longer
        has that many messages (another writer appended or truncated meanwhile) nothing
        changes and ``ConflictError`` is raised. A count alone cannot tell a message from the
        one that replaced it (a writer that removes the last message and appends another
        restores the count), so ``expected_last`` compares by identity: the message the caller
        read as the session's last (from a load) must still be the last one, the same message
        (its position, key and stored time), or nothing changes and ``ConflictError`` is
        raised; two writers then never remove one message twice, nor one another's new one.
        """
        if position < 0:
            raise UsageError("position must not be negative")
        if expected_last is not None:
            if expected_length not in (None, expected_last.position + 1):
                raise UsageError("expected_length and expected_last disagree")
            expected_length = expected_last.position + 1
        self._forget((session_id,))
        with self._write() as conn:
            # The log first (its lock before the session row's; every committed message a
            # leaf before any goes), then the session row's lock (SQLite holds the write lock
            # since BEGIN IMMEDIATE) makes the comparison and the delete one step.
            prepare_removal(conn)
            found = conn.execute(
                select(sessions.c.next_position, sessions.c.chain_digest)
                .where(sessions.c.session_id == session_id).with_for_update()
            ).first()
            if found is None:
                raise SessionNotFound(session_id)
            length, old_digest = found
            if expected_length is not None and length != expected_length:
                raise ConflictError(
                    f"session {session_id!r} has {length} messages, not {expected_length}"
                )
            if expected_last is not None:
                last = conn.execute(
                    select(messages.c.message_key, messages.c.created_at)
                    .where(and_(messages.c.session_id == session_id,
                                messages.c.position == expected_last.position))
                ).first()
                if (last is None or last[0] != expected_last.key
                        or _aware(last[1]) != expected_last.created_at):
                    raise ConflictError(
                        f"session {session_id!r}: the message at position "
                        f"{expected_last.position} is not the one read any more")
            if position >= length:
                return 0
            conn.execute(delete(messages).where(and_(messages.c.session_id == session_id,
                                                     messages.c.position >= position)))
            lowest = func.min if self.dialect == "sqlite" else func.least
            # The search watermarks come back with the session's end (the deleted messages'
            # search items went with them, by cascade).
            conn.execute(update(sessions).where(sessions.c.session_id == session_id)
                         .values(next_position=position, updated_at=_now(),
                                 indexed_position=lowest(sessions.c.indexed_position,
                                                         position),
                                 message_indexed_position=lowest(
                                     sessions.c.message_indexed_position, position)))
            _reset_activity(conn, session_id)  # the remaining messages' (revision 0016)
            truncated(conn, session_id, position, int(length), old_digest, _now())
            return int(length) - position

    # -- tool definitions -----------------------------------------------------------------------

    def record_tools(self, session_id: str, definitions: Any) -> list[ToolDefinition]:
        """Record the tool definitions offered in a session (any provider's shape); a tool
        recorded again under the same name is replaced."""
        parsed = normalize_tool_definitions(definitions)
        now = _now()
        rows = [{"session_id": session_id, "name": d.name, "description": d.description,
                 "parameters_json": dumps_json(dict(d.parameters)),
                 "definition_json": dumps_json(dict(d.definition)), "recorded_at": now}
                for d in parsed]
        with self._write() as conn:
            if conn.execute(select(sessions.c.session_id)
                            .where(sessions.c.session_id == session_id)).first() is None:
                raise SessionNotFound(session_id)
            if rows:
                conn.execute(delete(tool_definitions).where(and_(
                    tool_definitions.c.session_id == session_id,
                    tool_definitions.c.name.in_([r["name"] for r in rows]))))
                conn.execute(insert(tool_definitions), rows)
        return parsed

    @reads_once
    def tool_definitions(self, session_id: str) -> list[ToolDefinition]:
        """The tool definitions recorded with a session, by name."""
        with self._read() as conn:
            rows = conn.execute(
                select(tool_definitions.c.name, tool_definitions.c.description,
                       tool_definitions.c.parameters_json, tool_definitions.c.definition_json)
                .where(tool_definitions.c.session_id == session_id)
                .order_by(tool_definitions.c.name)
            ).all()
        return [ToolDefinition(n, d, loads_json(p), loads_json(j)) for n, d, p, j in rows]

    # -- aliases --------------------------------------------------------------------------------

    @reads_once
    def aliases(self) -> AliasTable:
        """The alias table as stored now."""
        with self._read() as conn:
            return alias_table(conn)

    def add_alias(self, raw_name: str, current_name: str, *,
                  agent: str | None = None) -> AliasTable:
        """Map ``raw_name`` to ``current_name`` from now on (replacing an earlier alias); with
        ``agent``, only for that agent's sessions (a scoped alias wins over a global one)."""
        AliasTable().with_alias(raw_name, current_name, agent)  # validates the names
        scope = agent or ""
        with self._write() as conn:
            conn.execute(delete(tool_aliases).where(tool_aliases.c.agent == scope,
                                                    tool_aliases.c.raw_name == raw_name))
            conn.execute(insert(tool_aliases), [{"agent": scope, "raw_name": raw_name,
                                                 "current_name": current_name,
                                                 "created_at": _now()}])
            return alias_table(conn)

    def remove_alias(self, raw_name: str, *, agent: str | None = None) -> AliasTable:
        """Remove the alias of ``raw_name`` (the one scoped to ``agent`` when given);
        ``AliasError`` when it has none."""
        with self._write() as conn:
            done = conn.execute(delete(tool_aliases).where(
                tool_aliases.c.agent == (agent or ""), tool_aliases.c.raw_name == raw_name))
            if done.rowcount == 0:
                scope = f" for agent {agent!r}" if agent else ""
                raise AliasError(f"no alias for tool name {raw_name!r}{scope}")
            return alias_table(conn)


def _as_utc(value: datetime) -> datetime:
    return value.astimezone(UTC) if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _reset_activity(conn: Connection, session_id: str) -> None:
    """Set a session's own activity to its messages' first and last times (a fork's copied
    prefix, what a truncation leaves; NULL when none is left)."""
    own = messages.c.session_id == session_id
    conn.execute(update(sessions).where(sessions.c.session_id == session_id).values(
        started_at=select(func.min(messages.c.created_at)).where(own).scalar_subquery(),
        last_activity_at=select(func.max(messages.c.created_at)).where(own)
        .scalar_subquery()))


def _call_counts(conn: Connection, session_ids: list[str]) -> dict[str, int]:
    """How many calls each session holds (one grouped query; ix_tool_calls_session_call_id)."""
    if not session_ids:
        return {}
    return {sid: int(n) for sid, n in conn.execute(
        select(tool_calls.c.session_id, func.count())
        .where(tool_calls.c.session_id.in_(session_ids)).group_by(tool_calls.c.session_id))}
