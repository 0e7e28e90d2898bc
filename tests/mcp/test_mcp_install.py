"""``transcript-store mcp --install AGENT``: each agent's MCP entry written into a fake HOME
(a new file; merged into an existing one, the rest kept; refused on a conflicting entry of
the same name; replaced with --yes), ``--print`` writing nothing, and the instructions
snippet added once."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from store.cli.main import cli

pytest.importorskip("tomlkit")

#: agent -> (the user file under HOME, the key holding the servers, whether typed)
USER_FILES = {
    "claude-code": (".claude.json", "mcpServers", True),
    "codex": (".codex/config.toml", "mcp_servers", False),
    "cursor": (".cursor/mcp.json", "mcpServers", False),
    "gemini-cli": (".gemini/settings.json", "mcpServers", False),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers", False),
}
PROJECT_FILES = {
    "claude-code": ".mcp.json", "codex": ".codex/config.toml", "cursor": ".cursor/mcp.json",
    "gemini-cli": ".gemini/settings.json", "vscode": ".vscode/mcp.json",
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    monkeypatch.delenv("TRANSCRIPT_STORE_URL", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return fake


def install(*args: str, input: str | None = None) -> object:
    return CliRunner().invoke(cli, ["mcp", "--install", *args], input=input)


def read(path: Path) -> dict:
    if path.suffix == ".toml":
        return tomllib.loads(path.read_text())
    return json.loads(path.read_text())


@pytest.mark.parametrize("agent", sorted(USER_FILES))
def test_a_new_file_gets_the_entry(home, agent):
    relative, key, typed = USER_FILES[agent]
    done = install(agent, "--db", "sqlite:////data/store.sqlite")
    assert done.exit_code == 0, done.output
    path = home / relative
    entry = read(path)[key]["transcript-store"]
    assert entry["args"][-3:] == ["mcp", "--db", "sqlite:////data/store.sqlite"]
    assert entry["command"]
    assert (entry.get("type") == "stdio") is typed
    assert path.stat().st_mode & 0o777 == 0o600
    assert str(path) in done.output
    assert not list(path.parent.glob(f".{path.name}.*.tmp"))


@pytest.mark.parametrize("agent", sorted(PROJECT_FILES))
def test_project_scope_writes_the_projects_file(home, agent):
    done = install(agent, "--scope", "project")
    assert done.exit_code == 0, done.output
    path = Path.cwd() / PROJECT_FILES[agent]
    key = "servers" if agent == "vscode" else "mcp_servers" if agent == "codex" \
        else "mcpServers"
    assert read(path)[key]["transcript-store"]["args"][-1] == "mcp"
    assert not (home / PROJECT_FILES[agent]).exists()


def test_windsurf_has_no_project_scope(home):
    done = install("windsurf", "--scope", "project")
    assert done.exit_code == 1
    assert "windsurf has no project MCP configuration" in done.output


@pytest.mark.parametrize("agent", ["claude-code", "cursor", "gemini-cli", "windsurf"])
def test_the_entry_is_merged_into_an_existing_json_file(home, agent):
    relative, key, _ = USER_FILES[agent]
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    mine = {"theme": "dark", "numStartups": 7,
            key: {"github": {"command": "docker", "args": ["run", "gh"]}}}
    path.write_text(json.dumps(mine))
    path.chmod(0o640)
    done = install(agent)
    assert done.exit_code == 0, done.output
    merged = read(path)
    assert merged["theme"] == "dark" and merged["numStartups"] == 7
    assert merged[key]["github"] == mine[key]["github"]
    assert list(merged[key]) == ["github", "transcript-store"]
    assert path.stat().st_mode & 0o777 == 0o640


def test_codex_toml_keeps_the_rest_of_the_file_and_its_comments(home):
    path = home / ".codex/config.toml"
    path.parent.mkdir(parents=True)
    original = ('# my settings\nmodel = "gpt-5-codex"\n\n[mcp_servers.docs]\n'
                'command = "npx"  # the docs server\nargs = ["-y", "docs-mcp"]\n')
    path.write_text(original)
    done = install("codex")
    assert done.exit_code == 0, done.output
    text = path.read_text()
    assert text.startswith(original)
    assert "# the docs server" in text
    parsed = tomllib.loads(text)
    assert parsed["model"] == "gpt-5-codex"
    assert parsed["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"]}
    assert parsed["mcp_servers"]["transcript-store"]["args"][-1] == "mcp"


@pytest.mark.parametrize("agent", sorted(USER_FILES))
def test_a_different_entry_of_the_same_name_is_refused_then_replaced_with_yes(home, agent):
    relative, key, _ = USER_FILES[agent]
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".toml":
        path.write_text('[mcp_servers.transcript-store]\ncommand = "old"\nargs = []\n')
    else:
        path.write_text(json.dumps({key: {"transcript-store": {"command": "old"}}}))
    before = path.read_bytes()
    refused = install(agent)  # no terminal: no question, a refusal
    assert refused.exit_code == 1
    assert "has an MCP server named 'transcript-store' already" in refused.output
    assert "Nothing written (--yes replaces it)" in refused.output
    assert path.read_bytes() == before
    replaced = install(agent, "--yes")
    assert replaced.exit_code == 0, replaced.output
    assert read(path)[key]["transcript-store"]["command"] != "old"


def test_the_same_entry_twice_changes_nothing(home):
    assert install("cursor").exit_code == 0
    path = home / ".cursor/mcp.json"
    first = path.read_bytes()
    again = install("cursor")
    assert again.exit_code == 0
    assert path.read_bytes() == first


def test_another_name_sits_beside_the_first(home):
    assert install("gemini-cli").exit_code == 0
    assert install("gemini-cli", "--name", "archive-2", "--db", "/tmp/other.sqlite"
                   ).exit_code == 0
    servers = read(home / ".gemini/settings.json")["mcpServers"]
    assert set(servers) == {"transcript-store", "archive-2"}
    assert servers["archive-2"]["args"][-1] == "/tmp/other.sqlite"


def test_a_file_that_is_not_json_is_left_alone(home):
    path = home / ".cursor/mcp.json"
    path.parent.mkdir()
    path.write_text("{ // a comment\n}")
    done = install("cursor")
    assert done.exit_code == 1
    assert "is not JSON" in done.output and "Add this by hand" in done.output
    assert path.read_text() == "{ // a comment\n}"


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_print_shows_the_entry_and_the_agents_command_and_writes_nothing(home, agent):
    done = install(agent, "--print")
    assert done.exit_code == 0, done.output
    assert "transcript-store" in done.output
    assert f"{'claude' if agent == 'claude-code' else 'codex'} mcp add" in done.output
    assert "## Past sessions (transcript-store)" in done.output
    assert not any(home.rglob("*"))


def test_print_for_claude_code_is_json_and_a_claude_command(home):
    done = install("claude-code", "--print", "--scope", "project")
    assert "claude mcp add --scope project transcript-store -- " in done.output
    block = done.output.split("\n# or run:")[0].split("\n", 1)[1]
    assert json.loads(block)["mcpServers"]["transcript-store"]["type"] == "stdio"


def test_the_instructions_are_added_once(home):
    agents_md = Path.cwd() / "AGENTS.md"
    agents_md.write_text("# My project\n\nBe nice.\n")
    first = install("codex", "--instructions", "AGENTS.md")
    assert first.exit_code == 0, first.output
    assert "instructions added to AGENTS.md" in first.output
    text = agents_md.read_text()
    assert text.startswith("# My project\n\nBe nice.\n")
    assert text.count("## Past sessions (transcript-store)") == 1
    second = install("codex", "--instructions", "AGENTS.md")
    assert "already in" in second.output
    assert agents_md.read_text() == text


def test_a_relative_sqlite_file_is_written_absolute(home):
    assert install("cursor", "--db", "sqlite:///archive.sqlite").exit_code == 0
    assert install("gemini-cli", "--db", "data/archive.sqlite").exit_code == 0
    assert install("codex", "--db", "postgresql+psycopg://u@db/ts").exit_code == 0
    here = Path.cwd()
    cursor = read(home / ".cursor/mcp.json")["mcpServers"]["transcript-store"]
    assert cursor["args"][-1] == f"sqlite:///{here / 'archive.sqlite'}"
    gemini = read(home / ".gemini/settings.json")["mcpServers"]["transcript-store"]
    assert gemini["args"][-1] == str(here / "data/archive.sqlite")
    codex = read(home / ".codex/config.toml")["mcp_servers"]["transcript-store"]
    assert codex["args"][-1] == "postgresql+psycopg://u@db/ts"


def test_an_unknown_agent_is_a_usage_error(home):
    done = install("notepad")
    assert done.exit_code == 2
    assert "notepad" in done.output


@pytest.mark.parametrize(("argv", "error"), [
    (["--host", "0.0.0.0"], "--host applies with --http only"),
    (["--port", "9000", "--token", "t"], "--port, --token apply with --http only"),
    (["--name", "x"], "--name applies with --install only"),
    (["--http", "--print", "--yes"], "--print, --yes apply with --install only"),
    (["--instructions", "AGENTS.md", "--scope", "project"],
     "--scope, --instructions apply with --install only"),
    (["--install", "codex", "--no-redact"],
     "--redact/--no-redact applies when serving, not with --install"),
    (["--install", "codex", "--http", "--redact-pattern", "x"],
     "--http, --redact-pattern apply when serving, not with --install"),
])
def test_an_option_the_mode_ignores_is_a_usage_error(home, argv, error):
    """Nothing served or written: the option would have done nothing."""
    done = CliRunner().invoke(cli, ["mcp", *argv, "--db", str(home / "none.sqlite")])

    assert done.exit_code == 2 and done.output.splitlines()[-1] == f"Error: {error}"
    assert list(home.iterdir()) == [] and list(Path.cwd().iterdir()) == []


def test_the_token_from_the_environment_is_not_an_option_written(home, monkeypatch):
    """$TRANSCRIPT_STORE_MCP_TOKEN set for HTTP servers does not stop a stdio server (here:
    an install, which serves nothing)."""
    monkeypatch.setenv("TRANSCRIPT_STORE_MCP_TOKEN", "from-the-environment")

    assert install("cursor", "--print").exit_code == 0
