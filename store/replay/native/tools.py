"""A tool call in the target agent's own vocabulary: its name and argument shape.

A call is translated by its current (canonical) name (:mod:`store.tools.vocabulary`): a shell
command becomes Claude Code's ``Bash`` (``command`` a string; an argv's script, a working
folder other than the session's as ``cd DIR &&``) or Codex's ``shell_command`` (``command``,
``workdir``); reads, writes, searches, listings and todo lists take the target's names and
argument keys. Arguments the target's tool has no place for are dropped (and reported); a
call whose arguments cannot be reshaped (a required argument missing) or whose tool the
target has no counterpart for keeps its recorded name and arguments. A session resumed into
the agent that recorded it keeps every call exactly.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from store.core.model import ToolCall
from store.replay.native.fidelity import AgentTarget
from store.tools.vocabulary import argument_views

__all__ = ["Translated", "translate_call"]


@dataclass(frozen=True, slots=True)
class Translated:
    """A call's name and arguments for the target; ``exact``: unchanged; ``dropped``: the
    argument keys left out."""

    name: str
    input: dict[str, Any]
    exact: bool
    dropped: tuple[str, ...] = ()


_Shape = Callable[[Mapping[str, Any], str | None], dict[str, Any] | None]
_WORKDIR_KEYS = ("workdir", "cwd", "working_directory", "dir_path", "directory")
_PATH_KEYS = ("file_path", "path", "absolute_path", "filePath", "target_file")


def _first(args: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    return next((args[k] for k in keys if isinstance(args.get(k), str) and args[k]), None)


def _timeout_ms(args: Mapping[str, Any]) -> int | None:
    for key in ("timeout_ms", "timeout"):
        value = args.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _command(args: Mapping[str, Any]) -> str | None:
    command, *_ = argument_views("shell", args)
    if command is None and isinstance(args.get("command"), str):
        command = args["command"]
    return command


def _claude_bash(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
    command = _command(args)
    if command is None:
        return None
    workdir = _first(args, _WORKDIR_KEYS)
    if workdir and workdir != cwd:
        command = f"cd {shlex.quote(workdir)} && {command}"
    out: dict[str, Any] = {"command": command}
    if (timeout := _timeout_ms(args)) is not None:
        out["timeout"] = timeout
    if isinstance(args.get("description"), str):
        out["description"] = args["description"]
    return out


def _codex_shell(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
    command = _command(args)
    if command is None:
        return None
    out: dict[str, Any] = {"command": command}
    workdir = _first(args, _WORKDIR_KEYS) or cwd
    if workdir:
        out["workdir"] = workdir
    if (timeout := _timeout_ms(args)) is not None:
        out["timeout_ms"] = timeout
    return out


def _read(key: str) -> _Shape:
    def shape(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
        path = _first(args, _PATH_KEYS)
        if path is None:
            return None
        out: dict[str, Any] = {key: path}
        for name in ("offset", "limit"):
            if isinstance(args.get(name), int) and not isinstance(args.get(name), bool):
                out[name] = args[name]
        return out
    return shape


def _claude_write(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
    path, content = _first(args, _PATH_KEYS), args.get("content")
    return {"file_path": path, "content": content} if path and isinstance(content, str) else None


def _claude_edit(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
    path = _first(args, _PATH_KEYS)
    old, new = args.get("old_string", args.get("old_str")), args.get("new_string",
                                                                     args.get("new_str"))
    if not (path and isinstance(old, str) and isinstance(new, str)):
        return None
    out: dict[str, Any] = {"file_path": path, "old_string": old, "new_string": new}
    if isinstance(args.get("replace_all"), bool):
        out["replace_all"] = args["replace_all"]
    return out


def _grep(include: str, limit: bool) -> _Shape:
    def shape(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
        pattern = args.get("pattern")
        if not isinstance(pattern, str):
            return None
        out: dict[str, Any] = {"pattern": pattern}
        if (path := _first(args, _PATH_KEYS + ("dir_path",))) is not None:
            out["path"] = path
        if (glob := _first(args, ("glob", "include"))) is not None:
            out[include] = glob
        if limit and isinstance(args.get("limit"), int):
            out["limit"] = args["limit"]
        return out
    return shape


def _claude_glob(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
    pattern = args.get("pattern")
    if not isinstance(pattern, str):
        return None
    path = _first(args, _PATH_KEYS + ("dir_path",))
    return {"pattern": pattern, **({"path": path} if path else {})}


def _list(key: str) -> _Shape:
    def shape(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
        path = _first(args, _PATH_KEYS + ("dir_path", "directory")) or cwd
        return {key: path} if path else None
    return shape


def _todo_items(args: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    items = args.get("todos", args.get("plan"))
    if not isinstance(items, list):
        return None
    found = []
    for item in items:
        if not isinstance(item, Mapping):
            return None
        text = item.get("content", item.get("step"))
        status = item.get("status")
        if not isinstance(text, str) or status not in ("pending", "in_progress", "completed"):
            return None
        found.append((text, str(status)))
    return found


def _claude_todo(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
    items = _todo_items(args)
    return None if items is None else {"todos": [
        {"content": text, "status": status, "activeForm": text} for text, status in items]}


def _codex_plan(args: Mapping[str, Any], cwd: str | None) -> dict[str, Any] | None:
    items = _todo_items(args)
    if items is None:
        return None
    out: dict[str, Any] = {"plan": [{"step": text, "status": status} for text, status in items]}
    if isinstance(args.get("explanation"), str):
        out["explanation"] = args["explanation"]
    return out


_SHELL_READS = frozenset({"command", "cmd", "commands", "timeout", "timeout_ms",
                          *_WORKDIR_KEYS})
_PATH_READS = frozenset(_PATH_KEYS)
_READ_READS = _PATH_READS | {"offset", "limit"}
_GREP_READS = _PATH_READS | {"pattern", "dir_path", "glob", "include"}
_TODO_READS = frozenset({"todos", "plan"})

#: canonical name -> (the agent's tool, the argument shape, the source keys it carries).
_TABLES: Mapping[AgentTarget, Mapping[str, tuple[str, _Shape, frozenset[str]]]] = {
    "claude-code": {
        "bash": ("Bash", _claude_bash, _SHELL_READS | {"description"}),
        "read": ("Read", _read("file_path"), _READ_READS),
        "write": ("Write", _claude_write, _PATH_READS | {"content"}),
        "edit": ("Edit", _claude_edit, _PATH_READS | {"old_string", "new_string", "old_str",
                                                     "new_str", "replace_all"}),
        "grep": ("Grep", _grep("glob", False), _GREP_READS),
        "glob": ("Glob", _claude_glob, _PATH_READS | {"pattern", "dir_path"}),
        "list": ("LS", _list("path"), _PATH_READS | {"dir_path", "directory"}),
        "todo": ("TodoWrite", _claude_todo, _TODO_READS)},
    "codex": {
        "bash": ("shell_command", _codex_shell, _SHELL_READS),
        "read": ("read_file", _read("file_path"), _READ_READS),
        "grep": ("grep_files", _grep("include", True), _GREP_READS | {"limit"}),
        "list": ("list_dir", _list("dir_path"), _PATH_READS | {"dir_path", "directory"}),
        "todo": ("update_plan", _codex_plan, _TODO_READS | {"explanation"})},
}


def translate_call(call: ToolCall, target: AgentTarget, *, same_agent: bool,
                   cwd: str | None) -> Translated:
    """``call`` in ``target``'s vocabulary (see the module docstring)."""
    recorded = call.raw_name or call.name
    entry = None if same_agent else _TABLES[target].get(call.name)
    shaped = entry[1](call.input, cwd) if entry is not None else None
    if entry is None or shaped is None:
        return Translated(recorded, dict(call.input), True)
    name, _, reads = entry
    if name == recorded and shaped == call.input:
        return Translated(name, shaped, True)
    return Translated(name, shaped, False, tuple(key for key in call.input if key not in reads))


def own_names(target: AgentTarget) -> frozenset[str]:
    """The tool names ``target`` uses itself (its translation table's)."""
    return frozenset(name for name, _, _ in _TABLES[target].values())
