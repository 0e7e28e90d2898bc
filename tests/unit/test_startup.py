"""Start-up of the command line (issue 15): ``--help`` loads no database, terminal-drawing or
migration code, and a read command on a database at head never imports Alembic (its head is
read from the revision scripts, and agrees with Alembic's). What is imported is asserted, not
how long it takes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from backends import imported_modules

from store import TranscriptStore
from store.db.schema.migrate import _alembic_head, head


def loaded(*argv: str) -> set[str]:
    return imported_modules(*argv, roots=("sqlalchemy", "rich", "alembic", "psycopg",
                                          "logging", "shutil"))[0]


def test_help_imports_no_database_rich_or_migration_code() -> None:
    modules = loaded("--help")

    assert not {m for m in modules if m.split(".")[0] in ("sqlalchemy", "rich", "alembic",
                                                          "psycopg")}
    # (the package logs through store.core.logs: logging loads with the first message)
    assert "logging" not in modules
    assert "store.db.store" not in modules and "store.viewer" not in modules
    # (the commands are listed from COMMAND_HELP: no command's module is loaded; plain:
    # quiet_stdout, for a closed pipe, with nothing but the stdlib)
    assert not {m for m in modules if m.startswith("store.cli.")} - {
        "store.cli", "store.cli.main", "store.cli._common", "store.cli.plain"}


def test_the_root_help_lists_each_commands_own_short_help() -> None:
    import importlib

    import click

    from store.cli.main import COMMAND_HELP, COMMAND_MODULES

    assert list(COMMAND_HELP) == list(COMMAND_MODULES)
    for name, module in COMMAND_MODULES.items():
        command = next(c for c in importlib.import_module(f"store.cli.{module}").COMMANDS
                       if c.name == name)
        for limit in (20, 40, 60, 94, 150, 300):
            assert click.Command(name, help=COMMAND_HELP[name]).get_short_help_str(limit) \
                == command.get_short_help_str(limit), (name, limit)


def test_a_read_command_on_a_database_at_head_imports_no_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'small.sqlite'}"
    with TranscriptStore.open(url) as opened:
        opened.append("s", [{"role": "user", "content": "hi"}])

    # (a URL with options: the stdlib reader declines it, the store opens it)
    modules = loaded("sessions", "show", "s", "--db", f"{url}?timeout=5")

    assert "store.db.store" in modules  # it did open the store
    assert not {m for m in modules if m.startswith("alembic")}
    assert "store.viewer" not in modules and "rich.progress" not in modules


def test_sessions_show_on_an_sqlite_file_imports_no_sqlalchemy(tmp_path: Path) -> None:
    """Showing a session reads an SQLite file at head on the stdlib driver
    (``store/db/reading/lite_show.py``)."""
    url = f"sqlite:///{tmp_path / 'small.sqlite'}"
    with TranscriptStore.open(url) as opened:
        opened.append("s", [{"role": "user", "content": "hi"}])

    modules = loaded("sessions", "show", "s", "--db", url)

    assert "store.db.reading.lite_show" in modules
    assert not {m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic", "psycopg")}


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


def test_the_commonest_reads_on_an_sqlite_file_import_no_sqlalchemy(tmp_path: Path) -> None:
    """tools usage, calls search and the usage reports read an SQLite file at head on the
    stdlib driver (issue 39)."""
    path = tmp_path / "small.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        opened.append("s", [{"role": "user", "content": "hi"}, {
            "role": "assistant", "content": None, "tool_calls": [{
                "id": "c1", "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "git push"}'}}]}])

    for argv in (("tools", "usage"), ("tools", "usage", "--session", "s", "--json"),
                 ("calls", "search", "--command", "git push", "--limit", "0", "--json"),
                 ("calls", "search", "--text", "push"), ("calls", "search", "--tool", "bash"),
                 ("calls", "search", "--tool", "nothing"), ("usage", "daily"),
                 ("usage", "model", "--json")):
        modules = loaded(*argv, "--db", str(path))

        assert not {m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic",
                                                              "psycopg")}, argv
        assert "logging" not in modules and "shutil" not in modules, argv


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


def test_the_head_the_stdlib_readers_check_is_the_scripts() -> None:
    """The readers check a file against the written-out head (no script read): a new
    revision script fails here until ``HEAD_REVISION`` names it."""
    from store.db.schema.revisions import HEAD_REVISION, scripted_head, shipped_head

    assert HEAD_REVISION == shipped_head() == scripted_head() == _alembic_head()


READER = """
import json, sys
import store
with store.ReadOnlyStore.open(sys.argv[1]) as reader:
    listed = reader.list_sessions(limit=5)
    counted = reader.count_sessions()
print(json.dumps([[s.session_id for s in listed], counted, type(listed[0]).__module__,
                  sorted(m for m in sys.modules if m.split(".")[0] in
                         ("sqlalchemy", "alembic", "json_schema", "rich")
                         or m.startswith("store."))]))
"""


def test_a_read_only_open_and_listing_create_no_message_classes(tmp_path: Path) -> None:
    """``ReadOnlyStore.open`` and its first listing load the session classes only
    (``store.core.sessioninfo``): not the message classes, not the store, no script read."""
    url = f"sqlite:///{tmp_path / 'small.sqlite'}"
    with TranscriptStore.open(url) as opened:
        opened.append("a", [{"role": "user", "content": "hi"}])
        opened.append("b", [{"role": "user", "content": "hello"}])

    out = subprocess.run([sys.executable, "-c", READER, url], capture_output=True,
                         text=True, check=True).stdout
    listed, counted, module, modules = json.loads(out.strip().splitlines()[-1])

    assert sorted(listed) == ["a", "b"] and counted == 2
    assert module == "store.core.sessioninfo"
    assert not {m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic", "rich")}
    assert not {"store.core.model", "store.core.transcript", "store.db.store",
                "store.db.schema.migrate"} & set(modules)


LOGS = """
import sys
from store.core.logs import logger
log = logger("store.probe")
assert "logging" not in sys.modules
if {configure}:
    import logging
    logging.basicConfig(stream=sys.stdout, format="%(name)s %(filename)s:%(lineno)d %(message)s")
log.warning("first %s", "message")
log.info("not shown at WARNING")
assert "logging" in sys.modules
"""


def test_a_message_imports_logging_and_is_silent_until_logging_is_configured() -> None:
    """The package's loggers (store.core.logs) load ``logging`` on their first message:
    unconfigured, nothing is printed (the package's NullHandler, not Python's last resort);
    configured, the record names the caller's own file and line."""
    silent = subprocess.run([sys.executable, "-c", LOGS.format(configure=False)],
                            capture_output=True, text=True, check=True)
    assert silent.stdout == "" and silent.stderr == ""

    shown = subprocess.run([sys.executable, "-c", LOGS.format(configure=True)],
                           capture_output=True, text=True, check=True)
    assert shown.stdout.splitlines() == ["store.probe <string>:9 first message"]
