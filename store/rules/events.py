"""Tool calls as Sigma log-source events: the field mapping (documented in docs/rules.md).

A :class:`CallRecord` (a stored call with its session's agent and cwd, its tool name already
resolved through the alias table) becomes :class:`Event` s:

* a shell call (canonical tool ``bash``): one ``process_creation`` event (product ``linux``)
  per simple command of its command line (:func:`store.rules.shell.simple_commands`), with
  ``Image`` (the program; a bare name gets a leading ``/``, a relative path is made absolute
  against the working directory), ``CommandLine`` (that simple command as written),
  ``CurrentDirectory`` (the session's cwd, joined with the call's own working directory
  argument: ``workdir``, ``dir_path``, ``directory``, ``cwd``), ``ParentImage`` /
  ``ParentCommandLine`` (the wrapping shell or wrapper, when there is one), ``User`` (``root``
  under ``sudo``/``doas``); its redirections give ``file_event`` (``> file``) and
  ``file_access`` (``< file``) events; and the same events for each **normalised** simple
  command the line also runs (:func:`store.rules.evasion.unmasked`: ``X=/; rm -rf $X`` also
  gives ``rm -rf /``, whose parent is the command it came from);
* a read (``read``) is a ``file_access`` event, a write or edit (``write``, ``edit``,
  ``patch``, ``notebook``) a ``file_event``, one per path, with ``TargetFilename`` absolute
  against the working directory (``~`` is kept: the home is not recorded) and ``Image`` the
  agent (``/<agent>``);
* every call is also one native event, product ``ai_agent``, category ``tool_call``: ``Tool``
  (canonical name), ``RawTool``, ``Agent``, ``CommandLine`` (the whole command view; of a
  shell call with normalised forms, a list: the view, then the normalised scripts of
  :func:`store.rules.evasion.unmasked_scripts`),
  ``TargetFilename`` (absolute paths), ``Url``, ``Pattern``, ``Arguments`` (the arguments as
  compact JSON) and ``Arguments.<key>`` for each top-level argument, and ``SecretKind``, the
  kinds of secrets :func:`store.redaction.redact.find_secrets` finds in the call's searchable
  text (its arguments decoded, the text the search index redacts: so a call has one exactly
  when its indexed text holds a redaction marker; a record without it: the arguments as
  JSON), computed only when a loaded rule reads that field.

A field holds a string or a list of strings (a list matches when any member does).
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from store.records.searchtext import call_search_text
from store.redaction.detectors import DETECTORS
from store.redaction.redact import find_secrets
from store.rules.evasion import unmasked, unmasked_scripts
from store.rules.shell import simple_commands
from store.tools.vocabulary import argument_views

__all__ = ["LOG_SOURCES", "CallRecord", "Event", "call_events", "secret_kinds"]

FieldValue = str | list[str]

#: The log sources events come from: (category, product).
LOG_SOURCES: tuple[tuple[str, str], ...] = (
    ("process_creation", "linux"), ("file_access", "linux"), ("file_event", "linux"),
    ("tool_call", "ai_agent"),
)
_READS = frozenset({"read"})
_WRITES = frozenset({"write", "edit", "patch", "notebook"})
_WORKDIR_KEYS = ("workdir", "dir_path", "directory", "cwd", "working_dir")
_ROOT_WRAPPERS = frozenset({"sudo", "doas"})


@dataclass(frozen=True, slots=True)
class CallRecord:
    """A stored call as the mapping reads it."""

    session_id: str
    position: int
    call_index: int
    call_id: str
    raw_tool: str
    tool: str
    agent: str | None
    cwd: str | None
    arguments: Any
    #: The call's wire record, whose searchable text (``store.records.searchtext``) is where
    #: ``SecretKind`` is looked for; None: the arguments as compact JSON instead.
    wire_json: str | None = None
    #: The search index says the call holds no secret: ``SecretKind`` is not looked for.
    secret_free: bool = False


@dataclass(frozen=True, slots=True)
class Event:
    """One log event: its ``category`` and ``product`` and its Sigma ``fields``."""

    category: str
    product: str
    fields: Mapping[str, FieldValue]


def call_events(call: CallRecord, *, secrets: bool = False) -> list[Event]:
    """The events of ``call`` (see the module docstring); ``secrets``: fill ``SecretKind``."""
    args = call.arguments if isinstance(call.arguments, Mapping) else {}
    command, paths, pattern, url = argument_views(call.raw_tool, args)
    workdir = _workdir(call.cwd, args) if call.tool == "bash" else call.cwd
    events: list[Event] = []
    shell = _shell_line(args) if call.tool == "bash" else None
    if shell:
        events.extend(_process_events(shell, workdir))
    targets = [_absolute(p, call.cwd) for p in paths.split("\n")] if paths else []
    if targets and (call.tool in _READS or call.tool in _WRITES):
        category = "file_access" if call.tool in _READS else "file_event"
        image = "/" + (call.agent or "agent")
        for target in targets:
            events.append(Event(category, "linux", {"TargetFilename": target, "Image": image}))
    native: dict[str, FieldValue] = {"Tool": call.tool, "RawTool": call.raw_tool}
    if call.agent:
        native["Agent"] = call.agent
    if command:
        forms = unmasked_scripts(shell) if shell else ()
        native["CommandLine"] = [command, *forms] if forms else command
    if targets and call.tool != "bash":
        native["TargetFilename"] = targets[0] if len(targets) == 1 else targets
    if url:
        native["Url"] = url
    if pattern:
        native["Pattern"] = pattern
    if call.cwd:
        native["CurrentDirectory"] = call.cwd
    if args:
        encoded = native["Arguments"] = orjson.dumps(args).decode()
        for key, value in args.items():
            flat = _flat(value)
            if flat is not None:
                native[f"Arguments.{key}"] = flat
        if secrets and not call.secret_free:
            kinds = secret_kinds(encoded if call.wire_json is None
                                 else _search_text(call.wire_json))
            if kinds:
                native["SecretKind"] = kinds
    events.append(Event("tool_call", "ai_agent", native))
    return events


def secret_kinds(text: str) -> list[str]:
    """The kinds of secrets :func:`find_secrets` finds in ``text`` (the built-in detectors),
    sorted (its keyword gates are one RE2 pass over the text)."""
    return sorted({kind for _, _, kind in find_secrets(text, DETECTORS)})


def _search_text(wire: str) -> str:
    """The call's searchable text as the index builds it (empty when it cannot be built)."""
    try:
        return call_search_text(wire)
    except (ValueError, RecursionError, MemoryError):
        return ""


def _process_events(line: str, cwd: str | None) -> list[Event]:
    events: list[Event] = []
    for command in (*simple_commands(line), *unmasked(line)):
        fields: dict[str, FieldValue] = {
            "Image": _image(command.argv[0], cwd), "CommandLine": command.text,
        }
        if cwd:
            fields["CurrentDirectory"] = cwd
        if command.parent_argv:
            fields["ParentImage"] = _image(command.parent_argv[0], cwd)
            fields["ParentCommandLine"] = command.parent_text
            if posixpath.basename(command.parent_argv[0]) in _ROOT_WRAPPERS:
                fields["User"] = "root"
        events.append(Event("process_creation", "linux", fields))
        for redirect in command.redirects:
            category = "file_event" if redirect.kind == "write" else "file_access"
            events.append(Event(category, "linux", {
                "TargetFilename": _absolute(redirect.target, cwd),
                "Image": fields["Image"], "CommandLine": command.text}))
    return events


def _shell_line(args: Mapping[str, Any]) -> str | None:
    """The command line of a shell call: an argv list shell-quoted (so that ``["bash", "-lc",
    X]`` keeps its wrapper), else the command view."""
    value = args.get("command", args.get("cmd"))
    action = args.get("action")
    if value is None and isinstance(action, Mapping):
        value = action.get("command")
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return shlex.join(value)
    if isinstance(value, str):
        return value
    commands = args.get("commands")
    if isinstance(commands, list):
        return "\n".join(c for c in commands if isinstance(c, str)) or None
    return None


def _workdir(cwd: str | None, args: Mapping[str, Any]) -> str | None:
    for key in _WORKDIR_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return _absolute(value, cwd)
    return cwd


def _image(program: str, cwd: str | None) -> str:
    if "/" not in program:
        return "/" + program
    return _absolute(program, cwd)


def _absolute(path: str, cwd: str | None) -> str:
    path = path.strip()
    if path.startswith(("/", "~")) or not cwd:
        return posixpath.normpath(path) if path.startswith("/") else path
    return posixpath.normpath(posixpath.join(cwd, path))


def _flat(value: Any) -> FieldValue | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return None
