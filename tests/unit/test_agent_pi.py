"""pi's files: told from Kward's by their own records or place, forks linked whatever the
platform spelt the parent's path with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store.importers.formats import claims, read_sessions

HEADER = {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-03-01T10:00:00.000Z",
          "cwd": "C:\\Users\\u\\proj"}


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def test_a_header_alone_is_pis_in_its_sessions_folder_and_kwards_elsewhere(tmp_path: Path) -> None:
    home = tmp_path / ".pi" / "agent" / "sessions" / "--C--Users-u-proj--" / "a_s-1.jsonl"
    assert claims(home, [HEADER])[0].format == "pi"
    assert claims(tmp_path / "a.jsonl", [HEADER])[0].format == "kward"


def test_a_fork_names_its_parent_by_a_windows_path(tmp_path: Path) -> None:
    parent = ("C:\\Users\\u\\.pi\\agent\\sessions\\--C--Users-u-proj--\\"
              "2026-02-01T09-00-00-000Z_0a1b2c3d-0000-4000-8000-000000000001.jsonl")
    file = write(tmp_path / "s.jsonl", [
        {**HEADER, "parentSession": parent},
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-03-01T10:00:01Z",
         "message": {"role": "user", "content": "go on", "timestamp": 1772359201000}}])
    (session,) = read_sessions(file, settle=0).sessions
    assert session.parent is not None
    assert (session.parent.parent_session_id, session.parent.kind) == (
        "0a1b2c3d-0000-4000-8000-000000000001", "fork")
    assert session.cwd == "C:\\Users\\u\\proj"


def test_an_unknown_entry_type_is_a_problem_not_silence(tmp_path: Path) -> None:
    file = write(tmp_path / "s.jsonl", [
        HEADER, {"type": "thinking_level_change", "id": "t", "thinkingLevel": "low"},
        {"type": "brand_new", "id": "x", "parentId": "t", "timestamp": "2026-03-01T10:00:02Z"}])
    parsed = read_sessions(file, settle=0)
    assert [p.message for p in parsed.problems] == ["not a pi session entry: type 'brand_new'"]
    assert parsed.unknown_kinds == {"brand_new": 1}
