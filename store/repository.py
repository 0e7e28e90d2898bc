"""``TranscriptStore``: sessions, appends, loads, tool definitions and aliases.

Contract:

* **Append** normalizes and encodes every message *before* touching the database (a bad
  message raises and nothing is written), then stores the whole call in one transaction:
  the session row is locked (``BEGIN IMMEDIATE`` on SQLite, ``SELECT ... FOR UPDATE`` on
  PostgreSQL), messages get consecutive positions from ``sessions.next_position``, and every
  table is written with one batched ``executemany``. A message whose key (client-given, or the
  provider's message id) is already stored in the session is skipped, so a retried append
  stores nothing twice. Uniqueness is positional; provider call ids may repeat.
* **Load** reads a session in a constant number of queries (session, messages, calls,
  results, aliases), rebuilds every call from its stored wire text and applies the alias
  table as it is *now*, keeping the recorded name in ``raw_name``.
* Database errors surface as :class:`~store.errors.DatabaseError` (chained); URLs are shown
  with their passwords hidden.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Self, TypeVar

from sqlalchemy import Connection, Engine, and_, delete, func, insert, literal, select, update
from sqlalchemy.exc import SQLAlchemyError

from store.arguments import dumps_json, loads_json
from store.codec import decode_call, decode_parts, decode_result
from store.compiled import Statements, statements
from store.definitions import normalize_tool_definitions
from store.engine import Durability, create_store_engine, default_url, redact_url
from store.errors import AliasError, DatabaseError, SchemaOutOfDate, SessionNotFound
from store.migrate import current, ensure_at_head, head
from store.model import EMPTY_EXTRAS, InvalidToolCall, Message, ToolCall, ToolResult
from store.names import AliasTable
from store.tables import (
    messages,
    sessions,
    tool_aliases,
    tool_calls,
    tool_definitions,
    tool_results,
)
from store.transcript import (
    AppendResult,
    CallHit,
    CallRef,
    SessionInfo,
    StoredMessage,
    ToolDefinition,
    Transcript,
)
from store.verify import VerifyReport
from store.writer import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    Limits,
    MessageInput,
    prepare_append,
    write_append,
)

__all__ = ["TranscriptStore"]

T = TypeVar("T")

#: The longest session id accepted (ids are keys on every table).
MAX_SESSION_ID_LENGTH = 512


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes: they were stored as UTC, so say so."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def check_session_id(session_id: object) -> str:
    """A usable session id, or a ``ValueError``-typed ``StoreError`` naming the problem."""
    from store.errors import RecordError

    if not isinstance(session_id, str) or not session_id:
        raise RecordError(f"a session id must be a non-empty string, got {session_id!r}")
    if len(session_id) > MAX_SESSION_ID_LENGTH:
        raise RecordError(
            f"a session id must be at most {MAX_SESSION_ID_LENGTH} characters, "
            f"got {len(session_id)}"
        )
    if "\x00" in session_id:
        raise RecordError("a session id must not contain NUL characters")
    return session_id


class TranscriptStore:
    """The store on one database (SQLite file or PostgreSQL). A context manager."""

    def __init__(self, engine: Engine, *, limits: Limits | None = None,
                 read_only: bool = False) -> None:
        self._engine = engine
        self._limits = limits or Limits()
        self.read_only = read_only
        self._closed = False
        self._alias_cache: tuple[tuple[Any, ...], AliasTable] | None = None
        # Writes take SQLite's write lock up front (BEGIN IMMEDIATE): no lock-upgrade deadlocks.
        self._write_engine = engine.execution_options(sqlite_begin="IMMEDIATE")
        # The hot paths run on the DBAPI cursor, so the driver's own errors surface there too.
        dbapi = engine.dialect.dbapi
        self._errors: tuple[type[BaseException], ...] = (
            (SQLAlchemyError, dbapi.Error) if dbapi is not None else (SQLAlchemyError,)
        )

    # -- lifecycle ------------------------------------------------------------------------------

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
            raise DatabaseError(f"cannot open {redact_url(engine.url)}: {_reason(exc)}"
                                ) from exc
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, limits=Limits(max_argument_bytes, max_message_bytes),
                   read_only=read_only)

    @property
    def engine(self) -> Engine:
        return self._engine

    @property
    def url(self) -> str:
        """The database URL with any password hidden."""
        return redact_url(self._engine.url)

    @property
    def dialect(self) -> str:
        return self._engine.dialect.name

    def close(self) -> None:
        """Release every connection."""
        if not self._closed:
            self._engine.dispose()
            self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TranscriptStore({self.url!r})"

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        try:
            with self._engine.connect() as conn:
                yield conn
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {_reason(exc)}") from exc

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        try:
            with self._write_engine.connect() as conn, conn.begin():
                yield conn
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {_reason(exc)}") from exc

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
    ) -> SessionInfo:
        """Create a session (a generated id when none is given); an existing id raises."""
        sid = check_session_id(session_id) if session_id is not None else uuid.uuid4().hex
        now = _now()
        row = _session_row(sid, title, provider, model, cwd, tags, metadata, now)
        with self._write() as conn:
            exists = conn.execute(
                select(sessions.c.session_id).where(sessions.c.session_id == sid)
            ).first()
            if exists:
                raise DatabaseError(f"a session with id {sid!r} exists already")
            conn.execute(insert(sessions), [row])
        return self.get_session(sid)

    def get_session(self, session_id: str) -> SessionInfo:
        """A session's metadata; ``SessionNotFound`` when there is none."""
        with self._read() as conn:
            row = conn.execute(
                select(sessions).where(sessions.c.session_id == session_id)
            ).first()
        if row is None:
            raise SessionNotFound(session_id)
        return _session_info(row._mapping)

    def list_sessions(
        self,
        *,
        provider: str | None = None,
        model: str | None = None,
        tag: str | None = None,
        title_contains: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[SessionInfo]:
        """Sessions, most recently updated first, filtered and paged."""
        if limit < 0 or offset < 0:
            raise ValueError("limit and offset must not be negative")
        query = select(sessions)
        if provider is not None:
            query = query.where(sessions.c.provider == provider)
        if model is not None:
            query = query.where(sessions.c.model == model)
        if title_contains is not None:
            pattern = "%" + _escape_like(title_contains) + "%"
            query = query.where(sessions.c.title.ilike(pattern, escape="\\"))
        if tag is not None:
            query = query.where(
                sessions.c.tags_json.like("%" + _escape_like(dumps_json(tag)) + "%", escape="\\")
            )
        if since is not None:
            query = query.where(sessions.c.updated_at >= since)
        if until is not None:
            query = query.where(sessions.c.updated_at < until)
        query = query.order_by(sessions.c.updated_at.desc(), sessions.c.session_id)
        with self._read() as conn:
            rows = conn.execute(query.limit(limit).offset(offset)).all()
        return [_session_info(r._mapping) for r in rows]

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

    def delete_session(self, session_id: str) -> None:
        """Delete a session and everything in it."""
        with self._write() as conn:
            done = conn.execute(delete(sessions).where(sessions.c.session_id == session_id))
            if done.rowcount == 0:
                raise SessionNotFound(session_id)

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
    ) -> AppendResult:
        """Append messages (typed ``Message`` values or records of any shape the normalizer
        reads) to a session, creating it when it does not exist (with the given metadata).

        ``keys`` gives each message's idempotency key (else the message's own id is used);
        a message whose key is already stored is skipped. All or nothing: one transaction.
        """
        sid = check_session_id(session_id)
        prepared = prepare_append(list(items), keys, self._limits)
        new_session = _session_row(sid, title, provider, model, cwd, tags, None, _now())
        return self._retrying(lambda conn: write_append(conn, sid, prepared, new_session))

    def _retrying(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in a write transaction, retrying (bounded, with backoff) when the
        database reports a lock or serialization conflict; the transaction is rolled back
        before each retry, so nothing is applied twice."""
        for attempt in range(_RETRIES + 1):
            try:
                with self._write_engine.connect() as conn, conn.begin():
                    return work(conn)
            except self._errors as exc:
                if attempt < _RETRIES and _is_transient(exc):
                    time.sleep(min(_BACKOFF * 2**attempt, 1.0) * (0.5 + random.random()))
                    continue
                raise DatabaseError(f"{self.url}: {_reason(exc)}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

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
        calls: dict[int, dict[int, ToolCall | InvalidToolCall]] = {}
        for pos, idx, call_id, wire, status, error, extras, source, minted in crows:
            call = apply(decode_call(call_id, wire, status, error, extras, source, bool(minted)))
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
        return Transcript(_session_info(session_row), tuple(out), links)

    def _aliases_from(self, cursor: Any, st: Statements) -> AliasTable:
        """The alias table as stored now, rebuilt only when its rows changed."""
        cursor.execute(st.load_aliases.sql)
        rows = tuple(cursor.fetchall())
        cached = self._alias_cache
        if cached is not None and cached[0] == rows:
            return cached[1]
        table = AliasTable([(raw, current) for raw, current in rows])
        self._alias_cache = (rows, table)
        return table

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
            raise ValueError("at_position must not be negative")
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
            copied = min(at_position, int(src["next_position"]))
            metadata = {**loads_json(src["metadata_json"]),
                        "forked_from": {"session_id": session_id, "position": copied}}
            conn.execute(insert(sessions), [{
                "session_id": new_id,
                "title": title if title is not None else src["title"],
                "provider": src["provider"], "model": src["model"], "cwd": src["cwd"],
                "tags_json": src["tags_json"], "metadata_json": dumps_json(metadata),
                "created_at": now, "updated_at": now, "next_position": copied,
            }])
            for table in (messages, tool_calls, tool_results, tool_definitions):
                columns = [c for c in table.columns if c.name != "session_id"]
                query = select(literal(new_id).label("session_id"), *columns).where(
                    table.c.session_id == session_id)
                if "position" in table.c:
                    query = query.where(table.c.position < copied)
                conn.execute(insert(table).from_select(
                    ["session_id", *[c.name for c in columns]], query))
        return self.get_session(new_id)

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

    def aliases(self) -> AliasTable:
        """The alias table as stored now."""
        with self._read() as conn:
            return _alias_table(conn)

    def add_alias(self, raw_name: str, current_name: str) -> AliasTable:
        """Map ``raw_name`` to ``current_name`` from now on (replacing an earlier alias)."""
        AliasTable({raw_name: current_name})  # validates both names
        with self._write() as conn:
            conn.execute(delete(tool_aliases).where(tool_aliases.c.raw_name == raw_name))
            conn.execute(insert(tool_aliases), [{"raw_name": raw_name,
                                                 "current_name": current_name,
                                                 "created_at": _now()}])
            return _alias_table(conn)

    def remove_alias(self, raw_name: str) -> AliasTable:
        """Remove the alias of ``raw_name``; ``AliasError`` when it has none."""
        with self._write() as conn:
            done = conn.execute(delete(tool_aliases).where(tool_aliases.c.raw_name == raw_name))
            if done.rowcount == 0:
                raise AliasError(f"no alias for tool name {raw_name!r}")
            return _alias_table(conn)

    # -- queries over all sessions --------------------------------------------------------------

    def count_calls_by_tool(self) -> dict[str, int]:
        """Calls per current tool name over every session (aliases applied, raw names grouped
        in SQL: no argument JSON is read)."""
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
        backends.
        """
        if not contains:
            raise ValueError("find_calls needs a non-empty search term")
        needle = dumps_json(contains)[1:-1]
        query = (
            select(tool_calls.c.session_id, tool_calls.c.position, tool_calls.c.call_index,
                   tool_calls.c.call_id, tool_calls.c.raw_name)
            .where(self._contains(tool_calls.c.wire_json, needle))
            .order_by(tool_calls.c.session_id, tool_calls.c.position, tool_calls.c.call_index)
        )
        if limit is not None:
            query = query.limit(limit)
        with self._read() as conn:
            rows = conn.execute(query).all()
            table = _alias_table(conn)
        return [CallHit(sid, pos, idx, cid, table.resolve(raw), raw)
                for sid, pos, idx, cid, raw in rows]

    def _contains(self, column: Any, needle: str) -> Any:
        """An exact, case-sensitive substring test (``instr`` / ``strpos``: no wildcards)."""
        if self.dialect == "postgresql":
            return func.strpos(column, needle) > 0
        return func.instr(column, needle) > 0

    def verify(self, session_id: str | None = None) -> VerifyReport:
        """Check that what is stored reads back as written (see ``store.verify``); reports
        problems and changes nothing."""
        from store.verify import verify

        try:
            return verify(self, session_id)
        except self._errors as exc:
            raise DatabaseError(f"{self.url}: {_reason(exc)}") from exc

    # -- counts ---------------------------------------------------------------------------------

    def count_calls(self, session_id: str | None = None) -> int:
        """How many tool calls are stored (in one session, or in all)."""
        query = select(func.count()).select_from(tool_calls)
        if session_id is not None:
            query = query.where(tool_calls.c.session_id == session_id)
        with self._read() as conn:
            return int(conn.execute(query).scalar_one())


def _check_readable_at_head(engine: Engine, shown_url: str) -> None:
    before, target = current(engine), head()
    if before is None:
        raise DatabaseError(f"no transcript-store database at {shown_url}")
    if before != target:
        raise SchemaOutOfDate(before, target, shown_url)


def _window_start(conn: Connection, sid: str, last_turns: int | None,
                  since_position: int | None, since: datetime | None) -> int:
    """The first position of a window, moved back until no result in it lacks its call."""
    candidates = []
    if last_turns is not None:
        if last_turns < 1:
            raise ValueError("last_turns must be at least 1")
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
            raise ValueError("since_position must not be negative")
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


_RETRIES = 8
_BACKOFF = 0.02
_TRANSIENT_SQLSTATES = {"40001", "40P01", "55P03"}  # serialization, deadlock, lock not available


def _is_transient(exc: BaseException) -> bool:
    """A lock or serialization conflict that a retry of the whole transaction can get past."""
    orig = getattr(exc, "orig", None) or exc
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate in _TRANSIENT_SQLSTATES:
        return True
    message = str(orig).lower()
    return "database is locked" in message or "database is busy" in message


def _reason(exc: BaseException) -> str:
    """The driver's message (without SQLAlchemy's statement dump, which may hold data)."""
    orig = getattr(exc, "orig", None)
    return str(orig if orig is not None else exc).strip()


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _alias_table(conn: Connection) -> AliasTable:
    rows = conn.execute(select(tool_aliases.c.raw_name, tool_aliases.c.current_name)).all()
    return AliasTable([(r, c) for r, c in rows])


def _session_row(
    sid: str,
    title: str | None,
    provider: str | None,
    model: str | None,
    cwd: str | None,
    tags: Iterable[str],
    metadata: Mapping[str, Any] | None,
    now: datetime,
) -> dict[str, Any]:
    tag_list = list(tags)
    if not all(isinstance(t, str) for t in tag_list):
        from store.errors import RecordError

        raise RecordError(f"session tags must be strings, got {tag_list!r}")
    return {
        "session_id": sid, "title": title, "provider": provider, "model": model, "cwd": cwd,
        "tags_json": dumps_json(tag_list) if tag_list else "[]",
        "metadata_json": dumps_json(dict(metadata)) if metadata else "{}",
        "created_at": now, "updated_at": now, "next_position": 0,
    }


def _session_info(row: Any) -> SessionInfo:
    return SessionInfo(
        row["session_id"], row["title"], row["provider"], row["model"], row["cwd"],
        tuple(loads_json(row["tags_json"])), _aware(row["created_at"]),
        _aware(row["updated_at"]), row["next_position"], loads_json(row["metadata_json"]),
    )
