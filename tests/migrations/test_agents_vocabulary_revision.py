"""Revision 0012 (issue 26): the tool names of Qwen Code, Kimi CLI and GitHub Copilot CLI are
seeded into a database made before them; an alias the user already set is left alone, and
the frozen copy in the revision matches the library's vocabulary."""

from __future__ import annotations

import importlib.util
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text

from store.db.schema import migrate
from store.db.schema.engine import create_store_engine
from store.tools.vocabulary import VOCABULARY

REVISION = (Path(__file__).resolve().parents[2] / "migrations" / "versions"
            / "2026_12_02_0012_agents_jsonl_vocabulary.py")
AGENTS = ("qwen-code", "kimi-cli", "copilot-cli")


def frozen() -> list[tuple[str, str, str]]:
    spec = importlib.util.spec_from_file_location("revision_0012", REVISION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module._VOCABULARY)


def test_the_frozen_rows_are_the_vocabularys_rows_for_these_agents() -> None:
    assert set(frozen()) == {row for row in VOCABULARY if row[0] in AGENTS}
    assert len(frozen()) == len(set(frozen()))


def test_the_upgrade_seeds_the_rows_and_keeps_an_alias_the_user_set(new_url: str) -> None:
    engine = create_store_engine(new_url)
    try:
        migrate.upgrade(engine, "0011")
        with engine.begin() as conn:
            conn.execute(text(
                "INSERT INTO tool_aliases (agent, raw_name, current_name, created_at) "
                "VALUES ('qwen-code', 'task', 'my_task', :t)"), {"t": datetime.now(UTC)})
        migrate.upgrade(engine)
        with engine.connect() as conn:
            rows = {tuple(r) for r in conn.execute(text(
                "SELECT agent, raw_name, current_name FROM tool_aliases WHERE agent IN "
                "('qwen-code', 'kimi-cli', 'copilot-cli')"))}
        expected = {r for r in frozen() if r[:2] != ("qwen-code", "task")}
        assert rows == expected | {("qwen-code", "task", "my_task")}
    finally:
        engine.dispose()
