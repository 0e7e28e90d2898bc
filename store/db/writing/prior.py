"""What an append reads before it writes (persistence layer): on PostgreSQL in one flight
(:func:`postgres_reads`), and the stored calls its results may answer (:func:`linker_for`,
the one pairing rule of :mod:`store.core.pairing` primed with them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from store.core.model import Message
from store.core.pairing import TURN_ROLES, CallRef, Pairing
from store.db.writing.compiled import Statements
from store.records.codec import EncodedMessage

__all__ = ["IN_CHUNK", "Prepared", "linker_for", "nul_safe_text", "params", "postgres_reads"]

#: An append after :func:`store.db.writing.writer.prepare_append`: each message, its key (a client
#: key, an implicit provider-id key, or none) and its encoded rows. Defined here, below both
#: the writer and :mod:`store.db.writing.flight`, so that neither imports the other's module.
Prepared = list[tuple[Message, str | None, EncodedMessage]]

#: Bound parameters per IN (...) list, below SQLite's limit.
IN_CHUNK = 500


def nul_safe_text(value: str) -> str:
    """PostgreSQL refuses NUL in text: the display-text column (a derived copy; the exact text
    stays in ``parts_json``, where JSON escapes it) gets U+FFFD instead."""
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def params(names: tuple[str, ...], values: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(values[name] for name in names)


#: The chained digest stored at a position (an append run again after a lost COMMIT).
_DIGEST_AT = "SELECT digest FROM messages WHERE session_id = %s AND position = %s"


def postgres_reads(cursor: Any, st: Statements, sid: str, session_values: Mapping[str, Any],
                    wanted: list[str], prepared: Prepared,
                    lost: tuple[int, str] | None = None,
                    ) -> tuple[tuple[Any, ...], list[str], list[tuple[Any, ...]], bool]:
    """The reads an append needs before it can write, sent in one flight
    (:class:`~store.db.writing.flight.Flight`): the session upsert (locking the row), the probe of
    the keys already stored, and the stored calls that any result of the append names (a
    superset of what :func:`_linker_for` asks for: which messages are skipped is not known
    yet). ``lost``: the position and chained digest of the last message of an attempt whose
    COMMIT reply was lost; the last value says whether it is stored (read after the upsert,
    so after that attempt's transaction ended: it held the row, or the new row's key)."""
    upsert = cursor.queue(st.upsert_session.sql,
                          params(st.upsert_session.names, session_values))
    check = cursor.queue(_DIGEST_AT, (sid, lost[0])) if lost is not None else None
    probe = cursor.queue(st.existing_keys_probe, (wanted, sid)) if wanted else None
    named = sorted({nul_safe_text(r.result.call_id) for _, _, enc in prepared
                    for r in enc.results if r.result.call_id})
    lookups = [cursor.queue(st.expand(st.prior_ids, "ids", len(chunk)), (sid, *chunk))
               for chunk in (named[i:i + IN_CHUNK] for i in range(0, len(named), IN_CHUNK))]
    session = cursor.rows(upsert)[0]
    found = [row[0] for row in cursor.rows(probe)] if probe is not None else []
    prior = [row for lookup in lookups for row in cursor.rows(lookup)]
    committed = False
    if check is not None and lost is not None:
        stored = cursor.rows(check)
        committed = bool(stored) and stored[0][0] == lost[1]
    return session, found, prior, committed


def linker_for(cursor: Any, st: Statements, sid: str,
                batch: Sequence[tuple[int, Message, str | None, EncodedMessage]],
                prefetched: list[tuple[Any, ...]] | None = None) -> Pairing:
    """The one pairing rule (:mod:`store.core.pairing`) primed with the stored calls that this
    batch's results may refer to.

    Ids are looked up only for results that name a call not made in the batch; the most
    recent calling message (for pairing by position) is read only when a result before the
    batch's first call has no id, and only while no new turn has begun since that message.
    """
    ids_in_batch: set[str] = set()
    needs_ids: set[str] = set()
    needs_position = False
    calls_seen = False
    for _, message, _, enc in batch:
        if not calls_seen and message.role in TURN_ROLES and not enc.results:
            calls_seen = True  # a new turn: id-less results cannot reach stored calls
        if enc.calls:  # the writer links a message's results after its own calls
            calls_seen = True
            ids_in_batch.update(c.call.id for c in enc.calls if c.call.id)
        for res in enc.results:
            call_id = res.result.call_id
            if not call_id:
                needs_position = needs_position or not calls_seen
            elif call_id not in ids_in_batch:
                needs_ids.add(call_id)
    prior_ids: dict[str, list[CallRef]] = {}
    # On PostgreSQL the call_id column holds NUL as U+FFFD: look ids up that way.
    exact = {(nul_safe_text(i) if st.postgres else i): i for i in needs_ids}
    ids = sorted(exact)
    fetched: list[tuple[Any, ...]] = []
    if prefetched is not None:  # read with the session upsert (a superset, in id chunks)
        fetched = sorted((r for r in prefetched if r[0] in exact), key=lambda r: (r[1], r[2]))
    else:
        for start in range(0, len(ids), IN_CHUNK):
            chunk = ids[start:start + IN_CHUNK]
            cursor.execute(st.expand(st.prior_ids, "ids", len(chunk)), (sid, *chunk))
            fetched += cursor.fetchall()
    for call_id, pos, idx in fetched:  # ordered by position (per chunk when chunked)
        refs = prior_ids.setdefault(exact.get(call_id, call_id), [])
        if refs and refs[0][0] != pos:
            refs.clear()  # the latest message that used the id wins
        refs.append((pos, idx))
    prior_open: list[tuple[CallRef, tuple[str, ...], bool]] = []
    answered: set[CallRef] = set()
    if needs_position or len(prior_ids) < len(needs_ids):
        cursor.execute(st.last_calls.sql, (sid, sid))
        prior_open = [((p, i), (n,), minted) for p, i, n, minted in cursor.fetchall()]
        if prior_open:
            cursor.execute(st.turn_begun.sql, params(st.turn_begun.names, {
                "sid": sid, "position": prior_open[0][0][0]}))
            if cursor.fetchone()[0] is not None:
                prior_open = []  # a user turn since: id-less results are orphans
    # Which of those calls are answered matters only where there is a choice: an id that
    # several calls of one message share, or pairing by position.
    choices = [r for refs in prior_ids.values() if len(refs) > 1 for r in refs]
    for position in sorted({p for p, _ in [*choices, *(r for r, _, _ in prior_open)]}):
        cursor.execute(st.answered.sql, (sid, position))
        answered.update((p, i) for p, i in cursor.fetchall())
    return Pairing(prior_ids, prior_open, answered)
