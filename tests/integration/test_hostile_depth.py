"""Issue 23, one value that disabled search for everyone: JSON nested deeper than the store
accepts is refused at append with a typed error (nothing of the append stored), and a value
stored before that rule (by an older version, here by SQL) is read, indexed, searched,
exported and shown like any other, one item at a time, and ``verify`` reports it. Both
backends."""

from __future__ import annotations

import io

import orjson
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select, text

from store import NestingTooDeep, RecordError, SessionNotFound, StoreError
from store.audit.export import export_jsonl
from store.audit.search import CallQuery, search_calls
from store.cli.main import cli
from store.core.depth import MAX_DEPTH, deep_dumps, json_depth, text_depth, text_within
from store.db.schema.tables import messages, tool_calls, tool_results

#: The depth the attack used: orjson decodes it (it refuses 1,025 and more), and Python's
#: recursion limit (1,000 frames) is reached first by a recursive walk.
ATTACK = 985
WORD = "needleword"


def nested_text(depth: int, leaf: str = f'"{WORD}"') -> str:
    return "[" * depth + leaf + "]" * depth


def arguments_text(depth: int) -> str:
    """A JSON object whose value nests ``depth`` - 1 arrays: ``depth`` levels in all."""
    return '{"a":' + nested_text(depth - 1) + "}"


def call(arguments: str, call_id: str = "c1") -> dict:
    return {"role": "assistant", "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "f", "arguments": arguments}}]}


def result(content, call_id: str = "c1") -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def count(store, table) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def nested_list(depth: int) -> list:
    value: list = [WORD]
    for _ in range(depth - 1):
        value = [value]
    return value


class TestDepth:
    @pytest.mark.parametrize("depth", [0, 1, 5, 199, 200, 201, 985])
    def test_text_and_value_agree(self, depth):
        value = nested_list(depth) if depth else WORD
        assert json_depth(value) == depth
        assert text_depth(orjson.dumps(value).decode() if depth < 250 else
                          nested_text(depth)) == depth
        assert text_within(nested_text(depth)) == (depth <= MAX_DEPTH)

    def test_brackets_inside_strings_do_not_count(self):
        assert text_depth('["' + "[" * 500 + '", "\\"[["]') == 1
        assert text_within('{"a": "' + "{" * 5000 + '"}')

    def test_deep_dumps_writes_what_orjson_writes(self):
        for value in ({"a": [1, 2.5, None, True, "x\n\u00e9"], "b": {}}, [], 7, 2**70,
                      nested_list(50)):
            expected = orjson.dumps(value).decode() if value != 2**70 else str(2**70)
            assert deep_dumps(value) == expected
        assert deep_dumps(nested_list(ATTACK)) == nested_text(ATTACK)


class TestAppendRefuses:
    @pytest.mark.parametrize("depth", [MAX_DEPTH + 1, ATTACK])
    def test_deep_arguments(self, store, depth):
        store.append("s", [{"role": "user", "content": "before"}])
        with pytest.raises(NestingTooDeep) as info:
            store.append("s", [{"role": "user", "content": "x"}, call(arguments_text(depth))])
        error = info.value
        assert isinstance(error, RecordError) and isinstance(error, StoreError)
        assert (error.depth, error.limit) == (depth, MAX_DEPTH)
        assert str(error) == (f"message 1: the arguments of call 0: nested {depth} levels "
                              f"deep, over the limit of {MAX_DEPTH}")
        assert count(store, messages) == 1 and count(store, tool_calls) == 0

    def test_deep_array_arguments_are_refused_too(self, store):
        # (not an object: kept as an invalid call, but its text still decodes for search)
        with pytest.raises(NestingTooDeep, match="the arguments of call 0"):
            store.append("s", [call(nested_text(ATTACK))])

    @pytest.mark.parametrize("content", [nested_list(MAX_DEPTH + 1),
                                         [{"type": "text", "text": "x",
                                           "extra": nested_list(MAX_DEPTH)}]])
    def test_deep_result_content(self, store, content):
        store.append("s", [call('{"a": 1}')])
        with pytest.raises(NestingTooDeep, match="message 0: the content of result 0"):
            store.append("s", [result(content)])
        assert count(store, tool_results) == 0 and count(store, messages) == 1

    def test_deep_metadata(self, store):
        with pytest.raises(NestingTooDeep, match="message 0: its (extras|metadata): nested"):
            store.append("s", [{"role": "user", "content": "x",
                                "metadata": {"m": nested_list(MAX_DEPTH)}}])

    def test_deep_session_metadata(self, store):
        with pytest.raises(NestingTooDeep, match="session 's': its metadata: nested"):
            store.create_session("s", metadata={"m": nested_list(MAX_DEPTH)})
        with pytest.raises(SessionNotFound):
            store.get_session("s")

    def test_the_limit_itself_is_accepted_and_reads_back(self, store):
        stored = store.append("s", [call(arguments_text(MAX_DEPTH)),
                                    result(nested_list(MAX_DEPTH - 1))])
        assert len(stored.stored) == 2
        transcript = store.load("s")
        assert json_depth(transcript.messages[0].message.tool_calls[0].input) == MAX_DEPTH
        assert len(search_calls(store, CallQuery(text=WORD))) == 1
        assert store.verify().ok


def plant_deep(store, sid: str = "deep") -> None:
    """A session whose call arguments and result are nested ATTACK deep, written by SQL (as an
    older version would have stored them), its search index not built yet."""
    store.append(sid, [call('{"a": "small"}'), result("small")])
    wire = orjson.dumps({"id": "c1", "type": "function", "function": {
        "name": "f", "arguments": arguments_text(ATTACK)}}).decode()
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE tool_calls SET wire_json = :w WHERE session_id = :s"),
                     {"w": wire, "s": sid})
        conn.execute(text("UPDATE tool_results SET content_json = :c WHERE session_id = :s"),
                     {"c": nested_text(ATTACK), "s": sid})


@pytest.fixture
def planted(store):
    """Neighbours on both sides of the deep session (one catch-up chunk holds them all)."""
    for number in range(3):
        store.append(f"a{number}", [call(f'{{"a": "{WORD} {number}"}}'), result("ok")])
    plant_deep(store)
    for number in range(3):
        store.append(f"z{number}", [call('{"a": "x"}'), result(f"{WORD} z{number}")])
    return store


def cli_ok(*args: str) -> str:
    outcome = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert outcome.exit_code == 0, outcome.output
    return outcome.output


EXPECTED = ["a0", "a1", "a2", "deep", "z0", "z1", "z2"]


class TestStoredBeforeTheRule:
    def test_search_before_the_index_is_built(self, planted):
        # (a read-only open scans the unindexed tail: the deep item is decoded there)
        from store import TranscriptStore

        with TranscriptStore.open(planted.url, read_only=True) as reader:
            found = search_calls(reader, CallQuery(text=WORD), limit=100)
        assert sorted(m.session_id for m in found) == EXPECTED

    def test_index_then_search(self, planted):
        planted.update_search_index()
        with planted.engine.connect() as conn:
            behind = conn.execute(text("SELECT count(*) FROM sessions "
                                       "WHERE indexed_position < next_position")).scalar_one()
        assert behind == 0  # the whole chunk was indexed, the deep session with it
        assert sorted(m.session_id for m in search_calls(
            planted, CallQuery(text=WORD), limit=100)) == EXPECTED

    def test_export_writes_every_session(self, planted):
        out = io.StringIO()
        stats = export_jsonl(planted, None, out)
        assert stats.sessions == 7 and stats.records == out.getvalue().count("\n") == 14
        lines = out.getvalue().splitlines()
        deep = [line for line in lines if "[" * (ATTACK - 1) in line]
        assert len(deep) == 2  # the call and the result, exactly as stored

    def test_export_redacted(self, planted):
        from store import Redactor

        out = io.StringIO()
        stats = export_jsonl(planted, None, out, redactor=Redactor())
        assert stats.records == 14 and stats.redactions == 0

    def test_sessions_show(self, planted):
        output = cli_ok("sessions", "show", "deep", "--db", planted.url)
        assert WORD in output

    @pytest.mark.parametrize("flags", [(), ("--json",), ("--redact",)])
    def test_calls_show(self, planted, flags):
        output = cli_ok("calls", "show", "deep:0.0", "--db", planted.url, *flags)
        assert WORD in output

    def test_the_viewer_renders_it(self, planted):
        from store.viewer.transcript_html import part_text, pretty

        call = planted.load("deep").messages[0].message.tool_calls[0]
        assert WORD in part_text(call)
        assert pretty(call.input).count("[") == ATTACK - 1

    def test_cli_search_and_export(self, planted):
        output = cli_ok("calls", "search", "--db", planted.url, "--text", WORD, "--limit",
                        "0", "--json")
        assert len(output.splitlines()) == 7
        exported = cli_ok("export", "--db", planted.url, "--to", "jsonl").splitlines()
        assert sum(line.startswith('{"session_id"') for line in exported) == 14

    def test_verify_reports_the_items(self, planted):
        report = planted.verify()
        assert not report.ok
        found = sorted((p.check, p.session_id, p.position, p.index) for p in report.errors)
        # planted by SQL behind the store's back: the chain says so too (issue 27), from the
        # first message whose stored content changed
        assert found == [("chain", "deep", 0, None), ("depth", "deep", 0, 0),
                         ("depth", "deep", 1, 0)]
        assert all(f"nested {ATTACK}" in p.detail or f"nested {ATTACK + 1}" in p.detail
                   for p in report.errors if p.check == "depth")
