"""Databases written at the first revision by older writers load, whole, after the upgrade.

The session is seeded at revision 0001 with SQLAlchemy Core on the tables as they were then
(reflected, so no ``wire_version`` column), in every spelling older writers stored tool calls
in: canonical, Ruby-symbol keys, camelCase, mixed per level, arguments as a decoded object,
legacy tool names, corrupt arguments. Then it is upgraded with ``store.db.schema.migrate.upgrade``
and
loaded with ``TranscriptStore``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, MetaData, func, insert, inspect, select

from store import InvalidToolCall, ToolArgumentsError, ToolCall, TranscriptStore
from store.core.transcript import Transcript
from store.db.schema import migrate
from store.db.schema.engine import create_store_engine

SESSION = "legacy-session"
SEEDED_AT = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
TABLES = ("sessions", "messages", "tool_calls", "tool_results")


@dataclass(frozen=True)
class LegacyCall:
    """One tool_calls row as an older writer stored it, and what loading it must give."""

    label: str
    position: int
    index: int
    call_id: str
    wire: Any  # dumped with json.dumps, as older writers did
    recorded_name: str
    name: str
    raw_name: str | None
    input: dict[str, Any] | None = None  # None: the call is invalid
    arguments_text: str | None = None  # for invalid calls: the raw text kept
    status: str = "ok"
    error: str | None = None
    minted: bool = False
    extras: dict[str, Any] = field(default_factory=dict)
    result: Any = "done"

    @property
    def valid(self) -> bool:
        return self.input is not None


CALLS = [
    LegacyCall(
        "canonical", 1, 0, "c1",
        {"id": "c1", "type": "function",
         "function": {"name": "read_file", "arguments": '{"path": "src/app.py"}'}},
        "read_file", "read", "read_file", input={"path": "src/app.py"},
        extras={"index": 0}, result="print('hi')\n",
    ),
    LegacyCall(
        "symbol_keyed", 1, 1, "c2",
        {":id": "c2", ":type": "function",
         ":function": {":name": "run_shell_command", ":arguments": '{"command":"ls"}'}},
        "run_shell_command", "bash", "run_shell_command", input={"command": "ls"},
        result=[{"type": "text", "text": "README.md\nsrc"}],
    ),
    LegacyCall(
        "camel_case_tool_name", 1, 2, "c3",
        {"id": "c3", "type": "function",
         "function": {"toolName": "edit_file",
                      "arguments": '{"path": "a.py", "old": "x", "new": "y"}'}},
        "edit_file", "edit", "edit_file", input={"path": "a.py", "old": "x", "new": "y"},
    ),
    LegacyCall(
        "mixed_spellings_per_level", 1, 3, "c4",
        {":id": "c4", "type": "function",
         "function": {"toolName": "write_file",
                      ":arguments": '{"path": "b.txt", "content": "hello"}'}},
        "write_file", "write", "write_file", input={"path": "b.txt", "content": "hello"},
    ),
    LegacyCall(
        "symbol_wrapper_plain_function", 1, 4, "c5",
        {":id": "c5", ":function": {"name": "read_file", "arguments": '{"path": "c.txt"}'}},
        "read_file", "read", "read_file", input={"path": "c.txt"},
    ),
    LegacyCall(
        "object_arguments_string_keyed", 1, 5, "c6",
        {"id": "c6", "type": "function",
         "function": {"name": "code_search", "arguments": {"query": "TODO", "limit": 3}}},
        "code_search", "code_search", None, input={"query": "TODO", "limit": 3},
    ),
    LegacyCall(
        "object_arguments_symbol_keyed", 1, 6, "c7",
        {":id": "c7", ":type": "function",
         ":function": {":name": "run_shell_command", ":arguments": {":command": "echo hi"}}},
        "run_shell_command", "bash", "run_shell_command", input={"command": "echo hi"},
        result="hi\n",
    ),
    LegacyCall(
        "object_arguments_symbol_keyed_nested", 1, 7, "c8",
        {"id": "c8", "type": "function",
         "function": {":name": "run_shell_command",
                      ":arguments": {":command": "env", ":env": {":LANG": "C"}}}},
        "run_shell_command", "bash", "run_shell_command",
        input={"command": "env", "env": {"LANG": "C"}},
    ),
    LegacyCall(
        "corrupt_arguments_canonical", 1, 8, "c9",
        {"id": "c9", "type": "function",
         "function": {"name": "read_file", "arguments": '{"path": "a.py"'}},
        "read_file", "read", "read_file", arguments_text='{"path": "a.py"',
        status="invalid_json",
        error="tool call arguments are not valid JSON: unexpected end of data",
        result="error: bad arguments",
    ),
    LegacyCall(
        "corrupt_arguments_symbol_keyed", 1, 9, "c10",
        {":id": "c10", ":type": "function",
         ":function": {":name": "edit_file", ":arguments": "{not json"}},
        "edit_file", "edit", "edit_file", arguments_text="{not json",
        status="invalid_json",
        error="tool call arguments are not valid JSON: key must be a string",
        result="error: bad arguments",
    ),
    LegacyCall(
        "flat_camel_case_record", 3, 0, "c11",
        {"id": "c11", "toolName": "write_file", "args": {"path": "d.txt", "content": ""}},
        "write_file", "write", "write_file", input={"path": "d.txt", "content": ""},
    ),
    LegacyCall(
        "minted_id", 3, 1, "call_ts3x1",
        {"id": None, "type": "function",
         "function": {"name": "list_directory", "arguments": '{"path": "."}'}},
        "list_directory", "list_directory", None, input={"path": "."}, minted=True,
    ),
    LegacyCall(
        "arguments_absent", 3, 2, "c13",
        {"id": "c13", "type": "function", "function": {"name": "git_commit"}},
        "git_commit", "git_commit", None, input={}, status="empty",
    ),
    LegacyCall(
        "unaliased_tool_name", 3, 3, "c14",
        {"id": "c14", "type": "function",
         "function": {"name": "old_custom_tool", "arguments": "{}"}},
        "old_custom_tool", "old_custom_tool", None, input={}, status="empty",
    ),
    LegacyCall(
        "wire_with_extra_fields", 3, 4, "c15",
        {":id": "c15", ":type": "function", ":index": 4,
         ":function": {":name": "read_file", ":arguments": '{"path": "f.txt"}'}},
        "read_file", "read", "read_file", input={"path": "f.txt"},
    ),
]
BY_LABEL = {c.label: c for c in CALLS}
LABELS = list(BY_LABEL)
ORPHAN_CALL_ID = "c_gone"

# position -> (role, text, parts); results are at position + 1 of their calls.
MESSAGES: dict[int, tuple[str, str, list[dict[str, Any]]]] = {
    0: ("user", "look at the repo", [{"type": "text", "text": "look at the repo"}]),
    1: ("assistant", "on it", [{"type": "text", "text": "on it"}]),
    2: ("tool", "", []),
    3: ("assistant", "", []),
    4: ("tool", "", []),
}
for _case in CALLS:
    MESSAGES[_case.position][2].append({"type": "tool_call", "index": _case.index})
    MESSAGES[_case.position + 1][2].append({"type": "tool_result", "index": _case.index})
MESSAGES[4][2].append({"type": "tool_result", "index": len(MESSAGES[4][2])})  # the orphan


def _seed(engine: Engine) -> None:
    """Write the session the way older writers did, on the 0001 tables."""
    meta = MetaData()
    meta.reflect(engine, only=TABLES)
    t = meta.tables
    assert "wire_version" not in t["tool_calls"].c  # really the first revision's table
    with engine.begin() as conn:
        conn.execute(insert(t["sessions"]).values(
            session_id=SESSION, title="from an older writer", provider="openai", model="gpt-4o",
            cwd="/home/dev/repo", tags_json='["legacy"]', metadata_json="{}",
            created_at=SEEDED_AT, updated_at=SEEDED_AT, next_position=len(MESSAGES),
        ))
        for position, (role, text, parts) in MESSAGES.items():
            conn.execute(insert(t["messages"]).values(
                session_id=SESSION, position=position, message_key=f"m{position}", role=role,
                source="openai_chat", text=text, parts_json=json.dumps(parts),
                created_at=SEEDED_AT,
            ))
        for call in CALLS:
            row: dict[str, Any] = {
                "session_id": SESSION, "position": call.position, "call_index": call.index,
                "call_id": call.call_id, "id_minted": call.minted,
                "raw_name": call.recorded_name, "wire_json": json.dumps(call.wire),
                "arguments_status": call.status, "arguments_error": call.error,
                "extras_json": json.dumps(call.extras) if call.extras else None,
                "source": "openai_chat",
            }
            if call.valid:  # invalid calls have no queryable copy: SQL NULL
                row["arguments"] = call.input
            conn.execute(insert(t["tool_calls"]).values(**row))
            conn.execute(insert(t["tool_results"]).values(
                session_id=SESSION, position=call.position + 1, result_index=call.index,
                call_id=call.call_id, call_position=call.position, call_index=call.index,
                is_error=not call.valid, name=call.recorded_name,
                content_json=json.dumps(call.result), source="openai_chat",
            ))
        conn.execute(insert(t["tool_results"]).values(
            session_id=SESSION, position=4, result_index=len(MESSAGES[4][2]) - 1,
            call_id=ORPHAN_CALL_ID, call_position=None, call_index=None, is_error=False,
            name="read_file", content_json='"stale"', source="openai_chat",
        ))


def _counts(engine: Engine) -> dict[str, int]:
    meta = MetaData()
    meta.reflect(engine, only=TABLES)
    with engine.connect() as conn:
        return {
            name: conn.execute(select(func.count()).select_from(meta.tables[name])).scalar_one()
            for name in TABLES
        }


@dataclass(frozen=True)
class Upgraded:
    """What seeding at 0001, upgrading and loading gave."""

    url: str
    counts_before: dict[str, int]
    counts_after: dict[str, int]
    revision_before: str | None
    revision_after: str | None
    wire_versions: list[int]
    transcript: Transcript
    count_calls: int


def _seed_and_upgrade(url: str) -> Upgraded:
    engine = create_store_engine(url)
    try:
        migrate.upgrade(engine, "0001")
        _seed(engine)
        before, counts_before = migrate.current(engine), _counts(engine)
        after = migrate.upgrade(engine)
        counts_after = _counts(engine)
        meta = MetaData()
        meta.reflect(engine, only=("tool_calls",))
        with engine.connect() as conn:
            column = meta.tables["tool_calls"].c.wire_version
            versions = list(conn.execute(select(column)).scalars())
    finally:
        engine.dispose()
    with TranscriptStore.open(url) as store:
        transcript = store.load(SESSION)
        count = store.count_calls(SESSION)
    return Upgraded(url, counts_before, counts_after, before, after, versions, transcript, count)


@pytest.fixture(scope="module")
def upgraded(module_url: str) -> Upgraded:
    return _seed_and_upgrade(module_url)


def _call(upgraded: Upgraded, case: LegacyCall) -> ToolCall | InvalidToolCall:
    stored = {m.position: m for m in upgraded.transcript.messages}[case.position]
    return stored.message.tool_calls[case.index]


class TestLegacyDatabaseUpgrade:
    def test_the_database_was_seeded_at_the_first_revision(self, upgraded: Upgraded) -> None:
        assert upgraded.revision_before == "0001"

    def test_the_upgrade_reaches_head(self, upgraded: Upgraded) -> None:
        assert upgraded.revision_after == migrate.head()

    def test_no_row_is_lost_by_the_upgrade(self, upgraded: Upgraded) -> None:
        assert upgraded.counts_before == {
            "sessions": 1, "messages": len(MESSAGES), "tool_calls": len(CALLS),
            "tool_results": len(CALLS) + 1,
        }
        assert upgraded.counts_after == upgraded.counts_before

    def test_every_old_call_row_gets_wire_version_1(self, upgraded: Upgraded) -> None:
        assert upgraded.wire_versions == [1] * len(CALLS)

    def test_the_upgraded_database_matches_the_code(self, upgraded: Upgraded) -> None:
        engine = create_store_engine(upgraded.url)
        try:
            assert "wire_version" in {c["name"] for c in inspect(engine).get_columns("tool_calls")}
            migrate.check(engine)
        finally:
            engine.dispose()


class TestLegacySessionLoad:
    def test_every_message_loads_at_its_position_with_its_role_and_key(
        self, upgraded: Upgraded
    ) -> None:
        loaded = [(m.position, m.message.role, m.key) for m in upgraded.transcript.messages]

        assert loaded == [(p, role, f"m{p}") for p, (role, _, _) in MESSAGES.items()]

    def test_the_session_keeps_its_metadata(self, upgraded: Upgraded) -> None:
        info = upgraded.transcript.session

        assert (info.title, info.provider, info.model, info.tags) == (
            "from an older writer", "openai", "gpt-4o", ("legacy",)
        )
        assert info.message_count == len(MESSAGES)

    def test_every_call_is_loaded_and_counted(self, upgraded: Upgraded) -> None:
        loaded = [(c.position, c.index, c.call.id) for c in upgraded.transcript.calls()]

        assert loaded == [(c.position, c.index, c.call_id) for c in CALLS]
        assert upgraded.count_calls == len(CALLS)

    def test_every_result_is_loaded_with_its_call_id(self, upgraded: Upgraded) -> None:
        results = [
            (m.position, r.call_id)
            for m in upgraded.transcript.messages for r in m.message.tool_results
        ]

        expected = [(c.position + 1, c.call_id) for c in CALLS]
        assert sorted(results, key=str) == sorted([*expected, (4, ORPHAN_CALL_ID)], key=str)

    def test_the_text_parts_come_back_in_order(self, upgraded: Upgraded) -> None:
        texts = [m.message.text for m in upgraded.transcript.messages]

        assert texts == ["look at the repo", "on it", "", "", ""]

    def test_the_orphan_result_stays_an_orphan(self, upgraded: Upgraded) -> None:
        orphans = [(p, r.call_id) for p, _, r in upgraded.transcript.orphan_results()]

        assert orphans == [(4, ORPHAN_CALL_ID)]


@pytest.mark.parametrize("label", LABELS)
class TestLegacyCallLoad:
    def test_the_call_keeps_its_id(self, upgraded: Upgraded, label: str) -> None:
        case = BY_LABEL[label]

        assert _call(upgraded, case).id == case.call_id

    def test_the_call_has_its_current_name_and_keeps_the_raw_one(
        self, upgraded: Upgraded, label: str
    ) -> None:
        case = BY_LABEL[label]
        call = _call(upgraded, case)

        assert (call.name, call.raw_name) == (case.name, case.raw_name)
        assert call.recorded_name == case.recorded_name

    def test_the_call_loads_with_its_input_or_as_invalid_with_its_raw_text(
        self, upgraded: Upgraded, label: str
    ) -> None:
        case = BY_LABEL[label]
        call = _call(upgraded, case)

        if case.valid:
            assert type(call) is ToolCall
            assert call.input == case.input
        else:
            assert type(call) is InvalidToolCall
            assert call.arguments_text == case.arguments_text
            assert (call.error_kind, call.error_message) == (case.status, case.error)

    def test_the_call_is_paired_with_its_result(self, upgraded: Upgraded, label: str) -> None:
        case = BY_LABEL[label]
        (loaded,) = [
            c for c in upgraded.transcript.calls()
            if (c.position, c.index) == (case.position, case.index)
        ]

        assert loaded.result is not None
        assert (loaded.result.call_id, loaded.result.content) == (case.call_id, case.result)
        assert loaded.result.is_error is (not case.valid)


class TestLegacyCallExtras:
    @pytest.mark.parametrize(
        ("label", "expected"),
        [
            pytest.param("canonical", {"index": 0}, id="recorded_extras_column"),
            pytest.param("minted_id", {"provider_id": None, "id_minted": True}, id="minted_id"),
            pytest.param(
                "wire_with_extra_fields", {"index": 4},
                id="fields_beside_the_call_in_the_wire_record",
            ),
        ],
    )
    def test_the_call_keeps_its_extras(
        self, upgraded: Upgraded, label: str, expected: dict[str, Any]
    ) -> None:
        assert dict(_call(upgraded, BY_LABEL[label]).extras) == expected

    @pytest.mark.parametrize("label", [c.label for c in CALLS if not c.extras and not c.minted
                                       and c.label != "wire_with_extra_fields"])
    def test_a_call_without_extras_gets_none(self, upgraded: Upgraded, label: str) -> None:
        assert dict(_call(upgraded, BY_LABEL[label]).extras) == {}


class TestLegacySessionAfterUpgrade:
    @pytest.fixture
    def store(self, new_url: str) -> Iterator[TranscriptStore]:
        _seed_and_upgrade(new_url)
        with TranscriptStore.open(new_url) as opened:
            yield opened

    def test_a_strict_load_raises_at_the_first_corrupt_call(
        self, store: TranscriptStore
    ) -> None:
        with pytest.raises(ToolArgumentsError, match="message 1, call 8"):
            store.load(SESSION, strict=True)

    def test_new_messages_are_appended_after_the_old_ones(self, store: TranscriptStore) -> None:
        store.append(SESSION, [{
            "role": "assistant", "content": "again",
            "tool_calls": [{"id": "c99", "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path":"e"}'}}],
        }])

        transcript = store.load(SESSION)
        assert [m.position for m in transcript.messages] == [*MESSAGES, len(MESSAGES)]
        (new_call,) = transcript.messages[-1].message.tool_calls
        assert (new_call.id, new_call.name, new_call.raw_name) == ("c99", "read", "read_file")
        assert store.count_calls(SESSION) == len(CALLS) + 1

    def test_an_old_message_key_is_still_deduplicated(self, store: TranscriptStore) -> None:
        result = store.append(SESSION, [{"role": "user", "content": "look at the repo"}],
                              keys=["m0"])

        assert result.stored == ()
        assert result.skipped_keys == ("m0",)
        assert len(store.load(SESSION)) == len(MESSAGES)
