"""The append path: normalize, encode, then write a batch in one transaction (persistence).

Hot path rules: everything that can fail on bad input (normalizing, encoding to exact JSON
text) happens before the first statement; the database then sees a fixed number of statements
per append (session upsert and lock, key check, prior-call lookups when results need them,
three ``executemany`` inserts, the position update), whatever the number of messages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from store.core.errors import (
    DatabaseError,
    RecordError,
    StoreError,
)
from store.core.model import Message
from store.core.pairing import CallRef
from store.core.times import parse_timestamp
from store.core.transcript import AppendResult, StoredMessage
from store.db.packing import packed, unpacked
from store.db.schema.tables import (
    WIRE_VERSION,
    messages,
    tool_calls,
    tool_results,
    written_columns,
)
from store.db.writing.anchored import DigestInput, queue_anchored
from store.db.writing.compiled import Statements, statements
from store.db.writing.flight import GUARD, REMEMBERED_CALLS, Committed, SessionState, one_flight
from store.db.writing.limits import (
    Limits,
    check_limits,
)
from store.db.writing.prior import IN_CHUNK as _IN_CHUNK
from store.db.writing.prior import Prepared
from store.db.writing.prior import linker_for as _linker_for
from store.db.writing.prior import nul_safe_text as _nul_safe_text
from store.db.writing.prior import params as _params
from store.db.writing.prior import postgres_reads as _postgres_reads
from store.normalize.messages import normalize_message
from store.records.codec import EncodedMessage, encode_chat_record, encode_message, minted_call_id
from store.trust.chain import GENESIS, canonical_time, message_digest

if TYPE_CHECKING:  # (an import's appends only: loaded with them)
    from store.db.writing.indexing import InlineIndex
    from store.records.prepared import IndexTexts

__all__ = ["MessageInput", "Prepared", "prepare_append", "write_append"]

MessageInput = Message | Mapping[str, Any]



def _prepare(items: Sequence[MessageInput], keys: Sequence[str | None] | None,
             limits: Limits) -> list[tuple[Message, str | None, EncodedMessage]]:
    if keys is not None and len(keys) != len(items):
        raise RecordError(f"append got {len(items)} messages but {len(keys)} keys")
    out = []
    for number, item in enumerate(items):
        try:
            fast = encode_chat_record(item) if type(item) is dict else None
            if fast is not None:
                message, encoded = fast
            else:
                message = _as_message(item)
                encoded = encode_message(message.parts, message.extras, message.metadata)
        except StoreError as exc:
            # Keep the error's type; say which message of the append it is about.
            exc.args = (f"message {number}: {exc}", *exc.args[1:])
            raise
        check_limits(number, encoded, limits)
        key = keys[number] if keys is not None else None
        if key is not None and (not isinstance(key, str) or not key):
            raise RecordError(f"message {number}: a message key must be a non-empty string")
        if keys is None and message.message_id:
            key = ImplicitKey(message.message_id, message.role, encoded)
        out.append((message, key, encoded))
    return out


def _as_message(item: MessageInput) -> Message:
    if isinstance(item, Message):
        return item
    if isinstance(item, Mapping):
        return normalize_message(item)
    raise RecordError(f"a message must be a Message or a record, got {type(item).__name__}")


class ImplicitKey(str):
    """The key of a message appended without a client key: its provider message id, with the
    digest of the record as stored. A provider id is not an idempotency key (Claude Code
    writes one record per content block, all with the same ``message.id``): such a message is
    skipped only when a message stored under that id is identical to it.

    It is stored under the plain id when that key is free in the session, else under
    ``<id>#<digest>`` (see :func:`_write`).
    """

    digest: str

    def __new__(cls, message_id: str, role: str, encoded: EncodedMessage) -> ImplicitKey:
        self = super().__new__(cls, message_id)
        self.digest = _encoded_digest(role, encoded)
        return self

    @property
    def hashed(self) -> str:
        return f"{self}#{self.digest}"


def _nul_safe_arguments(arguments: Any, text: str) -> Any:
    """PostgreSQL refuses ``\\u0000`` in JSONB: the queryable copy gets U+FFFD for NUL in its
    strings and keys; the exact argument text stays in ``wire_json``."""
    if arguments is None or ("\\u0000" not in text and "\x00" not in text):
        return arguments

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return _nul_safe_text(value)
        if isinstance(value, dict):
            return {_nul_safe_text(k): clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return clean(arguments)


#: The key under which a result's exact call id and name are kept in its ``extras_json`` when
#: they hold NUL on PostgreSQL (the columns get U+FFFD); ``decode_result`` puts them back.
NUL_EXACT_KEY = "\x00exact"


def _nul_safe_result(call_id: str | None, name: str | None,
                     extras_json: str | None) -> tuple[str | None, str | None, str]:
    from store.core.arguments import dumps_json, loads_json

    extras = loads_json(extras_json) if extras_json else {}
    extras[NUL_EXACT_KEY] = {"call_id": call_id, "name": name}
    return (None if call_id is None else _nul_safe_text(call_id),
            None if name is None else _nul_safe_text(name), dumps_json(extras))


def _message_time(metadata: Mapping[str, Any], now: datetime) -> datetime:
    """The transcript's own timestamp when it has a readable one, else the append time."""
    stamp = metadata.get("timestamp")
    if stamp is None:
        stamp = metadata.get("created")  # provider responses: epoch seconds
    if isinstance(stamp, int | float) and not isinstance(stamp, bool):
        try:  # epoch seconds, or milliseconds (JavaScript Date.now())
            return datetime.fromtimestamp(stamp / 1000 if stamp > 1e11 else stamp, UTC)
        except (ValueError, OverflowError, OSError):
            return now
    if isinstance(stamp, str):
        return parse_timestamp(stamp) or now  # unreadable, or out of range once in UTC
    return now


def prepare_append(items: Sequence[MessageInput], keys: Sequence[str | None] | None,
                   limits: Limits | None = None) -> Prepared:
    """Normalize, encode and check an append, before any transaction (raises on bad input)."""
    return _prepare(items, keys, limits or Limits())


def write_append(
    cursor: Any,
    dialect: str,
    sid: str,
    prepared: Prepared,
    new_session: Mapping[str, Any],
    check_keys: bool = False,
    known: SessionState | None = None,
    lost: tuple[int, str] | None = None,
    anchored: bool = False,
    indexed: tuple[InlineIndex, Mapping[int, IndexTexts], list[int]] | None = None,
) -> tuple[AppendResult, SessionState]:
    """Store one prepared append in the caller's transaction, on its driver cursor (see the
    module docstring); also the session's state after it (for the next append).

    ``check_keys``: a client key already stored for a different message (by digest) raises
    :class:`~store.core.errors.KeyConflictError` instead of being skipped. ``known``
    (PostgreSQL, on a :class:`~store.db.writing.flight.Flight`): the state this store's last append
    left; when every result of the append answers a call made in it or remembered, nothing is
    read first: a guard (the session row still as remembered) and the writes go in one flight
    with COMMIT, and a stale state fails that transaction as a whole (:class:`StaleState`,
    raised by the caller), after which the append runs the usual way.

    ``lost`` (PostgreSQL): the position and chained digest of the last message of this
    append's previous attempt, whose COMMIT reply was lost (:class:`~store.db.writing.flight.
    LostFlight`); when that message is stored, the attempt committed and :class:`~store.db.
    flight.Committed` is raised before anything is written.

    ``anchored`` (with ``known``: another writer appends to the session too): the one flight
    is placed by the server instead of guarded (:mod:`store.db.writing.anchored`); the state
    returned is then an :class:`~store.db.writing.anchored.Anchor`, resolved after COMMIT.

    ``indexed`` (an import's append): what the database holds of the indexes, the index
    texts made for the messages, by ``id()`` of their encoded values, and where to count what
    was indexed (calls, results, messages: set, not added to): stored with the rows
    (:mod:`store.db.writing.indexing`) when every message written has them."""
    return _write(cursor, statements(dialect), sid, prepared, new_session, check_keys, known,
                  lost, anchored, indexed)


def _write(
    cursor: Any,
    st: Statements,
    sid: str,
    prepared: list[tuple[Message, str | None, EncodedMessage]],
    new_session: Mapping[str, Any],
    check_keys: bool = False,
    known: SessionState | None = None,
    lost: tuple[int, str] | None = None,
    anchored: bool = False,
    indexed: tuple[InlineIndex, Mapping[int, IndexTexts], list[int]] | None = None,
) -> tuple[AppendResult, SessionState]:
    time = st.time
    now = new_session["created_at"]
    now_value = time(now)  # formatted once per append (strftime is costly on SQLite)
    session_values = {**new_session, "created_at": now_value, "updated_at": now_value,
                      "started_at": None, "last_activity_at": None}
    # The session's own activity the caller knows (an importer: the agent's start and end
    # records), else the messages' own times, collected below (revision 0016).
    given_first = new_session.get("started_at")
    given_last = new_session.get("last_activity_at")
    own: list[datetime] = []
    wanted: list[str] = []
    implicit = False
    for _, k, _ in prepared:
        if isinstance(k, ImplicitKey):
            wanted += (str(k), k.hashed)
            implicit = True
        elif k is not None:
            wanted.append(k)
    existing: set[str] = set()
    # The digest of the message stored under a plain provider id (filled only when needed).
    stored_digest: dict[str, str] = {}
    prior: list[tuple[Any, ...]] | None = None
    single = (st.postgres and known is not None and not check_keys and lost is None
                  and hasattr(cursor, "optimistic") and one_flight(prepared, known))
    if single:
        assert known is not None
        # Nothing read: the guard below checks the session is as remembered, the unique key
        # index that no key is stored (either failing sends the append the usual way).
        next_position, created_at, chain = known.next_position, None, known.chain
        # (only the ids the append's results name: not every remembered call, per append)
        named = {r.result.call_id for _, _, enc in prepared for r in enc.results}
        prior = [(cid, *known.calls[cid]) for cid in named if cid in known.calls]
        cursor.optimistic = True
    elif st.postgres:
        # One flight (the caller runs the transaction in psycopg's pipeline mode): the
        # session upsert, the key probe and the lookup of the calls this append's results may
        # answer are sent together, and their results read after.
        (next_position, created_at, chain), keys_found, prior, committed = _postgres_reads(
            cursor, st, sid, session_values, wanted, prepared, lost)
        if committed:
            raise Committed()
        existing.update(keys_found)
    else:
        cursor.execute(st.upsert_session.sql, _params(st.upsert_session.names, session_values))
        next_position, created_at, chain = cursor.fetchone()
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start:start + _IN_CHUNK]
            cursor.execute(st.expand(st.existing_keys, "keys", len(chunk)), (sid, *chunk))
            existing.update(row[0] for row in cursor.fetchall())
    created = created_at == session_values["created_at"]
    if implicit and existing:
        plain = sorted({str(k) for _, k, _ in prepared
                        if isinstance(k, ImplicitKey) and k in existing})
        _stored_digests(cursor, st, sid, plain, stored_digest)
    if check_keys and existing:
        _check_keys(cursor, st, sid, prepared, existing)
    skipped: list[str] = []
    batch: list[tuple[int, Message, str | None, EncodedMessage]] = []
    seen: set[str] = set()
    for message, key, encoded in prepared:
        if isinstance(key, ImplicitKey):
            # Skipped only when an identical record is stored (or earlier in this batch).
            if key.hashed in existing or key.hashed in seen or stored_digest.get(key) == (
                    key.digest):
                skipped.append(str(key))
                continue
            seen.add(key.hashed)
            if key in existing or key in seen:
                store_key: str = key.hashed
            else:
                store_key = str(key)
                stored_digest[store_key] = key.digest
            seen.add(store_key)
            batch.append((next_position + len(batch), message, store_key, encoded))
            continue
        if key is not None and (key in existing or key in seen):
            skipped.append(key)
            continue
        if key is not None:
            seen.add(key)
        batch.append((next_position + len(batch), message, key, encoded))
    remembered = (known.calls if known is not None and known.next_position == next_position
                  and known.chain == chain else {})
    if not batch:
        return (AppendResult(sid, (), tuple(skipped), created),
                SessionState(next_position, chain, dict(remembered)))

    linker = _linker_for(cursor, st, sid, batch, prior)
    made: dict[str, CallRef] = dict(remembered)
    postgres = st.postgres
    json = st.json
    message_rows: list[list[Any]] = []
    call_rows: list[tuple[Any, ...]] = []
    result_rows: list[tuple[Any, ...]] = []
    stored: list[StoredMessage] = []
    # The chain (store.trust.chain): each message's digest over its rows as stored, chained
    # to the previous one's, inside this transaction (the session row is locked).
    chain = chain or GENESIS
    now_micros = canonical_time(now)
    # (a contended session: what each message's digest is over, for the server to chain it)
    contents: list[DigestInput] | None = [] if single and anchored else None
    for position, message, key, enc in batch:
        if postgres and ("\x00" in (key or "") or "\x00" in (message.message_id or "")):
            number = next(i for i, (m, _, _) in enumerate(prepared) if m is message)
            raise RecordError(f"message {number}: its key or message id contains NUL, which "
                              "PostgreSQL cannot store")
        created_at = _message_time(message.metadata, now) if message.metadata else now
        if created_at is not now:
            own.append(created_at)
        # Column order of store.db.schema.tables.messages / tool_calls / tool_results (checked on
        # import).
        message_row = [
            sid, position, key, message.message_id, message.role, message.source,
            _nul_safe_text(enc.text) if postgres else enc.text, enc.parts_json,
            enc.extras_json, enc.metadata_json,
            now_value if created_at is now else time(created_at), None,
        ]
        first_call, first_result = len(call_rows), len(result_rows)
        linker.begin_message(message.role, bool(enc.results))
        opened = []
        used: set[str] = set()
        for call in enc.calls:  # (most messages have none)
            provider_id = call.call.id
            minted = not provider_id or provider_id in used
            call_id = minted_call_id(position, call.index) if minted else provider_id
            used.add(call_id)  # type: ignore[arg-type]
            if not minted and provider_id:
                made.pop(provider_id, None)  # (the latest message's wins, kept last)
                made[provider_id] = (position, call.index)
            # A repeated id is stored minted, but still answers results by that id (in order).
            opened.append((call.index, provider_id or None, (call.call.recorded_name,)))
            arguments = call.arguments
            if postgres:
                arguments = _nul_safe_arguments(arguments, call.call.arguments_text)
            raw_name = call.call.recorded_name
            if postgres:  # NUL-free column copies; the exact id and name stay in wire_json
                call_id = _nul_safe_text(call_id) if call_id else call_id
                raw_name = _nul_safe_text(raw_name)
            call_rows.append((
                sid, position, call.index, call_id, minted, raw_name,
                call.wire_json, call.status, call.error, json(arguments), call.extras_json,
                call.call.source, WIRE_VERSION,
            ))
        if opened:
            linker.add_calls(position, opened)
        for res in enc.results:
            ref = linker.link(res.result.call_id, res.result.name)
            result_id, result_name, result_extras = (
                res.result.call_id, res.result.name, res.extras_json)
            if postgres and ("\x00" in (result_id or "") or "\x00" in (result_name or "")):
                result_id, result_name, result_extras = _nul_safe_result(
                    result_id, result_name, result_extras)
            result_rows.append((
                sid, position, res.index, result_id,
                ref[0] if ref else None, ref[1] if ref else None,
                res.result.is_error, result_name, res.content_json, result_extras,
                res.result.source,
            ))
        content: DigestInput = (
            (*message_row[2:10], now_micros if created_at is now else canonical_time(created_at)),
            [(*c[2:9], *c[10:13]) for c in call_rows[first_call:]],
            [r[2:11] for r in result_rows[first_result:]])
        chain = message_digest(chain, position, *content)
        if contents is not None:
            contents.append(content)
        message_row[11] = chain
        if not postgres:  # the digest is over the texts; SQLite stores these two packed
            message_row[8] = packed(message_row[8])
            message_row[9] = packed(message_row[9])
        message_rows.append(message_row)
        stored.append(StoredMessage(position, message, key, created_at))
    after = next_position + len(batch)
    # The session's activity moves to cover this append's: the times it was given, else its
    # messages' own, else (none carried one) the append's time; never the import's clock
    # for a session that records its own.
    first = given_first or (min(own) if own else given_last)
    last = given_last or (max(own) if own else given_first)
    first, last = (time(first), time(last)) if first and last else (now_value, now_value)
    if contents is not None and prior is not None:
        # Another writer appends to this session too: the server places the append.
        anchor = queue_anchored(cursor, st, sid, next_position, message_rows, call_rows,
                                result_rows, contents, (now_value, first, last),
                                {cid: (pos, idx) for cid, pos, idx in prior},
                                _recent(made))
        if anchor is not None:
            return AppendResult(sid, tuple(stored), tuple(skipped), created), anchor
    if single:
        assert known is not None
        # The guard, first in the flight: move the session row on only if it is as
        # remembered, else fail the transaction (a division by zero: STALE_SQLSTATES).
        cursor.execute(GUARD, (after, chain, now_value, first, last, sid, known.next_position,
                                known.chain))
    done = None
    if indexed is not None and not single:
        from store.db.writing.indexing import can_write_indexed, index_rows

        inline, texts_of, counted = indexed
        texts = [(position, texts_of[id(enc)]) for position, _, _, enc in batch
                 if id(enc) in texts_of and can_write_indexed(postgres, enc)]
        if len(texts) == len(batch):  # (else the catch-up indexes the whole append)
            done = index_rows(cursor, postgres, inline, sid, next_position, texts, call_rows,
                              result_rows)
            counted[:] = ((len(call_rows), len(result_rows)) if done.calls else (0, 0)) + (
                done.messages,)
    with_texts = done is not None and done.calls
    cursor.executemany(st.insert_messages.sql, message_rows)
    if call_rows:
        cursor.executemany((st.insert_calls_indexed if with_texts else st.insert_calls).sql,
                           call_rows)
    if result_rows:
        cursor.executemany(
            (st.insert_results_indexed if with_texts else st.insert_results).sql, result_rows)
    if not single:
        cursor.execute(st.advance_session.sql,
                       _params(st.advance_session.names,
                               {"sid": sid, "next_position": after, "now": now_value,
                                "chain": chain, "first": first, "last": last}))
    if done is not None:
        from store.db.writing.indexing import write_indexed

        write_indexed(cursor, postgres, sid, after, done)
    return (AppendResult(sid, tuple(stored), tuple(skipped), created),
            SessionState(after, chain, _recent(made)))


def _recent(calls: dict[str, CallRef]) -> dict[str, CallRef]:
    """The most recent :data:`REMEMBERED_CALLS` of ``calls`` (in the order they were made):
    what a session's state keeps, so that carrying it costs the same at any length."""
    if len(calls) <= REMEMBERED_CALLS:
        return calls
    return dict(list(calls.items())[-REMEMBERED_CALLS:])


def _check_keys(cursor: Any, st: Statements, sid: str, prepared: Prepared,
                existing: set[str]) -> None:
    """Raise ``KeyConflictError`` when a client key is stored for a different message."""
    from store.core.errors import KeyConflictError

    mine = {k: (m, e) for m, k, e in prepared
            if k is not None and not isinstance(k, ImplicitKey) and k in existing}
    stored: dict[str, str] = {}
    _stored_digests(cursor, st, sid, sorted(mine), stored)
    conflicts = tuple(k for k, (m, e) in mine.items()
                      if k in stored and stored[k] != _encoded_digest(m.role, e))
    if conflicts:
        raise KeyConflictError(sid, conflicts)


def _stored_digests(cursor: Any, st: Statements, sid: str, plain: list[str],
                    out: dict[str, str]) -> None:
    """The digests of the messages stored under the given keys."""
    rows: dict[int, tuple[str, list[str | None]]] = {}
    calls: dict[int, list[str | None]] = {}
    results: dict[int, list[str | None]] = {}
    for start in range(0, len(plain), _IN_CHUNK):
        chunk = plain[start:start + _IN_CHUNK]
        cursor.execute(st.expand(st.stored_records, "keys", len(chunk)), (sid, *chunk))
        for key, position, role, parts, extras, meta in cursor.fetchall():
            rows[position] = (key, [role, parts, unpacked(extras), unpacked(meta)])
    positions = sorted(rows)
    for start in range(0, len(positions), _IN_CHUNK):
        chunk_p = positions[start:start + _IN_CHUNK]
        cursor.execute(st.expand(st.stored_calls, "positions", len(chunk_p)), (sid, *chunk_p))
        for position, wire, extras in cursor.fetchall():
            calls.setdefault(position, []).extend((wire, extras))
        cursor.execute(st.expand(st.stored_results, "positions", len(chunk_p)),
                       (sid, *chunk_p))
        for position, call_id, is_error, name, content, extras in cursor.fetchall():
            results.setdefault(position, []).extend(
                (call_id, "1" if is_error else "0", name, content, extras))
    for position, (key, fields) in rows.items():
        out[key] = _digest(fields, calls.get(position, []), results.get(position, []))


def _encoded_digest(role: str, enc: EncodedMessage) -> str:
    calls: list[str | None] = []
    for call in enc.calls:
        calls += (call.wire_json, call.extras_json)
    results: list[str | None] = []
    for res in enc.results:
        r = res.result
        results += (r.call_id, "1" if r.is_error else "0", r.name, res.content_json,
                    res.extras_json)
    return _digest([role, enc.parts_json, enc.extras_json, enc.metadata_json], calls, results)


def _digest(fields: list[str | None], calls: list[str | None],
            results: list[str | None]) -> str:
    """A digest of a message as stored: its row, its calls' and its results' rows."""
    h = hashlib.sha256()
    for group in (fields, calls, results):
        h.update(len(group).to_bytes(8, "big"))
        for text in group:
            if text is None:
                h.update(b"\xff" * 8)
                continue
            data = text.encode("utf-8", "surrogatepass")
            h.update(len(data).to_bytes(8, "big"))
            h.update(data)
    return h.hexdigest()[:32]


def _check_column_order() -> None:
    """The row tuples above follow the tables' column order; fail loudly if it changes."""
    expected = {
        messages: ("session_id", "position", "message_key", "message_id", "role", "source",
                   "text", "parts_json", "extras_json", "metadata_json", "created_at",
                   "digest"),
        tool_calls: ("session_id", "position", "call_index", "call_id", "id_minted",
                     "raw_name", "wire_json", "arguments_status", "arguments_error",
                     "arguments", "extras_json", "source", "wire_version"),
        tool_results: ("session_id", "position", "result_index", "call_id", "call_position",
                       "call_index", "is_error", "name", "content_json", "extras_json",
                       "source"),
    }
    for table, columns in expected.items():
        actual = tuple(c.name for c in written_columns(table))
        if actual != columns:  # pragma: no cover - a schema change without this update
            raise DatabaseError(
                f"store.db.writing.writer row layout is stale for {table.name}: {actual}")


_check_column_order()
