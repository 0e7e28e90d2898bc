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
* **Load** reads a session in one statement (session, messages, calls, results, aliases:
  one snapshot, so always a state that was committed; windows included), rebuilds every
  call from its stored wire text and applies the alias table as it is *now*, keeping the
  recorded name in ``raw_name``.
* Database errors surface as :class:`~store.core.errors.DatabaseError` (chained); URLs are shown
  with their passwords hidden.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, Self

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import SQLAlchemyError

from store.capture.files import FileState
from store.core.arguments import dumps_json
from store.core.collecting import fewer_collections
from store.core.errors import DatabaseError, SchemaOutOfDate, SessionNotFound, UsageError
from store.core.lineage import SessionLink
from store.core.times import as_utc
from store.core.transcript import (
    AppendResult,
    CallHit,
    Transcript,
)
from store.db.base import (
    _now,
    _session_row,
    aliases_from_text,
    check_session_id,
    driver_reason,
    reads_once,
)
from store.db.index.gaps_cache import idle_state, remember_idle
from store.db.index.message_index import MessageIndexUpdate, catch_up_messages
from store.db.index.message_search import MessageSearchMixin
from store.db.index.reads import short_reads, statement_by_statement
from store.db.index.search_index import IndexUpdate, catch_up, settle
from store.db.index.summaries import catch_up_summaries
from store.db.proofs.transparency import LogMixin
from store.db.proofs.trust import TrustMixin
from store.db.proofs.verify import VerifyReport, verify
from store.db.reading.lineage import LineageMixin
from store.db.reading.loaded import transcript_from_rows
from store.db.reading.usage import record_usage, write_usage
from store.db.schema.distribute import is_citus
from store.db.schema.engine import Durability, create_store_engine, default_url, redact_url
from store.db.schema.migrate import current, ensure_at_head, head, known_revision, newer_database
from store.db.schema.seeds import seed_vocabulary
from store.db.schema.tables import tool_calls
from store.db.schema.wiretext import wire_sql
from store.db.sessions import SessionsMixin
from store.db.writing.anchored import Anchor
from store.db.writing.compiled import (
    statements,
)
from store.db.writing.flight import Committed, LostFlight, SessionState, StaleState
from store.db.writing.limits import DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_MESSAGE_BYTES, Limits
from store.db.writing.sources import SourcesMixin, write_source
from store.db.writing.writer import (
    MessageInput,
    prepare_append,
    write_append,
)
from store.tlog.note import Verifier, open_checkpoint
from store.usage.tokens import TokenUsage

if TYPE_CHECKING:  # (an import's appends only)
    from store.db.writing.indexing import InlineIndex
    from store.records.prepared import IndexTexts

__all__ = ["TranscriptStore"]

#: Sessions whose state after this store's last append is remembered (PostgreSQL).
_REMEMBERED_SESSIONS = 4096
#: COMMIT replies an append may lose in a row (each resolved, then run again) before it
#: gives up with a DatabaseError.
_LOST_COMMITS = 3
#: Appends that read the session first after another writer was seen appending to it.
_CONTENDED_APPENDS = 64



class TranscriptStore(SessionsMixin, LineageMixin, SourcesMixin, TrustMixin,
                      MessageSearchMixin, LogMixin):
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
                seed_vocabulary(engine)
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
        source: FileState | None = None,
        parent: SessionLink | None = None,
        activity: tuple[datetime | None, datetime | None] | None = None,
        usage: Mapping[str, TokenUsage] | None = None,
        metadata: Mapping[str, Any] | None = None,
        _texts: Sequence[IndexTexts | None] | None = None,
    ) -> AppendResult:
        """Append messages (typed ``Message`` values or records of any shape the normalizer
        reads) to a session, creating it when it does not exist (with the given metadata).

        ``keys`` gives each message's idempotency key: a message whose key is already stored
        is skipped. Without ``keys``, a message with a provider message id is skipped only
        when the message stored under that id is identical to it (a provider id is not a
        key); ``skipped_keys`` names what was skipped. All or nothing: one transaction.
        ``on_key_conflict="raise"``: a key already stored for a *different* message raises
        ``KeyConflictError`` and nothing is stored (the importer uses it to notice a file
        that was rewritten). ``source``: where the read of the file these messages come from
        stopped, stored in the same transaction (the importer's; see
        ``store/db/writing/sources.py``).
        ``parent``: the session a new session descends from (``store.core.lineage``);
        ``metadata``: a new session's own metadata (``SessionInfo.metadata``). Like the title
        and the other session fields, they are stored only when the append creates the
        session (``AppendResult.created_session``).

        The session's own activity (``SessionInfo.started_at`` / ``ended_at``) widens to
        cover the append's: ``activity`` (the session's own start and end as its agent
        recorded them; the importers pass ``ParsedSession.started_at`` / ``ended_at``) and
        the messages' own times (``metadata["timestamp"]`` ...); the append's time only when
        neither gives one.

        ``usage``: token usage by message key, stored (as :meth:`record_usage` stores it) in
        the same transaction, after the messages: the importer gives a file's usage with its
        last batch, so that the file's read state, its messages and their usage are
        committed together.

        ``_texts`` (the importers'): each message's index texts, made where its file was read
        (``store.records.prepared``), stored with the rows when the session's indexes are up
        to date (``store/db/writing/indexing.py``).
        """
        sid = check_session_id(session_id)
        listed = list(items)
        prepared = prepare_append(listed, keys, self._limits)
        indexed: tuple[InlineIndex, dict[int, IndexTexts], list[int]] | None = None
        counted = [0, 0, 0]  # (calls, results, messages indexed with their rows)
        if _texts and len(_texts) == len(listed):
            indexed = (self._inline_index(), {id(enc): made for (_, _, enc), made
                                              in zip(prepared, _texts, strict=True)
                                              if made is not None}, counted)
        new_session = _session_row(sid, title, provider, model, cwd, tags, metadata, _now(),
                                   agent, parent)
        if activity is not None:
            new_session["started_at"], new_session["last_activity_at"] = (
                None if t is None else as_utc(t) for t in activity)
        check = on_key_conflict == "raise"
        dialect = self._engine.dialect.name

        states = self._session_states
        # PostgreSQL: what this store's last append left of the session lets a plain append
        # go in one flight (writer.write_append); a stale memory costs one failed flight.
        known = (states.get(sid) if dialect == "postgresql" and source is None and not usage
                 else None)
        anchored = False
        if known is not None and self._contended:
            known, anchored = self._while_contended(sid, known)

        attempted: list[tuple[AppendResult, SessionState]] = []

        def work(cursor: Any, known: SessionState | None, lost: tuple[int, str] | None
                 ) -> tuple[AppendResult, SessionState]:
            done = write_append(cursor, dialect, sid, prepared, new_session, check, known, lost,
                                anchored, indexed)
            if usage:
                write_usage(cursor, dialect == "postgresql", sid, usage, count=False)
            if source is not None:
                write_source(cursor, dialect, source)
            attempted.append(done)
            return done

        # A lost COMMIT reply (PostgreSQL, any append path) is resolved by running the append
        # again with the lost attempt's last chained digest (writer.write_append's ``lost``):
        # committed -> that attempt's result, else this run stores it. Bounded: a connection
        # that keeps dying at COMMIT ends in a DatabaseError that says so.
        lost: tuple[int, str] | None = None
        lost_attempt: tuple[AppendResult, SessionState] | None = None
        losses = 0
        try:
            while True:
                try:
                    result, state = self._retrying_cursor(partial(work, known=known,
                                                                  lost=lost))
                    break
                except StaleState:
                    self._forget((sid,))
                    known, anchored = None, False
                    with self._states_lock:
                        shared = sid in self._contended  # stale twice: another writer
                        self._contended[sid] = _CONTENDED_APPENDS if shared else 0
                        self._contended.move_to_end(sid)
                        if len(self._contended) > _REMEMBERED_SESSIONS:
                            self._contended.popitem(last=False)
                    if shared and self._citus is None:  # (asked once per store)
                        with self._engine.connect() as probe:
                            self._citus = is_citus(probe)
                except Committed:
                    assert lost_attempt is not None
                    result, state = lost_attempt
                    break
                except LostFlight as exc:
                    self._forget((sid,))
                    known, anchored = None, False
                    losses += 1
                    if losses > _LOST_COMMITS:
                        raise DatabaseError(
                            f"{self.url}: the connection was lost at COMMIT {losses} times in "
                            f"a row while appending to session {sid!r}; whether the last try "
                            "was stored is not known (load the session to see)") from exc
                    lost_attempt = attempted[-1]
                    stored, chain = lost_attempt[0].stored, lost_attempt[1].chain
                    # (an anchored attempt's positions were the server's to give: its keys,
                    # every message has one, make the run again idempotent instead)
                    lost = ((stored[-1].position, chain) if stored and chain
                            and not isinstance(lost_attempt[1], Anchor) else None)
        except BaseException:
            self._forget((sid,))  # a failed append: the next one reads the session again
            raise
        if isinstance(state, Anchor):
            result, state = state.resolve(result)
        if (lost_attempt is not None and result is not lost_attempt[0]
                and not lost_attempt[0].stored and lost_attempt[0].created_session
                and not result.created_session):
            # The lost attempt stored no message: it may have created the session.
            result = replace(result, created_session=True)
        if indexed is not None:
            with self._states_lock:
                self._inline_counts = [a + b for a, b in zip(self._inline_counts, counted,
                                                             strict=True)]
        if dialect == "postgresql":
            with self._states_lock:  # (threads may share a store)
                states[sid] = state
                states.move_to_end(sid)
                if len(states) > _REMEMBERED_SESSIONS:
                    states.popitem(last=False)
        return result

    def _while_contended(self, sid: str, known: SessionState
                         ) -> tuple[SessionState | None, bool]:
        """What an append to a session another writer appends to as well (stale twice in a
        while) rests on: the remembered state, placed by the server (``anchored``: one
        flight that no other writer makes stale), except on Citus, where the append reads
        the session first instead of risking a failed flight."""
        with self._states_lock:
            left = self._contended.get(sid)
            if not left:  # never stale, or stale once: the one flight is worth trying
                return known, False
            self._contended[sid] = left - 1  # (0 again: watched, a next stale state counts)
        return (None, False) if self._citus is not False else (known, True)

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
        """The session's transcript, in one statement whatever its length: one snapshot, so
        always a state some commit left (never half of a concurrent write).

        ``strict=True`` raises the parser's ``ToolArgumentsError`` at the first invalid call.
        A window (``last_turns``: the last N turns, a turn starting at a user message that is
        not only tool results; ``since_position``; ``since``: messages from that time on)
        loads a suffix of the session that starts early enough that no result is separated
        from its call (its start is computed in the same statement, from the same state).
        """
        sid = session_id
        if "\x00" in sid:  # no stored id holds NUL (PostgreSQL cannot even compare one)
            raise SessionNotFound(sid)
        st = statements(self.dialect)
        if last_turns is None and since_position is None and since is None:
            statement, params = st.load, st.load.params(sid=sid, start=0)
        else:
            if last_turns is not None and last_turns < 1:
                raise UsageError("last_turns must be at least 1")
            if since_position is not None and since_position < 0:
                raise UsageError("since_position must not be negative")
            statement = st.load_window
            params = statement.params(sid=sid, turns=last_turns, since_position=since_position,
                                      since=None if since is None else st.time(as_utc(since)))
        # One statement: one snapshot on both backends (see compiled._load_statement).
        rows = self._read_rows(statement.sql, params)
        return transcript_from_rows(rows, sid, st.read_time,
                                    partial(aliases_from_text, self._engine), strict=strict)

    # -- search index ---------------------------------------------------------------------------

    @fewer_collections()
    def update_search_index(
        self, *, progress: Callable[[IndexUpdate, int], None] | None = None,
        workers: int | None = 1,
    ) -> IndexUpdate:
        """Bring the search indexes (calls, then messages: ``store/db/index/message_index.py``) up
        to date with every committed message, in bulk (a chunk of
        sessions per transaction). Searches do it themselves first when the store is writable,
        and ``transcript-store import`` at the end of a run; this is the explicit step.
        ``progress(done_so_far, sessions_waiting)`` is called after each chunk. ``workers`` >
        1: when many sessions wait, the texts of the next chunks are made in that many worker
        processes while this one writes (forked: call it where forking is safe, as the import
        does; the rows written are the same); None: as many as the import's
        (``TRANSCRIPT_STORE_IMPORT_WORKERS``, else the cores). A read-only store does nothing
        (its searches scan what is not indexed yet)."""
        if self.read_only:
            return IndexUpdate()
        if workers is None:
            from store.importers.parallel import default_workers

            workers = default_workers()
        try:
            with self._engine.connect() as conn:
                with short_reads(statement_by_statement(conn)):
                    unchanged, before = idle_state(conn)
                if unchanged:
                    return IndexUpdate()  # (nothing committed since nothing was to do)
                if conn.dialect.name == "postgresql":  # (the catch-up reads in transactions)
                    conn.execution_options(isolation_level=conn.default_isolation_level)
                calls = catch_up(self._retrying, conn, progress=progress,
                                 workers=workers)

                def shown(done: MessageIndexUpdate, waiting: int) -> None:
                    if progress is not None:
                        progress(IndexUpdate(done.sessions, calls.calls, calls.results,
                                             calls.seconds + done.seconds, done.messages),
                                 waiting)

                texts = catch_up_messages(self._retrying, conn, progress=shown,
                                          workers=workers)
                started = time.perf_counter()
                with self._states_lock:
                    (inline_calls, inline_results, inline_messages), self._inline_counts = (
                        self._inline_counts, [0, 0, 0])
                settle(self._retrying, conn,
                       calls.calls + calls.results + inline_calls + inline_results,
                       texts.rows + inline_messages)
                summarized = catch_up_summaries(self._retrying, conn)  # (tools usage, usage)
                done = IndexUpdate(max(calls.sessions, texts.sessions),
                                   calls.calls + inline_calls, calls.results + inline_results,
                                   calls.seconds + texts.seconds
                                   + time.perf_counter() - started, texts.messages
                                   + inline_messages, summarized)
                if not (done.sessions or done.calls or done.results or done.messages
                        or summarized):
                    remember_idle(conn, before)
                return done
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    def _inline_index(self) -> InlineIndex:
        """What the database holds of the indexes, for appends that carry their index texts
        (read at the first one: whether SQLite has its full-text tables, the secrets' key)."""
        if self._inline is None:
            from store.db.index.message_index import has_message_index
            from store.db.index.search_index import has_search_index
            from store.db.index.secrets import store_key
            from store.db.writing.indexing import InlineIndex

            with self._engine.connect() as conn:
                self._inline = InlineIndex(has_search_index(conn), has_message_index(conn),
                                           store_key(conn))
        return self._inline

    # -- token usage ----------------------------------------------------------------------------

    def record_usage(self, session_id: str, usage: Mapping[str, TokenUsage]) -> int:
        """Store the token usage of messages already stored in ``session_id``, by message key
        (``message_usage``; one row per message, a row already there kept). Returns the rows
        written. The importers call it after appending a file's messages."""
        sid = check_session_id(session_id)
        if not usage:
            return 0
        if self.read_only:
            raise UsageError(f"{self.url}: opened read-only: token usage cannot be stored")
        try:
            return self._retrying(lambda conn: record_usage(conn, sid, usage))
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    # -- queries over all sessions --------------------------------------------------------------

    @reads_once
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

    @reads_once
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
        test = "strpos(wire_json, %s) > 0" if postgres else f"instr({wire_sql(False)}, ?) > 0"
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

    @fewer_collections()
    def verify(self, session_id: str | None = None, *, head: str | None = None,
               checkpoint: str | None = None, log_key: str | None = None) -> VerifyReport:
        """Check that what is stored reads back as written and that every message's chained
        digest still matches (see ``store.db.proofs.verify``); with ``head`` (from
        :meth:`record_head`), also that nothing was removed or rolled back since; with an
        older signed ``checkpoint`` of the transparency log and the verifier key ``log_key``
        it was signed with, that the log's history still extends it. Reports problems and
        changes nothing. PostgreSQL: one snapshot (REPEATABLE READ), so that a catch-up
        committing meanwhile does not make the derived rows look extra."""
        opened = None
        if checkpoint is not None:
            if log_key is None:
                raise UsageError("verify needs the log's verifier key to check a checkpoint")
            opened = open_checkpoint(checkpoint, Verifier.parse(log_key))
        try:
            engine = self.engine
            if engine.dialect.name == "postgresql":
                with engine.connect() as probe:
                    citus = is_citus(probe)
                if not citus:  # (Citus: each shard's own snapshot, as before)
                    engine = engine.execution_options(isolation_level="REPEATABLE READ")
            with engine.connect() as conn:
                return verify(conn, session_id, head=head, checkpoint=opened)
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {driver_reason(exc)}") from exc

    # -- counts ---------------------------------------------------------------------------------

    @reads_once
    def count_calls(self, session_id: str | None = None, *,
                    with_children: bool = False) -> int:
        """How many tool calls are stored (in one session, or in all); ``with_children``:
        those of the session and of every session below it (store/db/reading/lineage.py)."""
        if with_children and session_id is not None:
            return self.count_session_calls(session_id, with_children=True)
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
