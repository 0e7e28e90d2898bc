"""Gemini CLI: ``~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json[l]`` (definition).

One JSON document rewritten as the chat goes on or, since v0.39.0, JSON lines (a metadata
line, message records upserted by ``id``, ``$set`` updates, ``$rewindTo`` rewinds).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from store.agents.homes import AgentFolders
from store.agents.registry import STRONG, AgentDefinition, Sample

#: A chat document: a session id and its messages (below a Cline SDK document's claim).
_DOCUMENT = 0.85


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A JSON-lines header (``sessionId`` and ``projectHash``) or a ``$set`` / ``$rewindTo``
    line prove it; a document with a ``sessionId`` and ``messages`` is nearly as sure."""
    best = 0.0
    for sample in first:
        top = sample.top
        if isinstance(sample.raw, dict) and ("$set" in sample.raw or "$rewindTo" in sample.raw):
            return STRONG
        if top is None or "session_id" not in top:
            continue
        if "project_hash" in top:
            return STRONG
        if isinstance(top.get("messages"), list):
            best = _DOCUMENT
    return best


AGENT = AgentDefinition(
    name="gemini-cli",
    display_name="Gemini CLI",
    package=__name__,
    order=30,
    detect=detect,
    homes=(AgentFolders("gemini-cli", "GEMINI_CLI_HOME", ".gemini", ("tmp/*/chats",),
                        env_is_user_home=True),),
    records={
        "calls": "`toolCalls` of a `gemini` message → calls",
        "results": (
            "each call's `result` (`functionResponse`), `resultDisplay` → results in a tool "
            "message after the call"
        ),
        "errors": (
            "`status: \"error\"` → error results; `cancelled` kept as the status; no result and no "
            "final status → no result"
        ),
        "times": "each message's `timestamp`, `startTime` → message times",
        "cwd": (
            "— (only `projectHash`, a hash of the project root; subagent chats list "
            "`directories`) → no cwd"
        ),
        "model": "each `gemini` message's `model`",
        "title": "`summary` (kept in metadata) → the first real prompt",
        "usage": (
            "`tokens` per `gemini` message (input, output, cached, thoughts, tool) → one usage "
            "row per message"
        ),
        "lineage": (
            "subagent chats (`kind: \"subagent\"`) in `chats/<parent session id>/` → `subagent` (no"
            " parent call id is written)"
        ),
        "not recorded": (
            "who approved a call (approval mode is not written); the working folder itself; tool "
            "definitions"
        ),
    },
)
