"""Issue 33/34: each agent exact on its own files, found with no paths in a fake home.

Every folder ``tests/agent_files/<case>/`` holds ``home/`` (a user's home folder with the
agent's files where the agent writes them: Linux, macOS or Windows places) and
``expected.json`` (``{"agent": ..., "sources": [...], "sessions": [...]}``: what a user must
see of each session, written by hand from the files, :mod:`snapshot`; ``"copy": {folder:
place in the home}`` lays fixtures kept elsewhere in the home too, ``"corpus": {file of the
recorded corpus: place}`` the corpus' own files; ``"paths"`` imports those folders of the home
instead of none, for an agent without a home; a ``build.py`` with
``build(home)`` writes the agent's databases there, so no binary file is kept in git). The
test copies the home, runs ``transcript-store import`` with no paths under ``HOME=<copy>``
(every variable that moves an agent's home unset), on both backends, and compares the
store's sessions with the expectation, field by field (a path below the fake home written
``$HOME/...``), and the search indexes the import wrote with the rows with those a rebuild
from the tables makes. A new agent's case is a new folder: no line here.

``AGENT_FILES_WRITE=1`` writes a case's ``expected.json`` sessions from the current reading
instead (to review as a diff: a reader's change shows field by field).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from agent_databases import build_home
from backends import corpus
from click.testing import CliRunner
from index_rows import derived_rows
from snapshot import store_snapshot

import store
from store.capture.agents import AGENT_FOLDERS

HERE = Path(__file__).parent
CASES = sorted(p for p in HERE.iterdir() if (p / "expected.json").is_file())
#: Variables that move an agent's home or the places it follows: unset for the test.
MOVERS = sorted({n for row in AGENT_FOLDERS for n in row.env_names}
                | {"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "APPDATA",
                   "LOCALAPPDATA", "TRANSCRIPT_STORE_URL"})


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_the_agents_home_is_found_and_read_exactly(case: Path, store_url: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from store.cli.main import cli

    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    assert expected.get("sources"), f"{case.name}: cite where the format was learnt"
    home = tmp_path / "home"
    if (case / "home").is_dir():
        shutil.copytree(case / "home", home, symlinks=True)
    for source, place in expected.get("copy", {}).items():  # fixtures shared with others
        shutil.copytree(case / source, home / place, dirs_exist_ok=True)
    for source, place in expected.get("corpus", {}).items():  # the recorded corpus' files
        target = home / place
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus(*source.split("/")[:-1]) / source.rsplit("/", 1)[-1], target)
    build_home(case.name, home)  # (databases the case builds: its build.py)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for name in MOVERS:
        monkeypatch.delenv(name, raising=False)
    for name, value in expected.get("env", {}).items():  # a home moved on purpose
        monkeypatch.setenv(name, value.replace("$HOME", str(home)))
    # With no paths (the agent's homes), or the folders a case names (an agent without a
    # home of its own: Kward's files lie where its user keeps them).
    paths = [str(home / p) for p in expected.get("paths", [])]
    done = CliRunner().invoke(cli, ["import", "--db", store_url, "--yes", "--settle", "0",
                                    "--json", *paths])
    assert done.exit_code == expected.get("exit", 0), done.output
    summary = json.loads(done.stdout)
    assert summary["failed"] == expected.get("failed", []), done.output
    assert len(summary["problems"]) == expected.get("problems", 0), summary["problems"]
    assert summary["unknown_kinds"] == {}, summary["unknown_kinds"]
    with store.TranscriptStore.open(store_url, read_only=True) as db:
        found = store_snapshot(db)
    # A path below the fake home (an agent that records none: the file's own folder) reads
    # as "$HOME/..." in the expectation.
    for place in {str(home.resolve()), str(home)}:
        found = json.loads(json.dumps(found).replace(json.dumps(place)[1:-1], "$HOME"))
    if os.environ.get("AGENT_FILES_WRITE") and store_url.startswith("sqlite"):
        expected["sessions"] = found
        (case / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False)
                                            + "\n", encoding="utf-8")
    assert {s["agent"] for s in found} <= {expected["agent"]}
    assert [s["id"] for s in found] == [s["id"] for s in expected["sessions"]]
    for got, want in zip(found, expected["sessions"], strict=True):
        for key in want:
            assert got[key] == want[key], (got["id"], key)
        assert set(got) == set(want), got["id"]
    # The search indexes the import wrote with its rows are those the catch-ups build again
    # from the tables (store/db/writing/indexing.py), and ``verify`` finds them sound.
    with store.TranscriptStore.open(store_url) as db:
        written = derived_rows(db)
        report = db.verify()
        assert report.ok, report
        store.refill_search_index(db, workers=1)
        assert derived_rows(db) == written
