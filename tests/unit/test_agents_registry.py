"""Issue 33: one agent, one folder. The registry (store/agents/) is the one place an agent
is described; detection, the formats, the homes and docs/agents.md's table are made from it;
detection takes the best confidence, so a newer agent's records are never claimed by an older
agent's generic rule; and each agent's own files pass its conformance check
(test_agents_conformance.py)."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import store
from store.agents.registry import (
    STRONG,
    Sample,
    agent,
    agent_for_format,
    agents,
)
from store.capture.agents import AGENT_FOLDERS
from store.capture.files import LINE_FORMATS
from store.importers import FORMATS
from store.importers import formats as formats_module
from store.importers.agentdb import DB_FORMATS
from store.importers.formats import claims, detect_format, read_sessions

ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = ROOT / "store" / "agents"


def load_script() -> Any:
    spec = importlib.util.spec_from_file_location("agents_table",
                                                  ROOT / "scripts" / "agents_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_agent_folder_is_registered_and_the_thirteen_are_there() -> None:
    folders = {p.name for p in AGENTS_DIR.iterdir() if (p / "__init__.py").is_file()}
    assert {a.package.rsplit(".", 1)[1] for a in agents()} == folders
    # (the thirteen first, in their order; agents added since sort after them: order >= 200)
    assert [a.name for a in agents()][:13] == [
        "claude-code", "codex", "gemini-cli", "kward", "qwen-code", "kimi-cli", "copilot-cli",
        "cline", "roo-code", "openhands", "opencode", "goose", "crush"]
    for definition in agents():
        assert (AGENTS_DIR / definition.package.rsplit(".", 1)[1] / "reader.py").is_file()
        assert callable(definition.reader())
        assert definition.display_name and definition.records, definition.name


def test_the_lists_that_were_kept_by_hand_are_made_from_the_registry() -> None:
    names = [n for a in agents() for n in a.format_names]
    assert FORMATS == ("openai-chat", "openai-responses", "anthropic", "transcript-store",
                       *names)
    assert AGENT_FOLDERS == tuple(row for a in agents() for row in a.homes)
    assert {row.agent for row in AGENT_FOLDERS} <= {a.name for a in agents()}
    assert DB_FORMATS == {"crush", "opencode", "goose"}
    assert LINE_FORMATS == {"transcript-store", "claude-code", "codex", "kward"}
    assert agent_for_format("roo-code") is agent("roo-code")
    assert agent_for_format("anthropic") is None
    assert store.agent_definitions() == agents()


def test_an_agent_names_its_vocabulary_rows() -> None:
    """The rows scoped to an agent (the global ones hold for every agent)."""
    assert dict(agent("codex").tool_rows())["view_image"] == "read"
    assert dict(agent("kimi-cli").tool_rows())["Shell"] == "bash"
    assert agent("kward").tool_rows() == ()  # Kward's names are the global ones


def test_the_docs_table_is_generated_from_the_registry() -> None:
    """docs/agents.md's coverage table is the registry's (`scripts/agents_table.py` writes
    it); the hand-written rest of the page is kept."""
    script = load_script()
    page = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    assert script.render(page) == page, "stale: run .venv/bin/python scripts/agents_table.py"
    for definition in agents():
        assert f"\n| {definition.name} | " in page
    assert "## Where the store looks" in page  # the hand-written part is still there
    with pytest.raises(ValueError, match="lacks the markers"):
        script.render("# no markers here\n")


# -- detection by confidence --------------------------------------------------------------------


PI_LINES: list[dict[str, Any]] = [
    {"type": "session", "version": 3, "id": "pi-1", "timestamp": "2026-01-01T00:00:00Z",
     "cwd": "/w"},
    {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
     "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
    {"type": "thinking_level_change", "id": "a2", "thinkingLevel": "high"},
]


def _pi_detect(path: Path | None, first: list[Sample]) -> float:
    return STRONG if any(s.top is not None and s.top.get("type") == "thinking_level_change"
                         for s in first) else 0.0


def test_a_new_agents_records_are_not_claimed_by_an_older_generic_rule(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Kward's ``session`` header looks like pi's: without pi, Kward claims the file (its
    header rule is not proof); with a pi definition that knows its own records, pi wins,
    whatever the order the agents are listed in."""
    assert detect_format(tmp_path / "s.jsonl", PI_LINES) == "kward"
    kward = agent("kward")
    pi = replace(kward, name="pi", display_name="pi", package="store.agents.kward",
                 order=1, detect=_pi_detect, formats=())
    monkeypatch.setattr(formats_module, "agents", lambda: (*agents(), pi))
    found = claims(tmp_path / "s.jsonl", PI_LINES)
    assert [(c.format, c.confidence) for c in found[:2]] == [("pi", STRONG), ("kward", 0.8)]
    assert detect_format(tmp_path / "s.jsonl", PI_LINES) == "pi"


def test_qwen_code_records_beat_claude_codes_uuid_rule(tmp_path: Path) -> None:
    line = {"uuid": "u1", "parentUuid": None, "sessionId": "s", "type": "user",
            "message": {"role": "user", "parts": [{"text": "hi"}]}}
    found = claims(tmp_path / "q.jsonl", [line])
    assert [c.format for c in found][:2] == ["qwen-code", "claude-code"]
    assert found[0].confidence > found[1].confidence


def test_no_claim_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(store.ImportFileError, match="cannot tell the format"):
        detect_format(tmp_path / "x.json", [{"nothing": "known"}])


def test_an_agent_package_without_a_definition_is_refused(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A folder below store/agents/ must define AGENT: the registry says which one does not
    (a ConfigurationError, not an agent silently missing)."""
    import sys

    import store.agents as package

    (tmp_path / "half_done").mkdir()
    (tmp_path / "half_done" / "__init__.py").write_text('"""No AGENT yet."""\n')
    monkeypatch.setattr(package, "__path__", [str(tmp_path)])
    monkeypatch.delitem(sys.modules, "store.agents.half_done", raising=False)
    agents.cache_clear()
    try:
        with pytest.raises(store.ConfigurationError, match="defines no AGENT"):
            agents()
    finally:
        monkeypatch.undo()
        agents.cache_clear()
    assert len(agents()) == sum(1 for p in AGENTS_DIR.iterdir() if (p / "__init__.py").is_file())


# -- what was not read ----------------------------------------------------------------------------


def claude_lines(extra: dict[str, Any]) -> list[dict[str, Any]]:
    base = {"sessionId": "cc-1", "cwd": "/w", "version": "2.1.0", "isSidechain": False,
            "userType": "external", "timestamp": "2026-01-01T00:00:00Z"}
    return [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None,
         "message": {"role": "user", "content": "hello"}},
        {**base, "type": "assistant", "uuid": "u2", "parentUuid": "u1",
         "message": {"id": "m1", "role": "assistant", "model": "claude",
                     "content": [{"type": "text", "text": "hi"}]}},
        {**base, "uuid": "u3", "parentUuid": "u2", **extra},
        {**base, "type": "summary", "summary": "A title", "leafUuid": "u2"},
    ]


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def test_the_account_says_what_each_kind_became(tmp_path: Path) -> None:
    file = write_lines(tmp_path / "cc-1.jsonl",
                       claude_lines({"type": "progress", "data": {}}))
    with file.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    parsed = read_sessions(file, settle=0)
    assert parsed.kinds == {"user": {"stored": 1}, "assistant": {"stored": 1},
                            "progress": {"skipped": 1}, "summary": {"skipped": 1},
                            "(not JSON)": {"not understood": 1}}
    assert parsed.unknown_kinds == {}


def test_a_kind_the_reader_has_never_seen_is_counted_not_silent(tmp_path: Path) -> None:
    file = write_lines(tmp_path / "cc-1.jsonl",
                       claude_lines({"type": "brand-new-kind", "data": {"x": 1}}))
    parsed = read_sessions(file, settle=0)
    assert parsed.kinds["brand-new-kind"] == {"skipped": 1}
    assert parsed.unknown_kinds == {"brand-new-kind": 1}
    assert parsed.messages == 2  # the rest is read as before


def test_the_wheel_ships_every_agent_folder() -> None:
    """pyproject.toml lists packages by name: each agent's folder must be one of them, or an
    installed store would not find the agent."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = set(config["tool"]["setuptools"]["packages"])
    assert {a.package for a in agents()} | {"store.agents"} <= shipped
