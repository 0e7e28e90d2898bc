"""A Crush project's database (``<project>/.crush/crush.db``) and Crush's global list of
projects that names it (``~/.local/share/crush/projects.json``), as Crush writes them
(tests/agent_databases.py ``CrushWriter``)."""

from __future__ import annotations

import json
from pathlib import Path

from agent_databases import write_crush


def build(home: Path) -> list[Path]:
    project = home / "code" / "shop"
    database = write_crush(project)
    listing = home / ".local" / "share" / "crush" / "projects.json"
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text(json.dumps({"projects": [
        {"path": str(project), "data_dir": str(database.parent)}]}), encoding="utf-8")
    return [database, listing]
