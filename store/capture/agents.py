"""Where each agent writes its sessions: one table, :data:`AGENT_FOLDERS` (domain), made of
the homes each agent's definition names (store/agents/<agent>/__init__.py).

Each row names an agent (its import format), the environment variable that moves the
agent's home (its own: ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``,
``QWEN_RUNTIME_DIR``, ``CLINE_DATA_DIR``, ``OH_PERSISTENCE_DIR`` ...; for VS Code extensions the
editor's: ``XDG_CONFIG_HOME``, ``APPDATA``; a tuple names several, the first one set wins),
the home used without it (relative to the user's home), and the session folders below that
home (``*`` matches one folder name, as in :meth:`pathlib.Path.glob`). Adding an agent is
adding its folder, with its rows (an agent may have several: one per place it writes):
``import`` and ``watch`` without paths look in every row's folders (:func:`agent_folders`),
and ``import DIR``
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
from pathlib import Path, PurePosixPath

from store.agents.homes import AgentFolders
from store.agents.registry import agents

__all__ = ["AGENT_FOLDERS", "NOISE_FOLDERS", "AgentFolders", "agent_folders", "agent_homes",
           "describe_agent_folders", "home_session_folders"]


#: Every supported agent's session folders: the ``homes`` of each agent's definition
#: (store/agents/<agent>/), in the registry's order.
AGENT_FOLDERS: tuple[AgentFolders, ...] = tuple(row for a in agents() for row in a.homes)

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
