"""The persistence modules import one another without a cycle (issue 33, item 6): a cycle,
even one behind ``TYPE_CHECKING``, makes the order of first imports matter and hides which
module owns a shared type (``Prepared`` lives in ``store/db/writing/prior.py``, below the writer and
the flight)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

DB = Path(__file__).resolve().parents[2] / "store" / "db"


APPEND_MODULES = ["store.db.writing.flight", "store.db.writing.prior", "store.db.writing.writer"]


#: The rooms of store/db (sub-packages): ``from store.db.writing import prior`` names a module.
ROOMS = {f"store.db.{p.name}" for p in DB.iterdir() if (p / "__init__.py").is_file()}


def _imports(path: Path) -> set[str]:
    """The ``store.db`` modules that ``path`` imports at module level (``TYPE_CHECKING``
    blocks included; imports inside functions are lazy and left out)."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "store.db" or node.module in ROOMS:
                    found.update(f"{node.module}.{a.name}" for a in node.names)
                elif node.module.startswith("store.db."):
                    found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("store.db."))
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def _graph() -> dict[str, set[str]]:
    modules = {"store." + ".".join(p.relative_to(DB.parent).with_suffix("").parts): p
               for p in DB.rglob("*.py") if p.stem != "__init__"}
    return {name: _imports(path) & set(modules) - {name} for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (the modules in order, the first repeated), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := walk(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node)) is not None:
            return found
    return None


def test_the_store_db_modules_import_without_a_cycle() -> None:
    graph = _graph()
    assert set(APPEND_MODULES) <= set(graph)
    # (the test reads real imports)
    assert "store.db.writing.prior" in graph["store.db.writing.flight"]
    assert _cycle(graph) is None


def test_the_cycle_finder_finds_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _cycle(graph) == ["a", "b", "c", "a"]


@pytest.mark.parametrize("module", APPEND_MODULES)
def test_each_append_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(DB.parents[1])}
    done = subprocess.run([sys.executable, "-c", f"import {module}"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
