"""Revision 0007 (issue 15): the argument views leave ``tool_calls`` for ``call_views``,
derived data of the search catch-up. The views of calls below the watermark are copied, those
at or after it are computed by the next catch-up (and found by a search before that); the
downgrade puts the columns back, computed for every call."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import command
from sqlalchemy import Engine, inspect, text

from store import CallQuery, TranscriptStore, ViewCondition, search_calls
from store.db.schema import migrate

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def at_0006_with_views(engine: Engine) -> None:
    """A database at revision 0006, as its writer left it: one session whose first message is
    caught up (watermark 1) and whose second is not, each with a shell call and its view."""
    migrate.upgrade(engine, "0006")
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO sessions (session_id, tags_json, metadata_json, created_at, updated_at, "
            "next_position, indexed_position) VALUES ('s', '[]', '{}', :t, :t, 2, 1)"), {"t": NOW})
        for position, command_text in ((0, "rm -rf build"), (1, "rm -rf dist")):
            conn.execute(text(
                "INSERT INTO messages (session_id, position, role, text, parts_json, created_at) "
                "VALUES ('s', :p, 'assistant', '', :parts, :t)"
            ), {"p": position, "t": NOW, "parts": '[{"type":"tool_call","index":0}]'})
            arguments = '{"command":"' + command_text + '"}'
            wire = ('{"id":"c' + str(position) + '","type":"function","function":{"name":"bash",'
                    '"arguments":' + '"' + arguments.replace('"', '\\"') + '"}}')
            conn.execute(text(
                "INSERT INTO tool_calls (session_id, position, call_index, call_id, id_minted, "
                "raw_name, wire_json, arguments_status, arguments, command_text) VALUES "
                "('s', :p, 0, :cid, false, 'bash', :wire, 'ok', :args, :cmd)"
            ), {"p": position, "cid": f"c{position}", "wire": wire, "args": arguments,
                "cmd": command_text})


def views(engine: Engine) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(
            "SELECT session_id, position, call_index, view, text FROM call_views "
            "ORDER BY position"))]


def test_the_upgrade_copies_the_caught_up_views_and_leaves_the_rest_to_the_catch_up(
    engine: Engine, new_url: str
) -> None:
    at_0006_with_views(engine)

    migrate.upgrade(engine, "0007")

    assert views(engine) == [("s", 0, 0, "command", "rm -rf build")]
    columns = {c["name"] for c in inspect(engine).get_columns("tool_calls")}
    assert not columns & {"command_text", "path_text", "pattern_text", "url_text"}
    migrate.upgrade(engine)  # (revision 0011 forgets the index: it is filled again redacted)
    query = CallQuery(views=(ViewCondition("command", "rm -rf"),))
    with TranscriptStore.open(new_url, read_only=True) as reader:  # the tail, scanned
        assert [m.call_id for m in search_calls(reader, query)] == ["c0", "c1"]
    with TranscriptStore.open(new_url) as writer:  # caught up first
        assert [m.call_id for m in search_calls(writer, query)] == ["c0", "c1"]
    assert views(engine) == [("s", 0, 0, "command", "rm -rf build"),
                             ("s", 1, 0, "command", "rm -rf dist")]


def test_the_downgrade_puts_every_view_back_in_its_column(engine: Engine) -> None:
    at_0006_with_views(engine)
    migrate.upgrade(engine)

    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), "0006")

    assert "call_views" not in inspect(engine).get_table_names()
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT position, command_text FROM tool_calls "
                                 "ORDER BY position")).all()
    assert [tuple(r) for r in rows] == [(0, "rm -rf build"), (1, "rm -rf dist")]
    indexes = {ix["name"] for ix in inspect(engine).get_indexes("tool_calls")}
    assert {"ix_tool_calls_command", "ix_tool_calls_raw_name"} <= indexes
