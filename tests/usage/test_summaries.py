"""Per-session summaries (issue 39 item 3, revision 0022, ``store/db/index/summaries.py``):
``tools usage`` and the usage reports give what the calls and usage rows give, whether every
session is summarized, none is, or some are stale (appended to, truncated, usage recorded
after the catch-up), on both backends; a response stored in two sessions counts once
whichever session was summarized first; erasing a session erases its summary; ``verify``
reports a summary that is not what its rows give and a rebuild repairs it; reads write
nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from store import (
    Message,
    SessionLink,
    TextPart,
    TranscriptStore,
    normalize_message,
    refill_search_index,
    tool_context,
    tool_usage,
    usage_report,
)
from store.audit.usage import _usage
from store.audit.usage_fold import SummarySource, fold_usage
from store.db.base import alias_table
from store.db.index.summaries import VERSION, version_of
from store.db.reading.summary_reads import (
    summary_tool_groups,
    summary_usage_days,
    summary_usage_groups,
)
from store.db.reading.usage import usage_groups
from store.db.sessions import sessions_where
from store.usage.prices import TIER_TOKENS
from store.usage.tokens import TokenUsage

START = datetime(2025, 9, 1, 22, 0, tzinfo=UTC)
#: A time range that holds every row: the reports then read the usage rows, not summaries.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SCOPES: list[dict[str, Any]] = [{}, {"agent": "openhands"}, {"agent": "claude-code"},
                                {"cwd": "/w/proj"}, {"agent": "goose", "cwd": "/w"}]


def _call(call_id: str, name: str, arguments: dict[str, object] | str) -> dict[str, object]:
    body = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": body}}


def _tools_session(db: TranscriptStore, sid: str, agent: str, name: str, cwd: str,
                   hour: int) -> None:
    """Editor calls naming actions (one invalid), a shell call with an error result, one
    without a result; usage on the assistant message."""
    calls = [_call(f"{sid}-v", name, {"command": "view", "path": "/p/a.py"}),
             _call(f"{sid}-c", name, {"command": "create", "path": "/p/b.py", "file_text": "x"}),
             _call(f"{sid}-u", name, {"command": "frobnicate", "path": "/p/c.py"}),
             _call(f"{sid}-i", name, '{"command": "view", "path": '),
             _call(f"{sid}-b", "bash", {"command": "git push origin main"}),
             _call(f"{sid}-n", "Bash", {"command": "ls -la"}),
             _call(f"{sid}-l", "ls", {"path": "."})]
    results: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls[:3]]
    results.append({"role": "tool", "tool_call_id": calls[4]["id"],
                    "content": "error: rejected", "is_error": True})
    db.append(sid, _timed([{"role": "user", "content": "look at a.py"},
                           {"role": "assistant", "content": None, "tool_calls": calls},
                           *results], hour),
              agent=agent, cwd=cwd, keys=["u", "a", *(f"r{i}" for i in range(len(results)))])
    db.record_usage(sid, {"a": TokenUsage(TIER_TOKENS + hour, 20, 30, 40, 5, "gpt-4o",
                                          f"req-{sid}", f"resp-{sid}")})


def _timed(messages: list[dict[str, Any]], hour: int) -> list[Message]:
    """The messages, normalized, recorded at START + ``hour`` hours (their own time)."""
    at = (START + timedelta(hours=hour)).isoformat()
    return [replace(normalize_message(m), metadata={"timestamp": at}) for m in messages]


def _replies(db: TranscriptStore, sid: str, hours: list[int], response: str | None = None,
             agent: str | None = "claude-code", cwd: str | None = "/w/proj/deep") -> None:
    """Assistant replies with usage (``response``: the first reply's response id)."""
    if not any(info.session_id == sid for info in db.list_sessions(limit=None)):
        db.create_session(sid, agent=agent, cwd=cwd)
    keys = [f"{sid}-{h}" for h in hours]
    db.append(sid, [Message("assistant", (TextPart(f"reply {h}"),),
                            metadata={"timestamp": (START + timedelta(hours=h)).isoformat()})
                    for h in hours], keys=keys)
    db.record_usage(sid, {k: TokenUsage(100 * h + 1, 7, 0, 3, 0,
                                        "claude-sonnet-4-5" if h % 2 else None,
                                        None if h % 2 else "req",
                                        response if (i == 0 and response) else f"{sid}-r{h}")
                          for i, (k, h) in enumerate(zip(keys, hours, strict=True))})


@pytest.fixture(autouse=True)
def kept_here(request: pytest.FixtureRequest) -> None:
    """Citus keeps no summaries (``keeps_summaries``: every reader reads the rows there), so
    these tests of the summaries run on SQLite and PostgreSQL;
    ``test_every_backend_answers_as_sqlite_with_or_without_summaries`` says what Citus does
    instead."""
    callspec = getattr(request.node, "callspec", None)
    if (callspec is not None and callspec.params.get("store_url") == "citus"
            and "answers_as_sqlite" not in request.node.name):
        pytest.skip("Citus keeps no summaries (test_every_backend_answers_as_sqlite_with_or_"
                    "without_summaries)")


@pytest.fixture(autouse=True)
def every_mix(monkeypatch: pytest.MonkeyPatch) -> None:
    """The summaries are read whatever share of the sessions is not summarized (the
    readers' own threshold sends a mostly unsummarized store to the store-wide statements:
    ``test_a_mostly_unsummarized_store_reads_its_rows`` covers that)."""
    from store.db.reading import summary_reads

    monkeypatch.setattr(summary_reads, "_MOSTLY_UNSUMMARIZED", 1.0)


@pytest.fixture
def filled(store: TranscriptStore) -> TranscriptStore:
    _tools_session(store, "oh-1", "openhands", "str_replace_editor", "/w/proj", 1)
    _tools_session(store, "oh-2", "openhands", "file_editor", "/w/proj/sub", 30)
    _tools_session(store, "cp-1", "copilot-cli", "str_replace_editor", "/w/other", 50)
    _tools_session(store, "goose-1", "goose", "developer__text_editor", "/w/100%_x", 75)
    _tools_session(store, "long", "openhands", "str_replace_editor", "/w/proj", 5)
    for hour in (20, 40, 70):  # (its calls on both sides of the ranges' edges)
        store.append("long", _timed([
            {"role": "assistant", "content": None, "tool_calls": [
                _call(f"long-{hour}", "bash", {"command": f"make {hour}"})]},
            {"role": "tool", "tool_call_id": f"long-{hour}", "content": "ok"}], hour),
            keys=[f"c{hour}", f"r{hour}"])
    _replies(store, "cc-1", [2, 3, 27, 28])
    _replies(store, "cc-2", [5, 60], response="cc-1-r3")  # (a resumed session repeats one)
    store.add_alias("ls", "list")
    store.add_alias("Bash", "shell-run", agent="openhands")
    return store


#: Time ranges over the fixtures' hours (START + 1 ... + 95): edges inside sessions, around
#: them, one side open, nothing inside.
RANGES: list[dict[str, Any]] = [
    {}, {"since": START + timedelta(hours=10), "until": START + timedelta(hours=60)},
    {"since": START + timedelta(hours=29)}, {"until": START + timedelta(hours=3)},
    {"since": START + timedelta(hours=1), "until": START + timedelta(hours=2)},
    {"since": START + timedelta(days=30)}]


def _live_tools(db: TranscriptStore, since: datetime | None = None,
                until: datetime | None = None, **scope: Any) -> list[Any]:
    """``tools usage`` from the calls (the path without summaries)."""
    where = sessions_where(**scope) if scope else None
    with db.engine.connect() as conn:
        return sorted(_usage(conn, since, until, None, where), key=lambda u: u.name)


def _summed_tools(db: TranscriptStore, since: datetime | None = None,
                  until: datetime | None = None, **scope: Any) -> list[Any]:
    with db.engine.connect() as conn:
        groups = summary_tool_groups(conn, agent=scope.get("agent"), cwd=scope.get("cwd"),
                                     since=since, until=until)
        assert groups is not None
        return sorted(fold_usage(SummarySource(groups), alias_table(conn)),
                      key=lambda u: u.name)


def _groups(found: Any) -> list[Any]:
    return sorted(found, key=lambda g: (g.day, g.session_id, str(g.model)))


def _answers_alike(db: TranscriptStore) -> None:
    for scope in SCOPES:
        for times in RANGES:
            assert _summed_tools(db, **times, **scope) == _live_tools(db, **times, **scope), (
                times, scope)
        assert _summed_tools(db, **scope) == _live_tools(db, **scope), scope
        assert tool_usage(db, limit=None, **scope) == sorted(
            _live_tools(db, **scope), key=lambda u: (-u.calls, u.name)), scope
        with db.engine.connect() as conn:
            live = _groups(usage_groups(conn, tier=TIER_TOKENS, agent=scope.get("agent"),
                                        cwd=scope.get("cwd")))
            summed = summary_usage_groups(conn, agent=scope.get("agent"), cwd=scope.get("cwd"))
            assert summed is not None and _groups(summed) == live, scope
        for by in ("day", "week", "month", "session", "model", "agent"):
            assert usage_report(db, by=by, **scope) == usage_report(db, by=by, since=EPOCH,
                                                                     **scope), (by, scope)
        for key in (None, "day", "week", "agent", "model"):  # (a time range reads the calls)
            assert tool_context(db, by=key, **scope) == tool_context(
                db, by=key, since=EPOCH, **scope), (key, scope)


def _stamps(db: TranscriptStore) -> dict[str, bool]:
    """Each summarized session whose stamp matches -> its ``repeats``."""
    with db.engine.connect() as conn:
        return {str(sid): bool(flag) for sid, flag in conn.execute(text(
            "SELECT s.session_id, ss.repeats FROM sessions s JOIN session_summaries ss "
            "ON ss.session_id = s.session_id WHERE ss.next_position = s.next_position "
            "AND ss.chain_digest = s.chain_digest AND ss.version = :v"), {"v": VERSION})}


class TestSameAnswers:
    def test_before_the_catch_up_every_session_is_read_from_its_rows(self, filled):
        assert _stamps(filled) == {}
        _answers_alike(filled)

    def test_after_the_catch_up_every_session_is_summarized(self, filled):
        assert filled.update_search_index().summarized == 7
        assert filled.update_search_index().summarized == 0  # (nothing changed since)
        stamps = _stamps(filled)
        assert set(stamps) == {"oh-1", "oh-2", "cp-1", "goose-1", "long", "cc-1", "cc-2"}
        assert stamps["cc-1"] and stamps["cc-2"] and not stamps["oh-1"]
        with filled.engine.connect() as conn:
            count = conn.execute(text("SELECT count(*) FROM tool_summary "
                                      "WHERE session_id = 'oh-1'")).scalar()
        # the editor's view, create, frobnicate and invalid (no action); bash, Bash, ls
        assert count == 7
        _answers_alike(filled)

    def test_stale_sessions_mixed_with_summarized_ones(self, filled):
        filled.update_search_index()
        _replies(filled, "cc-1", [80, 81])  # appended after: cc-1 is read from its rows
        _tools_session(filled, "oh-3", "openhands", "str_replace_editor", "/w/proj", 90)
        filled.truncate("oh-2", 3)  # cut: its stamp no longer matches
        filled.record_usage("cp-1", {"u": TokenUsage(9, 9, model="gpt-4o")})  # usage later
        assert set(_stamps(filled)) == {"oh-1", "goose-1", "long", "cc-2"}
        _answers_alike(filled)
        filled.update_search_index()
        assert set(_stamps(filled)) == {"oh-1", "oh-2", "oh-3", "cp-1", "goose-1", "long",
                                        "cc-1", "cc-2"}
        _answers_alike(filled)

    @pytest.mark.parametrize("later_hour", [1, 3, 71])
    def test_a_response_stored_twice_counts_once_whoever_was_summarized_first(
            self, store, later_hour):
        _replies(store, "first", [2, 3, 6])
        store.update_search_index()
        assert _stamps(store) == {"first": False}  # nothing repeated yet
        # another session (summarized later, or not at all) holds first's response at an
        # earlier time, the same time (then the session ids order them) or a later one
        _replies(store, "again", [later_hour, 9], response="first-r3")
        _answers_alike(store)
        store.update_search_index()
        assert _stamps(store) == {"first": False, "again": True}
        _answers_alike(store)
        report = {t.key: t for t in usage_report(store, by="session")}
        assert report["first"].responses + report["again"].responses == 4  # 5 rows, one twice


def test_tools_usage_by_reads_the_summaries_sums_in_their_index(filled):
    """``tools usage --by`` over the whole store or an agent's sessions sums
    ``context_summary`` from ``ix_context_summary_totals`` (revision 0028) and gives what the
    calls give: every key, stale and unsummarized sessions mixed in, a call without a usage
    row counted under its session's model (the join of those rows only)."""
    filled.append("o3-1", _timed([  # (a session's model, and a call without usage)
        {"role": "assistant", "content": None, "tool_calls": [
            _call("o3-m", "bash", {"command": "make m"})]}], 80), model="o3", agent="goose",
        keys=["m"])
    filled.update_search_index()
    _replies(filled, "cc-1", [81])  # (stale: read from its calls)
    with filled.engine.connect() as conn:
        kept = conn.execute(text("SELECT t.agent = s.agent, t.model IS NULL, count(*) "
                                 "FROM context_summary t JOIN sessions s "
                                 "ON s.session_id = t.session_id GROUP BY 1, 2")).all()
        plan = " ".join(str(row[-1]) for row in conn.execute(text(
            "EXPLAIN QUERY PLAN SELECT t.agent, t.raw_name, t.day, sum(t.calls) "
            "FROM context_summary AS t GROUP BY t.agent, t.raw_name, t.day"))
        ) if conn.dialect.name == "sqlite" else "ix_context_summary_totals"
    assert {(bool(same), bool(null)) for same, null, _ in kept} == {(True, True), (True, False)}
    assert "ix_context_summary_totals" in plan and "TEMP B-TREE" not in plan, plan
    by_model = {(t.key, t.tool): t.calls for t in tool_context(filled, by="model")}
    assert by_model[("o3", "bash")] == 1 and by_model[("(unknown)", "bash")] == 3, by_model
    _answers_alike(filled)


def test_a_subagent_counts_under_its_roots_folder_and_agent(store):
    """``usage project|agent`` (rolled up) sum the summarized sessions per folder or agent
    and model in the database, a subagent apart (it counts under its root's folder and
    agent); before and after the catch-up, as the usage rows give, and priced once per key
    and model as the periods are."""
    _replies(store, "root", [1, 2], agent="openhands", cwd="/w/root")
    _replies(store, "child", [3, 4], agent="goose", cwd="/w/child")
    _replies(store, "other", [5], agent="goose", cwd="/w/child")
    store.link_session("child", SessionLink("root", "subagent", "toolu_x"))
    for summarized in (False, True):
        if summarized:
            store.update_search_index()
            assert set(_stamps(store)) == {"root", "child", "other"}
        for by, root_key, other_key in (("project", "/w/root", "/w/child"),
                                        ("agent", "openhands", "goose")):
            rolled = usage_report(store, by=by, rollup=True)
            assert {t.key: (t.responses, t.sessions, t.rolled_up) for t in rolled} == {
                root_key: (4, {"root", "child"}, {"child"}), other_key: (1, {"other"}, set())}
            assert rolled == usage_report(store, by=by, rollup=True, since=EPOCH)
            own = usage_report(store, by=by)
            assert {t.key: t.responses for t in own} == {root_key: 2, other_key: 3}
            assert own == usage_report(store, by=by, since=EPOCH)


class TestKept:
    def test_erasing_a_session_erases_its_summary(self, filled):
        filled.update_search_index()
        filled.erase(["oh-1"], reason="test")
        with filled.engine.connect() as conn:
            for table in ("session_summaries", "tool_summary", "usage_summary",
                          "context_summary"):
                assert conn.execute(text(f"SELECT count(*) FROM {table} "
                                         "WHERE session_id = 'oh-1'")).scalar() == 0, table
        _answers_alike(filled)

    def test_verify_reports_an_edited_summary_and_a_rebuild_repairs_it(self, filled):
        filled.update_search_index()
        assert filled.verify().ok
        with filled.engine.begin() as conn:
            conn.execute(text("UPDATE tool_summary SET calls = calls + 5 "
                              "WHERE session_id = 'oh-1' AND raw_name = 'bash'"))
            conn.execute(text("UPDATE usage_summary SET input_tokens = 0 "
                              "WHERE session_id = 'goose-1'"))
            conn.execute(text("UPDATE session_summaries SET repeats = :f "
                              "WHERE session_id = 'cc-2'"), {"f": False})
            # (the totals read each row's agent: revision 0026)
            conn.execute(text("UPDATE tool_summary SET agent = 'aider' "
                              "WHERE session_id = 'oh-1'"))
            conn.execute(text("UPDATE context_summary SET result_chars = result_chars + 1 "
                              "WHERE session_id = 'oh-2'"))
            conn.execute(text("UPDATE context_summary SET agent = NULL "  # (revision 0028)
                              "WHERE session_id = 'cp-1'"))
        report = filled.verify()
        found = {(p.session_id, p.detail) for p in report.errors if p.check == "summary"}
        assert found == {
            ("oh-1", "the tool usage summary is not what its rows give"),
            ("oh-1", "the tool usage summary does not name its session's agent"),
            ("cp-1", "the tool context summary does not name its session's agent"),
            ("goose-1", "the token usage summary is not what its rows give"),
            ("oh-2", "the tool context summary is not what its rows give"),
            ("cc-2", "a response stored twice is not marked (repeats)")}
        assert {p.session_id for p in filled.verify("oh-1").errors} == {"oh-1"}
        refill_search_index(filled)
        assert filled.verify().ok
        _answers_alike(filled)

    def test_a_read_only_store_reads_without_writing(self, filled, store_url):
        filled.update_search_index()
        _replies(filled, "cc-1", [80])  # stale
        with filled.engine.connect() as conn:
            before = [conn.execute(text(f"SELECT count(*) FROM {t}")).scalar()
                      for t in ("session_summaries", "tool_summary", "usage_summary")]
        with TranscriptStore.open(store_url, read_only=True) as reader:
            assert tool_usage(reader, limit=None) == tool_usage(filled, limit=None)
            assert usage_report(reader, by="day") == usage_report(filled, by="day")
            reader.update_search_index()  # (a read-only store does nothing)
        with filled.engine.connect() as conn:
            assert before == [conn.execute(text(f"SELECT count(*) FROM {t}")).scalar()
                              for t in ("session_summaries", "tool_summary", "usage_summary")]


def test_the_stdlib_readers_read_the_summaries_alike(tmp_path):
    """The command line's stdlib readers (``store.audit.lite_usage``, ``lite_costs``) take
    the same summaries and the same rows of the unsummarized sessions."""
    from store.audit.lite_costs import lite_usage_report
    from store.audit.lite_usage import lite_tool_usage
    from store.usage.prices import load_prices

    url = f"sqlite:///{tmp_path / 'lite.sqlite'}"
    with TranscriptStore.open(url) as db:
        _tools_session(db, "oh-1", "openhands", "str_replace_editor", "/w/proj", 1)
        _replies(db, "cc-1", [2, 3])
        db.update_search_index()
        _replies(db, "cc-2", [5], response="cc-1-r3")  # not summarized
        db.add_alias("Bash", "shell-run", agent="openhands")
        for scope in SCOPES:
            want = sorted(_live_tools(db, **scope), key=lambda u: (-u.calls, u.name))
            assert lite_tool_usage(url, **scope) == want, scope
            for by in ("day", "week", "month", "model", "session", "project"):
                found = lite_usage_report(url, by=by, table=load_prices(), **scope)
                assert found is not None
                assert found[0] == usage_report(db, by=by, since=EPOCH, **scope), (by, scope)
        assert set(_stamps(db)) == {"oh-1", "cc-1"}


def test_a_catch_up_racing_writers_never_keeps_a_wrong_summary(store_url):
    """Writers append and record usage while catch-ups run (separate stores, as separate
    processes would): every stamp left matching is a summary of what its session holds."""
    import threading

    with TranscriptStore.open(store_url) as writer, TranscriptStore.open(store_url) as indexer:
        for n in range(3):
            _replies(writer, f"w{n}", [1])
        stop = threading.Event()
        errors: list[BaseException] = []

        def catch_up() -> None:
            try:
                while not stop.is_set():
                    indexer.update_search_index()
            except BaseException as exc:  # (reported below)
                errors.append(exc)

        thread = threading.Thread(target=catch_up)
        thread.start()
        try:
            for hour in range(2, 40):
                _replies(writer, f"w{hour % 3}", [hour])
                _tools_session(writer, f"t{hour}", "openhands", "str_replace_editor", "/w",
                               hour)
        finally:
            stop.set()
            thread.join()
        assert errors == []
        assert writer.verify().ok  # (the stamps that match: their rows checked)
        _answers_alike(writer)
        writer.update_search_index()
        assert writer.verify().ok
        _answers_alike(writer)


def test_a_mostly_unsummarized_store_reads_its_rows(filled, monkeypatch):
    """More than a quarter of the sessions not summarized (a store written by ``append``
    only, never caught up): the readers decline and the store-wide statements answer."""
    from store.db.reading import summary_reads

    monkeypatch.setattr(summary_reads, "_MOSTLY_UNSUMMARIZED", 0.25)
    filled.update_search_index()
    with filled.engine.connect() as conn:
        assert summary_tool_groups(conn, agent=None, cwd=None) is not None
        assert summary_usage_groups(conn, agent=None, cwd=None) is not None
    for sid in ("oh-1", "oh-2"):  # 2 of 7 stale: more than a quarter
        _replies(filled, sid, [95])
    with filled.engine.connect() as conn:
        assert summary_tool_groups(conn, agent=None, cwd=None) is None
        assert summary_usage_groups(conn, agent=None, cwd=None) is None
    assert tool_usage(filled, limit=None) == sorted(_live_tools(filled),
                                                    key=lambda u: (-u.calls, u.name))
    assert usage_report(filled, by="day") == usage_report(filled, by="day", since=EPOCH)


def test_db_index_says_how_many_sessions_it_summarized(filled, store_url):
    from click.testing import CliRunner

    from store.cli.main import cli

    first = CliRunner().invoke(cli, ["db", "index", "--db", store_url])
    again = CliRunner().invoke(cli, ["db", "index", "--db", store_url])
    assert first.exit_code == again.exit_code == 0, first.output
    assert "usage of 7 sessions summarized" in first.output
    assert "usage of 0 sessions summarized" in again.output


def test_the_written_out_version_is_what_the_summaries_meaning_gives() -> None:
    """``VERSION`` is written out (a read imports no ``hashlib``): it must be the digest of
    this release's action arguments and tier, or stamps would outlive a change of meaning;
    a change of either changes it."""
    from store.tools.actions import ACTION_ARGUMENT

    assert VERSION == version_of(ACTION_ARGUMENT, TIER_TOKENS)
    assert version_of({**ACTION_ARGUMENT, "new_editor": "command"}, TIER_TOKENS) != VERSION
    assert version_of(ACTION_ARGUMENT, TIER_TOKENS + 1) != VERSION


def test_every_backend_answers_as_sqlite_with_or_without_summaries(
        store_url: str, tmp_path, request) -> None:
    """SQLite and PostgreSQL keep the summaries; on Citus the catch-up summarizes nothing and
    every summary reader declines (``None``), so the reports and ``tools usage`` are the rows'
    answers. Every backend answers as an SQLite file holding the same sessions does."""
    citus = request.node.callspec.params["store_url"] == "citus"
    found = []
    for url in (store_url, f"sqlite:///{tmp_path / 'same.sqlite'}"):
        with TranscriptStore.open(url) as db:
            _tools_session(db, "oh-1", "openhands", "str_replace_editor", "/w/proj", 1)
            _replies(db, "cc-1", [2, 3, 27])
            _replies(db, "cc-2", [5], response="cc-1-r3")  # (a response stored twice)
            summarized = db.update_search_index().summarized
            with db.engine.connect() as conn:
                readers = (summary_usage_groups(conn, agent=None, cwd=None),
                           summary_usage_days(conn, agent=None, cwd=None),
                           summary_tool_groups(conn, agent=None, cwd=None))
            reports = {by: [(t.key, t.responses, t.total_tokens, sorted(t.sessions))
                            for t in usage_report(db, by=by)]
                       for by in ("day", "week", "month", "session", "model")}
            found.append((summarized, [r is None for r in readers], reports,
                          [(u.name, u.calls) for u in tool_usage(db, limit=None)]))
    (done, declined, reports, tools), (lite_done, lite_declined, *lite) = found
    assert (done, declined) == ((0, [True] * 3) if citus else (3, [False] * 3))
    assert (lite_done, lite_declined) == (3, [False] * 3)
    assert [reports, tools] == lite
    assert sum(row[1] for row in reports["day"]) == 4  # (5 rows, one response twice)
