"""``calls search`` on the stdlib driver (issue 39, ``store/audit/lite_search.py``) finds
exactly what ``store.iter_calls`` / ``search_calls`` / ``count_calls`` find on a read-only
store, for each common filter and their combinations, streamed or paged, on an SQLite file
and on PostgreSQL (psycopg alone: ``store/db/reading/pgread.py``)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import store
from store import CallQuery, ViewCondition
from store.audit.lite_search import lite_query, open_calls

TOOLS: list[dict[str, Any]] = [
    {}, {"tool": "bash"}, {"tool": "read"}, {"tool": "edit"}, {"tool": "write"},
    {"tool": "shell-run"}, {"tool": "view-file"}, {"tool": "list"}, {"tool": "nothing-such"},
    {"raw_name": "Bash"}, {"raw_name": "str_replace_editor"},
]
FILTERS: list[dict[str, Any]] = [
    {}, {"agent": "openhands"}, {"agent": "claude-code"}, {"cwd": "/w"},
    {"since": datetime(2025, 9, 1, tzinfo=UTC)},
    {"since": datetime(2024, 1, 1, tzinfo=UTC), "until": datetime(2025, 9, 15, tzinfo=UTC)},
    {"status": ("error",)}, {"status": ("invalid", "no_result")}, {"status": ("ok",)},
]
TEXTS: list[dict[str, Any]] = [
    {}, {"text": "git push"}, {"text": "a.py"}, {"text": "rejected"},
    {"views": (ViewCondition("command", "git push"),)},
    {"views": (ViewCondition("path", "A.PY", "icontains"),)},
    {"views": (ViewCondition("command", "^ls", "regex"),)},
    {"text": "build", "views": (ViewCondition("command", "rm"),)},
]


def _answers(db: store.TranscriptStore, lite: Any, query: CallQuery) -> None:
    expected = list(store.iter_calls(db, query, preview_chars=200))
    assert list(lite.iter_calls(query, preview_chars=200)) == expected, query
    assert lite.count_calls(query) == store.count_calls(db, query) == len(expected), query
    page = store.search_calls(db, query, limit=2, offset=1)
    assert list(lite.iter_calls(query, limit=2, offset=1, preview_chars=200)) == page, query


def test_every_filter_combination_finds_what_the_store_finds(lite_url: str) -> None:
    found = 0
    lite = open_calls(lite_url)
    assert lite is not None
    with lite, store.TranscriptStore.open(lite_url, read_only=True) as db:
        combos = [*itertools.product(TOOLS, [{}], TEXTS),
                  *itertools.product([{}], FILTERS, TEXTS),
                  *itertools.product(TOOLS, FILTERS, [{}]),
                  *((t, f, x) for (t, f), x in zip(itertools.product(TOOLS[1:], FILTERS[1:]),
                                                    itertools.cycle(TEXTS[1:])))]
        for tool, filters, texts in combos:
            query = CallQuery(**tool, **filters, **texts)
            assert lite_query(query)
            _answers(db, lite, query)
            found += store.count_calls(db, query) > 0
    assert found > 80  # (most combinations find calls: the comparison is not vacuous)


def test_one_session_by_tool_text_and_view(lite_url: str) -> None:
    lite = open_calls(lite_url)
    assert lite is not None
    with lite, store.TranscriptStore.open(lite_url, read_only=True) as db:
        sessions = [s.session_id for s in db.list_sessions(limit=None)]
        for session, extra in itertools.product(
                ["oh-1", "oh-2", "goose-1", *sessions[:6]],
                [{}, {"tool": "read"}, {"tool": "bash"}, {"text": "push"},
                 {"views": (ViewCondition("command", "git"),)}, {"status": ("error",)}]):
            _answers(db, lite, CallQuery(session_id=session, **extra))


def test_a_redactor_redacts_as_the_store_does(lite_url: str) -> None:
    redactor = store.Redactor(patterns=[r"origin"])
    lite = open_calls(lite_url)
    assert lite is not None
    with lite, store.TranscriptStore.open(lite_url, read_only=True) as db:
        query = CallQuery(tool="bash")
        expected = list(store.iter_calls(db, query, redactor=redactor))
        assert list(lite.iter_calls(query, redactor=redactor)) == expected
        assert any(m.redactions for m in expected)


def test_argument_conditions_exact_and_children_are_left_to_the_store() -> None:
    assert not lite_query(CallQuery(where=(store.ArgumentCondition.parse("a=1", "eq"),)))
    assert not lite_query(CallQuery(exact=True))
    assert not lite_query(CallQuery(session_id="x", with_children=True))


@pytest.mark.parametrize("url", ["postgresql+psycopg://nobody@127.0.0.1:1/db",
                                 "postgresql+asyncpg://postgres@127.0.0.1/postgres",
                                 "sqlite:///:memory:"])
def test_other_urls_decline(url: str) -> None:
    assert open_calls(url) is None


def test_a_session_whose_index_does_not_line_up_is_scanned_and_warned_of(
        tmp_path: Path, lite_db: Path) -> None:
    import shutil
    import sqlite3

    path = tmp_path / "gap.sqlite"
    shutil.copy(lite_db, path)
    with store.TranscriptStore.open(str(path)) as writable:
        writable.update_search_index()
    with sqlite3.connect(path) as conn:  # oh-1's calls lose their text (revision 0023)
        conn.execute("UPDATE tool_calls SET search_body = NULL WHERE session_id = 'oh-1'")
    conn.close()
    query = CallQuery(views=(ViewCondition("command", "git push"),))
    told: list[str] = []
    lite = open_calls(str(path))
    assert lite is not None
    with lite, store.TranscriptStore.open(str(path), read_only=True) as db:
        expected = list(store.iter_calls(db, query))
        assert list(lite.iter_calls(query, warn=told.append)) == expected
    assert any("oh-1" in message for message in told)
    assert "oh-1" in {m.session_id for m in expected}


def test_a_page_and_its_count_share_one_key_check(lite_url: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The key check grows with the store (1.2 s at 10^6 messages): the command line's page
    and its count read one snapshot, so it runs once per scope, not once per statement."""
    import store.audit.lite_search as lite_search

    asked: list[str | None] = []
    real = lite_search.trust_for

    def counted(conn: Any, one: str | None, **kwargs: Any) -> Any:
        asked.append(one)
        return real(conn, one, **kwargs)

    monkeypatch.setattr(lite_search, "trust_for", counted)
    lite = open_calls(lite_url)
    assert lite is not None
    with lite:
        query = CallQuery(text="git push")
        found = list(lite.iter_calls(query, limit=2))
        assert found and lite.count_calls(query) >= len(found)
        assert lite.count_calls(CallQuery(views=(ViewCondition("command", "git"),))) > 0
        assert asked == [None]
        sid = found[0].session_id
        assert lite.count_calls(CallQuery(text="git push", session_id=sid)) >= 1
        assert asked == [None, sid]


def test_a_page_counts_its_matches_and_far_pages_read_as_before(
        lite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page reads the keys of every match first, which count them: its count asks the
    database nothing more. Past ``_KEYED`` matches a far page is read by LIMIT/OFFSET and
    counted by count(*), as before. Every page and count is the store's."""
    import store.audit.lite_search as lite_search

    with store.TranscriptStore.open(lite_url, read_only=True) as db:
        for keyed in (5_000, 2):
            monkeypatch.setattr(lite_search, "_KEYED", keyed)
            for query in (CallQuery(text="git push"), CallQuery(),
                          CallQuery(views=(ViewCondition("command", "rm"),)),
                          CallQuery(status=("error",)), CallQuery(text="no-such-text-at-all")):
                total = store.count_calls(db, query)
                for limit, offset in ((2, 0), (2, 1), (3, total - 1), (5, total + 3), (50, 0)):
                    lite = open_calls(lite_url)
                    assert lite is not None
                    with lite:
                        page = list(lite.iter_calls(query, limit=limit, offset=max(offset, 0),
                                                    preview_chars=200))
                        assert page == store.search_calls(db, query, limit=limit,
                                                          offset=max(offset, 0)), query
                        if lite_url.startswith("postgresql"):
                            assert lite.count_calls(query) == total, (query, keyed)
                            continue
                        statements: list[str] = []
                        lite._conn.connection.set_trace_callback(statements.append)
                        assert lite.count_calls(query) == total, (query, keyed)
                        counted = [s for s in statements if "count(*)" in s]
                        assert bool(counted) == (total > keyed), (query, keyed)


def test_any_backend_searches_as_the_store(store_url: str) -> None:
    """On every backend the suite runs (Citus too, where the first results are read by an OR
    of keys): the driver's search finds what the store finds."""
    def calls(sid: str, command: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": "go"},
                {"role": "assistant", "content": None, "tool_calls": [{
                    "id": f"{sid}-1", "type": "function",
                    "function": {"name": "bash", "arguments": f'{{"command": "{command}"}}'}}]},
                {"role": "tool", "tool_call_id": f"{sid}-1", "content": f"ran {command}",
                 "is_error": command.startswith("rm")}]

    with store.TranscriptStore.open(store_url) as db:
        for number, command in enumerate(("git push origin", "rm -rf build", "ls -la")):
            db.append(f"s{number}", calls(f"s{number}", command), agent="codex", cwd="/w")
        db.update_search_index()
        lite = open_calls(store_url)
        assert lite is not None
        with lite:
            for query in (CallQuery(), CallQuery(text="push"), CallQuery(tool="bash"),
                          CallQuery(status=("error",)), CallQuery(session_id="s1"),
                          CallQuery(views=(ViewCondition("command", "git"),)),
                          CallQuery(agent="codex", since=datetime(2020, 1, 1, tzinfo=UTC))):
                _answers(db, lite, query)
            assert lite.count_calls(CallQuery(status=("error",))) == 1
