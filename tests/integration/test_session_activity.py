"""A session's own activity (issues 33 item 5, 37 item 1; revision 0016) on both backends: a
session whose messages are from 2020, imported today, is old to every listing, filter, sort
and retention; a session active yesterday is not; appends keep the activity current from
the agent's own times, else the append's. And (issue 33 item 4) a call's result state and its
arguments' state have two names."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

import store
from store import Message, RetentionPolicy, TextPart, TranscriptStore
from store.cli.main import cli

OLD_SID = "aaaa0000-0000-4000-8000-000000002020"
RECENT_SID = "bbbb0000-0000-4000-8000-000000000001"
OLD_START = datetime(2020, 3, 1, 10, 0, tzinfo=UTC)


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def rows(*args: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in run(*args, "--json").splitlines() if line]


def stamp(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def claude_session(sid: str, start: datetime, *, failed: bool = False) -> str:
    """A Claude Code transcript: a prompt, a Bash call and its result, dated from ``start``."""
    lines = [
        {"type": "user", "sessionId": sid, "uuid": f"{sid}-u1", "parentUuid": None,
         "timestamp": stamp(start), "cwd": "/w",
         "message": {"role": "user", "content": "list the files"}},
        {"type": "assistant", "sessionId": sid, "uuid": f"{sid}-a1", "parentUuid": f"{sid}-u1",
         "timestamp": stamp(start + timedelta(minutes=1)), "cwd": "/w",
         "message": {"role": "assistant", "id": f"msg-{sid}", "content": [
             {"type": "tool_use", "id": f"toolu_{sid[:4]}", "name": "Bash",
              "input": {"command": "ls"}}]}},
        {"type": "user", "sessionId": sid, "uuid": f"{sid}-u2", "parentUuid": f"{sid}-a1",
         "timestamp": stamp(start + timedelta(minutes=2)), "cwd": "/w",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": f"toolu_{sid[:4]}",
              "content": "permission denied" if failed else "a.txt", "is_error": failed}]}},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.fixture()
def imported(store_url: str, tmp_path: Path) -> tuple[str, datetime]:
    """Two Claude Code sessions imported now: one from March 2020, one active yesterday."""
    folder = tmp_path / "projects"
    folder.mkdir()
    yesterday = (datetime.now(UTC) - timedelta(days=1)).replace(microsecond=0)
    (folder / f"{OLD_SID}.jsonl").write_text(claude_session(OLD_SID, OLD_START, failed=True))
    (folder / f"{RECENT_SID}.jsonl").write_text(claude_session(RECENT_SID, yesterday))
    run("import", "--settle", "0", "--db", store_url, str(folder))
    return store_url, yesterday


class TestAnOldSessionImportedNow:
    def test_lists_show_and_sort_it_by_its_own_times(self, imported):
        url, yesterday = imported
        listed = rows("sessions", "list", "--db", url)

        assert [r["session_id"] for r in listed] == [RECENT_SID, OLD_SID]
        old = listed[1]
        assert old["started_at"] == "2020-03-01T10:00:00Z"
        assert old["last_activity_at"] == "2020-03-01T10:02:00Z"
        assert old["updated_at"] == old["last_activity_at"]  # (the deprecated name)
        assert old["stored_at"] > "2026"  # when it was imported: kept apart, named so
        assert [r["session_id"] for r in rows("sessions", "list", "--db", url, "--sort",
                                              "started")] == [RECENT_SID, OLD_SID]
        assert [r["session_id"] for r in rows("sessions", "list", "--db", url, "--sort",
                                              "updated")] == [RECENT_SID, OLD_SID]
        table = run("sessions", "list", "--db", url, "--wide")
        assert "last active" in table and "2020-03-01" in table
        assert table.index(RECENT_SID) < table.index(OLD_SID)
        shown = run("sessions", "show", OLD_SID, "--db", url)
        assert "started 2020-03-01" in shown and "last active 2020-03-01" in shown

    def test_the_library_and_the_fast_listing_agree(self, imported):
        url, yesterday = imported
        with TranscriptStore.open(url, read_only=True) as opened:
            by_store = opened.list_sessions()
            info = opened.get_session(OLD_SID)
            loaded = opened.load(OLD_SID).session
        by_listing = store.list_sessions(url).sessions
        assert [s.session_id for s in by_store] == [RECENT_SID, OLD_SID]
        assert [(s.session_id, s.started_at, s.ended_at) for s in by_listing] == [
            (s.session_id, s.started_at, s.ended_at) for s in by_store]
        assert (info.started_at, info.ended_at) == (OLD_START,
                                                    OLD_START + timedelta(minutes=2))
        assert (loaded.started_at, loaded.last_active_at) == (info.started_at, info.ended_at)
        assert info.created_at.year > 2020  # the store's clock, never the session's

    def test_every_since_and_until_filter_uses_its_own_times(self, imported):
        url, _ = imported

        def ids(*args: str) -> list[str]:
            return sorted({r["session_id"] for r in rows(*args, "--db", url)})

        assert ids("sessions", "list", "--since", "2021-01-01") == [RECENT_SID]
        assert ids("sessions", "list", "--until", "2021-01-01") == [OLD_SID]
        assert ids("calls", "search", "--since", "2021-01-01") == [RECENT_SID]
        assert ids("calls", "search", "--until", "2021-01-01") == [OLD_SID]
        (bash,) = rows("tools", "usage", "--db", url, "--until", "2021-01-01")
        assert (bash["tool"], bash["calls"]) == ("bash", 1)
        assert rows("tools", "usage", "--db", url, "--since", "2030-01-01") == []

    def test_prune_older_than_a_year_erases_it_and_not_yesterdays(self, imported):
        url, _ = imported
        dry = run("prune", "--db", url, "--older-than", "365d", "--dry-run")
        assert f"would erase {OLD_SID}" in dry and RECENT_SID not in dry
        assert "1 session would be erased" in dry
        assert len(rows("sessions", "list", "--db", url)) == 2  # a dry run erases nothing

        done = rows("prune", "--db", url, "--older-than", "365d", "--yes")
        assert [r["session_id"] for r in done] == [OLD_SID]
        assert [r["session_id"] for r in rows("sessions", "list", "--db", url)] == [RECENT_SID]

    def test_a_retention_policy_erases_it_and_not_yesterdays(self, imported, tmp_path):
        url, _ = imported
        policy = tmp_path / "retention.toml"
        policy.write_text('[retention]\nolder_than = "365d"\n')

        done = rows("prune", "--db", url, "--policy", str(policy), "--yes")

        assert [r["session_id"] for r in done] == [OLD_SID]
        assert [r["session_id"] for r in rows("sessions", "list", "--db", url)] == [RECENT_SID]
        with TranscriptStore.open(url) as opened:  # the hook watch calls, again: nothing left
            assert opened.apply_retention(RetentionPolicy.from_mapping(
                {"older_than": "365d"})) == []

    def test_a_failed_call_says_valid_arguments_and_an_error_result(self, imported):
        url, _ = imported
        (call,) = rows("calls", "search", "--db", url, "--session", OLD_SID)
        assert (call["arguments_status"], call["result_status"]) == ("valid", "error")
        assert (call["status"], call["result_is_error"]) == ("ok", True)  # (deprecated)
        (fine,) = rows("calls", "search", "--db", url, "--session", RECENT_SID)
        assert (fine["arguments_status"], fine["result_status"]) == ("valid", "ok")
        (shown,) = rows("calls", "show", f"{OLD_SID}:1.0", "--db", url)
        assert (shown["arguments_status"], shown["result_status"]) == ("valid", "error")
        text = run("calls", "show", f"{OLD_SID}:1.0", "--db", url)
        assert "arguments valid, result error" in text
        table = run("calls", "search", "--db", url, "--wide")
        assert "args status" in table and "result status" in table


class TestAppendsKeepTheActivityCurrent:
    @staticmethod
    def said(text: str, at: datetime | None = None) -> Message:
        metadata = {} if at is None else {"timestamp": stamp(at)}
        return Message("user", (TextPart(text),), metadata=metadata)

    def test_own_times_else_the_appends(self, store: TranscriptStore):
        t2021 = datetime(2021, 5, 1, tzinfo=UTC)
        store.append("live", [self.said("a", t2021), self.said("b", t2021 + timedelta(hours=1))])
        info = store.get_session("live")
        assert (info.started_at, info.ended_at) == (t2021, t2021 + timedelta(hours=1))

        # A second append by the same store (PostgreSQL: the one-flight path, whose guard
        # moves the activity on) and one earlier in time, which moves only the start.
        store.append("live", [self.said("c", t2021 + timedelta(days=1))])
        store.append("live", [self.said("d", t2021 - timedelta(days=1))])
        info = store.get_session("live")
        assert (info.started_at, info.ended_at) == (t2021 - timedelta(days=1),
                                                    t2021 + timedelta(days=1))

        before = datetime.now(UTC)
        store.append("live", [self.said("no time")])  # no time of its own: the append's
        after = datetime.now(UTC)
        ended = store.get_session("live").ended_at
        assert ended is not None and before - timedelta(seconds=1) <= ended <= after
        assert store.get_session("live").started_at == t2021 - timedelta(days=1)

        store.append("fresh", [self.said("plain")])
        fresh = store.get_session("fresh")
        assert fresh.started_at == fresh.ended_at and fresh.started_at is not None
        assert fresh.started_at >= before

    def test_the_times_an_importer_gives_come_first(self, store: TranscriptStore):
        start, end = datetime(2019, 1, 1, tzinfo=UTC), datetime(2019, 1, 2, tzinfo=UTC)
        store.create_session("agent")
        assert store.get_session("agent").started_at is None  # no activity yet
        store.append("agent", [self.said("x", datetime(2019, 1, 1, 12, tzinfo=UTC)),
                               self.said("y")], activity=(start, end))
        assert store.get_session("agent").started_at == start
        assert store.get_session("agent").ended_at == end
        assert [s.session_id for s in store.list_sessions()] == ["agent"]

    def test_fork_and_truncate_keep_the_activity_of_what_is_left(self, store: TranscriptStore):
        days = [datetime(2022, 1, d, tzinfo=UTC) for d in (1, 2, 3)]
        store.append("long", [self.said(str(n), at) for n, at in enumerate(days)])

        forked = store.fork("long", 2, "short")
        assert (forked.started_at, forked.ended_at) == (days[0], days[1])
        assert store.truncate("long", 1) == 2
        info = store.get_session("long")
        assert (info.started_at, info.ended_at) == (days[0], days[0])
        assert store.truncate("long", 0) == 1
        emptied = store.get_session("long")
        assert (emptied.started_at, emptied.ended_at) == (None, None)
        assert emptied.last_active_at == emptied.created_at  # (listed by when it was stored)
