"""Issue 34: an agent's database is read by the rows its reader needs (a terminal's history
beside the agent tables is never read, and the import limit counts the rows read), and
zstd-compressed rows need the zstd extra, whose absence is a typed error naming it."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from agent_databases import build_home

from store.core.errors import ImportFileError
from store.importers.agentdb import read_agent_db


def test_only_the_agent_tables_count_against_the_limit(tmp_path: Path) -> None:
    linux, _ = build_home("warp", tmp_path)
    with sqlite3.connect(linux) as conn:  # the terminal's own history grows large
        conn.execute("INSERT INTO blocks (pwd, stylized_output) VALUES ('/', ?)",
                     (b"o" * 200_000,))
    assert linux.stat().st_size > 200_000
    parsed = read_agent_db(linux, settle=0, max_file_bytes=20_000)
    assert [len(s.items) for s in parsed.sessions] == [2]
    with pytest.raises(ImportFileError, match="over the import limit"):
        read_agent_db(linux, settle=0, max_file_bytes=200)


def test_zstd_rows_without_the_library_name_the_extra(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    linux, mac = build_home("zed", tmp_path)
    monkeypatch.setitem(sys.modules, "zstandard", None)  # (the library not installed)
    with pytest.raises(ImportFileError, match=r"transcript-store\[zstd\]"):
        read_agent_db(linux, settle=0)
    monkeypatch.undo()
    assert {s.session_id for s in read_agent_db(mac, settle=0).sessions} == {
        "0f9e8d7c-6b5a-4938-a7b6-c5d4e3f2a1b0"}


def test_a_read_leaves_no_file_beside_the_database(tmp_path: Path) -> None:
    linux, _ = build_home("zed", tmp_path)
    before = sorted(p.name for p in linux.parent.iterdir())
    read_agent_db(linux, settle=0)
    assert sorted(p.name for p in linux.parent.iterdir()) == before
