"""The integrations are an edge layer: the public API, their framework only lazily."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import store

FOLDER = Path(store.__file__).parent / "integrations"
FRAMEWORKS = {"openai_agents": "agents", "langchain": "langchain_core",
              "pydantic_ai": "pydantic_ai"}
ALLOWED_STORE = {"store", "store.integrations"}


def imports(tree: ast.AST, *, top_level: bool) -> set[str]:
    """Modules imported at import time (``top_level``) or anywhere else."""
    found: set[str] = set()

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) or (
                isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            if isinstance(child, ast.Import | ast.ImportFrom) and lazy != top_level:
                if isinstance(child, ast.Import):
                    found.update(a.name for a in child.names)
                elif child.module:
                    found.add(child.module)
            visit(child, inner)

    visit(tree, False)
    return found


@pytest.mark.parametrize("name", ["__init__", *FRAMEWORKS])
def test_an_integration_imports_the_public_api_and_its_framework_lazily(name):
    tree = ast.parse((FOLDER / f"{name}.py").read_text(encoding="utf-8"))
    eager = imports(tree, top_level=True)
    lazy = imports(tree, top_level=False)
    for module in eager | lazy:
        root = module.split(".")[0]
        if root == "store":
            assert module in ALLOWED_STORE, f"{name} imports {module}, not the public API"
        elif module not in {"__future__"}:
            if root in sys.stdlib_module_names:
                continue
            assert module in lazy and root == FRAMEWORKS.get(name), f"{name} imports {module}"


def test_importing_the_integrations_imports_no_framework():
    code = ("import sys, store, store.integrations.openai_agents, "
            "store.integrations.langchain, store.integrations.pydantic_ai\n"
            "loaded = {'agents', 'langchain_core', 'pydantic_ai', 'openai'} & set(sys.modules)\n"
            "assert not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_wheel_ships_the_integrations():
    import tomllib

    pyproject = tomllib.loads((FOLDER.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    assert "store.integrations" in pyproject["tool"]["setuptools"]["packages"]
