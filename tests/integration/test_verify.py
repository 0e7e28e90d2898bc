"""verify(): what is stored reads back as written; tampering is found; nothing changes."""

from __future__ import annotations

import pytest
from sqlalchemy import text

TURN = [
    {"role": "user", "content": "go"},
    {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"a": 1}'}},
        {"id": "c2", "type": "function", "function": {"name": "grep", "arguments": "{bad"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    {"role": "tool", "tool_call_id": "c2", "content": "failed"},
]


def tamper(store, sql):
    with store.engine.begin() as conn:
        conn.execute(text(sql))


class TestVerify:
    def test_a_clean_store_verifies(self, store):
        store.append("s", TURN)
        store.append("t", TURN[:2])
        report = store.verify()
        assert report.ok and report.errors == ()
        assert (report.sessions, report.messages, report.calls, report.results) == (2, 6, 4, 2)
        assert report.problems == ()

    def test_a_call_id_or_tool_name_holding_nul_verifies(self, store):
        """PostgreSQL's columns hold NUL as U+FFFD and the wire text the exact value: verify
        reads the two as the same (it reported a wire error on every such call)."""
        store.append("s", [
            {"role": "assistant", "tool_calls": [
                {"id": "a\x00b", "type": "function",
                 "function": {"name": "run\x00it", "arguments": '{"a": 1}'}}]},
            {"role": "tool", "tool_call_id": "a\x00b", "content": "ok"}])
        report = store.verify()
        assert report.ok and report.problems == (), report
        tamper(store, "UPDATE tool_calls SET call_id = 'other'")
        assert {p.check for p in store.verify().errors} == {"wire", "chain"}

    def test_arguments_holding_an_integer_past_64_bits_verify(self, store):
        """The queryable copy is parsed exactly, as the wire text is: an integer past 64 bits
        is the same value in both (verify reported "the queryable copy of the arguments
        differs" for such a sound call on SQLite, reading the copy through the JSON type)."""
        store.append("s", [
            {"role": "assistant", "tool_calls": [
                {"id": "c1", "type": "function", "function": {
                    "name": "bash", "arguments": '{"n":12345678901234567890123,"m":-2}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}])
        report = store.verify()
        assert report.ok, report.problems
        assert report.calls == 1
        # ... and a copy that really differs is still found
        tamper(store, "UPDATE tool_calls SET arguments = '{\"n\": 12345678901234567890124, "
                      "\"m\": -2}'")
        # (SQLite stores this call's wire text once, rebuilt from the copy: the digest over
        # it finds the change; PostgreSQL's wire text is whole: the copy differs from it)
        assert [p.check for p in store.verify().problems] == [
            "chain" if store.dialect == "sqlite" else "arguments"]

    def test_an_orphan_result_is_a_warning(self, store):
        store.append("s", [{"role": "tool", "tool_call_id": "nobody", "content": "x"}])
        report = store.verify()
        assert report.ok
        assert [(p.severity, p.check) for p in report.problems] == [("warning", "orphan")]

    @pytest.mark.parametrize(
        ("sql", "check"),
        [
            ("UPDATE tool_calls SET raw_name = 'other' WHERE call_id = 'c1'", "wire"),
            ("UPDATE tool_calls SET arguments_status = 'ok' WHERE call_id = 'c2'", "status"),
            ("UPDATE tool_calls SET wire_json = replace(wire_json, '1', '2') "
             "WHERE call_id = 'c1'", "arguments"),
            ("DELETE FROM tool_calls WHERE call_id = 'c2'", "parts"),
            ("UPDATE sessions SET next_position = 9", "positions"),
            ("UPDATE messages SET position = 7 WHERE position = 0", "positions"),
        ],
        ids=["name", "status", "arguments-copy", "missing-call-row", "next-position", "gap"],
    )
    def test_tampering_is_reported_and_nothing_changes(self, store, sql, check):
        store.append("s", TURN)
        tamper(store, sql)
        with store.engine.connect() as conn:
            before = conn.execute(text("SELECT count(*) FROM tool_calls")).scalar_one()
        report = store.verify()
        assert not report.ok
        assert check in {p.check for p in report.errors}
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM tool_calls")).scalar_one() == before

    def test_one_session_can_be_verified(self, store):
        store.append("s", TURN)
        store.append("t", TURN)
        tamper(store, "UPDATE sessions SET next_position = 99 WHERE session_id = 't'")
        assert store.verify("s").ok and not store.verify("t").ok
