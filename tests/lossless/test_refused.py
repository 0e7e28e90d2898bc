"""Issue 12, item 4: one record the database refuses does not abort an import (both backends).

Before, a ``\\u0000`` in a tool name or call id stopped ``transcript-store import DIR`` on
PostgreSQL with exit 1: the rest of the file and every later file were never imported, and
an empty session was left behind. Now NUL in tool names and call ids is stored (and comes back
exactly) on PostgreSQL as on SQLite; a value the database still refuses fails that record
alone, reported with file:line, and a session of which nothing was stored is not left behind.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from store import TranscriptStore
from store.cli.main import cli
from store.importers.walk import import_paths


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def call(call_id: str, name: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}]}


def test_nul_in_tool_names_and_call_ids_is_stored_exactly(store: TranscriptStore) -> None:
    store.append("s", [call("call_\x00a", "gr\x00ep"),
                       {"role": "tool", "tool_call_id": "call_\x00a", "name": "gr\x00ep",
                        "content": "found"}])
    loaded = store.load("s")
    (stored,) = [c for m in loaded.messages for c in m.message.tool_calls]
    assert (stored.id, stored.recorded_name) == ("call_\x00a", "gr\x00ep")
    result = loaded.messages[1].message.tool_results[0]
    assert (result.call_id, result.name) == ("call_\x00a", "gr\x00ep")
    assert result.extras == {}
    assert loaded.links == {(1, 0): (0, 0)}
    # a later append links its result to that call by the exact id
    store.append("s", [{"role": "tool", "tool_call_id": "call_\x00a", "content": "again"}])
    assert store.load("s").links[(2, 0)] == (0, 0)


def test_an_import_with_nul_ids_goes_on(store: TranscriptStore, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    first = write_jsonl(folder / "a.jsonl", [
        {"role": "user", "content": "go"},
        call("call_\x00x", "read\x00file"),
        {"role": "tool", "tool_call_id": "call_\x00x", "content": "ok"},
        {"role": "user", "content": "after the NUL"}])
    write_jsonl(folder / "b.jsonl", [{"role": "user", "content": "second file"}])
    summary = import_paths(store, [folder], settle=0)
    assert summary.ok, [str(p) for p in summary.problems]
    assert summary.files == 2 and summary.messages_added == 5
    assert len(store.list_sessions()) == 2
    url = store.engine.url.render_as_string(hide_password=False)
    again = CliRunner().invoke(cli, ["import", str(first), "--db", url, "--quiet"])
    assert again.exit_code == 0, again.output


def test_a_refused_record_fails_alone_with_its_line(store: TranscriptStore,
                                                    tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    # PostgreSQL cannot store NUL in a message id (SQLite can): that record alone is refused.
    nul_id = {"id": "msg_\x00x", "type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "hi"}]}
    write_jsonl(folder / "a.jsonl", [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "1"}]},
        nul_id,
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "3"}]}])
    write_jsonl(folder / "b.jsonl", [nul_id])
    write_jsonl(folder / "c.jsonl", [{"role": "user", "content": "later file"}])
    summary = import_paths(store, [folder], settle=0)
    if store.dialect == "postgresql":
        assert summary.messages_added == 3
        assert sorted((p.path.name, p.line) for p in summary.problems) == [("a.jsonl", 2),
                                                                          ("b.jsonl", 1)]
        assert all("NUL" in p.message for p in summary.problems)
        # b.jsonl stored nothing: no empty session is left behind
        assert len(store.list_sessions()) == 2 and summary.sessions == 2
    else:
        assert summary.ok and summary.messages_added == 5
        assert len(store.list_sessions()) == 3
