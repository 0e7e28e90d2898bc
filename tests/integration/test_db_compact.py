"""``db compact`` (issue 39): an SQLite store written before packing (revision 0025) gets its
messages' metadata and extras packed and its file vacuumed; every message, every chain and
every search reads as before. PostgreSQL and read-only stores refuse it, a missing database
is an error, not a new one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

import store
from store import Message, TextPart, TranscriptStore, UsageError
from store.db.schema import migrate
from store.db.schema.engine import create_store_engine


def _metadata(n: int) -> dict[str, Any]:
    return {"uuid": f"5b0e2c44-1a2b-4c3d-8e9f-{n:012d}", "parent_uuid": None if n == 0 else
            f"5b0e2c44-1a2b-4c3d-8e9f-{n - 1:012d}", "is_sidechain": False,
            "session_id": "5b0e2c44-aaaa", "timestamp": f"2025-05-0{1 + n % 9}T10:00:00.000Z",
            "cwd": "/home/dev/project", "version": "1.0.98", "git_branch": "main",
            "user_type": "external"}


_EXTRAS = {"type": "message", "model": "claude-sonnet-4-20250514", "stop_reason": "end_turn",
           "stop_sequence": None, "usage": {"input_tokens": 9, "output_tokens": 120}}


def _written(path: Path) -> list[Message]:
    """A store of 600 messages whose envelopes are all text (written, then downgraded to the
    revision before packing and upgraded again, as a store written by the release before)."""
    url = f"sqlite:///{path}"
    messages = [Message("user" if n % 2 == 0 else "assistant",
                        (TextPart(f"message {n} " + "words " * (n % 7)),),
                        extras=_EXTRAS if n % 2 else {}, metadata=_metadata(n))
                for n in range(600)]
    with TranscriptStore.open(url) as opened:
        for start in range(0, 600, 100):
            opened.append(f"s{start // 200}", messages[start:start + 100])
        opened.update_search_index()
    engine = create_store_engine(url)
    try:
        migrate.downgrade(engine, "0024")
        migrate.upgrade(engine)
    finally:
        engine.dispose()
    return messages


def _kinds(path: Path) -> dict[str, int]:
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            return {str(kind): int(n) for kind, n in conn.execute(text(
                "SELECT typeof(metadata_json), count(*) FROM messages GROUP BY 1"))}
    finally:
        engine.dispose()


def test_compact_packs_what_was_written_before_and_answers_stay_the_same(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    written = _written(path)
    assert _kinds(path) == {"text": 600}
    url = f"sqlite:///{path}"
    with TranscriptStore.open(url) as opened:
        before = {sid: [(dict(m.message.metadata), dict(m.message.extras))
                        for m in opened.load(sid).messages] for sid in ("s0", "s1", "s2")}
        hits_before = sorted((h.session_id, h.position) for h in opened.search_messages("words"))
        seen: list[tuple[int, int]] = []
        report = store.compact_database(opened, progress=lambda m, p: seen.append((m, p)))
        assert report.messages == 600 and report.packed == 900  # 600 metadata, 300 extras
        assert report.vacuumed and report.bytes_after < report.bytes_before
        assert seen[-1] == (600, 900)
        after = {sid: [(dict(m.message.metadata), dict(m.message.extras))
                       for m in opened.load(sid).messages] for sid in ("s0", "s1", "s2")}
        assert after == before
        assert [m for sid in ("s0", "s1", "s2") for m, _ in after[sid]] == [
            dict(m.metadata) for m in written]
        assert sorted((h.session_id, h.position)
                      for h in opened.search_messages("words")) == hits_before
        verified = opened.verify()
        assert verified.ok, verified.problems
        assert verified.messages == 600
        # Nothing is left to pack: a second run packs nothing (and, unvacuumed, keeps the size).
        again = store.compact_database(opened, vacuum=False)
        assert (again.packed, again.vacuumed) == (0, False)
        assert again.bytes_after == again.bytes_before
    assert _kinds(path) == {"blob": 600}


def test_compact_refuses_postgres_and_read_only_stores(tmp_path: Path, postgres_url: str) -> None:
    with TranscriptStore.open(postgres_url) as opened, \
            pytest.raises(UsageError, match="PostgreSQL"):
        store.compact_database(opened)
    path = tmp_path / "ro.sqlite"
    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        opened.append("s", [Message("user", (TextPart("hi"),), metadata=_metadata(1))])
    with TranscriptStore.open(f"sqlite:///{path}", read_only=True) as opened, \
            pytest.raises(UsageError, match="writable"):
        store.compact_database(opened)


def test_db_compact_command(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    _written(path)
    done = subprocess.run([sys.executable, "-m", "store", "db", "compact", "--db", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "900 values packed in 600 messages" in done.stdout
    assert "VACUUM" in done.stderr
    assert _kinds(path) == {"blob": 600}
    missing = tmp_path / "missing.sqlite"
    done = subprocess.run([sys.executable, "-m", "store", "db", "compact", "--db", str(missing)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "no database" in done.stderr and not missing.exists()


def test_a_vacuum_that_cannot_have_the_file_says_so_and_keeps_what_it_packed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from store.db import compact

    path = tmp_path / "busy.sqlite"
    written = _written(path)
    monkeypatch.setattr(compact, "VACUUM_WAIT_MS", 50)
    other = sqlite3.connect(path, isolation_level=None)

    def hold_the_file(messages: int, _packed: int) -> None:
        if messages == 600:  # every chunk is committed: another writer takes the file
            other.execute("BEGIN IMMEDIATE")

    try:
        with TranscriptStore.open(f"sqlite:///{path}") as opened:
            with pytest.raises(store.DatabaseError, match="VACUUM could not have the file.*"
                                                          "values are packed"):
                store.compact_database(opened, progress=hold_the_file)
            other.execute("ROLLBACK")
            assert [dict(m.message.metadata) for sid in ("s0", "s1", "s2")
                    for m in opened.load(sid).messages] == [dict(m.metadata) for m in written]
            assert opened.verify().ok
    finally:
        other.close()
    assert _kinds(path) == {"blob": 600}
