"""Revision 0015 (issue 26, lineage): ``sessions.parent_session_id``, ``lineage`` and
``parent_call_id`` with ``ix_sessions_parent``, filled for sessions stored before it from what
their metadata held (Claude Code subagents, forks, Codex spawned threads, Gemini CLI
subagents by their file's folder); the downgrade drops them."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from alembic import command
from sqlalchemy import Engine, inspect, text

from store import SessionLink, TranscriptStore
from store.db.schema import migrate

NOW = datetime(2026, 12, 1, tzinfo=UTC)

#: The revision just before 0015.
BEFORE = "0014"

#: Sessions as importers before revision 0015 stored them: (id, metadata, source file).
STORED = [
    ("parent", {"version": "2.1.0"}, None),
    ("parent:agent-a1", {"parent_session": "parent", "agent_id": "a1",
                         "parent_call_id": "toolu_1"}, None),
    ("parent:sidechain", {"parent_session": "parent"}, None),
    ("forked", {"forked_from": {"session_id": "parent", "position": 3}}, None),
    ("codex-child", {"source": {"subagent": {"thread_spawn": {
        "parent_thread_id": "codex-parent", "depth": 1}}}}, None),
    ("codex-review", {"source": {"subagent": "review"}}, None),
    ("gemini-sub", {"kind": "subagent"},
     "/home/u/.gemini/tmp/abc/chats/gemini-main/gemini-sub.jsonl"),
    ("gemini-main", {"kind": "main"}, "/home/u/.gemini/tmp/abc/chats/session-1.jsonl"),
    ("broken", "not json", None),
]


def at_0011_with_sessions(engine: Engine) -> None:
    migrate.upgrade(engine, BEFORE)
    with engine.begin() as conn:
        for sid, meta, path in STORED:
            conn.execute(text(
                "INSERT INTO sessions (session_id, tags_json, metadata_json, created_at, "
                "updated_at, next_position, indexed_position) VALUES "
                "(:s, '[]', :m, :t, :t, 0, 0)"),
                {"s": sid, "m": meta if isinstance(meta, str) else json.dumps(meta), "t": NOW})
            if path is not None:
                conn.execute(text("INSERT INTO session_sources (session_id, path) "
                                  "VALUES (:s, :p)"), {"s": sid, "p": path})
        conn.execute(text("INSERT INTO messages (session_id, position, role, text, parts_json, "
                          "created_at) VALUES ('parent', 0, 'user', 'hi', '[]', :t)"),
                     {"t": NOW})


def test_the_upgrade_fills_the_links_from_the_stored_metadata(engine: Engine,
                                                              new_url: str) -> None:
    at_0011_with_sessions(engine)

    migrate.upgrade(engine, "0015")

    columns = {c["name"] for c in inspect(engine).get_columns("sessions")}
    assert {"parent_session_id", "lineage", "parent_call_id"} <= columns
    assert "ix_sessions_parent" in {i["name"] for i in inspect(engine).get_indexes("sessions")}
    with engine.connect() as conn:
        rows = {r[0]: tuple(r[1:]) for r in conn.execute(text(
            "SELECT session_id, parent_session_id, lineage, parent_call_id FROM sessions"))}
    assert rows == {
        "parent": (None, None, None),
        "parent:agent-a1": ("parent", "subagent", "toolu_1"),
        "parent:sidechain": ("parent", "subagent", None),
        "forked": ("parent", "fork", None),
        "codex-child": ("codex-parent", "subagent", None),
        "codex-review": (None, None, None),
        "gemini-sub": ("gemini-main", "subagent", None),
        "gemini-main": (None, None, None),
        "broken": (None, None, None),
    }
    migrate.upgrade(engine)
    with TranscriptStore.open(new_url, read_only=True) as opened:
        assert opened.get_session("parent:agent-a1").parent == SessionLink(
            "parent", "subagent", "toolu_1")
        assert [s.session_id for s in opened.session_children("parent")] == [
            "forked", "parent:agent-a1", "parent:sidechain"]  # (stored at once: by id)


def messages(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT count(*) FROM messages")).scalar_one())


def test_the_downgrade_drops_the_columns_and_keeps_the_metadata(engine: Engine) -> None:
    at_0011_with_sessions(engine)
    with engine.begin() as conn:  # (a connection with SQLite's foreign keys on)
        command.upgrade(migrate._config(conn), "0015")
    assert messages(engine) == 1  # sessions altered in place: no cascade from a copy-and-move

    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), BEFORE)

    assert messages(engine) == 1

    columns = {c["name"] for c in inspect(engine).get_columns("sessions")}
    assert not {"parent_session_id", "lineage", "parent_call_id"} & columns
    with engine.connect() as conn:
        kept = conn.execute(text("SELECT metadata_json FROM sessions "
                                 "WHERE session_id = 'parent:agent-a1'")).scalar_one()
    assert json.loads(kept)["parent_call_id"] == "toolu_1"
