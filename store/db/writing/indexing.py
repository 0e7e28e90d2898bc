"""Search texts written with their rows (persistence): an import's appends (issue 39).

An import makes each message's index texts where it reads the file
(``store.records.prepared``). When an append carries them, :func:`index_rows` and
:func:`write_indexed` store them in the append's own transaction, as the catch-ups would have
(``store/db/index/search_index.py``, ``store/db/index/message_index.py``): each call's and
result's ``search_body`` (and, on SQLite, its ``search_id`` and its ``search_fts`` entry),
the argument views, the keyed digests of the secrets found, the message index's rows, and
the session's watermarks moved past the append. Nothing is read back and no row is written
twice: on SQLite the catch-up's read and ``UPDATE`` of every call and result go; on
PostgreSQL so does the dead row each ``UPDATE`` left in the table and in each of its indexes.

Each index is written only when the session's watermark stands at the append's first
position (every earlier message indexed: always so for a new session); otherwise the rows go
without texts and the catch-up indexes them from its watermark, as for any append. The texts
are made from the values the rows hold, by the catch-ups' own functions, so either way the
database holds the same thing (``tests/integration/test_inline_index.py`` compares them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from store.db.index.message_index import insert_sqlite_rows
from store.db.index.search_index import KIND_CALL, KIND_RESULT, next_search_id, nul_safe
from store.db.index.secrets import SecretRow, insert_secrets, secret_rows
from store.records.codec import EncodedMessage
from store.records.prepared import IndexTexts

__all__ = ["Indexed", "InlineIndex", "can_write_indexed", "index_rows", "write_indexed"]


@dataclass(frozen=True, slots=True)
class InlineIndex:
    """What a store's database holds of the indexes (read once per store): SQLite's
    ``search_fts`` and message index (an SQLite without FTS5 has neither), the key of the
    secrets' digests."""

    fts: bool
    messages: bool
    key: bytes


_WATERMARKS = ("SELECT indexed_position, message_indexed_position FROM sessions "
               "WHERE session_id = {}")


def can_write_indexed(postgres: bool, encoded: EncodedMessage) -> bool:
    """Whether a message's texts can go with its rows: on PostgreSQL not when a value the
    catch-up would read back differs from the one the texts were made from (NUL, which the
    columns hold as U+FFFD); such an append is indexed by the catch-up."""
    if not postgres:
        return True
    if "\x00" in encoded.text:
        return False
    for call in encoded.calls:
        text = call.call.arguments_text
        if "\x00" in call.call.recorded_name or "\\u0000" in text or "\x00" in text:
            return False
    return True


@dataclass(slots=True)
class Indexed:
    """What :func:`index_rows` left to write after the rows (they reference them)."""

    calls: bool = False  # the calls and results got their texts
    entries: list[tuple[int, str]] = field(default_factory=list)  # search_fts (SQLite)
    views: list[tuple[Any, ...]] = field(default_factory=list)
    secrets: list[SecretRow] = field(default_factory=list)
    messages: int = 0  # the messages the message index took in
    rows: list[tuple[str, int, str, str]] = field(default_factory=list)  # message index
    moved: list[str] = field(default_factory=list)  # the watermarks to move


def index_rows(cursor: Any, postgres: bool, inline: InlineIndex, sid: str, first: int,
               texts: Sequence[tuple[int, IndexTexts]], call_rows: list[tuple[Any, ...]],
               result_rows: list[tuple[Any, ...]]) -> Indexed:
    """Before the rows of an append from position ``first`` on are inserted: when the call
    index's watermark is at ``first``, give ``call_rows`` and ``result_rows`` (the writer's,
    in message order) their search text columns (they then end with ``search_body``,
    ``search_id``); what else the indexes take is returned for :func:`write_indexed`, after
    the rows. ``texts``: each message's (position, texts), in the rows' order."""
    mark = "%s" if postgres else "?"
    cursor.execute(_WATERMARKS.format(mark), (sid,))
    row = cursor.fetchone()
    done = Indexed()
    if row is None:
        return done
    if int(row[0]) == first:
        _calls(cursor, postgres, inline, sid, texts, call_rows, result_rows, done)
        done.calls = True
        done.moved.append(f"indexed_position = {mark}")
    if inline.messages and int(row[1]) == first:
        done.messages = len(texts)
        done.rows = [(sid, position, role, body) for position, made in texts
                     for role, body in made.rows]
        done.moved.append(f"message_indexed_position = {mark}")
    return done


def write_indexed(cursor: Any, postgres: bool, sid: str, after: int, done: Indexed) -> None:
    """After the rows: the full-text entries, argument views, secrets' digests and message
    index rows :func:`index_rows` made, and the watermarks moved to ``after``."""
    mark = "%s" if postgres else "?"
    if done.entries:
        cursor.executemany("INSERT INTO search_fts (rowid, body) VALUES (?, ?)", done.entries)
    insert_secrets(cursor, postgres, done.secrets)
    if done.views:
        cursor.executemany("INSERT INTO call_views (session_id, position, call_index, view, "
                           f"text) VALUES ({mark}, {mark}, {mark}, {mark}, {mark})", done.views)
    if done.rows:
        _messages(cursor, postgres, done.rows)
    if done.moved:
        cursor.execute(f"UPDATE sessions SET {', '.join(done.moved)} WHERE session_id = {mark}",
                       (*([after] * len(done.moved)), sid))


def _calls(cursor: Any, postgres: bool, inline: InlineIndex, sid: str,
           texts: Sequence[tuple[int, IndexTexts]], call_rows: list[tuple[Any, ...]],
           result_rows: list[tuple[Any, ...]], done: Indexed) -> None:
    next_id = 0 if postgres else next_search_id(cursor)
    entries, views, secrets = done.entries, done.views, done.secrets
    c = r = 0
    for position, made in texts:
        for index, (body, found, call_views) in enumerate(made.calls):
            search_id = None
            if not postgres:
                search_id, next_id = next_id, next_id + 1
                if inline.fts:
                    entries.append((search_id, body))
            call_rows[c] = (*call_rows[c], nul_safe(body) if postgres else body, search_id)
            c += 1
            if found:
                secrets += secret_rows(inline.key, sid, position, KIND_CALL, index, position,
                                       index, found)
            views += [(sid, position, index, view, value) for view, value in call_views]
        for index, (body, found) in enumerate(made.results):
            search_id = None
            if not postgres:
                search_id, next_id = next_id, next_id + 1
                if inline.fts:
                    entries.append((search_id, body))
            stored = result_rows[r]
            result_rows[r] = (*stored, nul_safe(body) if postgres else body, search_id)
            r += 1
            if found:
                secrets += secret_rows(inline.key, sid, position, KIND_RESULT, index,
                                       stored[4], stored[5], found)
    if c != len(call_rows) or r != len(result_rows):  # pragma: no cover - a writer change
        raise AssertionError("index texts do not match the rows they were made for")


def _messages(cursor: Any, postgres: bool, rows: list[tuple[str, int, str, str]]) -> None:
    if postgres:
        cursor.executemany("INSERT INTO message_search (session_id, position, role, body) "
                           "VALUES (%s, %s, %s, %s)", rows)
    else:
        insert_sqlite_rows(cursor, rows)

