"""Issue 12, item 6: import memory is bounded per file (both backends).

Before, the importer read a 2 GB file whole and died of ``MemoryError`` with a traceback that
aborted the run. Now a file over ``max_file_bytes`` is refused before it is read (its size and
the limit in ``failed_files``), a file that still runs out of memory fails alone, messages are
stored in batches, and the import goes on. (The memory figure itself — a 100 MiB JSON-lines
file peaks at about 725 MiB — is measured outside the suite: docs/operations.md.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import store.importers.parallel as reading
import store.importers.walk as walk
from store import TranscriptStore
from store.cli.main import cli
from store.importers.walk import import_paths


def lines(path: Path, count: int, bad: int | None = None) -> Path:
    rows = []
    for i in range(count):
        rows.append(json.dumps({"role": "user", "content": f"m{i}"}))
    if bad is not None:  # a message id with NUL: refused on PostgreSQL, stored on SQLite
        rows[bad] = json.dumps({"id": "m\x00", "type": "message", "role": "user",
                                "content": [{"type": "input_text", "text": "x"}]})
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_file_over_the_limit_is_refused_alone(store: TranscriptStore, tmp_path: Path) -> None:
    big = lines(tmp_path / "big.jsonl", 400)
    small = lines(tmp_path / "small.jsonl", 3)
    summary = import_paths(store, [big, small], settle=0, max_file_bytes=1000)
    (failed,) = summary.failed_files
    assert failed.path == big
    assert f"is {big.stat().st_size} bytes, over the import limit of 1000 bytes" in failed.error
    assert summary.messages_added == 3
    everything = import_paths(store, [big], settle=0, max_file_bytes=None)
    assert everything.ok and everything.messages_added == 400


def test_the_cli_limit_is_in_mib(store: TranscriptStore, tmp_path: Path) -> None:
    url = store.engine.url.render_as_string(hide_password=False)
    path = lines(tmp_path / "a.jsonl", 3)
    result = CliRunner().invoke(cli, ["import", str(path), "--db", url, "--quiet",
                                      "--max-file-mib", "1"])
    assert result.exit_code == 0, result.output
    refused = CliRunner().invoke(cli, ["import", str(path), "--db", url, "--quiet",
                                       "--max-file-mib", "0"])
    assert refused.exit_code == 2  # a usage error: the limit is at least 1 MiB


def test_running_out_of_memory_fails_one_file(store: TranscriptStore, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    first = lines(tmp_path / "a.jsonl", 2)
    second = lines(tmp_path / "b.jsonl", 2)
    real = reading.read_changes

    def starved(path, state, **kwargs):
        if Path(path).name == "a.jsonl":
            raise MemoryError
        return real(path, state, **kwargs)

    monkeypatch.setattr(reading, "read_changes", starved)
    summary = import_paths(store, [first, second], settle=0)
    assert [(f.path, "not enough memory" in f.error) for f in summary.failed_files] == [
        (first, True)]
    assert summary.messages_added == 2


def test_a_long_session_is_stored_in_batches(store: TranscriptStore, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walk, "_CHUNK", 7)
    path = lines(tmp_path / "long.jsonl", 30, bad=17)
    summary = import_paths(store, [path], settle=0)
    (info,) = store.list_sessions()
    if store.dialect == "postgresql":  # the refused record alone is reported, with its line
        assert summary.messages_added == 29
        assert [(p.path, p.line) for p in summary.problems] == [(path, 18)]
    else:
        assert summary.ok and summary.messages_added == 30
    assert len(store.load(info.session_id)) == summary.messages_added
    again = import_paths(store, [path], settle=0)
    assert again.messages_added == 0
