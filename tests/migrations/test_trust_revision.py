"""Revision 0011 (issue 27): the chains of the messages stored before it are computed by the
upgrade, exactly as the writer computes them; the downgrade drops the trust tables and
columns."""

from __future__ import annotations

from alembic import command
from sqlalchemy import Engine, inspect, text

from store import TranscriptStore
from store.db.schema import migrate

TURN = [
    {"role": "user", "content": "héllo"},
    {"role": "assistant", "content": "ok", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash",
                                                      "arguments": '{"command": "ls"}'}},
        {"id": "c2", "type": "function", "function": {"name": "grep", "arguments": "{bad"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "a\nb"},
    {"role": "tool", "tool_call_id": "c2", "content": "error", "is_error": True},
    {"role": "tool", "tool_call_id": "nobody", "content": "orphan"},
]


def digests(engine: Engine) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT session_id, position, digest FROM messages "
                                 "ORDER BY session_id, position")).all()
        heads = conn.execute(text("SELECT session_id, chain_digest FROM sessions "
                                  "ORDER BY session_id")).all()
    return [tuple(r) for r in [*rows, *heads]]


def test_the_upgrade_computes_the_chains_the_writer_computes(engine: Engine,
                                                              new_url: str) -> None:
    migrate.upgrade(engine)
    with TranscriptStore.open(new_url) as opened:
        opened.append("a", TURN)
        opened.append("b", TURN[:2])
        opened.append("b", TURN[2:])
        opened.create_session("empty")
    written = digests(engine)
    assert all(d for *_, d in written if d is not None)

    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), "0007")
    assert "tombstones" not in inspect(engine).get_table_names()
    assert "digest" not in {c["name"] for c in inspect(engine).get_columns("messages")}
    migrate.upgrade(engine)

    assert digests(engine) == written
    with TranscriptStore.open(new_url) as opened:
        assert opened.verify().ok
        opened.append("a", [{"role": "user", "content": "after"}])
        assert opened.verify().ok
