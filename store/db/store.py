"""``TranscriptStore``: sessions, appends, loads, tool definitions and aliases.

Contract:

* **Append** normalizes and encodes every message *before* touching the database (a bad
  message raises and nothing is written), then stores the whole call in one transaction:
  the session row is locked (``BEGIN IMMEDIATE`` on SQLite, ``SELECT ... FOR UPDATE`` on
  PostgreSQL), messages get consecutive positions from ``sessions.next_position``, and every
  table is written with one batched ``executemany``. An append stores nothing for a message
  only when (a) its client key (``keys=``) is already stored in the session, or (b) no keys
  are given, the message carries a provider message id, and a message stored under that id
  is identical to it (role, parts, extras, metadata). A provider id alone is not a key:
  Claude Code writes one record per content block with the same ``message.id``, and each is
  stored. So a retried append stores nothing twice. Uniqueness is positional; provider call
  ids may repeat.
* **Load** reads a session in a constant number of queries (session, messages, calls,
  results, aliases), rebuilds every call from its stored wire text and applies the alias
  table as it is *now*, keeping the recorded name in ``raw_name``.
* Database errors surface as :class:`~store.core.errors.DatabaseError` (chained); URLs are shown
  with their passwords hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal, Self

from sqlalchemy import Connection, Engine, and_, func, select
from sqlalchemy.exc import SQLAlchemyError

from store.core.arguments import dumps_json, loads_json
from store.core.errors import DatabaseError, SchemaOutOfDate, SessionNotFound, UsageError
from store.core.model import EMPTY_EXTRAS, InvalidToolCall, Message, ToolCall, ToolResult
from store.core.transcript import (
    AppendResult,
    CallHit,
    CallRef,
    StoredMessage,
    Transcript,
)
from store.db.base import (
    _now,
    _session_info,
    _session_row,
    check_session_id,
    driver_reason,
)
from store.db.compiled import statements
from store.db.engine import Durability, create_store_engine, default_url, redact_url
from store.db.migrate import current, ensure_at_head, head, known_revision, newer_database
from store.db.search_index import IndexUpdate, catch_up
from store.db.sessions import SessionsMixin
from store.db.tables import (
    messages,
    tool_calls,
    tool_results,
)
from store.db.trust import TrustMixin
from store.db.verify import VerifyReport, verify
from store.db.writer import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    Limits,
    MessageInput,
    prepare_append,
    write_append,
)
from store.records.codec import decode_call, decode_parts, decode_result

__all__ = ["TranscriptStore"]





class TranscriptStore(SessionsMixin, TrustMixin):
    """The store on one database (SQLite file or PostgreSQL). A context manager."""

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        upgrade: bool = False,
        read_only: bool = False,
        durability: Durability = "process",
        max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        engine_options: Mapping[str, Any] | None = None,
    ) -> Self:
        """Open the store at ``url`` (default: ``TRANSCRIPT_STORE_URL``, else an SQLite file in
        the user's data directory). A new database is created at the current schema; an older
        one raises ``SchemaOutOfDate`` unless ``upgrade=True``.

        ``read_only=True`` (for auditors) opens SQLite read-only and makes every PostgreSQL
        transaction read-only; writes then fail with ``DatabaseError``, and the database must
        exist at the current schema. ``durability="power"`` makes SQLite commits safe against
        power loss (``synchronous=FULL``); the default is safe against a process crash.
        ``max_argument_bytes`` (default 16 MiB) and ``max_message_bytes`` (default 64 MiB)
        bound what one call's arguments and one message may weigh (``TooLargeError``).
        """
        engine = create_store_engine(url or default_url(), durability=durability,
                                     engine_options=engine_options, read_only=read_only)
        try:
            if read_only:
                _check_readable_at_head(engine, redact_url(url or default_url()))
            else:
                ensure_at_head(engine, upgrade_if_older=upgrade)
        except SQLAlchemyError as exc:
            engine.dispose()
            raise DatabaseError(f"cannot open {redact_url(engine.url)}: {driver_reason(exc)}"
                                ) from exc
        except BaseException:
            engine.dispose()
            raise
        opened = cls(engine, limits=Limits(max_argument_bytes, max_message_bytes),
                     read_only=read_only)
        opened._given_url = redact_url(url or default_url())
        return opened

    # -- append ---------------------------------------------------------------------------------

    def append(
        self,
        session_id: str,
        items: Iterable[MessageInput],
        *,
        keys: Sequence[str | None] | None = None,
        title: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        cwd: str | None = None,
        tags: Iterable[str] = (),
        agent: str | None = None,
        on_key_conflict: Literal["skip", "raise"] = "skip",
    ) -> AppendResult:
        """Append messages (typed ``Message`` values or records of any shape the normalizer
        reads) to a session, creating it when it does not exist (with the given metadata).

        ``keys`` gives each message's idempotency key: a message whose key is already stored
        is skipped. Without ``keys``, a message with a provider message id is skipped only
        when the message stored under that id is identical to it (a provider id is not a
        key); ``skipped_keys`` names what was skipped. All or nothing: one transaction.
        ``on_key_conflict="raise"``: a key already stored for a *different* message raises
        ``KeyConflictError`` and nothing is stored (the importer uses it to notice a file
        that was rewritten).
        """
        sid = check_session_id(session_id)
        prepared = prepare_append(list(items), keys, self._limits)
        new_session = _session_row(sid, title, provider, model, cwd, tags, None, _now(), agent)
        check = on_key_conflict == "raise"
        dialect = self._engine.dialect.name
        return self._retrying_cursor(
            lambda cursor: write_append(cursor, dialect, sid, prepared, new_session, check))

    # -- load -----------------------------------------------------------------------------------

    def load(
        self,
        session_id: str,
        *,
        strict: bool = False,
        last_turns: int | None = None,
        since_position: int | None = None,
        since: datetime | None = None,
    ) -> Transcript:
        """The session's transcript, in five queries whatever its length.

        ``strict=True`` raises the parser's ``ToolArgumentsError`` at the first invalid call.
        A window (``last_turns``: the last N turns, a turn starting at a user message that is
        not only tool results; ``since_position``; ``since``: messages from that time on)
        loads a suffix of the session that starts early enough that no result is separated
        from its call (a few more queries find where it starts).
        """
        sid = session_id
        if "\x00" in sid:  # no stored id holds NUL (PostgreSQL cannot even compare one)
            raise SessionNotFound(sid)
        with self._read() as conn:
            st = statements(self.dialect)
            start = 0
            if last_turns is not None or since_position is not None or since is not None:
                start = _window_start(conn, sid, last_turns, since_position, since)
            cursor = conn.connection.cursor()
            try:
                cursor.execute(st.load_session.sql, (sid,))
                srow = cursor.fetchone()
                if srow is None:
                    raise SessionNotFound(sid)
                session_columns = [d[0] for d in cursor.description]
                cursor.execute(st.load_messages.sql, (sid, start))
                mrows = cursor.fetchall()
                cursor.execute(st.load_calls.sql, (sid, start))
                crows = cursor.fetchall()
                cursor.execute(st.load_results.sql, (sid, start))
                rrows = cursor.fetchall()
                aliases = self._aliases_from(cursor, st)
            finally:
                cursor.close()
        read_time = st.read_time
        apply = aliases.apply
        agent = srow[session_columns.index("agent")] if "agent" in session_columns else None
        calls: dict[int, dict[int, ToolCall | InvalidToolCall]] = {}
        for pos, idx, call_id, wire, status, error, extras, source, minted in crows:
            call = apply(decode_call(call_id, wire, status, error, extras, source, bool(minted)),
                         agent)
            if strict and isinstance(call, InvalidToolCall):
                err = call.error
                err.args = (f"session {sid!r}, message {pos}, call {idx} ({call.name}): "
                            f"{err.args[0]}",)
                raise err
            calls.setdefault(pos, {})[idx] = call
        results: dict[int, dict[int, ToolResult]] = {}
        links: dict[CallRef, CallRef] = {}
        for pos, idx, call_id, content, is_error, name, extras, source, cpos, cidx in rrows:
            results.setdefault(pos, {})[idx] = decode_result(
                call_id, content, bool(is_error), name, extras, source
            )
            if cpos is not None and cidx is not None:
                links[(pos, idx)] = (cpos, cidx)
        out = []
        no_calls: dict[int, ToolCall | InvalidToolCall] = {}
        no_results: dict[int, ToolResult] = {}
        for pos, key, role, source, parts, extras, meta, created, message_id in mrows:
            parts_t = decode_parts(parts, calls.get(pos, no_calls), results.get(pos, no_results))
            message = Message(role, parts_t, source, message_id,
                              loads_json(extras) if extras else EMPTY_EXTRAS,
                              loads_json(meta) if meta else EMPTY_EXTRAS)
            out.append(StoredMessage(pos, message, key, read_time(created)))
        session_row = dict(zip(session_columns, srow, strict=True))
        session_row["created_at"] = read_time(session_row["created_at"])
        session_row["updated_at"] = read_time(session_row["updated_at"])
        info = _session_info(session_row)
        if out and start == 0:
            info = replace(info, started_at=min(m.created_at for m in out),
                           ended_at=max(m.created_at for m in out))
        return Transcript(info, tuple(out), links)

    # -- search index ---------------------------------------------------------------------------

    def update_search_index(
        self, *, progress: Callable[[IndexUpdate, int], None] | None = None
    ) -> IndexUpdate:
        """Bring the search index up to date with every committed message, in bulk (a chunk of
        sessions per transaction). Searches do it themselves first when the store is writable,
        and ``transcript-store import`` at the end of a run; this is the explicit step.
        ``progress(done_so_far, sessions_waiting)`` is called after each chunk. A read-only
        store does nothing (its searches scan what is not indexed yet)."""
        if self.read_only:
            return IndexUpdate()
        try:
            with self._engine.connect() as conn:
                return catch_up(self._retrying, conn, progress=progress)
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    # -- queries over all sessions --------------------------------------------------------------

    def count_calls_by_tool(self) -> dict[str, int]:
        """Calls per current tool name over every session (aliases applied, raw names grouped
        in SQL: no argument JSON is read).

        A shortcut kept for the storage benchmark and quick scripts: the audit API
        (:func:`store.tool_usage`) answers the same question with sessions, errors, invalid
        calls, first/last seen, filters and paging.
        """
        with self._read() as conn:
            st = statements(self.dialect)
            cursor = conn.connection.cursor()
            try:
                cursor.execute(st.count_by_raw_name.sql)
                rows = cursor.fetchall()
                table = self._aliases_from(cursor, st)
            finally:
                cursor.close()
        counts: dict[str, int] = {}
        for raw, n in rows:
            name = table.resolve(raw)
            counts[name] = counts.get(name, 0) + int(n)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def find_calls(self, contains: str, *, limit: int | None = None) -> list[CallHit]:
        """Calls whose argument text, as recorded, contains ``contains`` (case-sensitive).

        The term is matched inside the stored wire text, escaped the way the wire form escapes
        the argument text (a JSON string); it is an exact substring (no wildcards), on both
        backends. A shortcut kept for the storage benchmark and quick scripts: the audit API
        (:func:`store.search_calls` with ``ArgumentCondition(..., "contains", ...)`` or
        ``text=``) adds tools, times, statuses, argument paths, results and paging.
        """
        if not contains:
            raise UsageError("find_calls needs a non-empty search term")
        needle = dumps_json(contains)[1:-1]
        postgres = self.dialect == "postgresql"
        # Driver SQL on the DBAPI cursor, as load does: building a Core statement per call
        # cost more than the query on a small store.
        test = "strpos(wire_json, %s) > 0" if postgres else "instr(wire_json, ?) > 0"
        sql = ("SELECT session_id, position, call_index, call_id, raw_name FROM tool_calls "
               f"WHERE {test} ORDER BY session_id, position, call_index")
        params: tuple[Any, ...] = (needle,)
        if limit is not None:
            sql += " LIMIT %s" if postgres else " LIMIT ?"
            params = (needle, int(limit))
        with self._read() as conn:
            st = statements(self.dialect)
            cursor = conn.connection.cursor()
            try:
                cursor.execute(sql, params)
                rows = cursor.fetchall()
                table = self._aliases_from(cursor, st)
            finally:
                cursor.close()
        return [CallHit(sid, pos, idx, cid, table.resolve(raw), raw)
                for sid, pos, idx, cid, raw in rows]

    def verify(self, session_id: str | None = None, *, head: str | None = None
               ) -> VerifyReport:
        """Check that what is stored reads back as written and that every message's chained
        digest still matches (see ``store.db.verify``); with ``head`` (from
        :meth:`record_head`), also that nothing was removed or rolled back since. Reports
        problems and changes nothing."""
        try:
            with self.engine.connect() as conn:
                return verify(conn, session_id, head=head)
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    # -- counts ---------------------------------------------------------------------------------

    def count_calls(self, session_id: str | None = None) -> int:
        """How many tool calls are stored (in one session, or in all)."""
        query = select(func.count()).select_from(tool_calls)
        if session_id is not None:
            query = query.where(tool_calls.c.session_id == session_id)
        with self._read() as conn:
            return int(conn.execute(query).scalar_one())


def _check_readable_at_head(engine: Engine, shown_url: str) -> None:
    """A read never creates or migrates: the database must exist at head."""
    before, target = current(engine), head()
    if before is None:
        raise DatabaseError(f"no transcript-store database at {shown_url} (a read never "
                            "creates one)")
    if before != target:
        if not known_revision(before):
            raise DatabaseError(newer_database(before, shown_url, engine))
        raise SchemaOutOfDate(before, target, shown_url)


def _window_start(conn: Connection, sid: str, last_turns: int | None,
                  since_position: int | None, since: datetime | None) -> int:
    """The first position of a window, moved back until no result in it lacks its call."""
    candidates = []
    if last_turns is not None:
        if last_turns < 1:
            raise UsageError("last_turns must be at least 1")
        # A turn starts at a user message whose first part is not a tool result.
        starts = conn.execute(
            select(messages.c.position)
            .where(and_(messages.c.session_id == sid, messages.c.role == "user",
                        messages.c.parts_json.not_like('[{"type":"tool_result"%')))
            .order_by(messages.c.position.desc()).limit(last_turns)
        ).scalars().all()
        candidates.append(starts[-1] if len(starts) == last_turns else 0)
    if since_position is not None:
        if since_position < 0:
            raise UsageError("since_position must not be negative")
        candidates.append(since_position)
    if since is not None:
        first = conn.execute(
            select(func.min(messages.c.position))
            .where(and_(messages.c.session_id == sid, messages.c.created_at >= since))
        ).scalar_one()
        candidates.append(first if first is not None else 2**31 - 1)
    start = max(candidates)
    while start > 0:
        earliest = conn.execute(
            select(func.min(tool_results.c.call_position))
            .where(and_(tool_results.c.session_id == sid, tool_results.c.position >= start))
        ).scalar_one()
        if earliest is None or earliest >= start:
            break
        start = earliest
    return int(start)




