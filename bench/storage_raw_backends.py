"""The raw baseline's two backends: the plain schema on ``sqlite3`` and on psycopg 3."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from storage_raw import IN_CHUNK, RawStore, _dumps, _pg

from store.agents.registry import vocabulary_rows

# The store's seeded alias table (store.tools.vocabulary and the agents' own names, seeded by
# the migrations and the first writable open): the same rows, global ones under agent ''.
SEED_ALIASES = [(agent or "", raw, current) for agent, raw, current in vocabulary_rows()]

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


# The B-tree indexes of revision 0004 (store/db/schema/tables.py declares them too).
AUDIT_INDEXES = """
CREATE INDEX ix_messages_created_at ON messages (created_at);
CREATE INDEX ix_messages_time ON messages (session_id, position, created_at);
CREATE INDEX ix_tool_calls_usage ON tool_calls
    (raw_name, session_id, position, call_index, arguments_status);
CREATE INDEX ix_tool_results_errors ON tool_results
    (session_id, call_position, call_index, is_error) WHERE is_error = {true};
"""


@contextmanager
def sqlite_write(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction on an autocommit ``sqlite3`` connection (the lock up front)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def sqlite_read(conn: sqlite3.Connection) -> Iterator[None]:
    """One read snapshot on an autocommit ``sqlite3`` connection."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


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

    # A call's wire text stored once, as the store stores it (revision 0030): '' where the
    # row's id, name and arguments rebuild it exactly, rebuilt where it is read.
    _REBUILT = ("json_object('id', {p}call_id, 'type', 'function', 'function', "
                "json_object('name', {p}raw_name, 'arguments', {p}arguments))")
    _WIRE = "CASE WHEN {p}wire_json <> '' THEN {p}wire_json ELSE " + _REBUILT + " END"
    INSERT_CALL = (
        "INSERT INTO tool_calls (session_id, position, call_index, call_id, id_minted, raw_name, "
        "wire_json, arguments_status, arguments_error, arguments, extras_json, source, "
        "wire_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, CASE WHEN substr(?10, 1, 1) = '{' AND "
        "NOT ?4 GLOB '*[^ -~]*' AND NOT ?6 GLOB '*[^ -~]*' AND instr(?10, char(127)) = 0 AND "
        "instr(?10, char(8232)) = 0 AND instr(?10, char(8233)) = 0 AND "
        "?7 = json_object('id', ?4, 'type', 'function', 'function', json_object('name', ?6, "
        "'arguments', ?10)) THEN '' ELSE ?7 END, ?8, ?9, ?10, NULL, ?11, 1)"
    )
    SELECT_CALLS = RawStore.SELECT_CALLS.replace("wire_json", _WIRE.format(p=""), 1)
    FIND_CALLS = RawStore.FIND_CALLS.replace("instr(wire_json, ?)",
                                             f"instr({_WIRE.format(p='')}, ?)")
    WIRE_TEXTS = RawStore.WIRE_TEXTS.replace("wire_json", _WIRE.format(p=""))
    FULL_TEXT = (
        "SELECT c.session_id, c.position, c.call_index, c.call_id, c.raw_name, "
        + _WIRE.format(p="c.") + ", "
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

    def _write(self) -> Any:
        return sqlite_write(self.conn)

    def _read(self) -> Any:
        return sqlite_read(self.conn)

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
