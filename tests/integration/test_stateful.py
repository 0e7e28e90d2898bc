"""The real store beside a simple in-memory model, driven by Hypothesis (both backends).

A ``RuleBasedStateMachine`` appends random batches (user text; assistant messages with 0 to 2
calls whose arguments are random JSON objects with unicode, sometimes an argument string that
is not a JSON object, sometimes no call id; tool results answering earlier calls; keys from a
small pool, so that repeated keys are common), loads and compares with the model (positions,
keys, roles, texts, call ids, names under the alias table as it is now, raw names, inputs,
invalid calls with their text verbatim, results, result-to-call links), forks at random
positions, adds and removes aliases and deletes sessions, including the error cases (a
missing session, an existing fork target, a missing alias).

Every state-machine run gets a fresh database: a copy of the SQLite template, or the
PostgreSQL test database emptied (aliases re-seeded). The default run is small; the ``fuzz``
Hypothesis profile (``HYPOTHESIS_PROFILE=fuzz``) runs many more, longer ones.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from sqlalchemy import Engine, create_engine, insert, text

from store import (
    AliasError,
    DatabaseError,
    InvalidToolCall,
    SessionNotFound,
    ToolCall,
    TranscriptStore,
    UsageError,
)
from store.agents.registry import vocabulary_rows
from store.db.schema.tables import tool_aliases

FUZZ = settings.default.max_examples >= 1000  # the ``fuzz`` profile is loaded
RUN_SETTINGS = settings(
    settings.default,
    max_examples=500 if FUZZ else 15,
    stateful_step_count=40 if FUZZ else 12,
)

SESSIONS = ["s0", "s1", "s2", "s3"]
KEYS = [f"k{n}" for n in range(12)]
TOOL_NAMES = ["read_file", "run_shell_command", "bash", "grep", "ツール", "web_search"]
CURRENT_NAMES = ["read", "shell", "edit", "新しい名前", "grep"]
# Argument texts that are not a JSON object (kept verbatim as invalid calls) ...
INVALID_ARGUMENTS = ['{"path": "a', "not json", "[1, 2]", '"text"', "42", '{"x": NaN}', "{,}"]
# ... and texts that read as no arguments at all.
EMPTY_ARGUMENTS = ["", "null", " {} ", "NULL"]

# Integers as wide as orjson writes (signed 64-bit to unsigned 64-bit): wider ones break
# ``append`` (see test_an_integer_beyond_64_bits_in_arguments_is_stored below).
json_scalars = (
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                  max_size=3),
    max_leaves=8,
)
argument_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


# -- the model ------------------------------------------------------------------------------


@dataclass
class ModelCall:
    id: str | None  # None: the store mints one from the position
    raw_name: str
    arguments_text: str
    input: dict[str, Any] | None  # None: an invalid call


@dataclass
class ModelResult:
    call_id: str
    content: Any
    call: tuple[int, int]  # the call it answers: (position, index)


@dataclass
class ModelMessage:
    key: str | None
    role: str
    text: str
    calls: list[ModelCall] = field(default_factory=list)
    results: list[ModelResult] = field(default_factory=list)


def fresh_databases(backend: str, request: pytest.FixtureRequest,
                    tmp_path: Path) -> Iterator[Callable[[], str]]:
    """A factory of empty databases at head (one per state-machine run)."""
    if backend == "sqlite":
        template = request.getfixturevalue("sqlite_template")
        counter = itertools.count()

        def sqlite_copy() -> str:
            path = tmp_path / f"run-{next(counter)}.sqlite"
            shutil.copyfile(template, path)
            return f"sqlite:///{path}"

        yield sqlite_copy
        return
    url: str = request.getfixturevalue("postgres_url")
    engine = create_engine(url)

    def emptied() -> str:
        _empty_postgres(engine)
        return url

    try:
        yield emptied
    finally:
        engine.dispose()


def _empty_postgres(engine: Engine) -> None:
    """What the integration conftest does before each test: empty, aliases re-seeded."""
    with engine.begin() as conn:
        conn.execute(text("TRUNCATE sessions, tool_aliases, source_files CASCADE"))
        now = datetime.now(UTC)
        conn.execute(insert(tool_aliases), [
            {"agent": agent or "", "raw_name": raw, "current_name": cur, "created_at": now}
            for agent, raw, cur in vocabulary_rows()
        ])


class StoreMachine(RuleBasedStateMachine):
    """The store and the model, side by side (``new_database`` is set per test)."""

    new_database: Callable[[], str]
    counts: Counter[str]

    def __init__(self) -> None:
        super().__init__()
        self.counts["runs"] += 1
        self.store = TranscriptStore.open(self.new_database())
        self.sessions: dict[str, list[ModelMessage]] = {}
        self.aliases: dict[str, str] = {raw: cur for agent, raw, cur in vocabulary_rows()
                                        if agent is None}
        self.call_numbers = itertools.count()

    def teardown(self) -> None:
        try:
            for session in list(self.sessions):
                self.compare(session)
        finally:
            self.store.close()

    # -- rules --------------------------------------------------------------------------------

    @rule(session=st.sampled_from(SESSIONS), data=st.data())
    def append(self, session: str, data: st.DataObject) -> None:
        before = self.sessions.get(session, [])
        stored_keys = {m.key for m in before if m.key is not None}
        # Calls with a provider id that results may answer: (id, position, index).
        answerable = [(c.id, p, i) for p, m in enumerate(before)
                      for i, c in enumerate(m.calls) if c.id is not None]
        records: list[dict[str, Any]] = []
        keys: list[str | None] = []
        added: list[ModelMessage] = []
        expected_skips: list[str] = []
        for _ in range(data.draw(st.integers(1, 4), label="messages")):
            key = data.draw(st.none() | st.sampled_from(KEYS), label="key")
            kinds = ["user", "assistant"] + (["tool"] if answerable else [])
            kind = data.draw(st.sampled_from(kinds), label="kind")
            stored = key is None or key not in stored_keys
            position = len(before) + len(added)
            record, message, calls = self.draw_message(data, kind, answerable, position)
            records.append(record)
            keys.append(key)
            if not stored:
                assert key is not None
                expected_skips.append(key)
                continue
            if key is not None:
                stored_keys.add(key)
            message.key = key
            added.append(message)
            answerable.extend(calls)

        result = self.store.append(session, records, keys=keys)

        assert list(result.skipped_keys) == expected_skips
        assert [m.position for m in result.stored] == list(
            range(len(before), len(before) + len(added)))
        assert [m.key for m in result.stored] == [m.key for m in added]
        assert result.created_session == (session not in self.sessions)
        self.sessions[session] = before + added

    def draw_message(self, data: st.DataObject, kind: str,
                     answerable: list[tuple[str, int, int]], position: int,
                     ) -> tuple[dict[str, Any], ModelMessage, list[tuple[str, int, int]]]:
        """A record of ``kind``, the message the model expects, and the calls it makes."""
        if kind == "user":
            content = data.draw(st.text(max_size=30), label="text")
            return {"role": "user", "content": content}, ModelMessage(None, "user", content), []
        if kind == "tool":
            call_id, call_position, call_index = data.draw(st.sampled_from(answerable),
                                                           label="answers")
            content = data.draw(st.text(max_size=20) | json_values, label="result")
            record = {"role": "tool", "tool_call_id": call_id, "content": content}
            message = ModelMessage(None, "tool", "",
                                   results=[ModelResult(call_id, content,
                                                        (call_position, call_index))])
            return record, message, []
        content = data.draw(st.none() | st.text(max_size=20), label="assistant text")
        calls: list[ModelCall] = []
        wire: list[dict[str, Any]] = []
        for _ in range(data.draw(st.integers(0, 2), label="calls")):
            name = data.draw(st.sampled_from(TOOL_NAMES), label="tool")
            call_id = None if data.draw(st.integers(0, 5), label="no id") == 0 else (
                f"call_{next(self.call_numbers)}")
            shape = data.draw(st.sampled_from(["object", "object", "object", "invalid",
                                               "empty"]), label="arguments")
            if shape == "object":
                value = data.draw(argument_objects, label="input")
                arguments = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
                parsed: dict[str, Any] | None = value
            elif shape == "invalid":
                arguments, parsed = data.draw(st.sampled_from(INVALID_ARGUMENTS)), None
            else:
                arguments, parsed = data.draw(st.sampled_from(EMPTY_ARGUMENTS)), {}
            # Text arguments are kept verbatim, but for no text at all, kept as "{}".
            calls.append(ModelCall(call_id, name, arguments or "{}", parsed))
            function = {"name": name, "arguments": arguments}
            wire.append({"type": "function", "function": function}
                        | ({"id": call_id} if call_id is not None else {}))
        record: dict[str, Any] = {"role": "assistant", "content": content}
        if wire or data.draw(st.booleans(), label="empty tool_calls"):
            record["tool_calls"] = wire
        made = [(c.id, position, i) for i, c in enumerate(calls) if c.id is not None]
        return record, ModelMessage(None, "assistant", content or "", calls), made

    @rule(session=st.sampled_from(SESSIONS))
    def load(self, session: str) -> None:
        if session not in self.sessions:
            with pytest.raises(SessionNotFound):
                self.store.load(session)
            return
        self.compare(session)

    @rule(source=st.sampled_from(SESSIONS), new_id=st.sampled_from(SESSIONS),
          data=st.data())
    def fork(self, source: str, new_id: str, data: st.DataObject) -> None:
        length = len(self.sessions.get(source, []))
        at = data.draw(st.integers(0, length + 2), label="at")
        if source not in self.sessions:
            with pytest.raises(SessionNotFound):
                self.store.fork(source, at, new_id)
            return
        if new_id in self.sessions:
            with pytest.raises(DatabaseError, match="exists already"):
                self.store.fork(source, at, new_id)
            return
        if at > length:  # past the end of the session: an error, nothing created
            with pytest.raises(UsageError, match="fork at a position from 0"):
                self.store.fork(source, at, new_id)
            return
        info = self.store.fork(source, at, new_id)
        copied = at
        assert info.session_id == new_id and info.message_count == copied
        assert info.metadata["forked_from"] == {"session_id": source, "position": copied}
        self.sessions[new_id] = [
            ModelMessage(m.key, m.role, m.text, list(m.calls), list(m.results))
            for m in self.sessions[source][:copied]
        ]
        self.compare(new_id)

    @rule(raw=st.sampled_from(TOOL_NAMES), current=st.sampled_from(CURRENT_NAMES))
    def add_alias(self, raw: str, current: str) -> None:
        table = self.store.add_alias(raw, current)
        self.aliases[raw] = current
        assert dict(table) == self.aliases

    @rule(raw=st.sampled_from(TOOL_NAMES))
    def remove_alias(self, raw: str) -> None:
        if raw not in self.aliases:
            with pytest.raises(AliasError):
                self.store.remove_alias(raw)
            return
        table = self.store.remove_alias(raw)
        del self.aliases[raw]
        assert dict(table) == self.aliases

    @rule(session=st.sampled_from(SESSIONS))
    def delete(self, session: str) -> None:
        if session not in self.sessions:
            with pytest.raises(SessionNotFound):
                self.store.delete_session(session)
            return
        self.store.delete_session(session)
        del self.sessions[session]

    @invariant()
    def same_sessions_and_aliases(self) -> None:
        self.counts["steps"] += 1
        listed = self.store.list_sessions(limit=100)
        assert sorted(s.session_id for s in listed) == sorted(self.sessions)
        assert {s.session_id: s.message_count for s in listed} == {
            sid: len(msgs) for sid, msgs in self.sessions.items()}
        assert dict(self.store.aliases()) == self.aliases

    # -- comparison -----------------------------------------------------------------------------

    def compare(self, session: str) -> None:
        transcript = self.store.load(session)
        expected = self.sessions[session]
        assert [m.position for m in transcript] == list(range(len(expected)))
        assert transcript.session.message_count == len(expected)
        links: dict[tuple[int, int], tuple[int, int]] = {}
        for stored, want in zip(transcript, expected, strict=True):
            where = f"{session}@{stored.position}"
            message = stored.message
            assert (stored.key, message.role, message.text) == (
                want.key, want.role, want.text), where
            assert len(message.tool_calls) == len(want.calls), where
            for index, (got, call) in enumerate(zip(message.tool_calls, want.calls,
                                                    strict=True)):
                self.compare_call(got, call, stored.position, index, where)
            assert [(r.call_id, r.content) for r in message.tool_results] == [
                (r.call_id, r.content) for r in want.results], where
            for index, result in enumerate(want.results):
                links[(stored.position, index)] = result.call
        assert dict(transcript.links) == links, session
        assert not list(transcript.orphan_results())

    def compare_call(self, got: ToolCall | InvalidToolCall, call: ModelCall, position: int,
                     index: int, where: str) -> None:
        current = self.aliases.get(call.raw_name, call.raw_name)
        assert got.name == current, where
        assert got.raw_name == (call.raw_name if current != call.raw_name else None), where
        assert got.recorded_name == call.raw_name, where
        if call.id is None:
            assert got.id == f"call_ts{position}x{index}", where
            assert got.extras.get("id_minted") is True, where
        else:
            assert got.id == call.id, where
        assert got.arguments_text == call.arguments_text, where
        if call.input is None:
            assert isinstance(got, InvalidToolCall), where
        else:
            assert isinstance(got, ToolCall), where
            assert got.input == call.input, where


@pytest.fixture(params=[pytest.param("sqlite", marks=pytest.mark.sqlite),
                        pytest.param("postgres", marks=pytest.mark.postgres)])
def new_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], str]]:
    yield from fresh_databases(request.param, request, tmp_path)


def test_the_store_behaves_like_the_model(new_database, request):
    counts: Counter[str] = Counter()
    machine = type("Machine", (StoreMachine,), {"new_database": staticmethod(new_database),
                                                "counts": counts})
    run_state_machine_as_test(machine, settings=RUN_SETTINGS)
    steps = counts["steps"] - counts["runs"]  # the invariant runs once more per run
    print(f"{request.node.callspec.id}: {counts['runs']} state-machine runs, {steps} steps")


# -- bugs the fuzzer found in the store, now fixed: regression tests ----------------------------


def call_record(arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}]}


@pytest.mark.parametrize("arguments", [
    pytest.param('{"n": 100000000000000000000000}', id="text"),
    pytest.param({"n": -(2**63) - 1}, id="object"),
    pytest.param('{"deep": [1, {"n": 18446744073709551616}]}', id="nested"),
])
def test_an_integer_beyond_64_bits_in_arguments_is_stored(store, arguments):
    store.append("big", [call_record(arguments)], keys=["k"])
    call = store.load("big").messages[0].message.tool_calls[0]
    assert isinstance(call, ToolCall)
    assert call.input == (json.loads(arguments) if isinstance(arguments, str) else arguments)


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:00:00-14:00"])
def test_a_timestamp_out_of_range_in_utc_falls_back_to_the_append_time(store, stamp):
    record = {"type": "user", "uuid": "u1", "timestamp": stamp,
              "message": {"role": "user", "content": "hi"}}
    store.append("stamped", [record])
    assert store.load("stamped").messages[0].message.text == "hi"


def test_a_timestamp_before_year_1000_loads_back(store):
    record = {"type": "user", "uuid": "u1", "timestamp": "0999-06-01T00:00:00Z",
              "message": {"role": "user", "content": "hi"}}
    store.append("old", [record])
    loaded = store.load("old").messages[0]
    assert loaded.message.text == "hi" and loaded.created_at.year == 999
