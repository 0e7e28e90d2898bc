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


def conversation_siblings(folder: str, names: Sequence[str]) -> set[str]:
    """The files a conversation's main file reads for the walk: everything in its ``events``
    and ``event_cache`` folders, and the conversation's other files (``init.json`` ...)."""
    here = Path(folder)
    if here.name in ("events", "event_cache") and any(
            (here.parent / main).is_file() for main in _MAINS):
        return set(names)
    main = next((m for m in _MAINS if m in names), None)
    if main is not None and (here / "events").is_dir():
        return set(names) - {main}
    return set()


AGENT = AgentDefinition(
    name="openhands",
    display_name="OpenHands",
    package=__name__,
    order=80,
    aside=conversation_siblings,
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
