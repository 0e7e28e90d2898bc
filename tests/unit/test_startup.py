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
from store.db.migrate import _alembic_head, head

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

    modules = loaded("sessions", "list", "--db", url)

    assert "store.db.store" in modules  # it did open the store
    assert not {m for m in modules if m.startswith("alembic")}
    assert "store.viewer" not in modules and "rich.progress" not in modules


def test_the_head_read_from_the_scripts_is_alembics() -> None:
    assert head() == _alembic_head()
