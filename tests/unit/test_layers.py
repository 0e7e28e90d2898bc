"""The house rules kept by tests: layering and the public API (httpx's pattern)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import store

PACKAGE = Path(store.__file__).parent
# The domain: stdlib + orjson only, never SQLAlchemy, Alembic or the persistence layer.
# Whole folders are domain; the top-level modules listed here too.
DOMAIN_FOLDERS = {"normalize", "stream", "replay"}
DOMAIN_TOP = {"errors", "arguments", "keys", "model", "names", "schemas", "codec", "pairing",
              "searchtext", "times", "transcript", "redact", "detectors", "providers",
              "vocabulary"}
# importers/: every reader is domain; only the walk that feeds a store is not.
DOMAIN_IMPORTERS_EXCEPT = {"walk"}
FORBIDDEN_ROOTS = {"sqlalchemy", "alembic", "psycopg", "click", "rich"}
PERSISTENCE_PACKAGES = ("store.db", "store.audit", "store.cli", "store.viewer",
                        "store.integrations", "store.importers.walk")


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def domain_modules() -> list[Path]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        top = rel.parts[0]
        if len(rel.parts) == 1:
            if path.stem in DOMAIN_TOP:
                found.append(path)
        elif top in DOMAIN_FOLDERS:
            found.append(path)
        elif top == "importers" and path.stem not in DOMAIN_IMPORTERS_EXCEPT:
            found.append(path)
    return found


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", domain_modules(), ids=module_name)
def test_domain_modules_import_no_database_or_edge_code(path):
    imports = imported_modules(path)
    roots = {name.split(".")[0] for name in imports}
    assert not roots & FORBIDDEN_ROOTS, f"{path} imports {roots & FORBIDDEN_ROOTS}"
    inner = {name for name in imports if name.startswith(PERSISTENCE_PACKAGES)}
    assert not inner, f"{path} imports {inner}"
    assert "store" not in imports, f"{path} imports the package root (the public API)"


def test_every_top_level_module_has_a_layer():
    """A new top-level module is either domain (listed) or belongs in a layer's folder."""
    on_disk = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert on_disk - DOMAIN_TOP == set()


def test_the_domain_is_most_of_the_folders():
    assert len(domain_modules()) > 20


def test_public_api_is_sorted():
    assert store.__all__ == sorted(store.__all__)


def test_public_api_is_complete():
    for name in store.__all__:  # names load on first use (PEP 562): load them all
        getattr(store, name)
    public = {name for name in vars(store) if not name.startswith("_")} - {
        "annotations", "TYPE_CHECKING", "Any", "importlib"}
    modules = {name for name, value in vars(store).items() if type(value) is type(store)}
    assert public - modules == set(store.__all__) - {"__version__"}


def test_every_public_name_exists():
    for name in store.__all__:
        assert hasattr(store, name), name


def _import_graph() -> dict[str, set[str]]:
    """Each module of the package -> the package modules it imports (at any level, except
    under ``if TYPE_CHECKING``)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        found: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names)
        graph[name] = {m for m in found if m in modules and m not in (name, "store")}
    return graph


def test_no_import_cycles():
    """Dependencies point one way: no module reaches itself through its imports."""
    graph = _import_graph()
    cycles = []
    for start in graph:
        seen: set[str] = set()
        stack = list(graph[start])
        while stack:
            current = stack.pop()
            if current == start:
                cycles.append(start)
                break
            if current not in seen:
                seen.add(current)
                stack.extend(graph[current])
    assert cycles == []


#: Exceptions a module may raise that are not store errors: caught inside the package (viewer
#: routes answer BadRequest/NotFound as 4xx; the schema coercer's marker; a path step missing
#: in an integration record), Python protocol errors (``__getattr__``/frozen ``__setattr__``
#: raise AttributeError), internal assertions, the stream handlers' helpers (which build a
#: StreamError) and click's own usage errors in the CLI.
_INTERNAL_RAISES = {"BadRequest", "NotFound", "_Mistyped", "KeyError", "AttributeError",
                    "AssertionError", "self.error", "self.no_open_call", "click.BadParameter",
                    "click.UsageError", "click.ClickException"}


def test_the_package_raises_only_store_errors():
    """Every ``raise SomeError(...)`` names a class of the one tree in ``store.errors``."""
    import store.errors as errors

    tree_names = {name for name, value in vars(errors).items()
                  if isinstance(value, type) and issubclass(value, errors.StoreError)}
    stray = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = ast.unparse(node.exc.func).removeprefix("store.")
                if name not in tree_names and name not in _INTERNAL_RAISES:
                    stray.append(f"{module_name(path)}:{node.lineno}: raise {name}")
    assert stray == []


def test_every_error_class_lives_in_the_one_tree():
    """Exception classes are defined in store/errors.py only (internal markers aside)."""
    elsewhere = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name not in _INTERNAL_RAISES and any(
                    ast.unparse(b).endswith(("Error", "Exception")) for b in node.bases):
                elsewhere.append(f"{module_name(path)}.{node.name}")
    assert elsewhere == []
