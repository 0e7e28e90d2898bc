"""Issue 34: Cursor's databases are read by the rows a chat needs and never past them (the
editor's secrets stay unread), read while Cursor writes them, and cursor-agent's common file
name ``store.db`` claims no other database."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from agent_databases import build_home

from store.core.errors import ImportFileError
from store.importers.agentdb import read_agent_db

MAIN = "7c1e2d3f-4a5b-4c6d-8e9f-a0b1c2d3e4f5"


def test_the_editor_database_gives_chats_and_never_its_secrets(tmp_path: Path) -> None:
    linux, _ = build_home("cursor", tmp_path)
    parsed = read_agent_db(linux, settle=0)
    assert sorted(s.session_id for s in parsed.sessions) == [
        MAIN, "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"]
    seen = repr(parsed)  # (every session, message, metadata value and count)
    for secret in ("not-a-real-key", "speculativeSummarizationEncryptionKey", "not-read",
                   "cursorAuth", "checkpointId"):
        assert secret not in seen
    assert parsed.skipped == {"cursor: a chat without messages": 1,
                              "cursor: a bubble no composer lists": 1}
    assert parsed.problems == []


def test_the_editor_database_is_read_while_cursor_writes_it(tmp_path: Path) -> None:
    linux, _ = build_home("cursor", tmp_path)
    writer = sqlite3.connect(linux, isolation_level=None)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        key = f"composerData:{MAIN}"
        data = json.loads(writer.execute("SELECT value FROM cursorDiskKV WHERE key = ?",
                                         (key,)).fetchone()[0])
        data["fullConversationHeadersOnly"].append({"bubbleId": "b-u3", "type": 1})
        writer.execute("BEGIN")
        writer.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?",
                       (json.dumps(data), key))
        writer.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (
            f"bubbleId:{MAIN}:b-u3", json.dumps({"type": 1, "bubbleId": "b-u3",
                                                  "text": "And log refusals"})))
        writer.execute("COMMIT")  # committed, the editor still holding the database open
        assert Path(f"{linux}-wal").exists() and Path(f"{linux}-shm").exists()
        writer.execute("BEGIN IMMEDIATE")  # a write under way is not seen
        writer.execute("DELETE FROM cursorDiskKV WHERE key LIKE 'bubbleId:%'")
        parsed = read_agent_db(linux, settle=0)
        writer.execute("ROLLBACK")
    finally:
        writer.close()
    main = next(s for s in parsed.sessions if s.session_id == MAIN)
    assert main.keys[-1] == "b-u3" and main.items[-1].text == "And log refusals"
    assert len(main.items) == 15


def _chat(tmp_path: Path) -> Path:
    main, _, _ = build_home("cursor-cli", tmp_path)
    return main


def test_a_store_db_that_is_not_cursor_agents_is_not_read_as_its(tmp_path: Path) -> None:
    other = tmp_path / "app" / "store.db"
    other.parent.mkdir()
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT, extra TEXT)")
        conn.execute("CREATE TABLE blobs (id TEXT, data BLOB)")
    conn.close()
    with pytest.raises(ImportFileError, match="not one of an agent"):
        read_agent_db(other, settle=0)
    foreign = tmp_path / "kv" / "store.db"  # the agent's tables, another program's rows
    foreign.parent.mkdir()
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
        conn.execute("CREATE TABLE blobs (id TEXT, data BLOB)")
        conn.execute("INSERT INTO meta VALUES ('0', 'schema version 3')")
    conn.close()
    parsed = read_agent_db(foreign, settle=0)
    assert parsed.sessions == [] and len(parsed.problems) == 1
    assert "not the agent's" in parsed.problems[0].message


def test_the_cwd_is_only_a_path_whose_md5_names_the_chats_folder(tmp_path: Path) -> None:
    chat = _chat(tmp_path)
    assert read_agent_db(chat, settle=0).sessions[0].cwd == "/home/u/api"
    moved = tmp_path / "elsewhere" / ("0" * 32) / chat.parent.name / "store.db"
    moved.parent.mkdir(parents=True)
    shutil.copy(chat, moved)
    session = read_agent_db(moved, settle=0).sessions[0]
    assert session.cwd is None and len(session.items) == 9
