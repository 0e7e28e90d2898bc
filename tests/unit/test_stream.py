"""Stream assembly over small hand-written event streams, for every provider."""

from __future__ import annotations

from typing import Any

import pytest

from store.core.errors import StreamError
from store.core.model import InvalidToolCall, ToolCall
from store.stream.assembler import PROVIDERS, StreamAssembler, assemble, detect_provider

# ---------------------------------------------------------------------------------------------
# Event builders. Each adapter turns a provider-neutral script into that provider's events:
# ("start", k), ("frag", k, text), ("stop", k); ``end()`` closes the response.


class Chat:
    provider = "openai_chat"
    delta_type = "chat.completion.chunk"
    parallel = True

    def key(self, k: int) -> str:
        return repr((0, k))

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"object": "chat.completion.chunk", "choices": [choice], "obfuscation": "xyz"}

    def start(self, k: int) -> dict[str, Any]:
        call = {"index": k, "id": f"call_{k}", "type": "function"}
        call["function"] = {"name": f"tool_{k}", "arguments": ""}
        return self.chunk({"tool_calls": [call]})

    def frag(self, k: int, text: str) -> dict[str, Any]:
        return self.chunk({"tool_calls": [{"index": k, "function": {"arguments": text}}]})

    def stop(self, k: int) -> None:
        return None

    def end(self) -> list[Any]:
        usage = {"choices": [], "usage": {"total_tokens": 3}}
        return [self.chunk({}, "tool_calls"), usage, "[DONE]"]


class Legacy(Chat):
    parallel = False

    def key(self, k: int) -> str:
        return "choice 0 function_call"

    def start(self, k: int) -> dict[str, Any]:
        call = {"name": f"tool_{k}", "arguments": ""}
        return self.chunk({"role": "assistant", "function_call": call})

    def frag(self, k: int, text: str) -> dict[str, Any]:
        return self.chunk({"function_call": {"arguments": text}})

    def end(self) -> list[Any]:
        return [self.chunk({}, "function_call"), "[DONE]"]


class Responses:
    provider = "openai_responses"
    delta_type = "response.function_call_arguments.delta"
    parallel = True

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}

    def key(self, k: int) -> str:
        return repr(f"fc_{k}")

    def item(self, k: int, status: str) -> dict[str, Any]:
        return {
            "type": "function_call",
            "id": f"fc_{k}",
            "call_id": f"call_{k}",
            "name": f"tool_{k}",
            "arguments": self.texts.get(k, ""),
            "status": status,
        }

    def start(self, k: int) -> dict[str, Any]:
        return {
            "type": "response.output_item.added",
            "output_index": k,
            "item": self.item(k, "in_progress"),
        }

    def frag(self, k: int, text: str) -> dict[str, Any]:
        self.texts[k] = self.texts.get(k, "") + text
        return {"type": self.delta_type, "item_id": f"fc_{k}", "output_index": k, "delta": text}

    def stop(self, k: int) -> list[dict[str, Any]]:
        done = {
            "type": "response.function_call_arguments.done",
            "item_id": f"fc_{k}",
            "output_index": k,
            "arguments": self.texts.get(k, ""),
        }
        item_done = {
            "type": "response.output_item.done",
            "output_index": k,
            "item": self.item(k, "completed"),
        }
        return [done, item_done]

    def end(self) -> list[Any]:
        return [{"type": "response.completed", "response": {"output": []}}]


class Anthropic:
    provider = "anthropic"
    delta_type = "content_block_delta"
    parallel = True

    def key(self, k: int) -> str:
        return repr(k)

    def start(self, k: int) -> dict[str, Any]:
        block = {"type": "tool_use", "id": f"call_{k}", "name": f"tool_{k}", "input": {}}
        return {"type": "content_block_start", "index": k, "content_block": block}

    def frag(self, k: int, text: str) -> dict[str, Any]:
        delta = {"type": "input_json_delta", "partial_json": text}
        return {"type": "content_block_delta", "index": k, "delta": delta}

    def stop(self, k: int) -> dict[str, Any]:
        return {"type": "content_block_stop", "index": k}

    def end(self) -> list[Any]:
        return [
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
            {"type": "message_stop"},
        ]


class Bedrock:
    provider = "bedrock"
    delta_type = "contentBlockDelta"
    parallel = True

    def key(self, k: int) -> str:
        return repr(k)

    def start(self, k: int) -> dict[str, Any]:
        tool_use = {"toolUseId": f"call_{k}", "name": f"tool_{k}"}
        return {
            "contentBlockStart": {
                "contentBlockIndex": k,
                "start": {"toolUse": tool_use},
                "p": "abcdef",
            }
        }

    def frag(self, k: int, text: str) -> dict[str, Any]:
        return {
            "contentBlockDelta": {
                "contentBlockIndex": k,
                "p": "abc",
                "delta": {"toolUse": {"input": text}},
            }
        }

    def stop(self, k: int) -> dict[str, Any]:
        return {"contentBlockStop": {"contentBlockIndex": k, "p": "ab"}}

    def end(self) -> list[Any]:
        return [
            {"messageStop": {"stopReason": "tool_use", "p": "a"}},
            {"metadata": {"usage": {"totalTokens": 3}, "p": "abcd"}},
        ]


class Cohere:
    provider = "cohere"
    delta_type = "tool-call-delta"
    parallel = True

    def key(self, k: int) -> str:
        return repr(k)

    def message(self, tool_call: dict[str, Any]) -> dict[str, Any]:
        return {"message": {"tool_calls": tool_call}}

    def start(self, k: int) -> dict[str, Any]:
        call = {
            "id": f"call_{k}",
            "type": "function",
            "function": {"name": f"tool_{k}", "arguments": ""},
        }
        return {"type": "tool-call-start", "index": k, "delta": self.message(call)}

    def frag(self, k: int, text: str) -> dict[str, Any]:
        call = {"function": {"arguments": text}}
        return {"type": "tool-call-delta", "index": k, "delta": self.message(call)}

    def stop(self, k: int) -> dict[str, Any]:
        return {"type": "tool-call-end", "index": k}

    def end(self) -> list[Any]:
        return [{"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}}, "[DONE]"]


ADAPTERS: list[type[Any]] = [Chat, Legacy, Responses, Anthropic, Bedrock, Cohere]
ADAPTER_IDS = ["openai_chat", "openai_legacy", "openai_responses", "anthropic", "bedrock", "cohere"]
PARALLEL = [a for a in ADAPTERS if a.parallel]
PARALLEL_IDS = [i for a, i in zip(ADAPTERS, ADAPTER_IDS, strict=True) if a.parallel]


def build(adapter: Any, script: list[tuple[Any, ...]], *, end: bool = True) -> list[Any]:
    """The events of a script: ("start", k), ("frag", k, text), ("stop", k)."""
    events: list[Any] = []
    for step in script:
        made = getattr(adapter, step[0])(*step[1:])
        if made is None:
            continue
        events.extend(made if isinstance(made, list) else [made])
    if end:
        events.extend(adapter.end())
    return events


def one_call(fragments: list[str], k: int = 0) -> list[tuple[Any, ...]]:
    return [("start", k), *(("frag", k, f) for f in fragments), ("stop", k)]


# Split mid key, mid number, mid "\u00e9" escape and between the halves of a surrogate pair.
SPLIT = ['{"ci', 'ty": "Caf', "\\u00", "e9 \\ud83d", '\\ude00 Zürich", "n": 1', "2}"]
SPLIT_INPUT = {"city": "Café 😀 Zürich", "n": 12}
TRUNCATED = ['{\n  "subject": "Invitation', " to att"]


# ---------------------------------------------------------------------------------------------


class TestFragmentedArguments:
    @pytest.mark.parametrize("adapter", ADAPTERS, ids=ADAPTER_IDS)
    def test_fragments_split_mid_token_and_mid_escape_join_before_parsing(self, adapter):
        calls = assemble(build(adapter(), one_call(SPLIT)), adapter.provider)
        assert len(calls) == 1
        call = calls[0]
        assert type(call) is ToolCall
        assert call.input == SPLIT_INPUT
        assert call.arguments_text == "".join(SPLIT)
        assert call.name == "tool_0"
        assert call.source == f"{adapter.provider}_stream"

    @pytest.mark.parametrize("adapter", ADAPTERS, ids=ADAPTER_IDS)
    def test_the_call_id_is_the_provider_id_and_legacy_calls_have_none(self, adapter):
        (call,) = assemble(build(adapter(), one_call(["{}"])), adapter.provider)
        assert call.id == (None if adapter is Legacy else "call_0")


class TestParallelCalls:
    @pytest.mark.parametrize("adapter", PARALLEL, ids=PARALLEL_IDS)
    def test_interleaved_fragments_of_two_calls_are_kept_apart_by_key(self, adapter):
        script = [
            ("start", 0),
            ("frag", 0, '{"a": '),
            ("start", 1),
            ("frag", 1, '{"b"'),
            ("frag", 0, '"x"}'),
            ("frag", 1, ': "y"}'),
            ("stop", 0),
            ("stop", 1),
        ]
        calls = assemble(build(adapter(), script), adapter.provider)
        assert [(c.id, c.name) for c in calls] == [("call_0", "tool_0"), ("call_1", "tool_1")]
        assert [c.input for c in calls if type(c) is ToolCall] == [{"a": "x"}, {"b": "y"}]

    def test_openai_chat_keys_by_choice_index_as_well_as_tool_index(self):
        def chunk(choice: int, call: Any, finish: str | None = None) -> dict[str, Any]:
            delta = {"tool_calls": [call]} if call else {}
            return {"choices": [{"index": choice, "delta": delta, "finish_reason": finish}]}

        events = [
            chunk(0, {"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"x":'}}),
            chunk(1, {"index": 0, "id": "b", "function": {"name": "g", "arguments": '{"y":'}}),
            chunk(1, {"index": 0, "function": {"arguments": "2}"}}),
            chunk(0, {"index": 0, "function": {"arguments": "1}"}}),
            chunk(1, None, "tool_calls"),
            chunk(0, None, "tool_calls"),
        ]
        calls = assemble(events, "openai_chat")
        assert [(c.id, c.input) for c in calls if type(c) is ToolCall] == [
            ("b", {"y": 2}),
            ("a", {"x": 1}),
        ]
        assert dict(calls[0].extras) == {"index": 0, "choice_index": 1}

    def test_openai_chat_completes_every_call_of_a_choice_in_index_order(self):
        adapter = Chat()
        events = build(adapter, [("start", 1), ("frag", 1, "{}"), ("start", 0), ("frag", 0, "{}")])
        assert [c.extras["index"] for c in assemble(events)] == [0, 1]


class TestZeroArgumentCalls:
    @pytest.mark.parametrize("adapter", ADAPTERS, ids=ADAPTER_IDS)
    def test_only_empty_fragments_give_an_empty_input(self, adapter):
        (call,) = assemble(build(adapter(), one_call(["", ""])), adapter.provider)
        assert type(call) is ToolCall
        assert call.input == {}
        assert call.arguments_text == "{}"

    @pytest.mark.parametrize("adapter", ADAPTERS, ids=ADAPTER_IDS)
    def test_no_fragment_at_all_gives_an_empty_input(self, adapter):
        (call,) = assemble(build(adapter(), one_call([])), adapter.provider)
        assert type(call) is ToolCall and call.input == {}


class TestTruncatedArguments:
    @pytest.mark.parametrize("adapter", ADAPTERS, ids=ADAPTER_IDS)
    def test_truncated_arguments_give_an_invalid_call_that_keeps_the_raw_text(self, adapter):
        (call,) = assemble(build(adapter(), one_call(TRUNCATED)), adapter.provider)
        assert type(call) is InvalidToolCall
        assert call.error_kind == "invalid_json"
        assert call.arguments_text == "".join(TRUNCATED)
        assert call.name == "tool_0"

    @pytest.mark.parametrize("adapter", ADAPTERS, ids=ADAPTER_IDS)
    def test_a_non_object_json_value_is_invalid_not_empty(self, adapter):
        (call,) = assemble(build(adapter(), one_call(["[1,", " 2]"])), adapter.provider)
        assert type(call) is InvalidToolCall
        assert (call.error_kind, call.arguments_text) == ("non_object_json", "[1, 2]")


class TestFragmentForNoOpenCall:
    @pytest.mark.parametrize("adapter", ADAPTERS, ids=ADAPTER_IDS)
    def test_a_fragment_before_any_start_raises_naming_provider_event_and_key(self, adapter):
        a = adapter()
        assembler = StreamAssembler(adapter.provider)
        with pytest.raises(StreamError) as caught:
            assembler.feed(a.frag(5, '{"x": 1}'))
        message = str(caught.value)
        assert adapter.provider in message
        assert adapter.delta_type in message
        assert a.key(5) in message
        assert "no open call" in message

    @pytest.mark.parametrize("adapter", PARALLEL, ids=PARALLEL_IDS)
    def test_a_fragment_after_its_call_completed_raises(self, adapter):
        a = adapter()
        events = build(a, one_call(["{}"]), end=adapter is Chat)
        assembler = StreamAssembler(adapter.provider)
        for event in events:
            assembler.feed(event)
        with pytest.raises(StreamError, match="no open call"):
            assembler.feed(a.frag(0, "{}"))

    def test_a_legacy_empty_function_call_object_is_not_a_fragment(self):
        chunk = Chat().chunk({"function_call": {"name": "", "arguments": ""}}, "stop")
        assert assemble([chunk], "openai_chat") == []


MALFORMED = [
    ("openai_chat", {"choices": [{"index": 0, "delta": "oops"}]}, "'delta' is not an object"),
    (
        "openai_chat",
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {}}]}}]},
        "no integer 'index'",
    ),
    ("openai_chat", {"choices": "x"}, "'choices' is not an array"),
    (
        "openai_responses",
        {"type": "response.function_call_arguments.delta", "delta": "{"},
        "neither 'item_id' nor 'output_index'",
    ),
    ("openai_responses", {"item_id": "fc_1"}, "no string 'type'"),
    (
        "anthropic",
        {"type": "content_block_delta", "index": 0, "delta": ["x"]},
        "'delta' is not an object",
    ),
    (
        "anthropic",
        {"type": "content_block_start", "index": "0", "content_block": {}},
        "'index' is not an integer",
    ),
    (
        "anthropic",
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "input": {}},
        },
        "without a name",
    ),
    (
        "bedrock",
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": None}},
        "'delta' is not an object",
    ),
    (
        "cohere",
        {
            "type": "tool-call-start",
            "index": 0,
            "delta": {"message": {"tool_calls": [{"id": "x"}]}},
        },
        "tool_calls is not an object",
    ),
    ("cohere", {"type": "tool-call-end", "index": 3}, "end for no open call"),
    (
        "gemini",
        {"candidates": [{"content": {"parts": [{"functionCall": "f"}]}}]},
        "'functionCall' is not an object",
    ),
    (
        "gemini",
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {"functionCall": {"name": "f", "partialArgs": [], "willContinue": True}}
                        ]
                    }
                }
            ]
        },
        "not supported",
    ),
]


class TestMalformedEvents:
    @pytest.mark.parametrize(
        ("provider", "event", "message"), MALFORMED, ids=[f"{p}-{m}" for p, _, m in MALFORMED]
    )
    def test_a_malformed_event_raises_a_stream_error(self, provider, event, message):
        with pytest.raises(StreamError, match=message) as caught:
            StreamAssembler(provider).feed(event)
        assert str(caught.value).startswith(f"{provider} stream: ")

    def test_a_fragment_that_is_not_text_raises(self):
        a = Anthropic()
        assembler = StreamAssembler("anthropic")
        assembler.feed(a.start(0))
        bad = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": {"x": 1}},
        }
        with pytest.raises(StreamError, match="'partial_json' is not a string"):
            assembler.feed(bad)

    def test_a_second_call_at_an_open_key_raises(self):
        a = Bedrock()
        assembler = StreamAssembler("bedrock")
        assembler.feed(a.start(0))
        with pytest.raises(StreamError, match="already open"):
            assembler.feed(a.start(0))

    def test_text_that_is_not_json_raises(self):
        with pytest.raises(StreamError, match="not JSON"):
            StreamAssembler("anthropic").feed("data: {")

    def test_an_event_that_is_neither_object_nor_text_raises(self):
        with pytest.raises(StreamError, match="must be an object or text"):
            StreamAssembler("gemini").feed([{"candidates": []}])  # type: ignore[arg-type]

    def test_an_unknown_provider_is_refused(self):
        with pytest.raises(ValueError, match="unknown stream provider"):
            StreamAssembler("mistral")


class TestAnthropicServerToolUse:
    def test_server_tool_use_blocks_are_not_client_calls_and_their_deltas_do_not_raise(self):
        a = Anthropic()
        server = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
        events: list[Any] = [
            {"type": "message_start", "message": {"content": []}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Let me look."},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "content_block_start", "index": 1, "content_block": server},
            {"type": "ping"},
            a.frag(1, '{"query": "x"}'),
            a.stop(1),
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1"},
            },
            a.stop(2),
            *build(a, one_call(['{"q":', ' "y"}'], k=3)),
        ]
        calls = assemble(events)
        assert [(c.id, c.name) for c in calls] == [("call_3", "tool_3")]

    def test_the_caller_is_kept_in_extras(self):
        block = {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "f",
            "input": {},
            "caller": {"type": "direct"},
        }
        events = [
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_stop", "index": 0},
        ]
        (call,) = assemble(events, "anthropic")
        assert dict(call.extras) == {"caller": {"type": "direct"}}

    def test_a_start_input_is_used_only_when_no_delta_arrived(self):
        block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}
        start = {"type": "content_block_start", "index": 0, "content_block": block}
        stop = {"type": "content_block_stop", "index": 0}
        assert assemble([start, stop])[0].input == {"a": 1}  # type: ignore[union-attr]
        delta = Anthropic().frag(0, '{"b": 2}')
        assert assemble([start, delta, stop])[0].input == {"b": 2}  # type: ignore[union-attr]


class TestResponses:
    def test_the_done_string_is_preferred_over_the_joined_deltas(self):
        r = Responses()
        events = [
            r.start(0),
            r.frag(0, '{"a":'),
            r.frag(0, " 1}"),
            {
                "type": "response.function_call_arguments.done",
                "item_id": "fc_0",
                "output_index": 0,
                "arguments": '{"a": 2}',
            },
        ]
        (call,) = assemble(events, "openai_responses")
        assert call.input == {"a": 2}  # type: ignore[union-attr]
        assert call.arguments_text == '{"a": 2}'

    def test_the_call_completes_at_the_arguments_done_event_and_not_again_at_item_done(self):
        r = Responses()
        assembler = StreamAssembler("openai_responses")
        assembler.feed(r.start(0))
        assembler.feed(r.frag(0, "{}"))
        arguments_done, item_done = r.stop(0)
        assert [c.id for c in assembler.feed(arguments_done)] == ["call_0"]
        assert assembler.feed(item_done) == []
        assert len(assembler.calls) == 1

    def test_output_item_done_alone_completes_the_call_with_its_arguments(self):
        r = Responses()
        events = [r.start(0), r.frag(0, '{"x": 9')]
        r.texts[0] = '{"x": 1}'
        events.append(r.stop(0)[1])
        (call,) = assemble(events, "openai_responses")
        assert call.input == {"x": 1}  # type: ignore[union-attr]

    def test_call_id_is_the_id_and_the_item_id_goes_into_extras(self):
        (call,) = assemble(build(Responses(), one_call(["{}"])), "openai_responses")
        assert call.id == "call_0"
        assert dict(call.extras) == {"item_id": "fc_0"}

    def test_deltas_may_be_keyed_by_output_index_only(self):
        r = Responses()
        delta = {"type": r.delta_type, "output_index": 0, "delta": '{"k": true}'}
        calls = assemble([r.start(0), delta], "openai_responses")
        assert calls[0].input == {"k": True}  # type: ignore[union-attr]

    def test_custom_tool_call_input_is_wrapped_as_raw_text(self):
        item = {
            "type": "custom_tool_call",
            "id": "ctc_1",
            "call_id": "call_9",
            "name": "apply_patch",
            "input": "",
        }
        patch = "*** Begin Patch\n*** Update File: a.py\n-x\n+y\n*** End Patch"
        events = [
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {
                "type": "response.custom_tool_call_input.delta",
                "item_id": "ctc_1",
                "output_index": 0,
                "delta": patch[:20],
            },
            {
                "type": "response.custom_tool_call_input.delta",
                "item_id": "ctc_1",
                "output_index": 0,
                "delta": patch[20:],
            },
            {
                "type": "response.custom_tool_call_input.done",
                "item_id": "ctc_1",
                "output_index": 0,
                "input": patch,
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**item, "input": patch},
            },
        ]
        (call,) = assemble(events)
        assert type(call) is ToolCall
        assert (call.id, call.name, call.input) == ("call_9", "apply_patch", {"input": patch})
        assert dict(call.extras) == {"format": "custom", "item_id": "ctc_1"}

    def test_items_that_are_not_client_calls_are_ignored(self):
        events = [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "reasoning", "id": "rs_1", "summary": []},
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {"type": "tool_search_call", "id": "ts_1", "arguments": {"paths": []}},
            },
        ]
        assert assemble(events, "openai_responses") == []


class TestBedrock:
    def test_text_deltas_without_a_block_start_and_padding_are_ignored(self):
        b = Bedrock()
        text = {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "hi"}, "p": "ab"}}
        events = [
            {"messageStart": {"role": "assistant", "p": "a"}},
            text,
            {"contentBlockStop": {"contentBlockIndex": 0, "p": "abc"}},
            *build(b, one_call(['{"city":"Paris"}'], k=1)),
        ]
        (call,) = assemble(events)
        assert (call.id, call.input) == ("call_1", {"city": "Paris"})  # type: ignore[union-attr]

    def test_server_tool_blocks_are_not_client_calls(self):
        server = {
            "toolUse": {
                "toolUseId": "s1",
                "name": "nova_code_interpreter",
                "type": "server_tool_use",
            }
        }
        events: list[Any] = [
            {"contentBlockStart": {"contentBlockIndex": 0, "start": server}},
            {
                "contentBlockDelta": {
                    "contentBlockIndex": 0,
                    "delta": {"toolUse": {"input": '{"snippet": "1+1"}'}},
                }
            },
            {"contentBlockStop": {"contentBlockIndex": 0}},
        ]
        assert assemble(events, "bedrock") == []


def gemini_chunk(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": list(parts)}, "index": 0}]}


GEMINI = [
    ("no id gives None", {"functionCall": {"name": "f", "args": {"a": 1}}}, None, {"a": 1}, {}),
    (
        "an id is kept",
        {"functionCall": {"name": "f", "args": {}, "id": "ab12cd34"}},
        "ab12cd34",
        {},
        {},
    ),
    ("missing args give {}", {"functionCall": {"name": "f"}}, None, {}, {}),
    (
        "thoughtSignature goes into extras",
        {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln+/=="},
        None,
        {},
        {"thought_signature": "c2ln+/=="},
    ),
    (
        "snake_case is read too",
        {"function_call": {"name": "f", "args": {"é": "°C"}}, "thought_signature": "sig"},
        None,
        {"é": "°C"},
        {"thought_signature": "sig"},
    ),
]


class TestGemini:
    @pytest.mark.parametrize(
        ("part", "call_id", "expected_input", "extras"),
        [g[1:] for g in GEMINI],
        ids=[g[0] for g in GEMINI],
    )
    def test_each_function_call_part_is_one_complete_call(
        self, part, call_id, expected_input, extras
    ):
        assembler = StreamAssembler("gemini")
        done = assembler.feed(gemini_chunk({"text": "", "thought": True}, part))
        assert len(done) == 1
        (call,) = done
        assert type(call) is ToolCall
        assert (call.id, call.name, call.input) == (call_id, "f", expected_input)
        assert dict(call.extras) == extras
        assert assembler.finish() == []

    def test_parallel_parts_in_one_chunk_complete_together_in_order(self):
        parts = [{"functionCall": {"name": "g", "args": {"n": i}}} for i in range(3)]
        done = StreamAssembler("gemini").feed(gemini_chunk(*parts))
        assert [c.input for c in done] == [{"n": 0}, {"n": 1}, {"n": 2}]  # type: ignore[union-attr]

    def test_args_that_are_not_an_object_give_an_invalid_call(self):
        (call,) = assemble([gemini_chunk({"functionCall": {"name": "f", "args": [1]}})])
        assert type(call) is InvalidToolCall and call.error_kind == "unsupported_type"


class TestFinish:
    @pytest.mark.parametrize("adapter", ADAPTERS, ids=ADAPTER_IDS)
    def test_finish_completes_calls_still_open_at_the_end_of_the_stream(self, adapter):
        a = adapter()
        script = [("start", 0), ("frag", 0, '{"a"'), ("frag", 0, ": 1}")]
        assembler = StreamAssembler(adapter.provider)
        fed = [call for event in build(a, script, end=False) for call in assembler.feed(event)]
        assert fed == []
        done = assembler.finish()
        assert [(c.name, c.input) for c in done if type(c) is ToolCall] == [("tool_0", {"a": 1})]
        assert assembler.calls == done
        assert assembler.finish() == []

    def test_openai_chat_completes_on_finish_reason_and_feed_returns_the_calls(self):
        c = Chat()
        assembler = StreamAssembler("openai_chat")
        for event in build(c, [("start", 0), ("frag", 0, "{}"), ("start", 1)], end=False):
            assert assembler.feed(event) == []
        done = assembler.feed(c.chunk({}, "tool_calls"))
        assert [call.id for call in done] == ["call_0", "call_1"]
        assert assembler.finish() == []

    def test_a_whole_call_in_one_chunk_with_its_finish_reason_completes_at_once(self):
        call = {
            "index": 0,
            "id": "x1",
            "type": "function",
            "function": {"name": "f", "arguments": '{"name":"example"}'},
        }
        chunk = Chat().chunk({"tool_calls": [call]}, "tool_calls")
        (done,) = StreamAssembler().feed(chunk)
        assert done.input == {"name": "example"}  # type: ignore[union-attr]

    def test_calls_lists_every_completed_call_in_completion_order(self):
        a = Anthropic()
        script = [("start", 0), ("start", 1), ("stop", 1), ("stop", 0)]
        assembler = StreamAssembler("anthropic")
        for event in build(a, script):
            assembler.feed(event)
        assert [c.id for c in assembler.calls] == ["call_1", "call_0"]

    def test_feeding_after_finish_raises(self):
        assembler = StreamAssembler("cohere")
        assembler.finish()
        with pytest.raises(StreamError, match="after finish"):
            assembler.feed({"type": "message-end"})


class TestAutoDetect:
    @pytest.mark.parametrize("adapter", ADAPTERS, ids=ADAPTER_IDS)
    def test_auto_detects_the_provider_from_the_first_event(self, adapter):
        events = build(adapter(), one_call(SPLIT))
        assembler = StreamAssembler()
        assert assembler.provider is None
        for event in events:
            assembler.feed(event)
        assembler.finish()
        assert assembler.provider == adapter.provider
        assert [c.input for c in assembler.calls] == [SPLIT_INPUT]  # type: ignore[union-attr]

    def test_auto_detects_gemini_chunks(self):
        (call,) = assemble([gemini_chunk({"functionCall": {"name": "f", "args": {}}})])
        assert call.source == "gemini_stream"

    @pytest.mark.parametrize(
        ("event", "provider"),
        [
            ({"choices": [], "usage": {}}, "openai_chat"),
            ({"type": "response.created", "response": {}}, "openai_responses"),
            ({"type": "ping"}, "anthropic"),
            ({"type": "tool-plan-delta"}, "cohere"),
            ({"messageStart": {"role": "assistant"}}, "bedrock"),
            ({"usageMetadata": {}}, "gemini"),
            ({"hello": 1}, None),
        ],
        ids=["chat", "responses", "anthropic", "cohere", "bedrock", "gemini", "unknown"],
    )
    def test_detect_provider_names_the_provider_of_an_event(self, event, provider):
        assert detect_provider(event) == provider

    def test_an_undetectable_event_raises(self):
        with pytest.raises(StreamError, match="cannot tell the provider"):
            StreamAssembler().feed({"hello": 1})

    def test_done_markers_and_error_events_are_ignored_before_and_after_detection(self):
        error = {
            "_sse_event": "error",
            "data": {
                "error": {
                    "code": "tool_use_failed",
                    "failed_generation": '{"name": "f", "arguments": {}}',
                }
            },
        }
        events = [
            "[DONE]",
            error,
            {"type": "error", "error": {"type": "overloaded_error"}},
            *build(Chat(), one_call(["{}"])),
            error,
        ]
        assembler = StreamAssembler()
        for event in events:
            assembler.feed(event)
        assert assembler.provider == "openai_chat"
        assert len(assembler.calls) == 1

    def test_a_json_text_event_is_decoded(self):
        text = (
            '{"type": "content_block_start", "index": 0, "content_block": '
            '{"type": "tool_use", "id": "t", "name": "f", "input": {}}}'
        )
        calls = assemble([text, '{"type": "content_block_stop", "index": 0}', "[DONE]"])
        assert [(c.id, c.name) for c in calls] == [("t", "f")]

    def test_sse_wrapped_events_are_unwrapped(self):
        wrapped = {"_sse_event": "content_block_start", "data": Anthropic().start(0)}
        calls = assemble([wrapped, Anthropic().stop(0)])
        assert [c.id for c in calls] == ["call_0"]

    def test_every_provider_is_listed(self):
        assert set(PROVIDERS) == {
            "openai_chat",
            "openai_responses",
            "anthropic",
            "bedrock",
            "cohere",
            "gemini",
        }
