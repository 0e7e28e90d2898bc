"""``store.list_sessions`` (issue 15: the command line's start-up): on an SQLite file at head
it reads with the stdlib driver (``store/db/reading/lite.py``), on PostgreSQL with psycopg
alone (``store/db/reading/pgread.py``, issue 39), and must list exactly what
``TranscriptStore.list_sessions`` / ``count_sessions`` list, for every filter; anything else
goes through the store, with the store's errors."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import store
from store import TranscriptStore
from store.db.reading.lite import open_listing, sqlite_file
from store.db.schema.revisions import scripted_head


def message(text: str, stamp: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {"role": "user", "content": text}
    if stamp is not None:  # a transcript's own time (Claude Code style metadata)
        return {"type": "user", "uuid": f"u-{text}", "timestamp": stamp,
                "message": record, "session_id": "x"}
    return record


def populate(opened: TranscriptStore) -> None:
    rows = [
        ("a", "Fix the 100% bug", "openai", "gpt-4o", ["ci", "urgent"], "codex",
         ["2025-01-05T10:00:00Z", "2025-01-06T10:00:00Z"]),
        ("b", "refactor_db", "anthropic", "claude", ["ci"], "claude-code",
         ["2025-03-01T00:00:00Z"]),
        ("c", "ÜBER title", "openai", "gpt-4o-mini", [], None, [None]),
        ("d", None, None, None, ['quote"tag'], "gemini-cli", ["2024-12-31T23:59:59Z"]),
    ]
    cwds = {"a": "/home/u/proj", "b": "/home/u/proj/sub", "c": "/home/u/project2",
            "d": "/home/u/100%_x"}
    for sid, title, provider, model, tags, agent, stamps in rows:
        opened.append(sid, [message(f"{sid}{n}", s) for n, s in enumerate(stamps)],
                      title=title, provider=provider, model=model, tags=tags, agent=agent,
                      cwd=cwds[sid])
    opened.append("b", [{"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{n}", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        for n in range(3)]}])
    opened.append("empty", [], title="nothing yet")
    opened.append("a-sub", [message("sub0", "2025-01-05T11:00:00Z")], agent="codex",
                  parent=store.SessionLink("a", "subagent", "call-1"))
    opened.create_session("a-fork", parent=store.SessionLink("a", "fork"))


FILTERS: list[dict[str, Any]] = [
    {},
    {"provider": "openai"}, {"model": "gpt-4o"}, {"agent": "codex"}, {"agent": "nobody"},
    {"tag": "ci"}, {"tag": 'quote"tag'}, {"tag": "c"},
    {"title_contains": "100%"}, {"title_contains": "_db"}, {"title_contains": "fix"},
    {"title_contains": "über"}, {"title_contains": "ÜBER"},
    {"since": datetime(2025, 1, 6, tzinfo=UTC)},
    {"until": datetime(2025, 1, 1, tzinfo=UTC)},
    {"since": datetime(2025, 1, 1, tzinfo=UTC), "until": datetime(2025, 2, 1, tzinfo=UTC)},
    {"since": datetime(2000, 1, 1, tzinfo=UTC), "provider": "openai", "tag": "ci"},
    {"cwd": "/home/u/proj"}, {"cwd": "/home/u/proj/"}, {"cwd": "/home/u"},
    {"cwd": "/home/u/100%_x"}, {"cwd": "/home/u/100"}, {"cwd": "/"},
    {"sort": "started"}, {"sort": "messages"}, {"sort": "calls"},
    {"sort": "calls", "cwd": "/home/u", "agent": "claude-code"},
    {"parent": "a"}, {"parent": "a-sub"}, {"roots": True}, {"roots": True, "agent": "codex"},
    {"parent": "a", "sort": "messages"},
]
PAGES = [(50, 0), (2, 0), (2, 3), (None, 0), (0, 0), (1, 10)]


def test_the_stdlib_listing_lists_what_the_store_lists(store_url: str) -> None:
    """On an SQLite file (its path or its URL) and on PostgreSQL (psycopg alone)."""
    path = sqlite_file(store_url)
    with TranscriptStore.open(store_url) as opened:
        populate(opened)
        for filters, (limit, offset) in itertools.product(FILTERS, PAGES):
            expected = opened.list_sessions(**filters, limit=limit, offset=offset)
            count = opened.count_sessions(**{k: v for k, v in filters.items() if k != "sort"})
            for url in ([store_url] if path is None else [str(path), store_url]):
                page = store.list_sessions(url, **filters, limit=limit, offset=offset)
                assert list(page.sessions) == expected, (filters, limit, offset)
                assert page.total == count or (limit is not None and len(expected) < limit
                                               and page.total == len(expected) + offset)
    listing = open_listing(store_url, scripted_head)
    assert listing is not None  # (the answers above came from the stdlib path)
    listing.close()


def test_the_stdlib_listing_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "quiet.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        populate(opened)
    for extra in path.parent.glob("quiet.sqlite-*"):
        extra.unlink()  # no WAL left: the listing opens the file immutable
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}

    assert len(store.list_sessions(str(path)).sessions) == 7

    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before


def test_any_backend_lists_through_the_public_function(store_url: str) -> None:
    with TranscriptStore.open(store_url) as opened:
        populate(opened)
        expected = opened.list_sessions(tag="ci")

    page = store.list_sessions(store_url, tag="ci", limit=1)

    assert list(page.sessions) == expected[:1] and page.total == 2


@pytest.mark.parametrize("url", ["sqlite:///x.sqlite?mode=ro", "sqlite:///:memory:",
                                 "sqlite://", "postgresql+psycopg://h/db", "sqlite:///",
                                 "file:x.sqlite", ""])
def test_only_plain_sqlite_file_urls_take_the_stdlib_path(url: str) -> None:
    assert sqlite_file(url) is None or url == "file:x.sqlite"


def test_a_missing_file_is_the_stores_error_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "absent.sqlite"

    with pytest.raises(store.ConfigurationError, match="no database at"):
        store.list_sessions(str(path))

    assert not path.exists()


def test_an_older_database_is_the_stores_error(tmp_path: Path) -> None:
    from store.db.schema import migrate
    from store.db.schema.engine import create_store_engine

    path = tmp_path / "old.sqlite"
    engine = create_store_engine(f"sqlite:///{path}")
    migrate.upgrade(engine, "0006")
    engine.dispose()

    with pytest.raises(store.SchemaOutOfDate, match="0006"):
        store.list_sessions(str(path))


def test_a_negative_page_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(store.UsageError, match="must not be negative"):
        store.list_sessions(str(tmp_path / "any.sqlite"), limit=-1)


def test_a_driver_error_on_the_stdlib_path_becomes_the_stores_error(tmp_path: Path) -> None:
    """A file that claims our head revision but has no tables: the stdlib query fails, the
    store answers instead and raises its typed error (never a bare sqlite3 error)."""
    import sqlite3

    path = tmp_path / "hollow.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        conn.execute("INSERT INTO alembic_version VALUES (?)", (scripted_head(),))
    conn.close()

    with pytest.raises(store.DatabaseError, match="sessions"):
        store.list_sessions(str(path))
