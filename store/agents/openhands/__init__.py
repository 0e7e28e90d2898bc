"""OpenHands: a conversation's ``base_state.json`` (V1) or ``metadata.json`` (V0) beside its
``events`` folder, read with its events (the agent's definition)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from store.agents.homes import AgentFolders
from store.agents.registry import PROVEN, AgentDefinition, Sample

__all__ = ["AGENT", "conversation_main"]

_MAINS = ("base_state.json", "metadata.json")


def conversation_main(path: Path) -> bool:
    """True for an OpenHands conversation's main file (beside its ``events`` folder)."""
    return path.name in _MAINS and (path.parent / "events").is_dir()


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A conversation's main file (by its name and its ``events`` folder)."""
    return PROVEN if path is not None and conversation_main(path) else 0.0


AGENT = AgentDefinition(
    name="openhands",
    display_name="OpenHands",
    package=__name__,
    order=80,
    detect=detect,
    # The SDK / CLI conversations (V1) and the file store's sessions (V0).
    homes=(AgentFolders("openhands", "OH_PERSISTENCE_DIR", ".openhands",
                        ("conversations", "sessions")),),
    records={
        "calls": "V1 `ActionEvent`; V0 actions with `tool_call_metadata`",
        "results": "`ObservationEvent`; V0 observations",
        "errors": "`is_error`, rejections, agent errors; V0 `error` / `success: false`",
        "times": "event `timestamp`",
        "cwd": "V1 `workspace.working_dir`",
        "model": "V1 `agent.llm.model`; V0 `llm_model`",
        "title": "first prompt; V0 `title`",
        "usage": "per response (V1 `token_usages`, V0 `model_response.usage`)",
        "lineage": "V1 `subagents/` -> `parent_session`",
        "not recorded": (
            "V0 cwd; V0 delegates (same event stream); the delegate call id of a V1 sub-agent; "
            "app-server event files without `.json`"
        ),
    },
)
