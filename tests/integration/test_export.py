"""store.audit.export on both backends: canonical JSONL of sessions, CSV of calls, redaction."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from store import Message, SessionNotFound, TextPart, ThinkingPart, ToolResult
from store.audit.conditions import ArgumentCondition
from store.audit.export import CSV_COLUMNS, export_calls_csv, export_jsonl
from store.audit.search import CallQuery
from store.core.model import make_tool_call
from store.redaction.redact import Redactor

T0 = datetime(2026, 2, 1, 8, 30, tzinfo=UTC)
KEY = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
       "-----END OPENSSH PRIVATE KEY-----")


def stamp(minute):
    return {"timestamp": (T0 + timedelta(minutes=minute)).isoformat()}


@pytest.fixture
def exported(store):
    store.append("b-session", [
        Message("user", (TextPart("deploy it"),), message_id="u1", metadata=stamp(0)),
        Message("assistant", (
            ThinkingPart("need the key", "sig-1"),
            make_tool_call("c1", "run_shell_command",
                           json.dumps({"command": f"OPENAI_API_KEY={KEY} ./deploy.sh"})),
            make_tool_call("c2", "read_file", '{"path": "id_ed25519"'),
        ), metadata=stamp(1)),
        Message("tool", (ToolResult("c1", "deployed", False),), metadata=stamp(2)),
        Message("tool", (ToolResult("c2", [{"type": "text", "text": PEM}], True),),
                metadata=stamp(3)),
    ], keys=["k0", "k1", "k2", "k3"])
    store.append("a-session", [
        Message("assistant", (make_tool_call(None, "grep", {"pattern": "TODO"}),),
                metadata=stamp(10)),
    ])
    return store


def jsonl(store, session_ids=None, **options):
    out = io.StringIO()
    stats = export_jsonl(store, session_ids, out, **options)
    return [json.loads(line) for line in out.getvalue().splitlines()], stats, out.getvalue()


def rows_of(store, query=None, **options):
    out = io.StringIO(newline="")
    stats = export_calls_csv(store, query, out, **options)
    return list(csv.reader(io.StringIO(out.getvalue(), newline=""))), stats


class TestJsonl:
    def test_one_line_per_message_sessions_in_id_order(self, exported):
        lines, stats, _ = jsonl(exported)

        assert [(r["session_id"], r["position"]) for r in lines] == [
            ("a-session", 0), ("b-session", 0), ("b-session", 1), ("b-session", 2),
            ("b-session", 3)]
        assert (stats.sessions, stats.records, stats.redactions) == (2, 5, 0)

    def test_a_line_has_the_canonical_keys_in_order(self, exported):
        lines, _, _ = jsonl(exported, ["b-session"])

        first = lines[0]
        assert list(first) == ["session_id", "position", "role", "created_at", "message_id",
                               "key", "source", "parts", "extras", "metadata"]
        assert (first["role"], first["message_id"], first["key"]) == ("user", "u1", "k0")
        assert first["created_at"] == "2026-02-01T08:30:00Z"
        assert first["parts"] == [{"type": "text", "text": "deploy it"}]

    def test_calls_are_in_canonical_wire_form_with_current_name_and_status(self, exported):
        lines, _, _ = jsonl(exported, ["b-session"])

        thinking, call, invalid = lines[1]["parts"]
        assert thinking == {"type": "thinking", "text": "need the key", "signature": "sig-1"}
        assert call["type"] == "tool_call" and call["index"] == 0
        assert call["call"] == {"id": "c1", "type": "function", "function": {
            "name": "run_shell_command",
            "arguments": json.dumps({"command": f"OPENAI_API_KEY={KEY} ./deploy.sh"})}}
        assert (call["name"], call["status"], call["error"]) == ("bash", "ok", None)
        assert (invalid["name"], invalid["status"]) == ("read", "invalid_json")
        assert invalid["error"]

    def test_results_carry_their_link_and_content_as_recorded(self, exported):
        lines, _, _ = jsonl(exported, ["b-session"])

        result, = lines[3]["parts"]
        assert result == {"type": "tool_result", "index": 0, "call_id": "c2", "call": [1, 1],
                          "is_error": True, "name": None,
                          "content": [{"type": "text", "text": PEM}]}

    def test_the_same_rows_give_the_same_bytes(self, exported):
        assert jsonl(exported)[2] == jsonl(exported)[2]

    def test_redaction_marks_every_secret_and_counts_them(self, exported):
        lines, stats, raw = jsonl(exported, redactor=Redactor())

        assert KEY not in raw and "PRIVATE KEY-----\\nb3Bl" not in raw
        assert stats.redactions == 2
        call = lines[2]["parts"][1]
        assert json.loads(call["call"]["function"]["arguments"]) == {
            "command": "OPENAI_API_KEY=[REDACTED:openai_api_key] ./deploy.sh"}
        assert lines[4]["parts"][0]["content"] == [{"type": "text",
                                                    "text": "[REDACTED:private_key]"}]

    def test_user_patterns_redact_too(self, exported):
        lines, stats, _ = jsonl(exported, ["b-session"],
                                redactor=Redactor([("deploy_script", r"\./deploy\.sh")],
                                                  builtins=False))

        assert stats.redactions == 1
        assert "[REDACTED:deploy_script]" in lines[1]["parts"][1]["call"]["function"]["arguments"]

    def test_an_unknown_session_raises(self, exported):
        with pytest.raises(SessionNotFound):
            jsonl(exported, ["nope"])


class TestCsv:
    def test_a_header_and_one_row_per_call_oldest_first(self, exported):
        rows, stats = rows_of(exported)

        assert tuple(rows[0]) == CSV_COLUMNS
        body = [dict(zip(CSV_COLUMNS, row, strict=True)) for row in rows[1:]]
        assert [(r["session_id"], r["call_id"]) for r in body] == [
            ("b-session", "c1"), ("b-session", "c2"), ("a-session", "call_ts0x0")]
        first = body[0]
        assert (first["name"], first["raw_name"], first["status"], first["created_at"]) == (
            "bash", "run_shell_command", "ok", "2026-02-01T08:31:00Z")
        assert (first["result_is_error"], first["result"]) == ("false", "deployed")
        assert body[1]["status"] == "invalid_json" and body[1]["arguments_error"]
        # the whole result, as text; a leading "-" gets a "'" (formula injection, OWASP)
        assert body[1]["result"] == "'" + PEM
        assert (body[2]["result_is_error"], body[2]["result"]) == ("", "")
        assert (stats.sessions, stats.records, stats.redactions) == (2, 3, 0)

    def test_a_query_selects_the_rows(self, exported):
        rows, stats = rows_of(exported, CallQuery(tool="bash"))

        assert [row[3] for row in rows[1:]] == ["c1"]
        rows, _ = rows_of(exported, CallQuery(
            where=(ArgumentCondition("pattern", "eq", "TODO"),)))
        assert [row[3] for row in rows[1:]] == ["call_ts0x0"]

    def test_redaction_in_arguments_and_results(self, exported):
        rows, stats = rows_of(exported, redactor=Redactor())

        text = "\n".join(",".join(row) for row in rows)
        assert KEY not in text and "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" not in text
        assert "[REDACTED:openai_api_key]" in rows[1][9]
        assert rows[2][11] == "[REDACTED:private_key]"
        assert stats.redactions == 2

    def test_an_empty_store_writes_the_header_only(self, store):
        rows, stats = rows_of(store)

        assert rows == [list(CSV_COLUMNS)]
        assert stats.records == 0
