"""Where each agent writes its sessions: one table, :data:`AGENT_FOLDERS` (domain).

Each row names an agent (its import format), the environment variable that moves the
agent's home (its own: ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``), the home
used without it (relative to the user's home), and the session folders below that home
(``*`` matches one folder name, as in :meth:`pathlib.Path.glob`); an entry may name a file
(an agent's SQLite database). Agents that follow the XDG base directories (OpenCode, Goose,
Crush's global data) use ``$XDG_DATA_HOME/<app>`` when it is set. Crush keeps one database
per project (``<project>/.crush/crush.db``) and lists the projects in its global data
folder's ``projects.json`` (``{"projects": [{"path", "data_dir"}]}``): each listed data
folder's database is an entry. Adding an agent is adding a row.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from store.core.arguments import loads_json

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
    #: The application's folder under ``$XDG_DATA_HOME`` (when that is set and ``env`` not).
    xdg_app: str | None = None
    #: A JSON file below the home listing project data folders (Crush's ``projects.json``),
    #: and the database file each one holds.
    project_list: str | None = None
    project_database: str = ""
    #: A folder below ``$<env>`` that is the home (Goose: ``$GOOSE_PATH_ROOT/data``).
    env_suffix: str = ""

    def home(self, environ: Mapping[str, str], user_home: Path) -> Path:
        value = environ.get(self.env) if self.env else None
        if value:
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


#: Every supported agent's session folders (the companion issue adds rows here).
AGENT_FOLDERS: tuple[AgentFolders, ...] = (
    AgentFolders("claude-code", "CLAUDE_CONFIG_DIR", ".claude", ("projects",)),
    AgentFolders("codex", "CODEX_HOME", ".codex", ("sessions", "archived_sessions")),
    AgentFolders("gemini-cli", "GEMINI_CLI_HOME", ".gemini", ("tmp/*/chats",),
                 env_is_user_home=True),
    AgentFolders("opencode", None, ".local/share/opencode",
                 ("opencode.db", "opencode-*.db", "storage/session"), xdg_app="opencode"),
    AgentFolders("goose", "GOOSE_PATH_ROOT", ".local/share/goose", ("sessions",),
                 xdg_app="goose", env_suffix="data"),
    AgentFolders("crush", "CRUSH_GLOBAL_DATA", ".local/share/crush", (), xdg_app="crush",
                 project_list="projects.json", project_database="crush.db"),
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
                found += [(row.agent, p) for p in sorted(base.glob(pattern))
                          if p.is_dir() or (p.is_file() and "." in pattern.rsplit("/", 1)[-1])]
            elif not existing or (base / pattern).exists():
                found.append((row.agent, base / pattern))
        found += [(row.agent, p) for p in row.listed(base)]
    return found
