"""Issue 37 item 2: the rows derived from the transcript (search text, argument views, secret
digests, SQLite full-text entries) are checked by ``verify``, rebuilt by ``db index
--rebuild``, and never hide a call from ``rules check`` (nor, when a text is missing, from a
search), on both backends. Since revision 0023 (issue 39) the search text is a column of the
call or result it is derived from: it cannot be deleted or moved apart from its row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from store import CallQuery, TranscriptStore, check_rules, refill_search_index, search_calls
from store.cli.main import cli
from store.db.index.index_check import DERIVED_CHECKS, index_gaps

SECRET = "ghp_" + "a1B2" * 9


def call(call_id: str, command: str, name: str = "Bash") -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": call_id, "type": "function",
        "function": {"name": name, "arguments": json.dumps({"command": command})}}]}


def result(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


@pytest.fixture
def filled(store: TranscriptStore) -> TranscriptStore:
    """Two sessions, indexed: ``risky`` deletes /etc (a critical finding), ``quiet`` lists
    files and echoes a token (a secret digest)."""
    store.create_session("risky", agent="claude-code", cwd="/home/dev/app")
    store.append("risky", [{"role": "user", "content": "clean up"}, call("c1", "rm -rf /etc"),
                           result("c1", "removed")])
    store.create_session("quiet", agent="claude-code", cwd="/home/dev/app")
    store.append("quiet", [{"role": "user", "content": "look"}, call("q1", "ls -la"),
                           result("q1", "total 0"), call("q2", f"echo {SECRET}"),
                           result("q2", "ok")])
    store.update_search_index()
    return store


def tamper(store: TranscriptStore, *statements: str) -> None:
    with store.engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))


def findings(store: TranscriptStore, **kwargs) -> set[tuple[str, str, int, int]]:
    return {(f.rule_id, f.session_id, f.position, f.call_index)
            for f in check_rules(store, **kwargs) if f.level in ("critical", "high")}


def found(store: TranscriptStore, needle: str, **kwargs) -> list[str]:
    return [m.call_id for m in search_calls(store, CallQuery(text=needle, **kwargs))]


#: (id, statements, the check verify reports, the session and position it names, whether
#: the search's own check shows it, so that a search scans that session exactly, whether the
#: rules prefilter uses the rows touched, so that it evaluates that session whole and warns)
TAMPERING = [
    ("text-edited", ["UPDATE tool_calls SET search_body = 'ls' WHERE session_id = 'risky'"],
     "index_altered", "risky", 1, False, True),
    ("text-removed", ["UPDATE tool_calls SET search_body = NULL WHERE session_id = 'risky'"],
     "index_missing", "risky", 1, True, True),
    ("text-past-a-lowered-watermark", ["UPDATE sessions SET indexed_position = 2 "
                                       "WHERE session_id = 'quiet'"],
     "index_extra", "quiet", 3, False, True),
    # (SQLite: the result's full-text entry no longer matches a text, which the prefilter
    # checks: "sqlite" means used there only)
    ("result-text-removed", ["UPDATE tool_results SET search_body = NULL "
                             "WHERE session_id = 'risky'"],
     "index_missing", "risky", 2, True, "sqlite"),
    ("view-edited", ["UPDATE call_views SET text = 'ls' WHERE session_id = 'risky'"],
     "view_altered", "risky", 1, False, False),
    ("view-deleted", ["DELETE FROM call_views WHERE session_id = 'risky'"],
     "view_missing", "risky", 1, False, False),
    ("view-inserted", ["INSERT INTO call_views (session_id, position, call_index, view, text) "
                       "VALUES ('quiet', 1, 0, 'path', '/etc/shadow')"],
     "view_extra", "quiet", 1, False, False),
    ("secret-deleted", ["DELETE FROM call_secrets"], "secret_missing", "quiet", 3, False, False),
    ("secret-inserted", ["INSERT INTO call_secrets (session_id, position, item, item_index, "
                         "digest, kind, call_position, call_index) VALUES ('risky', 1, 0, 0, "
                         "'00', 'github_token', 1, 0)"], "secret_extra", "risky", 1, False, False),
    ("watermark-past-end", ["UPDATE sessions SET indexed_position = next_position + 3 "
                            "WHERE session_id = 'risky'"],
     "index_watermark", "risky", None, True, True),
]


class TestDerivedRows:
    def test_an_untouched_store_verifies_clean(self, filled):
        report = filled.verify()
        assert report.ok and report.problems == ()
        with filled.engine.connect() as conn:  # (the rows it compared are there)
            assert conn.execute(text(
                "SELECT (SELECT count(*) FROM tool_calls WHERE search_body IS NOT NULL) + "
                "(SELECT count(*) FROM tool_results WHERE search_body IS NOT NULL)")
            ).scalar() == 6
            assert conn.execute(text("SELECT count(*) FROM call_views")).scalar() == 3
            assert conn.execute(text("SELECT count(*) FROM call_secrets")).scalar() == 1

    @pytest.mark.parametrize(("statements", "check", "sid", "position", "keyed", "used"),
                             [t[1:] for t in TAMPERING], ids=[t[0] for t in TAMPERING])
    def test_tampering_is_reported_never_hides_a_finding_and_a_rebuild_repairs_it(
            self, filled, statements, check, sid, position, keyed, used):
        before = findings(filled)
        assert any(f[1] == "risky" and f[2] == 1 for f in before)  # rm -rf /etc
        assert found(filled, "rm -rf") == ["c1"]

        tamper(filled, *statements)

        report = filled.verify()
        assert not report.ok
        assert (check, sid, position) in {(p.check, p.session_id, p.position)
                                          for p in report.errors}
        assert all(p.severity == "error" for p in report.problems)
        told: list[str] = []
        assert findings(filled, warn=told.append) == before  # the prefilter lost nothing
        if used == "sqlite":
            used = filled.dialect == "sqlite"
        assert any(f"session {sid}:" in message for message in told) == used
        assert findings(filled, prefilter=False) == before
        assert found(filled, "rm -rf", exact=True) == ["c1"]
        if keyed:  # the keys show it: the search scans that session exactly, and says so
            warned: list[str] = []
            matches = search_calls(filled, CallQuery(text="rm -rf"), warn=warned.append)
            assert [m.call_id for m in matches] == ["c1"]
            assert any(f"session {sid}:" in message for message in warned)

        assert refill_search_index(filled) in (True, False)
        repaired = filled.verify()
        assert repaired.ok and repaired.problems == ()
        assert found(filled, "rm -rf") == ["c1"]
        assert findings(filled) == before

    def test_a_view_search_scans_a_session_whose_views_do_not_line_up(self, filled):
        tamper(filled, "UPDATE tool_calls SET search_body = NULL WHERE session_id = 'risky'",
               "UPDATE call_views SET text = 'ls' WHERE session_id = 'risky'")
        from store import ViewCondition

        warned: list[str] = []
        matches = search_calls(filled, CallQuery(views=(ViewCondition("command", "rm -rf"),)),
                               warn=warned.append)
        assert [m.call_id for m in matches] == ["c1"] and warned
        exact = search_calls(filled, CallQuery(views=(ViewCondition("command", "rm -rf"),),
                                               exact=True))
        assert [m.call_id for m in exact] == ["c1"]

    def test_a_removed_view_never_hides_a_spliced_command_from_the_prefilter(self, store):
        # The shell joins r''m into rm: the indexed text holds no "rm" the rule's terms
        # find, so only the command view (a quote inside a word) makes it a candidate.
        store.create_session("sneaky", agent="claude-code", cwd="/home/dev/app")
        store.append("sneaky", [call("s1", "r''m -rf /etc")])
        store.update_search_index()
        before = findings(store)
        assert any(f[1] == "sneaky" for f in before)
        tamper(store, "DELETE FROM call_views WHERE session_id = 'sneaky'")
        assert ("view_missing", "sneaky") in {(p.check, p.session_id)
                                              for p in store.verify().errors}
        told: list[str] = []
        assert findings(store, warn=told.append) == before
        assert any("session sneaky:" in message for message in told)

    @pytest.mark.parametrize(("statements", "why"), [
        (["UPDATE tool_calls SET search_body = NULL WHERE session_id = 'quiet' "
          "AND position = 3"], "a call below the watermark has no search text"),
        (["UPDATE tool_results SET search_body = NULL WHERE session_id = 'quiet' "
          "AND position = 2"], "a result below the watermark has no search text"),
        # a raised watermark claims a call the catch-up has not reached
        (["UPDATE sessions SET indexed_position = 0 WHERE session_id = 'quiet'",
          "UPDATE tool_calls SET search_body = NULL WHERE session_id = 'quiet'",
          "UPDATE tool_results SET search_body = NULL WHERE session_id = 'quiet'",
          "UPDATE sessions SET indexed_position = 2 WHERE session_id = 'quiet'"],
         "a call below the watermark has no search text"),
        (["UPDATE sessions SET indexed_position = next_position + 1 "
          "WHERE session_id = 'quiet'"], "the watermark is past the stored messages"),
    ], ids=["call", "result", "raised-watermark", "watermark-past-end"])
    def test_the_check_finds_the_rows_without_their_text(self, filled, statements, why):
        with filled.engine.connect() as conn:
            assert index_gaps(conn) == {}
        tamper(filled, *statements)
        with filled.engine.connect() as conn:
            gaps = index_gaps(conn)
            assert gaps == {"quiet": why}
            assert index_gaps(conn, "quiet") == gaps and index_gaps(conn, "risky") == {}
        assert not filled.verify().ok

    def test_one_session_is_checked_alone(self, filled):
        tamper(filled, "DELETE FROM call_views WHERE session_id = 'risky'")
        assert filled.verify("quiet").ok
        assert {p.check for p in filled.verify("risky").errors} == {"view_missing"}

    def test_rows_past_the_watermark_are_extra(self, filled):
        tamper(filled, "UPDATE sessions SET indexed_position = 0 WHERE session_id = 'quiet'")
        checks = {p.check for p in filled.verify().errors}
        assert {"index_extra", "view_extra", "secret_extra"} <= checks

    def test_many_bad_rows_are_counted_not_listed(self, store):
        store.append("long", [call(f"c{i}", f"echo {i}") for i in range(30)])
        store.update_search_index()
        tamper(store, "DELETE FROM call_views")
        errors = [p for p in store.verify().errors if p.check == "view_missing"]
        assert len(errors) == 21  # 20 listed, then how many more
        assert errors[-1].detail == "10 more rows like the above"


def test_sqlite_full_text_entries_are_checked(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'fts.sqlite'}"
    with TranscriptStore.open(url) as opened:
        opened.append("risky", [call("c1", "rm -rf /etc")])
        opened.update_search_index()
        before = findings(opened)
        assert before
        # the full-text entry loses its text (FTS5's own delete command), the row keeps it
        tamper(opened, "INSERT INTO search_fts (search_fts, rowid, body) "
                       "SELECT 'delete', id, body FROM search_items")  # (the view of 0023)
        assert found(opened, "rm -rf") == []  # what this guards against
        assert found(opened, "rm -rf", exact=True) == ["c1"]
        assert {(p.check, p.session_id, p.position) for p in opened.verify().errors} == {
            ("fts", "risky", 0)}
        assert findings(opened) == before
        refill_search_index(opened)
        assert opened.verify().problems == ()
        assert found(opened, "rm -rf") == ["c1"]


def test_a_read_only_verify_checks_the_full_text_entries_and_writes_nothing(tmp_path: Path):
    path = tmp_path / "ro.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        opened.append("risky", [call("c1", "rm -rf /etc")])
        opened.update_search_index()
        tamper(opened, "INSERT INTO search_fts (search_fts, rowid, body) "
                       "SELECT 'delete', id, body FROM search_items")
    size = path.stat().st_size
    with TranscriptStore.open(f"sqlite:///{path}", read_only=True) as opened:
        assert {p.check for p in opened.verify().errors} == {"fts"}
    assert path.stat().st_size == size


@pytest.mark.parametrize(("statement", "keyed"), [
    ("UPDATE tool_calls SET search_id = NULL WHERE session_id = 'risky'", True),
    ("UPDATE tool_calls SET search_id = search_id + 1000 WHERE session_id = 'risky'", False),
], ids=["id-removed", "ids-moved"])
def test_sqlite_a_row_whose_full_text_id_changed_is_found(tmp_path: Path, statement: str,
                                                          keyed: bool):
    """SQLite: a row's full-text entry is under its ``search_id`` (revision 0023). An id
    removed is seen by the search's own check (the session is scanned exactly); ids moved
    leave the entries pointing nowhere: ``verify`` reports the entries, the rules prefilter
    evaluates every session whole, a rebuild repairs it."""
    with TranscriptStore.open(f"sqlite:///{tmp_path / 'no.sqlite'}") as opened:
        opened.append("quiet", [call("q1", "ls -la")])
        opened.append("risky", [call("c1", "rm -rf /etc")])
        opened.update_search_index()
        before = findings(opened)
        assert any(f[1] == "risky" for f in before)
        tamper(opened, statement)
        warned: list[str] = []
        matches = search_calls(opened, CallQuery(text="rm -rf"), warn=warned.append)
        assert [m.call_id for m in matches] == (["c1"] if keyed else [])
        assert any("session risky:" in message for message in warned) == keyed
        assert "fts" in {p.check for p in opened.verify().errors}
        assert findings(opened) == before
        assert found(opened, "rm -rf", exact=True) == ["c1"]
        refill_search_index(opened)
        assert opened.verify().problems == ()
        assert found(opened, "rm -rf") == ["c1"]


def test_deleted_rows_take_their_text_out_of_the_index_and_a_row_caught_up_again_once(store):
    """A truncate, a deleted session, an erased one and a fork leave no text behind (SQLite:
    the delete triggers take the full-text entries out, a session's own before its rows
    cascade away); a row caught up again (its watermark lowered) is in the index once:
    ``verify`` compares every entry with the text of the rows."""
    for name in ("cut", "gone", "erased", "kept"):
        store.append(name, [call(f"{name}1", f"rm -rf /{name}"), result(f"{name}1", "ok"),
                            call(f"{name}2", f"ls /{name}"), result(f"{name}2", "ok")])
    store.update_search_index()
    store.truncate("cut", 2)
    store.delete_session("gone")
    store.erase(["erased"], reason="asked")
    store.fork("kept", 2, new_session_id="forked")
    tamper(store, "UPDATE sessions SET indexed_position = 1 WHERE session_id = 'kept'")
    store.update_search_index()
    report = store.verify()
    assert report.ok and report.problems == (), report.problems
    hits = search_calls(store, CallQuery(text="rm -rf"))
    assert sorted((m.session_id, m.call_id) for m in hits) == [
        ("cut", "cut1"), ("forked", "kept1"), ("kept", "kept1")]
    assert found(store, "ls /") == ["kept2"]


def test_every_derived_check_is_in_the_json_schema():
    schema = json.loads((Path(__file__).parents[2] / "docs" / "json" /
                         "verify-problem.schema.json").read_text())
    assert set(DERIVED_CHECKS) <= set(schema["properties"]["check"]["enum"])


class TestCommandLine:
    def test_verify_json_rebuild_then_clean(self, store_url):
        with TranscriptStore.open(store_url) as opened:
            opened.create_session("risky", agent="claude-code")
            opened.append("risky", [call("c1", "rm -rf /etc")])
            opened.update_search_index()
            tamper(opened, "UPDATE tool_calls SET search_body = 'ls'",
                   "DELETE FROM call_views")
        runner = CliRunner()
        verified = runner.invoke(cli, ["verify", "--db", store_url, "--json"])
        assert verified.exit_code == 1
        rows = [json.loads(line) for line in verified.stdout.splitlines()]
        assert {(r["check"], r["session_id"], r["position"], r["index"]) for r in rows} >= {
            ("index_altered", "risky", 0, 0), ("view_missing", "risky", 0, 0)}

        checked = runner.invoke(cli, ["rules", "check", "--db", store_url, "--json"])
        assert checked.exit_code == 0, checked.output
        assert any(json.loads(line)["level"] == "critical"
                   for line in checked.stdout.splitlines())
        assert "warning: session risky: the search index does not match" in checked.stderr

        rebuilt = runner.invoke(cli, ["db", "index", "--rebuild", "--db", store_url])
        assert rebuilt.exit_code == 0, rebuilt.output
        assert "rebuilt from the transcript: 1 calls" in rebuilt.stdout
        clean = runner.invoke(cli, ["verify", "--db", store_url])
        assert clean.exit_code == 0 and "0 errors" in clean.stdout

    def test_search_warns_and_exact_scans(self, store_url):
        with TranscriptStore.open(store_url) as opened:
            opened.append("risky", [call("c1", "rm -rf /etc")])
            opened.update_search_index()
            tamper(opened, "UPDATE tool_calls SET search_body = NULL")
        runner = CliRunner()
        searched = runner.invoke(cli, ["calls", "search", "--db", store_url, "--text",
                                       "rm -rf", "--json"])
        assert searched.exit_code == 0, searched.output
        assert [json.loads(line)["call_id"] for line in searched.stdout.splitlines()] == ["c1"]
        assert "warning: session risky: the search index does not line up" in searched.stderr
        exact = runner.invoke(cli, ["calls", "search", "--db", store_url, "--text", "rm -rf",
                                    "--json", "--exact"])
        assert [json.loads(line)["call_id"] for line in exact.stdout.splitlines()] == ["c1"]
        assert "warning" not in exact.stderr


def test_the_check_reads_in_bulk_not_row_by_row(tmp_path: Path):
    """Statements per chunk of 100 sessions (and one full-text look-up per session), never
    per row: 250 sessions of 2 calls and 2 results each are read in 3 chunks (SQLite's
    statements traced)."""
    from store.db.index.index_check import check_derived

    with TranscriptStore.open(f"sqlite:///{tmp_path / 'bulk.sqlite'}") as opened:
        for number in range(250):
            opened.append(f"s{number:03}", [call("a", f"ls {number}"), result("a", "ok"),
                                            call("b", f"cat {number}"), result("b", "ok")])
        opened.update_search_index()
        statements: list[str] = []
        with opened.engine.connect() as conn:
            conn.connection.driver_connection.set_trace_callback(statements.append)
            try:
                assert check_derived(conn) == []
            finally:
                conn.connection.driver_connection.set_trace_callback(None)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")
             and ("FROM tool_calls" in s or "FROM tool_results" in s)
             and "search_fts" not in s]
    # calls and results below the watermark, and those past it with a text: 3 chunks each;
    # and each session's first call, all in one
    assert len(reads) == 13
    # one look-up per session: its first call's entry under the id its number gives
    looked_up = [s for s in statements if "search_fts MATCH" in s]
    assert len(looked_up) == 250
    ours = [s for s in statements if not s.startswith("--") and s not in looked_up]
    assert len(ours) < 60


class TestCheckedOncePerState:
    """The key check runs once per database state in a long-lived store, and again as soon
    as anything commits: through this store, another store or another process."""

    @pytest.fixture
    def counted(self, monkeypatch) -> list[str | None]:
        import store.db.index.gaps_cache as cache

        checks: list[str | None] = []
        real = cache.index_gaps

        def counting(conn, session_id):
            checks.append(session_id)
            return real(conn, session_id)

        monkeypatch.setattr(cache, "index_gaps", counting)
        return checks

    def test_an_unchanged_store_is_checked_once_and_a_commit_checks_again(
            self, filled, counted, request, monkeypatch):
        import store.db.index.gaps_cache as cache

        # On Citus a write to a worker does not move the coordinator's WAL: every search checks
        every = request.node.callspec.params["store_url"] == "citus"
        # The state each search saw: on PostgreSQL the cluster's WAL position, which another
        # test's database written in parallel moves too (a conservative state): the store
        # checks once per state it sees, so once when nothing else writes.
        states: list[object] = []
        real = cache._state
        # (the states the key check saw only: the searches' index check reads one too,
        # store/db/index/gaps_cache.idle_state, tested in test_idle_index.py)
        import store.db.store as store_module

        monkeypatch.setattr(store_module, "idle_state", lambda conn: (False, None))

        def seen(conn, kept):
            state = real(conn, kept)
            states.append(state)
            return state

        monkeypatch.setattr(cache, "_state", seen)
        for _ in range(3):
            assert found(filled, "rm -rf") == ["c1"]
        distinct = len(dict.fromkeys(states))
        # (a search at a state it saw before reuses its statement, key check included:
        # store.audit.search._statement; each state may be read twice, by that and the check)
        assert counted == [None] * 3 if every else (
            set(counted) == {None} and 1 <= len(counted) <= distinct)
        if filled.engine.dialect.name == "sqlite":
            assert distinct == 1  # (only this test writes to its file)
        counted.clear()
        filled.append("quiet", [call("q3", "rm -rf /tmp/x")])
        filled.update_search_index()
        assert found(filled, "rm -rf") == ["c1", "q3"]
        assert counted == [None]
        assert found(filled, "rm -rf", session_id="risky") == ["c1"]
        assert counted == [None, "risky"]  # each scope is its own answer

    def test_tampering_by_another_connection_is_seen_by_the_next_search(self, filled,
                                                                        store_url, counted):
        from backends import commit_elsewhere

        assert found(filled, "rm -rf") == ["c1"]
        commit_elsewhere(store_url, "UPDATE tool_calls SET search_body = NULL "
                                    "WHERE session_id = 'risky'")
        warned: list[str] = []
        matches = search_calls(filled, CallQuery(text="rm -rf"), warn=warned.append)
        assert [m.call_id for m in matches] == ["c1"]  # scanned exactly, not hidden
        assert any("session risky:" in message for message in warned)
        assert len(counted) == 2
