"""Chained message digests and the head over all sessions (domain; stdlib + orjson only).

**A message's digest** is SHA-256 over the previous message's digest (the session's genesis
for position 0) and the canonical content of the message as stored: its position, its row
(key, id, role, source, text, parts, extras, metadata, time), its calls' rows (everything but
the queryable copy of the arguments, which ``verify`` checks against the wire text) and its
results' rows (content and link). Editing any of those, or removing, inserting or reordering a
message, changes the digest of that position and of every one after it.

The genesis does not name the session, so that a fork (a copy of a prefix into a new session)
keeps valid digests; a session's identity is bound by the head instead.

**The head** is SHA-256 over the canonical listing of every live session (id, length, the
digest of its last message) and every tombstone (id, kind, when, first position removed,
count, digest of what was removed), one JSON array per line, sorted. It is printed as
``tsh1-<sessions>-<messages>-<hex>``; the listing itself is kept by the store (the
``chain_heads`` table) so that ``verify --head`` can later prove that every session the head
covered still holds the same prefix (or was removed with a tombstone).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

__all__ = [
    "GENESIS",
    "HEAD_PREFIX",
    "HeadEntry",
    "ParsedHead",
    "canonical_time",
    "head_body",
    "head_digest",
    "message_digest",
    "parse_head",
    "parse_head_body",
]

#: The digest a session's chain starts from (position 0 chains to it).
GENESIS = hashlib.sha256(b"transcript-store chain v1").hexdigest()
HEAD_PREFIX = "tsh1"
_HEAD = re.compile(r"^tsh1-(\d+)-(\d+)-([0-9a-f]{64})$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def canonical_time(value: datetime) -> int:
    """A stored time as integer microseconds since the epoch (UTC; naive means UTC): the
    same value whichever backend stored it (both keep microseconds)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _encode(content: list[Any]) -> bytes:
    try:
        return orjson.dumps(content)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate (SQLite can store one)
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode()


def message_digest(previous: str, position: int, message: Sequence[Any],
                   calls: Sequence[Sequence[Any]], results: Sequence[Sequence[Any]]) -> str:
    """The chained digest of the message at ``position``.

    ``message``: (message_key, message_id, role, source, text, parts_json, extras_json,
    metadata_json, created_at as :func:`canonical_time`); ``calls``: per call, in index
    order, (call_index, call_id, id_minted, raw_name, wire_json, arguments_status,
    arguments_error, extras_json, source, wire_version); ``results``: per result, in index
    order, (result_index, call_id, call_position, call_index, is_error, name, content_json,
    extras_json, source). Booleans as ``bool``; values exactly as stored."""
    h = hashlib.sha256(previous.encode("ascii"))
    h.update(_encode([position, message, calls, results]))
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class HeadEntry:
    """One line of a head: a live session (``kind`` "session") or a tombstone."""

    kind: str
    session_id: str
    length: int
    digest: str | None
    #: tombstones only: when (canonical time), and the first position removed
    at: int = 0
    start: int = 0

    def line(self) -> bytes:
        if self.kind == "session":
            return _encode(["session", self.session_id, self.length, self.digest])
        return _encode([self.kind, self.session_id, self.at, self.start, self.length,
                        self.digest])


def head_body(entries: Iterable[HeadEntry]) -> bytes:
    """The canonical listing a head is the digest of (sorted, one JSON array per line)."""
    return b"".join(sorted(e.line() + b"\n" for e in entries))


def parse_head_body(body: bytes) -> list[HeadEntry]:
    out = []
    for line in body.splitlines():
        item = orjson.loads(line)
        if item[0] == "session":
            out.append(HeadEntry("session", item[1], int(item[2]), item[3]))
        else:
            out.append(HeadEntry(item[0], item[1], int(item[4]), item[5], int(item[2]),
                                 int(item[3])))
    return out


def head_digest(body: bytes) -> str:
    """The printed head of a listing: ``tsh1-<sessions>-<messages>-<sha256>``."""
    entries = parse_head_body(body)
    live = [e for e in entries if e.kind == "session"]
    return (f"{HEAD_PREFIX}-{len(live)}-{sum(e.length for e in live)}-"
            f"{hashlib.sha256(body).hexdigest()}")


@dataclass(frozen=True, slots=True)
class ParsedHead:
    sessions: int
    messages: int
    digest: str


def parse_head(text: str) -> ParsedHead | None:
    """A printed head's parts, or None when ``text`` is not one."""
    found = _HEAD.match(text.strip())
    if found is None:
        return None
    return ParsedHead(int(found[1]), int(found[2]), found[3])
