"""Resume of a crashed session, on both backends: store a session with dangling, orphan,
duplicate and out-of-order results (and invalid arguments, a repeated id, an odd id, an
empty id), load it, repair it for every target and validate the render; repairing twice
equals repairing once, and repair changes no stored row."""

from __future__ import annotations

import pytest
from provider_rules import validate
from sqlalchemy import select

from store import InvalidToolCall, ToolCall
from store.db.schema.tables import messages, tool_calls, tool_results
from store.replay.render import render
from store.replay.repair import INTERRUPTED_TEXT, repair
from store.replay.targets import TARGETS


def chat_call(call_id, name, arguments):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


CRASHED = [
    {"role": "user", "content": "fix the build"},                                        # 0
    {"role": "tool", "tool_call_id": "call_zzz", "content": "stray"},                    # 1 orphan
    {"role": "assistant", "content": "Looking.", "tool_calls": [                        # 2
        chat_call("call_a", "run_shell_command", '{"command": "make"}'),
        chat_call("call_b", "read_file", '{"path": "Makefile"}'),                       # dangling
        chat_call("call_c", "read_file", '{\n  "path": "a.c"\n}'),
    ]},
    {"role": "tool", "tool_call_id": "call_c", "content": "int main"},                  # 3 early
    {"role": "tool", "tool_call_id": "call_a", "content": "error: x"},                  # 4
    {"role": "tool", "tool_call_id": "call_a", "content": "error again"},               # 5 dup
    {"role": "user", "content": "continue"},                                             # 6
    {"role": "assistant", "content": None, "tool_calls": [                              # 7
        chat_call("call_0", "edit_file", '{"path": "a.c", "diff": '),                   # invalid
    ]},
    {"role": "tool", "tool_call_id": "call_0", "content": "patched"},                   # 8
    {"role": "assistant", "content": None, "tool_calls": [                              # 9
        chat_call("call_0", "run_shell_command", '{"command": "make"}'),                # repeated
        chat_call("functions.get_temperature:0", "run_shell_command", "{}"),           # odd id
        chat_call("", "run_shell_command", '{"command": "ls"}'),                        # empty id
    ]},
]


def stored_rows(store, session_id):
    with store.engine.connect() as conn:
        return [
            [tuple(row) for row in conn.execute(
                select(table).where(table.c.session_id == session_id)
                .order_by(*table.primary_key.columns))]
            for table in (messages, tool_calls, tool_results)
        ]


@pytest.fixture
def crashed(store):
    store.append("crashed", CRASHED)
    return store.load("crashed")


def test_a_crashed_session_repairs_to_a_valid_history_for_every_target(store, crashed):
    before = stored_rows(store, "crashed")
    for target in TARGETS:
        for dangling in ("synthesize", "drop"):
            repaired = repair(crashed, target, dangling=dangling)
            assert validate(target, render(repaired.messages, target)) == [], (target, dangling)
            again = repair(repaired.messages, target, dangling=dangling)
            assert again.changes == () and again.messages == repaired.messages
    assert stored_rows(store, "crashed") == before
    assert store.load("crashed") == crashed


def test_the_report_names_every_change(crashed):
    repaired = repair(crashed, "anthropic")
    report = [(c.kind, c.position, c.call_id) for c in repaired.changes]
    minted = crashed.messages[9].message.tool_calls[2].id
    assert report == [
        ("dropped_orphan_result", 1, "call_zzz"),
        ("moved_result", 4, "call_a"),
        ("synthesized_result", 2, "call_b"),
        ("moved_result", 3, "call_c"),
        ("dropped_duplicate_result", 5, "call_a"),
        ("substituted_arguments", 7, "call_0"),
        ("remapped_id", 9, "call_0"),
        ("remapped_id", 9, "functions.get_temperature:0"),
        ("synthesized_result", 9, "call_0"),
        ("synthesized_result", 9, "functions.get_temperature:0"),
        ("synthesized_result", 9, minted),
    ]
    details = "\n".join(c.detail for c in repaired.changes)
    for needle in ("(bash)", "(read)", "(edit)", '{"path": "a.c", "diff": ', "position 9"):
        assert needle in details


def test_the_repaired_history_answers_every_call_right_after_its_message(crashed):
    repaired = repair(crashed, "bedrock")
    out = repaired.messages
    assert repaired.source_positions == (0, 2, 4, None, 3, 6, 7, 8, 9, None, None, None)
    assert [c.id for c in out[1].tool_calls] == ["call_a", "call_b", "call_c"]
    assert [(r.call_id, r.content) for m in out[2:5] for r in m.tool_results] == [
        ("call_a", "error: x"), ("call_b", INTERRUPTED_TEXT), ("call_c", "int main")]
    fixed = out[6].tool_calls[0]
    assert isinstance(crashed.messages[7].message.tool_calls[0], InvalidToolCall)
    assert isinstance(fixed, ToolCall) and fixed.input == {
        "_invalid_arguments": '{"path": "a.c", "diff": ', "_error": "invalid_json"}
    assert out[7].tool_results[0].call_id == "call_0"
    last = [c.id for c in out[8].tool_calls]
    assert last[0] != "call_0" and last[1].startswith("tooluse_")
    assert last[2] == crashed.messages[9].message.tool_calls[2].id  # minted by the store
    assert [m.tool_results[0].call_id for m in out[9:]] == last


def test_drop_mode_removes_dangling_calls_and_the_message_they_leave_empty(crashed):
    repaired = repair(crashed, "openai-chat", dangling="drop")
    dropped = [c.call_id for c in repaired.of_kind("dropped_dangling_call")]
    assert dropped[0] == "call_b" and dropped[1:3] == ["call_0", "functions.get_temperature:0"]
    assert len(dropped) == 4
    assert 9 not in repaired.source_positions  # message 9 had only dangling calls
    assert not repaired.of_kind("synthesized_result")
