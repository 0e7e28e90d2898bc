"""Keeping a capture running: the user service file, and the agents' hook input (domain).

:func:`service_file` writes a systemd user unit (Linux) or a launchd agent (macOS) that runs
``transcript-store watch`` at log-in and again if it stops, and returns the commands that
start, stop and remove it; nothing is started here. :func:`hook_transcript` reads what a
Claude Code hook (``SessionEnd``, ``Stop``) passes on standard input, a JSON object with
``transcript_path``, so that a session is captured when it ends even without the service.
"""

from __future__ import annotations

import os
import plistlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.core.arguments import loads_json
from store.core.errors import UsageError
from store.core.paths import expand_home

__all__ = ["HOOK_AGENTS", "LAUNCHD_LABEL", "SYSTEMD_UNIT", "ServiceFile", "hook_transcript",
           "service_file"]

SYSTEMD_UNIT = "transcript-store-watch.service"
LAUNCHD_LABEL = "dev.transcript-store.watch"
#: Agents whose hooks :func:`hook_transcript` reads.
HOOK_AGENTS = ("claude-code",)


@dataclass(frozen=True, slots=True)
class ServiceFile:
    """A service file written, and the commands that start, stop and remove it."""

    path: Path
    kind: str
    start: tuple[str, ...]
    stop: tuple[str, ...]
    remove: tuple[str, ...]


def service_file(command: Sequence[str], *, platform: str | None = None,
                 environ: Mapping[str, str] | None = None, home: Path | None = None,
                 write: bool = True) -> ServiceFile:
    """Write (unless ``write=False``) the user service that runs ``command`` (the watch
    command line, program first): a launchd agent on macOS (``platform`` ``darwin``), else a
    systemd user unit under ``$XDG_CONFIG_HOME`` (default ``~/.config``)."""
    env = os.environ if environ is None else environ
    user_home = home or Path(env.get("HOME") or Path.home())
    if (platform or sys.platform) == "darwin":
        path = user_home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        text = launchd_plist(command, user_home)
        domain = f"gui/{os.getuid()}" if hasattr(os, "getuid") else "gui/$(id -u)"
        result = ServiceFile(
            path, "launchd agent",
            (f"launchctl bootstrap {domain} {_quote(str(path))}",),
            (f"launchctl bootout {domain}/{LAUNCHD_LABEL}",),
            (f"launchctl bootout {domain}/{LAUNCHD_LABEL}", f"rm {_quote(str(path))}"))
    else:
        config = Path(env.get("XDG_CONFIG_HOME") or user_home / ".config")
        path = config / "systemd" / "user" / SYSTEMD_UNIT
        text = systemd_unit(command)
        result = ServiceFile(
            path, "systemd user unit",
            ("systemctl --user daemon-reload", f"systemctl --user enable --now {SYSTEMD_UNIT}"),
            (f"systemctl --user stop {SYSTEMD_UNIT}",),
            (f"systemctl --user disable --now {SYSTEMD_UNIT}", f"rm {_quote(str(path))}",
             "systemctl --user daemon-reload"))
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return result


def systemd_unit(command: Sequence[str]) -> str:
    """A systemd user unit running ``command``, restarted when it fails, at low priority."""
    exec_start = " ".join(_systemd_word(word) for word in command)
    return (
        "[Unit]\n"
        "Description=transcript-store: keep the agents' sessions as they are written\n"
        "\n"
        "[Service]\n"
        f"ExecStart={exec_start}\n"
        "Restart=on-failure\n"
        "RestartSec=10\n"
        "Nice=10\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def launchd_plist(command: Sequence[str], home: Path) -> str:
    """A launchd agent running ``command`` at log-in, kept alive, logging to
    ``~/Library/Logs/transcript-store-watch.log``."""
    log = str(home / "Library" / "Logs" / "transcript-store-watch.log")
    body: dict[str, Any] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        "KeepAlive": True,
        "ProcessType": "Background",
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }
    return plistlib.dumps(body).decode("utf-8")


def _systemd_word(word: str) -> str:
    """One word of a systemd command line: ``%`` doubled (specifiers), quoted when needed."""
    word = word.replace("%", "%%")
    if word and not any(c in word for c in ' \t\n"\'\\;$'):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$") + '"'


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def hook_transcript(agent: str, text: str) -> Path:
    """The transcript file a hook names: a Claude Code hook passes a JSON object with
    ``transcript_path`` (``~`` expanded). :class:`UsageError` naming what is wrong else."""
    if agent not in HOOK_AGENTS:
        raise UsageError(f"no hook input known for agent {agent!r} (known: "
                         f"{', '.join(HOOK_AGENTS)})")
    try:
        value = loads_json(text)
    except ValueError as exc:
        raise UsageError(f"the {agent} hook input on standard input is not JSON: {exc}"
                         ) from None
    path = value.get("transcript_path") if isinstance(value, dict) else None
    if not isinstance(path, str) or not path:
        raise UsageError(f"the {agent} hook input has no 'transcript_path' (a JSON object "
                         "with it is expected on standard input)")
    return expand_home(path)
