"""``tools usage`` on the stdlib driver (issue 39, ``store/audit/lite_usage.py``) answers
exactly what ``store.tool_usage`` answers, for every filter and their combinations; off the
happy path it declines (``None``) and the store answers."""

from __future__ import annotations

import itertools
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import store
from store.audit.lite_usage import lite_tool_usage

TIMES: list[dict[str, Any]] = [
    {}, {"since": datetime(2025, 9, 1, tzinfo=UTC)}, {"until": datetime(2025, 9, 15, tzinfo=UTC)},
    {"since": datetime(2024, 1, 1, tzinfo=UTC), "until": datetime(2025, 10, 1, tzinfo=UTC)},
    {"since": datetime(2030, 1, 1, tzinfo=UTC)},
]
SCOPES: list[dict[str, Any]] = [
    {}, {"agent": "openhands"}, {"agent": "claude-code"}, {"agent": "nobody"},
    {"cwd": "/w/proj"}, {"cwd": "/w"}, {"cwd": "/w/100%_x"}, {"agent": "openhands", "cwd": "/w"},
]


def _sessions(url: str) -> list[str]:
    with store.TranscriptStore.open(url, read_only=True) as db:
        return [s.session_id for s in db.list_sessions(limit=None)]


def test_every_filter_combination_answers_as_the_store(lite_url: str) -> None:
    """On PostgreSQL (psycopg alone) the summaries answer: the whole store, an agent's or a
    folder's sessions, a time range; one session's usage is declined (the store answers)."""
    pg = lite_url.startswith("postgresql")
    sessions = _sessions(lite_url)
    picked: list[str | None] = [None, "oh-1", "goose-1", *sessions[:4]]
    checked = declined = 0
    with store.TranscriptStore.open(lite_url, read_only=True) as db:
        for times, scope, session in itertools.product(TIMES, SCOPES, picked):
            expected = store.tool_usage(db, **times, **scope, session_id=session, limit=None)
            found = lite_tool_usage(lite_url, **times, **scope, session=session)
            if pg and session is not None:
                assert found is None, (times, scope, session)
                declined += 1
                continue
            assert found == expected, (times, scope, session)
            checked += bool(expected)
    assert checked > (15 if pg else 40)  # (most find calls: the comparison is not vacuous)
    assert declined == (len(TIMES) * len(SCOPES) * (len(picked) - 1) if pg else 0)


def test_the_whole_store_folds_actions_and_scoped_aliases(lite_url: str) -> None:
    found = {u.name: u for u in lite_tool_usage(lite_url) or []}

    assert found["shell-run"].raw_names == ("Bash",)  # (scoped to openhands)
    assert "str_replace_editor" in found["read"].raw_names  # (its view action)
    assert found["list"].raw_names == ("LS", "list_directory", "ls")  # (a global alias)
    assert sum(u.error_results for u in found.values()) > 0
    assert sum(u.invalid_calls for u in found.values()) > 0


def test_a_unique_session_prefix_is_resolved_an_unknown_one_declines(lite_db: Path) -> None:
    with store.TranscriptStore.open(str(lite_db), read_only=True) as db:
        expected = store.tool_usage(db, session_id="goose-1", limit=None)

    assert lite_tool_usage(str(lite_db), session="goose") == expected
    assert lite_tool_usage(str(lite_db), session="oh-") is None  # (two: the store words it)
    assert lite_tool_usage(str(lite_db), session="no-such") is None


@pytest.mark.parametrize("url", ["postgresql+psycopg://nobody@127.0.0.1:1/db",
                                 "postgresql+asyncpg://postgres@127.0.0.1/postgres",
                                 "sqlite:///:memory:", "sqlite:///x.sqlite?mode=ro"])
def test_other_urls_decline(url: str) -> None:
    assert lite_tool_usage(url) is None


def test_an_older_or_hollow_file_declines(tmp_path: Path) -> None:
    from store.db.schema.revisions import scripted_head

    path = tmp_path / "hollow.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        conn.execute("INSERT INTO alembic_version VALUES ('0006')")
    conn.close()
    assert lite_tool_usage(str(path)) is None
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = ?", (scripted_head(),))
    conn.close()
    assert lite_tool_usage(str(path)) is None  # (no tables: a driver error, declined)
