"""Revision 0016 (issues 33 and 37, a session's own activity): ``sessions.started_at`` and
``last_activity_at`` with ``ix_sessions_last_activity``, filled for the sessions stored before
it from their messages' own times (never the import's clock in ``updated_at``); the
downgrade drops them and loses no row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alembic import command
from sqlalchemy import Engine, inspect, text

from store import TranscriptStore
from store.db.schema import migrate

#: When the rows were "imported": the store's clock, in created_at / updated_at.
IMPORTED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
#: The sessions' own times: their messages'.
OLD = datetime(2020, 3, 1, 10, 0, tzinfo=UTC)
RECENT = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)

#: (session, message times)
STORED = [("old", [OLD, OLD + timedelta(hours=2), OLD + timedelta(hours=1)]),
          ("recent", [RECENT]),
          ("empty", [])]


def at_0015_with_sessions(engine: Engine) -> None:
    migrate.upgrade(engine, "0015")
    with engine.begin() as conn:
        for sid, times in STORED:
            conn.execute(text(
                "INSERT INTO sessions (session_id, tags_json, metadata_json, created_at, "
                "updated_at, next_position, indexed_position) VALUES "
                "(:s, '[]', '{}', :t, :t, :n, 0)"), {"s": sid, "t": IMPORTED, "n": len(times)})
            for position, at in enumerate(times):
                conn.execute(text(
                    "INSERT INTO messages (session_id, position, role, text, parts_json, "
                    "created_at) VALUES (:s, :p, 'user', 'hi', '[]', :t)"),
                    {"s": sid, "p": position, "t": at})


def counts(engine: Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        return (int(conn.execute(text("SELECT count(*) FROM sessions")).scalar_one()),
                int(conn.execute(text("SELECT count(*) FROM messages")).scalar_one()))


def test_the_upgrade_fills_the_activity_from_the_messages_own_times(engine: Engine,
                                                                     new_url: str) -> None:
    at_0015_with_sessions(engine)

    migrate.upgrade(engine, "0016")

    columns = {c["name"] for c in inspect(engine).get_columns("sessions")}
    assert {"started_at", "last_activity_at"} <= columns
    assert "ix_sessions_last_activity" in {
        i["name"] for i in inspect(engine).get_indexes("sessions")}
    migrate.upgrade(engine)
    with TranscriptStore.open(new_url, read_only=True) as opened:
        spans = {s.session_id: (s.started_at, s.ended_at, s.created_at)
                 for s in opened.list_sessions()}
        assert spans == {
            "old": (OLD, OLD + timedelta(hours=2), IMPORTED),  # the latest, not the last row
            "recent": (RECENT, RECENT, IMPORTED),
            "empty": (None, None, IMPORTED),  # no activity yet
        }
        # Listed, and pruned, by their own activity, not by when they were imported.
        assert [s.session_id for s in opened.list_sessions()] == ["empty", "recent", "old"]
        cutoff = RECENT - timedelta(days=365)
        assert [s for s, *_ in opened.prune_candidates(cutoff)] == ["old"]


def test_the_downgrade_drops_the_columns_and_loses_no_row(engine: Engine) -> None:
    at_0015_with_sessions(engine)
    with engine.begin() as conn:  # (a connection with SQLite's foreign keys on)
        command.upgrade(migrate._config(conn), "0016")
    assert counts(engine) == (3, 4)  # altered in place: no cascade from a copy-and-move

    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), "0015")

    assert counts(engine) == (3, 4)
    columns = {c["name"] for c in inspect(engine).get_columns("sessions")}
    assert not {"started_at", "last_activity_at"} & columns
    assert "ix_sessions_last_activity" not in {
        i["name"] for i in inspect(engine).get_indexes("sessions")}
    migrate.upgrade(engine)  # and back up, filled again
    with engine.connect() as conn:
        again = conn.execute(text("SELECT last_activity_at FROM sessions "
                                  "WHERE session_id = 'old'")).scalar_one()
    assert again is not None
