"""Issue 12, item 5: ``export --to jsonl`` writes everything append accepted, and an export
imported into an empty database gives back the same sessions (both backends).

Before, the export stopped with a traceback after the first line on an integer beyond 64 bits
or metadata nested deeper than 255 levels. Since issue 23 append refuses JSON nested deeper
than ``store.core.depth.MAX_DEPTH`` (200) levels, so the deepest value it accepts is exported
here (a deeper one stored before is exported too: ``tests/integration/test_hostile_depth.py``).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from store import StoreError, TranscriptStore, normalize_payload
from store.audit.export import export_jsonl
from store.cli.main import cli
from store.core.arguments import loads_json
from store.core.depth import MAX_DEPTH
from store.importers.walk import import_paths


def deep(levels: int) -> Any:
    value: Any = "bottom"
    for i in range(levels):
        value = {"level": i, "next": value}
    return value


BIG = 2**70 + 1
HOSTILE = [
    {"role": "user", "content": "first", "metadata": {"huge": BIG}},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_big", "type": "function",
         "function": {"name": "count", "arguments": f'{{"n": {BIG}, "neg": {-BIG}}}'}},
        {"id": "call_bad", "type": "function",
         "function": {"name": "broken", "arguments": "{not json"}},
        {"type": "function", "function": {"name": "no_id", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_big", "content": str(BIG)},
    # (the record's unknown key "metadata" goes to the message's extras: 2 levels more)
    {"role": "user", "content": "deep", "metadata": {"tree": deep(MAX_DEPTH - 2)}},
    {"role": "user", "content": "nul \x00 and \u2028 and 🚀"},
]


def canon(line: dict[str, Any]) -> dict[str, Any]:
    """An export line without what an import does not carry over (the storage time); a
    message stored without a key comes back keyed ``<session>:<position>``."""
    out = {k: v for k, v in line.items() if k != "created_at"}
    if out["key"] is None:
        out["key"] = f"{out['session_id']}:{out['position']}"
    return out


def export_lines(store: TranscriptStore) -> list[dict[str, Any]]:
    out = io.StringIO()
    export_jsonl(store, None, out)
    return [loads_json(line) for line in out.getvalue().split("\n") if line]


def empty(store: TranscriptStore) -> None:
    for info in store.list_sessions(limit=100_000):
        store.delete_session(info.session_id)


def round_trip(store: TranscriptStore, tmp_path: Path) -> list[dict[str, Any]]:
    """Export everything, empty the database, import the export, export again."""
    first = export_lines(store)
    url = store.engine.url.render_as_string(hide_password=False)
    dump = tmp_path / "export.jsonl"
    result = CliRunner().invoke(cli, ["export", "--to", "jsonl", "--db", url],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    dump.write_text(result.stdout, encoding="utf-8")
    assert [loads_json(x) for x in result.stdout.split("\n") if x] == first
    empty(store)
    summary = import_paths(store, [dump], settle=0)
    assert summary.ok, [str(p) for p in summary.problems + summary.failed_files]
    assert summary.messages_added == len(first)
    again = export_lines(store)
    assert [canon(x) for x in again] == [canon(x) for x in first]
    again_twice = import_paths(store, [dump], settle=0)
    assert again_twice.messages_added == 0  # keys are kept: a second import stores nothing
    return first


def test_hostile_values_export_and_come_back(store: TranscriptStore, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="nested 302 levels deep, over the limit of 200"):
        store.append("hostile", [{"role": "user", "content": "x",
                                  "metadata": {"tree": deep(300)}}])
    store.append("hostile", HOSTILE)
    before = store.load("hostile")
    lines = round_trip(store, tmp_path)
    assert len(lines) == len(HOSTILE)
    assert lines[0]["extras"]["metadata"]["huge"] == BIG
    after = store.load("hostile")
    assert [m.message.parts for m in after] == [m.message.parts for m in before]
    assert [m.message.metadata for m in after] == [m.message.metadata for m in before]
    assert [m.key for m in after] == [f"hostile:{m.position}" for m in before]
    calls = list(after.calls())
    assert [c.call.id for c in calls] == [c.call.id for c in before.calls()]
    assert after.links == before.links


def test_the_whole_corpus_exports_and_comes_back(store: TranscriptStore,
                                                 tmp_path: Path) -> None:
    configured = os.environ.get("TRANSCRIPT_CORPUS")
    corpus = Path(configured) if configured else Path(__file__).resolve().parents[3] / \
        "shared" / "corpus"
    if not corpus.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"corpus not found at {corpus}")
        pytest.skip(f"corpus not found at {corpus} (set TRANSCRIPT_CORPUS)")
    imported = import_paths(store, [corpus], settle=0)
    added = imported.messages_added
    # Every provider payload of the corpus too (requests and responses, not streams).
    for path in sorted(corpus.rglob("*.json")):
        if path.parent.name.endswith("_stream"):
            continue
        try:
            messages = normalize_payload(loads_json(path.read_text(encoding="utf-8")))
        except (StoreError, ValueError):
            continue
        if messages:
            added += len(store.append(f"payload:{path.relative_to(corpus)}", messages).stored)
    assert imported.messages_added > 150 and added > imported.messages_added + 100
    before = {s.session_id: store.load(s.session_id) for s in store.list_sessions(limit=100_000)}
    lines = round_trip(store, tmp_path)
    assert len(lines) == added
    for sid, transcript in before.items():
        after = store.load(sid)
        assert [m.message.parts for m in after] == [m.message.parts for m in transcript], sid
        assert after.links == transcript.links, sid
