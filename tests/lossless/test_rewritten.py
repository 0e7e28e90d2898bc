"""Issue 12, item 2: a file rewritten at the same path loses nothing on re-import (both
backends).

Before, importing ``history.json`` (2 messages), rewriting it with a different 3-message
conversation and importing again said "already stored 2" and kept only the third message.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from store import TranscriptStore
from store.cli.main import cli
from store.importers.walk import import_paths


def chat(*texts: str) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": t}
            for i, t in enumerate(texts)]


def texts(store: TranscriptStore, sid: str) -> list[str]:
    return [m.message.text for m in store.load(sid)]


def test_a_rewritten_document_is_imported_whole_and_reported(store: TranscriptStore,
                                                             tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text(json.dumps(chat("hello", "hi")), encoding="utf-8")
    first = import_paths(store, [path], settle=0)
    assert first.messages_added == 2 and first.diverged == []
    (original,) = [s.session_id for s in store.list_sessions()]

    path.write_text(json.dumps(chat("other question", "other answer", "more")),
                    encoding="utf-8")
    second = import_paths(store, [path], settle=0)
    assert second.messages_added == 3
    (divergence,) = second.diverged
    assert divergence.session_id == original and divergence.path in (path, path.resolve())
    assert texts(store, original) == ["hello", "hi"]  # what was stored is unchanged
    assert texts(store, divergence.stored_as) == ["other question", "other answer", "more"]
    assert "rewritten" in str(divergence)

    # the same rewritten file again: nothing new, no new divergence session
    third = import_paths(store, [path], settle=0)
    assert third.messages_added == 0
    assert {d.stored_as for d in third.diverged} <= {divergence.stored_as}
    assert len(store.list_sessions()) == 2

    # the rewritten file grows: the new message joins the diverged session
    path.write_text(json.dumps(chat("other question", "other answer", "more", "tail")),
                    encoding="utf-8")
    fourth = import_paths(store, [path], settle=0)
    assert fourth.messages_added == 1
    assert texts(store, divergence.stored_as)[-1] == "tail"
    assert len(store.list_sessions()) == 2


def test_a_file_that_only_grew_is_no_divergence(store: TranscriptStore,
                                                tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text(json.dumps(chat("hello", "hi")), encoding="utf-8")
    import_paths(store, [path], settle=0)
    path.write_text(json.dumps(chat("hello", "hi", "and more")), encoding="utf-8")
    again = import_paths(store, [path], settle=0)
    assert again.diverged == [] and again.messages_added == 1
    assert again.messages_already_stored == 2


def test_the_cli_reports_a_rewritten_file(store: TranscriptStore, tmp_path: Path) -> None:
    url = store.engine.url.render_as_string(hide_password=False)
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in chat("a", "b")), encoding="utf-8")
    assert CliRunner().invoke(cli, ["import", str(path), "--db", url, "--quiet"]).exit_code == 0
    path.write_text("".join(json.dumps(m) + "\n" for m in chat("x", "y", "z")),
                    encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", str(path), "--db", url, "--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout.strip().splitlines()[-1])
    assert row["messages_added"] == 3 and row["rewritten_files"] == 1
    assert "rewritten" in result.output
