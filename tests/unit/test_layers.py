"""The house rules kept by tests: layering and the public API (httpx's pattern)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import store

PACKAGE = Path(store.__file__).parent
# The domain: stdlib + orjson only, never SQLAlchemy, Alembic or the persistence layer.
DOMAIN = ["errors", "arguments", "keys", "model", "names", "calls", "messages", "schemas",
          "codec", "pairing", "transcript", "definitions",
          "importers", "import_base", "import_jsonl", "import_gemini",
          "repair", "render", "render_common", "render_openai", "render_anthropic",
          "render_gemini", "redact",
          "stream", "stream_events", "stream_openai"]
FORBIDDEN_ROOTS = {"sqlalchemy", "alembic", "psycopg", "click", "rich"}
PERSISTENCE = {"tables", "engine", "compiled", "repository", "store_base", "store_sessions",
               "writer", "migrate", "database",
               "verify", "importer", "audit", "audit_sql", "audit_schema", "audit_explain",
               "export",
               "cli", "cli_sessions", "cli_import", "cli_export", "cli_audit", "cli_serve"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("module", [m for m in DOMAIN if (PACKAGE / f"{m}.py").exists()])
def test_domain_modules_import_no_database_or_edge_code(module):
    imports = imported_modules(PACKAGE / f"{module}.py")
    roots = {name.split(".")[0] for name in imports}
    assert not roots & FORBIDDEN_ROOTS, f"{module} imports {roots & FORBIDDEN_ROOTS}"
    inner = {name.split(".")[1] for name in imports if name.startswith("store.")}
    assert not inner & PERSISTENCE, f"{module} imports {inner & PERSISTENCE}"
    assert "store" not in imports, f"{module} imports the package root (the public API)"


def test_every_domain_module_is_listed():
    on_disk = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert on_disk - set(DOMAIN) - PERSISTENCE == set()


def test_public_api_is_sorted():
    assert store.__all__ == sorted(store.__all__)


def test_public_api_is_complete():
    public = {name for name in vars(store) if not name.startswith("_")} - {"annotations"}
    modules = {name for name, value in vars(store).items() if type(value) is type(store)}
    assert public - modules == set(store.__all__) - {"__version__"}


def test_every_public_name_exists():
    for name in store.__all__:
        assert hasattr(store, name), name
