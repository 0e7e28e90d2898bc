"""Our Agents SDK session next to the SDK's own, on the same workload, in the same run.

Run::

    .venv/bin/python bench/agents_session.py [--turns 200] [--repeat 3]
        [--backend sqlite|postgres|both] [--pg-dsn postgresql://postgres@127.0.0.1:5432/postgres]

About 30 s with the defaults. Implementations, each through the SDK's ``Session`` protocol
from one event loop:

* **ours**: ``store.integrations.openai_agents.TranscriptStoreSession`` (the normalizer, tool
  call and result rows, the exact item in metadata, work in a worker thread);
* **sqlite**: the SDK's ``SQLiteSession`` (one JSON text column per item, a worker thread);
* **sqlalchemy**: the SDK's ``SQLAlchemySession`` (one JSON text column per item, SQLAlchemy's
  asyncio engine: ``aiosqlite`` on SQLite, ``psycopg`` async on PostgreSQL). Skipped, with a
  note, when ``aiosqlite``/``greenlet`` are not installed.

On SQLite every implementation uses a file in a temporary directory, and ours runs with
``durability="power"`` (``synchronous=FULL``, as the SDK's stores get by default), so each
commit costs the same fsyncs. On PostgreSQL, ours and ``SQLAlchemySession`` share a scratch
database (``bench_agents_<pid>``, dropped after).

Workload (deterministic): a session of ``--turns`` turns; each turn is one ``add_items`` of 7
items as the Runner writes them (user message, reasoning, two parallel ``function_call`` with
~150-byte arguments, their two ``function_call_output`` with ~1.5 KB outputs, the assistant's
message). The implementations are interleaved operation by operation (each goes first in
turn), so all see the same machine state; shown: the median over ``--repeat`` whole runs.

===============  ======================================================================
add_items        one call per turn, committed (p50 per call, and the total)
get_items        the whole long session (7 x turns items), median of 5 calls
get_items(20)    the newest 20 items of the long session, median of 20 calls
pop+add          ``pop_item`` then ``add_items`` of the popped item, median of 20 pairs
===============  ======================================================================

Ratios are ours / theirs (below 1: ours is faster). Correctness is checked too: every
implementation returns the same items (equal as JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from agents import SQLiteSession

from store.integrations.openai_agents import TranscriptStoreSession

DEFAULT_PG_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
OPS = ("add_items p50", "add_items total", "get_items", "get_items(20)", "pop+add")


def turn_items(turn: int) -> list[dict[str, Any]]:
    """The 7 items one Runner turn writes."""
    text = "".join(f"line {n} of file_{turn}.py: x = {n * turn}\n" for n in range(50))[:1500]
    calls = [{"type": "function_call", "id": f"fc_{turn}_{n}", "call_id": f"call_{turn}_{n}",
              "name": "read_file" if n == 0 else "run_shell_command",
              "arguments": json.dumps({"path": f"src/module_{turn}/file_{n}.py",
                                       "start_line": 1, "end_line": 200,
                                       "reason": "inspect the implementation"}),
              "status": "completed"} for n in range(2)]
    return [
        {"role": "user", "content": f"Turn {turn}: look at module {turn} and fix the bug."},
        {"type": "reasoning", "id": f"rs_{turn}", "summary": [
            {"type": "summary_text", "text": "Read both files first."}],
         "encrypted_content": "gAAAAB" + "x" * 200},
        *calls,
        *({"type": "function_call_output", "call_id": c["call_id"], "output": text}
          for c in calls),
        {"type": "message", "role": "assistant", "id": f"msg_{turn}", "status": "completed",
         "content": [{"type": "output_text", "text": f"Fixed module {turn}.",
                      "annotations": [], "logprobs": []}]},
    ]


async def timed(call: Callable[..., Awaitable[Any]], *args: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await call(*args)
    return time.perf_counter() - started, result


def rotated(names: list[str], step: int) -> list[str]:
    """Each implementation goes first in turn, so that none always gets a warm cache."""
    shift = step % len(names)
    return names[shift:] + names[:shift]


async def measure(sessions: dict[str, Any], turns: int
                  ) -> tuple[dict[str, dict[str, float]], dict[str, list[Any]]]:
    """One whole run, the implementations interleaved operation by operation."""
    names = list(sessions)
    samples: dict[str, dict[str, list[float]]] = {n: {op: [] for op in OPS} for n in names}
    results: dict[str, list[Any]] = {n: [] for n in names}
    for turn in range(turns):
        items = turn_items(turn)
        for name in rotated(names, turn):
            seconds, _ = await timed(sessions[name].add_items, list(items))
            samples[name]["add_items p50"].append(seconds)
    for step in range(5):
        for name in rotated(names, step):
            seconds, got = await timed(sessions[name].get_items)
            samples[name]["get_items"].append(seconds)
            if step == 0:
                results[name].append(got)
    for step in range(20):
        for name in rotated(names, step):
            seconds, got = await timed(sessions[name].get_items, 20)
            samples[name]["get_items(20)"].append(seconds)
            if step == 0:
                results[name].append(got)
    for step in range(20):
        for name in rotated(names, step):
            started = time.perf_counter()
            item = await sessions[name].pop_item()
            await sessions[name].add_items([item])
            samples[name]["pop+add"].append(time.perf_counter() - started)
    times = {}
    for name in names:
        got = {op: statistics.median(v) for op, v in samples[name].items() if v}
        got["add_items total"] = sum(samples[name]["add_items p50"])
        times[name] = got
    return times, results


def sqlalchemy_available() -> str | None:
    """Why SQLAlchemySession cannot run here (``None``: it can)."""
    for module in ("greenlet", "aiosqlite"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install aiosqlite greenlet)"
    return None


def make_sessions(backend: str, folder: Path, run: int, pg_url: str | None
                  ) -> dict[str, Callable[[], Any]]:
    sid = f"bench-{run}"
    makers: dict[str, Callable[[], Any]] = {}
    if backend == "sqlite":
        ours_url = f"sqlite:///{folder / f'ours-{run}.sqlite'}"
        makers["ours"] = lambda: TranscriptStoreSession(sid, _open(ours_url, "power"))
        makers["sqlite"] = lambda: SQLiteSession(sid, str(folder / f"sdk-{run}.sqlite"))
        if sqlalchemy_available() is None:
            url = f"sqlite+aiosqlite:///{folder / f'sa-{run}.sqlite'}"
            makers["sqlalchemy"] = lambda: _sqlalchemy(sid, url)
    else:
        assert pg_url is not None
        makers["ours"] = lambda: TranscriptStoreSession(sid, _open(pg_url, "process"))
        if importlib.util.find_spec("greenlet") is not None:
            makers["sqlalchemy"] = lambda: _sqlalchemy(sid, pg_url)
    return makers


def _open(url: str, durability: str) -> Any:
    from store import TranscriptStore

    return TranscriptStore.open(url, durability=durability)  # type: ignore[arg-type]


def _sqlalchemy(session_id: str, url: str) -> Any:
    from agents.extensions.memory import SQLAlchemySession

    return SQLAlchemySession.from_url(session_id, url=url, create_tables=True)


async def close(session: Any) -> None:
    db = getattr(session, "_db", None)
    if isinstance(session, TranscriptStoreSession) and db is not None:
        db.close()
    elif hasattr(session, "engine"):
        await session.engine.dispose()
    elif hasattr(session, "close"):
        session.close()


async def bench_backend(backend: str, turns: int, repeat: int, pg_url: str | None
                        ) -> dict[str, dict[str, float]]:
    runs: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(repeat):
            sessions = {name: make()
                        for name, make in make_sessions(backend, Path(tmp), run, pg_url).items()}
            try:
                times, results = await measure(sessions, turns)
            finally:
                for session in sessions.values():
                    await close(session)
            reference = json.dumps(results["ours"], sort_keys=True)
            for name, got in results.items():
                if json.dumps(got, sort_keys=True) != reference:
                    raise SystemExit(f"{backend}: {name} returned other items than ours")
            for name, measured in times.items():
                runs.setdefault(name, []).append(measured)
    return {name: {op: statistics.median(r[op] for r in rs) for op in OPS}
            for name, rs in runs.items()}


def report(backend: str, medians: dict[str, dict[str, float]], turns: int) -> None:
    others = [name for name in medians if name != "ours"]
    print(f"\n== {backend}: {turns} turns, {turns * 7} items")
    header = f"{'operation':<18}" + "".join(f"{n:>14}" for n in medians) + "".join(
        f"{'ours/' + n:>16}" for n in others)
    print(header)
    for op in OPS:
        scale, unit = (1.0, "s") if op == "add_items total" else (1000.0, "ms")
        row = f"{op:<18}" + "".join(f"{medians[n][op] * scale:>12.2f}{unit:>2}"
                                    for n in medians)
        row += "".join(f"{medians['ours'][op] / medians[n][op]:>15.2f}x" for n in others)
        print(row)


def scratch_database(dsn: str) -> tuple[str, Callable[[], None]]:
    import psycopg

    name = f"bench_agents_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    base = dsn.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
    return f"{base}/{name}", drop


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--pg-dsn", default=os.environ.get("BENCH_PG_DSN", DEFAULT_PG_DSN))
    args = parser.parse_args(argv)
    missing = sqlalchemy_available()
    if missing:
        print(f"note: SQLAlchemySession skipped on SQLite: {missing}", file=sys.stderr)
    if args.backend in ("sqlite", "both"):
        report("sqlite", asyncio.run(bench_backend("sqlite", args.turns, args.repeat, None)),
               args.turns)
    if args.backend in ("postgres", "both"):
        try:
            url, drop = scratch_database(args.pg_dsn)
        except Exception as exc:  # no server: say so, as the other benches do
            print(f"\nPostgreSQL skipped: {str(exc).splitlines()[0]}", file=sys.stderr)
        else:
            try:
                report("postgres",
                       asyncio.run(bench_backend("postgres", args.turns, args.repeat, url)),
                       args.turns)
            finally:
                drop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
