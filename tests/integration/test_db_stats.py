"""``db stats`` / ``database_sizes``: every table and index with its size, on both backends."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import store
from store import Message, TextPart, ToolCall, ToolResult, TranscriptStore
from store.cli.main import cli
from store.db.schema.tables import metadata


def _noise(sid: str, turn: int) -> str:
    """2 KB that no compression shrinks (PostgreSQL compresses what it TOASTs)."""
    seed = f"{sid}/{turn}".encode()
    return "".join(hashlib.sha256(seed + bytes([n])).hexdigest() for n in range(32))


def _fill(opened: TranscriptStore, sessions: int = 3, turns: int = 40) -> None:
    for number in range(sessions):
        sid = f"s{number}"
        opened.create_session(sid)
        messages = []
        for turn in range(turns):
            call = ToolCall(f"c{turn}", "bash", {"command": f"ls {'x' * 300} {turn}"})
            messages += [Message("user", (TextPart("please look " * 40),)),
                         Message("assistant", (call,)),
                         Message("tool", (ToolResult(f"c{turn}", _noise(sid, turn)),))]
        opened.append(sid, messages)
    opened.update_search_index()


def test_every_table_and_index_is_listed_with_its_size(store_url: str) -> None:
    with TranscriptStore.open(store_url) as opened:
        _fill(opened)
    sizes = store.database_sizes(store_url)
    by_name = {o.name: o for o in sizes.objects}
    for table in metadata.sorted_tables:
        assert by_name[table.name].kind == "table", table.name
        assert by_name[table.name].table == table.name
        for index in table.indexes:
            assert by_name[index.name].kind == "index", index.name
            assert by_name[index.name].table == table.name
    assert all(o.bytes >= 0 for o in sizes.objects)
    assert [o.bytes for o in sizes.objects] == sorted((o.bytes for o in sizes.objects),
                                                      reverse=True)
    # what was stored shows where it went
    assert by_name["messages"].bytes > 100_000
    assert by_name["tool_results"].bytes > 200_000
    assert sizes.table_total("messages") > by_name["messages"].bytes  # + its indexes
    assert sizes.total == sum(o.bytes for o in sizes.objects if o.kind != "wal")
    if store_url.startswith("sqlite"):
        # the FTS5 shadow tables count for their full-text table; the file is every page
        assert by_name["search_fts_data"].table == "search_fts"
        path = Path(store_url.removeprefix("sqlite:///"))
        assert sizes.total == path.stat().st_size


def test_stats_open_read_only(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    with pytest.raises(store.StoreError):
        store.database_sizes(f"sqlite:///{missing}")
    assert not missing.exists()


def test_db_stats_cli(store_url: str) -> None:
    with TranscriptStore.open(store_url) as opened:
        _fill(opened, sessions=1, turns=5)
    listed = CliRunner().invoke(cli, ["db", "stats", "--db", store_url, "--json"],
                                catch_exceptions=False)
    assert listed.exit_code == 0, listed.output
    rows = [json.loads(line) for line in listed.output.splitlines()]
    expected = store.database_sizes(store_url).objects
    assert {r["name"] for r in rows} == {o.name for o in expected}
    assert {r["name"]: r["kind"] for r in rows}["tool_calls"] == "table"
    shown = CliRunner().invoke(cli, ["db", "stats", "--db", store_url],
                               env={"COLUMNS": "200"}, catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    for table in ("messages", "tool_calls", "tool_results", "sessions"):
        assert f" {table} " in shown.output
    assert "%" in shown.output


def test_stats_show_the_write_ahead_log_and_compact_truncates_it(tmp_path: Path) -> None:
    """SQLite: the log beside the file is listed (kind ``wal``, its size on disk, not in the
    total of the pages); ``db compact --no-vacuum`` folds it in and truncates it (its report
    counts it)."""
    import sqlite3

    path = tmp_path / "wal.sqlite"
    url = f"sqlite:///{path}"
    with TranscriptStore.open(url) as opened:  # (the file made, in WAL mode)
        opened.create_session("first")
    holder = sqlite3.connect(path, isolation_level=None)  # (open: the log stays)
    try:
        holder.execute("BEGIN")  # a reader's snapshot: no checkpoint passes it
        holder.execute("SELECT count(*) FROM sessions").fetchone()
        with TranscriptStore.open(url) as opened:
            _fill(opened)
        wal = Path(f"{path}-wal").stat().st_size
        assert wal > 100_000

        sizes = store.database_sizes(url)
        (log,) = [o for o in sizes.objects if o.kind == "wal"]
        assert log.name == "(write-ahead log)" and log.bytes == wal
        # (the pages, the log's among them, counted once; the log listed beside them)
        assert sizes.total == sum(o.bytes for o in sizes.objects if o.kind != "wal")
        assert sizes.total >= path.stat().st_size
        rows = [json.loads(line) for line in CliRunner().invoke(
            cli, ["db", "stats", "--db", url, "--json"]).output.splitlines()]
        assert {"name": "(write-ahead log)", "kind": "wal", "table": None,
                "bytes": wal} in rows
        holder.execute("COMMIT")

        with TranscriptStore.open(url) as opened:
            report = store.compact_database(opened, vacuum=False)
        assert Path(f"{path}-wal").stat().st_size == 0
        assert report.bytes_before >= wal > report.bytes_after - path.stat().st_size
        after = store.database_sizes(url)
        assert [o.bytes for o in after.objects if o.kind == "wal"] == [0]
    finally:
        holder.close()


def test_a_large_write_ahead_log_gets_a_word(tmp_path: Path, monkeypatch) -> None:
    import store.cli.db as db_cli

    path = tmp_path / "small.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        _fill(opened, sessions=1, turns=5)
    Path(f"{path}-wal").write_bytes(b"")  # (an empty log: no word)
    quiet = CliRunner().invoke(cli, ["db", "stats", "--db", str(path)],
                               env={"COLUMNS": "200"})
    assert quiet.exit_code == 0 and "write-ahead log takes" not in quiet.output

    monkeypatch.setattr(db_cli, "_LARGE_LOG", 0)
    holder = __import__("sqlite3").connect(path)
    try:
        holder.execute("PRAGMA wal_autocheckpoint=0")
        holder.execute("CREATE TABLE scratch (x)")
        holder.executemany("INSERT INTO scratch VALUES (?)", [("y" * 1000,)] * 500)
        holder.commit()
        loud = CliRunner().invoke(cli, ["db", "stats", "--db", str(path)],
                                  env={"COLUMNS": "200"})
    finally:
        holder.close()
    assert loud.exit_code == 0
    assert "the write-ahead log takes" in loud.output and "db compact" in loud.output
