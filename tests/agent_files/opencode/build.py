"""OpenCode's database where OpenCode keeps it (``~/.local/share/opencode/opencode.db``), as
its own writer lays it out (tests/agent_databases.py ``OpenCodeWriter``)."""

from __future__ import annotations

from pathlib import Path

from agent_databases import write_opencode


def build(home: Path) -> list[Path]:
    return [write_opencode(home / ".local" / "share")]
