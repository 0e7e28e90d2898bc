"""Issue 33, end to end on both backends: the fixtures of tests/fixtures/exact imported into a
store, then read back (calls with their results, subagent lineage, usage)."""

from __future__ import annotations

import shutil
from pathlib import Path

import store
from store import import_paths

FIXTURES = Path(__file__).parent.parent / "fixtures" / "exact"


def imported(db: store.TranscriptStore, tmp_path: Path, part: str) -> store.TranscriptStore:
    target = tmp_path / part
    shutil.copytree(FIXTURES / part, target)
    summary = import_paths(db, [target], settle=0)
    assert summary.ok, (summary.problems, summary.failed_files)
    return db


def test_three_task_subagents_are_stored_as_three_linked_sessions(store, tmp_path):
    db = imported(store, tmp_path, "claude")
    sid = "7a7a0000-0000-4000-8000-000000000007"
    ids = {s.session_id for s in db.list_sessions(limit=None)}
    assert {f"{sid}:sidechain", f"{sid}:sidechain-2", f"{sid}:sidechain-3"} <= ids
    calls = {c.call.id: c.result is not None for c in db.load(sid).calls()}
    assert calls == {"toolu_T1": True, "toolu_T2": True, "toolu_T3": True}


def test_copilot_usage_and_cline_calls_are_stored(store, tmp_path):
    db = imported(store, tmp_path, "copilot")
    sid = "6f5e4d3c-2b1a-4098-8e7d-6c5b4a3f2e1d"
    assert [(c.call.id, c.result.is_error) for c in db.load(sid).calls()] == [
        ("call_1", False), ("call_2", True)]
    db = imported(store, tmp_path, "cline")
    assert len(list(db.load("1759312800123").calls())) == 8
