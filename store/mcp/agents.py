"""Where each agent keeps its MCP servers, and in what shape (edge layer; stdlib only).

One :class:`AgentConfig` per agent (the formats as the agents' own documentation gives them,
checked when this was written):

- Claude Code: ``.mcp.json`` in the project, ``~/.claude.json`` for the user; ``mcpServers``
  of ``{"type": "stdio", "command", "args", "env"}``; ``claude mcp add --scope S NAME --
  COMMAND ARGS`` does the same.
- Codex: ``~/.codex/config.toml`` (``.codex/config.toml`` in a trusted project); a
  ``[mcp_servers.NAME]`` table of ``command``, ``args``; ``codex mcp add NAME -- COMMAND
  ARGS``.
- Gemini CLI: ``~/.gemini/settings.json`` / ``.gemini/settings.json``; ``mcpServers`` of
  ``{"command", "args"}``.
- Cursor: ``~/.cursor/mcp.json`` / ``.cursor/mcp.json``; ``mcpServers``.
- VS Code: ``.vscode/mcp.json`` / the profile's ``mcp.json``; ``servers`` of
  ``{"type": "stdio", "command", "args"}``.
- Windsurf: ``~/.codeium/windsurf/mcp_config.json`` (the user's only); ``mcpServers``.

Every path is under ``home`` (the ``HOME`` the command runs with) or ``project``.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import store

__all__ = ["AGENTS", "AgentConfig", "config_path"]


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """One agent's MCP configuration: its files (``user`` under the home folder, ``project``
    under the project; ``None``: that scope does not exist), the format (``json``/``toml``),
    the key that holds the servers, whether an entry says ``"type": "stdio"``, and the
    command that adds an entry with the agent's own command line (``None``: none known)."""

    name: str
    user: str | None
    project: str | None
    format: str = "json"
    key: str = "mcpServers"
    typed: bool = False
    add_command: Callable[[str, str, list[str], str], str] | None = None
    instructions_file: str = "AGENTS.md"


def _claude_add(name: str, command: str, args: list[str], scope: str) -> str:
    return shlex.join(["claude", "mcp", "add", "--scope", scope, name, "--", command, *args])


def _codex_add(name: str, command: str, args: list[str], scope: str) -> str:
    return shlex.join(["codex", "mcp", "add", name, "--", command, *args])


def _vscode_user() -> str:
    if sys.platform == "darwin":
        return "Library/Application Support/Code/User/mcp.json"
    if sys.platform == "win32":
        return "AppData/Roaming/Code/User/mcp.json"
    return ".config/Code/User/mcp.json"


AGENTS: dict[str, AgentConfig] = {
    "claude-code": AgentConfig("claude-code", ".claude.json", ".mcp.json", typed=True,
                               add_command=_claude_add, instructions_file="CLAUDE.md"),
    "codex": AgentConfig("codex", ".codex/config.toml", ".codex/config.toml", format="toml",
                         key="mcp_servers", add_command=_codex_add),
    "cursor": AgentConfig("cursor", ".cursor/mcp.json", ".cursor/mcp.json"),
    "gemini-cli": AgentConfig("gemini-cli", ".gemini/settings.json", ".gemini/settings.json",
                              instructions_file="GEMINI.md"),
    "vscode": AgentConfig("vscode", _vscode_user(), ".vscode/mcp.json", key="servers",
                          typed=True, instructions_file=".github/copilot-instructions.md"),
    "windsurf": AgentConfig("windsurf", ".codeium/windsurf/mcp_config.json", None),
}


def config_path(agent: AgentConfig, scope: str, home: Path, project: Path) -> Path:
    """The file ``agent`` keeps its servers in for ``scope`` (``user`` or ``project``)."""
    relative = agent.user if scope == "user" else agent.project
    if relative is None:
        raise store.UsageError(f"{agent.name} has no {scope} MCP configuration; use --scope "
                               f"{'project' if scope == 'user' else 'user'}")
    return (home if scope == "user" else project) / relative


def entry_for(agent: AgentConfig, command: str, args: list[str]) -> dict[str, Any]:
    """The configuration entry that starts the server."""
    entry: dict[str, Any] = {"type": "stdio"} if agent.typed else {}
    entry.update(command=command, args=args)
    return entry
