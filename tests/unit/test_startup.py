"""Start-up of the command line (issue 15): ``--help`` loads no database, terminal-drawing or
migration code, and a read command on a database at head never imports Alembic (its head is
read from the revision scripts, and agrees with Alembic's). What is imported is asserted, not
how long it takes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from store import TranscriptStore
from store.db.schema.migrate import _alembic_head, head

PROBE = """
import json, sys
from store.cli.main import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in
      ("sqlalchemy", "rich", "alembic", "psycopg") or m.startswith("store."))))
"""


def loaded(*argv: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(argv=list(argv))],
                         capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def test_help_imports_no_database_rich_or_migration_code() -> None:
    modules = loaded("--help")

    assert not {m for m in modules if m.split(".")[0] in ("sqlalchemy", "rich", "alembic",
                                                          "psycopg")}
    assert "store.db.store" not in modules and "store.viewer" not in modules
    assert "store.cli.audit" in modules  # every command is registered


def test_a_read_command_on_a_database_at_head_imports_no_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'small.sqlite'}"
    with TranscriptStore.open(url) as opened:
        opened.append("s", [{"role": "user", "content": "hi"}])

    modules = loaded("sessions", "show", "s", "--db", url)

    assert "store.db.store" in modules  # it did open the store
    assert not {m for m in modules if m.startswith("alembic")}
    assert "store.viewer" not in modules and "rich.progress" not in modules


def test_sessions_list_on_an_sqlite_file_imports_no_sqlalchemy(tmp_path: Path) -> None:
    """The commonest read command reads an SQLite file at head on the stdlib driver, and
    loads its own command module only."""
    path = tmp_path / "small.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        opened.append("s", [{"role": "user", "content": "hi"}])

    for argv in (("sessions", "list", "--db", str(path)),
                 ("sessions", "list", "--db", f"sqlite:///{path}", "--json")):
        modules = loaded(*argv)

        assert not {m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic",
                                                              "psycopg")}, argv
        assert "store.cli.sessions" in modules and "store.cli.audit" not in modules


def test_the_root_group_knows_every_commands_module() -> None:
    import importlib

    from store.cli.main import COMMAND_MODULES

    declared = {}
    for module in set(COMMAND_MODULES.values()):
        for command in importlib.import_module(f"store.cli.{module}").COMMANDS:
            declared[command.name] = module
    assert declared == COMMAND_MODULES


def test_the_head_read_from_the_scripts_is_alembics() -> None:
    assert head() == _alembic_head()
