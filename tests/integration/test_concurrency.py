"""Several writer processes on one database (both backends): nothing lost, nothing doubled.

Four worker processes (``tests/helpers_procs.py concurrency``) append, starting together, a
fixed number of batches of one to three messages with unique keys to one shared session and to
a session of
their own, send an acknowledged batch again every seventh time, and load the shared session
now and then. Afterwards every acknowledged key is stored exactly once at the position its
append returned, positions are gapless, each worker's messages keep that worker's order, the
retried batches stored nothing, and no error (``database is locked``, a serialization failure
or anything else) reached a worker, and exactly the messages sent were stored. The test checks
what happened, never how fast (rates belong in ``bench/stress.py``, the longer version).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from store import TranscriptStore

HELPER = Path(__file__).resolve().parents[1] / "helpers_procs.py"
WORKERS = 4
BATCHES = 30  # per worker: 60 messages each, 240 in all
SHARED = "shared"


def own_session(worker: int) -> str:
    return f"own-{worker}"


def run_workers(url: str, tmp_path: Path) -> dict[int, list[dict]]:
    start_at = time.time() + 1.5  # time for every child to import and open the store
    outputs = {w: tmp_path / f"worker-{w}.jsonl" for w in range(WORKERS)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(HELPER), "concurrency", url, str(w), SHARED, own_session(w),
             repr(start_at), str(BATCHES), str(outputs[w])],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for w in range(WORKERS)
    ]
    failures = []
    for w, proc in enumerate(procs):
        try:
            out, err = proc.communicate(timeout=600)  # a hang guard, not a speed test
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        if proc.returncode != 0:
            failures.append(f"worker {w} exited with {proc.returncode}: {err[-2000:]}")
    assert not failures, "\n".join(failures)
    return {
        w: [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for w, path in outputs.items()
    }


def test_concurrent_writers_lose_and_double_nothing(store_url, tmp_path):
    lines = run_workers(store_url, tmp_path)

    errors = [(w, line) for w, ls in lines.items() for line in ls if "error" in line]
    assert not errors, f"errors reached the callers: {errors[:5]}"
    for w, ls in lines.items():
        assert ls and "done" in ls[-1], f"worker {w} did not finish"

    acked: dict[str, dict[str, int]] = {}  # session -> key -> acknowledged position
    order: dict[tuple[str, int], list[str]] = {}  # (session, worker) -> keys in append order
    for w, ls in lines.items():
        for line in ls:
            if "keys" not in line:
                continue
            if line.get("retry"):
                assert line["positions"] == [] and line["skipped"] == line["keys"], line
                continue
            assert line["skipped"] == [] and len(line["positions"]) == len(line["keys"]), line
            # One append's messages are consecutive: nobody else got in between.
            first = line["positions"][0]
            assert line["positions"] == list(range(first, first + len(line["keys"]))), line
            for key, position in zip(line["keys"], line["positions"], strict=True):
                assert key not in acked.setdefault(line["session"], {})
                acked[line["session"]][key] = position
            order.setdefault((line["session"], w), []).extend(line["keys"])
    total = sum(len(keys) for keys in acked.values())
    assert len(order) == 2 * WORKERS, "every worker got appends into both sessions"
    expected = {f"w{w}-{n}-{i}" for w in range(WORKERS) for n in range(BATCHES)
                for i in range(1 + n % 3)}
    assert total == len(expected) == 240
    assert {k for keys in acked.values() for k in keys} == expected

    with TranscriptStore.open(store_url) as store:
        for session in [SHARED, *(own_session(w) for w in range(WORKERS))]:
            transcript = store.load(session)
            keys = [m.key for m in transcript]
            positions = [m.position for m in transcript]
            assert positions == list(range(len(positions))), f"{session}: gaps or duplicates"
            duplicated = [k for k, n in Counter(keys).items() if n > 1]
            assert not duplicated, f"{session}: stored twice: {duplicated[:10]}"
            stored = dict(zip(keys, positions, strict=True))
            lost = set(acked[session]) - set(stored)
            assert not lost, f"{session}: acknowledged but lost: {sorted(lost)[:10]}"
            assert set(stored) == set(acked[session]), f"{session}: unacknowledged rows"
            assert stored == acked[session], f"{session}: not where the append said"
            assert transcript.session.message_count == len(keys)
            for (s, w), worker_keys in order.items():
                if s == session:
                    seen = [k for k in keys if k.startswith(f"w{w}-")]
                    assert seen == worker_keys, f"{session}: worker {w}'s order changed"
            # Each message is the one its key was sent with (contents did not cross).
            for message in transcript:
                worker, n, index = message.key[1:].split("-")
                if index == "0":
                    assert message.message.text == f"w{worker} message {n}"
            assert len(list(transcript.orphan_results())) == 0
