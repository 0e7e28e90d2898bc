"""``store.ReadOnlyStore`` (issue 39: a read-only open in milliseconds): on a plain SQLite file
or a PostgreSQL database at head it opens and answers the common reads on the driver alone,
exactly as ``TranscriptStore.open(read_only=True)`` answers them, without importing
SQLAlchemy; every other read goes to that store, opened on first need; off its path (no
database, an older or foreign one) it is that store from the start, with its errors; nothing
is written."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import store
from store.audit import reader as reader_module
from store.db.reading import lite, walks
from store.db.sessions import SessionsMixin

ROOT = Path(__file__).resolve().parents[2]


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def _every_common_read(reader: store.ReadOnlyStore, db: store.TranscriptStore) -> None:
    for filters in ({}, {"limit": None}, {"agent": "openhands"}, {"cwd": "/w/proj"},
                    {"sort": "messages", "limit": 5, "offset": 2}, {"roots": True},
                    {"title_contains": "a", "sort": "calls"}):
        assert reader.list_sessions(**filters) == db.list_sessions(**filters), filters
        counted = {k: v for k, v in filters.items() if k not in ("limit", "offset", "sort")}
        assert reader.count_sessions(**counted) == db.count_sessions(**counted)
    ids = [info.session_id for info in db.list_sessions(limit=None)]
    assert len(ids) > 20
    for sid in ids:
        assert reader.get_session(sid) == db.get_session(sid)
        assert reader.resolve_session_id(sid[:-1]) == db.resolve_session_id(sid[:-1]) \
            if len([i for i in ids if i.startswith(sid[:-1])]) == 1 else True
        assert reader.load(sid) == db.load(sid), sid
        assert reader.load(sid, last_turns=2) == db.load(sid, last_turns=2), sid
        assert reader.session_sources(sid) == db.session_sources(sid)
        assert reader.session_ancestors(sid) == db.session_ancestors(sid)
        assert reader.session_tree(sid) == db.session_tree(sid)
        assert reader.session_tree(sid, max_depth=0) == db.session_tree(sid, max_depth=0)
    for scope in ({}, {"agent": "openhands"}, {"cwd": "/w"}, {"limit": 3, "offset": 1}):
        assert reader.tool_usage(**scope) == store.tool_usage(db, **scope), scope
    assert reader._store is None  # (every answer above came from the stdlib path)
    with pytest.raises(store.SessionNotFound):
        reader.get_session("no-such-session")
    with pytest.raises(store.SessionNotFound):
        reader.load("no-such-session")
    with pytest.raises(store.UsageError):
        reader.session_tree(ids[0], max_depth=-1)
    with pytest.raises(store.UsageError):
        reader.tool_usage(limit=-1)
    with pytest.raises(store.UsageError):
        reader.list_sessions(sort="sideways")


def test_every_common_read_is_the_stores(lite_db: Path) -> None:
    before = _files(lite_db.parent)
    with store.ReadOnlyStore.open(str(lite_db)) as reader, \
            store.TranscriptStore.open(str(lite_db), read_only=True) as db:
        _every_common_read(reader, db)
        assert reader.tool_usage(session_id="oh-1") == store.tool_usage(db, session_id="oh-1")
        assert reader._store is None
        assert reader.url == str(lite_db) == db.url and reader.read_only
        assert repr(reader) == f"ReadOnlyStore({str(lite_db)!r})"
    assert _files(lite_db.parent) == before  # (a read writes nothing, creates nothing)


def test_on_postgresql_every_common_read_is_the_stores_on_psycopg(lite_pg: str) -> None:
    """One read-only psycopg connection, kept; one session's tool usage is the store's."""
    with store.ReadOnlyStore.open(lite_pg) as reader, \
            store.TranscriptStore.open(lite_pg, read_only=True) as db:
        assert reader._pg is not None
        _every_common_read(reader, db)
        assert reader.tool_usage(session_id="oh-1") == store.tool_usage(db, session_id="oh-1")
        assert reader._store is not None  # (that one)
    assert reader._pg is None  # (closed with it)


def test_on_postgresql_a_dropped_connection_is_opened_again(postgres_url: str) -> None:
    import psycopg
    from backends import empty_postgres

    from store.db.reading.pgread import libpq_url

    empty_postgres(postgres_url)
    with store.TranscriptStore.open(postgres_url) as db:
        db.append("pg-1", [{"role": "user", "content": "hi"}])
    with store.ReadOnlyStore.open(postgres_url) as reader:
        assert reader._pg is not None
        pid = reader._pg.connection.info.backend_pid
        with psycopg.connect(libpq_url(postgres_url) or "", autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        # (the read that finds it gone reads again on a new connection)
        assert [s.session_id for s in reader.list_sessions()] == ["pg-1"]
        assert reader._pg is not None and reader._pg.connection.info.backend_pid != pid
        assert reader.get_session("pg-1").session_id == "pg-1"
        assert reader._store is None
        with pytest.raises(store.SessionNotFound):
            reader.get_session("nope")
        assert reader.load("pg-1").messages[0].message.text == "hi"  # (still usable)


def test_the_rest_is_the_stores_opened_when_first_needed(lite_db: Path) -> None:
    with store.ReadOnlyStore.open(str(lite_db)) as reader, \
            store.TranscriptStore.open(str(lite_db), read_only=True) as db:
        assert reader._store is None
        assert reader.tool_definitions("oh-1") == db.tool_definitions("oh-1")
        assert reader._store is not None
        assert reader.load("oh-1", strict=False, since_position=2) == db.load(
            "oh-1", since_position=2)
        query = store.CallQuery(tool="bash")
        assert store.search_calls(reader.store, query, limit=500) == store.search_calls(
            db, query, limit=500)
        with pytest.raises(store.SessionNotFound):
            reader.resolve_session_id("no-such-prefix")
        with pytest.raises(store.DatabaseError):  # (read-only: writes fail in the store)
            reader.append("new", [{"role": "user", "content": "x"}])


def test_its_open_and_common_reads_load_no_sqlalchemy(lite_url: str) -> None:
    code = (
        "import sys, store\n"
        "with store.ReadOnlyStore.open(sys.argv[1]) as r:\n"
        "    sid = r.list_sessions(limit=1)[0].session_id\n"
        "    r.load(sid); r.get_session(sid); r.session_tree(sid); r.count_sessions()\n"
        "    r.tool_usage(); r.session_sources(sid); r.resolve_session_id(sid)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'alembic')))\n")
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_STORE_URL"}
    done = subprocess.run([sys.executable, "-c", code, lite_url], capture_output=True,
                          text=True, cwd=ROOT, env=env, check=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_it_mirrors_the_stores_signatures() -> None:
    for name in ("list_sessions", "count_sessions"):
        ours = inspect.signature(getattr(lite.SessionListing, name)).parameters
        theirs = inspect.signature(getattr(SessionsMixin, name)).parameters
        assert set(ours) == set(theirs), name
        assert {k: p.default for k, p in ours.items()} == {
            k: p.default for k, p in theirs.items()}, name
    assert reader_module.MAX_TREE_DEPTH == walks.MAX_TREE_DEPTH


def test_it_sees_what_a_writer_commits_after_it_opened(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'live.sqlite'}"
    store.TranscriptStore.open(url).close()
    with store.ReadOnlyStore.open(url) as reader:
        assert reader.list_sessions() == []
        with store.TranscriptStore.open(url) as db:
            db.append("s1", [{"role": "user", "content": "hello"}])
            assert [s.session_id for s in reader.list_sessions()] == ["s1"]
        db.append("s2", [{"role": "user", "content": "again"}])  # (no writer open now)
        assert {s.session_id for s in reader.list_sessions()} == {"s1", "s2"}
        assert reader.load("s2").messages[0].message.text == "again"
        assert reader._store is None


def test_off_its_path_it_is_the_store_with_its_errors(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    with pytest.raises(store.StoreError) as theirs:
        store.TranscriptStore.open(str(missing), read_only=True)
    with pytest.raises(type(theirs.value)):
        store.ReadOnlyStore.open(str(missing))
    assert not missing.exists()  # (a read never creates one)
    foreign = tmp_path / "foreign.sqlite"
    import sqlite3

    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(store.DatabaseError, match="no transcript-store database"):
        store.ReadOnlyStore.open(str(foreign))


@pytest.mark.postgres
def test_on_postgresql_the_rest_is_the_read_only_store(postgres_url: str) -> None:
    with store.TranscriptStore.open(postgres_url) as db:
        db.append("pg-reader", [{"role": "user", "content": "hi"}])
        with store.ReadOnlyStore.open(postgres_url) as reader:
            assert reader._store is None
            assert reader.get_session("pg-reader") == db.get_session("pg-reader")
            assert reader.load("pg-reader") == db.load("pg-reader")
            assert reader.tool_usage() == store.tool_usage(db)
            with pytest.raises(store.DatabaseError):
                reader.append("pg-reader", [{"role": "user", "content": "x"}])
        db.delete_session("pg-reader")
