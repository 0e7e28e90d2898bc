"""Where each agent writes its sessions: one table, :data:`AGENT_FOLDERS` (domain).

Each row names an agent (its import format), the environment variable that moves the
agent's home (its own: ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``,
``QWEN_RUNTIME_DIR`` ...), the home
used without it (relative to the user's home), and the session folders below that home
(``*`` matches one folder name, as in :meth:`pathlib.Path.glob`). Adding an agent is adding
a row.
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
