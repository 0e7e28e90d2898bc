"""Adding the server to an agent's MCP configuration (edge layer).

Never a user's file overwritten without asking:

* the file is read first; the entry is **merged** into it, every other entry and setting kept
  (JSON: the object re-written with its keys in their order; TOML: ``tomlkit`` keeps the
  comments and layout of the rest of the file);
* an entry of the same name that differs is an ``EntryExistsError`` (the command asks, or
  refuses without ``--yes``); the same entry again writes nothing;
* a file that does not parse is left alone (``UsageError`` naming it, with the entry to add
  by hand);
* the new file is written **atomically** (a temporary file in the same folder, flushed,
  renamed over the old one) with the old file's permissions (new files: 0600 for a user's
  file, which may hold other servers' tokens).

The instructions snippet (when an agent should search its history) is added once to an
AGENTS.md-like file, found again by its marker.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import store
from store.mcp.agents import AGENTS, AgentConfig, config_path, entry_for

__all__ = ["Plan", "install_entry", "install_instructions", "plan"]

#: Where the snippet starts in a file (how a second install finds it).
MARKER = "<!-- transcript-store:mcp -->"

INSTRUCTIONS = f"""{MARKER}
## Past sessions (transcript-store)

The `transcript-store` MCP server holds the transcripts of earlier agent sessions on this
machine (Claude Code, Codex, Gemini CLI and others): prompts, every tool call with its
arguments, and what it returned. It is read-only; secrets are redacted.

Search it before repeating work:

- Before a task in a repository, ask what was tried last time there: `list_sessions` with
  `project` set to the repository's folder, then `search_calls` with `project` (and `text`
  or `command`) for the commands, edits and errors of those sessions.
- Before changing a file, `sessions_touching_file` with its path says which sessions read or
  edited it; `get_session` with `around` opens one at that point.
- When a command fails, `search_calls` with `command` and `status: "error"` shows whether it
  failed before and what fixed it.
- `tool_usage`, `usage_cost`, `findings` and `lineage` answer questions about the tools
  used, tokens and cost, security findings and subagents.

Cite the session ids you relied on. Lists are paged (`limit`, `offset` -> `next_offset`).
"""


@dataclass(slots=True)
class Plan:
    """What an install would write: the agent, the file, the entry and its name."""

    agent: AgentConfig
    scope: str
    name: str
    path: Path
    entry: dict[str, Any]
    command: str
    args: list[str] = field(default_factory=list)

    @property
    def hint(self) -> str:
        """What to do next (restart the agent; add the instructions)."""
        return (f"restart {self.agent.name} to load it; `--instructions "
                f"{self.agent.instructions_file}` adds the note telling the agent when to "
                "search its history")

    def snippet(self) -> str:
        """The entry as it would stand in the file."""
        if self.agent.format == "toml":
            import tomlkit

            doc = tomlkit.document()
            servers = tomlkit.table(is_super_table=True)
            servers.add(self.name, _toml_table(self.entry))
            doc.add(self.agent.key, servers)
            return tomlkit.dumps(doc)
        return json.dumps({self.agent.key: {self.name: self.entry}}, indent=2)

    def describe(self) -> str:
        """What ``--print`` shows: the file and entry, the agent's own command, the
        instructions snippet."""
        lines = [f"# {self.agent.name}: add to {self.path}", self.snippet().rstrip(), ""]
        if self.agent.add_command is not None:
            lines += ["# or run:", self.agent.add_command(self.name, self.command, self.args,
                                                          self.scope), ""]
        lines += [f"# and add to {self.agent.instructions_file} (or a skill file):",
                  INSTRUCTIONS.rstrip()]
        return "\n".join(lines) + "\n"


def server_command(db_url: str | None) -> tuple[str, list[str]]:
    """The command that starts this server: the ``transcript-store`` beside this Python (its
    virtual environment's) or on ``PATH``, else this Python with ``-m store``; ``mcp``; and
    ``--db URL`` when one was given (an SQLite file made absolute: the agent starts the
    server in another folder)."""
    beside = Path(sys.executable).parent / "transcript-store"
    found = str(beside) if os.access(beside, os.X_OK) else shutil.which("transcript-store")
    command, args = (found, []) if found else (sys.executable, ["-m", "store"])
    args.append("mcp")
    if db_url:
        args += ["--db", absolute_db(db_url)]
    return command, args


def absolute_db(db_url: str) -> str:
    """``db_url`` with a relative SQLite file made absolute (``sqlite:///x.db``, ``x.db``);
    any other URL as it is."""
    if db_url.startswith("sqlite:///") and not db_url.startswith("sqlite:////"):
        name = db_url.removeprefix("sqlite:///")
        if name and not name.startswith(":memory:"):
            return "sqlite:///" + os.path.abspath(name)
    elif "://" not in db_url:
        return os.path.abspath(os.path.expanduser(db_url))
    return db_url


def plan(agent: str, *, scope: str, name: str, db_url: str | None, home: Path,
         project: Path) -> Plan:
    """The install of the server for ``agent`` (see :data:`store.mcp.agents.AGENTS`)."""
    config = AGENTS.get(agent)
    if config is None:
        raise store.UsageError(f"unknown agent {agent!r}: one of {', '.join(AGENTS)}")
    if not name or any(c.isspace() for c in name):
        raise store.UsageError(f"a server name without spaces is needed, got {name!r}")
    command, args = server_command(db_url)
    return Plan(config, scope, name, config_path(config, scope, home, project),
                entry_for(config, command, args), command, args)


def install_entry(planned: Plan, *, replace: bool = False) -> Path:
    """Merge the entry into its file (see the module docstring); the file written."""
    path = planned.path
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if planned.agent.format == "toml":
        merged = _merge_toml(planned, text, replace)
    else:
        merged = _merge_json(planned, text, replace)
    if merged is not None:
        _write_atomically(path, merged, private=planned.scope == "user")
    return path


def _merge_json(planned: Plan, text: str, replace: bool) -> str | None:
    try:
        config = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise store.UsageError(
            f"{planned.path} is not JSON ({exc}); nothing written. Add this by hand:\n"
            f"{planned.snippet()}") from None
    if not isinstance(config, dict):
        raise store.UsageError(f"{planned.path} does not hold a JSON object; nothing written")
    servers = config.setdefault(planned.agent.key, {})
    if not isinstance(servers, dict):
        raise store.UsageError(f"{planned.path}: {planned.agent.key!r} is not an object; "
                               "nothing written")
    if not _may_write(planned, servers.get(planned.name), replace):
        return None
    servers[planned.name] = planned.entry
    return json.dumps(config, indent=2, ensure_ascii=False) + "\n"


def _merge_toml(planned: Plan, text: str, replace: bool) -> str | None:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise store.UsageError(
            f"{planned.path} is not TOML ({exc}); nothing written. Add this by hand:\n"
            f"{planned.snippet()}") from None
    servers = doc.get(planned.agent.key)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.add(planned.agent.key, servers)
    elif not isinstance(servers, dict):
        raise store.UsageError(f"{planned.path}: {planned.agent.key!r} is not a table; "
                               "nothing written")
    existing = servers.get(planned.name)
    if not _may_write(planned, None if existing is None else existing.unwrap(), replace):
        return None
    if existing is not None:
        del servers[planned.name]
    servers[planned.name] = _toml_table(planned.entry)
    return tomlkit.dumps(doc)


def _toml_table(entry: dict[str, Any]) -> Any:
    import tomlkit

    table = tomlkit.table()
    for key, value in entry.items():
        table.add(key, value)
    return table


def _may_write(planned: Plan, existing: Any, replace: bool) -> bool:
    """Whether to write: no entry of that name, or a different one and ``replace``; the same
    entry: nothing to do. A different one without ``replace``: ``EntryExistsError``."""
    if existing is None:
        return True
    if existing == planned.entry:
        return False
    if not replace:
        raise store.EntryExistsError(
            planned.path, planned.name, f"{planned.path} has an MCP server named "
            f"{planned.name!r} already ({json.dumps(existing)}).")
    return True


def install_instructions(path: Path) -> bool:
    """Add the instructions snippet to ``path`` (created if missing) unless it holds it
    already; whether it was added."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if MARKER in text:
        return False
    joined = text + ("\n" if text and not text.endswith("\n") else "") + \
        ("\n" if text else "") + INSTRUCTIONS
    _write_atomically(path, joined, private=False)
    return True


def _write_atomically(path: Path, text: str, *, private: bool) -> None:
    """Write ``text`` to ``path`` all at once: a temporary file beside it, renamed over it;
    the old file's mode kept (a new one: 0600 when ``private``, else 0644)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else (0o600 if private else 0o644)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
