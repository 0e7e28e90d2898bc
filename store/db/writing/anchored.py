"""A contended append on PostgreSQL in one flight, placed by the server (persistence layer).

While another process appends to the same session, what a store remembers of it (the next
position, the chain head) is stale at almost every append: the one-flight append's guard fails
(a flight lost) and the append runs again reading first (two more). Here the flight does not
rest on the remembered position. It locks the session row, and every position and chained
digest it writes is an expression over the row as it is then: positions ``next_position + k``;
each digest SHA-256 over the previous one (the session's chain head, or the message the flight
inserted just before) and the message's canonical content (:mod:`store.trust.chain`), whose JSON
the client makes in pieces around the positions in it (the message's own, a result's call
position when the call is in the append): spliced with the positions as text, the same bytes as
:func:`~store.trust.chain.message_digest` hashes. The flight's last statement moves the session
row on and returns it; :meth:`Anchor.resolve` then shifts the append's result and remembered
calls to the positions the server gave.

Used only where it is exact and safe to run again: every message has a key (an append run again
after a lost COMMIT reply is then idempotent: its keys are found), no call id is minted (a
minted id holds its position), every text encodes with orjson (no lone surrogate: the chain's
fallback encoding differs), not on Citus (subqueries in a distributed INSERT's values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from store.core.pairing import CallRef
from store.core.transcript import AppendResult, StoredMessage
from store.db.writing.compiled import Statements
from store.db.writing.flight import SessionState, split_values
from store.trust.chain import GENESIS

__all__ = ["Anchor", "DigestInput", "queue_anchored"]

#: What :func:`~store.trust.chain.message_digest` hashes of a message besides its position and
#: the previous digest: its row, its calls' rows, its results' rows (as the writer passes them).
DigestInput = tuple[Sequence[Any], Sequence[Sequence[Any]], Sequence[Sequence[Any]]]

#: A piece of a message's canonical JSON: literal text, or a position as an offset from the
#: session's next position when the flight runs.
_Piece = str | int

#: Bytes of statement text past which an append is not worth sending twice (its content goes in
#: the rows and again in the digest's pieces): the guarded flight is used instead.
MAX_ANCHORED_BYTES = 256 * 1024

_POSITION = "(SELECT next_position + {k} FROM sessions WHERE session_id = %s)"


@dataclass(slots=True)
class Anchor(SessionState):
    """The state an anchored append leaves, known once its flight committed: the returned row
    (statement ``number`` of ``flight``) gives the real positions of its ``count`` messages
    (``next_position`` is the one assumed)."""

    flight: Any = None
    number: int = 0
    count: int = 0

    def resolve(self, result: AppendResult) -> tuple[AppendResult, SessionState]:
        """The append's result and the session's state at the positions the server gave."""
        (after, chain), = self.flight.rows(self.number)
        shift = after - self.next_position
        if not shift:
            return result, SessionState(after, chain, self.calls)
        base = self.next_position - self.count  # (the append's calls are from it on)
        calls = {cid: ((pos + shift, idx) if pos >= base else (pos, idx))
                 for cid, (pos, idx) in self.calls.items()}
        stored = tuple(StoredMessage(m.position + shift, m.message, m.key, m.created_at)
                       for m in result.stored)
        return replace(result, stored=stored), SessionState(after, chain, calls)


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _pieces(offset: int, content: DigestInput, base: int) -> list[_Piece]:
    """The canonical JSON of a message (``[position, row, calls, results]``, as
    ``store.trust.chain`` encodes it) in pieces around its positions."""
    row, calls, results = content
    out: list[_Piece] = ["[", offset, f",{_dumps(row)},{_dumps(calls)},["]
    for number, res in enumerate(results):
        # (result_index, call_id, call_position, call_index, is_error, name, content, ...)
        out.append(("," if number else "") + "[" + _dumps(list(res[:2]))[1:-1] + ",")
        call_position = res[2]
        if call_position is not None and call_position >= base:
            out.append(call_position - base)
        else:
            out.append(_dumps(call_position))
        out.append("," + _dumps(list(res[3:]))[1:-1] + "]")
    out.append("]]")
    merged: list[_Piece] = []
    for piece in out:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged


def _digest_sql(pieces: list[_Piece], previous: str, params: list[Any]) -> str:
    """SQL for SHA-256 over ``previous`` (an SQL expression) and the pieces, positions as
    ``s.next_position + offset`` (``s``: the session row)."""
    terms = [previous]
    for piece in pieces:
        if isinstance(piece, str):
            terms.append("%s")
            params.append(piece)
        else:
            terms.append(f"(s.next_position + {piece})::text")
    return f"encode(sha256(convert_to({' || '.join(terms)}, 'UTF8')), 'hex')"


def _values(group: str, row: Sequence[Any], replaced: dict[int, tuple[str, list[Any]]],
            params: list[Any]) -> str:
    """A ``(...)`` values group of a compiled insert with some placeholders replaced by SQL
    expressions (each with its own parameters)."""
    parts = group.split("%s")
    out = [parts[0]]
    for column, value in enumerate(row):
        expression = replaced.get(column)
        if expression is None:
            out.append("%s")
            params.append(value)
        else:
            out.append(expression[0])
            params.extend(expression[1])
        out.append(parts[column + 1])
    return "".join(out)


def _split(sql: str) -> tuple[str, str]:
    split = split_values(sql)
    assert split is not None  # (a compiled plain insert)
    return split


def queue_anchored(cursor: Any, st: Statements, sid: str, base: int,
                   message_rows: Sequence[Sequence[Any]], call_rows: Sequence[Sequence[Any]],
                   result_rows: Sequence[Sequence[Any]], contents: Sequence[DigestInput],
                   session: tuple[Any, Any, Any], named: dict[str, CallRef],
                   calls: dict[str, CallRef]) -> Anchor | None:
    """Queue the append on ``cursor`` (a :class:`~store.db.writing.flight.Flight`) placed by
    the server, or ``None`` (nothing queued) where it would not be exact (see the module
    docstring). The rows hold the positions the client assumed (from ``base``); ``session``:
    (now, first, last) for the session row; ``named``: the remembered calls the append's
    results answer (the flight fails if the session has a later call under such an id);
    ``calls``: the calls remembered after the append (at assumed positions)."""
    if any(row[2] is None for row in message_rows) or any(row[4] for row in call_rows):
        return None  # a message without a key, a minted call id
    try:
        pieces = [_pieces(row[1] - base, content, base)
                  for row, content in zip(message_rows, contents, strict=True)]
    except TypeError:  # a lone surrogate: the chain encodes it otherwise
        return None
    size = sum(len(p) for ps in pieces for p in ps if isinstance(p, str))
    if size > MAX_ANCHORED_BYTES:
        return None
    count = len(message_rows)
    # The lock, and the guard: the session exists, no later call took a remembered id.
    guard = ("SELECT 1 / ((SELECT count(*) FROM (SELECT 1 FROM sessions WHERE session_id = %s "
             "FOR UPDATE) AS locked)")
    guard_params: list[Any] = [sid]
    if named:
        later = " OR ".join(["(call_id = %s AND position > %s)"] * len(named))
        guard += (" * (NOT EXISTS (SELECT 1 FROM tool_calls WHERE session_id = %s AND ("
                  f"{later})))::int")
        guard_params.append(sid)
        for cid, (position, _) in sorted(named.items()):
            guard_params += (cid, position)
    cursor.queue(guard + ")", guard_params)
    head, group = _split(st.insert_messages.sql)
    for row, message_pieces in zip(message_rows, pieces, strict=True):
        k = row[1] - base
        params: list[Any] = []
        previous = ("coalesce(s.chain_digest, %s)" if k == 0 else
                    f"(SELECT m.digest FROM messages m WHERE m.session_id = s.session_id "
                    f"AND m.position = s.next_position + {k - 1})")
        digest_params: list[Any] = [GENESIS] if k == 0 else []
        digest = _digest_sql(message_pieces, previous, digest_params)
        values = _values(group, row, {
            1: (_POSITION.format(k=k), [sid]),
            11: (f"(SELECT {digest} FROM sessions s WHERE s.session_id = %s)",
                 [*digest_params, sid]),
        }, params)
        cursor.queue(head + values, params)
    for sql, rows, linked in ((st.insert_calls.sql, call_rows, False),
                              (st.insert_results.sql, result_rows, True)):
        if not rows:
            continue
        head, group = _split(sql)
        params = []
        groups = []
        for row in rows:
            replaced = {1: (_POSITION.format(k=row[1] - base), [sid])}
            if linked and row[4] is not None and row[4] >= base:  # a call of this append
                replaced[4] = (_POSITION.format(k=row[4] - base), [sid])
            groups.append(_values(group, row, replaced, params))
        cursor.queue(head + ", ".join(groups), params)
    now, first, last = session
    number = cursor.queue(
        "UPDATE sessions SET next_position = next_position + %s, chain_digest = (SELECT "
        "m.digest FROM messages m WHERE m.session_id = sessions.session_id AND m.position = "
        "sessions.next_position + %s), updated_at = %s, started_at = LEAST(started_at, %s), "
        "last_activity_at = GREATEST(last_activity_at, %s) WHERE session_id = %s "
        "RETURNING next_position, chain_digest",
        (count, count - 1, now, first, last, sid))
    return Anchor(base + count, None, calls, cursor, number, count)
