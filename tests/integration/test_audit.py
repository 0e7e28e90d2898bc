"""store.audit on both backends: usage, call search, schema audit, redaction, query plans."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from store import Message, TextPart, ToolResult
from store.audit.conditions import ArgumentCondition
from store.audit.plans import explain_search, explain_usage, refill_search_index
from store.audit.schema_audit import schema_audit
from store.audit.search import CallQuery, search_calls
from store.audit.usage import tool_usage
from store.core.model import make_tool_call
from store.redaction.redact import Redactor

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
DAY = 24 * 60
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")


def at(minute):
    return T0 + timedelta(minutes=minute)


def stamp(minute):
    return {"timestamp": at(minute).isoformat()}


def user(minute, content):
    return Message("user", (TextPart(content),), metadata=stamp(minute))


def assistant(minute, *calls):
    return Message("assistant", tuple(make_tool_call(i, n, a) for i, n, a in calls),
                   metadata=stamp(minute))


def result(minute, call_id, content, is_error=False):
    return Message("tool", (ToolResult(call_id, content, is_error),), metadata=stamp(minute))


C3_ARGS = ('{"command": "echo TODO(perf)", "options": {"mode": "fast", "retries": 2.0}, '
           '"flags": ["-n", "-r"], "dry": true, "note": null}')

BASH = {"type": "object", "properties": {"command": {"type": "string"},
                                          "timeout": {"type": "integer"}},
        "required": ["command"]}


@pytest.fixture
def audited(store):
    """Three sessions on three days; c1..c8 are the calls (see the comments)."""
    store.append("s1", [
        user(0, "clean the build"),
        # c1 (legacy name, aliased to bash by the default table), c2 (read_file -> read)
        assistant(1, ("c1", "run_shell_command", '{"command": "rm -rf /tmp/build", "timeout": 30}'),
                  ("c2", "read_file", '{"path": "docs/Übersicht.md"}')),
        result(2, "c1", "removed 3 files"),
        result(3, "c2", '# Übersicht\nsay "hi"'),
        assistant(10, ("c3", "bash", C3_ARGS)),  # c3: an error result
        result(11, "c3", "Traceback: boom", is_error=True),
    ])
    store.append("s2", [
        assistant(DAY, ("c4", "bash", '{"command": "ls C:\\\\Users\\\\dev"}'),
                  ("c5", "grep", '{"pattern": "needle'),  # c5: invalid JSON, no result
                  ("c6", "bash", "")),  # c6: empty arguments, no result
        result(DAY + 1, "c4", "C:\\Users\\dev listed"),
    ])
    store.append("s3", [
        result(2 * DAY - 1, "zzz", "rm -rf orphan: no call before it"),  # an orphan result
        assistant(2 * DAY, ("c7", "run_shell_command", '{"command": "rm -rf /"}'),  # no result
                  ("c8", "web_search", '{"query": "Größe"}')),
        result(2 * DAY + 1, "c8", f"curl -H 'Authorization: Bearer {JWT}' https://api"),
    ])
    store.record_tools("s1", [{"name": "bash", "description": "Run a command",
                               "parameters": BASH}])
    store.record_tools("s3", [
        {"name": "run_shell_command", "description": "",
         "parameters": {"type": "object", "properties": {"command": {"type": "integer"}}}},
        {"name": "web_search", "description": "",
         "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                        "patternProperties": {"^x-": {}}}},
    ])
    return store


def ids(matches):
    return [m.call_id for m in matches]


def usage_by_name(store, **filters):
    return {u.name: u for u in tool_usage(store, **filters)}


class TestToolUsage:
    def test_every_count_per_current_name(self, audited):
        usage = usage_by_name(audited)

        bash = usage["bash"]
        assert bash.raw_names == ("bash", "run_shell_command")
        assert (bash.calls, bash.sessions, bash.invalid_calls, bash.error_results,
                bash.calls_without_result) == (5, 3, 0, 1, 2)
        assert (bash.first_seen, bash.last_seen) == (at(1), at(2 * DAY))
        grep = usage["grep"]
        assert (grep.calls, grep.sessions, grep.invalid_calls, grep.calls_without_result) == (
            1, 1, 1, 1)
        assert usage["read"].raw_names == ("read_file",)
        assert set(usage) == {"bash", "read", "grep", "web_search"}

    def test_rows_come_most_called_first_then_by_name_and_page(self, audited):
        names = [u.name for u in tool_usage(audited)]

        assert names == ["bash", "grep", "read", "web_search"]
        assert [u.name for u in tool_usage(audited, limit=2, offset=1)] == ["grep", "read"]
        assert tool_usage(audited, offset=9) == []

    def test_a_new_alias_regroups_without_rewriting_rows(self, audited):
        audited.add_alias("grep", "search")
        audited.add_alias("web_search", "search")

        usage = usage_by_name(audited)

        assert "grep" not in usage and "web_search" not in usage
        search = usage["search"]
        assert search.raw_names == ("grep", "web_search")
        assert (search.calls, search.sessions, search.invalid_calls) == (2, 2, 1)

    def test_sessions_of_folded_raw_names_are_counted_once(self, audited):
        audited.add_alias("read_file", "bash")  # s1 now has bash calls under three raw names

        bash = usage_by_name(audited)["bash"]

        assert bash.raw_names == ("bash", "read_file", "run_shell_command")
        assert (bash.calls, bash.sessions) == (6, 3)

    def test_removing_an_alias_splits_the_group_again(self, audited):
        audited.remove_alias("run_shell_command")

        usage = usage_by_name(audited)

        assert usage["bash"].calls == 3 and usage["run_shell_command"].calls == 2

    def test_time_range_since_inclusive_until_exclusive(self, audited):
        usage = usage_by_name(audited, since=at(DAY), until=at(2 * DAY))

        assert set(usage) == {"bash", "grep"}
        assert (usage["bash"].calls, usage["bash"].sessions) == (2, 1)
        assert usage["bash"].first_seen == usage["bash"].last_seen == at(DAY)
        assert usage_by_name(audited, since=at(2 * DAY))["bash"].calls == 1

    def test_naive_times_are_utc(self, audited):
        naive = usage_by_name(audited, since=at(DAY).replace(tzinfo=None))
        aware = usage_by_name(audited, since=at(DAY).astimezone(
            datetime.now(UTC).astimezone().tzinfo))

        assert naive == aware == usage_by_name(audited, since=at(DAY))

    def test_one_session(self, audited):
        usage = usage_by_name(audited, session_id="s1")

        assert {n: u.calls for n, u in usage.items()} == {"bash": 2, "read": 1}
        assert usage["bash"].sessions == 1

    def test_the_whole_store_and_a_time_range_that_covers_it_agree(self, audited):
        # two different strategies: separate index statements, and one grouped join
        assert tool_usage(audited) == tool_usage(audited, since=at(-1))

    def test_first_and_last_seen_are_the_oldest_and_newest_call_of_each_tool(self, audited):
        usage = usage_by_name(audited)
        for name, row in usage.items():
            times = [m.created_at for m in search_calls(audited, CallQuery(tool=name),
                                                        limit=1000)]
            assert (row.first_seen, row.last_seen) == (min(times), max(times))

    def test_an_empty_store_has_no_usage(self, store):
        assert tool_usage(store) == []

    def test_a_negative_page_is_refused(self, store):
        with pytest.raises(ValueError):
            tool_usage(store, limit=-1)


class TestCallSearch:
    def test_without_filters_every_call_oldest_first(self, audited):
        assert ids(search_calls(audited)) == ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]

    def test_a_match_carries_names_status_text_time_and_first_result(self, audited):
        first, = search_calls(audited, CallQuery(session_id="s1"), limit=1)

        assert (first.session_id, first.position, first.index) == ("s1", 1, 0)
        assert (first.name, first.raw_name, first.status) == ("bash", "run_shell_command", "ok")
        assert first.arguments_text == '{"command": "rm -rf /tmp/build", "timeout": 30}'
        assert first.created_at == at(1)
        assert (first.result_preview, first.result_is_error) == ("removed 3 files", False)

    def test_a_call_without_result_has_no_preview(self, audited):
        match, = search_calls(audited, CallQuery(raw_name="grep"))

        assert (match.result_preview, match.result_is_error) == (None, None)
        assert match.status == "invalid_json" and match.arguments_error
        assert match.arguments_text == '{"pattern": "needle'

    def test_previews_are_cut(self, audited):
        match, = search_calls(audited, CallQuery(raw_name="web_search"), preview_chars=10)

        assert match.result_preview == "curl -H 'A…"

    def test_the_tool_filter_is_alias_aware(self, audited):
        assert ids(search_calls(audited, CallQuery(tool="bash"))) == [
            "c1", "c3", "c4", "c6", "c7"]
        assert ids(search_calls(audited, CallQuery(tool="read"))) == ["c2"]
        # a raw name that an alias renamed is no current name; raw_name finds it
        assert search_calls(audited, CallQuery(tool="run_shell_command")) == []
        assert ids(search_calls(audited, CallQuery(raw_name="run_shell_command"))) == [
            "c1", "c7"]

    def test_a_new_alias_widens_the_tool_filter(self, audited):
        audited.add_alias("grep", "bash")

        assert "c5" in ids(search_calls(audited, CallQuery(tool="bash")))

    def test_session_and_time_range(self, audited):
        assert ids(search_calls(audited, CallQuery(session_id="s2"))) == ["c4", "c5", "c6"]
        assert ids(search_calls(audited, CallQuery(since=at(10), until=at(DAY + 1)))) == [
            "c3", "c4", "c5", "c6"]
        assert search_calls(audited, CallQuery(since=at(3 * DAY))) == []

    @pytest.mark.parametrize(("status", "expected"), [
        ("ok", ["c1", "c2", "c3", "c4", "c7", "c8"]),
        ("empty", ["c6"]),
        ("invalid_json", ["c5"]),
        ("invalid", ["c5"]),
        ("error", ["c3"]),
        ("no_result", ["c5", "c6", "c7"]),
        (("error", "empty"), ["c3", "c6"]),
    ])
    def test_status(self, audited, status, expected):
        assert ids(search_calls(audited, CallQuery(status=status))) == expected

    def test_an_unknown_status_is_refused(self):
        with pytest.raises(ValueError, match="unknown call status"):
            CallQuery(status="broken")

    @pytest.mark.parametrize(("condition", "expected"), [
        (ArgumentCondition("command", "eq", "rm -rf /"), ["c7"]),
        (ArgumentCondition("command", "eq", "rm -rf"), []),
        (ArgumentCondition("timeout", "eq", 30), ["c1"]),
        (ArgumentCondition("timeout", "eq", 30.0), ["c1"]),
        (ArgumentCondition("timeout", "eq", "30"), []),
        (ArgumentCondition("options.mode", "eq", "fast"), ["c3"]),
        (ArgumentCondition(("options", "retries"), "eq", 2), ["c3"]),
        (ArgumentCondition("dry", "eq", True), ["c3"]),
        (ArgumentCondition("dry", "eq", 1), []),
        (ArgumentCondition("note", "eq", None), ["c3"]),
        (ArgumentCondition("missing", "eq", None), []),
        (ArgumentCondition("flags", "eq", ["-n", "-r"]), ["c3"]),
        (ArgumentCondition("flags", "eq", "-n"), []),
        (ArgumentCondition("path", "eq", "docs/Übersicht.md"), ["c2"]),
        (ArgumentCondition("command", "eq", "ls C:\\Users\\dev"), ["c4"]),
        (ArgumentCondition("query", "eq", "Größe"), ["c8"]),
        (ArgumentCondition("command", "contains", "rm -rf"), ["c1", "c7"]),
        (ArgumentCondition("command", "contains", "RM -RF"), []),  # case-sensitive
        (ArgumentCondition("command", "contains", "C:\\Users"), ["c4"]),
        (ArgumentCondition("command", "contains", "/"), ["c1", "c7"]),  # short: no prefilter
        (ArgumentCondition("path", "contains", "Übers"), ["c2"]),
        (ArgumentCondition("options", "contains", "fast"), []),  # not a string there
        (ArgumentCondition("options.mode", "contains", "as"), ["c3"]),
        (ArgumentCondition("pattern", "contains", "needle"), []),  # invalid calls: no args
    ])
    def test_argument_conditions(self, audited, condition, expected):
        assert ids(search_calls(audited, CallQuery(where=(condition,)))) == expected

    def test_argument_conditions_combine(self, audited):
        query = CallQuery(where=(ArgumentCondition("command", "contains", "rm"),
                                 ArgumentCondition("timeout", "eq", 30)))

        assert ids(search_calls(audited, query)) == ["c1"]

    @pytest.mark.parametrize("bad", [
        {"path": "", "op": "eq"}, {"path": "a..b"}, {"path": "x", "op": "like", "value": "y"},
        {"path": "x", "op": "contains", "value": 3}, {"path": "x", "op": "contains", "value": ""},
        {"path": 'a"b', "value": 1}, {"path": "x", "value": object()},
    ])
    def test_a_bad_condition_is_refused(self, bad):
        with pytest.raises(ValueError):
            ArgumentCondition(**bad)

    @pytest.mark.parametrize(("needle", "expected"), [
        ("rm -rf", ["c1", "c7"]),  # arguments (the orphan result does not count)
        ("REMOVED 3", ["c1"]),  # a result, case-insensitively
        ("traceback", ["c3"]),
        ("übersicht", ["c2"]),  # arguments and result of the same call: once
        ('say "hi"', ["c2"]),  # quotes, escaped in the JSON text
        ("C:\\Users", ["c4"]),  # backslashes, idem
        ('"pattern": "need', ["c5"]),  # invalid arguments: the recorded text
        ("Größe", ["c8"]),
        ("nowhere to be found", []),
    ])
    def test_full_text_over_arguments_and_results(self, audited, needle, expected):
        assert ids(search_calls(audited, CallQuery(text=needle))) == expected

    def test_full_text_needs_three_characters(self):
        with pytest.raises(ValueError, match="at least 3"):
            CallQuery(text="rm")

    def test_every_filter_combines(self, audited):
        query = CallQuery(tool="bash", session_id="s1", since=at(0), until=at(DAY),
                          status="error", where=(ArgumentCondition("dry", "eq", True),),
                          text="todo(perf")

        assert ids(search_calls(audited, query)) == ["c3"]
        assert search_calls(audited, CallQuery(tool="bash", text="Größe")) == []

    def test_paging_is_stable(self, audited):
        pages = [ids(search_calls(audited, limit=3, offset=o)) for o in (0, 3, 6, 9)]

        assert pages == [["c1", "c2", "c3"], ["c4", "c5", "c6"], ["c7", "c8"], []]

    def test_a_deleted_session_is_no_longer_found(self, audited):
        audited.delete_session("s3")

        assert ids(search_calls(audited, CallQuery(text="rm -rf"))) == ["c1"]
        assert ids(search_calls(audited, CallQuery(text="Bearer"))) == []

    def test_appending_the_same_text_again_finds_it_once_per_call(self, audited):
        audited.delete_session("s3")
        audited.append("s4", [assistant(5, ("c9", "bash", '{"command": "rm -rf /"}'))])

        assert ids(search_calls(audited, CallQuery(text="rm -rf"))) == ["c1", "c9"]

    def test_redaction_of_arguments_and_previews(self, audited):
        audited.append("s5", [
            assistant(9, ("k1", "bash", json.dumps({"command": "psql postgres://admin:hunter2hunter2"
                                                               "@db.internal/x"}))),
            result(10, "k1", "ok"),
        ])
        redactor = Redactor()

        found = {m.call_id: m for m in search_calls(audited, redactor=redactor)}

        assert found["c8"].result_preview == (
            "curl -H 'Authorization: Bearer [REDACTED:bearer_token]' https://api")
        assert found["c8"].redactions == 1
        assert "hunter2" not in found["k1"].arguments_text
        assert "[REDACTED:url_password]" in found["k1"].arguments_text
        assert found["c1"].redactions == 0


class TestSchemaAudit:
    def test_against_the_definitions_recorded_with_each_session(self, audited):
        found = {(v.call_id, v.kind) for v in schema_audit(audited)}

        # s1: c1 passes (bash by its current name); c2 'read' is undefined; c3 has unknown
        # keys. s2 recorded nothing: skipped. s3: c7 by its recorded name, a string is no
        # integer; web_search's schema is outside what Parameters reads.
        assert found == {("c2", "undefined_tool"), ("c3", "schema"), ("c7", "schema"),
                         ("c8", "unreadable_schema")}

    def test_a_violation_names_the_problems(self, audited):
        violations = {v.call_id: v for v in schema_audit(audited)}

        c3 = violations["c3"]
        assert (c3.session_id, c3.position, c3.index, c3.name, c3.raw_name, c3.source) == (
            "s1", 4, 0, "bash", "bash", "session")
        assert any("Unknown parameter" in p and "options" in p for p in c3.problems)
        assert c3.arguments_text == C3_ARGS
        assert any("must be an integer" in p for p in violations["c7"].problems)
        assert "patternProperties" in violations["c8"].problems[0]

    def test_against_a_given_schema_every_session_is_checked(self, audited):
        found = {(v.call_id, v.kind) for v in schema_audit(
            audited, schema={"bash": BASH, "grep": {"type": "object", "properties": {}}})}

        # c4, c7 pass; c1 passes (timeout is an integer); c6 lacks the required command
        assert found == {("c3", "schema"), ("c6", "schema"), ("c5", "invalid_arguments")}
        assert all(v.source == "given" for v in schema_audit(audited, schema={"bash": BASH}))

    def test_against_a_schema_file_of_tool_definitions(self, audited, tmp_path):
        path = tmp_path / "tools.json"
        path.write_text(json.dumps([
            {"type": "function", "function": {"name": "bash", "parameters": BASH}},
            {"name": "read", "input_schema": {
                "type": "object", "properties": {"path": {"type": "string"},
                                                 "limit": {"type": "integer"}},
                "required": ["path", "limit"]}},
        ]), encoding="utf-8")

        found = {(v.call_id, v.kind) for v in schema_audit(audited, schema=path)}

        assert found == {("c2", "schema"), ("c3", "schema"), ("c6", "schema")}

    def test_a_schema_file_mapping_names_to_schemas(self, audited, tmp_path):
        path = tmp_path / "schemas.json"
        path.write_text(json.dumps({"web_search": {
            "type": "object", "properties": {"query": {"type": "string"},
                                             "max": {"type": "integer"}},
            "required": ["max"]}}), encoding="utf-8")

        violation, = schema_audit(audited, schema=str(path))

        assert violation.call_id == "c8"
        assert any("Missing required parameter `max`" in p for p in violation.problems)

    def test_an_unreadable_schema_file_raises(self, audited, tmp_path):
        from store import ParametersError

        path = tmp_path / "broken.json"
        path.write_text("{not json", encoding="utf-8")

        with pytest.raises(ParametersError, match="cannot read the schema file"):
            schema_audit(audited, schema=path)

    def test_one_session_one_tool_and_paging(self, audited):
        assert {v.call_id for v in schema_audit(audited, session_id="s3")} == {"c7", "c8"}
        assert [v.call_id for v in schema_audit(audited, tool="bash")] == ["c3", "c7"]
        everything = schema_audit(audited)
        assert schema_audit(audited, limit=2, offset=1) == everything[1:3]

    def test_output_is_redacted(self, audited):
        audited.append("s1", [assistant(20, ("k2", "bash", json.dumps(
            {"command": "deploy", "token": "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"})))])

        violation, = [v for v in schema_audit(audited, redactor=Redactor()) if v.call_id == "k2"]

        assert "ghp_" not in violation.arguments_text
        assert "[REDACTED:github_token]" in violation.arguments_text
        assert violation.redactions == 1


@pytest.fixture
def planned(audited):
    """The audited store with 1,500 more calls (none matching the searches below) and fresh
    statistics, so that the planners weigh the indexes as on a real database."""
    tools = ("read_file", "edit_file", "grep", "web_search", "list_directory")
    batch = []
    for n in range(500):
        batch.append(assistant(3 * DAY + n, *(
            (f"f{n}x{i}", tools[(n + i) % 5],
             json.dumps({"path": f"src/mod_{n}_{i}.py", "query": f"word{n * 7 + i} lorem"}))
            for i in range(3))))
        batch.extend(result(3 * DAY + n, f"f{n}x{i}", f"output {n} {i} ipsum") for i in range(3))
    audited.append("filler", batch)
    audited.update_search_index()  # as the first search would
    # Statistics; on PostgreSQL VACUUM too: it sets the visibility map (index-only scans) and
    # moves the GIN pending lists into the indexes, as autovacuum does on a live database.
    with audited.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE" if audited.dialect == "postgresql" else "ANALYZE"))
    return audited


def _plan(store, query=None, usage=False):
    if usage:
        return explain_usage(store, enable_seqscan=False)
    return explain_search(store, query, enable_seqscan=False)


class TestQueryPlans:
    """The intended index serves each query (after ANALYZE; PostgreSQL with enable_seqscan off,
    because the tables are tiny; bench/audit.py shows the plans of a million calls)."""

    def test_the_usage_summary_reads_indexes_only(self, planned):
        plans = dict(part.split("\n", 1) for part in _plan(planned, usage=True).split("-- ")[1:])

        if planned.dialect == "sqlite":
            assert plans["counts"].startswith(
                "SCAN tool_calls USING COVERING INDEX ix_tool_calls_usage")
            assert "SCAN r USING COVERING INDEX ix_tool_results_errors" in plans["errors"]
            assert "USING COVERING INDEX ix_tool_results_call" in plans["without result"]
            assert "USING COVERING INDEX ix_messages_time" in plans["first and last seen"]
            scans = [line for line in "\n".join(plans.values()).splitlines()
                     if line.strip().startswith(("SCAN tool_calls", "SCAN messages"))]
            assert all("COVERING INDEX" in line for line in scans)
        else:
            assert "Index Only Scan using ix_tool_calls_usage on tool_calls" in plans["counts"]
            assert "ix_tool_results_errors" in plans["errors"]
            assert "ix_tool_results_call" in plans["without result"]
            assert "ix_messages_time" in plans["first and last seen"]
            assert "Seq Scan" not in "".join(plans.values())

    def test_a_filtered_usage_summary_uses_the_time_index(self, planned):
        plan = explain_usage(planned, since=at(DAY), until=at(DAY + 5), enable_seqscan=False)

        assert "ix_messages_created_at" in plan

    def test_the_tool_filter_uses_the_raw_name_index(self, planned):
        plan = _plan(planned, CallQuery(tool="bash"))

        assert "ix_tool_calls_usage" in plan

    def test_an_argument_equality_uses_the_argument_index(self, planned):
        plan = _plan(planned, CallQuery(where=(ArgumentCondition("command", "eq", "ls"),)))

        if planned.dialect == "sqlite":
            assert "search_fts VIRTUAL TABLE" in plan
        else:
            assert "Bitmap Index Scan on ix_tool_calls_arguments_gin" in plan

    def test_an_argument_contains_uses_the_text_index(self, planned):
        plan = _plan(planned, CallQuery(where=(ArgumentCondition("command", "contains",
                                                                 "rm -rf"),)))

        expected = "search_fts" if planned.dialect == "sqlite" else "ix_tool_calls_search_trgm"
        assert expected in plan

    def test_full_text_uses_the_search_index(self, planned):
        plan = _plan(planned, CallQuery(text="traceback"))

        if planned.dialect == "sqlite":
            assert "search_fts VIRTUAL TABLE" in plan
            assert "SCAN tool_calls " not in plan
        else:
            assert "ix_tool_calls_search_trgm" in plan, plan

    def test_a_time_range_uses_the_message_time_index(self, planned):
        plan = _plan(planned, CallQuery(since=at(DAY), until=at(DAY + 5)))

        assert "ix_messages_created_at" in plan


class TestSearchIndexMaintenance:
    def test_appends_leave_the_index_to_the_catch_up(self, audited):
        with audited.engine.connect() as conn:
            behind = conn.execute(text("SELECT count(*) FROM sessions "
                                       "WHERE next_position > indexed_position")).scalar()
            items = conn.execute(text("SELECT count(*) FROM search_items")).scalar()
        assert behind > 0 and items == 0  # nothing indexed inside the appends

        done = audited.update_search_index()

        assert done.sessions == behind and done.calls == audited.count_calls()
        with audited.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM sessions "
                                     "WHERE next_position > indexed_position")).scalar() == 0
            assert conn.execute(text("SELECT count(*) FROM search_items WHERE kind = 0")
                                ).scalar() == done.calls
        assert audited.update_search_index().sessions == 0  # nothing new: nothing done

    def test_refilling_gives_the_same_results(self, audited):
        before = ids(search_calls(audited, CallQuery(text="rm -rf")))

        refilled = refill_search_index(audited)

        assert refilled is True
        assert ids(search_calls(audited, CallQuery(text="rm -rf"))) == before
        audited.delete_session("s1")  # deletes find the refilled rows
        assert ids(search_calls(audited, CallQuery(text="rm -rf"))) == ["c7"]
