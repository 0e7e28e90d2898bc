"""Stream assembly over every recorded stream in the corpus, with the calls each must give.

The expected table below was written by reading each file: for every call its id, name and
input (the whole input where it is small). A file added to the corpus without a row here fails
``test_every_stream_file_in_the_corpus_has_an_expected_row``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import orjson
import pytest

from store.core.model import InvalidToolCall, ToolCall, make_tool_call
from store.stream.assembler import StreamAssembler, assemble

pytestmark = pytest.mark.corpus


class Expected(NamedTuple):
    id: str | None
    name: str
    input: dict[str, Any]
    extras: dict[str, Any]


DIRECT = {"caller": {"type": "direct"}}
LARGE_ANSWERS = {
    "answers": [
        {"label": "Capital of the Country", "answer": "The capital of Mexico is Mexico City."},
        {
            "label": "Weather in the Capital",
            "answer": "The weather in Mexico City is currently sunny.",
        },
        {"label": "Product Name", "answer": "The product name is Pydantic AI."},
    ]
}

# file -> (provider, expected calls in completion order)
EXPECTED: dict[str, tuple[str, list[Expected]]] = {
    "anthropic_stream/claude-haiku-2-parallel-empty-input-stream.jsonl": (
        "anthropic",
        [
            Expected("toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator", {}, DIRECT),
            Expected("toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator", {}, DIRECT),
        ],
    ),
    "anthropic_stream/claude-haiku-empty-input-stream.jsonl": (
        "anthropic",
        [Expected("toolu_01CzN6riCPqw4pVSuTd9Dwn7", "pelican_name_generator", {}, DIRECT)],
    ),
    # The server_tool_use block (tool_search_tool_bm25, srvtoolu_) is not a client call.
    "anthropic_stream/claude-input_json_delta.jsonl": (
        "anthropic",
        [
            Expected(
                "toolu_01EFn5wTNBYA8Reni8rbmnHT",
                "get_exchange_rate",
                {"from_currency": "USD", "to_currency": "EUR"},
                DIRECT,
            )
        ],
    ),
    # Only a server_tool_use "advisor" block: no client call at all.
    "anthropic_stream/claude-server_tool_use-advisor-stream.jsonl": ("anthropic", []),
    "bedrock_stream/nova-micro-converse-stream.jsonl": (
        "bedrock",
        [Expected("tooluse_lAG_zP8QRHmSYOwZzzaCqA", "get_temperature", {"city": "Paris"}, {})],
    ),
    # The nova_code_interpreter toolUse has type "server_tool_use": not a client call.
    "bedrock_stream/nova2-lite-code-exec-stream.jsonl": (
        "bedrock",
        [Expected("tooluse_ptgCcZ0uQu-UUMz0abqoWw", "final_result", {"result": 7006652.0}, {})],
    ),
    "cohere_stream/cohere-v2-tool-call-stream.jsonl": (
        "cohere",
        [Expected("Person_2fnrphbsnr66", "Person", {"name": "Erick", "age": 27}, {})],
    ),
    "gemini_stream/gemini2-flash-sse-no-id.jsonl": (
        "gemini",
        [Expected(None, "get_capital", {"country": "France"}, {})],
    ),
    "gemini_stream/gemini25-flash-json-array-stream.json": (
        "gemini",
        [Expected(None, "pelican_name_generator", {}, {"thought_signature": "ClgBEU0yD8z3"})],
    ),
    "gemini_stream/gemini3-flash-json-array-signature.json": (
        "gemini",
        [Expected(None, "multiply", {"y": 3, "x": 5}, {"thought_signature": "Et0BCtoBAXLI"})],
    ),
    "gemini_stream/gemini3-pro-sse-thought-signature.jsonl": (
        "gemini",
        [Expected(None, "get_country", {}, {"thought_signature": "EpwICpkIAXLI"})],
    ),
    "gemini_stream/gemini3-sse-with-id.jsonl": (
        "gemini",
        [Expected("96c1su3s", "get_user_country", {}, {"thought_signature": "EpIDCo8DAQw5"})],
    ),
    "openai_chat_stream/groq-whole-call-one-chunk.jsonl": (
        "openai_chat",
        [
            Expected(
                "fc_bfb39741-3748-4def-9886-a93fc9c64a90",
                "get_something_by_name",
                {"name": "example"},
                {"index": 0},
            )
        ],
    ),
    "openai_chat_stream/openai-gpt4o-large-args-60-fragments.jsonl": (
        "openai_chat",
        [Expected("call_TJi2Gf3aj68Ijw5LdRJXWmzA", "final_result", LARGE_ANSWERS, {"index": 0})],
    ),
    "openai_chat_stream/openai-gpt4o-parallel-2-calls.jsonl": (
        "openai_chat",
        [
            Expected("call_3rqTYrA6H21AYUaRGP4F66oq", "get_country", {}, {"index": 0}),
            Expected("call_Xw9XMKBJU48kAAd78WgIswDx", "get_product_name", {}, {"index": 1}),
        ],
    ),
    "openai_chat_stream/openai-gpt4o-parallel-weather-product.jsonl": (
        "openai_chat",
        [
            Expected(
                "call_NS4iQj14cDFwc0BnrKqDHavt",
                "get_weather",
                {"city": "Mexico City"},
                {"index": 0},
            ),
            Expected("call_SkGkkGDvHQEEk0CGbnAh2AQw", "get_product_name", {}, {"index": 1}),
        ],
    ),
    "openai_chat_stream/openai-gpt4omini-args-split.jsonl": (
        "openai_chat",
        [Expected("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", {"country": "UK"}, {"index": 0})],
    ),
    "openai_legacy_function_call_stream/gpt35-0613-function_call-stream.jsonl": (
        "openai_chat",
        [
            Expected(
                None,
                "repl",
                {"code": 'print("hi")', "language": "python"},
                {"format": "function_call"},
            )
        ],
    ),
    "openai_responses_stream/bedrock-mantle-function_call-stream.jsonl": (
        "openai_responses",
        [Expected("call_0", "first_tool", {}, {"item_id": "fc_8189b908df5d54828dd1a219b8f647cb"})],
    ),
    "openai_responses_stream/deepseek-function_call-stream.jsonl": (
        "openai_responses",
        [
            Expected(
                "call_00_xjY8Z2BvSlzgEmmw0DtH0464",
                "get_temperature",
                {"city": "Tokyo"},
                {"item_id": "62bf2bb7-56af-4e3a-883b-83d4aad54da1"},
            )
        ],
    ),
    "openai_responses_stream/openai-function_call-stream.jsonl": (
        "openai_responses",
        [
            Expected(
                "call_kL0PCQV7M2WMoVX8V8OtYSAL",
                "get_capital",
                {"country": "France"},
                {"item_id": "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2"},
            )
        ],
    ),
    "openai_responses_stream/openai-streaming-usage-function_call.jsonl": (
        "openai_responses",
        [
            Expected(
                "call_CWXgs68YprAjp6t0371hiPOI",
                "final_result",
                {"result": 6666},
                {"item_id": "fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042"},
            )
        ],
    ),
    # Reasoning chunks, then an `event: error` with failed_generation: not a call.
    "text_format/groq-stream-error-event-failed_generation.jsonl": ("openai_chat", []),
}

FILES = sorted(EXPECTED)
RESPONSES_FILES = [f for f in FILES if EXPECTED[f][0] == "openai_responses"]


def load_events(path: Path) -> list[Any]:
    """The events of a stream file: one JSON payload per line, or the elements of an array."""
    if path.suffix == ".json":
        events = orjson.loads(path.read_bytes())
        assert isinstance(events, list)
        return events
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def stream_files(corpus: Path) -> set[str]:
    found = {p for p in corpus.glob("*_stream/*") if p.suffix in (".json", ".jsonl")}
    found |= set(corpus.glob("text_format/*stream*.jsonl"))
    return {p.relative_to(corpus).as_posix() for p in found}


def test_every_stream_file_in_the_corpus_has_an_expected_row(corpus_dir: Path) -> None:
    assert stream_files(corpus_dir) == set(EXPECTED)


class TestCorpusStreams:
    @pytest.mark.parametrize("name", FILES, ids=FILES)
    def test_the_stream_assembles_to_the_expected_calls(self, corpus_dir: Path, name: str):
        provider, expected = EXPECTED[name]
        calls = assemble(load_events(corpus_dir / name), provider)
        assert [(c.id, c.name) for c in calls] == [(e.id, e.name) for e in expected]
        for call, want in zip(calls, expected, strict=True):
            assert type(call) is ToolCall, call
            assert call.input == want.input
            assert call.source == f"{provider}_stream"
            signature = want.extras.get("thought_signature")
            extras = dict(call.extras)
            if signature is not None:
                assert extras.pop("thought_signature").startswith(signature)
                assert extras == {}
            else:
                assert extras == want.extras

    @pytest.mark.parametrize("name", FILES, ids=FILES)
    def test_auto_detection_gives_the_same_calls_and_finds_the_provider(
        self, corpus_dir: Path, name: str
    ):
        provider, _ = EXPECTED[name]
        events = load_events(corpus_dir / name)
        assembler = StreamAssembler()
        fed: list[ToolCall | InvalidToolCall] = []
        for event in events:
            fed.extend(assembler.feed(event))
        assert assembler.provider == provider
        assert fed == assemble(events, provider)

    @pytest.mark.parametrize("name", FILES, ids=FILES)
    def test_every_call_completes_before_the_stream_ends(self, corpus_dir: Path, name: str):
        assembler = StreamAssembler(EXPECTED[name][0])
        for event in load_events(corpus_dir / name):
            assembler.feed(event)
        assert assembler.finish() == []
        assert len(assembler.calls) == len(EXPECTED[name][1])

    @pytest.mark.parametrize("name", RESPONSES_FILES, ids=RESPONSES_FILES)
    def test_a_responses_stream_assembles_to_the_calls_of_its_complete_form(
        self, corpus_dir: Path, name: str
    ):
        events = load_events(corpus_dir / name)
        (completed,) = [e for e in events if e.get("type") == "response.completed"]
        items = [i for i in completed["response"]["output"] if i["type"] == "function_call"]
        complete_form = [make_tool_call(i["call_id"], i["name"], i["arguments"]) for i in items]
        assembled = assemble(events, "openai_responses")
        assert assembled == complete_form
        assert [c.arguments_text for c in assembled] == [i["arguments"] for i in items]
        assert [c.extras["item_id"] for c in assembled] == [i["id"] for i in items]

    @pytest.mark.parametrize(
        "name",
        [
            "anthropic_stream/claude-input_json_delta.jsonl",
            "anthropic_stream/claude-server_tool_use-advisor-stream.jsonl",
        ],
    )
    def test_anthropic_server_tool_use_blocks_are_not_counted(self, corpus_dir: Path, name: str):
        events = load_events(corpus_dir / name)
        server = [
            e["content_block"]["id"]
            for e in events
            if e.get("type") == "content_block_start"
            and e["content_block"]["type"] == "server_tool_use"
        ]
        assert server and all(i.startswith("srvtoolu_") for i in server)
        calls = assemble(events, "anthropic")
        assert not {c.id for c in calls} & set(server)
        assert len(calls) == len(EXPECTED[name][1])

    def test_gemini_thought_signatures_are_kept_byte_for_byte(self, corpus_dir: Path):
        name = "gemini_stream/gemini3-pro-sse-thought-signature.jsonl"
        events = load_events(corpus_dir / name)
        (call,) = assemble(events, "gemini")
        part = events[0]["candidates"][0]["content"]["parts"][0]
        assert call.extras["thought_signature"] == part["thoughtSignature"]
