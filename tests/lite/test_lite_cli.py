"""The command line's stdlib reads (issue 39) read an SQLite file without writing to it, and
fall back to the store, with its worded errors, where they decline."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from store.cli.main import cli

READS = [
    ["tools", "usage"], ["tools", "usage", "--json", "--agent", "openhands"],
    ["sessions", "show", "oh-1"], ["sessions", "show", "goose"],
    ["calls", "search", "--command", "git push", "--limit", "0", "--json"],
    ["calls", "search", "--text", "a.py"], ["calls", "search", "--tool", "read", "--limit", "3"],
    ["calls", "search", "--tool", "nothing-such"], ["usage", "daily"], ["usage", "model", "--json"],
    ["usage", "session"], ["search", "file"], ["tools", "usage", "--by", "day"],
    ["aliases", "list"], ["sessions", "tree", "oh-1"],
    ["usage", "--by", "project"], ["usage", "--by", "agent", "--json"],  # (the earlier form)
]


def test_the_stdlib_reads_write_nothing(tmp_path: Path, lite_db: Path) -> None:
    path = tmp_path / "quiet.sqlite"
    shutil.copy(lite_db, path)  # (no WAL beside it: the reads open the file immutable)
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}

    for argv in READS:
        done = CliRunner().invoke(cli, [*argv, "--db", str(path)])
        assert done.exit_code == 0, (argv, done.output)
        assert done.output.strip(), argv

    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before


def test_an_unclear_session_prefix_gets_the_stores_words(lite_db: Path) -> None:
    for argv in (["tools", "usage", "--session", "oh-"],
                 ["calls", "search", "--session", "oh-"], ["sessions", "show", "oh-"]):
        done = CliRunner().invoke(cli, [*argv, "--db", str(lite_db)])
        assert done.exit_code == 1 and "oh-1" in done.output and "oh-2" in done.output, argv


def test_an_unknown_tool_is_named_with_its_nearest(lite_db: Path) -> None:
    done = CliRunner().invoke(cli, ["calls", "search", "--tool", "grpe", "--db", str(lite_db)])

    assert done.exit_code == 0 and "no calls match" in done.output and "grep" in done.output


def test_the_alias_list_reads_as_the_store_reads_it(lite_url: str) -> None:
    """``aliases list`` on the database's own driver: every alias, global and scoped, as
    ``TranscriptStore.aliases`` gives it, without SQLAlchemy."""
    import json

    from backends import imported_modules

    import store

    with store.TranscriptStore.open(lite_url, read_only=True) as db:
        expected = [{"agent": a, "raw_tool": raw, "tool": cur} for a, raw, cur in
                    db.aliases().rows()]
    modules, out = imported_modules("aliases", "list", "--json", "--db", lite_url,
                                    roots=("sqlalchemy",))
    assert [json.loads(line) for line in out.splitlines()] == expected
    assert any(row["agent"] == "openhands" for row in expected)  # (a scoped one is there)
    assert "sqlalchemy" not in modules and "store.db.store" not in modules


def test_the_lineage_and_the_rolled_up_usage_read_without_sqlalchemy(lite_url: str) -> None:
    """``sessions tree`` (on ``ReadOnlyStore``) and the usage reports that roll subagents up
    into their roots read on the database's driver alone."""
    from backends import imported_modules

    for argv in (["sessions", "tree", "oh-1", "--json"], ["usage", "session", "--json"],
                 ["usage", "project", "--json"]):
        modules, out = imported_modules(*argv, "--db", lite_url, roots=("sqlalchemy",))
        assert out.strip(), argv
        assert "sqlalchemy" not in modules and "store.db.store" not in modules, argv
