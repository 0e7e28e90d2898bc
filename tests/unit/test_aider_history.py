"""Issue 34: Aider's Markdown history (``.aider.chat.history.md``), which lives in each
repository: found below any folder given to ``import``, in the home's projects one and two
folders down by ``import`` without paths, read as aider writes it (store/agents/aider)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import store
from store.capture.agents import agent_folders
from store.importers.formats import read_sessions
from store.importers.listing import iter_import_files

HISTORY = ".aider.chat.history.md"


def run(started: str, prompt: str, reply: str) -> str:
    """One run of aider as its writer appends it (aider/io.py)."""
    return (f"\n# aider chat started at {started}\n\n> Aider v0.84.0  \n"
            f"> Model: gpt-4o with diff edit format  \n\n#### {prompt}  \n\n{reply}\n\n"
            "> Tokens: 950 sent, 40 received.  \n")


def test_import_of_a_folder_finds_a_history_in_any_repository_below_it(
        store_url: str, tmp_path: Path) -> None:
    from store.cli.main import cli

    deep = tmp_path / "code" / "clients" / "acme" / "site"
    deep.mkdir(parents=True)
    (deep / HISTORY).write_text(run("2025-02-03 09:00:00", "fix the footer", "Done."),
                                encoding="utf-8")
    (tmp_path / "code" / ".git").mkdir()  # (never entered)
    (tmp_path / "code" / ".git" / HISTORY).write_text(run("2025-02-03 10:00:00", "x", "y"),
                                                      encoding="utf-8")
    done = CliRunner().invoke(cli, ["import", "--db", store_url, "--yes", "--settle", "0",
                                    "--json", str(tmp_path / "code")])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["failed"] == []
    with store.TranscriptStore.open(store_url, read_only=True) as db:
        sessions = db.list_sessions(limit=None)
        assert [(s.session_id, s.agent, s.title) for s in sessions] == [
            ("aider:site:2025-02-03T09:00:00", "aider", "fix the footer")]
        assert db.get_session("aider:site:2025-02-03T09:00:00").cwd == str(deep.resolve())


def test_import_without_paths_looks_one_and_two_folders_below_the_home(tmp_path: Path) -> None:
    for place in ("notes", "code/webapp", "code/clients/acme", ".config/x"):
        (tmp_path / place).mkdir(parents=True)
        (tmp_path / place / HISTORY).write_text(run("2025-02-03 09:00:00", "p", "r"),
                                                encoding="utf-8")
    found = {p.relative_to(tmp_path).as_posix() for a, p in agent_folders(tmp_path, {})
             if a == "aider"}
    # (two levels: a glob of two listings; deeper repositories need `import <folder>`)
    assert found == {f"notes/{HISTORY}", f"code/webapp/{HISTORY}", f".config/x/{HISTORY}"}
    listed = [p for p in iter_import_files([tmp_path / "code"]) if isinstance(p, Path)]
    assert sorted(p.parent.name for p in listed) == ["acme", "webapp"]


def test_a_reply_keeps_its_own_quotes_and_headings(tmp_path: Path) -> None:
    """A reply's Markdown quote or ``####`` heading is the reply's (aider's own lines end in
    the two spaces of a line break; a reply's do not)."""
    reply = "#### Why\n\n> the docs say so\n\nSo I changed it."
    file = tmp_path / HISTORY
    file.write_text(run("2025-02-03 09:00:00", "why?", reply), encoding="utf-8")
    parsed = read_sessions(file, settle=0)
    [session] = parsed.sessions
    roles = [m.role for m in session.items]
    assert roles == ["system", "user", "assistant", "system"]
    assert session.items[2].text == reply
    assert session.usage[session.keys[2]].input_tokens == 950
    assert parsed.problems == []


def test_a_history_being_written_holds_its_last_exchange_back(tmp_path: Path) -> None:
    file = tmp_path / HISTORY
    file.write_text(run("2025-02-03 09:00:00", "first", "one") + "\n#### second  \n",
                    encoding="utf-8")
    now = time.time()
    os.utime(file, (now, now))
    parsed = read_sessions(file, settle=300)
    [session] = parsed.sessions
    assert [m.role for m in session.items] == ["system", "user", "assistant", "system"]
    assert len(parsed.deferred) == 1
    settled = read_sessions(file, settle=0)
    assert settled.sessions[0].keys[:4] == session.keys  # the same keys: stored once
    assert [m.text for m in settled.sessions[0].items][4:] == ["second"]


def test_text_before_the_first_header_is_a_problem_not_a_session(tmp_path: Path) -> None:
    file = tmp_path / HISTORY
    file.write_text("stray\n" + run("2025-02-03 09:00:00", "p", "r"), encoding="utf-8")
    parsed = read_sessions(file, settle=0)
    assert [p.line for p in parsed.problems] == [1]
    assert len(parsed.sessions) == 1


@pytest.mark.parametrize("name", ["notes.md", "aider.chat.history.md"])
def test_other_markdown_files_are_not_read(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(run("2025-02-03 09:00:00", "p", "r"), encoding="utf-8")
    assert [p for p in iter_import_files([tmp_path]) if isinstance(p, Path)] == []
