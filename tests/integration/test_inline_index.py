"""An import's search texts written with its rows (``store/db/writing/indexing.py``, issue 39),
on both backends (SQLite's imports leave it to the catch-up, ``walk.indexes_with_rows``:
the path is switched on here): after ``import_paths`` alone no session waits for a
catch-up; the rows
written (search items, argument views, secret digests, message index rows, watermarks) are
exactly those the catch-ups write when the index is built again from the tables; a session
whose index is behind, or (PostgreSQL) a message holding NUL, is left to the catch-up; the
files' messages are parsed and prepared in worker processes or in the importing one alike. A
first prompt holding NUL makes a title with U+FFFD, and on PostgreSQL a working folder holding
NUL is stored with U+FFFD (PostgreSQL refused both: the import stopped)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from backends import corpus
from index_rows import derived_rows
from sqlalchemy import text as sql

from store import CallQuery, TranscriptStore, import_paths, refill_search_index, search_calls
from store.importers import parallel, walk

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
SID = "77770000-0000-4000-8000-0000000000{:02d}"


def _line(kind: str, uuid: str, parent: str | None, sid: str, message: dict[str, Any],
          at: int, cwd: str = "/home/u/app") -> str:
    return json.dumps({"parentUuid": parent, "isSidechain": False, "userType": "external",
                       "cwd": cwd, "sessionId": sid, "version": "1.0.108",
                       "gitBranch": "main", "type": kind, "message": message, "uuid": uuid,
                       "timestamp": f"2025-09-03T00:{at // 60:02d}:{at % 60:02d}.000Z"})


def _session_file(folder: Path, number: int, text: str = "deploy the app",
                  cwd: str = "/home/u/app") -> str:
    """A Claude Code session: a prompt, then turns of thinking, a call (one with a secret in
    its arguments, one whose result is an error holding another) and its result."""
    sid = SID.format(number)
    lines = [_line("user", f"{sid[:-4]}u000", None, sid,
                   {"role": "user", "content": f"task {number}: {text}"}, 0, cwd)]
    parent = f"{sid[:-4]}u000"
    for turn in range(4):
        call = f"toolu_{number:02d}{turn:02d}"
        command = (f"git push https://x:{SECRET}@github.com/o/r main" if turn == 1
                   else f"ls -la /srv/app{number}/{turn}")
        block = ({"type": "tool_use", "id": call, "name": "Bash",
                  "input": {"command": command, "timeout": 30}} if turn != 2 else
                 {"type": "tool_use", "id": call, "name": "Edit",
                  "input": {"file_path": f"/srv/app{number}/main.py", "old_string": "a",
                            "new_string": "b"}})
        uuid, answer = f"{sid[:-4]}a{turn:03d}", f"{sid[:-4]}r{turn:03d}"
        lines.append(_line("assistant", uuid, parent, sid, {
            "id": f"msg_{number:02d}{turn:02d}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-20250514",
            "content": [{"type": "thinking", "thinking": f"now step {turn} of {text}",
                         "signature": "sig"},
                        {"type": "text", "text": f"Step {turn}: running it."}, block],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 20}}, 2 * turn + 1))
        error = turn == 3
        lines.append(_line("user", answer, uuid, sid, {"role": "user", "content": [
            {"tool_use_id": call, "type": "tool_result", "is_error": error,
             "content": (f"fatal: password=hunter2secret{number} refused" if error
                         else f"done {number}.{turn}")}]}, 2 * turn + 2))
        parent = answer
    path = folder / f"{sid}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sid


@pytest.fixture(autouse=True)
def with_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The path on both backends (an import on SQLite takes it only when told)."""
    monkeypatch.setattr(walk, "indexes_with_rows", lambda store: True)


def test_imports_take_the_path_on_postgresql_only(store, tmp_path, monkeypatch):
    monkeypatch.undo()
    folder = tmp_path / ".claude" / "projects" / "-home-u-app"
    folder.mkdir(parents=True)
    sid = _session_file(folder, 4)
    import_paths(store, [tmp_path], workers=1, settle=0)
    lagging = [row[0] for row in _lagging(store)]
    assert lagging == ([] if store.dialect == "postgresql" else [sid])
    store.update_search_index()
    _same_as_a_rebuild(store)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A Claude Code projects folder: made sessions and the recorded corpus' own files."""
    folder = tmp_path / ".claude" / "projects" / "-home-u-app"
    folder.mkdir(parents=True)
    for number in range(6):
        _session_file(folder, number)
    for name in ("cc-1.0.98-5-parallel-tool_use-split-lines.jsonl",
                 "cc-1.0.98-task-subagent-sidechain.jsonl", "cc-1.0.108-session-head.jsonl"):
        shutil.copyfile(corpus("claude_code") / name, folder / name)
    codex = tmp_path / "codex"
    codex.mkdir()
    shutil.copyfile(corpus("codex") / "codex-0.58-rollout-shell-function_call.jsonl",
                    codex / "rollout-2025-11-01T10-00-00-0000.jsonl")
    return tmp_path


def _lagging(store: TranscriptStore) -> list[tuple[Any, ...]]:
    with store.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sql(
            "SELECT session_id, next_position, indexed_position, message_indexed_position "
            "FROM sessions WHERE next_position > indexed_position "
            "OR next_position > message_indexed_position")).all()]


def _counts(store: TranscriptStore) -> tuple[int, int]:
    with store.engine.connect() as conn:
        calls = conn.execute(sql("SELECT count(*) FROM tool_calls")).scalar_one()
        results = conn.execute(sql("SELECT count(*) FROM tool_results")).scalar_one()
    return int(calls), int(results)


def _same_as_a_rebuild(store: TranscriptStore) -> dict[str, list[tuple[Any, ...]]]:
    """The derived rows, checked by ``verify`` and equal to the catch-ups' own."""
    written = derived_rows(store)
    report = store.verify()
    assert report.ok, report
    refill_search_index(store, workers=1)
    assert derived_rows(store) == written
    return written


@pytest.mark.parametrize("workers", [1, 2])
def test_an_import_writes_the_index_with_its_rows(store, files, workers, monkeypatch):
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)  # (small files: parsed in workers)
    summary = import_paths(store, [files], workers=workers, settle=0)
    assert not summary.problems and not summary.failed_files
    assert summary.messages_added > 60
    assert _lagging(store) == []  # (no catch-up ran: the import indexed as it wrote)
    calls, results = _counts(store)
    done = store.update_search_index()
    # reported by the next catch-up, which had nothing left to do itself
    assert (done.calls, done.results, done.messages) == (calls, results,
                                                         summary.messages_added)
    assert store.update_search_index().calls == 0
    written = _same_as_a_rebuild(store)
    assert {row[5] for row in written["secrets"]} >= {"github_token"}
    assert all(SECRET not in row[-1] for table in ("items", "views", "messages")
               for row in written[table])
    assert {row[2] for row in written["messages"]} >= {"user", "assistant", "thinking", "tool"}
    hits = search_calls(store, CallQuery(text="SRV/APP3/MAIN.PY"))  # (through the full-text index)
    assert [(h.session_id, h.raw_name) for h in hits] == [(SID.format(3), "Edit")]


def test_a_long_session_is_indexed_with_its_rows_batch_after_batch(store, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setattr(walk, "_CHUNK", 4)  # (a session of 9 messages: three appends)
    folder = tmp_path / ".claude" / "projects" / "-home-u-app"
    folder.mkdir(parents=True)
    _session_file(folder, 7)
    summary = import_paths(store, [tmp_path], workers=1, settle=0)
    assert summary.messages_added == 9
    assert _lagging(store) == []  # (each batch from the watermark the one before moved)
    _same_as_a_rebuild(store)


def test_a_session_whose_index_is_behind_is_left_to_the_catch_up(store, tmp_path):
    folder = tmp_path / ".claude" / "projects" / "-home-u-app"
    folder.mkdir(parents=True)
    sid = _session_file(folder, 1)
    store.append(sid, [{"role": "user", "content": "an earlier message, not indexed yet"}])
    other = _session_file(folder, 2)
    import_paths(store, [tmp_path], workers=1, settle=0)
    assert [row[0] for row in _lagging(store)] == [sid]  # the new session was indexed
    with store.engine.connect() as conn:
        texts = conn.execute(sql("SELECT count(search_body) FROM tool_calls "
                                 "WHERE session_id = :sid"), {"sid": sid}).scalar_one()
    assert texts == 0
    store.update_search_index()
    assert _lagging(store) == []
    written = _same_as_a_rebuild(store)
    assert {row[0] for row in written["items"]} == {sid, other}


def test_a_message_holding_nul_is_indexed_as_the_catch_up_would(store, tmp_path):
    folder = tmp_path / ".claude" / "projects" / "-home-u-app"
    folder.mkdir(parents=True)
    sid = _session_file(folder, 3, text="a NUL\x00 in the prompt")
    summary = import_paths(store, [tmp_path], workers=1, settle=0)
    assert not summary.problems and summary.messages_added == 9
    # (its title is display text: NUL as U+FFFD on both backends; PostgreSQL refused the
    # session row, and the whole import stopped there)
    assert store.get_session(sid).title == "task 3: a NUL\ufffd in the prompt"
    # PostgreSQL stores the text with U+FFFD: the catch-up indexes what it stored
    lagging = [row[0] for row in _lagging(store)]
    assert lagging == ([sid] if store.engine.dialect.name == "postgresql" else [])
    store.update_search_index()
    written = _same_as_a_rebuild(store)
    assert any("NUL" in row[-1] for row in written["messages"])


def test_a_session_field_holding_nul_does_not_stop_the_import(store, tmp_path):
    folder = tmp_path / ".claude" / "projects" / "-home-u-app"
    folder.mkdir(parents=True)
    odd = _session_file(folder, 5, cwd="/home/u/a\x00pp")
    plain = _session_file(folder, 6)
    summary = import_paths(store, [tmp_path], workers=1, settle=0)
    assert not summary.problems and summary.messages_added == 18
    # PostgreSQL refused the session row, and the whole import stopped there: its working
    # folder holds U+FFFD there (as a message's display text does), the exact one elsewhere
    cwd = store.get_session(odd).cwd
    assert cwd == ("/home/u/a\ufffdpp" if store.dialect == "postgresql" else "/home/u/a\x00pp")
    assert store.get_session(plain).cwd == "/home/u/app"
    first = store.load(odd).messages[0].message
    assert first.metadata["cwd"] == "/home/u/a\x00pp"
