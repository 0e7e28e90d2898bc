"""The tokens one response cost, read from what each agent records (domain).

Every agent's numbers become the same four counts, the ones Anthropic bills and ccusage
reports: ``input_tokens`` (input read neither from nor into a cache), ``output_tokens``
(reasoning included), ``cache_creation_tokens`` and ``cache_read_tokens``; plus
``reasoning_tokens`` (of the output) where the agent says.

* **Claude Code / Anthropic** (``message.usage``): ``input_tokens``, ``output_tokens``,
  ``cache_creation_input_tokens``, ``cache_read_input_tokens`` as they are.
* **Codex** (``event_msg`` ``token_count``, ``info.last_token_usage``; OpenAI counts):
  ``input_tokens`` *includes* ``cached_input_tokens``, so input is the difference and the
  cached part is the cache read; ``output_tokens`` includes ``reasoning_output_tokens``.
* **Gemini CLI** (a message's ``tokens``: ``input`` = ``promptTokenCount``, which includes
  ``cached``; ``output`` = ``candidatesTokenCount``; ``thoughts``; ``tool`` =
  ``toolUsePromptTokenCount``): input is ``input - cached + tool``, output ``output +
  thoughts`` (thinking is billed as output), cache read ``cached``.
* **Qwen Code** (an assistant record's ``usageMetadata``: the Gemini API's
  ``GenerateContentResponseUsageMetadata``, ``promptTokenCount`` ...; early JSON-lines
  versions wrote Gemini CLI's short names ``input``, ``output``, ``cached``, ``thoughts``,
  ``tool``): read as Gemini CLI's, the API's field meanings (``promptTokenCount`` includes
  ``cachedContentTokenCount``; ``thoughtsTokenCount`` apart from ``candidatesTokenCount``).
* **Kimi CLI** (a wire ``StatusUpdate``'s ``token_usage``, kosong's ``TokenUsage``):
  ``input_other`` (input neither read from nor written to a cache), ``output``,
  ``input_cache_read``, ``input_cache_creation``: the four counts as they are.
* **OpenCode** (an assistant message's ``tokens``: ``input`` already without the cached
  parts, ``output``, ``reasoning`` apart from it, ``cache.read``, ``cache.write``): input as
  it is, output ``output + reasoning``, cache creation ``cache.write``, cache read
  ``cache.read``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from store.core.pickling import pickled_by_fields

__all__ = ["SESSION_TOTALS", "TokenUsage", "anthropic_usage", "codex_usage", "copilot_cli_usage",
           "gemini_cli_usage", "kimi_cli_usage", "opencode_usage", "qwen_code_usage"]


#: ``response_id`` of a usage that is a session's totals as the agent last recorded them (Goose
#: counts tokens per session only): it sits on the session's first response and each read
#: replaces it (:func:`store.db.reading.usage.record_usage`), so a session that grew is counted
#: once.
SESSION_TOTALS = "session-totals"


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class TokenUsage:
    """The tokens of one response, with the model that answered and the provider's ids."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    reasoning_tokens: int = 0
    model: str | None = None
    request_id: str | None = None
    response_id: str | None = None

    @property
    def total(self) -> int:
        return (self.input_tokens + self.output_tokens + self.cache_creation_tokens
                + self.cache_read_tokens)

    def __add__(self, other: TokenUsage) -> TokenUsage:
        """Two responses recorded against one message (Codex: two requests before the next
        item): their counts summed, the later one's model and ids."""
        return TokenUsage(self.input_tokens + other.input_tokens,
                          self.output_tokens + other.output_tokens,
                          self.cache_creation_tokens + other.cache_creation_tokens,
                          self.cache_read_tokens + other.cache_read_tokens,
                          self.reasoning_tokens + other.reasoning_tokens,
                          other.model or self.model, other.request_id or self.request_id,
                          other.response_id or self.response_id)


def _count(value: Any) -> int:
    """A token count: a non-negative integer, anything else 0 (bool is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return 0
    return max(int(value), 0)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _usage_or_none(usage: TokenUsage) -> TokenUsage | None:
    return usage if usage.total or usage.reasoning_tokens else None


def anthropic_usage(usage: Any, *, model: Any = None, request_id: Any = None,
                    response_id: Any = None) -> TokenUsage | None:
    """An Anthropic ``usage`` object (Claude Code's ``message.usage``); ``None`` when it is
    not one or counts nothing."""
    if not isinstance(usage, Mapping):
        return None
    return _usage_or_none(TokenUsage(
        _count(usage.get("input_tokens")), _count(usage.get("output_tokens")),
        _count(usage.get("cache_creation_input_tokens")),
        _count(usage.get("cache_read_input_tokens")), 0,
        _text(model), _text(request_id), _text(response_id)))


def codex_usage(last: Any, *, model: Any = None) -> TokenUsage | None:
    """A Codex ``token_count`` event's ``last_token_usage`` (OpenAI counts: cached input is
    part of the input, reasoning part of the output)."""
    if not isinstance(last, Mapping):
        return None
    cached = _count(last.get("cached_input_tokens"))
    total_input = _count(last.get("input_tokens"))
    return _usage_or_none(TokenUsage(
        max(total_input - cached, 0), _count(last.get("output_tokens")), 0, min(cached,
                                                                                total_input),
        _count(last.get("reasoning_output_tokens")), _text(model)))


def copilot_cli_usage(metric: Any, *, model: Any = None) -> TokenUsage | None:
    """A Copilot CLI ``session.shutdown`` per-model metric's ``usage``
    (``ShutdownModelMetricUsage``): ``inputTokens`` counts the cache reads too, as OpenAI's
    prompt tokens do, so input is the difference."""
    usage = metric.get("usage") if isinstance(metric, Mapping) else None
    if not isinstance(usage, Mapping):
        return None
    read = _count(usage.get("cacheReadTokens"))
    return _usage_or_none(TokenUsage(
        max(_count(usage.get("inputTokens")) - read, 0), _count(usage.get("outputTokens")),
        _count(usage.get("cacheWriteTokens")), read, _count(usage.get("reasoningTokens")),
        _text(model)))


def gemini_cli_usage(tokens: Any, *, model: Any = None,
                     response_id: Any = None) -> TokenUsage | None:
    """A Gemini CLI message's ``tokens`` (``input`` includes ``cached``; ``thoughts`` and
    ``tool`` are counted apart from ``output`` and ``input``)."""
    if not isinstance(tokens, Mapping):
        return None
    cached = _count(tokens.get("cached"))
    prompt = _count(tokens.get("input"))
    thoughts = _count(tokens.get("thoughts"))
    return _usage_or_none(TokenUsage(
        max(prompt - cached, 0) + _count(tokens.get("tool")),
        _count(tokens.get("output")) + thoughts, 0, min(cached, prompt), thoughts,
        _text(model), None, _text(response_id)))


#: The Gemini API's usage field names, as Gemini CLI's short ones.
_GEMINI_API_NAMES = {"promptTokenCount": "input", "candidatesTokenCount": "output",
                     "cachedContentTokenCount": "cached", "thoughtsTokenCount": "thoughts",
                     "toolUsePromptTokenCount": "tool"}


def qwen_code_usage(metadata: Any, *, model: Any = None,
                    response_id: Any = None) -> TokenUsage | None:
    """A Qwen Code assistant record's ``usageMetadata`` (the Gemini API's names, or Gemini
    CLI's short ones in early versions), counted as :func:`gemini_cli_usage` counts."""
    if not isinstance(metadata, Mapping):
        return None
    if any(name in metadata for name in _GEMINI_API_NAMES):
        metadata = {short: metadata.get(name) for name, short in _GEMINI_API_NAMES.items()}
    return gemini_cli_usage(metadata, model=model, response_id=response_id)


def kimi_cli_usage(usage: Any, *, model: Any = None,
                   response_id: Any = None) -> TokenUsage | None:
    """A Kimi CLI ``StatusUpdate.token_usage`` (kosong ``TokenUsage``: ``input_other`` is the
    input apart from the cache reads and writes)."""
    if not isinstance(usage, Mapping):
        return None
    return _usage_or_none(TokenUsage(
        _count(usage.get("input_other")), _count(usage.get("output")),
        _count(usage.get("input_cache_creation")), _count(usage.get("input_cache_read")), 0,
        _text(model), None, _text(response_id)))


def opencode_usage(tokens: Any, *, model: Any = None,
                   response_id: Any = None) -> TokenUsage | None:
    """An OpenCode assistant message's ``tokens`` (input without the cache; reasoning counted
    apart from ``output``)."""
    if not isinstance(tokens, Mapping):
        return None
    cache = tokens.get("cache")
    cache = cache if isinstance(cache, Mapping) else {}
    reasoning = _count(tokens.get("reasoning"))
    return _usage_or_none(TokenUsage(
        _count(tokens.get("input")), _count(tokens.get("output")) + reasoning,
        _count(cache.get("write")), _count(cache.get("read")), reasoning,
        _text(model), None, _text(response_id)))
