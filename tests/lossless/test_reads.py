"""Issue 12, item 8: reads never create or migrate anything (both backends where it applies).

A read command on a typo path used to create a migrated 127 KB file (and its folders) and
print "0 sessions"; a database made by a newer version advised ``db upgrade``, which then
printed a traceback; a read-only open left ``-wal``/``-shm`` files behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store import DatabaseError, StoreError, TranscriptStore
from store.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
READS = [
    ["sessions", "list"],
    ["sessions", "show", "s1"],
    ["calls", "search", "--tool", "bash"],
    ["tools", "usage"],
    ["export", "--to", "jsonl"],
    ["db", "current"],
    ["db", "check"],
]


def cli_run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception)
    return result.exit_code, result.output


@pytest.mark.parametrize("command", READS, ids=" ".join)
def test_a_read_on_a_missing_sqlite_path_creates_nothing(tmp_path: Path,
                                                         command: list[str]) -> None:
    target = tmp_path / "typo" / "deeper" / "typo.sqlite"
    code, output = cli_run(*command, "--db", f"sqlite:///{target}")
    assert code == 1
    assert output.startswith("error: ") and str(target) in output
    assert len(output.strip().splitlines()) == 1
    assert not (tmp_path / "typo").exists()


def test_a_read_on_a_missing_postgres_database_is_an_error() -> None:
    from backends import ADMIN_URL

    url = ADMIN_URL.rsplit("/", 1)[0] + "/ts_lossless_no_such_database"
    with pytest.raises(DatabaseError):
        TranscriptStore.open(url, read_only=True)
    code, output = cli_run("sessions", "list", "--db", url)
    assert code == 1 and output.startswith("error: ")


def test_the_library_read_only_open_of_a_missing_file_names_it(tmp_path: Path) -> None:
    target = tmp_path / "nope.sqlite"
    with pytest.raises(StoreError, match="nope.sqlite"):
        TranscriptStore.open(f"sqlite:///{target}", read_only=True)
    assert not target.exists()


def _set_revision(url: str, revision: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
    finally:
        engine.dispose()


def test_a_newer_database_says_a_newer_version_made_it(store: TranscriptStore) -> None:
    url = store.engine.url.render_as_string(hide_password=False)
    from store.db.schema.migrate import head

    store.close()
    _set_revision(url, "9999_from_the_future")
    try:
        for read_only in (True, False):
            with pytest.raises(DatabaseError, match="newer transcript-store") as info:
                TranscriptStore.open(url, read_only=read_only)
            assert "9999_from_the_future" in str(info.value) and head() in str(info.value)
        for command in (["sessions", "list"], ["db", "upgrade"], ["db", "check"]):
            code, output = cli_run(*command, "--db", url)
            assert code == 1 and "newer transcript-store" in output, output
            assert "Traceback" not in output
    finally:
        _set_revision(url, head())


def test_a_read_only_open_creates_no_side_files(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as writer:
        writer.append("s1", [{"role": "user", "content": "hi"}])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.sqlite"]
    with TranscriptStore.open(f"sqlite:///{path}", read_only=True) as reader:
        assert len(reader.load("s1")) == 1
        assert [s.session_id for s in reader.list_sessions()] == ["s1"]
    code, _ = cli_run("sessions", "list", "--db", f"sqlite:///{path}")
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.sqlite"]


def test_a_reader_sees_what_a_live_writer_committed(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as writer:
        writer.append("s1", [{"role": "user", "content": "one"}])
        with TranscriptStore.open(f"sqlite:///{path}", read_only=True) as reader:
            assert len(reader.load("s1")) == 1
            writer.append("s1", [{"role": "user", "content": "two"}])
            assert len(reader.load("s1")) == 2
            with pytest.raises(DatabaseError):
                reader.append("s1", [{"role": "user", "content": "three"}])


READER = textwrap.dedent("""
    import sys
    from store import TranscriptStore
    with TranscriptStore.open(sys.argv[1], read_only=True) as store:
        print(len(store.load("s1")))
""")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs root to run the reader as another user")
def test_a_reader_who_cannot_write_the_folder_can_read() -> None:
    tmp_path = Path(tempfile.mkdtemp(prefix="ts-lossless-"))
    os.chmod(tmp_path, 0o755)
    try:
        _read_as_nobody(tmp_path)
    finally:
        shutil.rmtree(tmp_path)


def _read_as_nobody(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "db.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as writer:
        writer.append("s1", [{"role": "user", "content": "hi"}])
    os.chmod(path, 0o644)
    os.chmod(folder, 0o755)
    for parent in (tmp_path, *tmp_path.parents):
        if not os.stat(parent).st_mode & 0o001:
            pytest.skip(f"{parent} is not searchable by other users")
    site = next((ROOT / ".venv" / "lib").glob("python3*/site-packages"))
    python = "/usr/bin/python3"
    if not os.access(python, os.X_OK):
        pytest.skip("no system python to run as another user")
    done = subprocess.run(
        [python, "-c", READER, f"sqlite:///{path}"], user=65534, capture_output=True,
        text=True, timeout=300, env={"PYTHONPATH": f"{site}:{ROOT}", "PATH": "/usr/bin:/bin"})
    if "No module named" in done.stderr:
        pytest.skip(f"the system python cannot import the package: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "1"
    assert sorted(p.name for p in folder.iterdir()) == ["db.sqlite"]
