"""A second baseline for ``bench/storage.py``: the raw driver on a **plain schema of its own**.

The raw baseline of ``storage_raw.py`` does the store's logical work on the store's own
tables (canonical wire text, argument status and parsed copy, results linked to calls by id,
every extras and metadata column), so its ratio measures our code on our schema. A user's own
code, as an outside harness writes it, keeps much less: one row per message (its content as
JSON text), one row per tool call (name and argument text) and builds dictionaries on load,
parsing the arguments. Against that baseline the store pays for everything its schema holds
that the plain one does not (links, statuses, provenance, the audit B-trees): the gap between
the two ratios is that cost, and this module makes the benchmark show it.

Schema (both backends)::

    plain_sessions (id PRIMARY KEY, created_at, updated_at)
    plain_messages (session_id, seq, key, role, content, tool_call_id, created_at,
                    PRIMARY KEY (session_id, seq), UNIQUE (session_id, key))
    plain_calls    (session_id, seq, idx, call_id, name, arguments,
                    PRIMARY KEY (session_id, seq, idx)) + an index on name

An append is one transaction: the session upserted, the next sequence number read under the
session's row lock (PostgreSQL) or the write lock (SQLite), keys already stored skipped (the
same idempotency as the store's), messages and calls by ``executemany``. A load reads the
session's messages and calls in one snapshot and rebuilds each message as a dictionary, every
argument text parsed by orjson.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import psycopg
from storage_raw_backends import sqlite_read, sqlite_write

SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS plain_sessions (
    id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS plain_messages (
    session_id TEXT NOT NULL REFERENCES plain_sessions (id), seq INTEGER NOT NULL,
    key TEXT, role TEXT NOT NULL, content TEXT, tool_call_id TEXT, created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, seq), UNIQUE (session_id, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS plain_calls (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL, call_id TEXT,
    name TEXT NOT NULL, arguments TEXT NOT NULL,
    PRIMARY KEY (session_id, seq, idx),
    FOREIGN KEY (session_id, seq) REFERENCES plain_messages (session_id, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS plain_calls_name ON plain_calls (name);
"""

POSTGRES_SCHEMA = """
CREATE TABLE IF NOT EXISTS plain_sessions (
    id text PRIMARY KEY, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS plain_messages (
    session_id text NOT NULL REFERENCES plain_sessions (id), seq integer NOT NULL,
    key text, role text NOT NULL, content text, tool_call_id text,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, seq), UNIQUE (session_id, key));
CREATE TABLE IF NOT EXISTS plain_calls (
    session_id text NOT NULL, seq integer NOT NULL, idx integer NOT NULL, call_id text,
    name text NOT NULL, arguments text NOT NULL,
    PRIMARY KEY (session_id, seq, idx),
    FOREIGN KEY (session_id, seq) REFERENCES plain_messages (session_id, seq));
CREATE INDEX IF NOT EXISTS plain_calls_name ON plain_calls (name);
"""


def _rows(sid: str, start: int, records: Sequence[dict[str, Any]], keys: Sequence[str],
          now: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    messages: list[tuple[Any, ...]] = []
    calls: list[tuple[Any, ...]] = []
    dumps = orjson.dumps
    for seq, (record, key) in enumerate(zip(records, keys, strict=True), start):
        content = record.get("content")
        messages.append((sid, seq, key, record["role"],
                         None if content is None else dumps(content).decode(),
                         record.get("tool_call_id"), now))
        for idx, call in enumerate(record.get("tool_calls") or ()):
            function = call["function"]
            calls.append((sid, seq, idx, call.get("id"), function["name"],
                          function["arguments"]))
    return messages, calls


def _message(role: str, content: str | None, tool_call_id: str | None,
             calls: list[dict[str, Any]] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role,
                           "content": None if content is None else orjson.loads(content)}
    if tool_call_id is not None:
        out["tool_call_id"] = tool_call_id
    if calls:
        out["tool_calls"] = calls
    return out


class PlainSide:
    """The plain-schema baseline as the benchmark drives a peer: append, load, close."""

    label = "raw, plain schema"
    conn: Any

    def append(self, sid: str, records: Sequence[dict[str, Any]],
               keys: Sequence[str] | None = None) -> int:
        """Store the records not stored yet (by key); returns how many were stored."""
        keys = list(keys) if keys is not None else [None] * len(records)  # type: ignore[list-item]
        with self._write() as run:
            now = self._now()
            run(self.UPSERT_SESSION, (sid, now, now))
            (start,) = run(self.NEXT_SEQ, (sid,)).fetchone()
            wanted = [k for k in keys if k is not None]
            seen = self._stored_keys(run, sid, wanted) if wanted else set()
            if seen:
                pairs = [(r, k) for r, k in zip(records, keys, strict=True) if k not in seen]
                records, keys = [r for r, _ in pairs], [k for _, k in pairs]
            if not records:
                return 0
            messages, calls = _rows(sid, start, records, keys, now)
            self._many(self.INSERT_MESSAGE, messages)
            if calls:
                self._many(self.INSERT_CALL, calls)
        return len(messages)

    def load(self, sid: str) -> list[dict[str, Any]]:
        with self._read() as run:
            messages = run(self.SELECT_MESSAGES, (sid,)).fetchall()
            calls = run(self.SELECT_CALLS, (sid,)).fetchall()
        by_seq: dict[int, list[dict[str, Any]]] = {}
        loads = orjson.loads
        for seq, call_id, name, arguments in calls:
            try:
                parsed: Any = loads(arguments)
            except orjson.JSONDecodeError:
                parsed = None
            by_seq.setdefault(seq, []).append(
                {"id": call_id, "name": name, "arguments": parsed})
        return [_message(role, content, tool_call_id, by_seq.get(seq))
                for seq, role, content, tool_call_id in messages]

    # -- per backend ------------------------------------------------------------------------

    UPSERT_SESSION = ("INSERT INTO plain_sessions VALUES (?, ?, ?) ON CONFLICT (id) "
                      "DO UPDATE SET updated_at = excluded.updated_at")
    NEXT_SEQ = "SELECT coalesce(max(seq) + 1, 0) FROM plain_messages WHERE session_id = ?"
    INSERT_MESSAGE = "INSERT INTO plain_messages VALUES (?, ?, ?, ?, ?, ?, ?)"
    INSERT_CALL = "INSERT INTO plain_calls VALUES (?, ?, ?, ?, ?, ?)"
    SELECT_MESSAGES = ("SELECT seq, role, content, tool_call_id FROM plain_messages "
                       "WHERE session_id = ? ORDER BY seq")
    SELECT_CALLS = ("SELECT seq, call_id, name, arguments FROM plain_calls "
                    "WHERE session_id = ? ORDER BY seq, idx")

    def _now(self) -> Any:
        raise NotImplementedError

    def _write(self) -> Any:
        raise NotImplementedError

    _read = _write

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def _stored_keys(self, run: Any, sid: str, keys: list[str]) -> set[str]:
        raise NotImplementedError

    def close(self) -> None:
        self.conn.close()


class PlainSQLite(PlainSide):
    """``sqlite3`` with the store's pragmas (WAL, synchronous=NORMAL), ``BEGIN IMMEDIATE``."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                    timeout=30.0)
        for pragma in ("foreign_keys=ON", "busy_timeout=30000", "journal_mode=WAL",
                       "synchronous=NORMAL"):
            self.conn.execute(f"PRAGMA {pragma}")
        if create:
            self.conn.executescript("BEGIN;" + SQLITE_SCHEMA + "COMMIT;")

    def _now(self) -> str:
        return datetime.now(UTC).isoformat()

    @contextmanager
    def _write(self) -> Iterator[Any]:
        with sqlite_write(self.conn):
            yield self.conn.execute

    @contextmanager
    def _read(self) -> Iterator[Any]:
        with sqlite_read(self.conn):
            yield self.conn.execute

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self.conn.executemany(sql, rows)

    def _stored_keys(self, run: Any, sid: str, keys: list[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            marks = ", ".join("?" * len(chunk))
            found.update(k for (k,) in run(
                f"SELECT key FROM plain_messages WHERE session_id = ? AND key IN ({marks})",
                (sid, *chunk)))
        return found


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


class PlainPostgres(PlainSide):
    """psycopg 3, autocommit with explicit transactions, the session row locked for the
    sequence number; ``executemany`` pipelines."""

    UPSERT_SESSION = _pg(PlainSide.UPSERT_SESSION)
    NEXT_SEQ = ("SELECT coalesce((SELECT max(seq) + 1 FROM plain_messages WHERE session_id = "
                "s.id), 0) FROM plain_sessions s WHERE s.id = %s FOR UPDATE")
    INSERT_MESSAGE = _pg(PlainSide.INSERT_MESSAGE)
    INSERT_CALL = _pg(PlainSide.INSERT_CALL)
    SELECT_MESSAGES = _pg(PlainSide.SELECT_MESSAGES)
    SELECT_CALLS = _pg(PlainSide.SELECT_CALLS)

    def __init__(self, dsn: str, *, create: bool = True) -> None:
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.cur = self.conn.cursor()
        if create:
            with self.conn.transaction():
                self.cur.execute(POSTGRES_SCHEMA.encode())

    def _now(self) -> datetime:
        return datetime.now(UTC)

    @contextmanager
    def _write(self) -> Iterator[Any]:
        with self.conn.transaction():
            yield self.cur.execute

    @contextmanager
    def _read(self) -> Iterator[Any]:
        with self.conn.transaction():
            self.cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield self.cur.execute

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self.cur.executemany(sql, rows)

    def _stored_keys(self, run: Any, sid: str, keys: list[str]) -> set[str]:
        return {k for (k,) in run("SELECT key FROM plain_messages WHERE session_id = %s "
                                  "AND key = ANY(%s)", (sid, keys))}
