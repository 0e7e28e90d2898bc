"""OpenCode: its SQLite database (``opencode.db``), and the session files of the JSON
storage of earlier versions (the agent's definition)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.agents.homes import AgentFolders
from store.agents.registry import LIKELY, PROVEN, STRONG, AgentDefinition, DatabaseLayout, Sample

__all__ = ["AGENT", "is_opencode_session", "is_session_info"]

def is_session_info(record: Any) -> bool:
    """An OpenCode session info's shape without ``projectID`` (which the reader does not
    need: the session's folder is its project)."""
    return (isinstance(record, Mapping) and isinstance(record.get("id"), str)
            and record["id"].startswith("ses_") and "directory" in record
            and isinstance(record.get("time"), Mapping))


def is_opencode_session(record: Any) -> bool:
    """True for an OpenCode session info (a ``storage/session/<project>/<id>.json`` file)."""
    return (isinstance(record, Mapping) and isinstance(record.get("id"), str)
            and "projectID" in record and "directory" in record and "title" in record
            and isinstance(record.get("time"), Mapping))


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """A session info file of the JSON storage proves it; one without its ``projectID`` (a
    field the reader does not need) in the storage's ``session/<project>/`` folder nearly."""
    if any(is_opencode_session(s.raw) for s in first):
        return PROVEN
    if any(is_session_info(s.raw) for s in first):
        in_storage = path is not None and path.parent.parent.name == "session"
        return STRONG if in_storage else LIKELY
    return 0.0


def _tables(tables: Mapping[str, set[str]]) -> bool:
    return {"session", "message", "part"} <= set(tables)


def _settings(folder: str, files: Sequence[str]) -> set[str]:
    """OpenCode's own files beside its database (``auth.json`` holds credentials)."""
    if any(f == "opencode.db" or (f.startswith("opencode-") and f.endswith(".db"))
           for f in files):
        return {"auth.json", "mcp-auth.json"} & set(files)
    return set()


AGENT = AgentDefinition(
    name="opencode",
    display_name="OpenCode",
    package=__name__,
    order=90,
    detect=detect,
    homes=(AgentFolders("opencode", None, ".local/share/opencode",
                        ("opencode.db", "opencode-*.db", "storage/session"),
                        xdg_app="opencode"),),
    database=DatabaseLayout(
        {"session": "time_created, id", "message": "time_created, id",
         "part": "message_id, id"}, _tables, "read_opencode_db",
        file_names=("opencode.db", "opencode-*.db")),
    aside=_settings,
    records={
        "calls": "yes",
        "results": "yes (from the call's final state)",
        "errors": "tool `error` state",
        "times": "message `time.created` (ms)",
        "cwd": "session `directory`",
        "model": "per assistant message",
        "title": "the agent's",
        "usage": "per assistant message (input, output + reasoning, cache read / write)",
        "lineage": "subagent sessions (`parent_session`, `parent_call_id`)",
        "not recorded": "results of calls still running",
    },
)
