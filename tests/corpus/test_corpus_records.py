"""Corpus test: every non-stream record of the shared corpus normalizes as its raw data says.

Files covered: every ``*.json`` outside a ``*_stream`` folder (whole bodies through
``normalize_payload``; ``text_format/groq-failed_generation-raw-json-call.json`` through
``parse_text_tool_calls`` on ``error.failed_generation``), and ``claude_code/*.jsonl`` and
``codex/*.jsonl`` line by line through ``normalize_message`` (lines that are ``NotAMessage`` are
skipped).

The expectations come from the data, never from the library: ``EXPECTED`` was written by reading
each file (client calls with their provider ids and recorded names, tool results, server-side
tools), and ``_raw_calls`` reads the raw arguments and opaque fields straight from the JSON
(per provider shape), so every check compares the library to the recorded bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import store
from store import InvalidToolCall, Message, ServerToolCall, ToolCall, ToolResult

pytestmark = pytest.mark.corpus

TEXT_FORMAT_FILE = "text_format/groq-failed_generation-raw-json-call.json"
TRUNCATED_FILE = "openai_legacy_function_call/gpt35-0613-truncated-args-finish-length.json"
GEMINI_PARALLEL_FILE = "gemini/gemini3-3-parallel-identical-no-id.json"
TOOL_SEARCH_FILE = "openai_responses/tool-search-plus-function_call.json"
SNOWFLAKE_FILE = "openai_chat/snowflake-cortex-claude-function_call-empty.json"
CALLER_FILE = "anthropic/claude-tool_use-with-caller.json"

# The default renames (brief / Kward's map): recorded name -> current name. No recorded name in
# the corpus is one of these, so every call keeps its recorded name and ``raw_name is None``.
RENAMES = {
    "read_file": "read",
    "edit_file": "edit",
    "write_file": "write",
    "run_shell_command": "bash",
}

# Opaque provider fields a replay must echo, by the extras key the call keeps them under.
WATCHED_EXTRAS = ("thought_signature", "item_id", "caller", "index")


@dataclass(frozen=True)
class Expect:
    """What a file holds, read from the file itself.

    ``calls``: every client tool call in file order, as (provider id, recorded name); ``invalid``:
    how many of them have arguments that are not JSON; ``results`` / ``result_errors``: tool
    results and how many are flagged as errors; ``server``: server-side tool calls as (id, name);
    ``unanswered``: call ids without a result in a file that carries results (truncated slices).
    """

    calls: tuple[tuple[str | None, str], ...]
    invalid: int = 0
    results: int = 0
    result_errors: int = 0
    server: tuple[tuple[str, str], ...] = ()
    unanswered: tuple[str, ...] = ()


EXPECTED: dict[str, Expect] = {
    "anthropic/claude-haiku-4-parallel-tool_use.json": Expect(
        calls=(
            ("toolu_0167cfEnoQaPviGdVXA95zcu", "retrieve_entity_info"),
            ("toolu_01EEe2V5HD1Ac4rKiUR4HD2T", "retrieve_entity_info"),
            ("toolu_01XFyAjstT3966qvRynZyVPo", "retrieve_entity_info"),
            ("toolu_013mnQZbgtK2oe3Mo3XKJsx3", "retrieve_entity_info"),
        ),
    ),
    "anthropic/claude-mixed-parallel-no-caller.json": Expect(
        calls=(
            ("toolu_01BBTvQnxdxk7vPHD1ytXyGs", "get_weather"),
            ("toolu_017Q9pGQ9Hx126pyyLLnVqJV", "get_elevation"),
        ),
    ),
    "anthropic/claude-nonascii-input.json": Expect(
        calls=(("toolu_018twzVJ3jJf4UfRAjyvBMLo", "final_result"),),
    ),
    "anthropic/claude-sonnet-empty-input.json": Expect(
        calls=(("toolu_01X9wcHKKAZD9tBC711xipPa", "get_user_country"),),
    ),
    "anthropic/claude-sonnet4-thinking-then-tool_use.json": Expect(
        calls=(("toolu_01YGzqpRE16Vricda3Aqcejo", "get_user_country"),),
    ),
    "anthropic/claude-tool_use-with-caller.json": Expect(
        calls=(("toolu_01JzwQ18FJQr29z9vLFKFBao", "load_capability"),),
    ),
    "bedrock/claude37-thinking-toolUse.json": Expect(
        calls=(("tooluse_W9DaUFg4Tj2cRPpndqxWSg", "get_user_country"),),
    ),
    "bedrock/kimi-k2-odd-toolUseId.json": Expect(
        calls=(("functions.get_temperature:0", "get_temperature"),),
    ),
    "bedrock/nova-lite-toolUse.json": Expect(
        calls=(("tooluse_AbFzl4JzQNAtgEfnacertb", "catalog_lookup"),),
    ),
    "bedrock/nova-micro-toolUse.json": Expect(
        calls=(("tooluse_Ze_bgl9CSqu8aJv7XD-_Dw", "get_capital"),),
    ),
    "cohere/cohere-v2-int-args.json": Expect(calls=(("Person_zh3gneaxfh7q", "Person"),)),
    "cohere/cohere-v2-multiline-code-args.json": Expect(
        calls=(("python_interpeter_temp_1xkvt035n7dj", "python_interpeter_temp"),),
    ),
    "cohere/cohere-v2-tool_plan-tool_call.json": Expect(
        calls=(("capital_cities_chf1bpadn07h", "capital_cities"),),
    ),
    "cohere/command-a-reasoning-thinking-then-tool_call.json": Expect(
        calls=(("get_the_weather_r8d0r2e0kw9s", "get_the_weather"),),
    ),
    "gemini/gemini-no-id-empty-args.json": Expect(calls=((None, "get_user_country"),)),
    "gemini/gemini-nonascii-args.json": Expect(calls=((None, "final_result"),)),
    "gemini/gemini-retry-args.json": Expect(calls=((None, "get_capital"),)),
    "gemini/gemini3-3-parallel-identical-no-id.json": Expect(
        calls=(
            (None, "generate_topic"),
            (None, "generate_topic"),
            (None, "generate_topic"),
        ),
    ),
    "gemini/gemini3-with-id.json": Expect(calls=(("w71i0cbt", "get_user_country"),)),
    "gemini/vertex-with-id.json": Expect(calls=(("vcyiitct", "get_user_city"),)),
    "mistral/mistral-large-long-nonascii-args.json": Expect(calls=(("nrVyckM2O", "final_result"),)),
    "mistral/mistral-medium-empty-args.json": Expect(calls=(("ot1MIoEMA", "get_mixed_content"),)),
    "mistral/pixtral-empty-args.json": Expect(calls=(("FI5qQGzDE", "get_image"),)),
    "openai_chat/cerebras-qwen3-coder-short-id.json": Expect(
        calls=(("b8847f144", "final_result"),),
    ),
    "openai_chat/crusoe-glm-chatcmpl-tool-id.json": Expect(
        calls=(("chatcmpl-tool-bbb91941bf76335c", "get_weather"),),
    ),
    "openai_chat/deepseek-parallel-with-index.json": Expect(
        calls=(
            ("call_00_6edlnw3Z1MgeMfey687g8451", "get_player_name"),
            ("call_01_km02sac7sHxNDPATKLZy7705", "roll_dice"),
        ),
    ),
    # The provider sent id "" and it stays "".
    # The provider sent tool_calls[0].id == "": it stays "".
    "openai_chat/gemini-openai-compat-empty-id.json": Expect(calls=(("", "get_current_time"),)),
    "openai_chat/groq-gptoss-fc-uuid-id.json": Expect(
        calls=(("fc_311ba17b-89f9-48d3-8fd9-7e74a1264855", "get_something_by_name"),),
    ),
    "openai_chat/groq-llama4-parallel-short-ids.json": Expect(
        calls=(
            ("rew01jq49", "get_weather"),
            ("gbpypqxpx", "final_result"),
        ),
    ),
    "openai_chat/huggingface-parallel-with-index.json": Expect(
        calls=(
            ("call_c67bb6b901354ca19bd1b70d", "get_weather"),
            ("call_1113747bb7de47ce8bffe3e9", "final_result"),
        ),
    ),
    "openai_chat/mistral-no-type-with-index.json": Expect(calls=(("rHU0eZiMa", "get_weather"),)),
    "openai_chat/ollama-cloud-openai-compat.json": Expect(
        calls=(("call_o2vnpxrw", "final_result"),),
    ),
    "openai_chat/openai-gpt4o-empty-args.json": Expect(
        calls=(("call_iXFttys57ap0o16JSlC8yhYo", "get_user_country"),),
    ),
    "openai_chat/openai-gpt4o-parallel-2-calls.json": Expect(
        calls=(
            ("call_jYdIdRZHxZTn5bWCq5jlMrJi", "delete_file"),
            ("call_TmlTVWQbzrXCZ4jNsCVNbNqu", "create_file"),
        ),
    ),
    "openai_chat/openai-gpt5mini-nonascii-args.json": Expect(
        calls=(("call_K70dlxD5HeTanhq40YEg003m", "final_result"),),
    ),
    "openai_chat/openrouter-claude-missing-arguments.json": Expect(
        calls=(("toolu_vrtx_015QAXScZzRDPttiPoc34AdD", "find_education_content"),),
    ),
    "openai_chat/openrouter-gemini-nested-args.json": Expect(
        calls=(("tool_insert_level_with_spaces_3ZiChYzj8xER8HixJe7W", "insert_level_with_spaces"),),
    ),
    # Beside the real call sits an empty legacy function_call {"name": "", "arguments": ""}.
    "openai_chat/snowflake-cortex-claude-function_call-empty.json": Expect(
        calls=(("toolu_bdrk_015BgHUFs4HS1TVWWwNRNxip", "get_weather"),),
    ),
    "openai_legacy_function_call/gpt35-0613-async-function_call.json": Expect(
        calls=((None, "book_a_flight"),),
    ),
    "openai_legacy_function_call/gpt35-0613-forced-function_call-finish-stop.json": Expect(
        calls=((None, "structural_response"),),
    ),
    "openai_legacy_function_call/gpt35-0613-function_call.json": Expect(
        calls=((None, "book_a_flight"),),
    ),
    # finish_reason "length": the arguments are cut off mid-string, so the call is invalid.
    "openai_legacy_function_call/gpt35-0613-truncated-args-finish-length.json": Expect(
        calls=((None, "structural_response"),),
        invalid=1,
    ),
    "openai_responses/bedrock-mantle-reused-call_id-turn1.json": Expect(
        calls=(("call_0", "first_tool"),),
    ),
    "openai_responses/bedrock-mantle-reused-call_id-turn2.json": Expect(
        calls=(("call_0", "second_tool"),),
    ),
    "openai_responses/deepseek-responses-uuid-item-id.json": Expect(
        calls=(("call_00_iD0U8IMtyIljI0ET7GLz1318", "get_temperature"),),
    ),
    "openai_responses/openai-empty-args.json": Expect(
        calls=(("call_ZWkVhdUjupo528U9dqgFeRkH", "get_user_country"),),
    ),
    "openai_responses/openai-parallel-2-function_calls.json": Expect(
        calls=(
            ("call_LWVp74L5HaH2KNvgVz9PJsrj", "get_location"),
            ("call_YnRAWeTyxI91m5uNa5bxXwVO", "get_location"),
        ),
    ),
    "openai_responses/openai-reasoning-then-function_call.json": Expect(
        calls=(("call_gL7JE6GDeGGsFubqO2XGytyO", "update_plan"),),
    ),
    # tool_search_call (arguments as an object) runs on the server: not a client call.
    "openai_responses/tool-search-plus-function_call.json": Expect(
        calls=(("call_NVKCEhbEqPWTnSUGhcIHwR3F", "get_exchange_rate"),),
        server=(("tsc_00cda6eed5a411c70069bb7f8c5890819d86cb58c280c603ff", "tool_search_call"),),
    ),
    "pairing/anthropic-2-tool_results-whitespace-text.json": Expect(
        calls=(
            ("toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator"),
            ("toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator"),
        ),
        results=2,
        result_errors=0,
    ),
    "pairing/anthropic-4-tool_results.json": Expect(
        calls=(
            ("toolu_0167cfEnoQaPviGdVXA95zcu", "retrieve_entity_info"),
            ("toolu_01EEe2V5HD1Ac4rKiUR4HD2T", "retrieve_entity_info"),
            ("toolu_01XFyAjstT3966qvRynZyVPo", "retrieve_entity_info"),
            ("toolu_013mnQZbgtK2oe3Mo3XKJsx3", "retrieve_entity_info"),
        ),
        results=4,
        result_errors=0,
    ),
    "pairing/bedrock-mantle-duplicate-call_id-history.json": Expect(
        calls=(
            ("resp_43amfn3g3uar3i4sa5b7sz35cukuufaisldkwel5v6o47xzpr5va:call_0", "first_tool"),
            ("resp_cizhrpixixp4ylkykezegmnkbgixq2qteaqq2gigeu5aluj6dhva:call_0", "second_tool"),
        ),
        results=2,
        result_errors=0,
    ),
    "pairing/bedrock-toolResult-error.json": Expect(
        calls=(("tooluse_Ze_bgl9CSqu8aJv7XD-_Dw", "get_capital"),),
        results=1,
        result_errors=1,
    ),
    # A final answer: citations name "<tool_call_id>:<n>" but it holds no call and no result.
    "pairing/cohere-v2-citations-reference-tool-ids.json": Expect(calls=()),
    "pairing/cohere-v2-role-tool-and-citations.json": Expect(
        calls=(
            ("web_search_eyqpk2grf0f7", "web_search"),
            ("python_interpeter_temp_1xkvt035n7dj", "python_interpeter_temp"),
        ),
        results=2,
        result_errors=0,
    ),
    "pairing/gemini-functionResponse-client-ids.json": Expect(
        calls=(
            ("pyd_ai_df5891897e434a16add992cc09f10172", "generate_topic"),
            ("pyd_ai_102eb2f935364e77bac26307e3428e2b", "generate_topic"),
            ("pyd_ai_cc6e16722f9a428db81532521a689ea7", "generate_topic"),
        ),
        results=3,
        result_errors=0,
    ),
    "pairing/gemini-snake_case-function_response-client-ids.json": Expect(
        calls=(
            ("call_27db36357f594e73b557ec8f70da9e87", "pelican_name_generator"),
            ("call_97666b91d4c14f44b94ab69dded4ab10", "pelican_name_generator"),
        ),
        results=2,
        result_errors=0,
    ),
    "pairing/gemini3-functionResponse-with-id.json": Expect(
        calls=(("w71i0cbt", "get_user_country"),),
        results=1,
        result_errors=0,
    ),
    "pairing/mistral-role-tool.json": Expect(
        calls=(("rHU0eZiMa", "get_weather"),),
        results=1,
        result_errors=0,
    ),
    "pairing/openai-chat-2-parallel-tool-results.json": Expect(
        calls=(
            ("call_jYdIdRZHxZTn5bWCq5jlMrJi", "delete_file"),
            ("call_TmlTVWQbzrXCZ4jNsCVNbNqu", "create_file"),
        ),
        results=2,
        result_errors=0,
    ),
    "pairing/openai-chat-client-substituted-id.json": Expect(
        calls=(("pyd_ai_cee885c699414386a7e14b7ec43cadbc", "get_current_time"),),
        results=1,
        result_errors=0,
    ),
    "pairing/openai-chat-role-tool-after-stream.json": Expect(
        calls=(("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital"),),
        results=1,
        result_errors=0,
    ),
    "pairing/responses-function_call_output.json": Expect(
        calls=(
            ("call_LWVp74L5HaH2KNvgVz9PJsrj", "get_location"),
            ("call_YnRAWeTyxI91m5uNa5bxXwVO", "get_location"),
        ),
        results=2,
        result_errors=0,
    ),
    # Read with parse_text_tool_calls(body["error"]["failed_generation"]): no id in text form.
    "text_format/groq-failed_generation-raw-json-call.json": Expect(
        calls=((None, "get_something_by_name"),),
    ),
    # Claude Code and Codex (checked by hand): every result in each slice answers a call of the
    # same file. cc-1.0.108 (first 24 of 53 lines) and Codex (first 47 of 279 lines) are truncated
    # slices but happen to cut after a result; cc-1.0.98-5-parallel is the whole file. The
    # sidechain slice (first 37 of 438 lines) is cut while two of the three parallel Task calls
    # are still running, so those two calls have no result in the slice.
    "claude_code/cc-1.0.108-session-head.jsonl": Expect(
        calls=(
            ("toolu_01NG5xcSvVWynFdbWxaW2SPc", "TodoWrite"),
            ("toolu_01SpA34ZjSpRT7kiHgsgMTfP", "Glob"),
            ("toolu_019e174mUeo44VHBnbQcApEG", "Glob"),
            ("toolu_01Jo3zVz1Y26af7Dk8A9GMcS", "TodoWrite"),
            ("toolu_018t5jce2ZNoGr2ADsHGQife", "Task"),
            ("toolu_014YF9TXhDRR7BnpasNJ7gjC", "Task"),
            ("toolu_01Jb8RgAYYgwyup2DrEuucy7", "TodoWrite"),
            ("toolu_01Jcrb8BoK8qgGGsycHsPYNo", "Glob"),
            ("toolu_017Uj8NydfpTP1sKZ8hxWeko", "Read"),
        ),
        results=9,
        result_errors=1,
    ),
    "claude_code/cc-1.0.98-5-parallel-tool_use-split-lines.jsonl": Expect(
        calls=(
            ("toolu_01FHpVtawG6NqQ943umBMky8", "TodoWrite"),
            ("toolu_01UwiR8tuGvGJN2J7BW4KbPx", "Bash"),
            ("toolu_01MEJ7TRMeoTyDi6EZLHM2zY", "Glob"),
            ("toolu_0164LbCjQenEQzr3pHHs81PK", "Glob"),
            ("toolu_01KhSQFosXU4bYDwP6Md9hRW", "Glob"),
            ("toolu_01QhjL1byZZsWexdkc7SBXUi", "Glob"),
            ("toolu_012Gbtu9wRFgVWjdDUHE3djw", "Bash"),
            ("toolu_01CXR3vcK29P9o26gvaLgQXG", "Glob"),
            ("toolu_01NfhH3k5WWu9fUHXKUfDiiA", "Glob"),
            ("toolu_01PbUvZLKxR3ysWR9vhm6PSH", "TodoWrite"),
            ("toolu_01LM7vfs6eMdhHJokVajzJA1", "Write"),
            ("toolu_01WG87BhAT5yVaRwP1gU9Uxz", "TodoWrite"),
        ),
        results=12,
        result_errors=1,
    ),
    "claude_code/cc-1.0.98-task-subagent-sidechain.jsonl": Expect(
        calls=(
            ("toolu_019okXfjnUzJkV2VZbndx6ik", "Glob"),
            ("toolu_01Gbs41yRWc2W5JEW6w87PNA", "Glob"),
            ("toolu_01KrQweoQa7fzmcQAC83TKas", "TodoWrite"),
            ("toolu_014i9ThHMNShCHocf9xMKasf", "Task"),
            ("toolu_01EbxY94wRUAGyMLj5wh699C", "Task"),
            ("toolu_01LS6tcVd796SbQKmZqeVnWY", "Task"),
            ("toolu_01HxbsgJQs4jsUPZiF7VXMzD", "Bash"),
            ("toolu_01BdTiruRxVrzvQ9K4h7oZ6y", "Bash"),
            ("toolu_01GNm55ZNxoMjoKG2NoqwZ8i", "Write"),
            ("toolu_014gNZ9jEusRXPuyvsgXQQ4R", "Write"),
            ("toolu_01DF5uFfmp74w12Jnpxqy23Y", "Write"),
            ("toolu_01NbaadejuYTu4kh5Msm2jqr", "Write"),
            ("toolu_01HkkbhPUyr6WjkfpWtmowVR", "Write"),
            ("toolu_01Mdg6cqfEAFBHiXsbqWcQrs", "Bash"),
        ),
        results=12,
        result_errors=0,
        unanswered=("toolu_014i9ThHMNShCHocf9xMKasf", "toolu_01EbxY94wRUAGyMLj5wh699C"),
    ),
    "codex/codex-0.58-rollout-shell-function_call.jsonl": Expect(
        calls=(
            ("call_GfHib9GW3d5m9EB1wMTper0j", "shell"),
            ("call_gp2Su6HWIXnmQqdH5xqCkd6e", "shell"),
            ("call_uL3C5LSTqUpXe8w1KJB5amn1", "shell"),
            ("call_BfR4c1J4OjtiAngCR4CVd9Gu", "shell"),
            ("call_RbM5QpDYZgs1XFseTeN5uCz5", "shell"),
            ("call_0MtPdRAIWpDiuXLAcj8IMIgW", "shell"),
        ),
        results=6,
        result_errors=0,
    ),
}

FILES = tuple(EXPECTED)
PAIRING_FILES = tuple(
    rel for rel in FILES if rel.startswith(("pairing/", "claude_code/", "codex/"))
)
MISSING = object()


# -- reading the raw data (no library involved) ---------------------------------------------------


@dataclass(frozen=True)
class RawCall:
    """A client call as recorded: ``form`` is ``text``, ``object`` or ``absent`` arguments."""

    id: str | None
    name: str
    arguments: Any
    form: str
    extras: Mapping[str, Any]


def _load(corpus_dir: Path, rel: str) -> Any:
    path = corpus_dir / rel
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return json.loads(path.read_text(encoding="utf-8"))


def _raw_messages(data: Any) -> Iterator[Mapping[str, Any]]:
    """The message-like records of a raw file, in file order."""
    if isinstance(data, list):  # transcript lines
        for line in data:
            if line.get("type") == "response_item":  # Codex rollout
                yield line["payload"]
            elif isinstance(line.get("message"), dict):  # Claude Code
                yield line["message"]
        return
    for choice in data.get("choices", ()):
        yield choice["message"]
    for candidate in data.get("candidates", ()):
        yield candidate["content"]
    output = data.get("output")
    if isinstance(output, list):  # Responses
        yield from output
    elif isinstance(output, dict):  # Bedrock Converse
        yield output["message"]
    for key in ("input", "messages", "contents"):  # request bodies
        if isinstance(data.get(key), list):
            yield from data[key]
    if isinstance(data.get("message"), dict):  # Cohere v2
        yield data["message"]
    if data.get("type") == "message":  # Anthropic
        yield data


def _text_or_absent(holder: Mapping[str, Any], key: str) -> tuple[Any, str]:
    if key not in holder:
        return None, "absent"
    value = holder[key]
    return value, "text" if isinstance(value, str) else "object"


def _raw_calls_of(message: Mapping[str, Any]) -> Iterator[RawCall]:
    for tc in message.get("tool_calls") or ():  # OpenAI Chat family, Mistral, Cohere
        args, form = _text_or_absent(tc["function"], "arguments")
        extras = {"index": tc["index"]} if "index" in tc else {}
        yield RawCall(tc["id"], tc["function"]["name"], args, form, extras)
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and legacy["name"]:  # legacy OpenAI function_call (no id)
        yield RawCall(None, legacy["name"], legacy["arguments"], "text", {})
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        if block.get("type") == "tool_use":  # Anthropic, Claude Code
            extras = {"caller": block["caller"]} if "caller" in block else {}
            yield RawCall(block["id"], block["name"], block["input"], "object", extras)
        elif "toolUse" in block:  # Bedrock Converse
            use = block["toolUse"]
            yield RawCall(use["toolUseId"], use["name"], use["input"], "object", {})
    for part in message.get("parts") or ():  # Gemini, camelCase or snake_case
        fc = part.get("functionCall", part.get("function_call"))
        if fc is not None:
            signature = part.get("thoughtSignature", part.get("thought_signature"))
            extras = {"thought_signature": signature} if signature is not None else {}
            yield RawCall(fc.get("id"), fc["name"], fc["args"], "object", extras)
    if message.get("type") == "function_call":  # Responses item, Codex response_item
        extras = {"item_id": message["id"]} if "id" in message else {}
        yield RawCall(message["call_id"], message["name"], message["arguments"], "text", extras)


def _raw_calls(rel: str, data: Any) -> list[RawCall]:
    if rel == TEXT_FORMAT_FILE:
        generated = json.loads(data["error"]["failed_generation"])
        return [RawCall(None, generated["name"], generated["arguments"], "object", {})]
    return [call for message in _raw_messages(data) for call in _raw_calls_of(message)]


def _raw_results_of(message: Mapping[str, Any]) -> Iterator[tuple[str | None, bool, Any]]:
    """Tool results as recorded: (the id they reference, error flag, content)."""
    if message.get("role") == "tool":  # OpenAI Chat family, Mistral, Cohere
        yield message.get("tool_call_id"), False, message.get("content")
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        if block.get("type") == "tool_result":  # Anthropic, Claude Code
            yield block["tool_use_id"], bool(block.get("is_error", False)), block.get("content")
        elif "toolResult" in block:  # Bedrock Converse
            result = block["toolResult"]
            yield result["toolUseId"], result.get("status") == "error", result["content"]
    for part in message.get("parts") or ():  # Gemini, camelCase or snake_case
        response = part.get("functionResponse", part.get("function_response"))
        if response is not None:
            yield response.get("id"), False, response["response"]
    if message.get("type") == "function_call_output":  # Responses item, Codex response_item
        yield message["call_id"], False, message["output"]


def _raw_parses(raw: RawCall) -> bool:
    if raw.form != "text":
        return True
    try:
        json.loads(raw.arguments)
    except json.JSONDecodeError:
        return False
    return True


def _expected_input(raw: RawCall) -> dict[str, Any]:
    """The input a valid call must carry: the parsed text, the recorded object, or ``{}``."""
    if raw.form == "absent":
        return {}
    value = json.loads(raw.arguments) if raw.form == "text" else raw.arguments
    assert type(value) is dict
    return value


# -- reading through the library ------------------------------------------------------------------


def _messages(corpus_dir: Path, rel: str) -> list[Message]:
    data = _load(corpus_dir, rel)
    if rel == TEXT_FORMAT_FILE:
        return []
    if isinstance(data, list):
        messages = []
        for line in data:
            try:
                messages.append(store.normalize_message(line))
            except store.NotAMessage:
                continue
        return messages
    return store.normalize_payload(data)


def _client_calls(corpus_dir: Path, rel: str) -> list[ToolCall | InvalidToolCall]:
    if rel == TEXT_FORMAT_FILE:
        body = _load(corpus_dir, rel)
        return list(store.parse_text_tool_calls(body["error"]["failed_generation"]))
    return [call for message in _messages(corpus_dir, rel) for call in message.tool_calls]


def _calls_with_raw(corpus_dir: Path, rel: str) -> list[tuple[ToolCall | InvalidToolCall, RawCall]]:
    calls = _client_calls(corpus_dir, rel)
    raw = _raw_calls(rel, _load(corpus_dir, rel))
    assert len(calls) == len(raw), [c.name for c in calls]
    return list(zip(calls, raw, strict=True))


# -- tests ----------------------------------------------------------------------------------------


def test_the_expected_table_covers_every_non_stream_corpus_file(corpus_dir: Path) -> None:
    found = {
        path.relative_to(corpus_dir).as_posix()
        for path in corpus_dir.rglob("*.json")
        if not path.parent.name.endswith("_stream")
    }
    for folder in ("claude_code", "codex"):
        found |= {f"{folder}/{path.name}" for path in (corpus_dir / folder).glob("*.jsonl")}
    assert found == set(EXPECTED)


@pytest.mark.parametrize("rel", FILES, ids=FILES)
def test_the_expected_table_matches_the_raw_calls(corpus_dir: Path, rel: str) -> None:
    """The hand-written table and the raw-shape reader agree (a check on the test itself)."""
    expected = EXPECTED[rel]
    raw = _raw_calls(rel, _load(corpus_dir, rel))
    assert [(r.id, r.name) for r in raw] == list(expected.calls)
    assert sum(not _raw_parses(r) for r in raw) == expected.invalid


@pytest.mark.parametrize("rel", FILES, ids=FILES)
def test_every_client_call_normalizes(corpus_dir: Path, rel: str) -> None:
    expected = EXPECTED[rel]
    calls = _client_calls(corpus_dir, rel)
    assert len(calls) == len(expected.calls)
    assert sum(type(call) is InvalidToolCall for call in calls) == expected.invalid
    for call, (call_id, recorded) in zip(calls, expected.calls, strict=True):
        assert call.id == call_id
        assert call.name == RENAMES.get(recorded, recorded)
        assert call.recorded_name == recorded
        assert call.raw_name == (recorded if recorded in RENAMES else None)
    for call, raw in _calls_with_raw(corpus_dir, rel):
        if not _raw_parses(raw):
            assert type(call) is InvalidToolCall
            assert call.error_kind == "invalid_json"
            assert call.arguments_text == raw.arguments
            continue
        assert type(call) is ToolCall
        assert type(call.input) is dict
        assert call.input == _expected_input(raw)


@pytest.mark.parametrize("rel", FILES, ids=FILES)
def test_server_side_tools_are_not_client_calls(corpus_dir: Path, rel: str) -> None:
    expected = EXPECTED[rel]
    messages = _messages(corpus_dir, rel)
    server = [part for message in messages for part in message.server_tool_calls]
    assert [(s.id, s.name) for s in server] == list(expected.server)
    server_ids = {s.id for s in server}
    assert not any(call.id in server_ids for call in _client_calls(corpus_dir, rel))


def test_the_tool_search_call_is_a_server_tool_call_with_its_object_arguments(
    corpus_dir: Path,
) -> None:
    raw_item = _load(corpus_dir, TOOL_SEARCH_FILE)["output"][0]
    assert raw_item["type"] == "tool_search_call"
    messages = _messages(corpus_dir, TOOL_SEARCH_FILE)
    (server,) = [part for message in messages for part in message.server_tool_calls]
    assert type(server) is ServerToolCall
    assert (server.id, server.input) == (raw_item["id"], raw_item["arguments"])
    assert [call.name for call in _client_calls(corpus_dir, TOOL_SEARCH_FILE)] == [
        "get_exchange_rate"
    ]


def _results_with_position(messages: list[Message]) -> Iterator[tuple[int, ToolResult]]:
    for index, message in enumerate(messages):
        for result in message.tool_results:
            yield index, result


@pytest.mark.parametrize("rel", PAIRING_FILES, ids=PAIRING_FILES)
def test_every_tool_result_links_to_an_earlier_call(corpus_dir: Path, rel: str) -> None:
    expected = EXPECTED[rel]
    messages = _messages(corpus_dir, rel)
    results = [result for message in messages for result in message.tool_results]
    assert len(results) == expected.results
    assert sum(result.is_error for result in results) == expected.result_errors
    raw = [r for message in _raw_messages(_load(corpus_dir, rel)) for r in _raw_results_of(message)]
    assert [(r.call_id, r.is_error, r.content) for r in results] == raw
    for index, result in _results_with_position(messages):
        if result.call_id is None:
            continue  # paired by position (Gemini without ids): see the Gemini test below
        earlier = {call.id for message in messages[:index] for call in message.tool_calls}
        assert result.call_id in earlier, f"result for {result.call_id!r} has no earlier call"
    answered = {result.call_id for result in results}
    all_ids = [call.id for message in messages for call in message.tool_calls]
    assert tuple(i for i in all_ids if i not in answered) == expected.unanswered


GEMINI_PAIRING_FILES = tuple(rel for rel in PAIRING_FILES if rel.startswith("pairing/gemini"))


@pytest.mark.parametrize("rel", GEMINI_PAIRING_FILES, ids=GEMINI_PAIRING_FILES)
def test_gemini_results_pair_with_the_calls_of_the_turn_by_position(
    corpus_dir: Path, rel: str
) -> None:
    """Each functionResponse turn answers the functionCall parts of the model turn before it,
    in order: names match, and an id, when present, matches the call at that position."""
    messages = _messages(corpus_dir, rel)
    paired = 0
    for index, message in enumerate(messages):
        if not message.tool_results:
            continue
        turn = messages[index - 1]
        assert index > 0 and turn.role == "assistant"
        assert len(message.tool_results) == len(turn.tool_calls)
        for result, call in zip(message.tool_results, turn.tool_calls, strict=True):
            assert result.name == call.name
            assert result.call_id is None or result.call_id == call.id
            paired += 1
    assert paired == EXPECTED[rel].results


@pytest.mark.parametrize("rel", FILES, ids=FILES)
def test_provider_extras_are_kept_on_the_call(corpus_dir: Path, rel: str) -> None:
    """Gemini thoughtSignature, Responses item id, Anthropic caller, Chat index: kept as is."""
    for call, raw in _calls_with_raw(corpus_dir, rel):
        for key in WATCHED_EXTRAS:
            assert call.extras.get(key, MISSING) == raw.extras.get(key, MISSING), key


def test_the_gemini_thought_signature_sits_on_the_first_parallel_call_only(
    corpus_dir: Path,
) -> None:
    parts = _load(corpus_dir, GEMINI_PARALLEL_FILE)["candidates"][0]["content"]["parts"]
    calls = _client_calls(corpus_dir, GEMINI_PARALLEL_FILE)
    assert [call.id for call in calls] == [None, None, None]
    assert calls[0].extras["thought_signature"] == parts[0]["thoughtSignature"]
    assert ["thought_signature" in call.extras for call in calls] == [True, False, False]


def test_the_snowflake_empty_legacy_function_call_is_not_a_call(corpus_dir: Path) -> None:
    raw = _load(corpus_dir, SNOWFLAKE_FILE)["choices"][0]["message"]
    assert raw["function_call"] == {"arguments": "", "name": ""}
    (message,) = _messages(corpus_dir, SNOWFLAKE_FILE)
    assert [(call.id, call.name) for call in message.tool_calls] == [
        ("toolu_bdrk_015BgHUFs4HS1TVWWwNRNxip", "get_weather")
    ]
    assert message.extras["function_call"] == raw["function_call"]


def test_the_anthropic_caller_is_kept_in_extras(corpus_dir: Path) -> None:
    (call,) = _client_calls(corpus_dir, CALLER_FILE)
    assert call.extras["caller"] == {"type": "direct"}


def test_the_truncated_legacy_arguments_are_one_invalid_call_kept_verbatim(
    corpus_dir: Path,
) -> None:
    raw = _load(corpus_dir, TRUNCATED_FILE)["choices"][0]["message"]["function_call"]
    assert raw["arguments"] == '{\n  "subject": "Invitation to attend'
    (call,) = _client_calls(corpus_dir, TRUNCATED_FILE)
    assert type(call) is InvalidToolCall
    assert (call.id, call.name, call.error_kind) == (None, "structural_response", "invalid_json")
    assert call.arguments_text == raw["arguments"]
    assert call.to_wire()["function"]["arguments"] == raw["arguments"]


@pytest.mark.parametrize("rel", FILES, ids=FILES)
def test_argument_text_is_byte_faithful(corpus_dir: Path, rel: str) -> None:
    """Text arguments (OpenAI Chat family, legacy, Cohere, Mistral, Responses, Codex) are kept
    and re-emitted exactly; absent arguments are written as "{}", object arguments as compact
    JSON; the wire record reads back to the same call."""
    for call, raw in _calls_with_raw(corpus_dir, rel):
        wire = call.to_wire()
        assert wire["id"] == raw.id
        assert wire["function"]["name"] == raw.name
        if raw.form == "text":
            assert call.arguments_text == raw.arguments
            assert wire["function"]["arguments"] == raw.arguments
        elif raw.form == "absent":
            assert wire["function"]["arguments"] == "{}"
        else:  # object arguments: compact raw-UTF-8 JSON in the recorded key order
            compact = json.dumps(raw.arguments, ensure_ascii=False, separators=(",", ":"))
            assert wire["function"]["arguments"] == compact
        if type(call) is ToolCall:
            assert ToolCall.from_wire(wire) == call
