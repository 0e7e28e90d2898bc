"""The provider table (domain): each replay target's id rules and limits, and the message
sources that count as its own provider — one place for what repair and rendering need to
know about a provider.

Sources: the providers' API references and the 400 errors they return (wire-formats.md in
``shared/reference``): Anthropic and Bedrock refuse ids outside ``^[a-zA-Z0-9_-]{1,64}$``,
OpenAI Chat refuses ids over 40 characters, every target but Gemini refuses a missing or
empty id; Gemini accepts any id, or none.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["PROVIDERS", "SOURCE_FAMILIES", "TARGETS", "Provider", "Target", "id_problem",
           "remapped_id"]

Target = Literal["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock"]
TARGETS: tuple[Target, ...] = get_args(Target)


@dataclass(frozen=True, slots=True)
class Provider:
    """What a replay target accepts.

    ``id_prefix`` starts the ids repair derives for it; ``id_required``: a call must carry a
    non-empty id; ``id_pattern`` / ``id_max_length``: the ids it accepts (``None``: any);
    ``sources``: the normalizer ``source`` names of its own messages (replayed to their own
    provider, opaque parts such as signatures and reasoning items are echoed).
    """

    target: Target
    id_prefix: str
    id_required: bool
    id_pattern: re.Pattern[str] | None
    id_max_length: int | None
    sources: frozenset[str]


_TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")

#: The targets, by name.
PROVIDERS: Mapping[Target, Provider] = {
    "openai-chat": Provider(
        "openai-chat", "call_", True, None, 40,
        frozenset({"openai_chat", "openai_chat_untyped", "legacy_function_call"})),
    "openai-responses": Provider(
        "openai-responses", "call_", True, None, None,
        frozenset({"openai_responses", "openai_responses_custom", "codex"})),
    "anthropic": Provider(
        "anthropic", "toolu_", True, _TOOL_USE_ID, None,
        frozenset({"anthropic", "claude_code"})),
    "gemini": Provider(
        "gemini", "call_", False, None, None, frozenset({"gemini"})),
    "bedrock": Provider(
        "bedrock", "tooluse_", True, _TOOL_USE_ID, None, frozenset({"bedrock"})),
}

#: The message sources that count as the target's own provider (``same_provider=None``).
SOURCE_FAMILIES: Mapping[Target, frozenset[str]] = {
    name: provider.sources for name, provider in PROVIDERS.items()}


def id_problem(call_id: str | None, target: Target) -> str | None:
    """Why ``target`` would refuse a call id on replay, or ``None`` when it accepts it.

    (Ids repeated within a transcript are refused by every target; repair checks that
    separately.)
    """
    provider = PROVIDERS[target]
    if not provider.id_required:
        return None
    if call_id is None:
        return "it has no id"
    if call_id == "":
        return "its id is empty"
    if provider.id_pattern is not None and provider.id_pattern.fullmatch(call_id) is None:
        return f"{target} ids must match ^{provider.id_pattern.pattern}$"
    if provider.id_max_length is not None and len(call_id) > provider.id_max_length:
        return f"{target} ids are at most {provider.id_max_length} characters"
    return None


def remapped_id(target: Target, position: int, index: int, original: str | None,
                attempt: int = 0) -> str:
    """The id that replaces a refused one: the target's prefix and 24 hex digits of the
    SHA-256 of ``(position, index, original id)`` (``attempt`` > 0 only to step past a
    collision)."""
    seed = f"{position}:{index}:{'' if original is None else original}"
    if attempt:
        seed += f":{attempt}"
    return PROVIDERS[target].id_prefix + hashlib.sha256(
        seed.encode("utf-8", "surrogatepass")).hexdigest()[:24]
