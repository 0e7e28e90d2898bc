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
