"""Goose's session database where Goose keeps it (``~/.local/share/goose/sessions``), as its
own storage writes it (tests/agent_databases.py ``GooseWriter``)."""

from __future__ import annotations

from pathlib import Path

from agent_databases import write_goose


def build(home: Path) -> list[Path]:
    return [write_goose(home / ".local" / "share")]
