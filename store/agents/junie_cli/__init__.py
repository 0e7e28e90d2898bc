"""Junie CLI (JetBrains): ``~/.junie/sessions/<session id>/events.jsonl`` (the definition).

Junie's CLI is closed source. Its files are known from what they show and from what other
archives found in them (see ``reader.py``): one ``events.jsonl`` per session, lines ``{kind:
UserPromptEvent | SessionA2uxEvent | TaskState | SendToAgentEvent, ...}``, and an
``index.jsonl`` beside the session folders (id, created and updated times in ms, task name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, AgentDefinition, Sample

__all__ = ["AGENT", "JUNIE_KINDS", "event_kind"]

#: The top-level kinds of Junie's event lines.
_TOP = frozenset({"UserPromptEvent", "SessionA2uxEvent", "TaskState", "SendToAgentEvent"})

#: Every kind the reader knows (a ``SessionA2uxEvent`` is told by its ``agentEvent.kind``).
JUNIE_KINDS: dict[str, str] = {
    "UserPromptEvent": "message: what the user typed",
    "TerminalBlockUpdatedEvent": "message: a `terminal` call (its `command`), its last update "
                                 "the result (`output`)",
    "ViewFilesBlockUpdatedEvent": "message: a `view_files` call (`files[].relativePath`)",
    "FileChangesBlockUpdatedEvent": "message: a `file_changes` call (`changes[]` paths)",
    "ToolBlockUpdatedEvent": "message: a `tool` call (`text`), its last update the result "
                             "(`details`)",
    "ResultBlockUpdatedEvent": "message: the agent's answer (`result`)",
    "AgentFailureEvent": "message (system): the agent's failure (`message`)",
    "LlmResponseMetadataEvent": "skipped: usage per model (`modelUsage`), stored as usage",
    "AgentCurrentStatusUpdatedEvent": "skipped: a status line (`Sending LLM request`)",
    "AgentStateUpdatedEvent": "skipped: the agent's serialized state",
    "AgentTaskNameUpdatedEvent": "skipped: the task's name (the index's `taskName` titles)",
    "AgentPatchCreatedEvent": "skipped: a patch of the task's changes",
    "TaskState": "skipped: the task's state",
    "SendToAgentEvent": "skipped: a prompt handed to the agent (the prompt is its own event)",
}


def event_kind(record: Any) -> str | None:
    """A line's kind: a ``SessionA2uxEvent``'s ``event.agentEvent.kind``, else ``kind``."""
    if not isinstance(record, Mapping):
        return None
    kind = record.get("kind")
    if kind == "SessionA2uxEvent":
        event = record.get("event")
        agent_event = event.get("agentEvent") if isinstance(event, Mapping) else None
        inner = agent_event.get("kind") if isinstance(agent_event, Mapping) else None
        return inner if isinstance(inner, str) else kind
    return kind if isinstance(kind, str) else None


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """Junie's own event envelope (``SessionA2uxEvent`` with its ``agentEvent``, a
    ``UserPromptEvent`` with its ``prompt``) proves it."""
    for sample in first:
        raw = sample.raw
        if not isinstance(raw, Mapping) or raw.get("kind") not in _TOP:
            continue
        event = raw.get("event")
        if (raw["kind"] == "SessionA2uxEvent" and isinstance(event, Mapping)
                and isinstance(event.get("agentEvent"), Mapping)) or (
                raw["kind"] == "UserPromptEvent" and isinstance(raw.get("prompt"), str)):
            return PROVEN
    return 0.0


def _index(folder: str, files: Sequence[str]) -> set[str]:
    """The sessions' ``index.jsonl`` beside their folders (read with each session)."""
    if "index.jsonl" in files and Path(folder).name == "sessions":
        return {"index.jsonl"}
    return set()


AGENT = AgentDefinition(
    name="junie-cli",
    display_name="Junie CLI",
    package=__name__,
    order=264,
    detect=detect,
    # (no variable that moves it is documented; the same place on macOS and Windows:
    # %USERPROFILE%\.junie)
    homes=(AgentFolders("junie-cli", None, ".junie", ("sessions",)),),
    lines=True,
    kind_of=event_kind,
    kinds=JUNIE_KINDS,
    aside=_index,
    records={
        "calls": ("step blocks (`TerminalBlockUpdatedEvent`, `ViewFilesBlockUpdatedEvent`, "
                  "`FileChangesBlockUpdatedEvent`, `ToolBlockUpdatedEvent`), updated by "
                  "`stepId` → one call per step, its id the step's"),
        "results": ("the step's last update (`output`, `details`; `COMPLETED`) → linked; "
                    "a step never completed → no result"),
        "errors": "a step whose status says it failed → error results; `AgentFailureEvent` kept",
        "times": ("— per event → `index.jsonl` `createdAt`/`updatedAt` (ms), else the "
                  "folder's name (local time)"),
        "cwd": "— → none",
        "model": "`LlmResponseMetadataEvent` `modelUsage[].model`",
        "title": "`index.jsonl` `taskName`, else the first prompt",
        "usage": ("`modelUsage[]` per response (input, cache input, cache create, output) "
                  "→ usage rows; `cost` summed in metadata"),
        "lineage": "— (task folders inside a session hold the agent's state) → none",
        "not recorded": "per-event times, cwd, exit codes, the agent's text between steps",
    },
    tools={"terminal": "bash", "view_files": "read", "file_changes": "edit"},
)
