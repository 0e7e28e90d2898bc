"""A writer killed with SIGKILL in the middle of appends, again and again (both backends).

The writer (``tests/helpers_procs.py crash``) appends batches of turns (user message, assistant
message with tool calls, one tool message per call, some long texts, some invalid arguments)
to three sessions and records each batch number in an ack file, fsynced, once ``append``
returned. The parent kills it at a random moment, 0.05 to 0.35 s into its appends, then
checks the database before starting the next writer, which first sends the batch that was in
flight again (same keys):

* every acknowledged batch is stored, whole, exactly once, and at most one batch that was not
  acknowledged (the one in flight) is stored, whole too: an append is all or nothing;
* each stored message is the one sent (roles, texts, call ids, names, arguments, results), and
  each message's tool calls and results are all stored (the references in ``parts_json``
  match the ``tool_calls`` / ``tool_results`` rows), and every result is linked to its call;
* positions are gapless and ``next_position`` agrees; on SQLite ``PRAGMA integrity_check`` is
  ``ok`` and ``PRAGMA foreign_key_check`` finds nothing.

The next writer is started (imports done) while the previous one runs, so a kill costs about
half a second.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from helpers_procs import CRASH_SESSIONS, crash_batch, read_acks
from sqlalchemy import text

from store import InvalidToolCall, TranscriptStore, normalize_message

HELPER = Path(__file__).resolve().parents[1] / "helpers_procs.py"
KILLS = {"sqlite": 15, "postgresql": 10}


def start_writer(url: str, acks: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HELPER), "crash", url, str(acks)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def kill_mid_append(proc: subprocess.Popen[str], rng: random.Random,
                    acks: Path | None = None) -> None:
    """Let the writer start appending, then SIGKILL it at a random moment (with ``acks``: once
    it has acknowledged one more batch, so that every writer proves something however busy
    the machine is; a count, never a rate)."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    line = proc.stdout.readline() if ready else "(nothing in 60 s)"
    if line.strip() != "appending":
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the writer did not start: {line!r} {err[-2000:]}")
    if acks is not None:
        before = len(read_acks(acks))
        give_up = time.monotonic() + 120  # a hang guard, not a speed test
        while len(read_acks(acks)) <= before and proc.poll() is None:
            if time.monotonic() > give_up:
                break
            time.sleep(0.01)
    time.sleep(rng.uniform(0.05, 0.35))
    if proc.poll() is not None:
        _, err = proc.communicate()
        pytest.fail(f"the writer died by itself ({proc.returncode}): {err[-2000:]}")
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def check_database(url: str, acked: list[int], checked: set[int]) -> int:
    """Every check of the module docstring; returns the number of stored batches. Message
    contents are compared for the batches not in ``checked`` (which is then updated)."""
    assert len(acked) == len(set(acked)), "a batch was acknowledged twice"
    expected_max = max(acked, default=-1)
    stored_batches: set[int] = set()
    with TranscriptStore.open(url) as store:
        for s in range(CRASH_SESSIONS):
            session = f"crash-{s}"
            try:
                transcript = store.load(session)
            except KeyError:  # SessionNotFound: nothing was stored in it yet
                assert not any(b % CRASH_SESSIONS == s for b in acked)
                continue
            keys = [m.key for m in transcript]
            assert [m.position for m in transcript] == list(range(len(keys)))
            assert transcript.session.message_count == len(keys)
            duplicated = [k for k, n in Counter(keys).items() if n > 1]
            assert not duplicated, f"stored twice: {duplicated[:5]}"
            by_batch: dict[int, list[int]] = {}
            for position, key in enumerate(keys):
                assert key is not None
                batch, index = key[1:].split("-m")
                by_batch.setdefault(int(batch), []).append(position)
                assert int(index) == len(by_batch[int(batch)]) - 1, f"{key} out of order"
            for batch, positions in by_batch.items():
                _, records, batch_keys = crash_batch(batch)
                # All or nothing, and in one piece.
                assert len(positions) == len(batch_keys), f"batch {batch} half-stored"
                assert positions == list(range(positions[0], positions[0] + len(positions)))
                if batch not in checked:
                    for position, record in zip(positions, records, strict=True):
                        check_message(transcript.messages[position].message, record)
            stored_batches.update(by_batch)
            assert not list(transcript.orphan_results()), "a result lost its call"
            assert len(transcript.links) == sum(len(m.message.tool_results) for m in transcript)
        with store.engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT m.session_id, m.position, m.parts_json, "
                "(SELECT count(*) FROM tool_calls c WHERE c.session_id = m.session_id "
                " AND c.position = m.position), "
                "(SELECT count(*) FROM tool_results r WHERE r.session_id = m.session_id "
                " AND r.position = m.position) FROM messages m")).all()
            for session, position, parts_json, n_calls, n_results in rows:
                parts = json.loads(parts_json)
                assert n_calls == sum(p["type"] == "tool_call" for p in parts), (
                    f"{session}@{position}: {n_calls} tool_calls rows for {parts_json}")
                assert n_results == sum(p["type"] == "tool_result" for p in parts), (
                    f"{session}@{position}: {n_results} tool_results rows for {parts_json}")
            orphans = conn.execute(text(
                "SELECT count(*) FROM tool_calls c WHERE NOT EXISTS (SELECT 1 FROM messages m "
                "WHERE m.session_id = c.session_id AND m.position = c.position)")).scalar_one()
            assert orphans == 0, "tool_calls rows without their message"
            stale = conn.execute(text(
                "SELECT count(*) FROM sessions s WHERE s.next_position <> (SELECT count(*) "
                "FROM messages m WHERE m.session_id = s.session_id)")).scalar_one()
            assert stale == 0, "next_position disagrees with the messages"
    missing = set(acked) - stored_batches
    assert not missing, f"acknowledged batches lost: {sorted(missing)}"
    extra = stored_batches - set(acked)
    assert extra <= {expected_max + 1}, f"unacknowledged batches stored: {sorted(extra)}"
    checked.update(stored_batches)
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite:///")
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        finally:
            conn.close()
    return len(stored_batches)


def check_message(stored, record) -> None:
    """The stored message is the record sent, read the way the normalizer reads it."""
    sent = normalize_message(record)
    assert stored.role == sent.role and stored.text == sent.text
    assert len(stored.tool_calls) == len(sent.tool_calls)
    for got, want in zip(stored.tool_calls, sent.tool_calls, strict=True):
        assert (got.id, got.recorded_name, type(got)) == (want.id, want.recorded_name,
                                                          type(want))
        assert got.arguments_text == want.arguments_text
        if not isinstance(want, InvalidToolCall):
            assert got.input == want.input
    assert stored.tool_results == sent.tool_results


def test_a_writer_killed_mid_append_loses_and_tears_nothing(store_url, tmp_path):
    rng = random.Random(os.getpid())
    acks = tmp_path / "acks.txt"
    dialect = "sqlite" if store_url.startswith("sqlite") else "postgresql"
    kills = KILLS[dialect]
    ready = start_writer(store_url, acks)
    progress = []
    checked: set[int] = set()
    try:
        for _ in range(kills):
            proc, ready = ready, start_writer(store_url, acks)
            kill_mid_append(proc, rng, acks)
            acked = read_acks(acks)
            progress.append((len(acked), check_database(store_url, acked, checked)))
    finally:
        ready.kill()
        ready.communicate()
    print(f"{dialect}: {kills} kills; (acknowledged, stored) batches after each: {progress}")
    assert progress[-1][0] >= kills, f"too few appends between kills to prove much: {progress}"
