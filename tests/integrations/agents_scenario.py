"""A scripted OpenAI Agents SDK conversation (no network), run in-process or as a script.

Three turns with tool calls, a reasoning item, parallel calls and a failing tool; each turn
has its own scripted model steps, so a later turn can run in another process against the same
session (``python tests/integrations/agents_scenario.py KIND WHERE SESSION_ID TURN...`` prints
the result as JSON). ``KIND`` is ``transcript`` (``WHERE`` a store URL) or ``sqlite`` (the SDK's
own ``SQLiteSession``, ``WHERE`` a file path).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from openai.types.responses import ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary

from store.integrations.openai_agents import TranscriptStoreSession

set_tracing_disabled(True)

QUESTIONS = {
    1: "What is the weather in Paris and in Oslo?",
    2: "Add 2 and 3, then divide 1 by 0.",
    3: "What did I ask first?",
}


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@function_tool
def add(a: int, b: int) -> int:
    """a + b."""
    return a + b


@function_tool
def divide(a: int, b: int) -> float:
    """a / b."""
    return a / b


def steps(turn: int) -> list[Any]:
    """The model's scripted answers in one turn."""
    if turn == 1:
        return [
            [ResponseReasoningItem(id="rs_1", type="reasoning", encrypted_content="ZW5j",
                                   summary=[Summary(text="Two cities: two calls.",
                                                    type="summary_text")]),
             function_call("get_weather", {"city": "Paris"}, call_id="call_1"),
             function_call("get_weather", '{"city": "Oslo"}', call_id="call_2")],
            [assistant_message("Sunny in Paris and in Oslo.", item_id="msg_1")],
        ]
    if turn == 2:
        return [
            [function_call("add", {"a": 2, "b": 3}, call_id="call_3"),
             function_call("divide", {"a": 1, "b": 0}, call_id="call_4")],
            [assistant_message("2 + 3 = 5; 1 / 0 failed.", item_id="msg_2")],
        ]
    return [[assistant_message("You asked about the weather.", item_id="msg_3")]]


def make_session(kind: str, where: str, session_id: str) -> Any:
    if kind == "transcript":
        return TranscriptStoreSession(session_id, where)
    if kind == "sqlite":
        return SQLiteSession(session_id, where)
    raise ValueError(kind)


async def run_turns(session: Any, turns: list[int]) -> dict[str, Any]:
    """Run ``turns`` through ``session``: final outputs, every model input, the items after."""
    outputs: list[Any] = []
    inputs: list[Any] = []
    for turn in turns:
        model = ScriptedModel(steps(turn))
        agent = Agent(name="helper", instructions="Be brief.", model=model,
                      tools=[get_weather, add, divide])
        result = await Runner.run(agent, QUESTIONS[turn], session=session)
        model.assert_complete()
        outputs.append(result.final_output)
        inputs.extend(call.input for call in model.calls)
    return {"outputs": outputs, "inputs": inputs, "items": await session.get_items()}


def main(argv: list[str]) -> None:
    kind, where, session_id, *turns = argv
    session = make_session(kind, where, session_id)
    try:
        result = asyncio.run(run_turns(session, [int(t) for t in turns]))
    finally:
        session.close()
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
