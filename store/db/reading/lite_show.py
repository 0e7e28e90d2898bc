"""``sessions show`` of an SQLite file on the stdlib driver, for the command line's start-up
(persistence; no SQLAlchemy).

Showing one session is the second commonest read, and importing SQLAlchemy and the store
took most of it (0.34 of 0.36 s at 10^6 messages). :class:`LiteSession` answers
``TranscriptStore.load`` (the whole session), ``session_sources``, ``session_ancestors`` and
``session_tree`` with ``sqlite3`` in one read snapshot: the rows of the load statement
(``store.db.writing.compiled._load_statement``, one branch per statement here, inside one
transaction) turned into the transcript by the store's own code
(:mod:`store.db.reading.loaded`), the lineage walked by the same functions. A test compares
both answers on every stored session, on both backends. Only the happy path: a plain SQLite
file or a PostgreSQL database (:mod:`store.db.reading.pgread`) at head (:func:`open_show`,
else ``None``); a session that is not found is the store's to explain.
"""

from __future__ import annotations

import sqlite3
from functools import partial
from typing import TYPE_CHECKING, Any

from store.core.arguments import loads_json
from store.core.errors import SessionNotFound
from store.core.sessioninfo import SessionInfo, SessionSource, SessionTree
from store.db.reading.lite import (
    SESSION_COLUMNS,
    Reader,
    call_counts,
    lite_session_id,
    open_reader,
    session_info_of,
)
from store.db.reading.pgread import is_pg
from store.db.reading.walks import MAX_TREE_DEPTH, ancestors_of, tree_of
from store.db.schema.sqlitefile import read_time
from store.db.schema.wiretext import wire_sql
from store.tools.names import AliasTable

if TYPE_CHECKING:  # (a load imports the message model; `sessions tree` does not need it)
    from store.core.transcript import Transcript

__all__ = ["LiteSession", "open_show"]

_NULLS = ", ".join(["NULL"] * 4)
#: The load statement's branches (kind, ints, texts, times, bool), padded as it pads them.
_LOAD = (
    "SELECT 0, next_position, indexed_position, 0, NULL, session_id, title, provider, model, "
    "cwd, agent, tags_json, metadata_json, parent_session_id, lineage, parent_call_id, "
    "created_at, updated_at, started_at, last_activity_at, NULL FROM sessions "
    "WHERE session_id = ?",
    "SELECT 1, position, NULL, NULL, NULL, message_key, role, source, parts_json, extras_json, "
    f"metadata_json, message_id, {_NULLS}, created_at, NULL, NULL, NULL, NULL FROM messages "
    "WHERE session_id = ? AND position >= ?",
    "SELECT 2, position, call_index, NULL, NULL, call_id, {wire}, arguments_status, "
    f"arguments_error, extras_json, source, NULL, {_NULLS}, {_NULLS}, id_minted "
    "FROM tool_calls WHERE session_id = ? AND position >= ?",
    "SELECT 3, position, result_index, call_position, call_index, call_id, content_json, name, "
    f"extras_json, source, NULL, NULL, {_NULLS}, {_NULLS}, is_error FROM tool_results "
    "WHERE session_id = ? AND position >= ?",
)
#: The branches as each backend reads a call's wire text (SQLite: rebuilt where stored once).
_LOAD_SQLITE = tuple(sql.replace("{wire}", wire_sql(False)) for sql in _LOAD)
_LOAD_PG = tuple(sql.replace("{wire}", wire_sql(True)) for sql in _LOAD)
#: The ``turns``-th last turn's start: a user message whose first part is not a tool result
#: (``compiled._load_statement``'s window, in SQLite's spelling).
_TURN = ("SELECT position FROM messages WHERE session_id = ? AND role = 'user' AND parts_json "
         "NOT LIKE '[{\"type\":\"tool_result\"%' ORDER BY position DESC LIMIT 1 OFFSET ?")
#: The earliest call a result at or after a position answers.
_EARLIEST = "SELECT min(call_position) FROM tool_results WHERE session_id = ? AND position >= ?"
_ALIASES = ("SELECT json_group_array(json_array(agent, raw_name, current_name)) "
            "FROM tool_aliases")
_PG_ALIASES = ("SELECT json_agg(json_build_array(agent, raw_name, current_name))::text "
               "FROM tool_aliases")
_INFO = f"SELECT {SESSION_COLUMNS} FROM sessions"
_CHUNK = 500


class LiteSession:
    """One read snapshot of an SQLite file or a PostgreSQL database, for showing sessions."""

    def __init__(self, connection: Reader) -> None:
        self._conn = connection
        self._aliases: AliasTable | None = None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> LiteSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def session_id(self, prefix: str) -> str | None:
        """The session ``prefix`` names when that is plain (else the store resolves it)."""
        return lite_session_id(self._conn, prefix)

    def _alias_table(self, text: str | None) -> AliasTable:
        if self._aliases is None:
            self._aliases = AliasTable.from_rows(tuple(row) for row in loads_json(text or "[]"))
        return self._aliases

    def load(self, session_id: str, *, last_turns: int | None = None) -> Transcript:
        """``TranscriptStore.load(session_id, last_turns=...)``: the whole session, or its
        last turns from a start moved back until no result in the window lacks its call."""
        start = 0 if last_turns is None else self._window_start(session_id, last_turns)
        rows: list[Any] = []
        for number, sql in enumerate(_LOAD_PG if is_pg(self._conn) else _LOAD_SQLITE):
            rows += self._conn.execute(sql, (session_id,) if number == 0
                                       else (session_id, start)).fetchall()
        if rows:
            aliases = _PG_ALIASES if is_pg(self._conn) else _ALIASES
            rows.append((4, None, None, None, None, self._conn.execute(aliases).fetchone()[0]))
        from store.db.reading.loaded import transcript_from_rows

        return transcript_from_rows(rows, session_id, read_time, self._alias_table)

    def _window_start(self, session_id: str, turns: int) -> int:
        if turns < 1:
            from store.core.errors import UsageError

            raise UsageError("last_turns must be at least 1")
        found = self._conn.execute(_TURN, (session_id, turns - 1)).fetchone()
        start = 0 if found is None else int(found[0])
        while True:
            (earliest,) = self._conn.execute(_EARLIEST, (session_id, start)).fetchone()
            if earliest is None or earliest >= start:
                return start
            start = int(earliest)

    def sources(self, session_id: str) -> list[SessionSource]:
        """``TranscriptStore.session_sources``."""
        return [SessionSource(path, read_time(read_at), None if gone is None
                              else read_time(gone))
                for path, read_at, gone in self._conn.execute(
                    "SELECT f.path, f.read_at, f.gone_at FROM source_files AS f JOIN "
                    "session_sources AS s ON s.path = f.path WHERE s.session_id = ? "
                    "ORDER BY f.path", (session_id,))]

    def info(self, session_id: str) -> SessionInfo:
        """``TranscriptStore.get_session`` (``SessionNotFound`` when it is not stored)."""
        found = self._conn.execute(_INFO + " WHERE session_id = ?", (session_id,)).fetchone()
        if found is None:
            raise SessionNotFound(session_id)
        return session_info_of(found)

    def _children(self, parents: list[str]) -> list[SessionInfo]:
        out: list[SessionInfo] = []
        for start in range(0, len(parents), _CHUNK):
            chunk = parents[start:start + _CHUNK]
            out += [session_info_of(row) for row in self._conn.execute(
                _INFO + f" WHERE parent_session_id IN ({', '.join('?' * len(chunk))}) "
                "ORDER BY created_at, session_id", chunk)]
        return out

    def ancestors(self, session_id: str) -> list[SessionInfo]:
        """``TranscriptStore.session_ancestors``."""
        return ancestors_of(session_id, self.info)

    def tree(self, session_id: str, max_depth: int = MAX_TREE_DEPTH) -> SessionTree:
        """``TranscriptStore.session_tree``."""
        return tree_of(session_id, self.info, self._children, partial(call_counts, self._conn),
                       max_depth)


def open_show(url: str) -> LiteSession | None:
    """One read snapshot of the SQLite file or PostgreSQL database ``url`` names, at head;
    ``None`` for anything else (the caller opens the store, which words every error)."""
    from store.db.schema.revisions import shipped_head

    conn = open_reader(url, shipped_head)
    if conn is None:
        return None
    try:
        conn.execute("BEGIN")
    except sqlite3.Error:
        conn.close()
        return None
    return LiteSession(conn)
