"""The transparency log on the database (persistence; revision 0018, docs/trust.md).

One RFC 9162 tree per store (``log_leaves``): its leaves are every stored message and every
trust event (tombstone, hold, release), in the order the log took them, each the salted
commitment of :mod:`store.tlog.bundle`. A message's entry names its chained digest
(``messages.digest``, :mod:`store.trust.chain`), so its leaf commits to its canonical content.

* **Off the append path**: appends write no leaf (their round trips are unchanged). The log
  is caught up from a watermark, ``sessions.logged_position`` (``ix_sessions_log_behind``
  lists the lagging sessions), by :func:`catch_up`: the lagging sessions in id order, each
  one's new messages in position order, a chunk of sessions per transaction, under the lock
  of the ``log_state`` row (one appender at a time on both backends; SQLite's write lock is
  held from ``BEGIN IMMEDIATE``). Every log command catches up first; a read-only store
  answers with the log as it stands.
* **Events** (:func:`log_event`) are appended in the transaction that makes them, after
  catching up every message committed before (so the order is the order things happened to
  the log): ``erase``/``delete``/``prune``/``truncate`` write their tombstone's leaf and
  clear the salt and entry of the messages removed (:func:`forget`); the leaf hashes stay,
  so every proof still verifies while the erased content can no longer be confirmed.
* **Heads and proofs** are computed from the stored leaf hashes on demand (one read of
  ``leaf_hash`` in index order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, and_, func, insert, select, update

from store.core.errors import LogProofError
from store.db.index.reads import short_reads
from store.db.schema.distribute import is_citus
from store.db.schema.tables import log_leaves, log_state, messages, sessions
from store.tlog.bundle import entry_leaf, message_entry, new_salt
from store.tlog.merkle import root_hash
from store.tlog.note import Checkpoint

__all__ = [
    "LOG_CHUNK",
    "Leaf",
    "TreeHead",
    "all_leaves",
    "catch_up",
    "catch_up_chunk",
    "check_log",
    "find_leaf",
    "forget",
    "leaf_hashes",
    "log_event",
    "lock_log",
    "log_origin",
    "prepare_removal",
    "tree_head",
]

#: Sessions caught up per transaction.
LOG_CHUNK = 200

_LAGGING = ("SELECT session_id, logged_position, next_position FROM sessions "
            "WHERE next_position > logged_position ORDER BY session_id")


@dataclass(frozen=True, slots=True)
class TreeHead:
    """The log's origin, size and root hash (what a checkpoint signs)."""

    origin: str
    size: int
    root: bytes


@dataclass(frozen=True, slots=True)
class Leaf:
    index: int
    leaf_hash: bytes
    kind: str
    subject: str
    position: int | None
    salt: bytes | None
    entry: bytes | None


def log_origin(conn: Connection, *, lock: bool = False) -> str:
    """The checkpoints' origin; ``lock``: take the log's lock (the ``log_state`` row) for the
    rest of the transaction."""
    query = select(log_state.c.origin).where(log_state.c.name == "log")
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    origin = conn.execute(query).scalar()
    if origin is None:
        raise LogProofError("this database has no transparency log (run `db upgrade`)")
    return str(origin)


def lock_log(conn: Connection) -> None:
    """Take the log's lock first in a transaction that will log an event (hold, release,
    erase, delete, truncate), before any session row lock: every log appender takes it
    first, so a catch-up (which locks session rows after it) cannot deadlock with them."""
    log_origin(conn, lock=True)


def _size(conn: Connection) -> int:
    top = conn.execute(select(func.max(log_leaves.c.leaf_index))).scalar()
    return 0 if top is None else int(top) + 1


def _lagging(conn: Connection, limit: int) -> list[tuple[str, int, int]]:
    pg = conn.dialect.name == "postgresql"
    citus = pg and is_citus(conn)
    lock = " FOR UPDATE" if pg and not citus else ""
    rows = conn.exec_driver_sql(f"{_LAGGING} LIMIT {int(limit)}{lock}").all()
    if citus:  # Citus locks rows only in a statement routed to one shard
        locked = []
        for sid, _, _ in rows:
            row = conn.exec_driver_sql(
                "SELECT session_id, logged_position, next_position FROM sessions "
                "WHERE session_id = %(sid)s FOR UPDATE", {"sid": sid}).first()
            if row is not None and row[2] > row[1]:
                locked.append(row)
        rows = locked
    return [(str(s), int(a), int(b)) for s, a, b in rows]


def catch_up_chunk(conn: Connection, *, locked: bool = False) -> tuple[int, int]:
    """Log the new messages of a chunk of lagging sessions, in the caller's transaction;
    returns (sessions, leaves) it caught up ((0, 0): the log is caught up)."""
    if not locked:
        log_origin(conn, lock=True)
    chunk = _lagging(conn, LOG_CHUNK)
    if not chunk:
        return 0, 0
    index = _size(conn)
    now = datetime.now(UTC)
    rows: list[dict[str, Any]] = []
    for sid, start, stop in chunk:
        for pos, digest in conn.execute(
                select(messages.c.position, messages.c.digest)
                .where(and_(messages.c.session_id == sid, messages.c.position >= start,
                            messages.c.position < stop))
                .order_by(messages.c.position)):
            entry = message_entry(sid, int(pos), str(digest))
            salt = new_salt()
            rows.append({"leaf_index": index, "leaf_hash": entry_leaf(salt, entry),
                         "kind": "message", "subject": sid, "position": int(pos),
                         "salt": salt, "entry": entry.decode(), "logged_at": now})
            index += 1
        conn.execute(update(sessions).where(sessions.c.session_id == sid)
                     .values(logged_position=stop))
    if rows:
        conn.execute(insert(log_leaves), rows)
    return len(chunk), len(rows)


def _catch_up_all(conn: Connection) -> None:
    """Every lagging message logged, in the caller's transaction (the lock taken)."""
    log_origin(conn, lock=True)
    while catch_up_chunk(conn, locked=True)[0]:
        pass


def catch_up(write: Callable[[Callable[[Connection], Any]], Any], read_conn: Connection
             ) -> int:
    """Log every committed message not logged yet, a chunk of sessions per transaction run
    through ``write`` (the store's retrying write transaction); returns the leaves added.
    ``read_conn`` only says whether anything lags (one index probe, its transaction ended
    before the chunks are written: ``store/db/index/reads.py``)."""
    with short_reads(read_conn):
        if not read_conn.exec_driver_sql(_LAGGING + " LIMIT 1").first():
            return 0
    total = 0
    while True:
        sessions_done, leaves = write(catch_up_chunk)
        if not sessions_done:
            return total
        total += leaves


def log_event(conn: Connection, kind: str, subject: str, position: int | None,
              entry: bytes, *, caught_up: bool = False) -> int:
    """Append one event's leaf (in the caller's transaction) after every message committed
    before it; returns its index."""
    if not caught_up:
        _catch_up_all(conn)
    index = _size(conn)
    salt = new_salt()
    conn.execute(insert(log_leaves).values(
        leaf_index=index, leaf_hash=entry_leaf(salt, entry), kind=kind, subject=subject,
        position=position, salt=salt, entry=entry.decode(), logged_at=datetime.now(UTC)))
    return index


def prepare_removal(conn: Connection) -> None:
    """Before messages are removed (in the caller's transaction): log every message committed
    so far, so that what is removed was logged first."""
    _catch_up_all(conn)


def forget(conn: Connection, subject: str, start: int = 0) -> int:
    """Clear the salt and entry of the message leaves of ``subject`` from ``start`` on (their
    content was removed); the leaf hashes stay. Returns how many."""
    done = conn.execute(update(log_leaves).where(and_(
        log_leaves.c.subject == subject, log_leaves.c.kind == "message",
        log_leaves.c.position >= start, log_leaves.c.salt.is_not(None)))
        .values(salt=None, entry=None))
    conn.execute(update(sessions).where(and_(sessions.c.session_id == subject,
                                             sessions.c.logged_position > start))
                 .values(logged_position=start))
    return int(done.rowcount or 0)


def leaf_hashes(conn: Connection) -> list[bytes]:
    """Every leaf hash in index order; raise when the indexes are not 0..n-1 (a leaf removed
    or inserted by hand: no head can be computed)."""
    out: list[bytes] = []
    for index, value in conn.execute(select(log_leaves.c.leaf_index, log_leaves.c.leaf_hash)
                                     .order_by(log_leaves.c.leaf_index)):
        if index != len(out):
            raise LogProofError(f"the log's leaf {len(out)} is missing (the next stored one "
                                f"is {index}): leaves were removed or renumbered")
        out.append(bytes(value))
    return out


def tree_head(conn: Connection, hashes: Sequence[bytes] | None = None) -> TreeHead:
    hashes = leaf_hashes(conn) if hashes is None else hashes
    return TreeHead(log_origin(conn), len(hashes), root_hash(hashes))


def _leaf(row: Any) -> Leaf:
    index, value, kind, subject, position, salt, entry = row
    return Leaf(int(index), bytes(value), kind, subject,
                None if position is None else int(position),
                None if salt is None else bytes(salt),
                None if entry is None else entry.encode())


_LEAF_COLUMNS = (log_leaves.c.leaf_index, log_leaves.c.leaf_hash, log_leaves.c.kind,
                 log_leaves.c.subject, log_leaves.c.position, log_leaves.c.salt,
                 log_leaves.c.entry)


def find_leaf(conn: Connection, subject: str, position: int | None = None) -> Leaf | None:
    """The leaf of ``subject``'s message at ``position`` (the live one, else the latest
    erased one); without a position, the latest leaf about ``subject`` (its last message, or
    the tombstone that removed it)."""
    query = select(*_LEAF_COLUMNS).where(log_leaves.c.subject == subject)
    if position is not None:
        query = query.where(and_(log_leaves.c.kind == "message",
                                 log_leaves.c.position == position)).order_by(
            log_leaves.c.salt.is_(None), log_leaves.c.leaf_index.desc())
    else:
        query = query.order_by(log_leaves.c.leaf_index.desc())
    row = conn.execute(query.limit(1)).first()
    return None if row is None else _leaf(row)


def all_leaves(conn: Connection) -> list[Leaf]:
    return [_leaf(r) for r in conn.execute(select(*_LEAF_COLUMNS)
                                           .order_by(log_leaves.c.leaf_index))]


def check_log(conn: Connection, checkpoint: Checkpoint | None = None
              ) -> list[tuple[str | None, int | None, str]]:
    """Problems (session, position, detail) of the log as stored: leaves missing or
    renumbered, a leaf that no longer matches its salted entry, a logged message whose content
    changed or that is gone without a tombstone, and (with an auditor's ``checkpoint``, its
    signature already checked) a log that no longer extends it. Reads only."""
    problems: list[tuple[str | None, int | None, str]] = []
    leaves = all_leaves(conn)
    for i, leaf in enumerate(leaves):
        if leaf.index != i:
            problems.append((None, None, f"the log's leaf {i} is missing (the next stored one "
                                         f"is {leaf.index}): leaves removed or renumbered"))
            return problems
    live: dict[tuple[str, int], Leaf] = {}
    removed: dict[str, list[tuple[int, int]]] = {}  # subject -> (tombstone leaf, first pos)
    for leaf in leaves:
        if leaf.kind == "tombstone":
            removed.setdefault(leaf.subject, []).append((leaf.index, leaf.position or 0))
    for leaf in leaves:
        if (leaf.salt is None) != (leaf.entry is None):
            problems.append((leaf.subject, leaf.position,
                             f"log leaf {leaf.index} has a salt without an entry"))
        elif leaf.salt is not None and leaf.entry is not None \
                and entry_leaf(leaf.salt, leaf.entry) != leaf.leaf_hash:
            problems.append((leaf.subject, leaf.position,
                             f"log leaf {leaf.index} no longer matches its entry"))
        if leaf.kind == "message" and leaf.position is not None:
            if leaf.salt is None:
                if not any(t > leaf.index and start <= leaf.position
                           for t, start in removed.get(leaf.subject, [])):
                    problems.append((leaf.subject, leaf.position,
                                     f"log leaf {leaf.index}'s content was cleared with no "
                                     "tombstone after it"))
            elif (leaf.subject, leaf.position) in live:
                problems.append((leaf.subject, leaf.position,
                                 f"the message is logged twice (leaves "
                                 f"{live[(leaf.subject, leaf.position)].index} and "
                                 f"{leaf.index})"))
            else:
                live[(leaf.subject, leaf.position)] = leaf
    for sid, pos, digest, logged in conn.execute(
            select(messages.c.session_id, messages.c.position, messages.c.digest,
                   sessions.c.logged_position)
            .join(sessions, sessions.c.session_id == messages.c.session_id)):
        found = live.pop((sid, int(pos)), None)
        if int(pos) >= int(logged):
            if found is not None:
                problems.append((sid, int(pos), "a message past the log's watermark is "
                                                "logged"))
            continue
        if found is None:
            problems.append((sid, int(pos), "the message is not in the log"))
        elif found.entry != message_entry(sid, int(pos), str(digest)):
            problems.append((sid, int(pos), f"the message differs from its log leaf "
                                            f"{found.index}"))
    for (sid, pos), gone in sorted(live.items()):
        problems.append((sid, pos, f"log leaf {gone.index}'s message is gone without a "
                                   "tombstone"))
    if checkpoint is not None:
        origin = log_origin(conn)
        hashes = [leaf.leaf_hash for leaf in leaves]
        if checkpoint.origin != origin:
            problems.append((None, None, f"the checkpoint is of log {checkpoint.origin!r}, "
                                         f"this store's is {origin!r}"))
        elif checkpoint.size > len(hashes):
            problems.append((None, None, f"the checkpoint covers {checkpoint.size} leaves, "
                                         f"the log has {len(hashes)} (rolled back)"))
        elif root_hash(hashes, checkpoint.size) != checkpoint.root:
            problems.append((None, None, f"the log's first {checkpoint.size} leaves no longer "
                                         "hash to the checkpoint's root: the history it "
                                         "covered was rewritten"))
    return problems
