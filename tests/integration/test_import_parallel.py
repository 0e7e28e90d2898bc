"""A parallel import (files parsed in worker processes, one writer) stores exactly what a
serial import stores, on both backends: sessions, messages in order with their keys, the
rows' JSON as stored, usage, the per-file read states; and a second import of the same
files stores nothing."""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from backends import corpus, empty_postgres

import store.importers.parallel as parallel
from store import TranscriptStore
from store.core.collecting import BULK_THRESHOLD
from store.importers.walk import import_paths


def _home(root: Path) -> Path:
    """The corpus's Claude Code and Codex files, and generated sessions with calls."""
    projects = root / "projects"
    for agent in ("claude_code", "codex"):
        target = projects / agent
        target.mkdir(parents=True)
        for source in sorted(corpus(agent).glob("*.jsonl")):
            shutil.copyfile(source, target / source.name)
    for number in range(12):
        sid = f"0000{number:04d}-aaaa-4bbb-8ccc-000000000000"
        lines = []
        for turn in range(25):
            call = f"toolu_{number}_{turn}"
            base = {"sessionId": sid, "cwd": "/w", "timestamp": f"2025-03-01T10:{turn:02d}:00Z",
                    "isSidechain": False}
            lines.append({**base, "type": "assistant", "uuid": f"{sid}-a{turn}", "message": {
                "id": f"msg_{number}_{turn}", "role": "assistant", "model": "claude-x",
                "stop_reason": "tool_use", "usage": {"input_tokens": turn, "output_tokens": 3},
                "content": [{"type": "tool_use", "id": call, "name": "Bash",
                             "input": {"command": f"echo {number} {turn}"}}]}})
            lines.append({**base, "type": "user", "uuid": f"{sid}-u{turn}", "message": {
                "role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                                             "content": f"{number} {turn} " * 40}]}})
        folder = projects / f"-w-{number % 3}"
        folder.mkdir(exist_ok=True)
        (folder / f"{sid}.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in lines) + "not json\n", encoding="utf-8")
    return projects


def _dump(opened: TranscriptStore) -> dict[str, Any]:
    sessions = {}
    for info in opened.list_sessions(limit=None):
        loaded = opened.load(info.session_id)
        sessions[info.session_id] = (
            info.title, info.agent, info.model, info.cwd, info.tags, info.message_count,
            dict(info.metadata), info.parent, info.started_at, info.ended_at,
            [(m.position, m.key, m.message) for m in loaded.messages])
    states = {path: dataclasses.replace(state, gone_at=None)
              for path, state in opened.source_states().items()}
    with opened.engine.connect() as conn:
        usage = conn.exec_driver_sql(
            "SELECT session_id, position, input_tokens, output_tokens FROM message_usage "
            "ORDER BY session_id, position").all()
        # the rows as stored (the JSON texts as the writer encoded them)
        rows = [tuple(r) for sql in (
            "SELECT session_id, position, message_key, role, text, parts_json, extras_json, "
            "metadata_json FROM messages ORDER BY session_id, position",
            "SELECT session_id, position, call_index, call_id, raw_name, wire_json, "
            "arguments_status, extras_json FROM tool_calls ORDER BY 1, 2, 3",
            "SELECT session_id, position, result_index, call_position, content_json, "
            "extras_json FROM tool_results ORDER BY 1, 2, 3")
            for r in conn.exec_driver_sql(sql).all()]
    return {"sessions": sessions, "states": states, "usage": [tuple(r) for r in usage],
            "rows": rows}


def _summary(summary: Any) -> tuple[Any, ...]:
    return (summary.files, summary.sessions, summary.sessions_created, summary.messages_added,
            summary.messages_already_stored, summary.calls, summary.skipped,
            [(p.path, p.line, p.message) for p in summary.problems], summary.failed_files)


def test_a_parallel_import_stores_what_a_serial_one_stores(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = _home(tmp_path)
    with TranscriptStore.open(store_url) as opened:
        serial = import_paths(opened, [home], settle=0, workers=1)
        expected = _dump(opened)
    assert serial.messages_added > 600 and serial.problems  # (the bad lines are reported)
    # the pool even for a few small files, and little read ahead: every path of read_all
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(parallel, "AHEAD_BYTES", 20_000)
    if store_url.startswith("sqlite"):
        store_url = f"sqlite:///{tmp_path / 'parallel.sqlite'}"
    else:
        empty_postgres(store_url)
    with TranscriptStore.open(store_url) as opened:
        together = import_paths(opened, [home], settle=0, workers=2)
        assert _summary(together) == _summary(serial)
        assert _dump(opened) == expected
        again = import_paths(opened, [home], settle=0, workers=2)
        assert again.messages_added == 0 and again.unchanged == together.files


def test_a_file_a_worker_refuses_fails_alone(
        store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = _home(tmp_path)
    big = next(home.rglob("00000001-*.jsonl"))
    with big.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "summary", "summary": "x" * 300_000}) + "\n")
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    with TranscriptStore.open(store_url) as opened:
        summary = import_paths(opened, [home], settle=0, workers=2, max_file_bytes=200_000)
        assert [f.path for f in summary.failed_files] == [big]
        assert "200" in summary.failed_files[0].error  # the limit, named
        assert summary.sessions == len(opened.list_sessions(limit=None)) > 10


def test_the_import_and_its_workers_collect_cycles_less_often(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer, the processes parsing for it and the index catch-up run with the raised
    young-generation threshold (``store.core.collecting``); the caller's is put back."""
    home = _home(tmp_path)
    seen = tmp_path / "thresholds.txt"
    reading = parallel.read_changes

    def read_changes(*args: Any, **kwargs: Any) -> Any:
        with seen.open("a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {gc.get_threshold()[0]}\n")
        return reading(*args, **kwargs)

    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(parallel, "read_changes", read_changes)
    before = gc.get_threshold()
    gc.set_threshold(700, before[1], before[2])
    writer: list[int] = []
    try:
        with TranscriptStore.open(f"sqlite:///{tmp_path / 'gc.sqlite'}") as opened:
            summary = import_paths(opened, [home], settle=0, workers=2,
                                   progress=lambda _: writer.append(gc.get_threshold()[0]))
            assert gc.get_threshold()[0] == 700
            # (the import indexed its own messages with their rows: the catch-up gets one
            # appended outside it)
            opened.append("appended-after", [{"role": "user", "content": "not indexed yet"}])
            indexed: list[int] = []
            opened.update_search_index(progress=lambda *_: indexed.append(
                gc.get_threshold()[0]))
            assert gc.get_threshold()[0] == 700
    finally:
        gc.set_threshold(*before)
    assert summary.messages_added > 600
    readers = [line.split() for line in seen.read_text(encoding="utf-8").splitlines()]
    assert {pid for pid, _ in readers} - {str(os.getpid())}  # (parsed in worker processes)
    assert {int(t) for _, t in readers} == {BULK_THRESHOLD}
    assert set(writer) == {BULK_THRESHOLD}
    assert indexed and set(indexed) == {BULK_THRESHOLD}
