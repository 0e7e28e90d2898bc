"""Revision 0008 (issues 24 and 26): ``message_usage``, and on SQLite a full-text index that
sqlite-utils and Datasette can read (external content over ``search_items.body`` instead of a
contentless FTS5 table). The upgrade carries the index over (the text of every item indexed
so far, computed again, the index rebuilt from it); the downgrade puts the contentless table
back with the same rows."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import command
from sqlalchemy import Engine, inspect, text

from store import CallQuery, TranscriptStore, search_calls
from store.db.index.search_schema import fts_trigrams
from store.db.schema import migrate
from store.records.searchtext import call_search_text, result_search_text

NOW = datetime(2026, 11, 30, tzinfo=UTC)
CONTENT = '"src/a.py:1: haystack-in-result"'
WIRE = ('{"id":"c0","type":"function","function":{"name":"bash",'
        '"arguments":"{\\"command\\":\\"grep -rn needle-in-call src\\"}"}}')


def at_0007_indexed(engine: Engine) -> None:
    """A database at 0007 as its catch-up left it: one call and its result, both indexed
    (SQLite: the decoded text only in the contentless FTS table, search_items.body NULL)."""
    migrate.upgrade(engine, "0007")
    sqlite = engine.dialect.name == "sqlite"
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO sessions (session_id, tags_json, metadata_json, created_at, updated_at, "
            "next_position, indexed_position) VALUES ('s', '[]', '{}', :t, :t, 2, 2)"), {"t": NOW})
        for position, role in ((0, "assistant"), (1, "tool")):
            conn.execute(text(
                "INSERT INTO messages (session_id, position, role, text, parts_json, created_at) "
                "VALUES ('s', :p, :r, '', '[]', :t)"), {"p": position, "r": role, "t": NOW})
        conn.execute(text(
            "INSERT INTO tool_calls (session_id, position, call_index, call_id, id_minted, "
            "raw_name, wire_json, arguments_status, arguments) VALUES "
            "('s', 0, 0, 'c0', false, 'bash', :wire, 'ok', :args)"),
            {"wire": WIRE, "args": '{"command":"grep -rn needle-in-call src"}'})
        conn.execute(text(
            "INSERT INTO tool_results (session_id, position, result_index, call_id, "
            "call_position, call_index, is_error, content_json) VALUES "
            "('s', 1, 0, 'c0', 0, 0, false, :content)"),
            {"content": CONTENT})
        if sqlite:
            conn.execute(text(
                "INSERT INTO search_items (id, session_id, position, kind, item_index, "
                "call_position, call_index) VALUES (1, 's', 0, 0, 0, 0, 0), "
                "(2, 's', 1, 1, 0, 0, 0)"))
            conn.execute(text(
                "INSERT INTO search_fts (rowid, body) VALUES "
                "(1, 'command\ngrep -rn needle-in-call src'), "
                "(2, 'src/a.py:1: haystack-in-result')"))
        else:
            conn.execute(text(
                "INSERT INTO search_items (session_id, position, kind, item_index, "
                "call_position, call_index, body) VALUES "
                "('s', 0, 0, 0, 0, 0, 'command\ngrep -rn needle-in-call src'), "
                "('s', 1, 1, 0, 0, 0, 'src/a.py:1: haystack-in-result')"))


def found(url: str, needle: str) -> list[str]:
    with TranscriptStore.open(url, read_only=True) as reader:
        return [m.call_id for m in search_calls(reader, CallQuery(text=needle))]


def test_the_upgrade_adds_message_usage_and_keeps_the_search_index(
    engine: Engine, new_url: str
) -> None:
    at_0007_indexed(engine)

    migrate.upgrade(engine, "0008")  # (0011 forgets the unredacted index: test_trust_revision)

    assert "message_usage" in inspect(engine).get_table_names()
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            bodies = conn.execute(text("SELECT id, body FROM search_items ORDER BY id")).all()
            scanned = conn.execute(text("SELECT rowid, body FROM search_fts ORDER BY rowid")
                                   ).all()  # a contentless table could not be scanned
            sql = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = 'search_fts'")
                               ).scalar_one()
        assert [tuple(r) for r in bodies] == [
            (1, call_search_text(WIRE)), (2, result_search_text(CONTENT))]
        assert [tuple(r) for r in scanned] == [tuple(r) for r in bodies]
        assert 'content="search_items"' in sql  # the spelling Datasette detects
    migrate.upgrade(engine)  # to head: 0011 forgets the unredacted text, searches still find
    assert found(new_url, "needle-in-call") == ["c0"]
    assert found(new_url, "haystack-in") == ["c0"]


def test_the_downgrade_puts_the_contentless_index_back(engine: Engine) -> None:
    at_0007_indexed(engine)
    migrate.upgrade(engine, "0008")

    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), "0007")

    assert "message_usage" not in inspect(engine).get_table_names()
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            sql = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = 'search_fts'")
                               ).scalar_one()
            assert conn.execute(text("SELECT count(*) FROM search_items WHERE body IS NOT NULL")
                                ).scalar_one() == 0
            hits = [conn.execute(text("SELECT rowid FROM search_fts WHERE search_fts MATCH :q"),
                                 {"q": f'"{needle}"'}).scalars().all()
                    for needle in ("needle-in-call", "haystack-in")]
        assert "content=''" in sql
        assert hits == [[1], [2]]


def test_a_deleted_session_leaves_no_text_in_the_index(engine: Engine, new_url: str) -> None:
    at_0007_indexed(engine)
    migrate.upgrade(engine)

    with TranscriptStore.open(new_url) as writer:
        writer.delete_session("s")

    if engine.dialect.name == "sqlite":
        with engine.begin() as conn:
            left = conn.execute(text("SELECT count(*) FROM search_fts WHERE search_fts "
                                     "MATCH :q"),  # (no positions since 0021: trigrams)
                                {"q": fts_trigrams("needle-in-call")}).scalar_one()
            conn.execute(text("INSERT INTO search_fts (search_fts) VALUES "
                              "('integrity-check')"))  # raises on an index out of step
        assert left == 0
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM search_items")).scalar_one() == 0
