"""Tools whose arguments say what they did: the sub-command of an editor tool (domain).

One tool name may read, create or change a file: OpenHands' ``str_replace_editor`` and
``file_editor``, Goose's ``developer__text_editor``, Copilot CLI's ``str_replace_editor`` and
Anthropic's text editor tool (``str_replace_based_edit_tool``) take a ``command`` argument
(``view``, ``create``/``write``, ``str_replace``, ``insert``, ``undo_edit``). Naming every
such call ``edit`` answers "which files did the agents read, which did they write" wrongly,
so a call's **action** (:func:`tool_action`, the value of that argument) is part of how it is
named: the vocabulary has rows for ``<raw name>#<action>`` (:func:`action_key`;
``str_replace_editor#view`` -> ``read``), which win over the raw name's own row
(``store.tools.names.AliasTable.resolve``). The raw name is kept as recorded; an action the
vocabulary has no row for is named by the raw name's row, as before.

Sources: OpenHands ``openhands/agenthub/codeact_agent/tools/str_replace_editor.py`` and
``software-agent-sdk`` ``openhands-tools/openhands/tools/file_editor/definition.py``
(``command``: view, create, str_replace, insert, undo_edit); Goose
``crates/goose-mcp/src/developer/`` text_editor (view, write, str_replace, insert,
undo_edit); Anthropic's text editor tool
(https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/text-editor-tool: view, create,
str_replace, insert, undo_edit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ACTION_ARGUMENT", "ACTION_ROWS", "action_key", "split_action_key", "tool_action"]

#: Raw tool name -> the argument that names its action.
ACTION_ARGUMENT: Mapping[str, str] = {
    "str_replace_editor": "command",
    "file_editor": "command",
    "planning_file_editor": "command",
    "developer__text_editor": "command",
    "str_replace_based_edit_tool": "command",
    "text_editor": "command",
    # Hermes Agent (NousResearch/hermes-agent tools/file_tools.py): ``patch`` edits by
    # ``mode`` (replace: old/new strings; patch: a V4A patch), ``search_files`` searches
    # file contents or names by ``target``.
    "patch": "mode",
    "search_files": "target",
    # Amazon Q Developer CLI / Kiro CLI (aws/amazon-q-developer-cli @15cc8f3c
    # crates/chat-cli/src/cli/chat/tools/fs_write.rs, fs_read.rs): ``fs_write`` by ``command``
    # (create, str_replace, insert, append), ``fs_read`` by ``mode`` (Line, Directory,
    # Search, Image; newer versions batch them in ``operations``: named by the raw name).
    "fs_write": "command",
    "fs_read": "mode",
}

_EDITOR_ACTIONS = {"view": "read", "create": "write", "write": "write", "str_replace": "edit",
                   "insert": "edit", "undo_edit": "edit"}

#: Each tool's actions and what each is in the vocabulary (the editors' by default).
_ACTIONS: Mapping[str, Mapping[str, str]] = {
    "patch": {"replace": "edit", "patch": "patch"},
    "search_files": {"content": "grep", "files": "glob"},
    "fs_write": {"create": "write", "str_replace": "edit", "insert": "edit", "append": "edit"},
    "fs_read": {"Line": "read", "Directory": "list", "Search": "grep", "Image": "read"},
}

#: The vocabulary rows of the actions: ``(None, "<raw>#<action>", canonical)``.
ACTION_ROWS: tuple[tuple[str | None, str, str], ...] = tuple(
    (None, f"{raw}#{action}", name) for raw in ACTION_ARGUMENT
    for action, name in _ACTIONS.get(raw, _EDITOR_ACTIONS).items())

_MAX_ACTION = 64


def tool_action(raw_name: str | None, arguments: Any) -> str | None:
    """The action a call of ``raw_name`` names in its arguments (``None``: the tool has no
    action argument, or the value is not a short string)."""
    key = ACTION_ARGUMENT.get(raw_name or "")
    if key is None or not isinstance(arguments, Mapping):
        return None
    value = arguments.get(key)
    if isinstance(value, str) and 0 < len(value) <= _MAX_ACTION and "#" not in value:
        return value
    return None


def action_key(raw_name: str, action: str | None) -> str:
    """The vocabulary key of a raw name and its action (``str_replace_editor#view``)."""
    return f"{raw_name}#{action}" if action else raw_name


def split_action_key(key: str) -> tuple[str, str | None]:
    """``(raw name, action)`` of a vocabulary key (``action`` ``None`` for a plain name)."""
    raw, mark, action = key.partition("#")
    return (raw, action) if mark and raw in ACTION_ARGUMENT and action else (key, None)
