"""``search`` (message search) on the database's own driver (issue 39): the command line
reads an SQLite file on ``sqlite3`` and PostgreSQL on psycopg alone, running the store's own
statements (``store/db/index/message_sql.py``), and answers exactly what
``TranscriptStore.search_messages`` answers for every filter; off that path (a session
prefix that is not plain) the store answers and words the error."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

from backends import imported_modules
from click.testing import CliRunner

import store
from store.cli.main import cli
from store.cli.search import _lite_search

QUERIES = ["the", "file", "error -the", '"a.py"', "pus*", "nothing-here-at-all"]
FILTERS: list[dict[str, Any]] = [
    {}, {"role": "tool"}, {"role": "assistant"}, {"agent": "codex"}, {"project": "/w"},
    {"since": datetime(2025, 9, 1, tzinfo=UTC)}, {"until": datetime(2025, 9, 15, tzinfo=UTC)},
    {"limit": 3, "offset": 2}, {"limit": 1000},
]


def test_every_query_and_filter_finds_what_the_store_finds(lite_url: str) -> None:
    found_some = 0
    with store.TranscriptStore.open(lite_url, read_only=True) as db:
        sessions = [s.session_id for s in db.list_sessions(limit=None)][:2]
        for query, scope, session in itertools.product(QUERIES, FILTERS, [None, *sessions]):
            expected = db.search_messages(query, session_id=session, **scope)
            page = {"limit": 20, "offset": 0} | scope
            lite = _lite_search(lite_url, query, agent=scope.get("agent"),
                                project=scope.get("project"), since=scope.get("since"),
                                until=scope.get("until"), role=scope.get("role"),
                                session=session, limit=page["limit"], offset=page["offset"])
            assert lite == (expected, db.messages_behind()), (query, scope, session)
            found_some += bool(expected)
    assert found_some > 40  # (the comparison is not vacuous)


def test_the_command_reads_without_sqlalchemy_and_falls_back_where_it_declines(
        lite_url: str) -> None:
    modules, out = imported_modules("search", "file", "--json", "--db", lite_url,
                                    roots=("sqlalchemy", "alembic"))
    assert out.strip() and "sqlalchemy" not in modules and "store.db.store" not in modules
    modules, out = imported_modules("search", "zzz-nothing", "--db", lite_url,
                                    roots=("sqlalchemy", "alembic"))
    assert out.strip() == "no messages match 'zzz-nothing'"
    assert "sqlalchemy" not in modules
    # (a prefix that names no session: the store's worded error)
    done = CliRunner().invoke(cli, ["search", "file", "--session", "no-such", "--db", lite_url])
    assert done.exit_code != 0 and "no-such" in done.output


def test_a_page_is_ranked_from_its_best_rows_and_from_every_row_when_ties_pass_them(
        tmp_path: Any) -> None:
    """SQLite keeps only the best rows a page can need (a sorter, instead of a table of every
    match and its sort: a common word at 10^6 messages 374 -> 185 ms of SQL); rows tied at
    the cut past those it kept make it rank every row instead. Both give exactly the page
    of the whole ranking (ties in score: the newer message first)."""
    import sqlite3

    from store.core.textquery import SEARCH_ROLES, parse_text_query
    from store.db.index.message_sql import _WIDE, search_messages, search_sql
    from store.db.reading.driver import DriverConnection

    path = tmp_path / "ties.sqlite"
    with store.TranscriptStore.open(f"sqlite:///{path}") as db:
        same = [{"role": "user", "content": "deploy the release train",
                 "metadata": {"timestamp": f"2026-02-01T10:{n // 60:02d}:{n % 60:02d}Z"}}
                for n in range(300)]  # 300 rows of one score
        varied = [{"role": "assistant",
                   "content": "rollout " + " ".join(["word"] * n) + " rollout" * (n % 3),
                   "metadata": {"timestamp": f"2026-02-02T10:00:{n:02d}Z"}}
                  for n in range(40)]  # scores of many values
        db.append("s-ties", same + varied, keys=[f"k{n}" for n in range(340)])
        db.update_search_index()
    conn = sqlite3.connect(path)
    ranked: list[str] = []
    conn.set_trace_callback(lambda sql: ranked.append(sql) if "bm25(" in sql else None)
    driver = DriverConnection(conn)

    def whole(query: str) -> list[tuple[str, int, float]]:
        sql, params = search_sql(False, parse_text_query(query), role=None, session_id=None,
                                 since=None, until=None, agent=None, project=None,
                                 limit=1000, offset=0)
        return [(r[1], r[2], r[4]) for r in driver.exec_driver_sql(sql, params).all()]

    paths = set()
    for query in ("rollout", "release"):
        everything = whole(query)
        assert len(everything) == (40 if query == "rollout" else 300)
        for limit, offset in ((5, 0), (20, 0), (3, 17), (10, 290), (10, 400)):
            ranked.clear()
            page = [(h.session_id, h.position, h.rank) for h in
                    search_messages(driver, query, limit=limit, offset=offset)]
            assert page == everything[offset:offset + limit], (query, limit, offset)
            kept = _WIDE * (limit + offset) * len(SEARCH_ROLES)
            tied_past = query == "release" and kept < 300  # (all 300 score alike)
            # (an empty page past the first cannot tell whether the rows kept were all)
            assert len(ranked) == (2 if tied_past or (not page and offset) else 1), (
                query, limit, offset)
            paths.add(len(ranked))
    assert paths == {1, 2}
    conn.close()
