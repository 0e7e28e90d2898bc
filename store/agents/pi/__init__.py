"""pi (pi-coding-agent) and Oh My Pi: JSON-lines session trees (the agent's definition).

pi writes ``~/.pi/agent/sessions/--<cwd with / as ->--/<time>_<session id>.jsonl``: a
``session`` header (``version`` 3, ``id``, ``timestamp``, ``cwd``, ``parentSession``), then
entries with ``id``, ``parentId`` and ``timestamp`` (a tree: a branch goes on from an older
entry in the same file): ``message`` (pi-ai messages: ``user``, ``assistant`` with ``model``,
``usage`` and its ``cost``, ``toolResult``; pi's own ``bashExecution``, ``custom``),
``model_change``, ``thinking_level_change``, ``compaction``, ``branch_summary``, ``custom``,
``custom_message``, ``label``, ``session_info``. Oh My Pi (``can1357/oh-my-pi``), a fork,
writes the same files below ``~/.omp/agent/sessions`` (a ``title`` in the header, a
``model_change`` naming ``provider/model``, ``ttsr_injection`` entries) and its subagents'
sessions beside the parent's file, in ``<parent file's stem>/<task id>.jsonl``: its files are
read as pi's, their sessions tagged ``oh-my-pi``.

Kward's files share the ``session`` header, so they are told apart: pi's header names no
``provider``/``model`` (v3) or names pi's own ``modelId``/``thinkingLevel`` (v1), and its
entries are of pi's own kinds; a file in pi's or Oh My Pi's sessions folder is pi's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "PI_ROLES", "PI_TYPES"]

#: Entry types only pi (and Oh My Pi) write.
PI_TYPES = frozenset({"model_change", "thinking_level_change", "custom", "custom_message",
                      "ttsr_injection"})
#: Message roles pi adds to the pi-ai ones (and ``toolResult``, pi-ai's own spelling).
PI_ROLES = frozenset({"toolResult", "bashExecution", "custom", "hookMessage", "branchSummary",
                      "compactionSummary", "fileMention"})
#: Header keys of pi's v1 sessions (before the tree).
_V1_HEADER = frozenset({"model_id", "thinking_level", "system_prompt", "branched_from"})


def _in_sessions_folder(path: Path | None) -> bool:
    if path is None:
        return False
    parts = path.parts
    for i in range(len(parts) - 2):
        if parts[i] in (".pi", ".omp") and parts[i + 1] == "agent" and parts[i + 2] == "sessions":
            return True
    return False


def _pi_message(top: Mapping[str, object]) -> bool:
    message = top.get("message")
    if not isinstance(message, Mapping):
        return False
    role = message.get("role")
    if role in PI_ROLES:
        return True
    if role == "assistant" and ("stopReason" in message or "api" in message):
        return True
    stamp = message.get("timestamp")
    return isinstance(stamp, int | float) and not isinstance(stamp, bool)


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A ``session`` header in pi's sessions folder proves it; a header of pi's shape with an
    entry of pi's own kind (or a v1 header of pi's own keys) is strong, above Kward's claim on
    the header alone."""
    header = None
    for sample in first:
        if sample.top is not None and sample.top.get("type") == "session":
            header = sample.top
            break
    if header is None or "id" not in header:
        return 0.0
    if _in_sessions_folder(path) and "timestamp" in header:
        return PROVEN
    if header.keys() & _V1_HEADER and "cwd" in header:
        return STRONG
    if "provider" in header or "model" in header:
        return 0.0
    for sample in first:
        top = sample.top
        if top is None:
            continue
        if top.get("type") in PI_TYPES or (top.get("type") == "message" and _pi_message(top)):
            return STRONG
    return 0.0


AGENT = AgentDefinition(
    name="pi",
    display_name="pi (and Oh My Pi)",
    package=__name__,
    order=200,
    detect=detect,
    # config.ts getAgentDir: $PI_CODING_AGENT_DIR, else ~/.pi/agent (homedir() on every
    # platform: %USERPROFILE%\.pi\agent on Windows); Oh My Pi's: $OMP_CODING_AGENT_DIR, else
    # ~/.omp/agent.
    homes=(AgentFolders("pi", "PI_CODING_AGENT_DIR", ".pi/agent", ("sessions",)),
           AgentFolders("pi", "OMP_CODING_AGENT_DIR", ".omp/agent", ("sessions",))),
    lines=True,
    # A grown file is read whole again (its keys store nothing twice): the header, the
    # title and the model are needed from before any offset.
    kinds={
        "session": "skipped: the header (id, cwd, start, parent session: read into the session)",
        "message": "message (user, assistant, toolResult, bashExecution, custom ...)",
        "compaction": "message (the compaction's summary, as the model is given it)",
        "branch_summary": "message (the summary of a branch left)",
        "custom_message": "message (an extension's message given to the model)",
        "model_change": "skipped: a model switch (the session's model when no reply names one)",
        "thinking_level_change": "skipped: a thinking level switch",
        "custom": "skipped: an extension's own state (never given to the model)",
        "label": "skipped: a user's bookmark on an entry",
        "session_info": "skipped: the session's name (the title)",
        "ttsr_injection": "skipped: Oh My Pi's rules injected (their names)",
        "event": "skipped: an agent event of early v1 sessions",
    },
    records={
        "calls": "assistant `toolCall` blocks → calls",
        "results": "`toolResult` messages by `toolCallId` → linked (`details` kept)",
        "errors": "`isError` → error results; a call with no result → no result; an"
                  " assistant's `stopReason: error` and `errorMessage` → kept in its metadata",
        "times": "header `timestamp` → session start; every entry's `timestamp` → message"
                 " times and session end",
        "cwd": "header `cwd`",
        "model": "assistant `model` (and `provider`), else `model_change`",
        "title": "`session_info` name (pi), header `title` (Oh My Pi), else the first real"
                 " prompt",
        "usage": "assistant `usage` (input, output, cache read, cache write; `cost` kept in"
                 " the message metadata) → one usage row per reply",
        "lineage": "header `parentSession` → `fork`; Oh My Pi subagents"
                   " (`<parent>/<task id>.jsonl`) → `subagent` with the `task` call; branches"
                   " inside one file → messages in file order, `parentId` kept",
        "not recorded": "who approved a call; the system prompt and tool definitions (v3)",
    },
    tools={"bash": "bash", "read": "read", "write": "write", "edit": "edit", "find": "glob",
           "grep": "grep", "ls": "list", "task": "task", "python": "python",
           "web_fetch": "web_fetch", "web_search": "web_search", "todo_write": "todo",
           "ask": "ask_user", "notebook": "notebook", "complete": "finish"},
)
