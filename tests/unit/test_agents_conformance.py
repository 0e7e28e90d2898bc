"""Issue 33: one conformance check per agent, generated from the registry.

For every registered agent (a new agent's folder gets its check without a line here), its
files, the fixtures under tests/fixtures, the recorded corpus and the databases the agents'
own writers build (tests/agent_databases.py), are each:

* claimed by the agent's detector with the best confidence, no other format's as high;
* read into sessions with messages, with no record of a kind the reader has never seen and
  no problem but those the fixture was written to have (:data:`EXPLAINED`).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from agent_databases import (
    GOOSE_DIR,
    GOOSE_SESSION,
    SEPT,
    build_home,
    goose_text,
    write_crush,
    write_goose,
    write_opencode,
    write_opencode_storage,
)
from backends import corpus

from store.agents.registry import AgentDefinition, agents
from store.importers.agentdb import is_sqlite_file
from store.importers.explain import explain_file
from store.importers.listing import iter_import_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

#: Problems fixtures were written to have (a torn last write, a foreign line), by the
#: file's name and the problem's words: each one is known, the rest would fail.
EXPLAINED = {
    ("wire.jsonl", "not JSON"): "a torn line, as a crash mid-write leaves",
    ("events.jsonl", "not JSON"): "a torn line, as a crash mid-write leaves",
    ("8b1d6c2e-4f3a-4c5b-9d7e-0a1b2c3d4e5f.jsonl", "not JSON"): "a torn line",
}


def fixture_files() -> list[Path]:
    """Every file an import of the fixtures reads (sidecars left to their main files)."""
    return sorted(p for p in iter_import_files([FIXTURES]) if isinstance(p, Path))


def built_files(name: str, tmp_path: Path) -> list[Path]:
    """What the agents' own writers build: the databases and the files beside them."""
    if name == "crush":
        return [write_crush(tmp_path / "proj")]
    if name == "opencode":
        database = write_opencode(tmp_path / "data")
        storage = write_opencode_storage(tmp_path / "old", database)
        return [database, *sorted((storage / "session").rglob("*.json"))]
    if name == "goose":
        database = write_goose(tmp_path / "data")
        legacy = tmp_path / f"{GOOSE_SESSION}.jsonl"
        with sqlite3.connect(f"{database.resolve().as_uri()}?immutable=1", uri=True) as conn:
            rows = conn.execute("SELECT role, content_json, created_timestamp FROM messages "
                                "WHERE session_id = ? ORDER BY id", (GOOSE_SESSION,)).fetchall()
        lines = [{"working_dir": GOOSE_DIR, "description": "Fix the build",
                  "message_count": len(rows), "total_tokens": 12800}]
        lines += [{"role": role, "created": at, "content": json.loads(content)}
                  for role, content, at in rows]
        lines.append({"role": "user", "created": SEPT + 90, "content": [goose_text("more")]})
        legacy.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
        return [database, legacy]
    return build_home(name, tmp_path / "home")  # (a case's build.py: tests/agent_files)


def database_tables(path: Path) -> dict[str, set[str]]:
    with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()]
        return {n: {r[1] for r in conn.execute(f'PRAGMA table_info("{n}")').fetchall()}
                for n in names}


def corpus_files(name: str) -> list[Path]:
    folder = {"claude-code": "claude_code", "codex": "codex"}.get(name)
    return sorted(corpus(folder).glob("*.jsonl")) if folder else []


@pytest.fixture(scope="module")
def claimed() -> dict[str, list[Path]]:
    """The fixture files by the format that claims them best."""
    found: dict[str, list[Path]] = {}
    for file in fixture_files():
        try:
            explained = explain_file(file)
        except Exception:  # (a sidecar no format claims: not an agent's file to check)
            continue
        found.setdefault(explained.format, []).append(file)
    return found


@pytest.mark.parametrize("definition", agents(), ids=lambda a: a.name)
def test_the_agents_own_files_are_claimed_by_it_and_read_cleanly(
        definition: AgentDefinition, claimed: dict[str, list[Path]], tmp_path: Path) -> None:
    name = definition.name
    files = [*claimed.get(name, []), *corpus_files(name), *built_files(name, tmp_path)]
    assert files, (f"no file of {name} to check: add one under tests/fixtures/agents/ (or a "
                   "writer in tests/agent_databases.py)")
    read = 0
    for file in files:
        explained = explain_file(file)
        assert explained.format == name, (file, explained.claims)
        assert explained.confidence is not None and explained.confidence > 0
        runner = explained.runner_up
        assert runner is None or runner.confidence < explained.confidence, (
            file, explained.claims)
        if is_sqlite_file(file):  # no other agent's layout claims the tables, unless
            tables = database_tables(file)  # only this one names the file (a fork's file)
            fitting = [a for a in agents() if a.database is not None
                       and a.database.claims(tables)]
            named = [a.name for a in fitting if a.names_file(file.name)]
            assert [a.name for a in fitting] == [name] or named == [name], (file, fitting)
        parsed = explained.parsed
        # Messages, or a file left aside on purpose, with the reason (Kimi CLI's
        # context.jsonl beside its wire.jsonl).
        assert parsed.messages > 0 or parsed.skipped, file
        assert parsed.unknown_kinds == {}, (file, parsed.kinds)
        unexplained = [str(p) for p in parsed.problems
                       if not any(file.name == f and words in p.message
                                  for f, words in EXPLAINED)]
        assert unexplained == [], file
        accounted = sum(sum(counts.values()) for counts in parsed.kinds.values())
        assert accounted > 0, (file, parsed.kinds)
        if parsed.messages:
            kept = sum(counts.get("stored", 0) + counts.get("read", 0)
                       for counts in parsed.kinds.values())
            assert kept > 0, (file, parsed.kinds)
        read += parsed.messages
    assert read > 0, f"no message read from any file of {name}"
