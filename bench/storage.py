"""The store next to hand-written SQL through the raw driver and the Agents SDK sessions, same run.

Run::

    .venv/bin/python bench/storage.py [--backend sqlite|postgres|both] [--sessions 100]
        [--turns 20] [--repeat 3] [--incremental-sessions 8] [--writers 2 --writers 8]
        [--writer-appends 100] [--profile OP]
        [--pg-dsn postgresql://postgres@127.0.0.1:5432/postgres] [--fail-on-miss]

A few minutes for both backends with the defaults (3 whole runs each, medians shown).

For each backend, the workload of ``bench/workload.py`` (deterministic agent sessions in the
OpenAI Chat shape) goes through three implementations, interleaved operation by operation so
that both see the same machine state:

* **store**: ``store.TranscriptStore`` through its public API (``append``, ``load``,
  ``count_calls_by_tool``, ``find_calls``);
* **raw**: :class:`RawStore`, hand-written SQL through ``sqlite3`` / psycopg 3 on the **plain**
  normalized schema a careful hand-written store would have (the tables and columns of
  ``store/db/tables.py`` with their primary keys, the message-key unique index, the tool-name,
  call-id and result-link indexes; **no** audit index and **no** search index: a baseline that
  carries our own costs measures our code, not the limit), doing equivalent work: canonical
  wire text with orjson, argument status and parsed copy (JSON/JSONB), results linked to calls
  by id (positional fallback when an id matches nothing), session upsert and
  ``next_position`` under the row lock, the idempotency-key check, one transaction per append,
  ``executemany``; a load reads the same rows in one snapshot and rebuilds objects
  (dataclasses) with the arguments parsed by orjson; the audits read the alias table too.
  Two differences are by design: the raw side reads the OpenAI Chat shape only (the store's
  normalizer reads any provider's shape, a cost the ratio includes), and it reads the state for
  positional linking only when a result's id matches no call.
* **sdk**: the OpenAI Agents SDK's own sessions on the same records (``SQLiteSession`` on
  SQLite, as shipped: WAL, default ``synchronous``; ``SQLAlchemySession`` on PostgreSQL with
  psycopg async), one ``add_items`` per append, ``get_items`` per load, from one event loop.

**Index upkeep, and when it is paid.** The store's appends write only the transcript (plus
its audit B-trees). The search index is paid later, once, in bulk: the row "search index
catch-up" times ``update_search_index()`` over everything appended (what the first search,
the end of an ``import`` or ``transcript-store db index`` does), next to the raw side building
the same decoded-text index after its bulk load (SQLite: contentless FTS5 trigram; PostgreSQL:
a table of texts, COPY, then the pg_trgm GIN, the JSONB GIN and the audit B-trees, and
``VACUUM ANALYZE``). The audit queries then run on both indexed databases (the store's
PostgreSQL database is vacuumed too, as autovacuum would).

Operations measured (ratio = store time / raw time; targets from the issue):

==========================  ===============================================  ======
bulk append                 one ``append`` per whole session, every session  1.5x
incremental append          one message per call, committed (p50/p99 too)    2x
full-session load           every session, objects rebuilt, args parsed      2x
count calls by tool         GROUP BY raw_name over all sessions (median)     2x
find calls by substring     exact substring of the arguments, ASCII and      2x
                            non-ASCII term (median)
full text                   ``search_calls(CallQuery(text=...))`` vs the     2x
                            hand-written FTS5 / trigram query, first 50
                            calls with their first result (median)
2 and 8 writer processes    committed single appends to own sessions, wall   2x
                            time of all (``--writers N``, repeatable)
store vs SDK                every write and load scenario                    1x
==========================  ===============================================  ======

Correctness is checked too (outside the timings): the same rows in both databases (wire text,
status, links, parts), the same calls loaded (ids, names, parsed arguments), the same counts
and hits, and a re-append stores nothing. ``--profile OP`` runs the store's side of one
operation (bulk, incremental, load, count, find) once more under cProfile and prints the
hotspots. SQLite databases live in a temporary directory; on PostgreSQL two scratch databases
per run (``bench_<pid>_<run>_store``, ``bench_<pid>_<run>_raw``) are created and dropped.

Exit status: 0, or 1 when a target is missed and ``--fail-on-miss`` is given, or 2 when a
correctness check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import multiprocessing
import os
import pstats
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
import psycopg
from psycopg.types.json import Jsonb
from workload import (
    ASCII_TERM,
    NON_ASCII_TERM,
    Session,
    generate_sessions,
    stats,
)

from store import CallQuery, Transcript, TranscriptStore, search_calls
from store.searchtext import call_search_text, result_search_text
from store.vocabulary import VOCABULARY

TARGETS = {"bulk": 1.5, "incremental": 2.0, "load": 2.0, "count": 2.0, "find": 2.0}
DEFAULT_PG_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
SOURCE = "openai_chat"  # what the store's normalizer records for this shape
IN_CHUNK = 500  # bound parameters per IN (...) list on SQLite


# -- the raw baseline ---------------------------------------------------------------------------


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


@dataclass(slots=True)
class RawCall:
    id: str | None
    name: str
    raw_name: str | None
    arguments: dict[str, Any] | None
    arguments_text: str
    status: str
    error: str | None
    extras: dict[str, Any]
    source: str | None


@dataclass(slots=True)
class RawResult:
    call_id: str | None
    content: Any
    is_error: bool
    name: str | None
    extras: dict[str, Any]
    source: str | None


@dataclass(slots=True)
class RawMessage:
    position: int
    key: str | None
    role: str
    source: str | None
    parts: list[Any]
    extras: dict[str, Any]
    metadata: dict[str, Any]
    created_at: datetime


@dataclass(slots=True)
class RawSession:
    session_id: str
    title: str | None
    provider: str | None
    model: str | None
    cwd: str | None
    tags: tuple[str, ...]
    created_at: datetime
    updated_at: datetime
    next_position: int
    metadata: dict[str, Any]


@dataclass(slots=True)
class RawTranscript:
    session: RawSession
    messages: list[RawMessage]
    links: dict[tuple[int, int], tuple[int, int]]

    def calls(self) -> Iterator[RawCall]:
        for message in self.messages:
            for part in message.parts:
                if type(part) is RawCall:
                    yield part


@dataclass(slots=True)
class _Call:
    provider_id: str | None
    name: str
    wire_json: str
    status: str
    error: str | None
    arguments: dict[str, Any] | None


@dataclass(slots=True)
class _Prepared:
    role: str
    text: str
    parts_json: str
    calls: list[_Call]
    results: list[tuple[str | None, str]]  # (tool_call_id, content_json)


def _argument_status(text: str) -> tuple[str, str | None, dict[str, Any] | None]:
    """(status, error, parsed copy) of an argument text, as the store classifies it."""
    if not text.strip(" \t\n\r\f\v\x00"):
        return "empty", None, {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return "invalid_json", f"tool call arguments are not valid JSON: {exc}", None
    if type(value) is dict:
        return ("ok" if value else "empty"), None, value
    if value is None:
        return "empty", None, {}
    return "non_object_json", "tool call arguments must be a JSON object", None


def _prepare(record: dict[str, Any]) -> _Prepared:
    """Row values of one OpenAI Chat record (raises on a shape this baseline does not read)."""
    role = record["role"]
    if role == "tool":
        content = record.get("content")
        return _Prepared(role, "", '[{"type":"tool_result","index":0}]', [],
                         [(record.get("tool_call_id"), _dumps(content))])
    content = record.get("content")
    parts: list[dict[str, Any]] = []
    texts: list[str] = []
    if isinstance(content, str):
        if content:
            parts.append({"type": "text", "text": content})
            texts.append(content)
    elif content is not None:
        raise ValueError(f"the raw baseline reads text content only, got {type(content)}")
    calls: list[_Call] = []
    for index, tc in enumerate(record.get("tool_calls") or ()):
        fn = tc["function"]
        name = fn["name"]
        text = fn.get("arguments")
        if not isinstance(text, str):
            text = "{}" if text is None else _dumps(text)
        status, error, parsed = _argument_status(text)
        wire = _dumps({"id": tc.get("id"), "type": "function",
                       "function": {"name": name, "arguments": text}})
        calls.append(_Call(tc.get("id"), name, wire, status, error, parsed))
        parts.append({"type": "tool_call", "index": index})
    return _Prepared(role, "\n".join(texts), _dumps(parts), calls, [])


class RawStore:
    """Hand-written SQL on the store's schema; the dialects differ in SQL and transactions."""

    dialect = ""
    #: SQL, with ``?`` placeholders (PostgreSQL's subclass turns them into ``%s``).
    INSERT_SESSION = (
        "INSERT INTO sessions (session_id, title, provider, model, cwd, tags_json, "
        "metadata_json, created_at, updated_at, next_position) "
        "VALUES (?, NULL, NULL, NULL, NULL, '[]', '{}', ?, ?, 0) ON CONFLICT DO NOTHING"
    )
    LOCK_SESSION = "SELECT next_position FROM sessions WHERE session_id = ?"
    UPDATE_SESSION = "UPDATE sessions SET next_position = ?, updated_at = ? WHERE session_id = ?"
    INSERT_MESSAGE = (
        "INSERT INTO messages (session_id, position, message_key, role, source, text, "
        "parts_json, extras_json, metadata_json, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)"
    )
    INSERT_CALL = (
        "INSERT INTO tool_calls (session_id, position, call_index, call_id, id_minted, raw_name, "
        "wire_json, arguments_status, arguments_error, arguments, extras_json, source, "
        "wire_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, 1)"
    )
    INSERT_RESULT = (
        "INSERT INTO tool_results (session_id, position, result_index, call_id, call_position, "
        "call_index, is_error, name, content_json, extras_json, source) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, NULL, ?)"
    )
    LAST_CALL_POSITION = "SELECT max(position) FROM tool_calls WHERE session_id = ?"
    CALLS_AT = (
        "SELECT call_index, raw_name FROM tool_calls WHERE session_id = ? AND position = ? "
        "ORDER BY call_index"
    )
    ANSWERED_AT = (
        "SELECT call_index FROM tool_results WHERE session_id = ? AND call_position = ?"
    )
    SELECT_SESSION = (
        "SELECT session_id, title, provider, model, cwd, tags_json, metadata_json, created_at, "
        "updated_at, next_position FROM sessions WHERE session_id = ?"
    )
    SELECT_MESSAGES = (
        "SELECT position, message_key, role, source, parts_json, extras_json, metadata_json, "
        "created_at FROM messages WHERE session_id = ? ORDER BY position"
    )
    SELECT_CALLS = (
        "SELECT position, call_index, call_id, wire_json, arguments_status, arguments_error, "
        "extras_json, source, id_minted FROM tool_calls WHERE session_id = ? "
        "ORDER BY position, call_index"
    )
    SELECT_RESULTS = (
        "SELECT position, result_index, call_id, content_json, is_error, name, extras_json, "
        "source, call_position, call_index FROM tool_results WHERE session_id = ? "
        "ORDER BY position, result_index"
    )
    # The workload's sessions name no agent: the global rows apply.
    SELECT_ALIASES = "SELECT raw_name, current_name FROM tool_aliases WHERE agent = ''"
    COUNT_BY_TOOL = "SELECT raw_name, count(*) FROM tool_calls GROUP BY raw_name"
    FIND_CALLS = (
        "SELECT session_id, position, call_index, call_id, raw_name FROM tool_calls "
        "WHERE instr(wire_json, ?) > 0 ORDER BY session_id, position, call_index"
    )

    # -- dialect hooks --------------------------------------------------------------------------

    def _write(self) -> Any:  # a context manager yielding nothing
        raise NotImplementedError

    def _read(self) -> Any:
        raise NotImplementedError

    def _all(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _exec(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def _time(self, value: datetime) -> Any:
        return value

    def _read_time(self, value: Any) -> datetime:
        return value  # type: ignore[no-any-return]

    def _json(self, value: dict[str, Any] | None) -> Any:
        raise NotImplementedError

    def _existing_keys(self, sid: str, keys: list[str]) -> set[str]:
        raise NotImplementedError

    def _prior_ids(self, sid: str, ids: list[str]) -> list[tuple[str, int, int]]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- the work -------------------------------------------------------------------------------

    def append(self, sid: str, records: Sequence[dict[str, Any]],
               keys: Sequence[str | None]) -> tuple[list[int], list[str], bool]:
        """Store the records in one transaction: (positions stored, keys skipped, created)."""
        prepared = [_prepare(r) for r in records]  # everything that can fail, first
        now = datetime.now(UTC)
        stamp = self._time(now)
        with self._write():
            created = self._exec(self.INSERT_SESSION, (sid, stamp, stamp)) > 0
            next_position = self._all(self.LOCK_SESSION, (sid,))[0][0]
            wanted = [k for k in keys if k is not None]
            existing = self._existing_keys(sid, wanted) if wanted else set()
            skipped: list[str] = []
            batch: list[tuple[int, str | None, _Prepared]] = []
            seen: set[str] = set()
            for key, prep in zip(keys, prepared, strict=True):
                if key is not None:
                    if key in existing or key in seen:
                        skipped.append(key)
                        continue
                    seen.add(key)
                batch.append((next_position + len(batch), key, prep))
            if not batch:
                return [], skipped, created
            # Results whose call is not earlier in this batch: look their ids up in one query.
            in_batch: set[str] = set()
            lookup: set[str] = set()
            for _, _, prep in batch:
                for call_id, _ in prep.results:
                    if call_id and call_id not in in_batch:
                        lookup.add(call_id)
                for call in prep.calls:
                    if call.provider_id:
                        in_batch.add(call.provider_id)
            by_id: dict[str, tuple[int, int]] = {}
            if lookup:
                for call_id, pos, idx in self._prior_ids(sid, sorted(lookup)):
                    by_id[call_id] = (pos, idx)  # ordered by position: the latest wins
            open_calls: list[tuple[tuple[int, int], str]] | None = None  # None: not read yet
            answered: set[tuple[int, int]] = set()
            message_rows: list[tuple[Any, ...]] = []
            call_rows: list[tuple[Any, ...]] = []
            result_rows: list[tuple[Any, ...]] = []
            for position, key, prep in batch:
                message_rows.append((sid, position, key, prep.role, SOURCE, prep.text,
                                     prep.parts_json, stamp))
                used: set[str] = set()
                opened: list[tuple[tuple[int, int], str]] = []
                for index, call in enumerate(prep.calls):
                    pid = call.provider_id
                    minted = not pid or pid in used
                    call_id = f"call_ts{position}x{index}" if minted else pid
                    used.add(call_id)  # type: ignore[arg-type]
                    if not minted:
                        by_id[pid] = (position, index)  # type: ignore[index]
                    opened.append(((position, index), call.name))
                    call_rows.append((sid, position, index, call_id, minted, call.name,
                                      call.wire_json, call.status, call.error,
                                      self._json(call.arguments), SOURCE))
                if opened:
                    open_calls = opened
                for index, (ref_id, content_json) in enumerate(prep.results):
                    ref = by_id.get(ref_id) if ref_id else None
                    if ref is None:  # by position: the first unanswered call of the last caller
                        if open_calls is None:
                            open_calls, answered = self._prior_open_calls(sid)
                        ref = next((r for r, _ in open_calls if r not in answered), None)
                    if ref is not None:
                        answered.add(ref)
                    result_rows.append((sid, position, index, ref_id,
                                        ref[0] if ref else None, ref[1] if ref else None,
                                        False, content_json, SOURCE))
            self._many(self.INSERT_MESSAGE, message_rows)
            if call_rows:
                self._many(self.INSERT_CALL, call_rows)
            if result_rows:
                self._many(self.INSERT_RESULT, result_rows)
            self._exec(self.UPDATE_SESSION, (next_position + len(batch), stamp, sid))
        return [p for p, _, _ in batch], skipped, created

    def _prior_open_calls(
        self, sid: str
    ) -> tuple[list[tuple[tuple[int, int], str]], set[tuple[int, int]]]:
        last = self._all(self.LAST_CALL_POSITION, (sid,))[0][0]
        if last is None:
            return [], set()
        calls = [((last, i), n) for i, n in self._all(self.CALLS_AT, (sid, last))]
        answered = {(last, i) for (i,) in self._all(self.ANSWERED_AT, (sid, last))}
        return calls, answered

    def load(self, sid: str) -> RawTranscript:
        with self._read():
            srows = self._all(self.SELECT_SESSION, (sid,))
            if not srows:
                raise KeyError(sid)
            mrows = self._all(self.SELECT_MESSAGES, (sid,))
            crows = self._all(self.SELECT_CALLS, (sid,))
            rrows = self._all(self.SELECT_RESULTS, (sid,))
            aliases = dict(self._all(self.SELECT_ALIASES, ()))
        loads = orjson.loads
        calls: dict[int, dict[int, RawCall]] = {}
        for pos, idx, call_id, wire_json, status, error, extras_json, source, minted in crows:
            wire = loads(wire_json)
            fn = wire["function"]
            raw_name = fn["name"]
            text = fn["arguments"]
            if status == "ok":
                arguments: dict[str, Any] | None = loads(text)
            elif status == "empty":
                arguments = {}
            else:
                arguments = None
            extras = loads(extras_json) if extras_json else {}
            if minted:
                extras["provider_id"] = wire.get("id")
                extras["id_minted"] = True
            name = aliases.get(raw_name, raw_name)
            calls.setdefault(pos, {})[idx] = RawCall(
                call_id, name, raw_name if name != raw_name else None, arguments, text, status,
                error, extras, source,
            )
        results: dict[int, dict[int, RawResult]] = {}
        links: dict[tuple[int, int], tuple[int, int]] = {}
        for pos, idx, call_id, content, is_error, name, extras_json, source, cpos, cidx in rrows:
            results.setdefault(pos, {})[idx] = RawResult(
                call_id, loads(content), bool(is_error), name,
                loads(extras_json) if extras_json else {}, source,
            )
            if cpos is not None and cidx is not None:
                links[(pos, idx)] = (cpos, cidx)
        out: list[RawMessage] = []
        for pos, key, role, source, parts_json, extras_json, meta_json, created in mrows:
            parts: list[Any] = loads(parts_json)
            for i, item in enumerate(parts):
                kind = item["type"]
                if kind == "tool_call":
                    parts[i] = calls[pos][item["index"]]
                elif kind == "tool_result":
                    parts[i] = results[pos][item["index"]]
            out.append(RawMessage(
                pos, key, role, source, parts, loads(extras_json) if extras_json else {},
                loads(meta_json) if meta_json else {}, self._read_time(created),
            ))
        s = srows[0]
        session = RawSession(s[0], s[1], s[2], s[3], s[4], tuple(loads(s[5])),
                             self._read_time(s[7]), self._read_time(s[8]), s[9], loads(s[6]))
        return RawTranscript(session, out, links)

    def count_calls_by_tool(self) -> dict[str, int]:
        with self._read():
            rows = self._all(self.COUNT_BY_TOOL, ())
            aliases = dict(self._all(self.SELECT_ALIASES, ()))
        counts: dict[str, int] = {}
        for raw, n in rows:
            name = aliases.get(raw, raw)
            counts[name] = counts.get(name, 0) + int(n)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def find_calls(self, contains: str) -> list[tuple[str, int, int, str, str, str]]:
        """(session, position, index, call id, name, raw name) of the calls whose argument
        text contains ``contains``: escaped twice, as the wire text holds it."""
        needle = _dumps(_dumps(contains)[1:-1])[1:-1]
        with self._read():
            rows = self._all(self.FIND_CALLS, (needle,))
            aliases = dict(self._all(self.SELECT_ALIASES, ()))
        return [(sid, pos, idx, cid, aliases.get(raw, raw), raw)
                for sid, pos, idx, cid, raw in rows]

    def search_rows(self) -> list[tuple[Any, ...]]:
        """(session, call position, call index, decoded text) of every call and result: what
        a hand-written store would feed a text index in bulk (same decoded text as ours)."""
        with self._read():
            calls = self._all("SELECT session_id, position, call_index, wire_json "
                              "FROM tool_calls", ())
            results = self._all("SELECT session_id, call_position, call_index, content_json "
                                "FROM tool_results", ())
        return [*((s, p, i, call_search_text(w)) for s, p, i, w in calls),
                *((s, p, i, result_search_text(c)) for s, p, i, c in results)]

    def build_indexes(self) -> None:  # the audit B-trees and the text index, in bulk
        raise NotImplementedError

    def full_text(self, needle: str, limit: int = 50) -> list[tuple[Any, ...]]:
        """The oldest ``limit`` calls whose decoded text, or a linked result's, holds
        ``needle``, with their first result (what the store's full-text search returns)."""
        with self._read():
            rows = self._all(self.FULL_TEXT, (self._needle(needle), limit))
            keys = [(r[0], r[1], r[2]) for r in rows]
            first: dict[tuple[str, int, int], tuple[Any, ...]] = {}
            if keys:
                cond = " OR ".join(["(session_id = ? AND call_position = ? AND call_index = ?)"]
                                   * len(keys))
                sql = ("SELECT session_id, call_position, call_index, is_error, content_json "
                       f"FROM tool_results WHERE {cond} ORDER BY session_id, position, "
                       "result_index")
                if self.dialect == "postgresql":
                    sql = _pg(sql)
                for r in self._all(sql, [v for k in keys for v in k]):
                    first.setdefault((r[0], r[1], r[2]), r)
        return [(*r, first.get((r[0], r[1], r[2]))) for r in rows]

    def _needle(self, needle: str) -> str:
        return needle

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every stored row that the two implementations must agree on (for the checks)."""
        with self._read():
            return {
                "sessions": self._all(
                    "SELECT session_id, tags_json, metadata_json, next_position FROM sessions "
                    "ORDER BY session_id", ()),
                "messages": self._all(
                    "SELECT session_id, position, message_key, role, source, text, parts_json, "
                    "extras_json, metadata_json FROM messages ORDER BY session_id, position", ()),
                "tool_calls": [r[:-1] + (orjson.loads(r[-1]) if isinstance(r[-1], str)
                                         else r[-1],) for r in self._all(
                    "SELECT session_id, position, call_index, call_id, id_minted, raw_name, "
                    "wire_json, arguments_status, arguments_error, extras_json, source, "
                    "wire_version, arguments FROM tool_calls "
                    "ORDER BY session_id, position, call_index", ())],
                "tool_results": self._all(
                    "SELECT session_id, position, result_index, call_id, call_position, "
                    "call_index, is_error, name, content_json, extras_json, source "
                    "FROM tool_results ORDER BY session_id, position, result_index", ()),
                "tool_aliases": self._all(
                    "SELECT agent, raw_name, current_name FROM tool_aliases "
                    "ORDER BY agent, raw_name", ()),
            }


# The store's seeded alias table (store.vocabulary, seeded by the migrations): the same rows,
# global ones under agent ''.
SEED_ALIASES = [(agent or "", raw, current) for agent, raw, current in VOCABULARY]

SQLITE_SCHEMA = """
CREATE TABLE sessions (
    session_id VARCHAR NOT NULL, title TEXT, provider VARCHAR, model VARCHAR, cwd TEXT,
    tags_json TEXT NOT NULL, metadata_json TEXT NOT NULL, created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL, next_position INTEGER NOT NULL,
    CONSTRAINT pk_sessions PRIMARY KEY (session_id));
CREATE TABLE messages (
    session_id VARCHAR NOT NULL, position INTEGER NOT NULL, message_key VARCHAR,
    role VARCHAR NOT NULL, source VARCHAR, text TEXT NOT NULL, parts_json TEXT NOT NULL,
    extras_json TEXT, metadata_json TEXT, created_at DATETIME NOT NULL,
    CONSTRAINT pk_messages PRIMARY KEY (session_id, position),
    CONSTRAINT fk_messages_session_id_sessions FOREIGN KEY (session_id)
        REFERENCES sessions (session_id) ON DELETE CASCADE);
CREATE UNIQUE INDEX ux_messages_session_key ON messages (session_id, message_key);
CREATE TABLE tool_calls (
    session_id VARCHAR NOT NULL, position INTEGER NOT NULL, call_index INTEGER NOT NULL,
    call_id VARCHAR NOT NULL, id_minted BOOLEAN NOT NULL, raw_name VARCHAR NOT NULL,
    wire_json TEXT NOT NULL, arguments_status VARCHAR NOT NULL, arguments_error TEXT,
    arguments JSON, extras_json TEXT, source VARCHAR,
    wire_version INTEGER DEFAULT '1' NOT NULL,
    CONSTRAINT pk_tool_calls PRIMARY KEY (session_id, position, call_index),
    CONSTRAINT fk_tool_calls_session_id_messages FOREIGN KEY (session_id, position)
        REFERENCES messages (session_id, position) ON DELETE CASCADE);
CREATE INDEX ix_tool_calls_session_call_id ON tool_calls (session_id, call_id);
CREATE INDEX ix_tool_calls_raw_name ON tool_calls (raw_name);
CREATE TABLE tool_results (
    session_id VARCHAR NOT NULL, position INTEGER NOT NULL, result_index INTEGER NOT NULL,
    call_id VARCHAR, call_position INTEGER, call_index INTEGER, is_error BOOLEAN NOT NULL,
    name VARCHAR, content_json TEXT NOT NULL, extras_json TEXT, source VARCHAR,
    CONSTRAINT pk_tool_results PRIMARY KEY (session_id, position, result_index),
    CONSTRAINT fk_tool_results_session_id_messages FOREIGN KEY (session_id, position)
        REFERENCES messages (session_id, position) ON DELETE CASCADE);
CREATE INDEX ix_tool_results_call ON tool_results (session_id, call_position, call_index);
CREATE TABLE tool_definitions (
    session_id VARCHAR NOT NULL, name VARCHAR NOT NULL, description TEXT NOT NULL,
    parameters_json TEXT NOT NULL, definition_json TEXT NOT NULL, recorded_at DATETIME NOT NULL,
    CONSTRAINT pk_tool_definitions PRIMARY KEY (session_id, name),
    CONSTRAINT fk_tool_definitions_session_id_sessions FOREIGN KEY (session_id)
        REFERENCES sessions (session_id) ON DELETE CASCADE);
CREATE TABLE tool_aliases (
    raw_name VARCHAR NOT NULL, current_name VARCHAR NOT NULL, created_at DATETIME NOT NULL,
    agent VARCHAR NOT NULL DEFAULT '',
    CONSTRAINT pk_tool_aliases PRIMARY KEY (agent, raw_name));
"""

POSTGRES_SCHEMA = """
CREATE TABLE sessions (
    session_id varchar NOT NULL, title text, provider varchar, model varchar, cwd text,
    tags_json text NOT NULL, metadata_json text NOT NULL,
    created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
    next_position integer NOT NULL,
    CONSTRAINT pk_sessions PRIMARY KEY (session_id));
CREATE TABLE messages (
    session_id varchar NOT NULL, position integer NOT NULL, message_key varchar,
    role varchar NOT NULL, source varchar, text text NOT NULL, parts_json text NOT NULL,
    extras_json text, metadata_json text, created_at timestamptz NOT NULL,
    CONSTRAINT pk_messages PRIMARY KEY (session_id, position),
    CONSTRAINT fk_messages_session_id_sessions FOREIGN KEY (session_id)
        REFERENCES sessions (session_id) ON DELETE CASCADE);
CREATE UNIQUE INDEX ux_messages_session_key ON messages (session_id, message_key);
CREATE TABLE tool_calls (
    session_id varchar NOT NULL, position integer NOT NULL, call_index integer NOT NULL,
    call_id varchar NOT NULL, id_minted boolean NOT NULL, raw_name varchar NOT NULL,
    wire_json text NOT NULL, arguments_status varchar NOT NULL, arguments_error text,
    arguments jsonb, extras_json text, source varchar,
    wire_version integer DEFAULT 1 NOT NULL,
    CONSTRAINT pk_tool_calls PRIMARY KEY (session_id, position, call_index),
    CONSTRAINT fk_tool_calls_session_id_messages FOREIGN KEY (session_id, position)
        REFERENCES messages (session_id, position) ON DELETE CASCADE);
CREATE INDEX ix_tool_calls_session_call_id ON tool_calls (session_id, call_id);
CREATE INDEX ix_tool_calls_raw_name ON tool_calls (raw_name);
CREATE TABLE tool_results (
    session_id varchar NOT NULL, position integer NOT NULL, result_index integer NOT NULL,
    call_id varchar, call_position integer, call_index integer, is_error boolean NOT NULL,
    name varchar, content_json text NOT NULL, extras_json text, source varchar,
    CONSTRAINT pk_tool_results PRIMARY KEY (session_id, position, result_index),
    CONSTRAINT fk_tool_results_session_id_messages FOREIGN KEY (session_id, position)
        REFERENCES messages (session_id, position) ON DELETE CASCADE);
CREATE INDEX ix_tool_results_call ON tool_results (session_id, call_position, call_index);
CREATE TABLE tool_definitions (
    session_id varchar NOT NULL, name varchar NOT NULL, description text NOT NULL,
    parameters_json text NOT NULL, definition_json text NOT NULL,
    recorded_at timestamptz NOT NULL,
    CONSTRAINT pk_tool_definitions PRIMARY KEY (session_id, name),
    CONSTRAINT fk_tool_definitions_session_id_sessions FOREIGN KEY (session_id)
        REFERENCES sessions (session_id) ON DELETE CASCADE);
CREATE TABLE tool_aliases (
    raw_name varchar NOT NULL, current_name varchar NOT NULL, created_at timestamptz NOT NULL,
    agent varchar NOT NULL DEFAULT '',
    CONSTRAINT pk_tool_aliases PRIMARY KEY (agent, raw_name));
"""


# The B-tree indexes of revision 0004 (store/db/tables.py declares them too).
AUDIT_INDEXES = """
CREATE INDEX ix_messages_created_at ON messages (created_at);
CREATE INDEX ix_messages_time ON messages (session_id, position, created_at);
CREATE INDEX ix_tool_calls_usage ON tool_calls
    (raw_name, session_id, position, call_index, arguments_status);
CREATE INDEX ix_tool_results_errors ON tool_results
    (session_id, call_position, call_index, is_error) WHERE is_error = {true};
"""


class RawSQLite(RawStore):
    """``sqlite3`` in autocommit mode with explicit ``BEGIN IMMEDIATE``, the store's pragmas."""

    dialect = "sqlite"

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                    timeout=30.0)
        for pragma in ("foreign_keys=ON", "busy_timeout=30000", "journal_mode=WAL",
                       "synchronous=NORMAL"):
            self.conn.execute(f"PRAGMA {pragma}")
        if create:  # the plain schema: no index of the audits, no search index
            self.conn.executescript("BEGIN;" + SQLITE_SCHEMA + "COMMIT;")
            with self._write():
                self._many("INSERT INTO tool_aliases VALUES (?, ?, ?, ?)",
                           [(r, c, self._time(datetime.now(UTC)), a)
                            for a, r, c in SEED_ALIASES])

    FULL_TEXT = (
        "SELECT c.session_id, c.position, c.call_index, c.call_id, c.raw_name, c.wire_json, "
        "m.created_at FROM (SELECT DISTINCT session_id, call_position, call_index FROM "
        "raw_search WHERE id IN (SELECT rowid FROM raw_fts WHERE raw_fts MATCH ?)) h "
        "JOIN tool_calls c ON c.session_id = h.session_id AND c.position = h.call_position "
        "AND c.call_index = h.call_index JOIN messages m ON m.session_id = c.session_id "
        "AND m.position = c.position ORDER BY m.created_at, c.session_id, c.position, "
        "c.call_index LIMIT ?"
    )

    def _needle(self, needle: str) -> str:
        return '"' + needle.replace('"', '""') + '"'

    def build_indexes(self) -> None:
        rows = self.search_rows()
        with self._write():
            for statement in AUDIT_INDEXES.format(true=1).split(";"):
                if statement.strip():
                    self.conn.execute(statement)
            self.conn.execute("CREATE TABLE raw_search (id INTEGER PRIMARY KEY, session_id, "
                              "call_position, call_index)")
            self.conn.execute("CREATE VIRTUAL TABLE raw_fts USING fts5(body, content='', "
                              "columnsize=0, tokenize='trigram')")
            self.conn.executemany("INSERT INTO raw_search VALUES (?, ?, ?, ?)",
                                  [(n, *r[:3]) for n, r in enumerate(rows, 1)])
            self.conn.executemany("INSERT INTO raw_fts (rowid, body) VALUES (?, ?)",
                                  [(n, r[3]) for n, r in enumerate(rows, 1)])

    @contextmanager
    def _write(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[None]:
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    def _all(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()

    def _exec(self, sql: str, params: Sequence[Any]) -> int:
        return self.conn.execute(sql, params).rowcount

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self.conn.executemany(sql, rows)

    def _time(self, value: datetime) -> str:
        # SQLAlchemy's SQLite DATETIME text (the UTC wall time; the offset is not stored).
        return f"{value:%Y-%m-%d %H:%M:%S.%f}"

    def _read_time(self, value: Any) -> datetime:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)

    def _json(self, value: dict[str, Any] | None) -> str | None:
        return None if value is None else _dumps(value)

    def _existing_keys(self, sid: str, keys: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(keys), IN_CHUNK):
            chunk = keys[start:start + IN_CHUNK]
            sql = ("SELECT message_key FROM messages WHERE session_id = ? AND message_key IN ("
                   + ",".join("?" * len(chunk)) + ")")
            found.update(k for (k,) in self.conn.execute(sql, (sid, *chunk)))
        return found

    def _prior_ids(self, sid: str, ids: list[str]) -> list[tuple[str, int, int]]:
        out: list[tuple[str, int, int]] = []
        for start in range(0, len(ids), IN_CHUNK):
            chunk = ids[start:start + IN_CHUNK]
            sql = ("SELECT call_id, position, call_index FROM tool_calls WHERE session_id = ? "
                   "AND id_minted = 0 AND call_id IN (" + ",".join("?" * len(chunk)) + ") "
                   "ORDER BY position, call_index")
            out.extend(self.conn.execute(sql, (sid, *chunk)))
        return out

    def close(self) -> None:
        self.conn.close()


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


class RawPostgres(RawStore):
    """psycopg 3 in autocommit mode with explicit transactions; ``executemany`` pipelines."""

    dialect = "postgresql"
    INSERT_SESSION = _pg(RawStore.INSERT_SESSION)
    LOCK_SESSION = _pg(RawStore.LOCK_SESSION) + " FOR UPDATE"
    UPDATE_SESSION = _pg(RawStore.UPDATE_SESSION)
    INSERT_MESSAGE = _pg(RawStore.INSERT_MESSAGE)
    INSERT_CALL = _pg(RawStore.INSERT_CALL)
    INSERT_RESULT = _pg(RawStore.INSERT_RESULT)
    LAST_CALL_POSITION = _pg(RawStore.LAST_CALL_POSITION)
    CALLS_AT = _pg(RawStore.CALLS_AT)
    ANSWERED_AT = _pg(RawStore.ANSWERED_AT)
    SELECT_SESSION = _pg(RawStore.SELECT_SESSION)
    SELECT_MESSAGES = _pg(RawStore.SELECT_MESSAGES)
    SELECT_CALLS = _pg(RawStore.SELECT_CALLS)
    SELECT_RESULTS = _pg(RawStore.SELECT_RESULTS)
    FIND_CALLS = _pg(RawStore.FIND_CALLS).replace("instr(wire_json, %s)", "strpos(wire_json, %s)")
    EXISTING_KEYS = (
        "SELECT message_key FROM messages WHERE session_id = %s AND message_key = ANY(%s)"
    )
    PRIOR_IDS = (
        "SELECT call_id, position, call_index FROM tool_calls WHERE session_id = %s "
        "AND id_minted = false AND call_id = ANY(%s) ORDER BY position, call_index"
    )

    def __init__(self, dsn: str, *, create: bool = True) -> None:
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.cur = self.conn.cursor()
        if create:
            with self.conn.transaction():
                self.cur.execute(POSTGRES_SCHEMA.encode())  # plain: no audit/search index
                now = datetime.now(UTC)
                self.cur.executemany("INSERT INTO tool_aliases VALUES (%s, %s, %s, %s)",
                                     [(r, c, now, a) for a, r, c in SEED_ALIASES])

    FULL_TEXT = (
        "SELECT c.session_id, c.position, c.call_index, c.call_id, c.raw_name, c.wire_json, "
        "m.created_at FROM (SELECT DISTINCT session_id, call_position, call_index FROM "
        "raw_search WHERE body ILIKE %s) h "
        "JOIN tool_calls c ON c.session_id = h.session_id AND c.position = h.call_position "
        "AND c.call_index = h.call_index JOIN messages m ON m.session_id = c.session_id "
        "AND m.position = c.position ORDER BY m.created_at, c.session_id, c.position, "
        "c.call_index LIMIT %s"
    )

    def _needle(self, needle: str) -> str:
        return "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"

    def build_indexes(self) -> None:
        rows = self.search_rows()
        with self._write():
            self.cur.execute(AUDIT_INDEXES.format(true="true").encode())
            self.cur.execute("CREATE INDEX ix_raw_arguments_gin ON tool_calls "
                             "USING gin (arguments jsonb_path_ops)")
            self.cur.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            self.cur.execute("CREATE TABLE raw_search (session_id varchar, call_position int, "
                             "call_index int, body text)")
            with self.cur.copy("COPY raw_search FROM STDIN") as copy:
                for r in rows:
                    copy.write_row((*r[:3], r[3].replace("\x00", "\ufffd")))
            self.cur.execute("CREATE INDEX ix_raw_search_trgm ON raw_search "
                             "USING gin (body gin_trgm_ops)")
        self.conn.execute("VACUUM ANALYZE")

    @contextmanager
    def _write(self) -> Iterator[None]:
        with self.conn.transaction():
            yield

    _read = _write

    def _all(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self.cur.execute(sql, params).fetchall()

    def _exec(self, sql: str, params: Sequence[Any]) -> int:
        return self.cur.execute(sql, params).rowcount

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self.cur.executemany(sql, rows)

    def _json(self, value: dict[str, Any] | None) -> Jsonb | None:
        return None if value is None else Jsonb(value, dumps=_dumps)

    def _existing_keys(self, sid: str, keys: list[str]) -> set[str]:
        return {k for (k,) in self.cur.execute(self.EXISTING_KEYS, (sid, keys))}

    def _prior_ids(self, sid: str, ids: list[str]) -> list[tuple[str, int, int]]:
        return self.cur.execute(self.PRIOR_IDS, (sid, ids)).fetchall()

    def close(self) -> None:
        self.conn.close()


# -- the OpenAI Agents SDK's sessions, same records, same run ------------------------------------


class SdkSide:
    """The Agents SDK's own session store (``SQLiteSession`` on SQLite, ``SQLAlchemySession``
    on PostgreSQL, psycopg async) driven from one event loop: one ``add_items`` per append,
    ``get_items`` per load, the records as items (it stores each as one JSON text)."""

    def __init__(self, label: str, make: Callable[[str], Any],
                 close: Callable[[], Any] | None = None) -> None:
        self.label = label
        self._make = make
        self._close = close
        self._sessions: dict[str, Any] = {}
        self.loop = asyncio.new_event_loop()

    def _session(self, sid: str) -> Any:
        session = self._sessions.get(sid)
        if session is None:
            session = self._sessions[sid] = self._make(sid)
        return session

    def append(self, sid: str, records: Sequence[dict[str, Any]]) -> None:
        self.loop.run_until_complete(self._session(sid).add_items(list(records)))

    def load(self, sid: str) -> list[Any]:
        return self.loop.run_until_complete(self._session(sid).get_items())  # type: ignore[no-any-return]

    def close(self) -> None:
        for session in self._sessions.values():
            closing = getattr(session, "close", None)
            if closing is not None:
                outcome = closing()
                if asyncio.iscoroutine(outcome):
                    self.loop.run_until_complete(outcome)
        if self._close is not None:
            outcome = self._close()
            if asyncio.iscoroutine(outcome):
                self.loop.run_until_complete(outcome)
        self.loop.close()


def _sdk_sqlite(path: Path) -> SdkSide | None:
    try:
        from agents import SQLiteSession
    except ImportError:
        return None
    return SdkSide("SQLiteSession", lambda sid: SQLiteSession(sid, str(path)))


def _sdk_postgres(dsn: str) -> SdkSide | None:
    try:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
        from sqlalchemy.ext.asyncio import create_async_engine
    except ImportError:
        return None
    engine = create_async_engine("postgresql+psycopg://" + dsn.split("://", 1)[1])
    return SdkSide("SQLAlchemySession",
                   lambda sid: SQLAlchemySession(sid, engine=engine, create_tables=True),
                   engine.dispose)


# -- concurrent writers ---------------------------------------------------------------------------


def _writer(kind: str, target: str, worker: int, count: int, start_at: float,
            out: Any) -> None:
    """One writer process: ``count`` committed single-message appends to a session of its own,
    from ``start_at`` on (after one warm-up append); puts (start, end) on ``out``."""
    (session,) = generate_sessions(1, count, seed=7000 + worker, prefix=f"{kind}{worker}")
    sid = f"writer-{kind}-{worker}-{start_at}"
    pairs = list(zip(session.messages, session.keys, strict=True))[:count + 1]
    store = TranscriptStore.open(target) if kind == "store" else None
    raw: RawStore | None = None
    if store is None:
        raw = (RawSQLite(Path(target), create=False) if not target.startswith("post")
               else RawPostgres(target, create=False))

    def append(record: dict[str, Any], key: str) -> None:
        if store is not None:
            store.append(sid, [record], keys=[key])
        else:
            assert raw is not None
            raw.append(sid, [record], [key])

    append(*pairs[0])
    while time.time() < start_at:
        time.sleep(0.0005)
    started = time.time()
    for record, key in pairs[1:]:
        append(record, key)
    out.put((started, time.time()))


def run_writers(kind: str, target: str, processes: int, count: int) -> float:
    """Wall time of ``processes`` writer processes doing ``count`` appends each."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    start_at = time.time() + 2.0 + 0.3 * processes  # after every process has started
    procs = [context.Process(target=_writer, args=(kind, target, w, count, start_at, queue))
             for w in range(processes)]
    for proc in procs:
        proc.start()
    spans = [queue.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
    return max(end for _, end in spans) - min(start for start, _ in spans)


# -- the harness --------------------------------------------------------------------------------


@dataclass
class Row:
    operation: str
    store: float  # seconds
    raw: float
    target: float | None
    per_call: bool = False  # show milliseconds

    @property
    def ratio(self) -> float:
        return self.store / self.raw if self.raw > 0 else float("inf")

    @property
    def passed(self) -> bool | None:
        return None if self.target is None else self.ratio <= self.target


@dataclass
class Backend:
    name: str
    store_url: str
    open_raw: Callable[[bool], RawStore]  # create?
    open_store_side: Callable[[], RawStore]  # a raw reader on the store's database
    cleanup: Callable[[], None]
    label: str = ""
    raw_target: str = ""  # what a writer process opens: the raw SQLite path or DSN
    open_sdk: Callable[[], SdkSide | None] = lambda: None


@dataclass
class Result:
    rows: list[Row] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def _pair(store_fn: Callable[[], Any], raw_fn: Callable[[], Any], store_first: bool
          ) -> tuple[float, float, Any, Any]:
    """Time one store call and one raw call, in the given order."""
    clock = time.perf_counter
    if store_first:
        t0 = clock()
        s = store_fn()
        t1 = clock()
        r = raw_fn()
        t2 = clock()
        return t1 - t0, t2 - t1, s, r
    t0 = clock()
    r = raw_fn()
    t1 = clock()
    s = store_fn()
    t2 = clock()
    return t2 - t1, t1 - t0, s, r


def _store_calls(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [(c.id, c.name, c.raw_name, c.input if c.is_valid else None)  # type: ignore[union-attr]
            for m in transcript.messages for c in m.message.tool_calls]


def _raw_calls(transcript: RawTranscript) -> list[tuple[Any, ...]]:
    return [(c.id, c.name, c.raw_name, c.arguments) for c in transcript.calls()]


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run_backend(backend: Backend, sessions: list[Session], incremental: list[Session],
                query_repeat: int, writers: Sequence[int] = (), writer_appends: int = 0
                ) -> Result:
    """One pass of every operation on fresh databases; rows in seconds."""
    result = Result()
    fail = result.failures.append
    store = TranscriptStore.open(backend.store_url)
    raw = backend.open_raw(True)
    sdk = backend.open_sdk()
    sdk_rows: list[Row] = []

    def versus_sdk(label: str, ours: float, raw_time: float, theirs: float,
                   per_call: bool = False) -> None:
        assert sdk is not None
        sdk_rows.append(Row(f"SDK {sdk.label}: {label}", theirs, raw_time, None, per_call))
        sdk_rows.append(Row(f"  store vs SDK {sdk.label}: {label}", ours, theirs, 1.0,
                            per_call))

    try:
        # Bulk append: one call per whole session, alternating which side goes first.
        gc.collect()
        t_store = t_raw = t_sdk = 0.0
        for i, s in enumerate(sessions):
            ts, tr, _, _ = _pair(partial(store.append, s.session_id, s.messages, keys=s.keys),
                                 partial(raw.append, s.session_id, s.messages, s.keys),
                                 i % 2 == 0)
            t_store += ts
            t_raw += tr
            if sdk is not None:
                t_sdk += _timed(partial(sdk.append, s.session_id, s.messages))[0]
        result.rows.append(Row(f"bulk append ({len(sessions)} sessions, 1 call each)",
                               t_store, t_raw, TARGETS["bulk"]))
        if sdk is not None:
            versus_sdk("bulk append", t_store, t_raw, t_sdk)

        # Incremental append: one message per call, committed. The first session warms up.
        gc.collect()
        lat_store: list[float] = []
        lat_raw: list[float] = []
        lat_sdk: list[float] = []
        for n, s in enumerate(incremental):
            for i, (record, key) in enumerate(zip(s.messages, s.keys, strict=True)):
                ts, tr, _, _ = _pair(
                    partial(store.append, s.session_id, [record], keys=[key]),
                    partial(raw.append, s.session_id, [record], [key]),
                    i % 2 == 0)
                if n > 0:
                    lat_store.append(ts)
                    lat_raw.append(tr)
                if sdk is not None:
                    tk = _timed(partial(sdk.append, s.session_id, [record]))[0]
                    if n > 0:
                        lat_sdk.append(tk)
        calls = len(lat_store)
        result.rows.append(Row(f"incremental append, total ({calls} calls)",
                               sum(lat_store), sum(lat_raw), TARGETS["incremental"]))
        for q in (50, 99):
            result.rows.append(Row(f"  incremental append, p{q} per call",
                                   _percentile(lat_store, q), _percentile(lat_raw, q),
                                   TARGETS["incremental"], per_call=True))
        if sdk is not None:
            versus_sdk("committed append, total", sum(lat_store), sum(lat_raw), sum(lat_sdk))
            versus_sdk("committed append, p50", _percentile(lat_store, 50),
                       _percentile(lat_raw, 50), _percentile(lat_sdk, 50), per_call=True)

        # Search index upkeep, paid once in bulk, off the appends: the store catches up (as
        # the first search, the end of an import or `db index` would); the raw side builds
        # the same decoded-text index (and the audit B-trees) after its bulk load.
        gc.collect()
        t_catch, done = _timed(store.update_search_index)
        t_build, _ = _timed(raw.build_indexes)
        result.rows.append(Row(f"search index catch-up ({done.calls} calls, {done.results} "
                               "results) vs raw bulk build", t_catch, t_build, None))

        # Full-session load of every bulk session (one warm-up load each first).
        store.load(sessions[0].session_id)
        raw.load(sessions[0].session_id)
        gc.collect()
        t_store = t_raw = 0.0
        per_store: list[float] = []
        per_raw: list[float] = []
        per_sdk: list[float] = []
        if sdk is not None:
            sdk.load(sessions[0].session_id)
        store_calls = raw_calls = 0
        mismatched: list[str] = []
        for i, s in enumerate(sessions):
            ts, tr, st, rt = _pair(partial(store.load, s.session_id),
                                   partial(raw.load, s.session_id), i % 2 == 0)
            per_store.append(ts)
            per_raw.append(tr)
            if sdk is not None:
                per_sdk.append(_timed(partial(sdk.load, s.session_id))[0])
            sc, rc = _store_calls(st), _raw_calls(rt)
            store_calls += len(sc)
            raw_calls += len(rc)
            if sc != rc or len(st.messages) != len(rt.messages):
                mismatched.append(s.session_id)
        result.rows.append(Row(f"full-session load ({len(sessions)} sessions)",
                               sum(per_store), sum(per_raw), TARGETS["load"]))
        result.rows.append(Row("  full-session load, p50 per session",
                               _percentile(per_store, 50), _percentile(per_raw, 50),
                               TARGETS["load"], per_call=True))
        if sdk is not None:
            versus_sdk("full-session load", sum(per_store), sum(per_raw), sum(per_sdk))
        expected = sum(s.call_count for s in sessions)
        result.notes.append(f"calls loaded: store {store_calls}, raw {raw_calls}, "
                            f"generated {expected}")
        if not store_calls == raw_calls == expected:
            fail(f"loaded calls: store {store_calls}, raw {raw_calls}, generated {expected}")
        if mismatched:
            fail(f"loaded calls differ in {len(mismatched)} sessions, e.g. {mismatched[:3]}")

        # Both databases as autovacuum leaves them (visibility map, statistics) before the
        # queries: the raw side got VACUUM ANALYZE after its index build.
        if backend.name == "postgres":
            vacuum = backend.open_store_side()
            try:
                vacuum.conn.execute("VACUUM ANALYZE")  # type: ignore[attr-defined]
            finally:
                vacuum.close()

        # Audit queries: median of interleaved runs after a warm-up.
        def median_pair(store_fn: Callable[[], Any], raw_fn: Callable[[], Any], runs: int
                        ) -> tuple[float, float, Any, Any]:
            s_out, r_out = store_fn(), raw_fn()
            ts_list, tr_list = [], []
            for i in range(runs):
                ts, tr, s_out, r_out = _pair(store_fn, raw_fn, i % 2 == 0)
                ts_list.append(ts)
                tr_list.append(tr)
            return statistics.median(ts_list), statistics.median(tr_list), s_out, r_out

        gc.collect()
        ts, tr, s_counts, r_counts = median_pair(store.count_calls_by_tool,
                                                 raw.count_calls_by_tool, query_repeat * 3)
        result.rows.append(Row("count calls by tool (median of runs)", ts, tr,
                               TARGETS["count"], per_call=True))
        if s_counts != r_counts:
            fail(f"counts differ: store {s_counts}, raw {r_counts}")
        total_calls = expected + sum(s.call_count for s in incremental)
        if sum(s_counts.values()) != total_calls:
            fail(f"count_calls_by_tool sums to {sum(s_counts.values())}, expected {total_calls}")

        for term in (ASCII_TERM, NON_ASCII_TERM):
            ts, tr, s_hits, r_hits = median_pair(partial(store.find_calls, term),
                                                 partial(raw.find_calls, term), query_repeat)
            result.rows.append(Row(f"find calls {term!r} ({len(s_hits)} hits, median)", ts, tr,
                                   TARGETS["find"], per_call=True))
            s_keys = [(h.session_id, h.position, h.index, h.call_id, h.name, h.raw_name)
                      for h in s_hits]
            if s_keys != r_hits:
                fail(f"find_calls({term!r}): store {len(s_keys)} hits, raw {len(r_hits)}")
            expected_hits = sum(term in c["function"]["arguments"]
                                for s in [*sessions, *incremental] for m in s.messages
                                for c in m.get("tool_calls") or ())
            result.notes.append(f"hits for {term!r}: store {len(s_keys)}, raw {len(r_hits)}, "
                                f"expected {expected_hits}")
            if len(r_hits) != expected_hits:
                fail(f"find_calls({term!r}): {len(r_hits)} hits, expected {expected_hits}")

        for term in (ASCII_TERM, "grep -n"):
            ts, tr, s_hits, r_hits = median_pair(
                partial(search_calls, store, CallQuery(text=term)),
                partial(raw.full_text, term), query_repeat)
            result.rows.append(Row(f"full text {term!r} ({len(s_hits)} hits, median)", ts, tr,
                                   TARGETS["find"], per_call=True))
            s_keys = [(h.session_id, h.position, h.index) for h in s_hits]
            r_keys = [(h[0], h[1], h[2]) for h in r_hits]
            if s_keys != r_keys:
                fail(f"full text {term!r}: store {s_keys[:3]}.., raw {r_keys[:3]}..")

        # The same rows on both sides, and a re-append stores nothing.
        store_side = backend.open_store_side()
        try:
            ours, theirs = store_side.dump(), raw.dump()
        finally:
            store_side.close()
        for table, rows in ours.items():
            if rows != theirs[table]:
                diff = next((a, b) for a, b in zip(rows, theirs[table], strict=False) if a != b) \
                    if len(rows) == len(theirs[table]) else (len(rows), len(theirs[table]))
                fail(f"{table}: the stored rows differ, e.g. store/raw {str(diff)[:300]}")
        again = store.append(sessions[0].session_id, sessions[0].messages, keys=sessions[0].keys)
        positions, _, _ = raw.append(sessions[0].session_id, sessions[0].messages,
                                     sessions[0].keys)
        if again.stored or positions:
            fail(f"a re-append stored {len(again.stored)} (store) / {len(positions)} (raw)")

        # Concurrent writer processes, committed single appends to sessions of their own.
        for processes in writers:
            order = [("store", backend.store_url), ("raw", backend.raw_target)]
            walls = {kind: run_writers(kind, target, processes, writer_appends)
                     for kind, target in (order if processes % 4 else order[::-1])}
            result.rows.append(Row(f"{processes} writer processes x {writer_appends} "
                                   "committed appends (wall)", walls["store"], walls["raw"],
                                   TARGETS["incremental"]))
    finally:
        store.close()
        raw.close()
        if sdk is not None:
            sdk.close()
    result.rows.extend(sdk_rows)
    return result


def profile_store(backend: Backend, op: str, sessions: list[Session],
                  incremental: list[Session], top: int) -> str:
    """The store's side of one operation under cProfile, on a fresh database."""
    store = TranscriptStore.open(backend.store_url)
    try:
        for s in sessions:
            store.append(s.session_id, s.messages, keys=s.keys)
        inc = [Session("prof-" + s.session_id, s.messages,
                       ["prof-" + k for k in s.keys]) for s in incremental]
        store.count_calls_by_tool()
        store.find_calls(ASCII_TERM)
        store.load(sessions[0].session_id)
        profiler = cProfile.Profile()
        if op == "bulk":
            fresh = [Session("prof-" + s.session_id, s.messages, ["prof-" + k for k in s.keys])
                     for s in sessions]
            profiler.enable()
            for s in fresh:
                store.append(s.session_id, s.messages, keys=s.keys)
        elif op == "incremental":
            profiler.enable()
            for s in inc:
                for record, key in zip(s.messages, s.keys, strict=True):
                    store.append(s.session_id, [record], keys=[key])
        elif op == "load":
            profiler.enable()
            for s in sessions:
                store.load(s.session_id)
        elif op == "count":
            profiler.enable()
            for _ in range(200):
                store.count_calls_by_tool()
        else:
            profiler.enable()
            for _ in range(10):
                store.find_calls(ASCII_TERM)
                store.find_calls(NON_ASCII_TERM)
        profiler.disable()
    finally:
        store.close()
    out = io.StringIO()
    stats_ = pstats.Stats(profiler, stream=out)
    stats_.sort_stats("tottime").print_stats(top)
    stats_.sort_stats("cumulative").print_stats(r"store[/\\]", top)
    return out.getvalue()


def _sqlite_backend(root: Path, attempt: int) -> Backend:
    store_path = root / f"store-{attempt}.sqlite"
    raw_path = root / f"raw-{attempt}.sqlite"

    def cleanup() -> None:
        for path in root.glob(f"*-{attempt}.sqlite*"):
            path.unlink()

    return Backend(
        "sqlite", f"sqlite:///{store_path}",
        lambda create: RawSQLite(raw_path, create=create),
        lambda: RawSQLite(store_path, create=False),
        cleanup, f"SQLite {sqlite3.sqlite_version} (file, WAL, synchronous=NORMAL)",
        str(raw_path), lambda: _sdk_sqlite(root / f"sdk-{attempt}.sqlite"),
    )


def _with_database(dsn: str, database: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


def _postgres_backend(dsn: str, attempt: int) -> Backend:
    names = (f"bench_{os.getpid()}_{attempt}_store", f"bench_{os.getpid()}_{attempt}_raw",
             f"bench_{os.getpid()}_{attempt}_sdk")
    with psycopg.connect(dsn, autocommit=True) as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}" ENCODING \'UTF8\' TEMPLATE template0')
        version = admin.info.server_version

    def cleanup() -> None:
        with psycopg.connect(dsn, autocommit=True) as admin:
            for name in names:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    store_dsn, raw_dsn, sdk_dsn = (_with_database(dsn, n) for n in names)
    store_url = "postgresql+psycopg://" + store_dsn.split("://", 1)[1]
    return Backend(
        "postgres", store_url,
        lambda create: RawPostgres(raw_dsn, create=create),
        lambda: RawPostgres(store_dsn, create=False),
        cleanup, f"PostgreSQL {version // 10000}.{version % 10000} (psycopg {psycopg.__version__})",
        raw_dsn, lambda: _sdk_postgres(sdk_dsn),
    )


def _format_time(seconds: float, per_call: bool) -> str:
    return f"{seconds * 1e3:9.3f} ms" if per_call else f"{seconds:9.3f} s "


def print_table(label: str, rows: list[Row]) -> None:
    width = max(len(r.operation) for r in rows)
    print(f"\n{label}")
    header = (f"{'operation':<{width}}  {'store':>12}  {'raw':>12}  {'ratio':>7}  "
              f"{'target':>7}  result")
    print(header)
    print("-" * len(header))
    for r in rows:
        verdict = {None: "-", True: "pass", False: "FAIL"}[r.passed]
        target = f"{r.target:.1f}x" if r.target is not None else "-"
        print(f"{r.operation:<{width}}  {_format_time(r.store, r.per_call):>12}  "
              f"{_format_time(r.raw, r.per_call):>12}  {r.ratio:6.2f}x  {target:>7}  {verdict}")


def _median_rows(runs: list[list[Row]]) -> list[Row]:
    out = []
    for group in zip(*runs, strict=True):
        first = group[0]
        out.append(Row(first.operation, statistics.median(r.store for r in group),
                       statistics.median(r.raw for r in group), first.target, first.per_call))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3,
                        help="whole runs on fresh databases; the table shows medians")
    parser.add_argument("--incremental-sessions", type=int, default=8,
                        help="sessions appended one message per call (plus one to warm up)")
    parser.add_argument("--query-repeat", type=int, default=7,
                        help="timed runs of each audit query (count runs 3x as many)")
    parser.add_argument("--writers", type=int, action="append", default=None,
                        help="concurrent writer processes (repeatable; default 2 and 8; 0: "
                             "none)")
    parser.add_argument("--writer-appends", type=int, default=100,
                        help="committed single-message appends per writer process")
    parser.add_argument("--pg-dsn", default=os.environ.get("BENCH_PG_DSN", DEFAULT_PG_DSN))
    parser.add_argument("--profile", choices=("bulk", "incremental", "load", "count", "find"),
                        action="append", default=[],
                        help="profile the store's side of an operation (repeatable)")
    parser.add_argument("--profile-top", type=int, default=25)
    parser.add_argument("--fail-on-miss", action="store_true",
                        help="exit 1 when a ratio misses its target")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.turns < 1 or args.repeat < 1 or args.incremental_sessions < 1:
        parser.error("--sessions, --turns, --repeat and --incremental-sessions must be >= 1")

    started = time.perf_counter()
    sessions = generate_sessions(args.sessions, args.turns)
    incremental = generate_sessions(args.incremental_sessions + 1, args.turns,
                                    seed=1 + len(sessions), prefix="inc")
    print(f"workload: {stats(sessions).describe()}")
    print(f"incremental: {stats(incremental[1:]).describe()} (+1 warm-up session)")
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    status = 0
    missed = False
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp:
        for name in backends:
            runs: list[list[Row]] = []
            notes: list[str] = []
            label = ""
            for attempt in range(args.repeat + (1 if args.profile else 0)):
                try:
                    backend = (_sqlite_backend(Path(tmp), attempt) if name == "sqlite"
                               else _postgres_backend(args.pg_dsn, attempt))
                except psycopg.OperationalError as exc:
                    print(f"\n{name}: cannot set up the scratch databases: {exc}",
                          file=sys.stderr)
                    status = 2
                    break
                label = backend.label
                try:
                    if attempt == args.repeat:  # the extra attempt: profiles only
                        for op in args.profile:
                            print(f"\n== cProfile of the store's {op} on {name} ==")
                            print(profile_store(backend, op, sessions, incremental,
                                                args.profile_top))
                        continue
                    writers = [w for w in (args.writers or [2, 8]) if w > 0]
                    result = run_backend(backend, sessions, incremental, args.query_repeat,
                                         writers, args.writer_appends)
                finally:
                    backend.cleanup()
                runs.append(result.rows)
                notes = result.notes
                for failure in result.failures:
                    print(f"CHECK FAILED ({name}): {failure}", file=sys.stderr)
                    status = 2
            if not runs:
                continue
            rows = _median_rows(runs)
            print_table(f"{label}, {args.sessions} sessions x {args.turns} turns"
                        + (f", median of {len(runs)} runs" if len(runs) > 1 else ""), rows)
            for note in notes:
                print(f"  {note}")
            missed = missed or any(r.passed is False for r in rows)
    print(f"\nchecks: {'FAILED' if status else 'ok'} (same rows, same loaded calls, counts, "
          f"hits; re-append idempotent); elapsed {time.perf_counter() - started:.1f} s")
    if status == 0 and missed and args.fail_on_miss:
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
