"""Worker processes for the race tests (issue 23), run as a script in a child process.

Every worker opens the store, prints ``ready`` and waits for ``go`` on stdin (so that the
workers start together, whatever their start-up costs), runs its loop for ``SECONDS`` (a
bound, not a measurement: the tests check what happened, never how fast), and writes one
JSON line per event to ``OUT``: what it popped, added or loaded, and any error (type and
message), then ``{"done": n}``. :func:`run_workers` runs them.

``python tests/helpers_races.py pop URL SESSION SECONDS OUT [--add PREFIX] [--until-empty]``
    pops items from an Agents SDK session (``TranscriptStoreSession``); with ``--add``, adds
    a new item (``PREFIX-<n>``) after each pop; with ``--until-empty``, stops at the first
    pop that finds nothing.

``python tests/helpers_races.py clear URL SESSION SECONDS OUT PREFIX``
    adds a batch of items (``PREFIX-<n>``) and clears the session, in a loop; ends with one
    more batch, not cleared (so that what it holds at the end is known).

``python tests/helpers_races.py replace URL SESSION SECONDS OUT``
    replaces the session's last call and its result, in a loop: ``truncate`` to the first
    message, then ``append`` a new call and result (two transactions, as an agent retrying a
    step does), with a new call id each round.

``python tests/helpers_races.py load URL SESSION SECONDS OUT``
    loads the session in a loop (whole, ``last_turns=1``, ``since_position=2`` in turn) and
    checks that each load is a state that existed (see :func:`check_load`): it writes one line
    per load that is not (or raised), and ``{"loads": n}`` at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TextIO

#: How long each race runs (seconds); ``TRANSCRIPT_RACE_SECONDS=60`` for the long runs.
SECONDS = float(os.environ.get("TRANSCRIPT_RACE_SECONDS", "3"))


def run_workers(workers: list[list[str]], url: str, out_dir: Path,
                seconds: float = SECONDS) -> list[list[dict[str, Any]]]:
    """Run one child process per ``[command, session, *args]`` for ``seconds``, started
    together once every one of them has opened the store; their lines, in the order given.
    A child that exits with an error fails the caller's test with its stderr."""
    outs = [out_dir / f"race-{n}.jsonl" for n in range(len(workers))]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, command, url, session, repr(seconds), str(out), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for (command, session, *args), out in zip(workers, outs, strict=True)
    ]
    for proc in procs:  # each says "ready" once its imports are done and its store is open
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    failures = []
    for number, proc in enumerate(procs):
        try:
            _, err = proc.communicate(timeout=seconds + 600)  # a hang guard, not a speed test
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        if proc.returncode != 0:
            failures.append(f"worker {number} ({workers[number][0]}) exited with "
                            f"{proc.returncode}: {err[-3000:]}")
    assert not failures, "\n".join(failures)
    return [[json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
            for out in outs]


def item(content: str) -> dict[str, Any]:
    return {"role": "user", "content": content}


def _error(out: TextIO, exc: BaseException, **where: Any) -> None:
    out.write(json.dumps({"error": type(exc).__name__, "message": str(exc)[:500],
                          **where}) + "\n")


# -- Agents SDK session: pop, pop then add, clear --------------------------------------------------


async def _pop_loop(session: Any, stop_at: float, out: TextIO, add_prefix: str | None,
                    until_empty: bool) -> int:
    n = 0
    while time.time() < stop_at:
        try:
            popped = await session.pop_item()
        except Exception as exc:  # every error is a finding: report it to the parent
            _error(out, exc, op="pop")
            popped = None
        else:
            out.write(json.dumps({"popped": popped and popped["content"]}) + "\n")
        if add_prefix is not None:
            content = f"{add_prefix}-{n}"
            try:
                await session.add_items([item(content)])
            except Exception as exc:
                _error(out, exc, op="add", content=content)
            else:
                out.write(json.dumps({"added": content}) + "\n")
        elif popped is None and until_empty:
            break
        n += 1
    return n


async def _clear_loop(session: Any, stop_at: float, out: TextIO, prefix: str) -> int:
    n = 0

    async def add_batch() -> list[str]:
        contents = [f"{prefix}-{n}-{i}" for i in range(5)]
        try:
            await session.add_items([item(c) for c in contents])
        except Exception as exc:
            _error(out, exc, op="add")
        else:
            out.write(json.dumps({"added": contents}) + "\n")
        return contents

    while time.time() < stop_at:
        await add_batch()
        await asyncio.sleep(0.005)  # room for a pop or two
        try:
            await session.clear_session()
        except Exception as exc:
            _error(out, exc, op="clear")
        else:
            out.write(json.dumps({"cleared": n}) + "\n")
        n += 1
    out.write(json.dumps({"last_batch": await add_batch()}) + "\n")
    return n


# -- loads against a writer replacing the session's end --------------------------------------------


def replacement(round_number: int) -> list[dict[str, Any]]:
    """A call and its result with a call id of their own (round ``round_number``)."""
    call_id = f"call_r{round_number}"
    return [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"n": round_number})}}]},
        {"role": "tool", "tool_call_id": call_id, "content": f"out {round_number}"},
    ]


def _replace_loop(db: Any, session_id: str, stop_at: float, out: TextIO) -> int:
    n = 0
    while time.time() < stop_at:
        n += 1
        try:
            db.truncate(session_id, 1)
            db.append(session_id, replacement(n))
        except Exception as exc:
            _error(out, exc, op="replace")
    return n


def check_load(transcript: Any, window: str) -> str | None:
    """Why ``transcript`` (a load of the replaced session) is not a state that existed, or
    ``None``. The states: ``[user]`` (between the truncate and the append) and ``[user, call
    c, result of c]`` for one round's ``c``; a window holds a suffix of one of them that
    starts at the call when it holds the result."""
    messages = list(transcript)
    positions = [m.position for m in messages]
    if window == "whole":
        if transcript.session.message_count != len(messages):
            return f"message_count {transcript.session.message_count}, {len(messages)} loaded"
        if positions not in ([0], [0, 1, 2]):
            return f"positions {positions}"
    elif positions not in ([0], [0, 1, 2], [1, 2], []):
        return f"window positions {positions}"
    elif (positions[-1] if positions else 0) != transcript.session.message_count - 1:
        return f"window positions {positions}, message_count {transcript.session.message_count}"
    present = {(m.position, i) for m in messages for i, _ in enumerate(m.message.tool_calls)}
    for result_at, call_at in transcript.links.items():
        if call_at not in present:
            return f"the result at {result_at} links {call_at}, which the load does not hold"
    if 2 in positions:
        call = messages[positions.index(1)].message.tool_calls[0]
        result = messages[positions.index(2)].message.tool_results[0]
        if result.call_id != call.id or transcript.links.get((2, 0)) != (1, 0):
            return f"the result answers {result.call_id!r}, the call is {call.id!r}"
    return None


def _load_loop(db: Any, session_id: str, stop_at: float, out: TextIO) -> int:
    windows: list[tuple[str, dict[str, Any]]] = [
        ("whole", {}), ("last_turns", {"last_turns": 1}), ("since", {"since_position": 2})]
    n = 0
    while time.time() < stop_at:
        name, window = windows[n % len(windows)]
        n += 1
        try:
            why = check_load(db.load(session_id, **window), name)
        except Exception as exc:
            _error(out, exc, op="load", window=name)
        else:
            if why is not None:
                out.write(json.dumps({"torn": why, "window": name}) + "\n")
    out.write(json.dumps({"loads": n}) + "\n")
    return n


def main(argv: list[str]) -> None:
    command, url, session_id, seconds, out_path, *rest = argv
    # Imports and the store's opening happen before the start, so that the race is a race.
    from store import TranscriptStore

    db = TranscriptStore.open(url)
    if command in ("pop", "clear"):
        from store.integrations.openai_agents import TranscriptStoreSession

        session = TranscriptStoreSession(session_id, db)
    with db, open(out_path, "w", encoding="utf-8", buffering=1) as out:
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            raise SystemExit("no go")
        stop_at = time.time() + float(seconds)
        if command == "pop":
            add = rest[rest.index("--add") + 1] if "--add" in rest else None
            n = asyncio.run(_pop_loop(session, stop_at, out, add, "--until-empty" in rest))
        elif command == "clear":
            n = asyncio.run(_clear_loop(session, stop_at, out, rest[0]))
        elif command == "replace":
            n = _replace_loop(db, session_id, stop_at, out)
        elif command == "load":
            n = _load_loop(db, session_id, stop_at, out)
        else:
            raise SystemExit(f"unknown command {command!r}")
        out.write(json.dumps({"done": n}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
