"""Revision 0017 (issue 35 item 2, message search): ``message_search`` with its engine's index
(SQLite ``message_fts``, PostgreSQL the GIN over ``tsv``), ``sessions.message_indexed_position``
and ``ix_sessions_messages_behind``. Nothing is indexed by the upgrade: messages stored before
it are indexed by the next catch-up; the downgrade drops what it made and loses no row."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from alembic import command
from sqlalchemy import Engine, inspect, text

from store import TranscriptStore
from store.db.schema import migrate

NOW = datetime(2026, 12, 2, tzinfo=UTC)
BEFORE = "0015"


def at_0015_with_messages(engine: Engine) -> None:
    migrate.upgrade(engine, BEFORE)
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO sessions (session_id, tags_json, metadata_json, created_at, updated_at, "
            "next_position, indexed_position) VALUES ('old', '[]', '{}', :t, :t, 2, 0)"),
            {"t": NOW})
        for position, role, said in ((0, "user", "tell me about LM Studio"),
                                     (1, "assistant", "LM Studio runs models locally")):
            conn.execute(text(
                "INSERT INTO messages (session_id, position, role, text, parts_json, created_at) "
                "VALUES ('old', :p, :r, :x, :parts, :t)"),
                {"p": position, "r": role, "x": said, "t": NOW,
                 "parts": json.dumps([{"type": "text", "text": said}])})


def tables(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names())


def test_the_upgrade_adds_an_empty_index_the_catch_up_fills(engine: Engine,
                                                             new_url: str) -> None:
    at_0015_with_messages(engine)

    migrate.upgrade(engine, "0017")

    assert "message_search" in tables(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM message_search")).scalar_one() == 0
        assert conn.execute(text("SELECT message_indexed_position FROM sessions")).scalar_one() \
            == 0
    migrate.upgrade(engine, "head")  # (a store opens at head: the later revisions too)
    with TranscriptStore.open(new_url) as opened:
        assert opened.messages_behind() == 1
        hits = opened.search_messages("lm studio")  # (a writable store catches up first)
    assert sorted((h.session_id, h.position) for h in hits) == [("old", 0), ("old", 1)]


def test_the_downgrade_drops_the_index_and_keeps_every_row(engine: Engine,
                                                          new_url: str) -> None:
    at_0015_with_messages(engine)
    with engine.begin() as conn:  # (a connection with SQLite's foreign keys on)
        command.upgrade(migrate._config(conn), "head")  # (a store opens at head)
    with TranscriptStore.open(new_url) as opened:
        opened.update_search_index()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM message_search")).scalar_one() == 2

    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), BEFORE)

    assert not {"message_search", "message_fts"} & tables(engine)
    columns = {c["name"] for c in inspect(engine).get_columns("sessions")}
    assert "message_indexed_position" not in columns
    indexes = {i["name"] for i in inspect(engine).get_indexes("sessions")}
    assert "ix_sessions_messages_behind" not in indexes
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM messages")).scalar_one() == 2
        assert conn.execute(text("SELECT count(*) FROM sessions")).scalar_one() == 1
