"""Worker processes for the concurrency and crash tests (run as a script, in a child process).

``python tests/helpers_procs.py concurrency URL WORKER SHARED OWN START BATCHES OUT``
    waits until ``START`` (epoch seconds, so that the workers start together), appends
    ``BATCHES`` batches with unique keys (``w<worker>-<n>-<i>``) alternately to a shared
    session and to the worker's own one (a count, not a duration: the test checks what
    happened, not how fast), and writes one JSON line per attempt to ``OUT``: the keys and
    positions an append acknowledged, a retried batch (must store nothing), a read that saw
    an inconsistent session, or an error (type and message).

``python tests/helpers_procs.py fresh URL WORKER ROUNDS OUT``
    appends, ``ROUNDS`` times, a call (and its result) whose arguments hold a marker no other
    call has (``mark-w<worker>-<n>``), alternately to a session every worker shares and to one
    of its own; right after each append returns it searches for the marker (full text and an
    argument condition) through a second store, writable or read-only in turn, and writes one
    JSON line: the marker and the call ids each search found (the search index must never
    answer stale, whoever else is writing or catching it up).

``python tests/helpers_procs.py crash URL ACKS``
    opens the store, waits for ``go`` on stdin (so that the parent can start it ahead of
    time), prints ``appending`` and appends the batches of :func:`crash_batch` for ever, from
    the one after the last acknowledged (the batch in flight when the previous writer died is
    sent again, with the same keys: it must be stored once). After each append returns it
    writes the batch number to ``ACKS`` and fsyncs it. The parent kills it with SIGKILL.

The tests import this module too (for :func:`crash_batch`, the batches' one definition).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

CRASH_SESSIONS = 3


def chat_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# -- concurrency ------------------------------------------------------------------------------


def concurrency_batch(worker: int, n: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Batch ``n`` of a worker: 1 to 3 messages (a user turn, then a call and its result)."""
    size = 1 + n % 3
    keys = [f"w{worker}-{n}-{i}" for i in range(size)]
    call_id = f"call_w{worker}_{n}"
    records: list[dict[str, Any]] = [{"role": "user", "content": f"w{worker} message {n}"}]
    if size > 1:
        records.append({"role": "assistant", "content": None, "tool_calls": [
            chat_call(call_id, "read_file", json.dumps({"path": f"w{worker}/{n}.txt"}))]})
    if size > 2:
        records.append({"role": "tool", "tool_call_id": call_id, "content": f"file {n}"})
    return records, keys


def run_concurrency(url: str, worker: int, shared: str, own: str, start_at: float,
                    batches: int, out_path: str) -> None:
    from store import TranscriptStore

    store = TranscriptStore.open(url)
    out = open(out_path, "w", encoding="utf-8", buffering=1)
    delay = start_at - time.time()
    if delay > 0:
        time.sleep(delay)
    n = 0
    last: tuple[str, list[dict[str, Any]], list[str]] | None = None
    while n < batches:
        session = shared if n % 2 == 0 else own
        records, keys = concurrency_batch(worker, n)
        line: dict[str, Any] = {"session": session, "keys": keys}
        try:
            result = store.append(session, records, keys=keys)
        except Exception as exc:  # every error is a finding: report it to the parent
            line.update(error=type(exc).__name__, message=str(exc)[:500])
        else:
            line.update(positions=[m.position for m in result.stored],
                        skipped=list(result.skipped_keys))
            last = (session, records, keys)
        out.write(json.dumps(line) + "\n")
        n += 1
        if n % 7 == 0 and last is not None:
            # Send an acknowledged batch again: it must store nothing.
            session, records, keys = last
            retry: dict[str, Any] = {"retry": True, "session": session, "keys": keys}
            try:
                again = store.append(session, records, keys=keys)
            except Exception as exc:
                retry.update(error=type(exc).__name__, message=str(exc)[:500])
            else:
                retry.update(positions=[m.position for m in again.stored],
                             skipped=list(again.skipped_keys))
            out.write(json.dumps(retry) + "\n")
        if n % 10 == 0:
            # Readers run beside the writers: what they see is a gapless prefix.
            try:
                seen = [m.position for m in store.load(shared)]
            except Exception as exc:
                out.write(json.dumps({"error": type(exc).__name__, "message": str(exc)[:500],
                                      "session": shared, "load": True}) + "\n")
            else:
                if seen != list(range(len(seen))):
                    out.write(json.dumps({"error": "InconsistentRead", "session": shared,
                                          "message": f"positions {seen}"}) + "\n")
    out.write(json.dumps({"done": n}) + "\n")
    out.close()
    store.close()


# -- crash ------------------------------------------------------------------------------------

_WORDS = ["ls", "Übersicht", "naïve café", "日本語", "emoji 🚀", "quote \"x\"", "tab\tnl\n",
          "back\\slash", ""]


def crash_batch(number: int) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Batch ``number``: its session, records and keys (deterministic). 1 to 4 turns, each a
    user message, an assistant message with 1 to 3 calls (sometimes with arguments that are not
    JSON, and sometimes a long text) and one tool message per call."""
    rng = random.Random(number)
    session = f"crash-{number % CRASH_SESSIONS}"
    records: list[dict[str, Any]] = []
    for turn in range(rng.randint(1, 4)):
        text = f"batch {number} turn {turn} " + rng.choice(_WORDS)
        if rng.random() < 0.2:
            text += "x" * rng.randint(5_000, 50_000)
        records.append({"role": "user", "content": text})
        calls = []
        for index in range(rng.randint(1, 3)):
            call_id = f"call_{number}_{turn}_{index}"
            if rng.random() < 0.15:
                arguments = '{"path": "broken'  # invalid JSON: kept verbatim, as invalid
            else:
                arguments = json.dumps({"path": rng.choice(_WORDS), "n": rng.randint(0, 10**6),
                                        "deep": {"list": [rng.random(), None, True]}},
                                       ensure_ascii=rng.random() < 0.5)
            calls.append(chat_call(call_id, rng.choice(["read_file", "bash", "grep"]),
                                   arguments))
        records.append({"role": "assistant", "content": rng.choice([None, "on it"]),
                        "tool_calls": calls})
        for call in calls:
            records.append({"role": "tool", "tool_call_id": call["id"],
                            "content": f"result of {call['id']}"})
    keys = [f"b{number}-m{i}" for i in range(len(records))]
    return session, records, keys


def read_acks(path: str | Path) -> list[int]:
    """The batch numbers acknowledged in an ack file (a torn last line is not one)."""
    try:
        data = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    lines = data.split("\n")
    return [int(line) for line in lines[:-1] if line]


def run_crash(url: str, acks_path: str) -> None:
    from store import TranscriptStore

    store = TranscriptStore.open(url)
    if sys.stdin.readline().strip() != "go":
        return
    acked = read_acks(acks_path)
    number = max(acked) + 1 if acked else 0
    fd = os.open(acks_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    print("appending", flush=True)
    while True:
        session, records, keys = crash_batch(number)
        store.append(session, records, keys=keys)
        os.write(fd, f"{number}\n".encode())
        os.fsync(fd)
        number += 1


# -- search freshness -------------------------------------------------------------------------


def run_fresh(url: str, worker: int, rounds: int, out_path: str) -> None:
    from store import ArgumentCondition, CallQuery, TranscriptStore, ViewCondition, search_calls

    writer = TranscriptStore.open(url)
    readers = (TranscriptStore.open(url), TranscriptStore.open(url, read_only=True))
    with open(out_path, "w", encoding="utf-8", buffering=1) as out:
        for n in range(rounds):
            marker = f"mark-w{worker}-{n}"
            call_id = f"fresh_w{worker}_{n}"
            session = "fresh-shared" if n % 2 else f"fresh-own-{worker}"
            writer.append(session, [
                {"role": "assistant", "content": None, "tool_calls": [
                    chat_call(call_id, "bash", json.dumps({"command": f"echo {marker}"}))]},
                {"role": "tool", "tool_call_id": call_id, "content": f"out {marker}\n"},
            ])
            reader = readers[n % 2]
            text = [m.call_id for m in search_calls(reader, CallQuery(text=marker))]
            where = [m.call_id for m in search_calls(reader, CallQuery(
                where=(ArgumentCondition("command", "contains", marker),)))]
            view = [m.call_id for m in search_calls(reader, CallQuery(
                views=(ViewCondition("command", marker),)))]
            out.write(json.dumps({"marker": marker, "call_id": call_id, "text": text,
                                  "where": where, "view": view,
                                  "read_only": reader.read_only}) + "\n")
    writer.close()
    for reader in readers:
        reader.close()


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "concurrency":
        url, worker, shared, own, start_at, batches, out = args
        run_concurrency(url, int(worker), shared, own, float(start_at), int(batches), out)
    elif command == "fresh":
        url, worker, rounds, out = args
        run_fresh(url, int(worker), int(rounds), out)
    elif command == "crash":
        url, acks = args
        run_crash(url, acks)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
