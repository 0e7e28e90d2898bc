"""Revision 0018 (issue 38): an existing database gets a transparency log: the upgrade logs
the tombstones and holds already stored (salted leaves) and a new origin; the first log
command logs every message (off the append path); the downgrade drops the log and keeps
every row of the archive."""

from __future__ import annotations

from alembic import command
from sqlalchemy import Engine, inspect, text

from store import TranscriptStore
from store.db.schema import migrate
from store.tlog import verifier
from store.tlog.note import Signer

TURN = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]


def test_an_existing_database_gets_its_log(engine: Engine, new_url: str) -> None:
    migrate.upgrade(engine)
    with TranscriptStore.open(new_url) as opened:
        opened.append("a", TURN)
        opened.append("b", TURN)
        opened.append("c", TURN)
        opened.hold("b", "litigation")
        opened.erase(["c"], reason="request")
    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), "0015")
    assert "log_leaves" not in inspect(engine).get_table_names()
    assert "logged_position" not in {c["name"] for c in inspect(engine).get_columns("sessions")}
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM messages")).scalar() == 4
    migrate.upgrade(engine)
    with engine.connect() as conn:
        kinds = [r[0] for r in conn.execute(text(
            "SELECT kind FROM log_leaves ORDER BY leaf_index"))]
    assert sorted(kinds) == ["hold", "tombstone"]  # the messages wait for the catch-up
    signer = Signer.generate("test.invalid/key")
    with TranscriptStore.open(new_url) as opened:
        assert opened.log_head().size == 6
        assert opened.verify().ok
        bundle = opened.log_prove("a", 1, signer)
        assert verifier.verify_text(bundle, str(signer.verifier)).size == 6
