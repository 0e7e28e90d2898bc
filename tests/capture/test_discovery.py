"""Issue 26, discovery: ``import`` and ``watch`` without paths find every agent's folders
(where the agent's own variable moves them too), and ``import DIR`` finds the agents' homes
below ``DIR``, dot-directories included, but not their settings nor the noise of tools and
packages; on both backends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import store
from store import TranscriptStore, agent_folders
from store.capture.agents import AgentFolders, home_session_folders
from store.cli.main import cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AGENTS = FIXTURES / "agents"
LINEAGE = FIXTURES / "lineage"
VARIABLES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")


def backup_home(root: Path) -> Path:
    """A copy of a home folder: each agent's sessions under its dot-folder, and what a home
    also holds that is no session (settings, a project's own .claude, packages, git)."""
    home = root / "backup-home"
    shutil.copytree(AGENTS / "claude", home / ".claude")
    shutil.copytree(LINEAGE / "claude", home / ".claude", dirs_exist_ok=True)
    shutil.copytree(AGENTS / "codex", home / ".codex")
    shutil.copytree(LINEAGE / "codex", home / ".codex", dirs_exist_ok=True)
    shutil.copytree(AGENTS / "gemini", home / ".gemini")
    shutil.copytree(LINEAGE / "gemini", home / ".gemini", dirs_exist_ok=True)
    (home / ".claude" / "settings.json").write_text('{"model": "opus"}', encoding="utf-8")
    (home / ".gemini" / "settings.json").write_text("{}", encoding="utf-8")
    project = home / "code" / "app"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.local.json").write_text("{}", encoding="utf-8")
    (project / "node_modules" / "left-pad").mkdir(parents=True)
    (project / "node_modules" / "left-pad" / "package.json").write_text(
        '{"name": "left-pad"}', encoding="utf-8")
    (project / ".git").mkdir()
    (project / ".git" / "config.json").write_text("{}", encoding="utf-8")
    return home


#: Every session of the fake home: the three agents, subagents and continuations included.
EXPECTED = {
    "55550000-0000-4000-8000-000000000001",
    "55550000-0000-4000-8000-000000000001:agent-a1b2c3d4e5f6a7b8c",
    "66660000-0000-4000-8000-000000000002",
    "aaaa0000-0000-4000-8000-00000000000a", "bbbb0000-0000-4000-8000-00000000000b",
    "22222222-2222-4222-8222-222222222222",
    "cccc0000-0000-4000-8000-00000000000c", "dddd0000-0000-4000-8000-00000000000d",
    "eeee0000-0000-4000-8000-00000000000e",
    "6f1c2a9e-3b7d-4c1e-9a55-0d2f8e7b4c11", "7a2b3c4d-1111-4222-8333-444455556666",
    "ffff0000-0000-4000-8000-00000000000f", "gsub-0001",
}


def stored(url: str) -> set[str]:
    with TranscriptStore.open(url, read_only=True) as opened:
        return {s.session_id for s in opened.list_sessions(limit=None)}


def test_import_dir_finds_every_agents_sessions_in_a_backup_of_a_home(store_url, tmp_path):
    home = backup_home(tmp_path)

    result = CliRunner().invoke(cli, ["import", "--settle", "0", "--db", store_url,
                                      "--json", str(home)], catch_exceptions=False)

    summary = json.loads(result.stdout.splitlines()[-1])
    assert result.exit_code == 0, result.output
    assert summary["failed_files"] == 0 and summary["problems"] == []
    assert stored(store_url) >= EXPECTED
    assert len(stored(store_url)) == len(EXPECTED)


def test_import_without_paths_finds_the_agents_folders_of_home(store_url, tmp_path,
                                                               monkeypatch):
    home = backup_home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)

    result = CliRunner().invoke(cli, ["import", "--yes", "--settle", "0", "--db", store_url],
                                catch_exceptions=False)

    assert result.exit_code == 0, result.output
    for agent in ("claude-code", "codex", "gemini-cli"):
        assert agent in result.stderr
    assert stored(store_url) == EXPECTED


def test_each_agents_variable_moves_its_folders(store_url, tmp_path, monkeypatch):
    home = backup_home(tmp_path)
    moved = tmp_path / "elsewhere"
    shutil.move(home / ".codex", moved)
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(moved))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))

    found = store.agent_folders()

    assert [agent for agent, _ in found] == ["claude-code", "codex", "gemini-cli",
                                             "gemini-cli", "gemini-cli"]
    assert (moved / "sessions") in [folder for _, folder in found]
    result = CliRunner().invoke(cli, ["import", "--yes", "--settle", "0", "--db", store_url],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert stored(store_url) == EXPECTED


def test_without_any_agent_folder_the_message_names_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)

    result = CliRunner().invoke(cli, ["import", "--db", str(tmp_path / "x.sqlite")])
    once = CliRunner().invoke(cli, ["watch", "--once", "--db", str(tmp_path / "x.sqlite")])

    for reply in (result, once):
        assert reply.exit_code == 2
        assert "~/.codex/sessions" in reply.output and "$GEMINI_CLI_HOME" in reply.output


def test_the_table_takes_several_variables_and_a_home_below_one(tmp_path: Path):
    row = AgentFolders("some-agent", ("SOME_AGENT_HOME", "XDG_DATA_HOME"),
                       ".local/share/some-agent", ("sessions",), env_below="some-agent")

    assert row.home({"XDG_DATA_HOME": "/data"}, tmp_path) == Path("/data/some-agent")
    assert row.home({"SOME_AGENT_HOME": "/a", "XDG_DATA_HOME": "/data"}, tmp_path) == \
        Path("/a/some-agent")
    assert row.home({}, tmp_path) == tmp_path / ".local/share/some-agent"


@pytest.mark.parametrize("name", [".claude", ".codex", ".gemini"])
def test_an_agents_home_below_a_folder_gives_only_its_session_folders(tmp_path, name):
    home = backup_home(tmp_path)

    found = home_session_folders(home / name)

    assert found and all(folder.is_dir() for _, folder in found)
    assert all("settings" not in str(folder) for _, folder in found)
    assert home_session_folders(home / "code" / "app" / ".claude") == []


def test_agent_folders_are_listed_once(tmp_path: Path):
    home = backup_home(tmp_path)

    found = agent_folders(home, {"CLAUDE_CONFIG_DIR": str(home / ".claude")})

    assert len({folder for _, folder in found}) == len(found)
