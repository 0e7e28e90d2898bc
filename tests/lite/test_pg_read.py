"""The command line's read commands on PostgreSQL with psycopg alone (issue 39,
``store/db/reading/pgread.py``): the listing, ``sessions show``, ``tools usage``, the usage
reports and ``calls search`` take that path (no SQLAlchemy imported), read-only in
the server, and off the happy path (another driver, a server that does not answer, an older
or hollow database, a store mostly not summarized for ``tools usage``) the store answers and
words the errors. That they answer what the store answers is asserted per reader, on both
backends, in tests/lite/test_lite_*.py and tests/integration/test_session_listing.py."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import imported_modules
from click.testing import CliRunner

import store
from store.audit.lite_usage import lite_tool_usage
from store.cli.main import cli
from store.db.reading.lite import open_listing, open_reader
from store.db.reading.pgread import PgReader, PgReadError, is_pg_url, libpq_url, open_pg
from store.db.schema.revisions import shipped_head


def _loaded(*argv: str) -> tuple[set[str], str]:
    return imported_modules(*argv, roots=("sqlalchemy", "alembic", "psycopg"))


def _calls(sid: str) -> list[dict[str, object]]:
    return [{"role": "user", "content": "push it"},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"{sid}-1", "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "git push"}'}}]},
            {"role": "tool", "tool_call_id": f"{sid}-1", "content": "done"}]


@pytest.fixture
def pg_url(postgres_url: str) -> Iterator[str]:
    from backends import empty_postgres

    empty_postgres(postgres_url)
    yield postgres_url


@pytest.mark.parametrize(("url", "libpq"), [
    ("postgresql+psycopg://u:p%40ss@h:5433/db?sslmode=require",
     "postgresql://u:p%40ss@h:5433/db?sslmode=require"),
    ("postgresql://u@/db?host=/run/postgresql", "postgresql://u@/db?host=/run/postgresql"),
    ("postgresql+asyncpg://u@h/db", None), ("sqlite:///x.sqlite", None), ("/x.sqlite", None),
])
def test_only_the_stores_postgresql_urls_are_read_on_psycopg(url: str,
                                                               libpq: str | None) -> None:
    assert libpq_url(url) == libpq
    assert is_pg_url(url) is (libpq is not None)


def test_the_commonest_reads_import_no_sqlalchemy(pg_url: str) -> None:
    with store.TranscriptStore.open(pg_url) as db:
        db.append("s", _calls("s"), agent="codex", cwd="/w")
        db.update_search_index()  # (the summaries tools usage reads)
    for argv in (("sessions", "list"), ("sessions", "list", "--json"),
                 ("sessions", "show", "s"), ("tools", "usage"), ("tools", "usage", "--json"),
                 ("usage", "daily"), ("usage", "model", "--json"),
                 ("usage", "--by", "project"), ("usage", "--by", "agent"),
                 ("calls", "search", "--text", "push"), ("calls", "search", "--tool", "bash"),
                 ("calls", "search", "--command", "git push", "--limit", "0", "--json")):
        modules, out = _loaded(*argv, "--db", pg_url)

        assert not {m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic")}, argv
        assert "store.db.reading.pgread" in modules and "store.db.store" not in modules, argv
        assert out.strip(), argv
    modules, out = _loaded("tools", "usage", "--json", "--db", pg_url)
    assert json.loads(out)["tool"] == "bash" and json.loads(out)["calls"] == 1
    modules, out = _loaded("calls", "search", "--text", "push", "--json", "--db", pg_url)
    assert json.loads(out)["arguments"] == '{"command": "git push"}'  # (as emitted)
    # (an argument condition is still the store's)
    modules, out = _loaded("calls", "search", "--where", "command=git push", "--json",
                           "--db", pg_url)
    assert "store.db.store" in modules and json.loads(out)["session_id"] == "s"


def test_the_reader_is_read_only_in_the_server(pg_url: str) -> None:
    reader = open_pg(pg_url, shipped_head)
    assert isinstance(reader, PgReader)
    with reader, pytest.raises(PgReadError, match="read-only"):
        reader.execute("INSERT INTO tool_aliases (agent, raw_name, current_name) "
                       "VALUES (?, ?, ?)", ("", "x", "y"))
    assert issubclass(PgReadError, sqlite3.Error)  # (what the readers' fallbacks catch)
    reader = open_pg(pg_url, shipped_head)
    assert reader is not None
    with reader:
        assert reader.execute("SELECT count(*) FROM tool_aliases WHERE raw_name = ?",
                              ("x",)).fetchone()[0] == 0


def test_times_come_back_in_utc_and_compare_as_times(pg_url: str) -> None:
    from datetime import UTC, datetime, timedelta, timezone

    with store.TranscriptStore.open(pg_url) as db:
        db.append("t", [{"type": "user", "uuid": "u1", "timestamp": "2025-01-05T10:00:00Z",
                         "session_id": "t", "message": {"role": "user", "content": "x"}}])
    east = timezone(timedelta(hours=9))
    page = store.list_sessions(pg_url, since=datetime(2025, 1, 5, 18, 59, tzinfo=east))
    assert [s.session_id for s in page.sessions] == ["t"]
    assert page.sessions[0].ended_at == datetime(2025, 1, 5, 10, tzinfo=UTC)
    assert page.sessions[0].ended_at.utcoffset() == timedelta(0)
    assert not store.list_sessions(pg_url, since=datetime(2025, 1, 5, 19, 1, tzinfo=east)
                                   ).sessions


def test_another_head_or_no_server_declines_and_the_store_words_it(pg_url: str) -> None:
    assert open_pg(pg_url, lambda: "0006") is None
    assert open_pg(pg_url, lambda: None) is None
    assert open_reader("postgresql+psycopg://nobody@127.0.0.1:1/db", shipped_head) is None
    assert open_listing("postgresql+psycopg://nobody@127.0.0.1:1/db", shipped_head) is None
    with pytest.raises(store.DatabaseError, match="connection failed"):
        store.list_sessions("postgresql+psycopg://nobody@127.0.0.1:1/db")
    done = CliRunner().invoke(cli, ["tools", "usage", "--db",
                                    "postgresql+psycopg://nobody@127.0.0.1:1/db"])
    assert done.exit_code != 0 and "connection failed" in done.output


def test_a_hollow_database_at_head_is_the_stores_error(postgres_url: str) -> None:
    """A database that claims this head but has no tables: the reader's query fails and the
    store answers with its typed error, never a driver's."""
    import psycopg

    name = postgres_url.rsplit("/", 1)[1] + "_hollow"
    admin = libpq_url(postgres_url.rsplit("/", 1)[0] + "/postgres")
    with psycopg.connect(admin or "", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    url = postgres_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        with psycopg.connect(libpq_url(url) or "", autocommit=True) as conn:
            conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
            conn.execute("INSERT INTO alembic_version VALUES (%s)", (shipped_head(),))
        assert lite_tool_usage(url) is None
        with pytest.raises(store.DatabaseError, match="sessions"):
            store.list_sessions(url)
    finally:
        with psycopg.connect(admin or "", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_tools_usage_of_a_store_not_summarized_is_the_stores(pg_url: str) -> None:
    """Written by ``append`` alone, never caught up: the summaries do not answer, the
    psycopg reader declines, and the command prints what the store counts."""
    with store.TranscriptStore.open(pg_url) as db:
        for sid in ("a", "b", "c"):
            db.append(sid, _calls(sid), agent="codex")
        expected = store.tool_usage(db, limit=None)

    assert lite_tool_usage(pg_url) is None
    assert lite_tool_usage(pg_url, session="a") is None  # (one session: the store's)
    done = CliRunner().invoke(cli, ["tools", "usage", "--json", "--db", pg_url])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in done.output.splitlines()]
    assert [(r["tool"], r["calls"], r["sessions"]) for r in rows] == [
        (u.name, u.calls, u.sessions) for u in expected] == [("bash", 3, 3)]


def test_an_empty_tool_usage_is_worded_without_the_store(pg_url: str, tmp_path: Path) -> None:
    """An empty ``tools usage`` (a range with no calls, an agent not stored) says so, naming
    the agents stored, from the stdlib reader: it used to open the store for that line
    (~0.4 s of SQLAlchemy and the schema check at 10^6 messages)."""
    file_url = f"sqlite:///{tmp_path}/empty-answer.sqlite"
    for url in (pg_url, file_url):
        with store.TranscriptStore.open(url) as db:
            db.append("s", _calls("s"), agent="codex", cwd="/w")
            db.update_search_index()
        for argv, said in (
                (("tools", "usage", "--since", "2099-01-01"), "no tool calls match"),
                (("tools", "usage", "--agent", "codx"),
                 "no tool calls match: no session of agent 'codx' is stored "
                 "(did you mean 'codex'?)")):
            modules, out = _loaded(*argv, "--db", url)
            assert out.strip() == said, (url, argv)
            assert "store.db.store" not in modules and "sqlalchemy" not in modules, (url, argv)
