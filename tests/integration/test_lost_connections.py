"""Connections that break under the store (issue 37): a COMMIT whose reply is lost on every
append path, a session removed while a store remembered it, reads after the server dropped
the store's connections. Real PostgreSQL behind a protocol-aware proxy
(``tests/helpers_lost.py``), real SQLite files."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from backends import EMPTIER, empty_postgres
from helpers_lost import LostProxy

import store
from store import DatabaseError, SessionNotFound, TranscriptStore
from store.db.writing.flight import MANY_ROWS


def _msg(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _texts(db: TranscriptStore, sid: str) -> list[str]:
    """Each message's first part: its text, or the name of the call it is."""
    return [getattr(part, "text", None) or getattr(part, "name", "")
            for part in (m.message.parts[0] for m in db.load(sid).messages)]


@pytest.fixture
def proxied(postgres_url: str) -> Iterator[tuple[LostProxy, str]]:
    """The test database behind the proxy: the proxy and the URL through it."""
    empty_postgres(postgres_url)
    with LostProxy() as proxy:
        yield proxy, proxy.url(postgres_url)


# -- (3) a lost COMMIT reply on every append path ------------------------------------------------

@pytest.mark.postgres
@pytest.mark.parametrize("path", ["two flights", "one flight", "bulk"])
def test_an_append_whose_commit_reply_is_lost_is_stored_once_and_succeeds(proxied, path):
    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        if path == "one flight":
            db.append("lost", [_msg("before")])  # remembered: the next append is one flight
        batch = ([_msg(f"bulk {i}") for i in range(MANY_ROWS)] if path == "bulk"
                 else [_msg("the append")])
        proxy.arm("lose_commit_reply")
        result = db.append("lost", batch)  # keyless: a second run would store it twice
        assert proxy.lost_replies == 1 and proxy.armed == 0
        assert len(result.stored) == len(batch)
        texts = _texts(db, "lost")
    expected = (["before"] if path == "one flight" else []) + [m["content"] for m in batch]
    assert texts == expected  # stored exactly once


@pytest.mark.postgres
@pytest.mark.parametrize("path", ["two flights", "one flight"])
def test_an_append_whose_commit_never_arrived_runs_again_and_is_stored_once(proxied, path):
    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        if path == "one flight":
            db.append("lost", [_msg("before")])
        proxy.arm("kill_at_commit")
        result = db.append("lost", [_msg("the append")], title="kept")
        assert proxy.kills == 1
        assert [m.position for m in result.stored] == [1 if path == "one flight" else 0]
        assert _texts(db, "lost")[-1:] == ["the append"]
        assert len(_texts(db, "lost")) == (2 if path == "one flight" else 1)
        assert result.created_session is (path == "two flights")


@pytest.mark.postgres
@pytest.mark.parametrize("batch", [[_msg("first")], []], ids=["a message", "empty"])
def test_the_lost_commit_of_a_first_append_reports_the_session_created(proxied, batch):
    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        proxy.arm("lose_commit_reply")
        result = db.append("new", batch)
        assert proxy.lost_replies == 1
        assert result.created_session and [m.position for m in result.stored] == (
            [0] if batch else [])
        assert _texts(db, "new") == [m["content"] for m in batch]


@pytest.mark.postgres
def test_a_connection_that_always_dies_at_commit_gives_up_after_a_bounded_number(proxied):
    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        proxy.arm("kill_at_commit", times=50)
        with pytest.raises(DatabaseError, match="lost at COMMIT"):
            db.append("doomed", [_msg("never")])
        assert 1 < proxy.kills < 10 and proxy.armed > 0  # bounded, then it stopped
        proxy.disarm()
        with pytest.raises(SessionNotFound):
            db.load("doomed")  # nothing committed, nothing claimed


@pytest.mark.postgres
def test_a_keyed_append_whose_commit_reply_is_lost_reports_it_stored_not_skipped(proxied):
    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        proxy.arm("lose_commit_reply")
        result = db.append("keyed", [_msg("one")], keys=["k1"])
        assert [m.key for m in result.stored] == ["k1"] and result.skipped_keys == ()
        assert _texts(db, "keyed") == ["one"]


# -- (5) a session removed while a store remembered it ---------------------------------------------

def _remove(how: str, db: TranscriptStore, sid: str) -> None:
    if how == "delete":
        db.delete_session(sid)
    elif how == "erase":
        db.erase([sid], reason="test")
    elif how == "prune":
        assert [r.session_id for r in db.prune(datetime.now(UTC) + timedelta(days=1))] == [sid]
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["delete", "erase", "prune"])
@pytest.mark.parametrize("remover", ["same store", "another store"])
def test_an_empty_append_after_a_removal_recreates_the_session(store_url, how, remover):
    with TranscriptStore.open(store_url) as db, TranscriptStore.open(store_url) as other:
        db.append("s", [_msg("one")])
        db.append("s", [_msg("two")])  # (PostgreSQL: remembered after its own appends)
        _remove(how, db if remover == "same store" else other, "s")
        result = db.append("s", [])
        assert result.created_session and result.stored == ()
        assert db.load("s").messages == ()
        again = db.append("s", [_msg("three")])
        assert [m.position for m in again.stored] == [0]
        assert _texts(db, "s") == ["three"] == _texts(other, "s")
        assert db.verify("s").ok


@pytest.mark.parametrize("remover", ["same store", "another store"])
def test_an_append_after_another_store_truncated_lands_after_what_is_left(store_url, remover):
    with TranscriptStore.open(store_url) as db, TranscriptStore.open(store_url) as other:
        db.append("t", [_msg("one"), _msg("two")])
        db.append("t", [_msg("three")])
        (db if remover == "same store" else other).truncate("t", 1)
        assert db.append("t", []).created_session is False
        assert [m.position for m in db.append("t", [_msg("four")]).stored] == [1]
        assert _texts(db, "t") == ["one", "four"]
        assert db.verify("t").ok


def test_a_failed_append_leaves_nothing_remembered(store_url):
    with TranscriptStore.open(store_url) as db:
        db.append("k", [_msg("one")], keys=["a"])
        with pytest.raises(store.KeyConflictError):
            db.append("k", [_msg("other")], keys=["a"], on_key_conflict="raise")
        assert "k" not in db._session_states
        db.append("k", [_msg("two")], keys=["b"])
        assert _texts(db, "k") == ["one", "two"]


# -- (8) reads after the server dropped the connections ------------------------------------------

def _terminate(postgres_url: str, database: str) -> int:
    """Terminate every server process of ``database`` (waiting until each is gone)."""
    admin = "postgresql://" + postgres_url.split("://", 1)[1].rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid() AND application_name <> %s",
            (database, EMPTIER)).fetchall()
    return len(rows)


def _reads(db: TranscriptStore) -> dict[str, object]:
    """Every kind of read: the one-statement load, the session listing, a search, counts."""
    return {
        "load": _texts(db, "r"),
        "list": [s.session_id for s in db.list_sessions()],
        "get": db.get_session("r").message_count,
        "search": len(store.search_calls(db)),
        "count": db.count_calls("r"),
        "tombstones": db.tombstones(),
    }


def _seed(db: TranscriptStore) -> None:
    db.append("r", [_msg("kept"), {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash",
                                                       "arguments": '{"command": "ls"}'}}]}])


@pytest.mark.postgres
def test_reads_after_the_server_terminated_every_connection_succeed_quietly(
        postgres_url, caplog, capfd):
    empty_postgres(postgres_url)
    caplog.set_level(logging.WARNING)
    with TranscriptStore.open(postgres_url) as db:
        _seed(db)
        before = _reads(db)
        with db.engine.connect():  # (two pooled connections, both to be killed)
            _reads(db)
        capfd.readouterr()
        assert _terminate(postgres_url, postgres_url.rsplit("/", 1)[1]) >= 2
        after = _reads(db)
        db.append("r", [_msg("and a write")])
    assert after == before
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    err = capfd.readouterr().err
    assert "Exception during reset" not in err and "Traceback" not in err


@pytest.mark.postgres
@pytest.mark.parametrize("read", ["load", "list", "get", "search", "count", "tombstones"])
def test_a_read_whose_connection_dies_under_it_runs_once_more(proxied, read, caplog, capfd):
    proxy, url = proxied
    caplog.set_level(logging.WARNING)
    with TranscriptStore.open(url) as db:
        _seed(db)
        expected = _reads(db)[read]
        capfd.readouterr()
        # Killed when the read sends its first statement: on a connection already checked
        # out (the checkout's check cannot see it coming).
        text = {"load": "UNION ALL", "list": "FROM sessions", "get": "FROM sessions",
                "search": "tool_calls", "count": "tool_calls",
                "tombstones": "FROM tombstones"}[read]
        proxy.arm("kill_at_query", text)
        got = _reads_one(db, read)
        assert proxy.kills == 1
    assert got == expected
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    err = capfd.readouterr().err
    assert "Exception during reset" not in err and "Traceback" not in err


def _reads_one(db: TranscriptStore, read: str) -> object:
    return {
        "load": lambda: _texts(db, "r"),
        "list": lambda: [s.session_id for s in db.list_sessions()],
        "get": lambda: db.get_session("r").message_count,
        "search": lambda: len(store.search_calls(db)),
        "count": lambda: db.count_calls("r"),
        "tombstones": db.tombstones,
    }[read]()
