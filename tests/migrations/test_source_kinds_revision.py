"""Revision 0019 (issue 33): ``source_files.kinds_json``. The upgrade keeps every source
file's state (the account of files read before it is NULL: not invented); the downgrade drops
the column and loses no row."""

from __future__ import annotations

from sqlalchemy import Engine, inspect, text

from store.db.schema import migrate


def test_upgrade_keeps_the_states_and_downgrade_loses_no_row(engine: Engine) -> None:
    """On a new, empty database of each backend (tests/migrations/conftest.py)."""
    migrate.upgrade(engine, "0018")
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO source_files (path, identity, size, mtime_ns, read_offset, "
            "read_lines, digest, format, context_json, pending, read_at) VALUES "
            "('/a.jsonl', '1:2', 10, 5, 10, 1, 'd', 'codex', '[]', false, "
            "'2026-12-02 10:00:00')"))
    migrate.upgrade(engine, "0019")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT path, kinds_json FROM source_files")).all()
    assert [tuple(r) for r in rows] == [("/a.jsonl", None)]
    with engine.begin() as conn:
        conn.execute(text("UPDATE source_files SET kinds_json = :kinds"),
                     {"kinds": '{"event_msg": {"skipped": 3}}'})
    migrate.downgrade(engine, "0018")
    columns = {c["name"] for c in inspect(engine).get_columns("source_files")}
    assert "kinds_json" not in columns
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM source_files")).scalar() == 1
