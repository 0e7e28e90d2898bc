"""Erasure, legal holds, retention and heads on the database (persistence layer).

* **Erase** (:meth:`TrustMixin.erase`): in one transaction per call, every named session is
  checked (it exists, it is not held), a tombstone is written (session, when, kind, how
  many messages, the chain digest of the last one, why, who) and its session row is
  deleted, which cascades to every row it owns (messages, calls, results, argument views,
  search text, tool definitions, holds; on SQLite triggers take each text out of the
  external-content FTS5 index, revision 0023). Then the bytes:
  on SQLite the transaction runs with ``secure_delete`` (freed space is zeroed), the FTS5
  index is merged into one segment (``optimize``: old segments that held the text are freed)
  and the WAL is checkpointed and truncated after the commit; on PostgreSQL the rows are
  gone from what any query or ``pg_dump`` sees (dead tuples stay in the heap until vacuum
  reuses the space: see docs/operations.md).
* **Delete** (``delete_session``) is the same without the byte scrub: a tombstone (kind
  ``delete``), the rows and index entries gone, refused on a held session.
* **Truncate** leaves a tombstone (kind ``truncate``) for the messages it removes and moves
  the session's chain head back (``store/db/sessions.py``).
* **Holds** (``session_holds``): a held session cannot be erased, deleted or pruned
  (:class:`~store.core.errors.SessionHeldError`).
* **Prune** erases the sessions whose own last activity (``last_activity_at``, revision 0016:
  their last message's recorded time, not when they were imported) is before a time,
  optionally of one agent, held ones left alone; :meth:`TrustMixin.apply_retention` applies
  a :class:`~store.trust.retention.RetentionPolicy` (the hook ``watch`` calls).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, and_, delete, func, insert, or_, select, update

from store.core.errors import SessionHeldError, SessionNotFound, UsageError
from store.core.transcript import CallHit
from store.db.base import StoreBase, reads_once
from store.db.index.message_index import MESSAGE_FTS, has_message_index
from store.db.index.search_index import (
    SEARCH_FTS,
    catch_up,
    has_search_index,
    lagging,
)
from store.db.index.secrets import calls_with_secret, secrets_summary
from store.db.proofs.chains import record_head
from store.db.proofs.tlog import (
    forget,
    leaf_hashes,
    lock_log,
    log_event,
    log_origin,
    prepare_removal,
)
from store.db.schema.tables import messages, session_holds, sessions, tombstones, tool_calls
from store.db.schema.wiretext import wire_sql
from store.records.searchtext import call_search_text, result_search_text
from store.tlog.bundle import hold_entry, release_entry, tombstone_entry
from store.tlog.merkle import root_hash
from store.tlog.note import Checkpoint
from store.trust.chain import canonical_time
from store.trust.retention import ErasureReceipt, RetentionPolicy, format_duration
from store.trust.secrets import index_text

__all__ = ["Hold", "Tombstone", "TrustMixin", "remove_session", "truncated"]


@dataclass(frozen=True, slots=True)
class Hold:
    session_id: str
    reason: str
    held_at: datetime
    actor: str | None


@dataclass(frozen=True, slots=True)
class Tombstone:
    """What a tombstone says: a session (or its end, from ``start_position``) was removed."""

    session_id: str
    kind: str
    erased_at: datetime
    start_position: int
    messages: int
    digest: str | None
    reason: str | None
    actor: str | None


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def remove_session(conn: Connection, sid: str, *, kind: str, reason: str | None,
                   actor: str | None, now: datetime) -> ErasureReceipt:
    """Remove one session in the caller's transaction, leaving its tombstone (the session
    row locked first; refused when it is held)."""
    prepare_removal(conn)  # the log's lock first; every message committed so far a leaf
    row = conn.execute(select(sessions.c.next_position, sessions.c.chain_digest)
                       .where(sessions.c.session_id == sid).with_for_update()).first()
    if row is None:
        raise SessionNotFound(sid)
    held = conn.execute(select(session_holds.c.reason)
                        .where(session_holds.c.session_id == sid)).first()
    if held is not None:
        raise SessionHeldError(sid, held[0])
    count, digest = int(row[0]), row[1]
    conn.execute(insert(tombstones).values(
        session_id=sid, erased_at=now, start_position=0, kind=kind, messages=count,
        digest=digest, reason=reason, actor=actor))
    leaf = log_event(conn, "tombstone", sid, 0, tombstone_entry(
        kind, sid, canonical_time(now), 0, count, digest), caught_up=True)
    forget(conn, sid)
    conn.execute(delete(sessions).where(sessions.c.session_id == sid))
    return ErasureReceipt(sid, kind, now, reason, actor, count, digest, log_leaf=leaf)


def _checkpoint_text(conn: Connection) -> str:
    hashes = leaf_hashes(conn)
    return Checkpoint(log_origin(conn), len(hashes), root_hash(hashes)).text()


def truncated(conn: Connection, sid: str, position: int, length: int, old_digest: str | None,
              now: datetime) -> None:
    """After a truncate removed the messages from ``position`` on (in the caller's
    transaction, which logged every message before removing them: ``prepare_removal``): the
    tombstone of what went, its leaf, and the session's chain head moved back."""
    conn.execute(insert(tombstones).values(
        session_id=sid, erased_at=now, start_position=position, kind="truncate",
        messages=length - position, digest=old_digest, reason=None, actor=None))
    log_event(conn, "tombstone", sid, position, tombstone_entry(
        "truncate", sid, canonical_time(now), position, length - position, old_digest),
        caught_up=True)
    forget(conn, sid, position)
    last = None
    if position > 0:
        last = conn.execute(select(messages.c.digest).where(and_(
            messages.c.session_id == sid, messages.c.position == position - 1))).scalar()
    conn.execute(update(sessions).where(sessions.c.session_id == sid)
                 .values(chain_digest=last))


class TrustMixin(StoreBase):
    """Heads, erasure, holds and retention (see the module docstring)."""

    def _catch_up_index(self) -> None:
        """Bring the search index up to date first (a read-only store cannot: its readers
        scan what is not indexed yet)."""
        if not self.read_only:
            with self._engine.connect() as conn:
                catch_up(self._retrying, conn)

    def record_head(self) -> str:
        """The head over every session and tombstone as stored now (``tsh1-...``), its
        listing kept in the store so that ``verify(head=...)`` can check it later. Print it
        and keep it elsewhere (a ticket, a log, a signature)."""
        with self._write() as conn:
            return record_head(conn)

    def erase(self, session_ids: Iterable[str], *, reason: str, actor: str | None = None,
              kind: str = "erase") -> list[ErasureReceipt]:
        """Erase sessions for good: rows, index entries and (SQLite) the bytes of the file
        and its WAL; a tombstone stays for each. All or nothing: an unknown or held session
        raises (``SessionNotFound``, ``SessionHeldError``) and nothing is erased."""
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            raise UsageError("erase needs at least one session id")
        if not reason or not reason.strip():
            raise UsageError("erase needs a reason (it is kept in the tombstone)")
        now = datetime.now(UTC)
        sqlite = self.dialect == "sqlite"
        self._forget(ids)  # (also when it fails: the sessions may be half known)
        with self._write() as conn:
            if sqlite:
                conn.exec_driver_sql("PRAGMA secure_delete = ON")
            try:
                prepare_removal(conn)
                before = _checkpoint_text(conn)
                receipts = [remove_session(conn, sid, kind=kind, reason=reason, actor=actor,
                                           now=now) for sid in ids]
                after = _checkpoint_text(conn)
                if sqlite and has_search_index(conn):
                    conn.exec_driver_sql(
                        f"INSERT INTO {SEARCH_FTS} ({SEARCH_FTS}) VALUES ('optimize')")
                if sqlite and has_message_index(conn):  # (the message index, revision 0017)
                    conn.exec_driver_sql(
                        f"INSERT INTO {MESSAGE_FTS} ({MESSAGE_FTS}) VALUES ('optimize')")
            finally:
                if sqlite:
                    conn.exec_driver_sql("PRAGMA secure_delete = OFF")
        scrub = self._scrub()
        return [ErasureReceipt(r.session_id, r.kind, r.erased_at, r.reason, r.actor,
                               r.messages, r.digest, scrub, r.log_leaf, before, after)
                for r in receipts]

    def _scrub(self) -> tuple[str, ...]:
        """After an erasure's commit: what was done to the bytes."""
        if self.dialect != "sqlite":
            return ("rows deleted (pg_dump and queries no longer see them)",)
        done = ["secure_delete (freed pages zeroed)", "full-text index optimized"]
        with self._read() as conn:
            busy, _, _ = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").one()
        done.append("WAL checkpointed and truncated" if not busy else
                    "WAL not truncated: another connection was reading (run "
                    "`PRAGMA wal_checkpoint(TRUNCATE)` when it is done)")
        return tuple(done)

    @reads_once
    def tombstones(self, session_id: str | None = None) -> list[Tombstone]:
        """The tombstones (of one session, or all), oldest first."""
        query = select(tombstones.c.session_id, tombstones.c.kind, tombstones.c.erased_at,
                       tombstones.c.start_position, tombstones.c.messages,
                       tombstones.c.digest, tombstones.c.reason, tombstones.c.actor)
        if session_id is not None:
            query = query.where(tombstones.c.session_id == session_id)
        with self._read() as conn:
            rows = conn.execute(query.order_by(tombstones.c.erased_at,
                                               tombstones.c.session_id)).all()
        return [Tombstone(s, k, _utc(at), int(p), int(n), d, r, a)
                for s, k, at, p, n, d, r, a in rows]

    # -- holds ----------------------------------------------------------------------------------

    def hold(self, session_id: str, reason: str, *, actor: str | None = None) -> Hold:
        """Put a session under legal hold (again: the reason is replaced)."""
        if not reason or not reason.strip():
            raise UsageError("a hold needs a reason")
        now = datetime.now(UTC)
        with self._write() as conn:
            lock_log(conn)
            found = conn.execute(select(sessions.c.session_id)
                                 .where(sessions.c.session_id == session_id)).first()
            if found is None:
                raise SessionNotFound(session_id)
            conn.execute(delete(session_holds).where(session_holds.c.session_id == session_id))
            conn.execute(insert(session_holds).values(session_id=session_id, reason=reason,
                                                      held_at=now, actor=actor))
            log_event(conn, "hold", session_id, None,
                      hold_entry(session_id, canonical_time(now), reason, actor))
        return Hold(session_id, reason, now, actor)

    def release(self, session_id: str) -> bool:
        """Lift a session's hold; False when it was not held."""
        with self._write() as conn:
            lock_log(conn)
            done = conn.execute(delete(session_holds)
                                .where(session_holds.c.session_id == session_id))
            if done.rowcount:
                log_event(conn, "release", session_id, None,
                          release_entry(session_id, canonical_time(datetime.now(UTC))))
            return bool(done.rowcount)

    @reads_once
    def holds(self) -> list[Hold]:
        with self._read() as conn:
            rows = conn.execute(select(session_holds).order_by(session_holds.c.session_id))
            return [Hold(s, r, _utc(at), a) for s, r, at, a in rows]

    # -- retention ------------------------------------------------------------------------------

    @reads_once
    def prune_candidates(self, before: datetime, *, agent: str | None = None
                         ) -> list[tuple[str, int, datetime, str | None]]:
        """(session, messages, last activity, agent) of the sessions last active before
        ``before`` (of ``agent``), held ones left out."""
        held = select(session_holds.c.session_id).where(
            session_holds.c.session_id == sessions.c.session_id).exists()
        # The session's own last activity (revision 0016; ix_sessions_last_activity), never
        # when it was stored: a session from 2020 imported today is old. One without
        # activity yet (no message) by when it was stored.
        s = sessions.c
        active = func.coalesce(s.last_activity_at, s.created_at)
        query = select(s.session_id, s.next_position, active, s.agent).where(and_(
            or_(s.last_activity_at < before,
                and_(s.last_activity_at.is_(None), s.created_at < before)), ~held))
        if agent is not None:
            query = query.where(s.agent == agent)
        with self._read() as conn:
            rows = conn.execute(query.order_by(active, s.session_id)).all()
        return [(s, int(n), _utc(at), a) for s, n, at, a in rows]

    def prune(self, before: datetime, *, agent: str | None = None, reason: str | None = None,
              actor: str | None = None, dry_run: bool = False,
              skip_agents: Iterable[str] = ()) -> list[ErasureReceipt]:
        """Erase (kind ``prune``) every session last active before ``before`` (of ``agent``;
        not of ``skip_agents``) that is not held; ``dry_run`` only says which (receipts with
        an empty ``scrub``)."""
        skipped = set(skip_agents)
        found = [(s, n) for s, n, _, a in self.prune_candidates(before, agent=agent)
                 if a not in skipped]
        why = reason or f"retention: last active before {before.isoformat()}"
        if dry_run or not found:
            now = datetime.now(UTC)
            return [ErasureReceipt(s, "prune", now, why, actor, n, None) for s, n in found]
        receipts: list[ErasureReceipt] = []
        for start in range(0, len(found), 200):
            chunk: Sequence[str] = [s for s, _ in found[start:start + 200]]
            receipts += self.erase(chunk, reason=why, actor=actor, kind="prune")
        return receipts

    def apply_retention(self, policy: RetentionPolicy, *, now: datetime | None = None,
                        dry_run: bool = False) -> list[ErasureReceipt]:
        """Prune what ``policy`` says is past its time (the hook ``watch`` calls)."""
        default, agents = policy.cutoffs(now or datetime.now(UTC))
        receipts: list[ErasureReceipt] = []
        for agent, cutoff in sorted(agents.items()):
            why = (f"retention policy for {agent}: older than "
                   f"{format_duration(policy.agents[agent])} (last active before "
                   f"{cutoff.isoformat()})")
            receipts += self.prune(cutoff, agent=agent, actor="retention", dry_run=dry_run,
                                   reason=why)
        if default is not None and policy.older_than is not None:
            why = (f"retention policy: older than {format_duration(policy.older_than)} "
                   f"(last active before {default.isoformat()})")
            receipts += self.prune(default, actor="retention", dry_run=dry_run,
                                   skip_agents=agents, reason=why)
        return receipts

    # -- secrets --------------------------------------------------------------------------------

    @reads_once
    def calls_with_secret(self, value: str) -> list[CallHit]:
        """Every call whose arguments, or whose result, held ``value`` as a secret the
        detectors recognise, found through its keyed digest (``call_secrets``); the calls
        not indexed yet are scanned exactly. The value itself is never stored or indexed."""
        if not value:
            raise UsageError("calls_with_secret needs a value")
        self._catch_up_index()
        with self._read() as conn:
            keys = set(calls_with_secret(conn, value)) | _tail_with_secret(conn, value)
            table = self._alias_table_now(conn)
            out = []
            for sid, pos, idx in sorted(keys):
                row = conn.execute(select(tool_calls.c.call_id, tool_calls.c.raw_name).where(
                    tool_calls.c.session_id == sid, tool_calls.c.position == pos,
                    tool_calls.c.call_index == idx)).first()
                if row is not None:
                    out.append(CallHit(sid, pos, idx, row[0], table.resolve(row[1]), row[1]))
        return out

    @reads_once
    def secrets_summary(self) -> list[tuple[str, str, int, int]]:
        """(session, kind, secrets, calls): the secrets the detectors found per session and
        kind (after bringing the index up to date), never their values."""
        self._catch_up_index()
        with self._read() as conn:
            return secrets_summary(conn)


def _tail_with_secret(conn: Connection, value: str) -> set[tuple[str, int, int]]:
    """The calls not indexed yet whose arguments or result hold ``value`` as a secret."""
    found: set[tuple[str, int, int]] = set()
    for sid, start, _ in lagging(conn):
        for pos, idx, wire in conn.exec_driver_sql(
                _TAIL_CALLS[conn.dialect.name == "postgresql"], (sid, start)).all():
            if any(v == value for _, v in index_text(call_search_text(wire))[1]):
                found.add((sid, int(pos), int(idx)))
        for cpos, cidx, content in conn.exec_driver_sql(
                _TAIL_RESULTS[conn.dialect.name == "postgresql"], (sid, start)).all():
            if cpos is not None and any(
                    v == value for _, v in index_text(result_search_text(content))[1]):
                found.add((sid, int(cpos), int(cidx)))
    return found


_TAIL_CALLS = {False: f"SELECT position, call_index, {wire_sql(False)} FROM tool_calls "
                      "WHERE session_id = ? AND position >= ?",
               True: "SELECT position, call_index, wire_json FROM tool_calls "
                     "WHERE session_id = %s AND position >= %s"}
_TAIL_RESULTS = {False: "SELECT call_position, call_index, content_json FROM tool_results "
                        "WHERE session_id = ? AND position >= ?",
                 True: "SELECT call_position, call_index, content_json FROM tool_results "
                       "WHERE session_id = %s AND position >= %s"}
