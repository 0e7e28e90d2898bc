"""Where each agent writes its sessions: one table, :data:`AGENT_FOLDERS` (domain).

Each row names an agent (its import format), the environment variable that moves the
agent's home (its own: ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``,
``CLINE_DATA_DIR``, ``OH_PERSISTENCE_DIR``; for VS Code extensions the editor's:
``XDG_CONFIG_HOME``, ``APPDATA``), the home used without it (relative to the user's home),
and the session folders below that home (``*`` matches one folder name, as in
:meth:`pathlib.Path.glob`). Adding an agent is adding a row (an agent may have several: one
per place it writes).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AGENT_FOLDERS", "AgentFolders", "agent_folders"]


@dataclass(frozen=True, slots=True)
class AgentFolders:
    """An agent's session folders: ``folders`` below its home, which is ``$<env>`` when set,
    else ``<user's home>/<default_home>``."""

    agent: str
    env: str | None
    default_home: str
    folders: tuple[str, ...]
    #: The environment variable names a home *above* ``default_home`` (Gemini CLI's
    #: ``GEMINI_CLI_HOME`` replaces the user's home, and ``.gemini`` is below it).
    env_is_user_home: bool = False

    def home(self, environ: Mapping[str, str], user_home: Path) -> Path:
        value = environ.get(self.env) if self.env else None
        if value:
            return Path(value) / self.default_home if self.env_is_user_home else Path(value)
        return user_home / self.default_home


#: Where VS Code builds keep their user data, by platform: the variable that moves it and
#: its default below the user's home (Linux, macOS, Windows).
_VSCODE_HOMES: tuple[tuple[str | None, str], ...] = (
    ("XDG_CONFIG_HOME", ".config"), (None, "Library/Application Support"),
    ("APPDATA", "AppData/Roaming"))

#: Every supported agent's session folders (the companion issue adds rows here).
AGENT_FOLDERS: tuple[AgentFolders, ...] = (
    AgentFolders("claude-code", "CLAUDE_CONFIG_DIR", ".claude", ("projects",)),
    AgentFolders("codex", "CODEX_HOME", ".codex", ("sessions", "archived_sessions")),
    AgentFolders("gemini-cli", "GEMINI_CLI_HOME", ".gemini", ("tmp/*/chats",),
                 env_is_user_home=True),
    # Cline: the CLI's data folder (SDK sessions, older CLI tasks), then the VS Code
    # extension's global storage in every VS Code build (Code, Code - Insiders, VSCodium,
    # Cursor, Windsurf ...: the ``*``) on Linux, macOS and Windows.
    AgentFolders("cline", "CLINE_DATA_DIR", ".cline/data", ("sessions", "tasks")),
    *(AgentFolders(agent, env, home, (f"*/User/globalStorage/{extension}/tasks",))
      for agent, extension in (("cline", "saoudrizwan.claude-dev"),
                               ("roo-code", "rooveterinaryinc.roo-cline"))
      for env, home in _VSCODE_HOMES),
    # OpenHands: the SDK / CLI conversations (V1) and the file store's sessions (V0).
    AgentFolders("openhands", "OH_PERSISTENCE_DIR", ".openhands", ("conversations", "sessions")),
)


def agent_folders(home: Path | None = None, environ: Mapping[str, str] | None = None,
                  *, existing: bool = True) -> list[tuple[str, Path]]:
    """The agents' session folders as ``(agent, folder)``, in table order; only those that
    exist unless ``existing=False`` (then a pattern's folders that exist, and a plain folder
    whether or not it does)."""
    env = os.environ if environ is None else environ
    user_home = home or Path.home()
    found: list[tuple[str, Path]] = []
    for row in AGENT_FOLDERS:
        base = row.home(env, user_home)
        for pattern in row.folders:
            if "*" in pattern:
                found += [(row.agent, p) for p in sorted(base.glob(pattern)) if p.is_dir()]
            elif not existing or (base / pattern).is_dir():
                found.append((row.agent, base / pattern))
    return found
