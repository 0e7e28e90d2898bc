"""TranscriptStore on both backends: sessions, append, load, aliases, definitions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from store import (
    AliasError,
    AmbiguousRecord,
    InvalidToolCall,
    Message,
    NotAMessage,
    RecordError,
    SessionNotFound,
    TextPart,
    ToolArgumentsError,
    ToolCall,
    ToolResult,
    TranscriptStore,
    UnrecognizedRecord,
)
from store.db.schema.tables import messages, tool_calls, tool_results


def chat_call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


TURN = [
    {"role": "user", "content": "list files"},
    {"role": "assistant", "content": None,
     "tool_calls": [chat_call("call_a", "run_shell_command", '{"command": "ls -la"}'),
                    chat_call("call_b", "read_file", '{\n  "path": "Übersicht.md"\n}')]},
    {"role": "tool", "tool_call_id": "call_b", "content": "# Übersicht"},
    {"role": "tool", "tool_call_id": "call_a", "content": "a.txt"},
]


def row_count(store, table, session_id):
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)
                            .where(table.c.session_id == session_id)).scalar_one()


class TestSessions:
    def test_a_session_is_created_with_metadata_and_aware_utc_times(self, store):
        info = store.create_session("s1", title="Fix bug", provider="openai", model="gpt-4o",
                                    cwd="/repo", tags=["a", "b"], metadata={"k": 1})
        assert (info.session_id, info.title, info.provider, info.model, info.cwd, info.tags) == (
            "s1", "Fix bug", "openai", "gpt-4o", "/repo", ("a", "b"))
        assert info.metadata == {"k": 1} and info.message_count == 0
        assert info.created_at.tzinfo is not None
        assert info.created_at.utcoffset() == timedelta(0)
        assert abs(info.created_at - datetime.now(UTC)) < timedelta(minutes=1)

    def test_a_generated_id_is_unique(self, store):
        assert store.create_session().session_id != store.create_session().session_id

    def test_creating_an_existing_session_is_refused(self, store):
        store.create_session("s1")
        with pytest.raises(Exception, match="exists already"):
            store.create_session("s1")

    def test_list_filters_and_pages(self, store):
        store.create_session("a", provider="openai", model="m1", title="Alpha run", tags=["x"])
        store.create_session("b", provider="anthropic", model="m2", title="beta", tags=["y"])
        store.create_session("c", provider="openai", model="m2", title="gamma 100%", tags=["x_y"])
        assert {s.session_id for s in store.list_sessions(provider="openai")} == {"a", "c"}
        assert [s.session_id for s in store.list_sessions(model="m1")] == ["a"]
        assert [s.session_id for s in store.list_sessions(tag="x")] == ["a"]
        assert [s.session_id for s in store.list_sessions(title_contains="ALPHA")] == ["a"]
        assert [s.session_id for s in store.list_sessions(title_contains="0%")] == ["c"]
        assert [s.session_id for s in store.list_sessions(title_contains="_")] == []
        page1 = store.list_sessions(limit=2)
        page2 = store.list_sessions(limit=2, offset=2)
        assert len(page1) == 2 and len(page2) == 1
        assert {s.session_id for s in page1 + page2} == {"a", "b", "c"}
        future = datetime.now(UTC) + timedelta(hours=1)
        assert store.list_sessions(since=future) == []
        assert len(store.list_sessions(until=future)) == 3

    def test_rename(self, store):
        store.create_session("s1", title="old")
        assert store.rename_session("s1", "new").title == "new"
        assert store.get_session("s1").title == "new"

    def test_delete_cascades_to_every_row(self, store):
        store.append("s1", TURN)
        store.record_tools("s1", [{"name": "bash", "description": "", "input_schema": {}}])
        store.delete_session("s1")
        for table in (messages, tool_calls, tool_results):
            assert row_count(store, table, "s1") == 0
        with pytest.raises(SessionNotFound):
            store.load("s1")

    @pytest.mark.parametrize("method", ["get_session", "load", "delete_session"])
    def test_an_unknown_session_is_session_not_found(self, store, method):
        with pytest.raises(SessionNotFound) as info:
            getattr(store, method)("nope")
        assert info.value.session_id == "nope" and "nope" in str(info.value)
        assert isinstance(info.value, KeyError)

    def test_rename_of_an_unknown_session_is_session_not_found(self, store):
        with pytest.raises(SessionNotFound):
            store.rename_session("nope", "x")


class TestAppend:
    def test_append_creates_the_session_and_gives_consecutive_positions(self, store):
        result = store.append("s1", TURN, title="t", provider="openai")
        assert result.created_session
        assert [m.position for m in result.stored] == [0, 1, 2, 3]
        again = store.append("s1", [{"role": "user", "content": "more"}])
        assert not again.created_session and [m.position for m in again.stored] == [4]
        info = store.get_session("s1")
        assert (info.title, info.provider, info.message_count) == ("t", "openai", 5)

    def test_calls_are_rows_in_canonical_wire_form_with_exact_argument_text(self, store):
        store.append("s1", TURN)
        with store.engine.connect() as conn:
            rows = conn.execute(select(tool_calls).order_by(tool_calls.c.call_index)).all()
        assert [(r.call_id, r.raw_name, r.arguments_status, r.id_minted) for r in rows] == [
            ("call_a", "run_shell_command", "ok", False), ("call_b", "read_file", "ok", False)]
        wire = json.loads(rows[1].wire_json)
        assert wire == {"id": "call_b", "type": "function",
                        "function": {"name": "read_file",
                                     "arguments": '{\n  "path": "Übersicht.md"\n}'}}
        assert "Übersicht" in rows[1].wire_json  # raw UTF-8, not \\u escapes
        assert rows[1].arguments == {"path": "Übersicht.md"}

    def test_results_are_linked_to_their_calls_even_out_of_order(self, store):
        store.append("s1", TURN)
        with store.engine.connect() as conn:
            rows = conn.execute(select(tool_results).order_by(tool_results.c.position)).all()
        assert [(r.call_id, r.call_position, r.call_index) for r in rows] == [
            ("call_b", 1, 1), ("call_a", 1, 0)]

    def test_results_in_a_later_append_link_to_earlier_calls(self, store):
        store.append("s1", TURN[:2])
        store.append("s1", TURN[2:])
        links = store.load("s1").links
        assert links == {(2, 0): (1, 1), (3, 0): (1, 0)}

    def test_a_repeated_provider_id_links_to_the_latest_call(self, store):
        # Bedrock Mantle restarts call_0 in every response.
        turn = [
            {"type": "function_call", "call_id": "call_0", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_0", "output": "one"},
            {"type": "function_call", "call_id": "call_0", "name": "g", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_0", "output": "two"},
        ]
        store.append("s1", turn[:3])
        store.append("s1", turn[3:])
        assert store.load("s1").links == {(1, 0): (0, 0), (3, 0): (2, 0)}
        assert store.count_calls("s1") == 2

    def test_missing_and_empty_ids_are_minted_deterministically_and_paired_by_position(
        self, store
    ):
        gemini = {"role": "model", "parts": [
            {"functionCall": {"name": "g", "args": {}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "g", "args": {"n": 2}}}]}
        results = {"role": "user", "parts": [
            {"functionResponse": {"name": "g", "response": {"r": 1}}},
            {"functionResponse": {"name": "g", "response": {"r": 2}}}]}
        store.append("s1", [gemini, results])
        loaded = list(store.load("s1").calls())
        assert [c.call.id for c in loaded] == ["call_ts0x0", "call_ts0x1"]
        assert [c.call.extras["id_minted"] for c in loaded] == [True, True]
        assert [c.call.extras["provider_id"] for c in loaded] == [None, None]
        assert loaded[0].call.extras["thought_signature"] == "c2ln"
        assert [c.result.content for c in loaded] == [{"r": 1}, {"r": 2}]

    def test_an_empty_provider_id_is_minted_and_the_original_kept(self, store):
        store.append("s1", [{"role": "assistant",
                             "tool_calls": [chat_call("", "f", "{}")]}])
        (loaded,) = store.load("s1").calls()
        assert loaded.call.id == "call_ts0x0" and loaded.call.extras["provider_id"] == ""
        with store.engine.connect() as conn:
            wire = conn.execute(select(tool_calls.c.wire_json)).scalar_one()
        assert json.loads(wire)["id"] == ""

    def test_append_is_idempotent_by_message_key(self, store):
        first = store.append("s1", TURN, keys=["k0", "k1", "k2", "k3"])
        retry = store.append("s1", TURN, keys=["k0", "k1", "k2", "k3"])
        assert len(first.stored) == 4 and retry.stored == ()
        assert retry.skipped_keys == ("k0", "k1", "k2", "k3")
        assert row_count(store, messages, "s1") == 4 and row_count(store, tool_calls, "s1") == 2

    def test_a_provider_message_id_is_the_default_key(self, store):
        msg = {"id": "msg_1", "type": "message", "role": "assistant",
               "content": [{"type": "text", "text": "hi"}]}
        store.append("s1", [msg])
        assert store.append("s1", [msg]).skipped_keys == ("msg_1",)
        assert store.load("s1").messages[0].key == "msg_1"

    def test_a_client_key_does_not_replace_the_provider_message_id(self, store):
        msg = {"id": "msg_provider_123", "type": "message", "role": "assistant",
               "content": [{"type": "text", "text": "hi"}]}
        store.append("s1", [msg], keys=["client-key-1"])
        (stored,) = store.load("s1").messages
        assert (stored.key, stored.message.message_id) == ("client-key-1", "msg_provider_123")

    def test_a_partly_stored_batch_stores_only_the_new_part(self, store):
        store.append("s1", TURN[:2], keys=["k0", "k1"])
        result = store.append("s1", TURN, keys=["k0", "k1", "k2", "k3"])
        assert [m.position for m in result.stored] == [2, 3]
        assert result.skipped_keys == ("k0", "k1")
        assert store.load("s1").links == {(2, 0): (1, 1), (3, 0): (1, 0)}

    def test_duplicate_keys_within_one_batch_store_once(self, store):
        msg = {"role": "user", "content": "x"}
        result = store.append("s1", [msg, msg], keys=["k", "k"])
        assert len(result.stored) == 1 and result.skipped_keys == ("k",)

    def test_typed_messages_are_accepted(self, store):
        message = Message("assistant", (TextPart("hi"), ToolCall("c1", "bash", {"x": 1})))
        store.append("s1", [message])
        (stored,) = store.load("s1").messages
        assert stored.message.parts == message.parts


class TestBadInput:
    @pytest.mark.parametrize(
        ("bad", "error", "fragment"),
        [
            ({"nope": 1}, UnrecognizedRecord, "message 1: not a message"),
            ({"type": "session", "id": "x"}, NotAMessage, "message 1: a 'session' record"),
            ({"role": "tool", "tool_call_id": "a", "toolCallId": "b", "content": ""},
             AmbiguousRecord, "message 1: ambiguous record"),
            ({"role": "assistant", "tool_calls": [chat_call("c", "", "{}")]},
             UnrecognizedRecord, "non-empty name"),
            ("just text", RecordError, "message 1: a message must be a Message or a record"),
        ],
        ids=["unknown-shape", "not-a-message", "ambiguous", "empty-name", "not-a-record"],
    )
    def test_a_bad_message_raises_and_nothing_of_the_append_is_stored(
        self, store, bad, error, fragment
    ):
        store.append("s1", TURN[:1])
        with pytest.raises(error, match=fragment):
            store.append("s1", [TURN[0], bad, TURN[1]])
        assert row_count(store, messages, "s1") == 1
        assert store.get_session("s1").message_count == 1

    def test_a_bad_message_in_a_new_session_creates_no_session(self, store):
        with pytest.raises(UnrecognizedRecord):
            store.append("new", [{"nope": 1}])
        with pytest.raises(SessionNotFound):
            store.get_session("new")

    @pytest.mark.parametrize("session_id", ["", "x" * 10_000, "a\x00b", None],
                             ids=["empty", "10k", "nul", "none"])
    def test_bad_session_ids_are_refused_by_name(self, store, session_id):
        with pytest.raises(RecordError, match="session id"):
            store.append(session_id, TURN)

    def test_keys_must_match_the_messages(self, store):
        with pytest.raises(RecordError, match="2 messages but 1 keys"):
            store.append("s1", TURN[:2], keys=["k"])

    def test_corrupt_arguments_are_stored_flagged_and_load_invalid(self, store):
        text = '{"subject": "Invitation to attend'
        store.append("s1", [{"role": "assistant", "content": None,
                             "function_call": {"name": "send", "arguments": text}}])
        with store.engine.connect() as conn:
            row = conn.execute(select(tool_calls)).one()
        assert (row.arguments_status, row.arguments) == ("invalid_json", None)
        assert row.arguments_error.startswith("tool call arguments are not valid JSON")
        (loaded,) = store.load("s1").calls()
        assert isinstance(loaded.call, InvalidToolCall)
        assert loaded.call.arguments_text == text
        assert loaded.call.to_wire()["function"]["arguments"] == text

    def test_strict_load_raises_on_the_first_invalid_call(self, store):
        store.append("s1", [{"role": "assistant",
                             "tool_calls": [chat_call("c1", "f", "[1]")]}])
        with pytest.raises(ToolArgumentsError, match="message 0, call 0") as info:
            store.load("s1", strict=True)
        assert info.value.kind == "non_object_json"


class TestLoad:
    def test_a_loaded_session_equals_what_was_appended(self, store):
        store.append("s1", TURN)
        transcript = store.load("s1")
        assert [m.message.role for m in transcript] == ["user", "assistant", "tool", "tool"]
        calls = list(transcript.calls())
        assert [(c.call.id, c.call.name, c.call.raw_name, c.call.input) for c in calls] == [
            ("call_a", "bash", "run_shell_command", {"command": "ls -la"}),
            ("call_b", "read", "read_file", {"path": "Übersicht.md"})]
        assert [c.result.content for c in calls] == ["a.txt", "# Übersicht"]
        assert calls[1].call.to_wire()["function"]["arguments"] == '{\n  "path": "Übersicht.md"\n}'

    def test_messages_round_trip_part_by_part(self, store):
        records = [
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"p": "x"}},
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "advisor", "input": {}},
                {"type": "image", "source": {"data": "..."}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hit",
                 "is_error": True}]},
        ]
        store.append("s1", records)
        loaded = [m.message for m in store.load("s1")]
        from store import normalize_message
        expected = [normalize_message(r) for r in records]
        assert [m.parts for m in loaded] == [m.parts for m in expected]
        assert loaded[1].tool_results[0].is_error is True

    def test_loading_takes_one_statement(self, store):
        """Counted at the driver (the hot path runs compiled SQL on the DBAPI cursor): a load,
        windowed or not, is one statement whatever the session's length (one snapshot, one
        round trip on PostgreSQL)."""
        from sqlalchemy import event

        seen: list[str] = []

        def record(statement):
            if statement.lstrip().upper().startswith(("SELECT", "WITH")):
                seen.append(statement)

        def instrument(dbapi_connection, *_):
            if store.dialect == "sqlite":
                dbapi_connection.set_trace_callback(record)
            else:
                import psycopg

                class CountingCursor(psycopg.Cursor):
                    def execute(self, query, params=None, **kw):
                        record(str(query))
                        return super().execute(query, params, **kw)

                dbapi_connection.cursor_factory = CountingCursor

        event.listen(store.engine, "checkout", instrument)
        try:
            counts = []
            for n_turns in (1, 40):
                store.append(f"q{n_turns}", TURN * n_turns)
                seen.clear()
                store.load(f"q{n_turns}")
                counts.append(len(seen))
                for window in ({"last_turns": 2}, {"since_position": 3},
                               {"since": datetime(2000, 1, 1, tzinfo=UTC)}):
                    seen.clear()
                    store.load(f"q{n_turns}", **window)
                    counts.append(len(seen))
        finally:
            event.remove(store.engine, "checkout", instrument)
        assert counts == [1] * 8

    def test_message_times_come_from_the_transcript_when_it_has_them(self, store):
        line = {"type": "user", "uuid": "u1", "timestamp": "2025-09-03T00:47:19.293Z",
                "message": {"role": "user", "content": "hi"}}
        store.append("s1", [line])
        (stored,) = store.load("s1").messages
        assert stored.created_at == datetime(2025, 9, 3, 0, 47, 19, 293000, tzinfo=UTC)
        assert stored.key == "u1"


class TestAliases:
    def test_the_default_aliases_are_seeded(self, store):
        assert store.aliases().resolve("run_shell_command") == "bash"

    def test_a_new_alias_changes_later_loads_without_rewriting_rows(self, store):
        store.append("s1", TURN)
        with store.engine.connect() as conn:
            before = conn.execute(select(tool_calls.c.wire_json)).scalars().all()
        store.add_alias("read_file", "view")
        names = [(c.call.name, c.call.raw_name) for c in store.load("s1").calls()]
        assert names == [("bash", "run_shell_command"), ("view", "read_file")]
        with store.engine.connect() as conn:
            assert conn.execute(select(tool_calls.c.wire_json)).scalars().all() == before
        assert store.count_calls_by_tool() == {"bash": 1, "view": 1}

    def test_removing_an_alias_restores_the_raw_name(self, store):
        store.append("s1", TURN)
        store.remove_alias("run_shell_command")
        assert [c.call.name for c in store.load("s1").calls()] == ["run_shell_command", "read"]
        with pytest.raises(AliasError, match="no alias"):
            store.remove_alias("run_shell_command")

    @pytest.mark.parametrize("pair", [("", "x"), ("x", "")])
    def test_empty_alias_names_are_refused(self, store, pair):
        with pytest.raises(AliasError):
            store.add_alias(*pair)


class TestToolDefinitions:
    def test_definitions_of_every_provider_shape_are_recorded(self, store):
        store.create_session("s1")
        store.record_tools("s1", [
            {"type": "function", "function": {"name": "a", "description": "A",
                                              "parameters": {"type": "object"}}},
            {"name": "b", "description": "B", "input_schema": {"type": "object",
                                                               "properties": {}}},
            {"functionDeclarations": [{"name": "c", "parameters": {"type": "object"}}]},
            {"toolSpec": {"name": "d", "inputSchema": {"json": {"type": "object"}}}},
        ])
        defs = store.tool_definitions("s1")
        assert [(d.name, d.description) for d in defs] == [
            ("a", "A"), ("b", "B"), ("c", ""), ("d", "")]
        assert defs[3].parameters == {"type": "object"}

    def test_recording_a_tool_again_replaces_it(self, store):
        store.create_session("s1")
        store.record_tools("s1", {"name": "a", "description": "old"})
        store.record_tools("s1", {"name": "a", "description": "new"})
        assert [d.description for d in store.tool_definitions("s1")] == ["new"]

    def test_tools_for_an_unknown_session_are_refused(self, store):
        with pytest.raises(SessionNotFound):
            store.record_tools("nope", {"name": "a"})

    def test_a_definition_without_a_name_is_unrecognized(self, store):
        store.create_session("s1")
        with pytest.raises(UnrecognizedRecord, match="non-empty name"):
            store.record_tools("s1", {"description": "x"})


class TestQueries:
    def test_count_calls_by_tool_groups_by_current_name(self, store):
        store.append("s1", TURN)
        store.append("s2", TURN[:2])
        assert store.count_calls_by_tool() == {"bash": 2, "read": 2}

    @pytest.mark.parametrize(
        ("term", "hits"),
        [("ls -la", 2), ("Übersicht", 2), ("ls_la", 0), ("%", 0), ('"path"', 2), ("LS", 0)],
        ids=["ascii", "non-ascii", "underscore-is-literal", "percent-is-literal",
             "quotes", "case-sensitive"],
    )
    def test_find_calls_is_an_exact_substring_search(self, store, term, hits):
        store.append("s1", TURN)
        store.append("s2", TURN[:2])
        assert len(store.find_calls(term)) == hits


class TestOpenAndClose:
    def test_the_store_is_a_context_manager(self, store_url):
        with TranscriptStore.open(store_url) as s:
            s.create_session("x")
        with TranscriptStore.open(store_url) as s:
            assert s.get_session("x").session_id == "x"

    def test_repr_and_url_hide_passwords(self):
        from store.db.schema.engine import redact_url

        assert "secret" not in redact_url("postgresql+psycopg://u:secret@h/db")
        assert "***" in redact_url("postgresql+psycopg://u:secret@h/db")

    def test_an_unsupported_url_is_a_configuration_error(self):
        from store import ConfigurationError

        with pytest.raises(ConfigurationError, match="unsupported database"):
            TranscriptStore.open("mysql://x/y")

    def test_tool_results_are_exported(self):
        assert ToolResult("a", "b").text == "b"


class TestHostileText:
    def test_nul_characters_round_trip_exactly_on_both_backends(self, store):
        args = '{"a\\u0000": "x\\u0000y", "b": "\\\\u0000"}'
        store.append("s1", [{"role": "assistant", "content": "a\x00b",
                             "tool_calls": [chat_call("c", "f", args)]}])
        (stored,) = store.load("s1").messages
        assert stored.message.text == "a\x00b"
        (call,) = stored.message.tool_calls
        assert call.arguments_text == args
        assert call.input == {"a\x00": "x\x00y", "b": "\\u0000"}

    def test_sql_metacharacters_in_ids_names_and_terms_are_data(self, store):
        sid = "s'; DROP TABLE sessions; --"
        store.append(sid, [{"role": "assistant", "tool_calls": [
            chat_call("c'1", "name\"; --", '{"q": "%_\\\\\'"}')]}])
        (loaded,) = store.load(sid).calls()
        assert (loaded.call.id, loaded.call.name) == ("c'1", 'name"; --')
        assert len(store.find_calls("%_")) == 1 and store.find_calls("%x") == []
        assert [s.session_id for s in store.list_sessions()] == [sid]
