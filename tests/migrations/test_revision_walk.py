"""Issue 12, item 3: every revision walked down one step and back up on a populated database,
on both backends, loses no row.

The revisions are read from the scripts (``ScriptDirectory.walk_revisions``), so a new
revision is walked without touching this test. On SQLite the batch "move and copy" of a
table used to run with foreign keys on, and dropping the old table cascaded: tool calls and
results went to 0 on a downgrade of 0003.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import Engine, func, inspect, select, table, text

from store import TranscriptStore
from store.db.schema import migrate
from store.db.schema.engine import create_store_engine

ROOT = Path(__file__).resolve().parents[2]
COUNTED = ("sessions", "messages", "tool_calls", "tool_results", "tool_definitions",
           "tool_aliases")


def populate(url: str) -> None:
    with TranscriptStore.open(url) as store:
        for n in range(3):
            sid = f"s{n}"
            store.append(sid, [
                {"role": "user", "content": f"list files {n}"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"call_{n}a", "type": "function",
                     "function": {"name": "run_shell_command", "arguments": '{"command":"ls"}'}},
                    {"id": f"call_{n}b", "type": "function",
                     "function": {"name": "read_file", "arguments": "{not json"}}]},
                {"role": "tool", "tool_call_id": f"call_{n}a", "content": "a.txt"},
                {"role": "tool", "tool_call_id": f"call_{n}b", "content": "no"},
            ], keys=[f"{sid}-{i}" for i in range(4)])
            store.record_tools(sid, [{"name": "bash", "description": "run",
                                      "parameters": {"type": "object", "properties": {}}}])
        store.fork("s0", 4, "s0-fork")
        store.add_alias("grep_tool", "grep")


def counts(engine: Engine) -> dict[str, int]:
    present = set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        return {name: conn.execute(select(func.count()).select_from(table(name))).scalar_one()
                for name in COUNTED if name in present}


def revisions() -> list[tuple[str, str | None]]:
    """(revision, down_revision) from head down to the first, read from the scripts."""
    scripts = ScriptDirectory.from_config(migrate._config())
    out = []
    for script in scripts.walk_revisions("base", "heads"):
        down = script.down_revision
        assert down is None or isinstance(down, str), "one line of history expected"
        out.append((script.revision, down))
    return out


def test_the_walk_covers_every_revision_script() -> None:
    files = list((ROOT / "migrations" / "versions").glob("*.py"))
    assert len(revisions()) == len([f for f in files if f.name != "__init__.py"]) >= 4


def test_every_revision_down_one_step_and_back_up_loses_no_row(new_url: str) -> None:
    populate(new_url)
    engine = create_store_engine(new_url)
    try:
        at_head = counts(engine)
        assert at_head["tool_calls"] == 8 and at_head["tool_results"] == 8
        with TranscriptStore.open(new_url) as store:
            before = {sid: store.load(sid) for sid in ("s0", "s1", "s2", "s0-fork")}
        walked = []
        for revision, down in revisions():
            if down is None:
                break  # below the first revision there are no tables to keep rows in
            assert migrate.downgrade(engine, revision) == revision
            here = counts(engine)
            migrate.downgrade(engine, down)
            below = counts(engine)
            lost = {t: (here[t], n) for t, n in below.items() if n != here[t]}
            assert not lost, f"{revision} -> {down} lost rows: {lost}"
            assert migrate.upgrade(engine, revision) == revision
            assert counts(engine) == here, f"{down} -> {revision} lost rows"
            walked.append(revision)
        assert len(walked) == len(revisions()) - 1
        assert migrate.upgrade(engine) == migrate.head()
        assert counts(engine) == at_head
        if engine.dialect.name == "sqlite":
            with engine.connect() as conn:
                assert conn.execute(text("PRAGMA foreign_key_check")).all() == []
    finally:
        engine.dispose()
    with TranscriptStore.open(new_url) as store:
        for sid, transcript in before.items():
            again = store.load(sid)
            assert [m.message.parts for m in again] == [m.message.parts for m in transcript]
            assert [repr(c) for c in again.calls()] == [repr(c) for c in transcript.calls()]
            assert again.links == transcript.links
        assert sum(1 for _ in store.load("s0").calls()) == 2


def test_the_alembic_command_line_downgrade_keeps_tool_calls(new_url: str) -> None:
    """The issue's reproduction: ``alembic downgrade 0002`` from a populated database."""
    populate(new_url)
    env = {"TRANSCRIPT_STORE_URL": new_url, "PATH": "/usr/bin:/bin"}
    alembic = [sys.executable, "-m", "alembic", "-c", str(ROOT / "alembic.ini")]
    for target in ("0002", "head"):
        done = subprocess.run([*alembic, target == "head" and "upgrade" or "downgrade", target],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        engine = create_store_engine(new_url)
        try:
            assert counts(engine)["tool_calls"] == 8 and counts(engine)["tool_results"] == 8
        finally:
            engine.dispose()
