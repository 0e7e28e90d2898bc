"""The store's SQLite file is a good citizen of the SQLite ecosystem (issue 24): sqlite-utils
counts every table (a contentless FTS5 table made it fail: ``table does not support
scanning``), and Datasette serves every table and runs a full-text search over the calls'
and results' text: the word index of every message (``message_search`` with its
external-content ``message_fts``, whose ``tool`` rows hold the calls and results). The call
index's ``search_fts`` holds no positions since revision 0021 (a quarter of the size), so it
answers no phrase query, which Datasette's search box makes of every word: Datasette still
serves it as a table and ``search_items`` (a view of the calls' and results' text since
revision 0023)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from usage_agent_files import claude_lines, write_jsonl

from store import TranscriptStore, import_paths


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    path = tmp_path / "store.sqlite"
    source = write_jsonl(tmp_path / "p" / "s.jsonl", claude_lines("s", "2025-09-03"))
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        import_paths(opened, [source], format="claude-code", settle=0)
        opened.update_search_index()  # as the end of `transcript-store import` does
    return path


def test_sqlite_utils_counts_every_table(store_file: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "sqlite_utils", "tables", "--counts",
                           str(store_file)], capture_output=True, timeout=120, check=False)

    assert done.returncode == 0, done.stderr.decode(errors="replace")
    counts = {row["table"]: row["count"] for row in json.loads(done.stdout)}
    assert counts["search_fts"] == 2  # one call, one result (read through its view)
    assert counts["message_usage"] == 2
    assert counts["tool_calls"] == 1


def _datasette(path: Path, *requests: str) -> list[Any]:
    from datasette.app import Datasette

    async def run() -> list[Any]:
        app = Datasette([str(path)])
        return [await app.client.get(request) for request in requests]

    return asyncio.run(run())


def test_datasette_serves_every_table_and_searches_the_call_text(store_file: Path) -> None:
    import sqlite3

    with sqlite3.connect(store_file) as conn:
        tables = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
    db = store_file.stem

    responses = _datasette(store_file, *(f"/{db}/{t}.json?_shape=array" for t in tables),
                           f"/{db}/search_items.json?_shape=array",
                           f"/{db}/message_search.json?_shape=array&_search=ls+-la",
                           f"/{db}/message_search.json?_shape=array&_search=a.txt")

    for table, response in zip(tables, responses[:len(tables)], strict=True):
        assert response.status_code == 200, (table, response.text[:300])
    assert "search_fts" in tables and "search_items" not in tables  # a view since 0023
    view = responses[len(tables)]
    assert view.status_code == 200, view.text[:300]
    assert sorted(row["kind"] for row in view.json()) == [0, 1]
    call_hit, result_hit = responses[-2].json(), responses[-1].json()
    assert [(r["role"], r["session_id"]) for r in call_hit] == [("tool", "s")]
    assert "ls -la" in call_hit[0]["body"]
    assert [r["role"] for r in result_hit] == ["tool"]
    assert "a.txt" in result_hit[0]["body"]


def test_sqlite_utils_reads_a_packed_envelope_with_the_store_s_function(
        store_file: Path) -> None:
    """A message's metadata and extras are packed (revision 0025): the recipe of
    docs/operations.md gives their text back to sqlite-utils."""
    query = ("SELECT typeof(metadata_json) AS kind, unpack(metadata_json) AS metadata, "
             "json_extract(unpack(extras_json), '$.model') AS model FROM messages "
             "WHERE role = 'assistant' ORDER BY position LIMIT 1")
    done = subprocess.run([sys.executable, "-m", "sqlite_utils", "query", str(store_file), query,
                           "--functions", "from store import unpacked as unpack"],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    (row,) = json.loads(done.stdout)
    assert row["kind"] == "blob"
    metadata = json.loads(row["metadata"])
    assert metadata["cwd"] == "/work/demo" and metadata["version"] == "1.0.98"
    assert row["model"].startswith("claude-")
