"""Revision 0021 (issue 39 item 2): SQLite's call index (``search_fts``, FTS5 trigram over
``search_items.body``) keeps no positions (``detail=none``). The upgrade builds the index
again from the stored text and loses nothing: the same items and texts, the same answers,
``verify`` clean; the downgrade builds the positional index again the same way (phrase
queries answer again). PostgreSQL is untouched (its trigram GIN holds no positions)."""

from __future__ import annotations

from alembic import command
from search_answers import answers, filled
from sqlalchemy import Engine, text

from store.db.schema import migrate


def _answers(url: str) -> tuple[list[list[str]], set[tuple[str, str, int, int]], bool]:
    return answers(url, ("rm -rf", "GIT PUSH", "removed 12", "up-to-date", "push rm",
                         "origin main", "everything up-to-datex"))


def _index(engine: Engine) -> tuple[str | None, list[tuple[int, int, int, str]]]:
    with engine.connect() as conn:
        sql = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = 'search_fts'")
                           ).scalar() if engine.dialect.name == "sqlite" else None
        items = [(int(p), int(k), int(i), str(b)) for p, k, i, b in conn.execute(
            text("SELECT position, kind, item_index, body FROM search_items "
                 "ORDER BY position, kind, item_index")).all()]
    return sql, items


def test_the_index_is_built_again_without_positions_and_answers_the_same(
        engine: Engine, new_url: str) -> None:
    filled(new_url)  # (at head: 0021)
    at_head = _answers(new_url)
    assert at_head[0] == [["c1"], ["c2"], ["c1"], ["c2"], [], ["c2"], []]
    assert at_head[1] and at_head[2]
    sql, items = _index(engine)
    assert len(items) == 4  # two calls, two results

    with engine.begin() as conn:
        command.downgrade(migrate._config(conn), "0020")
    before_sql, before_items = _index(engine)
    assert before_items == items  # the text stays; only the index is built again
    if engine.dialect.name == "sqlite":
        assert "detail=none" in str(sql) and "detail" not in str(before_sql)
        with engine.connect() as conn:  # positional again: a phrase query answers
            phrase = conn.execute(text(
                "SELECT position FROM search_items WHERE id IN (SELECT rowid FROM search_fts "
                "WHERE search_fts MATCH '\"git push\"')")).scalars().all()
        assert phrase == [p for p, _, _, body in items if "git push" in body]
    else:
        assert sql is None and before_sql is None

    assert migrate.upgrade(engine) == migrate.head()
    assert _index(engine) == (sql, items)
    assert _answers(new_url) == at_head
