"""Erasure that erases, legal holds and retention (issue 27), on both backends: the erased
text is searched for in the database's bytes (SQLite: the file and its WAL; PostgreSQL: what
``pg_dump`` sees)."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from store import (
    CallQuery,
    RetentionPolicy,
    SessionHeldError,
    SessionNotFound,
    normalize_message,
    search_calls,
)
from store.core.errors import ConfigurationError, UsageError
from store.trust.retention import parse_duration

SECRET = "Zq7-erase-me-4711-Marker"


def turn(marker: str) -> list[dict]:
    return [
        {"role": "user", "content": f"please look at {marker}"},
        {"role": "assistant", "content": f"reading {marker}", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "bash", "arguments": f'{{"command": "cat {marker}.txt"}}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": f"contents of {marker} " * 20},
    ]


def database_bytes(store) -> bytes:
    """Everything the database holds that a copy of it would hand over."""
    if store.dialect == "sqlite":
        path = Path(store.engine.url.database)
        wal = Path(f"{path}-wal")
        return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    url = store.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    return subprocess.run(["pg_dump", "--data-only", url], check=True,
                          capture_output=True).stdout


class TestErase:
    def test_erased_text_is_gone_from_rows_index_and_bytes(self, store):
        store.append("keep", turn("innocent"))
        store.append("gone", turn(SECRET))
        store.update_search_index()
        assert search_calls(store, CallQuery(text=SECRET))
        assert SECRET.encode() in database_bytes(store)

        receipts = store.erase(["gone"], reason="subject request 12", actor="dpo")

        assert [(r.session_id, r.kind, r.messages, r.reason, r.actor) for r in receipts] == [
            ("gone", "erase", 3, "subject request 12", "dpo")]
        assert receipts[0].digest and receipts[0].scrub
        assert SECRET.encode() not in database_bytes(store)
        assert search_calls(store, CallQuery(text=SECRET)) == []
        assert search_calls(store, CallQuery(text="innocent"))  # the rest is still found
        with pytest.raises(SessionNotFound):
            store.load("gone")
        assert store.load("keep").session.message_count == 3
        assert store.verify().ok

    def test_a_tombstone_says_what_happened(self, store):
        store.append("gone", turn(SECRET))
        with store.engine.connect() as conn:
            digest = conn.execute(text("SELECT chain_digest FROM sessions")).scalar_one()
        store.erase(["gone"], reason="leaked token")
        (stone,) = store.tombstones("gone")
        assert (stone.kind, stone.messages, stone.digest, stone.reason, stone.start_position) == (
            "erase", 3, digest, "leaked token", 0)
        assert datetime.now(UTC) - stone.erased_at < timedelta(minutes=5)

    def test_several_at_once_are_all_or_nothing(self, store):
        store.append("a", turn("first"))
        store.append("b", turn("second"))
        with pytest.raises(SessionNotFound):
            store.erase(["a", "missing"], reason="r")
        assert store.count_sessions() == 2 and store.tombstones() == []
        store.erase(["a", "b"], reason="r")
        assert store.count_sessions() == 0 and len(store.tombstones()) == 2

    def test_a_reason_is_required(self, store):
        store.append("a", turn("x"))
        with pytest.raises(UsageError, match="reason"):
            store.erase(["a"], reason=" ")

    def test_delete_leaves_a_tombstone_too(self, store):
        store.append("a", turn("x"))
        store.delete_session("a")
        assert [t.kind for t in store.tombstones("a")] == ["delete"]
        assert store.verify().ok


class TestHold:
    def test_a_held_session_cannot_be_erased_deleted_or_pruned(self, store):
        store.append("a", turn("evidence"))
        store.append("b", turn("other"))
        hold = store.hold("a", "litigation 2026-17", actor="legal")
        assert (hold.session_id, hold.reason) == ("a", "litigation 2026-17")
        with pytest.raises(SessionHeldError) as caught:
            store.erase(["b", "a"], reason="cleanup")
        assert (caught.value.session_id, caught.value.reason) == ("a", "litigation 2026-17")
        assert store.count_sessions() == 2  # b was not erased either
        with pytest.raises(SessionHeldError):
            store.delete_session("a")
        future = datetime.now(UTC) + timedelta(days=1)
        assert [r.session_id for r in store.prune(future, dry_run=True)] == ["b"]
        assert [r.session_id for r in store.prune(future)] == ["b"]
        assert store.get_session("a").message_count == 3
        assert store.release("a") is True and store.release("a") is False
        store.erase(["a"], reason="case closed")
        assert store.count_sessions() == 0

    def test_holding_an_unknown_session_fails(self, store):
        with pytest.raises(SessionNotFound):
            store.hold("nope", "r")


class TestPrune:
    def _aged(self, store, sid: str, days: int, agent: str | None = None) -> None:
        """A session last active ``days`` ago by its messages' own times, stored now (the
        import's clock is not its age)."""
        when = (datetime.now(UTC) - timedelta(days=days)).isoformat()
        store.append(sid, [replace(normalize_message(record), metadata={"timestamp": when})
                           for record in turn(sid)], agent=agent)

    def test_prune_erases_old_sessions_only(self, store):
        self._aged(store, "old", 200)
        self._aged(store, "new", 10)
        cutoff = datetime.now(UTC) - parse_duration("90d")
        assert [r.session_id for r in store.prune(cutoff, dry_run=True)] == ["old"]
        assert store.count_sessions() == 2
        receipts = store.prune(cutoff)
        assert [(r.session_id, r.kind) for r in receipts] == [("old", "prune")]
        assert [s.session_id for s in store.list_sessions()] == ["new"]
        assert store.verify().ok

    def test_prune_by_agent_and_policy(self, store):
        self._aged(store, "codex-old", 100, agent="codex")
        self._aged(store, "claude-old", 100, agent="claude-code")
        self._aged(store, "claude-older", 400, agent="claude-code")
        cutoff = datetime.now(UTC) - timedelta(days=90)
        assert [r.session_id for r in store.prune(cutoff, agent="codex", dry_run=True)] == [
            "codex-old"]
        policy = RetentionPolicy.from_mapping({"older_than": "365d",
                                               "agents": {"codex": "90d"}})
        receipts = store.apply_retention(policy)
        assert sorted(r.session_id for r in receipts) == ["claude-older", "codex-old"]
        assert [s.session_id for s in store.list_sessions()] == ["claude-old"]


def test_durations_and_policies_are_checked():
    assert parse_duration("90d") == timedelta(days=90)
    assert parse_duration("2w") == timedelta(weeks=2)
    for bad in ("90", "0d", "ninety days", "-3d"):
        with pytest.raises(UsageError):
            parse_duration(bad)
    with pytest.raises(ConfigurationError, match="olderthan"):
        RetentionPolicy.from_mapping({"olderthan": "90d"})
    with pytest.raises(ConfigurationError, match="duration"):
        RetentionPolicy.from_mapping({"agents": {"codex": "soon"}})
