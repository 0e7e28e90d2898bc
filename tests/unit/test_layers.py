"""The house rules kept by tests: layering and the public API (httpx's pattern)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import store

PACKAGE = Path(store.__file__).parent
# The domain: stdlib + orjson only, never SQLAlchemy, Alembic or the persistence layer.
# Whole folders are domain (nothing domain lies loose at the top of store/).
DOMAIN_FOLDERS = {"agents", "core", "tools", "redaction", "records", "normalize", "stream",
                  "replay", "capture", "usage", "rules", "trust", "tlog"}
# importers/: every reader is domain; only the walk that feeds a store is not.
DOMAIN_IMPORTERS_EXCEPT = {"walk"}
FORBIDDEN_ROOTS = {"sqlalchemy", "alembic", "psycopg", "click", "rich"}
PERSISTENCE_PACKAGES = ("store.db", "store.audit", "store.cli", "store.viewer",
                        "store.integrations", "store.mcp", "store.importers.walk")


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
        if top in DOMAIN_FOLDERS:
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


#: Files that run alone, copied without the package: their errors are their own.
STANDALONE = {PACKAGE / "tlog" / "verifier.py"}


def test_the_log_verifier_stands_alone():
    """store/tlog/verifier.py is copied alone to an auditor's machine: stdlib and
    cryptography only, nothing of store."""
    imports = imported_modules(PACKAGE / "tlog" / "verifier.py")
    roots = {name.split(".")[0] for name in imports}
    assert roots <= {"__future__", "argparse", "base64", "binascii", "hashlib", "hmac", "json",
                     "sys", "collections", "dataclasses", "cryptography"}, roots


def test_the_top_of_the_package_is_only_its_face():
    """The top of store/ holds the public API and the entry point, at most 12 modules: every
    job lives in a folder whose name says it."""
    on_disk = {p.stem for p in PACKAGE.glob("*.py")}
    assert len(on_disk) <= 12, sorted(on_disk)
    assert on_disk == {"__init__", "__main__"}, "a new top-level module belongs in a folder"


#: Where the 600-line bound holds: the package and the benchmark.
SIZED = (PACKAGE, PACKAGE.parent / "bench")


@pytest.mark.parametrize("folder", SIZED, ids=lambda p: p.name)
def test_no_module_passes_600_lines(folder):
    """A module past 600 lines is split by job (issue 22)."""
    long = {str(p.relative_to(folder.parent)): n for p in folder.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}


def test_every_folder_says_its_job():
    """Each subpackage opens with a docstring whose first line names its job."""
    silent = []
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        if init.parent != PACKAGE and (not doc or not doc.splitlines()[0].strip()):
            silent.append(str(init.parent.relative_to(PACKAGE)))
    assert silent == []


#: The middle and the edge, bottom to top: a module may import its own floor and those below,
#: never one above (the engine once reached up into store.audit for JSON helpers).
FLOORS = [("store.db", "store.importers.walk"), ("store.audit",),
          ("store.cli", "store.viewer", "store.integrations", "store.mcp")]


def test_no_import_runs_back_up():
    graph = _import_graph()
    upward = []
    for level, floor in enumerate(FLOORS):
        above = tuple(p for f in FLOORS[level + 1:] for p in f)
        for module, imports in graph.items():
            if module.startswith(floor) and above:
                upward += [f"{module} -> {m}" for m in imports if m.startswith(above)]
    assert upward == []


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
#: StreamError), click's own usage errors in the CLI, and SQLAlchemy's DisconnectionError (the
#: pool's signal, raised in a checkout hook, to replace a connection that failed its ping).
_INTERNAL_RAISES = {"BadRequest", "NotFound", "_Mistyped", "KeyError", "AttributeError",
                    "AssertionError", "self.error", "self.no_open_call", "click.BadParameter",
                    "click.UsageError", "click.ClickException", "DisconnectionError",
                    # an append's signals to TranscriptStore.append, which handles
                    # them (store/db/writing/flight.py): never seen by a caller
                    "StaleState", "LostFlight", "Committed",
                    # the MCP server's tool error: what an MCP client sees of a StoreError
                    # and a resource's (store/mcp/registry.py turns each into one)
                    "ToolError", "ResourceError",
                    # the command line ending quietly on a closed pipe (store/cli/_common.py)
                    "SystemExit",
                    # StoredMessage refusing assignment as the frozen dataclass it stands for
                    "FrozenInstanceError",
                    # psycopg's error on the stdlib read path, an sqlite3.DatabaseError that
                    # the readers' fallbacks catch (store/db/reading/pgread.py): the store
                    # then answers or raises its own
                    "PgReadError"}


def test_the_package_raises_only_store_errors():
    """Every ``raise SomeError(...)`` names a class of the one tree in ``store.core.errors``."""
    import store.core.errors as errors

    tree_names = {name for name, value in vars(errors).items()
                  if isinstance(value, type) and issubclass(value, errors.StoreError)}
    stray = []
    for path in PACKAGE.rglob("*.py"):
        if path in STANDALONE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                name = ast.unparse(node.exc.func).removeprefix("store.")
                if name not in tree_names and name not in _INTERNAL_RAISES:
                    stray.append(f"{module_name(path)}:{node.lineno}: raise {name}")
    assert stray == []


def test_every_error_class_lives_in_the_one_tree():
    """Exception classes are defined in store/core/errors.py only (internal markers aside)."""
    elsewhere = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "errors.py" or path in STANDALONE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name not in _INTERNAL_RAISES and any(
                    ast.unparse(b).endswith(("Error", "Exception")) for b in node.bases):
                elsewhere.append(f"{module_name(path)}.{node.name}")
    assert elsewhere == []
