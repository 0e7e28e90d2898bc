"""The Gemini renderer of :mod:`store.replay.render` (domain)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from store.core.model import (
    InvalidToolCall,
    Message,
    OpaquePart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    content_text,
)
from store.replay.common import (
    PLACEHOLDER_USER_TEXT,
    AnyCall,
    Block,
    Native,
    Pairs,
    Turns,
    call_input,
    split_system,
)

__all__ = ["render_gemini"]


def render_gemini(messages: Sequence[Message], native: Native) -> dict[str, Any]:
    """``{"systemInstruction"?: {"parts"}, "contents": [...]}`` for the Gemini API.

    Contents alternate ``user``/``model`` and open with ``user``. Parts: ``text``;
    ``functionCall {name, args, id?}``; ``functionResponse {name, response, id?}`` in the user
    content right after the model content, in call order (``response`` is the recorded object,
    else ``{"output": ...}``, or ``{"error": ...}`` for a failed call). Ids go on the wire only
    when the provider or repair gave them (not ids the store minted). A ``thoughtSignature``
    kept with a call or text part (or on an OpenAI-compatible Gemini message, for its first
    call) is echoed beside it. Replayed to Gemini itself, thought parts and inline/file data
    are sent too.
    """
    system, rest = split_system(messages)
    turns = Turns("user", "model")
    pairs = Pairs(rest)
    for i, message in enumerate(rest):
        own = native(message)
        role = "model" if message.role == "assistant" else "user"
        j = 0
        pending_signature = _signature(message.extras)
        for part in message.parts:
            block: Block
            if type(part) is TextPart:
                block = {"text": part.text}
                _sign(block, _signature(part.extras))
                turns.add(role, block)
            elif type(part) is ToolCall or type(part) is InvalidToolCall:
                call: Block = {"name": part.name, "args": call_input(part)}
                if _wire_id(part):
                    call["id"] = part.id
                block = {"functionCall": call}
                _sign(block, _signature(part.extras) or pending_signature)
                pending_signature = None  # a message-level signature goes on its first call
                turns.add("model", block)
            elif type(part) is ToolResult:
                found = pairs.find(i, j)
                j += 1
                response: Block = {
                    "name": found.name if found is not None else part.name or "unknown_tool",
                    "response": _response(part),
                }
                if found is not None and _wire_id(found):
                    response["id"] = found.id
                turns.add("user", {"functionResponse": response})
            elif own and type(part) is ThinkingPart:
                block = {"text": part.text, "thought": True}
                _sign(block, part.signature or _signature(part.extras))
                turns.add("model", block)
            elif (own and type(part) is OpaquePart and part.kind in ("inline_data", "file_data")
                  and isinstance(part.data, Mapping)):
                turns.add(role, dict(part.data))
    body: dict[str, Any] = {}
    if system:
        body["systemInstruction"] = {"parts": [{"text": t} for t in system]}
    finished = turns.finish({"text": PLACEHOLDER_USER_TEXT}, lambda b: "functionResponse" in b)
    body["contents"] = [{"role": role, "parts": parts} for role, parts in finished]
    return body


def _sign(block: Block, signature: str | None) -> None:
    if signature:
        block["thoughtSignature"] = signature


def _signature(extras: Mapping[str, Any]) -> str | None:
    """A thought signature kept in extras (a Gemini part, or an OpenAI-compatible record)."""
    found = extras.get("thought_signature")
    if isinstance(found, str) and found:
        return found
    google = extras.get("extra_content")
    if isinstance(google, Mapping):
        google = google.get("google")
        if isinstance(google, Mapping):
            found = google.get("thought_signature")
            if isinstance(found, str) and found:
                return found
    return None


def _response(result: ToolResult) -> dict[str, Any]:
    content = result.content
    if isinstance(content, Mapping) and not result.is_error:
        return dict(content)
    value: Any = content
    if content is None or isinstance(content, list | Mapping):
        value = content_text(content)
    return {"error" if result.is_error else "output": value}


def _wire_id(call: AnyCall) -> bool:
    """Whether a call's id goes on the wire: one the provider or repair gave, not minted."""
    return bool(call.id) and not call.extras.get("id_minted")
