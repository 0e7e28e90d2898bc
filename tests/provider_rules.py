"""The structural rules each provider publishes for a request history, as validators.

One validator per target; each takes a rendered body (``store.replay.render.render``) and returns
the problems found, as readable strings (an empty list: the history is valid). The rules are the
ones the providers document or enforce with a 400 error; they are written from the providers'
documentation, independently of the renderers:

* OpenAI Chat: roles are system/developer/user/assistant/tool; an assistant message with
  ``tool_calls`` is followed by one ``tool`` message per call id (each id answered exactly
  once) before any other message; a ``tool`` message answers a call of the assistant message
  just before; ids are non-empty and at most 40 characters; ``arguments`` is a string; an
  assistant message without calls has content.
* OpenAI Responses: every ``function_call`` has exactly one ``function_call_output`` with the
  same ``call_id`` after it; an output answers an earlier call; ``call_id`` is non-empty and
  unique among calls; a ``reasoning`` item is followed by the item it produced.
* Anthropic: the first message is ``user``; roles alternate; every ``tool_use`` of an assistant
  message is answered by exactly one ``tool_result`` in the next (user) message, tool results
  first, and a ``tool_result`` answers only the assistant message just before; ``tool_use``
  ids match ``^[a-zA-Z0-9_-]{1,64}$`` and are unique; ``input`` is an object; text blocks are
  not empty; thinking blocks carry a signature.
* Gemini: roles are user/model and alternate, starting with user; a model content with
  ``functionCall`` parts is followed by a user content whose ``functionResponse`` parts match
  the calls in count, order and names (and ids, when the call has one); function responses
  appear only there; ``args`` and ``response`` are objects.
* Bedrock Converse: like Anthropic with ``toolUse``/``toolResult`` blocks (one key per block);
  ``toolResult.content`` is a non-empty list of ``{"text"}`` / ``{"json"}``; ``status`` is
  ``success`` or ``error``; text is not blank; ``toolUseId`` matches ``^[a-zA-Z0-9_-]{1,64}$``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

ID_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,64}")
Problems = list[str]


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


# -- OpenAI Chat ---------------------------------------------------------------------------------


def validate_openai_chat(body: Mapping[str, Any]) -> Problems:
    problems: Problems = []
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ["'messages' must be a list"]
    pending: list[str] = []  # ids of the last assistant message's calls not yet answered
    answering = False  # inside the run of tool messages after an assistant message with calls
    for n, message in enumerate(messages):
        where = f"messages[{n}]"
        role = message.get("role") if isinstance(message, Mapping) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            problems.append(f"{where}: unknown role {role!r}")
            continue
        if role != "tool":
            if pending:
                problems.append(f"{where}: tool calls {pending} are not answered before a "
                                f"{role} message")
            pending, answering = [], False
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not answering:
                problems.append(f"{where}: a tool message must follow an assistant message "
                                "with tool_calls")
            elif call_id not in pending:
                problems.append(f"{where}: tool_call_id {call_id!r} answers no open call of "
                                "the preceding assistant message (or answers it twice)")
            else:
                pending.remove(call_id)
            if not _is_text(message.get("content")):
                problems.append(f"{where}: tool content must be a string")
            continue
        if role == "assistant":
            calls = message.get("tool_calls")
            if calls is None:
                if message.get("content") is None:
                    problems.append(f"{where}: an assistant message needs content or "
                                    "tool_calls")
                continue
            if not isinstance(calls, list) or not calls:
                problems.append(f"{where}: tool_calls must be a non-empty list")
                continue
            content = message.get("content")
            if content is not None and not _is_text(content):
                problems.append(f"{where}: assistant content must be a string or null")
            ids: list[str] = []
            for k, call in enumerate(calls):
                cw = f"{where}.tool_calls[{k}]"
                call_id = call.get("id")
                if not isinstance(call_id, str) or not call_id:
                    problems.append(f"{cw}: id must be a non-empty string")
                elif len(call_id) > 40:
                    problems.append(f"{cw}: id {call_id!r} is longer than 40 characters")
                if call_id in ids:
                    problems.append(f"{cw}: id {call_id!r} repeats in one message")
                ids.append(call_id)
                if call.get("type") != "function":
                    problems.append(f"{cw}: type must be 'function'")
                function = call.get("function")
                if not isinstance(function, Mapping) or not function.get("name"):
                    problems.append(f"{cw}: function.name is required")
                elif not _is_text(function.get("arguments")):
                    problems.append(f"{cw}: function.arguments must be a string")
            pending, answering = ids, True
        elif not _is_text(message.get("content")):
            problems.append(f"{where}: {role} content must be a string")
    if pending:
        problems.append(f"tool calls {pending} are never answered")
    return problems


# -- OpenAI Responses -----------------------------------------------------------------------------

_CALL_TYPES = {"function_call": "function_call_output",
               "custom_tool_call": "custom_tool_call_output"}
_OUTPUT_TYPES = {v: k for k, v in _CALL_TYPES.items()}


def validate_openai_responses(body: Mapping[str, Any]) -> Problems:
    problems: Problems = []
    items = body.get("input")
    if not isinstance(items, list):
        return ["'input' must be a list"]
    open_calls: dict[str, str] = {}  # call_id -> call item type, not yet answered
    seen: set[str] = set()
    for n, item in enumerate(items):
        where = f"input[{n}]"
        kind = item.get("type") if isinstance(item, Mapping) else None
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "system", "developer", "assistant"):
                problems.append(f"{where}: unknown role {role!r}")
            content = item.get("content")
            if not isinstance(content, list) or not content:
                problems.append(f"{where}: content must be a non-empty list")
                continue
            want = "output_text" if role == "assistant" else "input_text"
            for part in content:
                if part.get("type") != want or not _is_text(part.get("text")):
                    problems.append(f"{where}: a {role} message holds {want} parts, got "
                                    f"{part.get('type')!r}")
        elif kind in _CALL_TYPES:
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                problems.append(f"{where}: call_id must be a non-empty string")
                continue
            if call_id in seen:
                problems.append(f"{where}: call_id {call_id!r} is used by an earlier call")
            seen.add(call_id)
            open_calls[call_id] = kind
            if not item.get("name"):
                problems.append(f"{where}: name is required")
            field = "arguments" if kind == "function_call" else "input"
            if not _is_text(item.get(field)):
                problems.append(f"{where}: {field} must be a string")
        elif kind in _OUTPUT_TYPES:
            call_id = item.get("call_id")
            if open_calls.get(call_id) != _OUTPUT_TYPES[kind]:
                problems.append(f"{where}: {kind} for call_id {call_id!r} answers no open "
                                f"{_OUTPUT_TYPES[kind]} before it")
            else:
                del open_calls[call_id]
            if not _is_text(item.get("output")):
                problems.append(f"{where}: output must be a string")
        elif kind == "reasoning":
            following = next((i for i in items[n + 1:] if i.get("type") != "reasoning"), None)
            if following is None or not (following.get("type") in _CALL_TYPES or (
                    following.get("type") == "message" and following.get("role") == "assistant")):
                problems.append(f"{where}: a reasoning item must be followed by the item it "
                                "produced")
        else:
            problems.append(f"{where}: unknown item type {kind!r}")
    for call_id in open_calls:
        problems.append(f"call {call_id!r} has no output after it")
    return problems


# -- Anthropic and Bedrock -----------------------------------------------------------------------


def _blocks_problems(body: Mapping[str, Any], bedrock: bool) -> Problems:
    problems: Problems = []
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ["'messages' must be a list"]
    if not messages:
        return ["'messages' must not be empty"]
    system = body.get("system")
    if system is not None:
        if bedrock and not (isinstance(system, list) and all(
                isinstance(s, Mapping) and _is_text(s.get("text")) for s in system)):
            problems.append("system must be a list of {'text'} blocks")
        if not bedrock and not _is_text(system):
            problems.append("system must be a string")
    seen_ids: set[str] = set()
    pending: list[str] = []
    for n, message in enumerate(messages):
        where = f"messages[{n}]"
        role = message.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"{where}: unknown role {role!r}")
            continue
        if n == 0 and role != "user":
            problems.append(f"{where}: the first message must be a user message")
        if n > 0 and role == messages[n - 1].get("role"):
            problems.append(f"{where}: roles must alternate ({role} follows {role})")
        content = message.get("content")
        if isinstance(content, str) and not bedrock:
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list) or not content:
            problems.append(f"{where}: content must be a non-empty list")
            content = []
        if role == "user":
            answered: list[str] = []
            results_done = False
            for b, block in enumerate(content):
                result_id = _result_id(block, bedrock)
                if result_id is None:
                    results_done = True
                    problems.extend(_check_block(f"{where}.content[{b}]", block, role, bedrock))
                    continue
                if results_done:
                    problems.append(f"{where}.content[{b}]: tool results must come first")
                problems.extend(_check_block(f"{where}.content[{b}]", block, role, bedrock))
                if result_id not in pending or result_id in answered:
                    problems.append(f"{where}.content[{b}]: a tool result for {result_id!r} "
                                    "answers no tool use of the previous assistant message "
                                    "(or answers it twice)")
                answered.append(result_id)
            missing = [i for i in pending if i not in answered]
            if missing:
                problems.append(f"{where}: tool uses {missing} of the previous assistant "
                                "message are not answered here")
            pending = []
            continue
        if pending:
            problems.append(f"{where}: tool uses {pending} are not answered by a user message")
        pending = []
        for b, block in enumerate(content):
            problems.extend(_check_block(f"{where}.content[{b}]", block, role, bedrock))
            use = block.get("toolUse") if bedrock else (
                block if block.get("type") == "tool_use" else None)
            if not isinstance(use, Mapping):
                continue
            use_id = use.get("toolUseId" if bedrock else "id")
            if not isinstance(use_id, str) or ID_PATTERN.fullmatch(use_id) is None:
                problems.append(f"{where}.content[{b}]: tool use id {use_id!r} does not match "
                                "^[a-zA-Z0-9_-]{1,64}$")
            elif use_id in seen_ids:
                problems.append(f"{where}.content[{b}]: tool use id {use_id!r} is not unique")
            else:
                seen_ids.add(use_id)
            pending.append(use_id)
            if not use.get("name") or not isinstance(use.get("input"), Mapping):
                problems.append(f"{where}.content[{b}]: a tool use needs a name and an object "
                                "input")
    if pending:
        problems.append(f"tool uses {pending} of the last message are never answered")
    return problems


def _result_id(block: Any, bedrock: bool) -> str | None:
    if not isinstance(block, Mapping):
        return None
    if bedrock:
        result = block.get("toolResult")
        return result.get("toolUseId") if isinstance(result, Mapping) else None
    return block.get("tool_use_id") if block.get("type") == "tool_result" else None


_ANTHROPIC_TYPES = {
    "user": {"text", "image", "document", "tool_result"},
    "assistant": {"text", "thinking", "redacted_thinking", "tool_use"},
}
_BEDROCK_KEYS = {
    "user": {"text", "image", "document", "toolResult"},
    "assistant": {"text", "toolUse", "reasoningContent"},
}


def _check_block(where: str, block: Any, role: str, bedrock: bool) -> Problems:
    if not isinstance(block, Mapping):
        return [f"{where}: a content block must be an object"]
    if bedrock:
        if len(block) != 1 or next(iter(block)) not in _BEDROCK_KEYS[role]:
            return [f"{where}: a {role} block must have exactly one key among "
                    f"{sorted(_BEDROCK_KEYS[role])}, got {sorted(block)}"]
        if "text" in block and not (_is_text(block["text"]) and block["text"].strip()):
            return [f"{where}: text must not be blank"]
        result = block.get("toolResult")
        if result is not None:
            problems = []
            content = result.get("content")
            if not isinstance(content, list) or not content or not all(
                isinstance(c, Mapping) and len(c) == 1 and (
                    _is_text(c.get("text")) or isinstance(c.get("json"), Mapping))
                for c in content
            ):
                problems.append(f"{where}: toolResult content must be a non-empty list of "
                                "{'text'} / {'json'} blocks")
            if result.get("status") not in ("success", "error"):
                problems.append(f"{where}: toolResult status must be success or error")
            return problems
        return []
    kind = block.get("type")
    if kind not in _ANTHROPIC_TYPES[role]:
        return [f"{where}: a {role} message cannot hold a {kind!r} block"]
    if kind == "text" and not (_is_text(block.get("text")) and block["text"]):
        return [f"{where}: text blocks must not be empty"]
    if kind == "thinking" and not (_is_text(block.get("signature")) and block["signature"]):
        return [f"{where}: a thinking block needs its signature"]
    if kind == "tool_result":
        content = block.get("content")
        if not (_is_text(content) or (isinstance(content, list) and all(
                isinstance(c, Mapping) and c.get("type") in ("text", "image", "document")
                for c in content))):
            return [f"{where}: tool_result content must be a string or a list of blocks"]
        if "is_error" in block and not isinstance(block["is_error"], bool):
            return [f"{where}: is_error must be a boolean"]
    return []


def validate_anthropic(body: Mapping[str, Any]) -> Problems:
    return _blocks_problems(body, bedrock=False)


def validate_bedrock(body: Mapping[str, Any]) -> Problems:
    return _blocks_problems(body, bedrock=True)


# -- Gemini --------------------------------------------------------------------------------------


def validate_gemini(body: Mapping[str, Any]) -> Problems:
    problems: Problems = []
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return ["'contents' must be a non-empty list"]
    instruction = body.get("systemInstruction")
    if instruction is not None and not (isinstance(instruction, Mapping)
                                        and isinstance(instruction.get("parts"), list)):
        problems.append("systemInstruction must be {'parts': [...]}")
    calls: list[Mapping[str, Any]] = []  # the previous model content's function calls
    for n, content in enumerate(contents):
        where = f"contents[{n}]"
        role = content.get("role")
        if role not in ("user", "model"):
            problems.append(f"{where}: unknown role {role!r}")
            continue
        if n == 0 and role != "user":
            problems.append(f"{where}: the first content must be a user content")
        if n > 0 and role == contents[n - 1].get("role"):
            problems.append(f"{where}: roles must alternate ({role} follows {role})")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            problems.append(f"{where}: parts must be a non-empty list")
            parts = []
        for p, part in enumerate(parts):
            signature = part.get("thoughtSignature")
            if signature is not None and not (_is_text(signature) and signature):
                problems.append(f"{where}.parts[{p}]: thoughtSignature must be a string")
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        if role == "user":
            if len(responses) != len(calls):
                problems.append(f"{where}: {len(responses)} function responses answer "
                                f"{len(calls)} function calls of the previous model content")
            for k, (call, response) in enumerate(zip(calls, responses, strict=False)):
                if response.get("name") != call.get("name"):
                    problems.append(f"{where}: function response {k} is for "
                                    f"{response.get('name')!r}, the call was "
                                    f"{call.get('name')!r}")
                if call.get("id") is not None and response.get("id") != call.get("id"):
                    problems.append(f"{where}: function response {k} has id "
                                    f"{response.get('id')!r}, the call had {call.get('id')!r}")
                if not isinstance(response.get("response"), Mapping):
                    problems.append(f"{where}: function response {k}: response must be an "
                                    "object")
            calls = []
            continue
        if responses:
            problems.append(f"{where}: a model content cannot hold function responses")
        if calls:
            problems.append(f"{where}: function calls of the previous model content are not "
                            "answered")
        calls = [p["functionCall"] for p in parts if "functionCall" in p]
        for k, call in enumerate(calls):
            if not call.get("name") or not isinstance(call.get("args", {}), Mapping):
                problems.append(f"{where}: function call {k} needs a name and object args")
    if calls:
        problems.append("function calls of the last model content are never answered")
    return problems


VALIDATORS: dict[str, Callable[[Mapping[str, Any]], Problems]] = {
    "openai-chat": validate_openai_chat,
    "openai-responses": validate_openai_responses,
    "anthropic": validate_anthropic,
    "gemini": validate_gemini,
    "bedrock": validate_bedrock,
}


def validate(target: str, body: Mapping[str, Any]) -> Problems:
    """The problems of a rendered body for ``target`` (empty: valid)."""
    return VALIDATORS[target](body)
