"""docs/cli.md is generated from the commands (issue 24): it fails here when a command, an
option or a help text changed and the page was not written again."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def generator():
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  ROOT / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_is_up_to_date(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")  # (the page does not depend on the terminal)
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == generator().render(), (
        "docs/cli.md is stale: run .venv/bin/python scripts/cli_reference.py")


def test_the_reference_has_every_command() -> None:
    page = generator().render()
    for command in ("sessions list", "calls search", "db history", "db upgrade", "export",
                    "import", "tools usage", "serve"):
        assert f"## `transcript-store {command}`" in page
    assert "--keep-recorded-names" in page and "--since" in page and "--wide" in page
