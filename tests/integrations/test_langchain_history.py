"""``TranscriptChatMessageHistory`` with the real langchain-core, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from typing import Any

import pytest
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
)

import store
from store.integrations import MissingExtra
from store.integrations import langchain as integration
from store.integrations.langchain import TranscriptChatMessageHistory, to_langchain

MESSAGES: list[BaseMessage] = [
    SystemMessage("Be brief."),
    HumanMessage([{"type": "text", "text": "What is in this picture?"},
                  {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}],
                 id="human-1"),
    AIMessage(
        [{"type": "text", "text": "Let me look."},
         {"type": "tool_use", "id": "call_1", "name": "run_shell_command",
          "input": {"command": "ls"}}],
        tool_calls=[{"name": "run_shell_command",
                     "args": {"command": "ls", "n": 12345678901234567890}, "id": "call_1"},
                    {"name": "no_id", "args": {}, "id": None}],
        invalid_tool_calls=[{"name": "broken", "args": '{"path": ', "id": "call_2",
                             "error": "truncated", "type": "invalid_tool_call"}],
        usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        response_metadata={"model_name": "gpt-x", "finish_reason": "tool_calls"},
        id="run-1",
    ),
    ToolMessage("README.md\nsrc/", tool_call_id="call_1", artifact={"files": 2}),
    ToolMessage([{"type": "text", "text": "unparseable arguments"}], tool_call_id="call_2",
                status="error", name="broken"),
    FunctionMessage(name="legacy", content="42"),
    ChatMessage(role="critic", content="Too long."),
    AIMessage("Two files: README.md and src/."),
]


def as_json(messages: list[BaseMessage]) -> str:
    return json.dumps([message_to_dict(m) for m in messages], sort_keys=True)


def test_messages_round_trip_exactly(db, store_url):
    history = TranscriptChatMessageHistory("chat", db)
    assert isinstance(history, BaseChatMessageHistory)
    history.add_messages(MESSAGES[:3])
    history.add_message(MESSAGES[3])
    history.add_messages(MESSAGES[4:])
    assert history.messages == MESSAGES
    assert as_json(history.messages) == as_json(MESSAGES)
    other = TranscriptChatMessageHistory("chat", store_url)  # another store object
    try:
        assert as_json(other.messages) == as_json(MESSAGES)
    finally:
        other.close()


def test_tool_calls_and_results_are_rows(db):
    TranscriptChatMessageHistory("rows", db).add_messages(MESSAGES)
    transcript = db.load("rows")
    assert [m.message.role for m in transcript] == [
        "system", "user", "assistant", "tool", "tool", "tool", "user", "assistant"]
    calls = list(transcript.calls())
    assert [(c.call.name, c.call.is_valid) for c in calls] == [
        ("bash", True), ("no_id", True), ("broken", False)]  # aliased on load
    assert calls[0].call.raw_name == "run_shell_command"
    assert calls[0].call.input == {"command": "ls", "n": 12345678901234567890}
    assert calls[0].result is not None and calls[0].result.content == "README.md\nsrc/"
    assert calls[2].result is not None and calls[2].result.is_error
    assert calls[2].call.arguments_text == '{"path": '  # kept verbatim
    assert db.count_calls_by_tool() == {"bash": 1, "broken": 1, "no_id": 1}
    # The AIMessage's tool_use content block is kept as a block, not a second call row.
    assert db.count_calls("rows") == 3


@pytest.mark.parametrize("bad", ["hello", {"role": "user", "content": "hi"}, None, 42])
def test_a_list_with_something_else_than_a_message_raises_a_typed_error(db, bad):
    history = TranscriptChatMessageHistory("bad", db)
    history.add_messages(MESSAGES[:1])
    with pytest.raises(store.RecordError) as caught:
        history.add_messages([MESSAGES[1], bad])
    assert f"message 1 is a {type(bad).__name__}," in str(caught.value)
    with pytest.raises(store.RecordError, match="message 0 is a"):
        asyncio.run(history.aadd_messages([bad]))
    with pytest.raises(store.RecordError, match="got a str"):
        history.add_messages("hello")  # type: ignore[arg-type]
    assert history.messages == MESSAGES[:1]  # nothing of the refused lists was stored
    assert db.get_session("bad").message_count == 1


def test_messages_written_otherwise_are_mapped_from_their_rows(db):
    db.append("imported", [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "List files."},
        {"role": "assistant", "content": "Sure.", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "ls", "arguments": '{"path": "."}'}},
            {"id": "call_2", "type": "function",
             "function": {"name": "cat", "arguments": "{oops"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "README.md"},
        {"role": "tool", "tool_call_id": "call_2", "content": "bad", "is_error": True},
    ])
    got = TranscriptChatMessageHistory("imported", db).messages
    assert got[:2] == [SystemMessage("Be brief."), HumanMessage("List files.")]
    ai = got[2]
    assert isinstance(ai, AIMessage) and ai.content == "Sure."
    assert ai.tool_calls == [{"name": "ls", "args": {"path": "."}, "id": "call_1",
                              "type": "tool_call"}]
    assert [(c["name"], c["args"], c["id"]) for c in ai.invalid_tool_calls] == [
        ("cat", "{oops", "call_2")]
    assert got[3] == ToolMessage("README.md", tool_call_id="call_1")
    assert got[4] == ToolMessage("bad", tool_call_id="call_2", status="error")


def test_a_stored_round_trip_through_plain_messages_keeps_the_calls():
    plain = [store.Message(m.role, m.parts) for m in integration.from_langchain(MESSAGES)]
    got = to_langchain(plain)
    ai = next(m for m in got if isinstance(m, AIMessage) and m.tool_calls)
    assert [c["args"] for c in ai.tool_calls] == [{"command": "ls", "n": 12345678901234567890}, {}]
    assert ai.invalid_tool_calls[0]["args"] == '{"path": '


def test_clear_and_the_async_methods_run_off_the_event_loop(db, monkeypatch):
    history = TranscriptChatMessageHistory("async", db)
    threads: set[int] = set()
    real = db.append

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.add(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(db, "append", spy)

    async def main() -> list[BaseMessage]:
        await history.aadd_messages(MESSAGES[:2])
        got = await history.aget_messages()
        await history.aclear()
        return got

    assert asyncio.run(main()) == MESSAGES[:2]
    assert threads and threading.get_ident() not in threads
    assert history.messages == []
    with pytest.raises(store.SessionNotFound):
        db.get_session("async")
    history.clear()  # clearing nothing is fine


def test_without_the_extra_the_error_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    integration._history_class.cache_clear()
    try:
        with pytest.raises(MissingExtra, match=r"pip install 'transcript-store\[langchain\]'"):
            integration.TranscriptChatMessageHistory  # noqa: B018
        with pytest.raises(MissingExtra, match=r"transcript-store\[langchain\]"):
            integration.to_langchain([])
    finally:
        integration._history_class.cache_clear()


BYTES_MESSAGES: list[BaseMessage] = [
    HumanMessage([{"type": "text", "text": "What is in this picture?"},
                  {"type": "image", "base64": None, "data": b"\x89PNG\r\n\x1a\n\x00\xff",
                   "mime_type": "image/png"}]),
    AIMessage([{"type": "reasoning", "reasoning": "", "extras": {"redacted": b"\x00\x01\x02"}},
               {"type": "text", "text": "A cat."}]),
    HumanMessage([{"type": "file", "data": bytearray(b"%PDF-1.7")},
                  # a genuine dict that looks like the marker stays a dict
                  {"type": "x", "$transcript_store.bytes": "AAEC"},
                  {"$transcript_store.bytes": "AAEC"}]),
]


def test_raw_bytes_in_content_blocks_round_trip_as_bytes(db, store_url):
    history = TranscriptChatMessageHistory("bytes", db)
    history.add_messages(BYTES_MESSAGES)
    got = history.messages
    assert got[0].content[1]["data"] == b"\x89PNG\r\n\x1a\n\x00\xff"
    assert isinstance(got[0].content[1]["data"], bytes)
    assert got[1].content[0]["extras"]["redacted"] == b"\x00\x01\x02"
    assert got[2].content[0]["data"] == b"%PDF-1.7"
    assert got[2].content[1] == {"type": "x", "$transcript_store.bytes": "AAEC"}
    assert got[2].content[2] == {"$transcript_store.bytes": "AAEC"}
    assert got[:2] == BYTES_MESSAGES[:2]
    # stored as JSON text (base64 under the marker), so the rows and other readers see it
    other = TranscriptChatMessageHistory("bytes", store_url)
    try:
        assert other.messages == got
    finally:
        other.close()
