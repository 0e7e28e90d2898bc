"""Where an agent writes its sessions: :class:`AgentFolders`, one row per place (domain).

Each row names an agent (its import format), the environment variable that moves the
agent's home (its own: ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME`` ...; for VS Code extensions the
editor's: ``XDG_CONFIG_HOME``, ``APPDATA``; a tuple names several, the first one set wins),
the home used without it (relative to the user's home), and the session folders below that
home (``*`` matches one folder name, as in :meth:`pathlib.Path.glob`). An entry may name a
file (an agent's SQLite database). Agents that follow the XDG base directories use
``$XDG_DATA_HOME/<app>`` when it is set. Each agent's rows are part of its definition
(``store/agents/<agent>/__init__.py``); :mod:`store.capture.agents` lists them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from store.core.arguments import loads_json

__all__ = ["VSCODE_HOMES", "AgentFolders"]


@dataclass(frozen=True, slots=True)
class AgentFolders:
    """An agent's session folders: ``folders`` below its home, which is ``$<env>`` when set,
    else ``<user's home>/<default_home>``."""

    agent: str
    env: str | tuple[str, ...] | None
    default_home: str
    folders: tuple[str, ...]
    #: The environment variable names a home *above* ``default_home`` (Gemini CLI's
    #: ``GEMINI_CLI_HOME`` replaces the user's home, and ``.gemini`` is below it).
    env_is_user_home: bool = False
    #: The home is this folder below ``$<env>`` when the variable names a folder above the
    #: home that is not the user's home.
    env_below: str | None = None
    #: The application's folder under ``$XDG_DATA_HOME`` (when that is set and ``env`` not).
    xdg_app: str | None = None
    #: A JSON file below the home listing project data folders (Crush's ``projects.json``),
    #: and the database file each one holds.
    project_list: str | None = None
    project_database: str = ""
    #: A folder below ``$<env>`` that is the home (Goose: ``$GOOSE_PATH_ROOT/data``).
    env_suffix: str = ""

    @property
    def env_names(self) -> tuple[str, ...]:
        """The variables that move the home, in the order they are looked at."""
        if self.env is None:
            return ()
        return (self.env,) if isinstance(self.env, str) else tuple(self.env)

    def home(self, environ: Mapping[str, str], user_home: Path) -> Path:
        for name in self.env_names:
            value = environ.get(name)
            if value:
                if self.env_below:
                    return Path(value) / self.env_below
                if self.env_is_user_home:
                    return Path(value) / self.default_home
                return Path(value) / self.env_suffix if self.env_suffix else Path(value)
        xdg = environ.get("XDG_DATA_HOME") if self.xdg_app else None
        if xdg and self.xdg_app:
            return Path(xdg) / self.xdg_app
        return user_home / self.default_home

    def listed(self, base: Path) -> list[Path]:
        """The databases of the projects the agent lists (existing ones, in list order)."""
        if self.project_list is None:
            return []
        try:
            listing = loads_json((base / self.project_list).read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return []
        projects = listing.get("projects") if isinstance(listing, dict) else None
        found: list[Path] = []
        for project in projects if isinstance(projects, list) else ():
            folder = project.get("data_dir") if isinstance(project, dict) else None
            if isinstance(folder, str) and folder:
                database = Path(folder) / self.project_database
                if database.is_file() and database not in found:
                    found.append(database)
        return found


#: Where VS Code builds keep their user data, by platform: the variable that moves it and
#: its default below the user's home (Linux, macOS, Windows).
VSCODE_HOMES: tuple[tuple[str | None, str], ...] = (
    ("XDG_CONFIG_HOME", ".config"), (None, "Library/Application Support"),
    ("APPDATA", "AppData/Roaming"))
