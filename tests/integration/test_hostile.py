"""Bad and hostile input, on both backends: each gets a clear typed error, or is stored flagged
where the rules say so, and nothing of the append is half-written."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import func, select

from store import (
    InvalidToolCall,
    RecordError,
    SessionNotFound,
    StoreError,
    TooLargeError,
    ToolArgumentsError,
    ToolCall,
)
from store.db.schema.tables import messages, tool_calls

GOOD = {"role": "user", "content": "before"}


def call(arguments, name="f", call_id="c1"):
    return {"role": "assistant", "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}


def deep_object(depth):
    root: dict = {}
    node = root
    for _ in range(depth):
        child: dict = {}
        node["a"] = child
        node = child
    return root


def cyclic():
    value: dict = {"a": []}
    value["a"].append(value)
    return value


def rows(store, table):
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


REFUSED = [
    ("invalid-utf8-bytes", call(b"\xff\xfe{}"), RecordError, "lone surrogate"),
    ("lone-surrogate-in-arguments", call('{"a": "\ud800"}'), RecordError, "lone surrogate"),
    ("lone-surrogate-in-text", {"role": "user", "content": "a\udc80b"}, RecordError,
     "lone surrogate"),
    ("nesting-100000-deep-object", call(deep_object(100_000)), ToolArgumentsError,
     "arguments"),
    ("non-string-keys", call({1: "x"}), ToolArgumentsError, "int key"),
    ("cyclic-structure", call(cyclic()), ToolArgumentsError, "cyclic"),
    ("nan", call({"x": math.nan}), ToolArgumentsError, "non-finite"),
    ("infinity", call({"x": math.inf}), ToolArgumentsError, "non-finite"),
    ("non-string-record-key", {"role": "user", "content": "x", 5: "y"}, RecordError, "5"),
]


class TestRefused:
    @pytest.mark.parametrize(("record", "error", "fragment"), [c[1:] for c in REFUSED],
                             ids=[c[0] for c in REFUSED])
    def test_a_typed_error_and_nothing_half_written(self, store, record, error, fragment):
        store.append("s", [GOOD])
        with pytest.raises(error, match=fragment) as info:
            store.append("s", [GOOD, record, GOOD])
        assert isinstance(info.value, StoreError) and isinstance(info.value, ValueError)
        assert "message 1" in str(info.value)
        assert rows(store, messages) == 1 and rows(store, tool_calls) == 0

    def test_a_100_mb_argument_string_is_over_the_default_limit(self, store):
        with pytest.raises(TooLargeError, match="over the limit of 16777216 bytes"):
            store.append("s", [call('{"x": "' + "y" * (100 * 1024 * 1024) + '"}')])
        with pytest.raises(SessionNotFound):
            store.get_session("s")

    @pytest.mark.parametrize("session_id", ["x" * 10_000, "", "a\x00b"],
                             ids=["10-kb", "empty", "nul"])
    def test_bad_session_ids(self, store, session_id):
        with pytest.raises(RecordError, match="session id"):
            store.append(session_id, [GOOD])


class TestStoredFlagged:
    def test_nesting_100000_deep_text_is_kept_verbatim_and_flagged(self, store):
        text = "[" * 100_000 + "]" * 100_000
        store.append("s", [call(text)])
        (loaded,) = store.load("s").messages[1 - 1].message.tool_calls
        assert isinstance(loaded, InvalidToolCall)
        assert loaded.error_kind == "invalid_json" and loaded.arguments_text == text

    def test_nan_and_infinity_literals_in_text_are_invalid_json(self, store):
        store.append("s", [call('{"x": NaN}'), call('{"x": -Infinity}', call_id="c2")])
        calls = [c.call for c in store.load("s").calls()]
        assert [c.error_kind for c in calls] == ["invalid_json", "invalid_json"]
        assert [c.arguments_text for c in calls] == ['{"x": NaN}', '{"x": -Infinity}']

    def test_giant_integers_round_trip_exactly(self, store):
        big = 2**200 + 1
        store.append("s", [call(f'{{"n": {big}, "m": -{big}}}'), call({"n": -(2**70)},
                                                                        call_id="c2")])
        inputs = [c.call.input for c in store.load("s").calls()]
        assert inputs == [{"n": big, "m": -big}, {"n": -(2**70)}]
        assert all(isinstance(c.call, ToolCall) for c in store.load("s").calls())


class TestMetacharacters:
    WEIRD = ["'; DROP TABLE tool_calls; --", "%", "_", "\\", '"', "100%_done\\x", "a'b\"c"]

    @pytest.mark.parametrize("text", WEIRD)
    def test_sql_metacharacters_and_wildcards_are_data_everywhere(self, store, text):
        import store as api

        sid = f"s{text}"
        store.append(sid, [call('{"q": ' + api.dumps_arguments({"": text})[4:-1] + "}",
                                name=f"t{text}",
                                call_id=f"c{text}")], title=f"title {text}", tags=[text])
        (loaded,) = store.load(sid).calls()
        assert (loaded.call.id, loaded.call.name, loaded.call.input) == (
            f"c{text}", f"t{text}", {"q": text})
        assert [s.session_id for s in store.list_sessions(title_contains=text)] == [sid]
        assert [s.session_id for s in store.list_sessions(tag=text)] == [sid]
        hits = api.search_calls(store, api.CallQuery(
            tool=f"t{text}", session_id=sid,
            where=(api.ArgumentCondition("q", "contains", text),)))
        assert [h.call_id for h in hits] == [f"c{text}"]
        assert api.search_calls(store, api.CallQuery(
            where=(api.ArgumentCondition("q", "contains", text + "zz"),))) == []
        assert rows(store, tool_calls) == 1
