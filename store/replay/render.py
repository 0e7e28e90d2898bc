"""Render a (repaired) history as the request history a provider accepts (domain).

:func:`render` returns the history part of a request body for one target:

* ``openai-chat``: ``{"messages": [...]}``: system/developer/user/assistant/tool messages
  (:func:`store.replay.openai.render_openai_chat`);
* ``openai-responses``: ``{"input": [...]}``: message, function_call and
  function_call_output items (:func:`store.replay.openai.render_openai_responses`);
* ``anthropic``: ``{"system"?: str, "messages": [...]}``, strictly alternating
  (:func:`store.replay.anthropic.render_anthropic`);
* ``gemini``: ``{"systemInstruction"?: {...}, "contents": [...]}``, user/model contents
  (:func:`store.replay.gemini.render_gemini`);
* ``bedrock``: ``{"system"?: [...], "messages": [...]}``: Converse messages, alternating
  (:func:`store.replay.anthropic.render_bedrock`).

Rendering assumes a history from :func:`store.replay.repair.repair` (every call answered right after
its message, ids the target accepts) and never raises on one. Names are the current names
(``call.name``). Text-form targets get the call's ``arguments_text`` exactly as stored;
object-form targets get the parsed ``input``. Leading system/developer messages become the
system field of targets that have one (later ones: a message of their role for OpenAI, user
text elsewhere). Targets that need alternating roles get consecutive same-role messages
merged, tool results first in a user turn, and, when the history opens with the model, a
placeholder user turn (:data:`PLACEHOLDER_USER_TEXT`) in front. Empty messages are skipped.

``same_provider`` decides whether provider-private parts are echoed (Responses reasoning items
and item ids, Anthropic thinking signatures, Gemini thought parts, Bedrock reasoning blocks,
native images): ``True`` always, ``False`` never, ``None`` (default) per message, when the
message's ``source`` is in the target's family (:data:`SOURCE_FAMILIES`). Gemini thought
signatures on calls and text are always echoed to Gemini (it refuses a replayed call without).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from store.core.errors import UsageError
from store.core.model import Message
from store.core.transcript import StoredMessage, Transcript
from store.replay.anthropic import render_anthropic, render_bedrock
from store.replay.common import PLACEHOLDER_USER_TEXT, Native
from store.replay.gemini import render_gemini
from store.replay.openai import render_openai_chat, render_openai_responses
from store.replay.targets import TARGETS, Target

__all__ = ["PLACEHOLDER_USER_TEXT", "render"]

_RENDERERS: Mapping[Target, Callable[[Sequence[Message], Native], dict[str, Any]]] = {
    "openai-chat": render_openai_chat,
    "openai-responses": render_openai_responses,
    "anthropic": render_anthropic,
    "gemini": render_gemini,
    "bedrock": render_bedrock,
}


def render(messages: Sequence[Message | StoredMessage] | Transcript, target: Target, *,
           same_provider: bool | None = None) -> dict[str, Any]:
    """The provider-ready request history of ``messages`` for ``target`` (see module doc).

    ``messages``: ``Message`` values, or a loaded ``Transcript`` (or its ``messages``, the
    stored messages), whose messages are rendered in order."""
    if target not in TARGETS:
        raise UsageError(f"unknown render target {target!r}; expected one of {TARGETS}")
    items = messages.messages if isinstance(messages, Transcript) else messages
    plain = [m.message if isinstance(m, StoredMessage) else m for m in items]
    return _RENDERERS[target](plain, Native(target, same_provider))
