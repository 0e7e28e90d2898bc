"""repair(): crash cases on small hand-made histories (pure: no database).

Each case checks the repaired history (every call answered right after its message, in call
order, ids carried by the results), the report (one change per fix, naming the call), that it
renders to a history every target's validator accepts, and that repairing twice equals
repairing once.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_rules import validate

from store import (
    AliasTable,
    InvalidToolCall,
    Message,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)
from store.core.model import make_tool_call
from store.core.transcript import SessionInfo, StoredMessage, Transcript
from store.replay.render import render
from store.replay.repair import CHANGE_KINDS, INTERRUPTED_TEXT, Repaired, repair
from store.replay.targets import TARGETS, id_problem, remapped_id

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def call(call_id, name="get_weather", arguments='{"city": "Paris"}'):
    return make_tool_call(call_id, name, arguments)


def user(text):
    return Message("user", (TextPart(text),))


def assistant(*calls, text=None):
    return Message("assistant", ((TextPart(text),) if text else ()) + calls)


def tool(call_id, content="ok", name=None):
    return Message("tool", (ToolResult(call_id, content, name=name),))


def shape(messages):
    """Each message as (role, [("call", id, name) | ("result", call_id, content) | text])."""
    out = []
    for m in messages:
        parts = []
        for p in m.parts:
            if isinstance(p, ToolCall | InvalidToolCall):
                parts.append(("call", p.id, p.name))
            elif isinstance(p, ToolResult):
                parts.append(("result", p.call_id, p.content))
            elif isinstance(p, TextPart):
                parts.append(p.text)
        out.append((m.role, parts))
    return out


def kinds(repaired: Repaired):
    return [(c.kind, c.call_id) for c in repaired.changes]


def assert_valid_everywhere(messages, **options):
    """Repaired for each target: renders valid, and a second repair changes nothing."""
    for target in TARGETS:
        once = repair(messages, target, **options)
        assert validate(target, render(once.messages, target)) == [], target
        twice = repair(once.messages, target, **options)
        assert twice.changes == (), (target, twice.changes)
        assert twice.messages == once.messages, target
    once = repair(messages, **options)
    again = repair(once.messages, **options)
    assert (again.changes, again.messages) == ((), once.messages)


class TestDanglingCalls:
    HISTORY = [
        user("weather in Paris and Rome?"),
        assistant(call("call_a"), call("call_b", arguments='{"city": "Rome"}'), text="Checking."),
    ]

    def test_trailing_dangling_calls_get_synthesized_error_results_in_call_order(self):
        repaired = repair(self.HISTORY)
        assert shape(repaired.messages) == [
            ("user", ["weather in Paris and Rome?"]),
            ("assistant", ["Checking.", ("call", "call_a", "get_weather"),
                           ("call", "call_b", "get_weather")]),
            ("tool", [("result", "call_a", INTERRUPTED_TEXT)]),
            ("tool", [("result", "call_b", INTERRUPTED_TEXT)]),
        ]
        synthesized = repaired.messages[2].parts[0]
        assert synthesized.is_error and synthesized.extras == {"synthesized": True}
        assert "interrupted" in synthesized.content and "no result" in synthesized.content
        assert kinds(repaired) == [("synthesized_result", "call_a"),
                                   ("synthesized_result", "call_b")]
        assert all("get_weather" in c.detail and "position 1" in c.detail
                   for c in repaired.changes)
        assert repaired.source_positions == (0, 1, None, None)
        assert_valid_everywhere(self.HISTORY)

    def test_drop_mode_removes_the_calls_and_keeps_the_text(self):
        repaired = repair(self.HISTORY, dangling="drop")
        assert shape(repaired.messages) == [("user", ["weather in Paris and Rome?"]),
                                            ("assistant", ["Checking."])]
        assert kinds(repaired) == [("dropped_dangling_call", "call_a"),
                                   ("dropped_dangling_call", "call_b")]
        assert "dangling='drop'" in repaired.changes[0].detail
        assert_valid_everywhere(self.HISTORY, dangling="drop")

    def test_drop_mode_removes_an_assistant_message_left_empty(self):
        history = [user("go"), assistant(call("call_a")), user("still there?")]
        repaired = repair(history, dangling="drop")
        assert shape(repaired.messages) == [("user", ["go"]), ("user", ["still there?"])]
        assert repaired.source_positions == (0, 2)
        assert_valid_everywhere(history, dangling="drop")

    def test_a_dangling_call_in_mid_history_is_answered_before_the_next_message(self):
        history = [
            user("go"),
            assistant(call("call_a"), call("call_b")),
            tool("call_b", "18C"),
            user("and now?"),
            assistant(call("call_c")),
            tool("call_c", "done"),
            Message("assistant", (TextPart("All done."),)),
        ]
        repaired = repair(history)
        assert shape(repaired.messages)[1:4] == [
            ("assistant", [("call", "call_a", "get_weather"), ("call", "call_b", "get_weather")]),
            ("tool", [("result", "call_a", INTERRUPTED_TEXT)]),
            ("tool", [("result", "call_b", "18C")]),
        ]
        assert kinds(repaired) == [("synthesized_result", "call_a")]
        assert_valid_everywhere(history)
        assert_valid_everywhere(history, dangling="drop")
        dropped = repair(history, dangling="drop")
        assert shape(dropped.messages)[1] == ("assistant", [("call", "call_b", "get_weather")])


class TestResults:
    def test_an_orphan_result_is_dropped(self):
        history = [user("hi"), tool("call_ghost", "boo"), assistant(text="hello")]
        repaired = repair(history)
        assert shape(repaired.messages) == [("user", ["hi"]), ("assistant", ["hello"])]
        assert kinds(repaired) == [("dropped_orphan_result", "call_ghost")]
        assert "'call_ghost'" in repaired.changes[0].detail
        assert repaired.changes[0].position == 1
        assert_valid_everywhere(history)

    def test_duplicate_results_collapse_to_the_first(self):
        history = [user("go"), assistant(call("call_a")), tool("call_a", "first"),
                   tool("call_a", "second"), assistant(text="ok")]
        repaired = repair(history)
        assert shape(repaired.messages)[2:] == [("tool", [("result", "call_a", "first")]),
                                                ("assistant", ["ok"])]
        assert kinds(repaired) == [("dropped_duplicate_result", "call_a")]
        assert "position 3" in repaired.changes[0].detail
        assert "kept: result 0 at position 2" in repaired.changes[0].detail
        assert_valid_everywhere(history)

    def test_out_of_order_results_are_put_in_call_order(self):
        history = [
            user("go"),
            assistant(call("call_a"), call("call_b"), call("call_c")),
            tool("call_c", "C"), tool("call_a", "A"), tool("call_b", "B"),
        ]
        repaired = repair(history)
        assert [p for m in repaired.messages[2:] for p in shape([m])[0][1]] == [
            ("result", "call_a", "A"), ("result", "call_b", "B"), ("result", "call_c", "C")]
        assert {c.kind for c in repaired.changes} == {"moved_result"}
        assert_valid_everywhere(history)

    def test_a_result_stored_far_later_moves_right_after_its_call(self):
        history = [
            user("go"),
            assistant(call("toolu_task")),
            user("meanwhile"),
            assistant(text="working"),
            Message("user", (ToolResult("toolu_task", [{"type": "text", "text": "done"}]),
                             TextPart("thanks"))),
        ]
        repaired = repair(history)
        assert shape(repaired.messages) == [
            ("user", ["go"]),
            ("assistant", [("call", "toolu_task", "get_weather")]),
            ("user", [("result", "toolu_task", [{"type": "text", "text": "done"}])]),
            ("user", ["meanwhile"]),
            ("assistant", ["working"]),
            ("user", ["thanks"]),
        ]
        assert kinds(repaired) == [("moved_result", "toolu_task")]
        assert repaired.changes[0].position == 4
        assert repaired.source_positions == (0, 1, 4, 2, 3, 4)
        assert_valid_everywhere(history)

    def test_results_without_ids_pair_by_position_and_take_the_calls_ids(self):
        history = [
            user("go"),
            assistant(call(None, "generate_topic", "{}"), call(None, "generate_topic", "{}")),
            Message("user", (ToolResult(None, {"topic": "cars"}, name="generate_topic"),
                             ToolResult(None, {"topic": "bees"}, name="generate_topic"))),
        ]
        plain = repair(history)
        assert plain.changes == ()
        assert plain.messages == tuple(history)
        anthropic = repair(history, "anthropic")
        ids = [c.id for c in anthropic.messages[1].tool_calls]
        assert [r.call_id for r in anthropic.messages[2].tool_results] == ids
        assert [c.kind for c in anthropic.changes] == ["remapped_id"] * 2
        assert all(re.fullmatch(r"toolu_[0-9a-f]{24}", i) for i in ids)
        gemini = repair(history, "gemini")
        assert gemini.changes == ()
        assert_valid_everywhere(history)

    def test_a_client_substituted_result_id_is_relinked(self):
        history = [user("go"), assistant(call("")),
                   tool("pyd_ai_cee885c699414386a7e14b7ec43cadbc", "12:00")]
        repaired = repair(history)
        assert kinds(repaired) == [("relinked_result", "")]
        assert repaired.messages[2].tool_results[0].call_id == ""
        assert_valid_everywhere(history)

    def test_a_valid_history_is_returned_unchanged(self):
        history = [
            Message("system", (TextPart("be brief"),)),
            user("go"),
            assistant(call("call_a"), call("call_b"), text="Both."),
            Message("user", (ToolResult("call_a", "A"), ToolResult("call_b", "B"))),
            assistant(text="done"),
        ]
        for target in (None, *TARGETS):
            repaired = repair(history, target)
            assert repaired.changes == () and repaired.messages == tuple(history)


class TestArguments:
    RAW = '{\n  "subject": "Invitation to attend'

    def test_invalid_arguments_are_replayed_as_an_object_and_reported_exactly(self):
        bad = make_tool_call("call_x", "send_email", self.RAW)
        assert isinstance(bad, InvalidToolCall)
        history = [user("mail"), assistant(bad), tool("call_x", "sent")]
        repaired = repair(history)
        fixed = repaired.messages[1].tool_calls[0]
        assert isinstance(fixed, ToolCall)
        assert fixed.input == {"_invalid_arguments": self.RAW, "_error": "invalid_json"}
        assert (fixed.id, fixed.name) == ("call_x", "send_email")
        (change,) = repaired.changes
        assert change.kind == "substituted_arguments" and change.call_id == "call_x"
        assert repr(self.RAW) in change.detail
        assert fixed.arguments_text in change.detail
        assert "send_email" in change.detail and "position 1" in change.detail
        assert_valid_everywhere(history)

    def test_non_object_arguments_are_substituted_too(self):
        bad = make_tool_call("call_x", "f", "[1, 2]")
        repaired = repair([user("x"), assistant(bad), tool("call_x")])
        assert repaired.messages[1].tool_calls[0].input == {
            "_invalid_arguments": "[1, 2]", "_error": "non_object_json"}


class TestToolNames:
    def test_an_unknown_tool_is_reported_with_the_default_alias_that_fixes_it(self):
        history = [user("x"), assistant(call("call_a", "read_file", '{"path": "a"}')),
                   tool("call_a", "text")]
        repaired = repair(history, tools=["read", "bash"])
        (change,) = repaired.changes
        assert (change.kind, change.call_id, change.alias) == (
            "unknown_tool", "call_a", ("read_file", "read"))
        assert "'read_file' -> 'read'" in change.detail
        assert repaired.messages == tuple(history)  # advisory: nothing changed
        assert not repaired.changed

    def test_a_close_match_is_suggested(self):
        repaired = repair([user("x"), assistant(call("c", "bahs", "{}")), tool("c")],
                          tools=["bash", "read"])
        assert repaired.changes[0].alias == ("bahs", "bash")

    def test_no_suggestion_when_nothing_is_close(self):
        repaired = repair([user("x"), assistant(call("c", "teleport", "{}")), tool("c")],
                          tools=["bash"])
        assert repaired.changes[0].alias is None
        assert "no alias would fix it" in repaired.changes[0].detail

    def test_aliases_rename_calls_and_then_the_tool_is_known(self):
        history = [user("x"), assistant(call("c", "run_shell_command", '{"command": "ls"}')),
                   tool("c", "a.txt")]
        repaired = repair(history, tools=["bash"], aliases=AliasTable.default())
        (change,) = repaired.changes
        assert change.kind == "renamed_tool" and "'run_shell_command' -> 'bash'" in change.detail
        renamed = repaired.messages[1].tool_calls[0]
        assert (renamed.name, renamed.raw_name) == ("bash", "run_shell_command")
        assert_valid_everywhere(history, tools=["bash"], aliases=AliasTable.default())


class TestIds:
    MANTLE = [
        user("go"),
        assistant(call("call_0", "first_tool", "{}")),
        tool("call_0", "first result"),
        assistant(call("call_0", "second_tool", "{}")),
        tool("call_0", "second result"),
    ]

    @pytest.mark.parametrize("target", TARGETS)
    def test_an_id_repeated_in_the_transcript_is_remapped_and_its_result_follows(self, target):
        repaired = repair(self.MANTLE, target)
        first, second = (repaired.messages[i].tool_calls[0] for i in (1, 3))
        assert first.id == "call_0"
        assert second.id == remapped_id(target, 3, 0, "call_0") != "call_0"
        assert repaired.messages[4].tool_results[0].call_id == second.id
        assert repaired.messages[4].tool_results[0].content == "second result"
        (change,) = repaired.changes
        assert (change.kind, change.position, change.call_id) == ("remapped_id", 3, "call_0")
        assert "second_tool" in change.detail and second.id in change.detail
        assert_valid_everywhere(self.MANTLE)

    def test_without_a_target_ids_are_kept(self):
        assert repair(self.MANTLE).changes == ()

    KIMI = [user("temp?"), assistant(call("functions.get_temperature:0", "get_temperature")),
            tool("functions.get_temperature:0", "21")]

    @pytest.mark.parametrize("target", ["anthropic", "bedrock"])
    def test_an_id_in_a_refused_format_is_remapped(self, target):
        repaired = repair(self.KIMI, target)
        new = repaired.messages[1].tool_calls[0].id
        prefix = "toolu_" if target == "anthropic" else "tooluse_"
        assert re.fullmatch(prefix + "[0-9a-f]{24}", new)
        assert repaired.messages[2].tool_results[0].call_id == new
        assert "^[a-zA-Z0-9_-]{1,64}$" in repaired.changes[0].detail
        assert_valid_everywhere(self.KIMI)

    @pytest.mark.parametrize("target", ["openai-chat", "openai-responses", "gemini"])
    def test_targets_that_accept_the_odd_id_keep_it(self, target):
        assert repair(self.KIMI, target).changes == ()

    @pytest.mark.parametrize("target", ["openai-chat", "openai-responses", "anthropic",
                                        "bedrock"])
    def test_an_empty_id_is_remapped(self, target):
        history = [user("x"), assistant(call("", "now", "{}")), tool("", "12:00")]
        repaired = repair(history, target)
        new = repaired.messages[1].tool_calls[0].id
        assert new and repaired.messages[2].tool_results[0].call_id == new
        assert "empty" in repaired.changes[0].detail
        assert_valid_everywhere(history)

    def test_an_overlong_id_is_remapped_for_openai_chat_only(self):
        long_id = "x" * 41
        history = [user("x"), assistant(call(long_id)), tool(long_id)]
        assert [c.kind for c in repair(history, "openai-chat").changes] == ["remapped_id"]
        assert repair(history, "openai-responses").changes == ()

    def test_remapping_is_deterministic(self):
        assert repair(self.KIMI, "anthropic") == repair(self.KIMI, "anthropic")
        assert remapped_id("anthropic", 1, 0, "a") == remapped_id("anthropic", 1, 0, "a")
        assert remapped_id("anthropic", 1, 0, "a") != remapped_id("anthropic", 1, 1, "a")

    def test_id_rules(self):
        assert id_problem("functions.get_temperature:0", "anthropic")
        assert id_problem("toolu_01A", "anthropic") is None
        assert id_problem("a" * 65, "bedrock")
        assert id_problem("a" * 40, "openai-chat") is None
        assert id_problem("a" * 41, "openai-chat")
        assert id_problem("", "openai-responses") and id_problem(None, "openai-responses")
        assert id_problem(None, "gemini") is None and id_problem("any:thing", "gemini") is None


class TestTranscriptInput:
    def transcript(self):
        messages = [
            user("go"),
            assistant(call(None, "generate_topic", "{}"), call(None, "generate_topic", "{}")),
            Message("user", (ToolResult(None, {"topic": "b"}), ToolResult(None, {"topic": "a"}))),
            tool("ghost", "orphan"),
        ]
        # As loaded: minted ids, and links that say the results are swapped.
        minted = [make_tool_call(f"call_ts1x{k}", "generate_topic", "{}",
                                 extras={"id_minted": True, "provider_id": None})
                  for k in range(2)]
        messages[1] = assistant(*minted)
        info = SessionInfo("s", None, None, None, None, (), NOW, NOW, 4)
        stored = tuple(StoredMessage(p + 10, m, None, NOW) for p, m in enumerate(messages))
        return Transcript(info, stored, {(12, 0): (11, 1), (12, 1): (11, 0)})

    def test_links_decide_the_pairing_and_positions_are_the_stored_ones(self):
        repaired = repair(self.transcript())
        results = [r for m in repaired.messages for r in m.tool_results]
        assert [(r.call_id, r.content) for r in results] == [
            ("call_ts1x0", {"topic": "a"}), ("call_ts1x1", {"topic": "b"})]
        assert repaired.source_positions == (10, 11, 12, 12)
        assert ("dropped_orphan_result", 13) in [(c.kind, c.position) for c in repaired.changes]
        assert {c.kind for c in repaired.changes} == {
            "moved_result", "relinked_result", "dropped_orphan_result"}
        assert_valid_everywhere(repaired.messages)

    def test_gemini_does_not_get_minted_ids_on_the_wire(self):
        repaired = repair(self.transcript(), "gemini")
        body = render(repaired.messages, "gemini")
        calls = [p["functionCall"] for p in body["contents"][1]["parts"]]
        assert all("id" not in c for c in calls)
        assert validate("gemini", body) == []


def test_the_change_kinds_are_documented():
    import sys

    module = sys.modules["store.replay.repair"]

    for kind in CHANGE_KINDS:
        assert f"``{kind}``" in module.__doc__


def test_input_is_not_mutated_and_output_is_new():
    history = [user("go"), assistant(call("call_a")), tool("call_b")]
    before = list(history)
    repair(history, "anthropic")
    assert history == before


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="unknown repair target"):
        repair([], "openai")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dangling"):
        repair([], dangling="keep")  # type: ignore[arg-type]


# -- any crash history: repaired, it renders valid for every target ----------------------------

IDS = st.sampled_from(["call_0", "call_1", "", None, "functions.get_temperature:0", "x" * 41])
CALLS = st.builds(make_tool_call, IDS, st.sampled_from(["read_file", "bash"]),
                  st.sampled_from(["{}", '{"a": 1}', '{"a": ', "[1]", '{\n "b": "é"\n}']))
RESULTS = st.builds(ToolResult, IDS,
                    st.sampled_from(["ok", "", {"k": 1}, [{"type": "text", "text": "t"}], None]),
                    st.booleans(), st.sampled_from([None, "bash"]))
MESSAGES = st.one_of(
    st.builds(lambda t: Message("user", (TextPart(t),)), st.sampled_from(["hi", "", " "])),
    st.builds(lambda t, calls: Message("assistant", ((TextPart(t),) if t else ()) + tuple(calls)),
              st.sampled_from([None, "ok"]), st.lists(CALLS, max_size=3)),
    st.builds(lambda rs: Message("tool", tuple(rs)), st.lists(RESULTS, min_size=1, max_size=2)),
    st.builds(lambda rs, t: Message("user", tuple(rs) + ((TextPart(t),) if t else ())),
              st.lists(RESULTS, min_size=1, max_size=2), st.sampled_from([None, "more"])),
    st.just(Message("system", (TextPart("sys"),))),
    st.builds(lambda s: Message("assistant", (ThinkingPart("think", s),), "anthropic"),
              st.sampled_from([None, "sig"])),
)


@settings(max_examples=60)
@given(st.lists(MESSAGES, min_size=1, max_size=8), st.sampled_from(["synthesize", "drop"]))
def test_any_crash_history_repairs_to_a_valid_history_for_every_target(history, dangling):
    for target in TARGETS:
        once = repair(history, target, dangling=dangling)
        body = render(once.messages, target)
        turns = body.get("messages", body.get("contents", body.get("input")))
        if turns:
            assert validate(target, body) == [], (target, body)
        twice = repair(once.messages, target, dangling=dangling)
        assert (twice.changes, twice.messages) == ((), once.messages), target
        calls = [c for m in once.messages for c in m.tool_calls]
        results = [r for m in once.messages for r in m.tool_results]
        assert len(calls) == len(results)
        assert all(isinstance(c, ToolCall) for c in calls)
