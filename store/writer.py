"""The append path: normalize, encode, then write a batch in one transaction (persistence).

Hot path rules: everything that can fail on bad input (normalizing, encoding to exact JSON
text) happens before the first statement; the database then sees a fixed number of statements
per append (session upsert and lock, key check, prior-call lookups when results need them,
three ``executemany`` inserts, the position update), whatever the number of messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, and_, func, insert, select, update

from store.codec import EncodedMessage, encode_message, minted_call_id
from store.errors import RecordError, StoreError
from store.messages import normalize_message
from store.model import Message
from store.names import AliasTable
from store.pairing import CallLinker, CallRef
from store.tables import WIRE_VERSION, messages, sessions, tool_calls, tool_results
from store.transcript import AppendResult, StoredMessage

__all__ = ["MessageInput", "write_append"]

MessageInput = Message | Mapping[str, Any]

# Names are stored as recorded: aliases apply at load time, so normalize without any.
_NO_ALIASES = AliasTable()
# Bound parameters per IN (...) list, below SQLite's limit.
_IN_CHUNK = 500


def _prepare(items: Sequence[MessageInput], keys: Sequence[str | None] | None
             ) -> list[tuple[Message, str | None, EncodedMessage]]:
    if keys is not None and len(keys) != len(items):
        raise RecordError(f"append got {len(items)} messages but {len(keys)} keys")
    out = []
    for number, item in enumerate(items):
        try:
            if isinstance(item, Message):
                message = item
            elif isinstance(item, Mapping):
                message = normalize_message(item, _NO_ALIASES)
            else:
                raise RecordError(
                    f"a message must be a Message or a record, got {type(item).__name__}"
                )
            encoded = encode_message(message.parts, message.extras, message.metadata)
        except StoreError as exc:
            # Keep the error's type; say which message of the append it is about.
            exc.args = (f"message {number}: {exc}", *exc.args[1:])
            raise
        key = keys[number] if keys is not None else message.message_id
        if key is not None and (not isinstance(key, str) or not key):
            raise RecordError(f"message {number}: a message key must be a non-empty string")
        out.append((message, key, encoded))
    return out


def _nul_safe_text(value: str) -> str:
    """PostgreSQL refuses NUL in text: the display-text column (a derived copy; the exact text
    stays in ``parts_json``, where JSON escapes it) gets U+FFFD instead."""
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


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


def _message_time(metadata: Mapping[str, Any], now: datetime) -> datetime:
    """The transcript's own timestamp when it has a readable one, else the append time."""
    stamp = metadata.get("timestamp")
    if isinstance(stamp, str):
        try:
            parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            return now
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return now


def _insert_session_if_missing(conn: Connection, row: Mapping[str, Any]) -> bool:
    from sqlalchemy.dialects import postgresql, sqlite

    dialect_insert: Any = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    statement = (
        dialect_insert(sessions).values(**row).on_conflict_do_nothing()
        .returning(sessions.c.session_id)
    )
    return conn.execute(statement).first() is not None


def write_append(
    conn: Connection,
    sid: str,
    items: Sequence[MessageInput],
    keys: Sequence[str | None] | None,
    new_session: Mapping[str, Any],
) -> AppendResult:
    """Store one append in the caller's transaction (see the module docstring)."""
    prepared = _prepare(items, keys)
    created = _insert_session_if_missing(conn, new_session)
    lock = select(sessions.c.next_position).where(sessions.c.session_id == sid)
    if conn.dialect.name == "postgresql":
        lock = lock.with_for_update()
    next_position = int(conn.execute(lock).scalar_one())

    wanted = [k for _, k, _ in prepared if k is not None]
    existing: set[str] = set()
    for start in range(0, len(wanted), _IN_CHUNK):
        chunk = wanted[start:start + _IN_CHUNK]
        existing.update(conn.execute(
            select(messages.c.message_key).where(
                and_(messages.c.session_id == sid, messages.c.message_key.in_(chunk)))
        ).scalars())
    skipped: list[str] = []
    batch: list[tuple[int, Message, str | None, EncodedMessage]] = []
    seen: set[str] = set()
    for message, key, encoded in prepared:
        if key is not None and (key in existing or key in seen):
            skipped.append(key)
            continue
        if key is not None:
            seen.add(key)
        batch.append((next_position + len(batch), message, key, encoded))
    if not batch:
        return AppendResult(sid, (), tuple(skipped), created)

    linker = _linker_for(conn, sid, batch)
    postgres = conn.dialect.name == "postgresql"
    now = datetime.now(UTC)
    message_rows: list[dict[str, Any]] = []
    call_rows: list[dict[str, Any]] = []
    result_rows: list[dict[str, Any]] = []
    stored: list[StoredMessage] = []
    for position, message, key, enc in batch:
        created_at = _message_time(message.metadata, now)
        message_rows.append({
            "session_id": sid, "position": position, "message_key": key, "role": message.role,
            "source": message.source,
            "text": _nul_safe_text(enc.text) if postgres else enc.text,
            "parts_json": enc.parts_json,
            "extras_json": enc.extras_json, "metadata_json": enc.metadata_json,
            "created_at": created_at,
        })
        opened = []
        used: set[str] = set()
        for call in enc.calls:
            provider_id = call.call.id
            minted = not provider_id or provider_id in used
            call_id = minted_call_id(position, call.index) if minted else provider_id
            used.add(call_id)  # type: ignore[arg-type]
            opened.append((call.index, None if minted else provider_id, call.call.recorded_name))
            call_rows.append({
                "session_id": sid, "position": position, "call_index": call.index,
                "call_id": call_id, "id_minted": minted, "raw_name": call.call.recorded_name,
                "wire_json": call.wire_json, "arguments_status": call.status,
                "arguments_error": call.error,
                "arguments": (_nul_safe_arguments(call.arguments, call.call.arguments_text)
                              if postgres else call.arguments),
                "extras_json": call.extras_json, "source": call.call.source,
                "wire_version": WIRE_VERSION,
            })
        linker.add_calls(position, opened)
        for res in enc.results:
            ref = linker.link(res.result.call_id, res.result.name)
            result_rows.append({
                "session_id": sid, "position": position, "result_index": res.index,
                "call_id": res.result.call_id,
                "call_position": ref[0] if ref else None, "call_index": ref[1] if ref else None,
                "is_error": res.result.is_error, "name": res.result.name,
                "content_json": res.content_json, "extras_json": res.extras_json,
                "source": res.result.source,
            })
        stored.append(StoredMessage(position, message, key, created_at))
    conn.execute(insert(messages), message_rows)
    if call_rows:
        conn.execute(insert(tool_calls), call_rows)
    if result_rows:
        conn.execute(insert(tool_results), result_rows)
    conn.execute(
        update(sessions).where(sessions.c.session_id == sid)
        .values(next_position=next_position + len(batch), updated_at=now)
    )
    return AppendResult(sid, tuple(stored), tuple(skipped), created)


def _linker_for(conn: Connection, sid: str,
                batch: Sequence[tuple[int, Message, str | None, EncodedMessage]]) -> CallLinker:
    """A linker primed with the stored calls that this batch's results may refer to."""
    needs_ids: set[str] = set()
    needs_position = False
    for _, _, _, enc in batch:
        if enc.calls:
            break  # results after the batch's first calls pair within the batch first
        for res in enc.results:
            if res.result.call_id:
                needs_ids.add(res.result.call_id)
            else:
                needs_position = True
    ids_in_batch = {c.call.id for _, _, _, enc in batch for c in enc.calls if c.call.id}
    needs_ids.update(
        r.result.call_id for _, _, _, enc in batch for r in enc.results
        if r.result.call_id and r.result.call_id not in ids_in_batch
    )
    prior_ids: dict[str, CallRef] = {}
    ids = sorted(needs_ids)
    for start in range(0, len(ids), _IN_CHUNK):
        rows = conn.execute(
            select(tool_calls.c.call_id, tool_calls.c.position, tool_calls.c.call_index)
            .where(and_(tool_calls.c.session_id == sid, tool_calls.c.id_minted.is_(False),
                        tool_calls.c.call_id.in_(ids[start:start + _IN_CHUNK])))
            .order_by(tool_calls.c.position, tool_calls.c.call_index)
        ).all()
        for call_id, pos, idx in rows:
            prior_ids[call_id] = (pos, idx)  # ordered: the latest wins
    prior_open: list[tuple[CallRef, str]] = []
    answered: list[CallRef] = []
    if needs_position or needs_ids:
        last = conn.execute(
            select(func.max(tool_calls.c.position)).where(tool_calls.c.session_id == sid)
        ).scalar_one()
        if last is not None:
            rows = conn.execute(
                select(tool_calls.c.position, tool_calls.c.call_index, tool_calls.c.raw_name)
                .where(and_(tool_calls.c.session_id == sid, tool_calls.c.position == last))
                .order_by(tool_calls.c.call_index)
            ).all()
            prior_open = [((p, i), n) for p, i, n in rows]
            answered = [
                (p, i) for p, i in conn.execute(
                    select(tool_results.c.call_position, tool_results.c.call_index)
                    .where(and_(tool_results.c.session_id == sid,
                                tool_results.c.call_position == last))
                ).all()
            ]
    return CallLinker(prior_ids, prior_open, answered)
