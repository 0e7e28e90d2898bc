"""The chains on the database: recompute a session's digests from its rows, read the head,
record it, and check a recorded head (persistence; reads only, but for :func:`record_head`).

The digest rule itself is domain (:mod:`store.trust.chain`); the writer computes the same
digests inside the append transaction (``store/db/writing/writer.py``), revision 0011 computed them
for the messages stored before it, and :mod:`store.db.proofs.verify` calls :func:`check_chain`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, insert, select

from store.db.packing import unpacked
from store.db.schema.tables import (
    chain_heads,
    messages,
    sessions,
    tombstones,
    tool_calls,
    tool_results,
)
from store.db.schema.wiretext import wire_column
from store.trust.chain import (
    GENESIS,
    HeadEntry,
    canonical_time,
    head_body,
    head_digest,
    message_digest,
    parse_head,
    parse_head_body,
)

__all__ = ["ChainCheck", "check_chain", "check_head", "current_head", "recompute",
           "record_head", "session_digests"]


def _contents(conn: Connection, sid: str
              ) -> Iterator[tuple[int, tuple[Any, ...], list[Any], list[Any], str | None]]:
    """(position, message content, calls, results, stored digest) of every message of
    ``sid`` in position order, in the canonical form of :func:`message_digest`."""
    calls: dict[int, list[Any]] = {}
    for row in conn.execute(
        select(tool_calls.c.position, tool_calls.c.call_index, tool_calls.c.call_id,
               tool_calls.c.id_minted, tool_calls.c.raw_name,
               wire_column(tool_calls, conn.dialect.name == "postgresql"),
               tool_calls.c.arguments_status, tool_calls.c.arguments_error,
               tool_calls.c.extras_json, tool_calls.c.source, tool_calls.c.wire_version)
        .where(tool_calls.c.session_id == sid)
        .order_by(tool_calls.c.position, tool_calls.c.call_index)
    ):
        pos, idx, cid, minted, *rest = row
        calls.setdefault(pos, []).append((idx, cid, bool(minted), *rest))
    results: dict[int, list[Any]] = {}
    for row in conn.execute(
        select(tool_results.c.position, tool_results.c.result_index, tool_results.c.call_id,
               tool_results.c.call_position, tool_results.c.call_index,
               tool_results.c.is_error, tool_results.c.name, tool_results.c.content_json,
               tool_results.c.extras_json, tool_results.c.source)
        .where(tool_results.c.session_id == sid)
        .order_by(tool_results.c.position, tool_results.c.result_index)
    ):
        pos, idx, cid, cpos, cidx, is_error, *rest = row
        results.setdefault(pos, []).append((idx, cid, cpos, cidx, bool(is_error), *rest))
    for row in conn.execute(
        select(messages.c.position, messages.c.message_key, messages.c.message_id,
               messages.c.role, messages.c.source, messages.c.text, messages.c.parts_json,
               messages.c.extras_json, messages.c.metadata_json, messages.c.created_at,
               messages.c.digest)
        .where(messages.c.session_id == sid).order_by(messages.c.position)
    ):
        pos, *fields, created, digest = row
        fields[6], fields[7] = unpacked(fields[6]), unpacked(fields[7])  # (extras, metadata)
        yield (int(pos), (*fields, canonical_time(created)), calls.get(pos, []),
               results.get(pos, []), digest)


def recompute(conn: Connection, sid: str) -> list[tuple[int, str]]:
    """(position, digest) of every stored message of ``sid`` as its rows are now (revision
    0011 stores these for the messages written before it)."""
    chain = GENESIS
    out = []
    for pos, content, calls, results, _ in _contents(conn, sid):
        chain = message_digest(chain, pos, content, calls, results)
        out.append((pos, chain))
    return out


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """A session's chain as recomputed: the digests, and the first position that no longer
    matches what is stored (None when all match), with why."""

    digests: list[str]
    first_bad: int | None = None
    detail: str = ""


def check_chain(conn: Connection, sid: str, chain_digest: str | None,
                next_position: int) -> ChainCheck:
    """Recompute the chain of ``sid`` and compare it with the stored digests and the
    session's chain head (``sessions.chain_digest``)."""
    chain = GENESIS
    digests: list[str] = []
    for expected, (pos, content, calls, results, stored) in enumerate(_contents(conn, sid)):
        if pos != expected:
            return ChainCheck(digests, expected,
                              f"message {expected} is missing (the next stored one is {pos})")
        chain = message_digest(chain, pos, content, calls, results)
        if stored != chain:
            return ChainCheck(digests, pos, "the stored content no longer matches its digest"
                              if stored else "the message has no digest")
        digests.append(chain)
    count = len(digests)
    if (chain_digest or None) != (digests[-1] if digests else None):
        return ChainCheck(digests, count,
                          "the session's chain head does not match its last message "
                          "(messages removed from its end, or the head edited)")
    if next_position != count:
        return ChainCheck(digests, min(count, next_position),
                          f"the session says {next_position} messages, {count} are chained")
    return ChainCheck(digests)


def _entries(conn: Connection) -> list[HeadEntry]:
    out = [HeadEntry("session", sid, int(n), digest) for sid, n, digest in conn.execute(
        select(sessions.c.session_id, sessions.c.next_position, sessions.c.chain_digest))]
    out += [HeadEntry(kind, sid, int(n), digest, canonical_time(at), int(start))
            for sid, at, start, kind, n, digest in conn.execute(
                select(tombstones.c.session_id, tombstones.c.erased_at,
                       tombstones.c.start_position, tombstones.c.kind, tombstones.c.messages,
                       tombstones.c.digest))]
    return out


def current_head(conn: Connection) -> tuple[str, bytes]:
    """The head of the database as it is now, and its listing."""
    body = head_body(_entries(conn))
    return head_digest(body), body


def record_head(conn: Connection) -> str:
    """Compute the head and keep its listing (``chain_heads``), in the caller's transaction;
    the same head twice is kept once."""
    head, body = current_head(conn)
    known = conn.execute(select(chain_heads.c.head).where(chain_heads.c.head == head)).first()
    if known is None:
        conn.execute(insert(chain_heads).values(head=head, recorded_at=datetime.now(UTC),
                                                body=body.decode("utf-8")))
    return head


def session_digests(conn: Connection, sid: str) -> dict[int, str]:
    """The stored digest of each position of ``sid``."""
    return {int(p): d for p, d in conn.execute(
        select(messages.c.position, messages.c.digest).where(messages.c.session_id == sid))}


def check_head(conn: Connection, head: str, chains: dict[str, ChainCheck]
               ) -> list[tuple[str | None, int | None, str]]:
    """Problems (session, position, detail) that prove ``head`` is not an ancestor of the
    database as it is: its record missing or altered, a session it covered gone without a
    tombstone, shorter than it was (rolled back) or holding another prefix. ``chains`` are
    the recomputed chains of the live sessions (from :func:`check_chain`)."""
    parsed = parse_head(head)
    if parsed is None:
        return [(None, None, f"{head!r} is not a head printed by `transcript-store db head`")]
    row = conn.execute(select(chain_heads.c.body).where(chain_heads.c.head == head.strip())
                       ).first()
    if row is None:
        return [(None, None, "this head is not recorded in the database: its record was "
                             "removed, or it comes from another store")]
    body = row[0].encode("utf-8")
    if head_digest(body) != head.strip():
        return [(None, None, "the recorded listing of this head was altered")]
    now = {(e.kind, e.session_id, e.at, e.start) for e in _entries(conn)
           if e.kind != "session"}
    removed: dict[str, list[HeadEntry]] = {}
    for e in _entries(conn):
        if e.kind != "session":
            removed.setdefault(e.session_id, []).append(e)
    problems: list[tuple[str | None, int | None, str]] = []
    for entry in parse_head_body(body):
        sid = entry.session_id
        if entry.kind != "session":
            if (entry.kind, sid, entry.at, entry.start) not in now:
                problems.append((sid, None, f"a {entry.kind} tombstone of the head is gone"))
            continue
        if entry.length == 0:
            continue
        check = chains.get(sid)
        later = [t for t in removed.get(sid, []) if t.start < entry.length]
        if check is None:
            if not later:
                problems.append((sid, None, f"the session ({entry.length} messages at the "
                                            "head) is gone and no tombstone says why"))
            continue
        have = check.digests
        if len(have) >= entry.length and have[entry.length - 1] == entry.digest:
            continue
        if later:
            continue  # removed since, with a tombstone (erase, delete, truncate)
        if len(have) < entry.length and check.first_bad is None:
            problems.append((sid, len(have), f"the session had {entry.length} messages at the "
                                             f"head, it has {len(have)} (rolled back)"))
        else:
            problems.append((sid, entry.length - 1, "the message at this position differs "
                                                    "from the one the head covered"))
    return problems


