"""Issue 39: a call search asked again at the same database state runs the statement it built
before (``store.audit.search._statement``, kept by ``store.db.index.gaps_cache``): the same
answers, built once per state, and every change (an append through this store, a write by
another connection, a tampered row) seen by the next search, on both backends. On Citus
nothing is kept (its coordinator's WAL does not move with a worker's writes)."""

from __future__ import annotations

import json

import pytest
from backends import commit_elsewhere

import store.audit.search as search_module
from store import ArgumentCondition, CallQuery, TranscriptStore, count_calls, search_calls


def call(call_id: str, command: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": call_id, "type": "function",
        "function": {"name": "Bash", "arguments": json.dumps({"command": command})}}]}


def result(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


@pytest.fixture
def filled(store: TranscriptStore) -> TranscriptStore:
    store.create_session("one", agent="claude-code", cwd="/home/dev/app")
    store.append("one", [{"role": "user", "content": "go"}, call("a1", "git push origin"),
                         result("a1", "pushed"), call("a2", "git status"),
                         result("a2", "clean"), call("a3", "git push --tags"),
                         result("a3", "pushed tags")])
    store.update_search_index()
    return store


@pytest.fixture
def builds(monkeypatch) -> list[CallQuery]:
    """The queries whose statement was built (not reused)."""
    built: list[CallQuery] = []
    real = search_module.search_statement

    def counting(conn, aliases, query, **kwargs):
        built.append(query)
        return real(conn, aliases, query, **kwargs)

    monkeypatch.setattr(search_module, "search_statement", counting)
    return built


def ids(store: TranscriptStore, query: CallQuery, **kwargs) -> list[str]:
    return [m.call_id for m in search_calls(store, query, **kwargs)]


def kept_here(store: TranscriptStore, request) -> bool:
    """Whether this backend keeps what a search built (not on Citus)."""
    return request.node.callspec.params.get("store_url") != "citus"


def test_the_same_search_is_built_once_per_state_with_the_same_answers(filled, builds,
                                                                       request):
    query = CallQuery(text="git push")
    answers = [ids(filled, query) for _ in range(4)]
    assert answers == [["a1", "a3"]] * 4
    # (PostgreSQL's state is the cluster's WAL position, which another test's writes move:
    # built at most once per state it saw, and at least once)
    assert 1 <= len(builds) <= 4
    if filled.engine.dialect.name == "sqlite":
        assert len(builds) == 1
    if not kept_here(filled, request):
        assert len(builds) == 4  # (Citus: nothing kept)


def test_an_append_through_the_store_is_seen_by_the_next_search(filled, builds):
    query = CallQuery(text="git push")
    assert ids(filled, query) == ["a1", "a3"]
    filled.append("one", [call("a4", "git push --force"), result("a4", "forced")])
    assert ids(filled, query) == ["a1", "a3", "a4"]  # (its catch-up, then a new statement)
    assert count_calls(filled, query) == 3
    filled.append("two", [call("b1", "git push upstream")])
    assert ids(filled, query) == ["a1", "a3", "a4", "b1"]


def test_a_write_by_another_store_or_connection_is_seen(filled, store_url):
    query = CallQuery(text="git push")
    assert ids(filled, query) == ["a1", "a3"]
    other = TranscriptStore.open(store_url)
    try:
        other.append("one", [call("a5", "git push later")])
        other.update_search_index()
    finally:
        other.close()
    assert ids(filled, query) == ["a1", "a3", "a5"]
    commit_elsewhere(store_url, "DELETE FROM tool_results WHERE session_id = 'one' "
                                "AND call_id = 'a5'",
                     "DELETE FROM tool_calls WHERE session_id = 'one' AND call_id = 'a5'")
    assert ids(filled, query) == ["a1", "a3"]  # (the call is gone: so is its match)


def test_a_reused_statement_warns_again_every_time(filled, store_url, builds):
    commit_elsewhere(store_url, "UPDATE tool_calls SET search_body = NULL "
                                "WHERE session_id = 'one' AND call_id = 'a1'")
    for _ in range(3):
        warned: list[str] = []
        assert ids(filled, CallQuery(text="git push"), warn=warned.append) == ["a1", "a3"]
        assert len([m for m in warned if "session one:" in m]) == 1


def test_pages_and_counts_are_kept_apart(filled, builds):
    query = CallQuery(text="git")
    first = [m.call_id for m in search_calls(filled, query, limit=2)]
    second = [m.call_id for m in search_calls(filled, query, limit=2, offset=2)]
    again = [m.call_id for m in search_calls(filled, query, limit=2)]
    assert (first, second, again) == (["a1", "a2"], ["a3"], ["a1", "a2"])
    assert count_calls(filled, query) == 3
    assert count_calls(filled, CallQuery(text="status")) == 1


def test_argument_conditions_are_built_every_time(filled, builds):
    """``1`` and ``True`` hash alike: a query with argument conditions is never reused."""
    query = CallQuery(where=(ArgumentCondition("command", "contains", "push"),))
    assert ids(filled, query) == ids(filled, query) == ["a1", "a3"]
    assert len(builds) == 2
    assert ids(filled, CallQuery(where=(ArgumentCondition("command", "eq", True),))) == []
