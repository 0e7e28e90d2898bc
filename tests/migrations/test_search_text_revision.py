"""Revision 0023 (issue 39): the call search's text moves from ``search_items`` into the call
and result rows (``search_body``). The upgrade keeps every text (an index of folded text)
and builds SQLite's full-text index from it: the same texts, the same answers, ``verify``
clean; an index of unfolded text (0.2.0, no mark) is caught up again from the start instead.
The downgrade builds ``search_items`` again from the rows, on both backends."""

from __future__ import annotations

from alembic import command
from search_answers import answers, bash_call, filled
from sqlalchemy import Engine, text

from store import TranscriptStore
from store.db.schema import migrate


def _filled(url: str) -> None:
    filled(url)
    with TranscriptStore.open(url) as opened:
        opened.append("t", [bash_call("d1", "ls -la")])
        opened.update_search_index()
        opened.append("t", [bash_call("d2", "rm -rf /tmp/late")])  # (not caught up)


def _answers(url: str) -> tuple[list[list[str]], set[tuple[str, str, int, int]], bool]:
    return answers(url, ("rm -rf", "GIT PUSH", "removed 12", "up-to-date", "push rm",
                         "ls -la", "everything up-to-datex"))


_ITEMS = ("SELECT session_id, position, kind, item_index, call_position, call_index, body "
          "FROM search_items ORDER BY session_id, position, kind, item_index")


def _items(engine: Engine) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(text(_ITEMS)).all()]


def _down(engine: Engine) -> None:
    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), "0022")


def test_the_text_moves_into_the_rows_and_back_and_answers_the_same(
        engine: Engine, new_url: str) -> None:
    _filled(new_url)
    at_head = _answers(new_url)
    assert at_head[0] == [["c1", "d2"], ["c2"], ["c1"], ["c2"], [], ["d1"], []]
    assert at_head[1] and at_head[2]
    items = _items(engine)  # (the view of the rows' text)
    assert len(items) == 5  # three calls and two results caught up; d2 not yet

    _down(engine)
    with engine.connect() as conn:
        kind = conn.execute(text(
            "SELECT type FROM sqlite_master WHERE name = 'search_items'" if
            engine.dialect.name == "sqlite" else
            "SELECT table_type FROM information_schema.tables "
            "WHERE table_name = 'search_items'")).scalar()
        assert kind in ("table", "BASE TABLE")  # the table of 0005 again
        columns = {c for (c,) in conn.execute(text(
            "SELECT name FROM pragma_table_info('tool_calls')" if
            engine.dialect.name == "sqlite" else
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'tool_calls'")).all()}
        assert "search_body" not in columns
    assert _items(engine) == items

    assert migrate.upgrade(engine) == migrate.head()
    assert _items(engine) == items
    with engine.connect() as conn:  # the text is in the rows, the old table gone
        moved = conn.execute(text("SELECT count(*) FROM tool_calls "
                                  "WHERE search_body IS NOT NULL")).scalar()
        assert moved == 3
    assert _answers(new_url) == at_head


def test_an_index_of_unfolded_text_is_caught_up_again(engine: Engine, new_url: str) -> None:
    """What 0.2.0 left (no mark, the text as written) is not copied: every session is caught
    up again from the start, folded; meanwhile a search scans every row exactly."""
    _filled(new_url)
    at_head = _answers(new_url)
    _down(engine)
    postgres = engine.dialect.name == "postgresql"
    with engine.begin() as conn:
        if postgres:
            conn.execute(text("COMMENT ON TABLE search_items IS NULL"))
            conn.execute(text("UPDATE search_items SET body = 'RM -RF SHOUTED'"))
        else:
            conn.execute(text("PRAGMA user_version = 0"))
            conn.execute(text("INSERT INTO search_fts(search_fts) VALUES ('delete-all')"))
            conn.execute(text("UPDATE search_items SET body = 'RM -RF SHOUTED'"))
            conn.execute(text("INSERT INTO search_fts(search_fts) VALUES ('rebuild')"))

    assert migrate.upgrade(engine) == migrate.head()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM tool_calls "
                                 "WHERE search_body IS NOT NULL")).scalar() == 0
        assert conn.execute(text("SELECT max(indexed_position) FROM sessions")).scalar() == 0
        assert conn.execute(text("SELECT count(*) FROM call_views")).scalar() == 0
    assert _answers(new_url) == at_head  # every row scanned exactly
    with TranscriptStore.open(new_url) as writer:
        assert writer.update_search_index().calls == 4
    assert _answers(new_url) == at_head
    with engine.connect() as conn:
        bodies = conn.execute(text("SELECT search_body FROM tool_calls")).scalars().all()
    assert all(body == body.lower() for body in bodies)
