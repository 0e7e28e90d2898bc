"""pydantic-ai message lists to and from the store, with the real pydantic-ai-slim and its test
models (no network), on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import sys
import warnings
from typing import Any

import pytest
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

import store
from store.integrations import MissingExtra
from store.integrations.pydantic_ai import (
    aappend_model_messages,
    aload_message_history,
    append_model_messages,
    from_model_messages,
    load_message_history,
    to_model_messages,
)


def dumped(messages: list[ModelMessage]) -> bytes:
    return ModelMessagesTypeAdapter.dump_json(messages)


def run(agent: Agent[None, str], question: str,
        history: list[ModelMessage] | None = None) -> Any:
    """``agent.run`` in ``asyncio.run`` (``run_sync`` leaves its event loop open)."""
    return asyncio.run(agent.run(question, message_history=history))


def weather_agent() -> Agent[None, str]:
    agent = Agent(TestModel(), system_prompt="Be brief.")
    calls = {"n": 0}

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        calls["n"] += 1
        if calls["n"] == 1:
            raise ModelRetry("Name a real city.")
        return f"sunny in {city}"

    return agent


def test_an_agent_runs_on_history_loaded_from_the_store(db, store_url):
    agent = weather_agent()
    written: list[ModelMessage] = []
    for question in ("Weather?", "And tomorrow?", "Thanks."):
        history = load_message_history(db, "chat")
        assert dumped(history) == dumped(written)
        result = run(agent, question, history)
        assert dumped(result.all_messages()[:len(history)]) == dumped(history)
        append_model_messages(db, "chat", result.new_messages())
        written.extend(result.new_messages())
    with store.TranscriptStore.open(store_url) as other:  # as another process would
        assert dumped(load_message_history(other, "chat")) == dumped(written)
    calls = list(db.load("chat").calls())
    assert db.count_calls_by_tool() == {"get_weather": len(calls)}
    assert [c.result.is_error for c in calls if c.result] == [True] + [False] * (len(calls) - 1)
    assert db.get_session("chat").tags == ("pydantic-ai",)


def retry_prompt(**fields: Any) -> RetryPromptPart:
    with warnings.catch_warnings():  # deprecated in pydantic-ai 2; still read and written
        warnings.simplefilter("ignore")
        return RetryPromptPart(**fields)


def handmade() -> list[ModelMessage]:
    return [
        ModelRequest(parts=[SystemPromptPart("Be brief."),
                            UserPromptPart(["Look:", ImageUrl(url="https://example.com/a.png")])],
                     instructions="Answer in French."),
        ModelResponse(parts=[
            ThinkingPart("The user wants files.", signature="c2ln"),
            TextPart("Je regarde."),
            ToolCallPart("run_shell_command", '{"command": "ls"}', tool_call_id="call_1"),
            ToolCallPart("read", {"path": "README.md", "n": 12345678901234567890},
                         tool_call_id="call_2"),
            ToolCallPart("broken", '{"path": ', tool_call_id="call_3"),
        ], model_name="test-model"),
        ModelRequest(parts=[
            ToolReturnPart("run_shell_command", "README.md", tool_call_id="call_1"),
            ToolReturnPart("read", {"lines": 3}, tool_call_id="call_2", outcome="failed"),
            retry_prompt(content="Fix the JSON.", tool_name="broken", tool_call_id="call_3"),
            retry_prompt(content=[{"type": "missing", "loc": ["x"], "msg": "Field required",
                                   "input": {}}]),
            UserPromptPart("Go on."),
        ]),
        ModelResponse(parts=[]),
    ]


def test_every_part_round_trips_as_pydantic_ais_own_json(db):
    messages = handmade()
    own = ModelMessagesTypeAdapter.validate_json(dumped(messages))  # pydantic-ai's round trip
    append_model_messages(db, "parts", messages)
    assert dumped(load_message_history(db, "parts")) == dumped(own)
    transcript = db.load("parts")
    assert [m.message.role for m in transcript] == [
        "system", "user", "assistant", "tool", "user", "assistant"]
    calls = list(transcript.calls())
    assert [(c.call.name, c.call.is_valid) for c in calls] == [
        ("bash", True), ("read", True), ("broken", False)]
    assert calls[1].call.input == {"path": "README.md", "n": 12345678901234567890}
    assert [(c.result.is_error, c.result.content) for c in calls if c.result] == [
        (False, "README.md"), (True, {"lines": 3}), (True, "Fix the JSON.")]
    assert transcript.messages[4].message.text.startswith("[{")  # the retry without a tool


def test_a_window_of_the_last_turns_loads_whole_messages(db):
    agent = weather_agent()
    first = run(agent, "Weather?")
    append_model_messages(db, "window", first.new_messages())
    second = run(agent, "Again?", first.all_messages())
    append_model_messages(db, "window", second.new_messages())
    assert dumped(load_message_history(db, "window", last_turns=1)) == dumped(
        second.new_messages())


def test_messages_written_otherwise_are_mapped_from_their_rows(db):
    db.append("imported", [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "List files."},
        {"role": "assistant", "content": "Sure.", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "ls", "arguments": '{"path": "."}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "README.md", "is_error": True},
        {"role": "assistant", "content": "Done."},
    ])
    history = load_message_history(db, "imported")
    assert [type(m).__name__ for m in history] == [
        "ModelRequest", "ModelRequest", "ModelResponse", "ModelRequest", "ModelResponse"]
    assert isinstance(history[0].parts[0], SystemPromptPart)
    call = history[2].parts[1]
    assert isinstance(call, ToolCallPart)
    assert (call.tool_name, call.args_as_dict(), call.tool_call_id) == ("ls", {"path": "."},
                                                                        "call_1")
    ret = history[3].parts[0]
    assert isinstance(ret, ToolReturnPart)
    assert (ret.tool_name, ret.content, ret.outcome) == ("ls", "README.md", "failed")

    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart("ok")])

    result = run(Agent(FunctionModel(model)), "Next?", history)
    assert result.output == "ok"
    sent = [part for message in seen[0] for part in message.parts]
    assert [p.part_kind for p in sent] == [
        "system-prompt", "user-prompt", "text", "tool-call", "tool-return", "text", "user-prompt"]


def test_plain_messages_convert_both_ways():
    plain = [store.Message(m.role, m.parts) for m in from_model_messages(handmade())]
    back = to_model_messages(plain)
    response = back[2]
    assert isinstance(response, ModelResponse)
    assert [p.part_kind for p in response.parts] == [
        "thinking", "text", "tool-call", "tool-call", "tool-call"]


def test_the_async_helpers(db):
    async def main() -> list[ModelMessage]:
        await aappend_model_messages(db, "async", handmade()[:2])
        return await aload_message_history(db, "async")

    assert len(asyncio.run(main())) == 2


def test_without_the_extra_the_error_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pydantic_ai", None)
    with pytest.raises(MissingExtra, match=r"pip install 'transcript-store\[pydantic-ai\]'"):
        to_model_messages([])
