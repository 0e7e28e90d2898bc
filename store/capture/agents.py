"""Where each agent writes its sessions: one table, :data:`AGENT_FOLDERS` (domain).

Each row names an agent (its import format), the environment variable that moves the
agent's home (its own: ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``,
``QWEN_RUNTIME_DIR``, ``CLINE_DATA_DIR``, ``OH_PERSISTENCE_DIR`` ...; for VS Code extensions the
editor's: ``XDG_CONFIG_HOME``, ``APPDATA``; a tuple names several, the first one set wins),
the home used without it (relative to the user's home), and the session folders below that
home (``*`` matches one folder name, as in :meth:`pathlib.Path.glob`). Adding an agent is
adding a row (an agent may have several: one per place it writes): ``import`` and ``watch``
without paths look in every row's folders (:func:`agent_folders`), and ``import DIR``
enters the agents' homes it finds below ``DIR`` (:func:`agent_homes`), dot-directories
included, so that a backup of a home folder gives every agent's sessions. docs/agents.md
lists the rows. An entry may name a file (an agent's SQLite database). Agents that follow the
XDG base directories (OpenCode, Goose, Crush's global data) use ``$XDG_DATA_HOME/<app>`` when
it is set. Crush keeps one database per project (``<project>/.crush/crush.db``) and lists the
projects in its global data folder's ``projects.json`` (``{"projects": [{"path",
"data_dir"}]}``): each listed data folder's database is an entry.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from store.core.arguments import loads_json

__all__ = ["AGENT_FOLDERS", "NOISE_FOLDERS", "AgentFolders", "agent_folders", "agent_homes",
           "describe_agent_folders", "home_session_folders"]


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
_VSCODE_HOMES: tuple[tuple[str | None, str], ...] = (
    ("XDG_CONFIG_HOME", ".config"), (None, "Library/Application Support"),
    ("APPDATA", "AppData/Roaming"))

#: Every supported agent's session folders (the companion issue adds rows here).
AGENT_FOLDERS: tuple[AgentFolders, ...] = (
    AgentFolders("claude-code", "CLAUDE_CONFIG_DIR", ".claude", ("projects",)),
    AgentFolders("codex", "CODEX_HOME", ".codex", ("sessions", "archived_sessions")),
    AgentFolders("gemini-cli", "GEMINI_CLI_HOME", ".gemini", ("tmp/*/chats",),
                 env_is_user_home=True),
    # QWEN_RUNTIME_DIR replaces ~/.qwen for runtime output (storage.ts getRuntimeBaseDir);
    # chats are in projects/<cwd>/chats, in tmp/<hash>/chats before that.
    AgentFolders("qwen-code", "QWEN_RUNTIME_DIR", ".qwen", ("projects/*/chats", "tmp/*/chats")),
    # KIMI_SHARE_DIR replaces ~/.kimi (share.py get_share_dir).
    AgentFolders("kimi-cli", "KIMI_SHARE_DIR", ".kimi", ("sessions",)),
    # COPILOT_HOME replaces ~/.copilot (the Copilot SDK sets it for the CLI it runs);
    # history-session-state is where versions before 0.0.342 kept sessions.
    AgentFolders("copilot-cli", "COPILOT_HOME", ".copilot",
                 ("session-state", "history-session-state")),
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
    # OpenCode, Goose and Crush keep SQLite databases (read read-only: importers/agentdb.py).
    AgentFolders("opencode", None, ".local/share/opencode",
                 ("opencode.db", "opencode-*.db", "storage/session"), xdg_app="opencode"),
    AgentFolders("goose", "GOOSE_PATH_ROOT", ".local/share/goose", ("sessions",),
                 xdg_app="goose", env_suffix="data"),
    AgentFolders("crush", "CRUSH_GLOBAL_DATA", ".local/share/crush", (), xdg_app="crush",
                 project_list="projects.json", project_database="crush.db"),
)

#: Folder names an ``import DIR`` never enters below ``DIR``: version control, virtual
#: environments, package and build caches. They hold many JSON files and never an agent's
#: session (an agent's home below them is still found by ``import`` of that home itself).
NOISE_FOLDERS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".ruff_cache",
    ".pytest_cache", "__pycache__", "node_modules", ".npm", ".yarn", ".pnpm-store",
    ".cargo", ".rustup", ".gradle", ".m2", ".cache", ".Trash",
})


def _expand(base: Path, pattern: str, existing: bool) -> list[Path]:
    """The folders (or, for a pattern naming a file such as ``opencode-*.db``, the files) a
    row's pattern names below ``base``."""
    if "*" in pattern:
        files = "." in pattern.rsplit("/", 1)[-1]
        return [p for p in sorted(base.glob(pattern)) if p.is_dir() or (files and p.is_file())]
    return [base / pattern] if not existing or (base / pattern).exists() else []


def agent_folders(home: Path | None = None, environ: Mapping[str, str] | None = None,
                  *, existing: bool = True) -> list[tuple[str, Path]]:
    """The agents' session folders as ``(agent, folder)``, in table order, each folder once;
    only those that exist unless ``existing=False`` (then a pattern's folders that exist, and
    a plain folder whether or not it does)."""
    env = os.environ if environ is None else environ
    user_home = home or Path.home()
    found: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for row in AGENT_FOLDERS:
        base = row.home(env, user_home)
        for pattern in row.folders:
            for folder in _expand(base, pattern, existing):
                if folder not in seen:
                    seen.add(folder)
                    found.append((row.agent, folder))
        for database in row.listed(base):
            if database not in seen:
                seen.add(database)
                found.append((row.agent, database))
    return found


def agent_homes() -> dict[str, list[tuple[str, AgentFolders]]]:
    """The agents' default homes by their first folder name below the user's home (``.claude``,
    ``.codex``, ``.local`` for ``.local/share/<agent>`` ...), each with the rest of the home's
    path (``""``, ``share/<agent>``) and its row: what ``import DIR`` looks for below ``DIR``."""
    homes: dict[str, list[tuple[str, AgentFolders]]] = {}
    for row in AGENT_FOLDERS:
        parts = PurePosixPath(row.default_home).parts
        if parts:
            homes.setdefault(parts[0], []).append(("/".join(parts[1:]), row))
    return homes


def home_session_folders(folder: Path) -> list[tuple[str, Path]]:
    """The session folders below ``folder`` when it is an agent's home as found below an
    import's root (named as in :func:`agent_homes`), as ``(agent, folder)``; only existing
    ones."""
    found: list[tuple[str, Path]] = []
    for rest, row in agent_homes().get(folder.name, []):
        base = folder / rest if rest else folder
        for pattern in row.folders:
            found += [(row.agent, f) for f in _expand(base, pattern, existing=True)]
    return found


def describe_agent_folders() -> str:
    """The agents' default session folders and their variables, one phrase each (for
    messages): ``claude-code: ~/.claude/projects ($CLAUDE_CONFIG_DIR)``, ..."""
    phrases = []
    for row in AGENT_FOLDERS:
        where = ", ".join(f"~/{row.default_home}/{f}" for f in row.folders)
        moved = " or ".join(f"${name}" for name in row.env_names)
        phrases.append(f"{row.agent}: {where}" + (f" (moved by {moved})" if moved else ""))
    return "; ".join(phrases)
