"""Issue 33, "say what was not read": each source file's bookkeeping keeps what each record
kind of it became (``source_files.kinds_json``, revision 0019), over its reads, on both
backends; a file that grew adds its new lines' counts, a file read whole again replaces them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store import TranscriptStore, import_paths

BASE = {"sessionId": "cc-kinds", "cwd": "/w", "version": "2.1.0", "isSidechain": False,
        "userType": "external", "timestamp": "2026-01-01T00:00:00Z"}


def line(kind: str, uuid: str, parent: str | None, **extra: Any) -> str:
    return json.dumps({**BASE, "type": kind, "uuid": uuid, "parentUuid": parent, **extra}) + "\n"


def user(uuid: str, parent: str | None, text: str) -> str:
    return line("user", uuid, parent, message={"role": "user", "content": text})


def test_the_account_is_kept_per_file_and_grows_with_it(store: TranscriptStore,
                                                        tmp_path: Path) -> None:
    file = tmp_path / "cc-kinds.jsonl"
    file.write_text(user("u1", None, "hello") + line("progress", "p1", "u1", data={})
                    + "{torn\n", encoding="utf-8")
    import_paths(store, [file], settle=0)
    state = store.source_states()[str(file.resolve())]
    assert state.kinds == {"user": {"stored": 1}, "progress": {"skipped": 1},
                           "(not JSON)": {"not understood": 1}}

    with file.open("a", encoding="utf-8") as handle:  # the file grows: only the new lines
        handle.write(user("u2", "p1", "again") + line("brand-new-kind", "n1", "u2", data={}))
    summary = import_paths(store, [file], settle=0)
    assert summary.unknown_kinds == {"claude-code: brand-new-kind": 1}
    state = store.source_states()[str(file.resolve())]
    assert state.kinds == {"user": {"stored": 2}, "progress": {"skipped": 1},
                           "(not JSON)": {"not understood": 1},
                           "brand-new-kind": {"skipped": 1}}

    file.write_text(user("u1", None, "hello"), encoding="utf-8")  # rewritten: read whole
    import_paths(store, [file], settle=0)
    assert store.source_states()[str(file.resolve())].kinds == {"user": {"stored": 1}}


def test_a_document_and_a_database_are_accounted_too(store: TranscriptStore) -> None:
    gemini = next((Path(__file__).resolve().parents[1] / "fixtures" / "agents").glob(
        "gemini/tmp/proj/chats/*.json"))
    import_paths(store, [gemini], settle=0)
    assert store.source_states()[str(gemini.resolve())].kinds == {"(document)": {"stored": 1}}
