"""A write transaction on PostgreSQL in two round trips (persistence layer).

A committed append needs the session's state before it can write (its next position and
chain digest, the keys already stored, the calls its results answer), so it cannot be one
statement; but it need not be a round trip per statement. :class:`Flight` stands in for the
driver cursor of a write transaction: statements are bound on the client (psycopg's
``ClientCursor.mogrify``: the driver's own quoting, so values are never spliced by hand) and
queued; reading a result sends everything queued as **one** simple-query message, whose
result sets come back together. ``BEGIN`` goes with the first flight and ``COMMIT`` with the
last, on a connection switched to autocommit for the transaction (so that psycopg sends no
``BEGIN`` of its own). An append is then: the reads (BEGIN, session upsert, key probe, call
lookup), then the writes (the inserts as multi-row ``VALUES``, the session update, COMMIT).
Many rows for one table (a bulk append: an import's file, a batch) go as ``COPY ... FROM
STDIN`` instead, after what is queued: the driver formats the rows in C and the server parses
no statement, where binding each row on the client costs ~10 us (a 12-value ``messages``
row). A COPY costs two round trips of its own, so it is used from as many rows as binding
them would cost more than those two round trips on this connection's link
(:func:`copy_from`: the round trip is timed once per connection, the first time it decides):
from :data:`COPY_MIN_ROWS` rows to a server on the same machine (~0.1 ms), from hundreds over
a network, where a bulk append stays two round trips. From :data:`MANY_ROWS` rows an insert
the link's round trip keeps from COPY goes through the driver's ``executemany`` (server-side
parameters, one pipelined flight): binding thousands of values on the client costs more than
the round trip saved.

A statement that fails stops the message there and aborts the transaction (PostgreSQL runs
the rest of a simple-query message only while no statement failed); the caller rolls back.
Whether ``COMMIT`` was sent is kept (:attr:`Flight.commit_sent`): a connection lost before it
was sent committed nothing and the transaction may run again; after, it may have committed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from store.core.pairing import CallRef
from store.db.writing.prior import Prepared

__all__ = ["COPY_MIN_ROWS", "GUARD", "MANY_ROWS", "REMEMBERED_CALLS", "ROW_BIND_SECONDS",
           "STALE_SQLSTATES", "Committed", "Flight", "LostFlight", "SessionState", "StaleState",
           "copy_from", "one_flight", "split_values"]

#: Queued statement text that is sent before more is queued (bytes of SQL): a bulk append of
#: large messages goes in several flights rather than one message of unbounded size.
FLIGHT_BYTES = 8 * 1024 * 1024
#: Rows from which an insert goes through the driver's executemany instead (a bulk append:
#: throughput over round trips) when the link's round trip keeps it from COPY.
MANY_ROWS = 500
#: The fewest rows an insert sends as COPY, however short the round trip (below, the
#: statement and the COPY's own start cost about what binding the rows does).
COPY_MIN_ROWS = 16
#: What binding one row on the client costs (psycopg's ``mogrify`` of a 12-value
#: ``messages`` row: 10-11 us measured), against which a COPY's two round trips are weighed.
ROW_BIND_SECONDS = 10e-6
#: Where a connection's pool record keeps the rows from which its inserts go as COPY.
_COPY_FROM = "transcript_store_copy_from"


def copy_from(round_trip: float) -> int:
    """The rows from which an insert is sent as COPY over a link whose round trip takes
    ``round_trip`` seconds: as many as cost more to bind than two round trips."""
    return max(COPY_MIN_ROWS, math.ceil(2 * round_trip / ROW_BIND_SECONDS))


class Flight:
    """A cursor-like queue of statements for one transaction on a psycopg connection."""

    def __init__(self, dbapi: Any, info: MutableMapping[str, Any] | None = None) -> None:
        """``info``: the pool's record of the connection (where the link's COPY threshold
        is kept between transactions; without it, it is timed for this one)."""
        import psycopg

        self._dbapi = dbapi
        self._info: MutableMapping[str, Any] = {} if info is None else info
        dbapi.autocommit = True
        self._client = psycopg.ClientCursor(dbapi)
        self._queued: list[str] = []
        self._queued_bytes = 0
        #: Result sets of the statements sent, by statement number (None: no rows).
        self._results: dict[int, list[tuple[Any, ...]] | None] = {}
        self._sent = 0  # statements sent so far
        self._sent_count = 0  # statements queued since
        self._last = -1  # the statement ``fetchone`` / ``fetchall`` answer for
        self.commit_sent = False
        #: Set by a one-flight append (writer.write_append): its transaction rests on what
        #: the store remembered of the session.
        self.optimistic = False
        self._queue("BEGIN")

    # -- the cursor methods the writers use -----------------------------------------------

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._last = self.queue(sql, params)

    def queue(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Queue a statement; its number, for :meth:`rows`."""
        return self._queue(self._client.mogrify(sql, params) if params else sql)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """An ``INSERT ... VALUES (...)`` for each row, queued as multi-row ``VALUES`` (many
        rows: as COPY or the driver's executemany after what is queued, see the module
        docstring); any other statement once per row (in the same flight)."""
        mogrify = self._client.mogrify
        split = split_values(sql)
        if split is None:
            for row in rows:
                self.execute(sql, row)
            return
        rows = list(rows)
        # (the link is timed only for an insert that COPY could take)
        if len(rows) >= COPY_MIN_ROWS and len(rows) >= self._copy_from():
            self.send()  # (what is queued goes first)
            self._copy(split[0], rows)
            return
        if len(rows) >= MANY_ROWS:
            # Binding every value on the client costs more than the round trip it saves:
            # the driver's own executemany (server-side parameters, one pipelined flight)
            # after what is queued.
            self.send()
            cursor = self._dbapi.cursor()
            try:
                cursor.executemany(sql, rows)
            finally:
                cursor.close()
            return
        head, values = split
        groups = [mogrify(values, row) for row in rows]
        if groups:
            self._last = self._queue(head + ", ".join(groups))

    def fetchone(self) -> tuple[Any, ...] | None:
        rows = self.rows(self._last)
        return rows[0] if rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows(self._last)

    def close(self) -> None:
        self._client.close()

    # -- COPY -------------------------------------------------------------------------------

    def _copy_from(self) -> int:
        """This connection's COPY threshold (:func:`copy_from`), its round trip timed the
        first time (the quicker of two ``SELECT 1``, sent outside the queue: what they
        return is nothing the transaction reads)."""
        known = self._info.get(_COPY_FROM)
        if known is None:
            quickest = math.inf
            for _ in range(2):
                started = time.perf_counter()
                self._client.execute("SELECT 1")
                quickest = min(quickest, time.perf_counter() - started)
            known = self._info[_COPY_FROM] = copy_from(quickest)
        return int(known)

    def _copy(self, head: str, rows: list[Sequence[Any]]) -> None:
        """The rows of the plain insert whose ``INSERT INTO t (...) VALUES `` is ``head``, as
        ``COPY t (...) FROM STDIN`` (the same columns, values and types: the server reads
        each value with the column's own input function, as the insert's casts do)."""
        target = head[len("INSERT INTO "):-len(" VALUES ")]
        cursor = self._dbapi.cursor()
        try:
            with cursor.copy(f"COPY {target} FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        finally:
            cursor.close()

    # -- flights ----------------------------------------------------------------------------

    def rows(self, number: int) -> list[tuple[Any, ...]]:
        """The rows of statement ``number`` (sending what is queued when it was not sent)."""
        if number >= self._sent:
            self.send()
        return self._results.get(number) or []

    def commit(self) -> None:
        """Queue ``COMMIT`` and send the last flight."""
        self._queue("COMMIT")
        self.commit_sent = True
        self.send()

    def send(self) -> None:
        """Send every queued statement as one message and keep each one's result set."""
        if not self._queued:
            return
        text, self._queued, self._queued_bytes = "; ".join(self._queued), [], 0
        first = self._sent
        count = self._sent_count
        cursor = self._client
        cursor.execute(text)  # no parameters: the text is sent as it is
        number = first
        while True:
            self._results[number] = cursor.fetchall() if cursor.description else None
            number += 1
            if not cursor.nextset():
                break
        self._sent = first + count
        self._sent_count = 0

    def _queue(self, statement: str) -> int:
        if self._queued_bytes + len(statement) > FLIGHT_BYTES and self._queued:
            self.send()
        self._queued.append(statement)
        self._queued_bytes += len(statement)
        self._sent_count += 1
        return self._sent + self._sent_count - 1

    def finish(self) -> None:
        """Give the connection back as it was lent (not in autocommit)."""
        self.close()
        self._dbapi.autocommit = False


def split_values(sql: str) -> tuple[str, str] | None:
    """``INSERT INTO t (...) VALUES `` and the ``(%s, ...)`` group of a plain compiled insert
    (``None`` for any other statement)."""
    at = sql.find(" VALUES (")
    if not sql.startswith("INSERT INTO ") or at < 0 or not sql.endswith(")") or (
            ") " in sql[at + 8:]):
        return None
    return sql[:at + 8], sql[at + 8:]


# -- one-flight appends (store.db.writing.writer.write_append) ------------------------------


#: Provider call ids a session's state keeps (the latest): a result answers a recent call; one
#: naming an older call reads the stored calls, the usual way.
REMEMBERED_CALLS = 256


@dataclass(slots=True)
class SessionState:
    """What a store knows of a session from its own last append (PostgreSQL): the next
    position, the chain head, and the provider call ids it stored (id -> the latest call that
    used it), so that the next append can go in one flight (:func:`write_append`)."""

    next_position: int
    chain: str | None
    calls: dict[str, CallRef]


class StaleState(Exception):  # noqa: N818 (an internal signal, not an error for callers)
    """The one-flight append found the session other than remembered (another writer, a key
    already stored, a call removed): nothing was applied; append the usual way."""


class LostFlight(Exception):  # noqa: N818 (an internal signal)
    """The connection died after COMMIT was sent (any append path: one flight, two, or a bulk
    append): the reply that says whether it committed was lost. The caller runs the append
    again, telling it the last message's position and chained digest (a digest no other
    content can have): the new transaction reads it after the session row's lock, which the
    lost transaction held until it ended, and so knows whether that one committed."""


class Committed(Exception):  # noqa: N818 (an internal signal)
    """An append run again after :class:`LostFlight` found the lost attempt's last message
    stored with its chained digest: that attempt committed; this one applies nothing."""


#: SQLSTATEs by which a one-flight append learns that what it remembered is stale: the guard's
#: division by zero (no session row as remembered), a key already stored, a call gone.
STALE_SQLSTATES = frozenset({"22012", "23505", "23503"})


def one_flight(prepared: Prepared, known: SessionState) -> bool:
    """Whether the append can use ``known`` instead of reading: it has a message (an empty
    append reads, so that it recreates a session removed meanwhile: nothing else would
    check the remembered state); every result names a call of the append (made before it)
    or one remembered; no id holds NUL or U+FFFD (stored altered on PostgreSQL)."""
    if not prepared:
        return False
    made: set[str] = set()
    for _, _, enc in prepared:
        for call in enc.calls:
            if call.call.id:
                made.add(call.call.id)
        for res in enc.results:
            call_id = res.result.call_id
            if (not call_id or "\x00" in call_id or "\ufffd" in call_id
                    or (call_id not in made and call_id not in known.calls)):
                return False
    return True


#: The one-flight append's guard (PostgreSQL): the session row moved on only if it is as
#: remembered; when it is not, ``1 / 0`` fails the whole transaction before any write. It also
#: widens the session's own activity to the append's (revision 0016; LEAST and GREATEST
#: skip NULL).
GUARD = (
    "WITH moved AS (UPDATE sessions SET next_position = %s, chain_digest = %s, "
    "updated_at = %s, started_at = LEAST(started_at, %s), "
    "last_activity_at = GREATEST(last_activity_at, %s) "
    "WHERE session_id = %s AND next_position = %s "
    "AND chain_digest IS NOT DISTINCT FROM %s RETURNING 1) "
    "SELECT 1 / count(*) FROM moved")
