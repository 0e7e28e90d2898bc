"""Revision 0025 (issue 39): on SQLite a message's metadata and extras are stored packed (a
version byte and a zstd frame, ``store/db/packing.py``) when that is shorter; every read
gives back the text the writer was given (load, the read-only reader, the chain, the
key-conflict check), and the downgrade turns them back into that text. PostgreSQL stores
text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, text

import store
from store import KeyConflictError, Message, TextPart, TranscriptStore
from store.core.errors import DatabaseError
from store.db.packing import VERSION, packed, unpacked
from store.db.schema import migrate


def _metadata(n: int) -> dict[str, Any]:
    return {"uuid": f"7d3c5a1e-0000-4000-8000-{n:012d}",
            "parent_uuid": f"7d3c5a1e-0000-4000-8000-{n - 1:012d}",
            "is_sidechain": False, "session_id": "a7f0c1d2", "timestamp":
            f"2025-04-26T18:{n % 60:02d}:38.390Z", "cwd": "/home/dev/café-ünïcode 🚀",
            "version": "1.0.108", "git_branch": "main", "user_type": "external"}


_EXTRAS = {"type": "message", "model": "claude-sonnet-4-20250514", "stop_reason": "end_turn",
           "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 672,
                                            "cache_read_input_tokens": 80935}}


def _messages() -> list[Message]:
    out = []
    for n in range(6):
        out.append(Message("user", (TextPart(f"question {n}"),), message_id=f"u{n}",
                           metadata=_metadata(n)))
        out.append(Message("assistant", (TextPart(f"answer {n}"),), message_id=f"a{n}",
                           extras=_EXTRAS, metadata={"n": n} if n % 2 else _metadata(n)))
    return out


def _stored(engine: Engine) -> list[tuple[Any, Any, str, str]]:
    kind = "typeof" if engine.dialect.name == "sqlite" else "pg_typeof"
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(text(
            f"SELECT metadata_json, extras_json, {kind}(metadata_json)::text, "
            f"{kind}(extras_json)::text FROM messages ORDER BY position"
            if kind == "pg_typeof" else
            "SELECT metadata_json, extras_json, typeof(metadata_json), typeof(extras_json) "
            "FROM messages ORDER BY position"))]


def test_envelopes_are_packed_on_sqlite_and_read_back_exactly(engine: Engine,
                                                              new_url: str) -> None:
    migrate.upgrade(engine)
    written = _messages()
    with TranscriptStore.open(new_url) as opened:
        keys = [m.message_id for m in written]
        opened.append("s", written, keys=keys)
        loaded = [m.message for m in opened.load("s").messages]
        assert [dict(m.metadata) for m in loaded] == [dict(m.metadata) for m in written]
        assert [dict(m.extras) for m in loaded] == [dict(m.extras) for m in written]
        # Stored already: skipped, not a conflict (the digests are over the texts) ...
        again = opened.append("s", written, keys=keys, on_key_conflict="raise")
        assert len(again.skipped_keys) == len(written) and not again.stored
        # ... and a different message under a stored key is one.
        changed = Message("user", (TextPart("question 0"),), message_id="u0",
                          metadata={**_metadata(0), "cwd": "/elsewhere"})
        with pytest.raises(KeyConflictError):
            opened.append("s", [changed], keys=["u0"], on_key_conflict="raise")
        report = opened.verify()
        assert report.ok, report.problems
        assert report.messages == len(written)

    rows = _stored(engine)
    if engine.dialect.name != "sqlite":  # PostgreSQL: the texts as written
        assert {kind for row in rows for kind in row[2:]} == {"text"}
        assert all(type(value) is str for row in rows for value in row[:2] if value)
        return
    # A long envelope is a packed BLOB, shorter than its text; a short one stays text.
    for row, message in zip(rows, written, strict=True):
        meta, extras, meta_kind, extras_kind = row
        meta_text = orjson.dumps(dict(message.metadata)).decode()
        if len(meta_text) > 100:
            assert meta_kind == "blob" and meta[0] == VERSION
            assert len(meta) < len(meta_text.encode())
            assert orjson.loads(unpacked(meta) or "") == dict(message.metadata)
        else:
            assert meta_kind == "text"
        if message.role == "assistant":
            assert extras_kind == "blob" and len(extras) < len(
                orjson.dumps(dict(message.extras)))
        else:
            assert extras_kind == "null"
    texts = [(unpacked(meta), unpacked(extras)) for meta, extras, _, _ in rows]

    # The read-only reader (stdlib sqlite3, no SQLAlchemy) reads them too.
    with store.ReadOnlyStore.open(new_url) as reader:
        lite = [m.message for m in reader.load("s").messages]
    assert [dict(m.metadata) for m in lite] == [dict(m.metadata) for m in written]
    assert [dict(m.extras) for m in lite] == [dict(m.extras) for m in written]

    # The downgrade leaves the exact texts for the release before; the upgrade reads both.
    migrate.downgrade(engine, "0024")
    rows = _stored(engine)
    assert [(meta, extras) for meta, extras, _, _ in rows] == texts
    assert {kind for row in rows for kind in row[2:]} <= {"text", "null"}
    migrate.upgrade(engine)
    with TranscriptStore.open(new_url) as opened:
        opened.append("s", [Message("user", (TextPart("later"),), metadata=_metadata(99))])
        loaded = [m.message for m in opened.load("s").messages]
        assert dict(loaded[-1].metadata) == _metadata(99)
        assert [dict(m.metadata) for m in loaded[:-1]] == [dict(m.metadata) for m in written]
        assert opened.verify().ok
    assert _stored(engine)[-1][2] == "blob"


def test_packing_round_trips_any_text_and_refuses_a_foreign_blob(tmp_path: Path) -> None:
    for value in ("{}", '{"a":1}', orjson.dumps(_metadata(3)).decode(),
                  orjson.dumps({"x": "\u2028 \\ \" \U0001f680 " * 40}).decode()):
        stored = packed(value)
        assert unpacked(stored) == value
        if len(value) < 24:
            assert stored == value  # too short to gain anything: kept as text
    assert unpacked(None) is None
    with pytest.raises(DatabaseError, match="first byte 28"):
        unpacked(b"\x28\xb5\x2f\xfd")  # a bare zstd frame: no version byte
    with pytest.raises(DatabaseError, match="first byte none"):
        unpacked(b"")
