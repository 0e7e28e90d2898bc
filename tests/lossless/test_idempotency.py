"""Issue 12, item 1: a provider message id is not an idempotency key (both backends).

An append stores nothing for a message only when its client key is stored, or (no keys given)
a message stored under its provider id is identical to it.
"""

from __future__ import annotations

import copy

from store import TranscriptStore


def claude_line(block: dict, uuid: str) -> dict:
    """One Claude Code transcript line: one content block of assistant message msg_01."""
    return {"type": "assistant", "uuid": uuid, "sessionId": "cc",
            "timestamp": "2026-11-30T10:00:00Z",
            "message": {"id": "msg_01", "type": "message", "role": "assistant",
                        "model": "claude", "content": [block]}}


def anthropic(block: dict) -> dict:
    """An Anthropic assistant message holding one block, with the provider id msg_01."""
    return {"id": "msg_01", "type": "message", "role": "assistant", "content": [block]}


A = anthropic({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}})
B = anthropic({"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"file_path": "/a"}})


def call_ids(store: TranscriptStore, sid: str) -> list[str | None]:
    return [c.id for m in store.load(sid).messages for c in m.message.tool_calls]


def test_records_sharing_a_provider_id_are_all_stored(store: TranscriptStore) -> None:
    store.append("s", [A])
    second = store.append("s", [B])
    assert second.skipped_keys == () and len(second.stored) == 1
    assert call_ids(store, "s") == ["toolu_1", "toolu_2"]


def test_claude_code_lines_appended_one_by_one_come_back_whole(store: TranscriptStore) -> None:
    lines = [claude_line({"type": "text", "text": "looking"}, "u0"),
             claude_line(A["content"][0], "u1"), claude_line(B["content"][0], "u2")]
    for line in lines:
        store.append("s", [line])
    for line in lines:  # appended again: identical, nothing stored
        assert store.append("s", [line]).stored == ()
    loaded = store.load("s")
    assert len(loaded) == 3
    assert call_ids(store, "s") == ["toolu_1", "toolu_2"]
    assert {m.message.metadata["provider_message_id"] for m in loaded.messages} == {"msg_01"}


def test_an_identical_record_is_a_no_op(store: TranscriptStore) -> None:
    store.append("s", [A, B])
    again = store.append("s", [copy.deepcopy(A), copy.deepcopy(B)])
    assert again.stored == () and again.skipped_keys == ("msg_01", "msg_01")
    assert len(store.load("s")) == 2


def test_identical_records_in_one_batch_store_once(store: TranscriptStore) -> None:
    result = store.append("s", [A, copy.deepcopy(A), B])
    assert len(result.stored) == 2 and result.skipped_keys == ("msg_01",)


def test_a_second_block_appended_again_is_a_no_op(store: TranscriptStore) -> None:
    store.append("s", [A])
    store.append("s", [B])
    assert store.append("s", [B]).stored == ()
    assert store.append("s", [A]).stored == ()
    assert call_ids(store, "s") == ["toolu_1", "toolu_2"]


def test_a_changed_record_under_the_same_id_is_stored(store: TranscriptStore) -> None:
    changed = copy.deepcopy(A)
    changed["content"][0]["input"] = {"command": "ls -la"}
    store.append("s", [A])
    assert len(store.append("s", [changed]).stored) == 1
    calls = [c for m in store.load("s").messages for c in m.message.tool_calls]
    assert [c.input for c in calls] == [{"command": "ls"}, {"command": "ls -la"}]


def test_a_client_key_alone_decides(store: TranscriptStore) -> None:
    store.append("s", [A], keys=["k"])
    assert store.append("s", [B], keys=["k"]).skipped_keys == ("k",)
    assert len(store.append("s", [A], keys=["other"]).stored) == 1
    assert call_ids(store, "s") == ["toolu_1", "toolu_1"]


def test_records_without_an_id_are_never_deduplicated(store: TranscriptStore) -> None:
    msg = {"role": "user", "content": "ok"}
    store.append("s", [msg])
    store.append("s", [msg])
    assert len(store.load("s")) == 2
