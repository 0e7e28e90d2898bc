"""Revision 0029 (issue 39 item 3): SQLite's message index (``message_fts``) holds each row's
role as a second column, so that a search by role asks the index alone. The upgrade builds the
index again from ``message_search`` and loses nothing: the same rows, the same hits and
snippets, the ranks within a few percent (the rank weighs the text alone; its length counts
the role as one word more), a query's word never matching a row's role, ``verify`` clean; the
downgrade builds the one-column index again the same way. PostgreSQL is untouched (its role
filter is a column of ``message_search``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Engine, text

from store import TranscriptStore
from store.db.schema import migrate
from store.db.schema.engine import create_store_engine

QUERIES = ((None, "deploy"), ("tool", "deploy"), ("user", "deploy"), ("assistant", "deploy"),
           (None, "tool"), ("tool", "tool"), (None, "user"), (None, "deploy -staging"),
           ("thinking", "rollback"), (None, "roll*"))


@pytest.fixture
def sqlite_new_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'new.sqlite'}"


@pytest.fixture
def sqlite_engine(sqlite_new_url: str) -> Iterator[Engine]:
    engine = create_store_engine(sqlite_new_url)
    yield engine
    engine.dispose()


def _filled(url: str) -> None:
    with TranscriptStore.open(url) as opened:
        opened.create_session("s", agent="claude-code", cwd="/home/dev/app")
        opened.append("s", [
            {"role": "user", "content": "deploy the app to staging"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "a rollback plan first", "signature": "x"},
                {"type": "text", "text": "I will deploy it now"},
                {"type": "tool_use", "id": "c1", "name": "Bash",
                 "input": {"command": "make deploy ENV=production"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                          "content": "deploy finished, the tool said ok"}]},
            {"role": "assistant", "content": "deployed; the user may check"}])
        opened.update_search_index()


def _hits(url: str) -> list[list[tuple[int, str, float, str]]]:
    with TranscriptStore.open(url, read_only=True) as reader:
        return [[(h.position, h.role, round(h.rank, 9), h.snippet)
                 for h in reader.search_messages(query, role=role)]
                for role, query in QUERIES]


def _index(engine: Engine) -> tuple[str, list[tuple[int, str, str]], int]:
    with engine.connect() as conn:
        sql = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = 'message_fts'")
                           ).scalar_one()
        rows = [(int(p), str(r), str(b)) for p, r, b in conn.execute(text(
            "SELECT position, role, body FROM message_search ORDER BY position, role")).all()]
        indexed = conn.execute(text("SELECT count(*) FROM message_fts_docsize")).scalar_one()
    return str(sql), rows, int(indexed)


def test_the_index_takes_the_roles_and_answers_the_same(sqlite_engine: Engine,
                                                         sqlite_new_url: str) -> None:
    engine, url = sqlite_engine, sqlite_new_url
    _filled(url)  # (at head: 0029)
    at_head = _hits(url)
    positions = [[p for p, _, _, _ in hits] for hits in at_head]
    assert positions == [[0, 1, 2], [1, 2], [0], [1], [2], [2], [3], [1, 2], [1], [1]]
    # ("deployed" is its own word: no match for "deploy")
    assert [[r for _, r, _, _ in hits] for hits in at_head][4:7] == [
        ["tool"], ["tool"], ["assistant"]]  # (the words, never a row's role)
    sql, rows, indexed = _index(engine)
    assert "body, role" in sql and indexed == len(rows) == 6

    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), "0028")
    before_sql, before_rows, before_indexed = _index(engine)
    assert "body, role" not in before_sql and "fts5(body," in before_sql
    assert (before_rows, before_indexed) == (rows, indexed)  # the rows stay; only the index
    with engine.connect() as conn:  # the one-column index ranked "deploy" the same
        ranks = conn.execute(text(
            "SELECT s.position, s.role, -bm25(message_fts) FROM message_fts JOIN "
            "message_search AS s ON s.id = message_fts.rowid WHERE message_fts MATCH 'deploy'"
        )).all()
        check = conn.execute(text("INSERT INTO message_fts (message_fts, rank) "
                                  "VALUES ('integrity-check', 1)"))
        del check
    one_column = {(int(p), str(r)): float(s) for p, r, s in ranks}
    assert len(one_column) == 4
    for position, role, rank, _ in at_head[0]:  # (bm25 counts the role as one word more)
        assert rank == pytest.approx(one_column[position, role], rel=0.05)

    assert migrate.upgrade(engine) == migrate.head()
    assert _index(engine) == (sql, rows, indexed)
    assert _hits(url) == at_head
    with TranscriptStore.open(url, read_only=True) as reader:
        assert reader.verify().ok


def test_a_deleted_session_leaves_nothing_in_the_index(sqlite_engine: Engine,
                                                       sqlite_new_url: str) -> None:
    """The delete trigger gives FTS5 the row's role too: the index stays whole."""
    _filled(sqlite_new_url)
    with TranscriptStore.open(sqlite_new_url) as opened:
        opened.delete_session("s")
        assert opened.search_messages("deploy") == []
    with sqlite_engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM message_fts_docsize")).scalar_one() == 0
        conn.execute(text("INSERT INTO message_fts (message_fts, rank) "
                          "VALUES ('integrity-check', 1)"))


def test_a_role_outside_the_list_matches_nothing_and_breaks_no_query(
        sqlite_new_url: str) -> None:
    """``search_sql`` is public: a role it is given is quoted as one FTS5 string, so a role
    with a quote in it finds no row instead of failing the match (the CLI checks roles
    first, ``UsageError``)."""
    import sqlite3

    from store.core.textquery import parse_text_query
    from store.db.index.message_sql import search_sql

    _filled(sqlite_new_url)
    with sqlite3.connect(sqlite_new_url.removeprefix("sqlite:///")) as conn:
        for role, found in (('to"ol', 0), ("tool", 2)):
            sql, params = search_sql(False, parse_text_query("deploy"), role=role,
                                     session_id=None, since=None, until=None, agent=None,
                                     project=None, limit=20, offset=0)
            assert len(conn.execute(sql, params).fetchall()) == found
