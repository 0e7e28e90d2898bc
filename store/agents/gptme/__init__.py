"""gptme: one folder per conversation, its messages in ``conversation.jsonl`` (the definition).

gptme (``gptme/gptme``) keeps each conversation in ``<logs>/<name>/``, where ``<logs>`` is
``$GPTME_LOGS_HOME``, else its data folder's ``logs`` (``gptme/dirs.py``: ``$XDG_DATA_HOME/gptme``
when that is set, else ``~/.local/share/gptme`` when it exists, on any platform, else
platformdirs' ``user_data_dir("gptme")``: ``~/.local/share/gptme`` on Linux,
``~/Library/Application Support/gptme`` on macOS, ``%LOCALAPPDATA%\\gptme\\gptme`` on Windows,
where platformdirs repeats the app's name as its author). The folder holds
``conversation.jsonl`` (the main branch, one ``Message.to_dict()`` a line: ``role``,
``content``, ``timestamp`` ...), ``config.toml`` (``[chat]``: ``name``, ``model``,
``workspace``, ``tool_format``), ``events.jsonl`` (an append-only event log with checkpoints),
``branches/<branch>.jsonl`` and ``views/<view>.jsonl`` (other branches and compacted views,
copies of the conversation's states), a ``workspace`` link to the project, and a subagent's
``control.jsonl``. Only ``conversation.jsonl`` is read as a session; ``config.toml`` is read
with it; the rest is left aside (a walk neither reads the other files nor enters the
sub-folders of a conversation's folder).

A ``conversation.jsonl`` below a ``gptme/logs`` folder is proven gptme's; elsewhere (a moved
``$GPTME_LOGS_HOME``) the name with records of gptme's own shape (only ``Message`` fields, a
``timestamp``) is strong, records of that shape alone likely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from store.agents.homes import AgentFolders
from store.agents.registry import LIKELY, PROVEN, STRONG, AgentDefinition, Sample

__all__ = ["AGENT", "CONVERSATION", "MESSAGE_FIELDS"]

#: The main branch's file in a conversation's folder (``logmanager/manager.py``).
CONVERSATION = "conversation.jsonl"
#: What ``Message.to_dict`` writes (``message.py``).
MESSAGE_FIELDS = frozenset({"role", "content", "timestamp", "files", "file_hashes", "pinned",
                            "hide", "ephemeral_ttl", "call_id", "metadata"})
_ROLES = frozenset({"system", "user", "assistant"})


def _in_logs(path: Path) -> bool:
    """A conversation's file in a gptme logs folder (``.../gptme/logs/<name>/`` or Windows'
    ``.../gptme/gptme/logs/<name>/``)."""
    parts = path.parts
    return len(parts) >= 4 and parts[-3] == "logs" and parts[-4] == "gptme"


def _gptme_shape(top: Mapping[str, object]) -> bool:
    return (top.get("role") in _ROLES and isinstance(top.get("content"), str)
            and isinstance(top.get("timestamp"), str) and set(top) <= MESSAGE_FIELDS)


def detect(path: Path | None, first: Sequence[Sample]) -> float:
    """Proven in gptme's logs folder; strong for its file name with records of gptme's shape;
    likely for the shape alone (every first record a gptme message)."""
    tops = [s.top for s in first]
    if not tops or any(t is None or not _gptme_shape(t) for t in tops):
        return 0.0
    if path is not None and path.name == CONVERSATION:
        return PROVEN if _in_logs(path) else STRONG
    return LIKELY


def _aside(folder: str, files: Sequence[str]) -> set[str]:
    """A conversation's folder: every file but ``conversation.jsonl`` (its config, its event
    log, a model trace, a subagent's control file)."""
    if CONVERSATION not in files:
        return set()
    return {f for f in files if f != CONVERSATION}


def _aside_folders(folders: Sequence[str], files: Sequence[str]) -> set[str]:
    """A conversation's sub-folders: branches, views, attachments, the workspace link."""
    return set(folders) if CONVERSATION in files else set()


AGENT = AgentDefinition(
    name="gptme",
    display_name="gptme",
    package=__name__,
    order=293,
    detect=detect,
    # dirs.py get_logs_dir(): $GPTME_LOGS_HOME, else get_data_dir()/logs; get_data_dir():
    # $XDG_DATA_HOME/gptme, else ~/.local/share/gptme if it exists, else platformdirs'
    # user_data_dir("gptme") (macOS: ~/Library/Application Support/gptme; Windows:
    # %LOCALAPPDATA%\gptme\gptme).
    homes=(AgentFolders("gptme", "GPTME_LOGS_HOME", ".local/share/gptme/logs", (".",),
                        xdg_app="gptme/logs"),
           AgentFolders("gptme", None, "Library/Application Support/gptme", ("logs",)),
           AgentFolders("gptme", "LOCALAPPDATA", "AppData/Local", ("gptme/gptme/logs",))),
    lines=True,
    aside=_aside,
    aside_folders=_aside_folders,
    kinds={
        "system": "message (the system prompt, a tool's output: a result when it follows a"
                  " call, by `call_id` or by place)",
        "user": "message (what the user typed; a hidden one is marked as the agent's)",
        "assistant": "message (its text; the calls written in it read out as calls)",
    },
    records={
        "calls": "none as records → the calls written in a reply: fenced blocks whose"
                 " language is a tool's (`shell`, `ipython`, `save <path>`, `patch <path>`,"
                 " `append <path>`, `read <path>` ...) and `@tool(call_id): {json}` lines"
                 " (the tool format) → calls",
        "results": "`system` messages → results: by `call_id` (tool format), else the ones"
                   " after a reply, one per call in order",
        "errors": "no flag → the output's words: `Error executing tool`, `Error during"
                  " execution`, a non-zero `Return code:`, `Command denied`, a timeout, an"
                  " interruption, `Operation aborted` (a declined call) → error results; a"
                  " call with no output → no result",
        "times": "every message's `timestamp` (local time, no zone: read as UTC) → message"
                 " times, session start and end",
        "cwd": "`config.toml` `[chat] workspace`",
        "model": "`config.toml` `[chat] model`, each reply's `metadata.model`",
        "title": "`config.toml` `[chat] name`, else the first prompt",
        "usage": "each reply's `metadata.usage` (input, output, cache read, cache creation)"
                 " → one usage row per reply; `metadata.cost` kept",
        "lineage": "— in a subagent's files → its folder `subagent-<id>-xxxx` linked to the"
                   " sibling conversation whose `subagent(\"<id>\", ...)` call started it",
        "not recorded": "call ids in the markdown format, the time zone, who approved a call,"
                        " a declined call's reason; branches and views are left aside",
    },
    tools={"shell": "bash", "ipython": "python", "py": "python", "save": "write",
           "append": "edit", "patch": "edit", "read": "read", "browser": "browser",
           "tmux": "bash_io", "todo": "todo", "subagent": "task", "complete": "finish",
           "clarify": "ask_user", "choice": "ask_user", "elicit": "ask_user",
           "form": "ask_user", "morph": "edit", "hashline_edit": "edit",
           "patch_anchored": "edit", "patch_many": "edit", "view_anchored": "read"},
)
