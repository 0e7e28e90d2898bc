"""A session's title from its first real user prompt (domain; stdlib only).

Agent transcripts seldom store a title, and a file name (``rollout-2025-...jsonl``, a UUID)
tells a reader nothing. The first thing the user asked does, once what the agent wrapped
around it is left out: ``/command`` invocations and their output (Claude Code's
``<command-name>`` blocks), system reminders, environment and instruction blocks that Codex
sends as user messages, Cline's and Roo Code's environment details (their ``<task>`` and
``<user_message>`` tags are taken off the prompt), tool results, interruptions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from store.core.model import Message

__all__ = ["AGENT_MADE", "ORIGIN", "TITLE_CHARS", "prompt_title", "typed_prompt"]

#: A message's metadata key saying who wrote a user-role message, and its value for one the
#: agent made (a compaction summary, an extension's or a hook's message, an attachment list):
#: given to the model as the user's, never typed by a person. Claude Code's own ``isMeta``
#: (``is_meta``) says the same.
ORIGIN = "origin"
AGENT_MADE = "agent"

#: The longest title taken from a prompt (cut at a word, with an ellipsis).
TITLE_CHARS = 80

#: Blocks an agent puts into a user message that the user did not type.
_WRAPPERS = re.compile(
    r"<(system-reminder|command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|local-command-caveat|environment_context|user_instructions|"
    r"INSTRUCTIONS|user_shell_command|turn_aborted|ide_opened_file|ide_selection|"
    r"environment_details)>"
    r".*?</\1>", re.DOTALL)

#: Blocks around what the user typed (Cline's ``<task>``, Roo Code's ``<user_message>``):
#: their tags are left out, their text kept.
_UNWRAP = re.compile(r"<(task|user_message)>\s*(.*?)\s*</\1>", re.DOTALL)

#: Whole messages that are not a prompt (after the wrappers are removed).
_NOT_A_PROMPT = re.compile(
    r"^(/\S|\[Request interrupted|Caveat: The messages below|# AGENTS\.md instructions|"
    r"<[a-z_-]+>)")


def typed_prompt(message: Message) -> str | None:
    """What a person typed in ``message`` (a user message that is not tool results, a
    command's output, a reminder or an environment block the agent sent), without the
    agent's wrappers; ``None`` when it is not a prompt."""
    if message.role != "user" or message.tool_results:
        return None
    meta = message.metadata
    if meta and (meta.get(ORIGIN) == AGENT_MADE or meta.get("is_meta") is True
                 or meta.get("isMeta") is True):
        return None
    text = _UNWRAP.sub(r"\2", _WRAPPERS.sub("", message.text or "")).strip()
    if not text or _NOT_A_PROMPT.match(text):
        return None
    return text


def prompt_title(messages: Iterable[Message]) -> str | None:
    """The first line of the first user message a person typed, cut to
    :data:`TITLE_CHARS`; ``None`` when there is none. A NUL in it becomes U+FFFD (a title is
    display text, and PostgreSQL refuses NUL in a text column: such a prompt stopped the
    whole import there)."""
    for message in messages:
        text = typed_prompt(message)
        if text is None:
            continue
        line = next(line.strip() for line in text.splitlines() if line.strip())
        line = " ".join(line.split()).replace("\x00", "\ufffd")
        if len(line) > TITLE_CHARS:
            cut = line[:TITLE_CHARS - 1]
            word = cut.rsplit(" ", 1)[0]
            line = (word if len(word) > TITLE_CHARS // 2 else cut) + "…"
        return line
    return None
