"""Concurrent writers on one database, for a fixed time: is every acknowledged append there?

Run::

    .venv/bin/python bench/stress.py [--backend sqlite|postgres] [--processes 8] [--seconds 20]
        [--url URL] [--pg-admin-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres]
        [--sessions-per-worker 1] [--max-batch 3] [--keep]

``--processes`` worker processes (2 to 8, started with the ``spawn`` method) each append, for
``--seconds``, batches of 1 to ``--max-batch`` messages (a user message, then an assistant
message with a tool call, then its result) with unique keys ``w<worker>-<n>-<i>``,
alternately to one session that every worker shares and to sessions of their own. Every
seventh batch an acknowledged batch is sent again (it must store nothing), and every tenth
the shared session is loaded beside the writers (it must be a gapless prefix). Each worker
records what ``append`` acknowledged (keys and positions) in a file; errors are counted by
type, with ``database is locked``, serialization failures and deadlocks told apart.

Then every session is loaded and compared with the acknowledgements:

* **acknowledged**: messages (and appends) that ``append`` returned for;
* **found**: acknowledged messages present, at the position the append returned;
* **lost**: acknowledged messages absent; **misplaced**: present at another position;
* **duplicated**: extra copies of a key; **unacknowledged**: stored messages never acknowledged;
* **order violations**: a worker's messages out of that worker's own order in a session;
  **gaps**: sessions whose positions are not 0..n-1;
* **retries that stored**: re-sent batches that stored anything;
* **errors**: by type, as they reached the callers (there should be none).

The database: ``--url`` as given (sessions are named ``stress-<pid>-...``, so a used database
is fine), else a new SQLite file in a temporary directory, or a new PostgreSQL database
``stress_<pid>`` on the server of ``--pg-admin-url`` (dropped afterwards unless ``--keep``).

Exit status: 0 when nothing was lost, duplicated, misplaced, reordered or refused, else 1.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from store import TranscriptStore

DEFAULT_PG_ADMIN_URL = os.environ.get(
    "TRANSCRIPT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
STARTUP_SECONDS = 3.0  # time for every worker to import and open the store before the start


def error_kind(exc: BaseException) -> str:
    """The error's type, with the conflicts that the store should absorb named apart."""
    text = f"{exc} {exc.__cause__ or ''}".lower()
    for needle, kind in (("database is locked", "database is locked"),
                         ("database is busy", "database is busy"),
                         ("could not serialize", "serialization failure"),
                         ("deadlock", "deadlock"),
                         ("lock not available", "lock not available")):
        if needle in text:
            return f"{type(exc).__name__}: {kind}"
    return type(exc).__name__


def batch(worker: int, n: int, max_batch: int) -> tuple[list[dict[str, Any]], list[str]]:
    size = 1 + n % max_batch
    keys = [f"w{worker}-{n}-{i}" for i in range(size)]
    call_id = f"call_w{worker}_{n}"
    records: list[dict[str, Any]] = [{"role": "user", "content": f"w{worker} message {n}"}]
    for i in range(1, size):
        if i % 2:
            records.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"{call_id}_{i}", "type": "function", "function": {
                    "name": "read_file", "arguments": json.dumps({"path": f"{worker}/{n}"})}}]})
        else:
            records.append({"role": "tool", "tool_call_id": f"{call_id}_{i - 1}",
                            "content": f"result {n} {i}"})
    return records, keys


def worker_main(url: str, worker: int, shared: str, own: list[str], start_at: float,
                seconds: float, max_batch: int, out_path: str) -> None:
    """One writer process (see the module docstring); one JSON line per event to out_path."""
    store = TranscriptStore.open(url)
    sessions = [shared, *own]
    with open(out_path, "w", encoding="utf-8") as out:
        delay = start_at - time.time()
        if delay > 0:
            time.sleep(delay)
        deadline = start_at + seconds
        n = 0
        last: tuple[str, list[dict[str, Any]], list[str]] | None = None
        while time.time() < deadline:
            # Half the batches to the shared session, the rest spread over the worker's own.
            session = shared if n % 2 == 0 else sessions[1 + (n // 2) % len(own)]
            records, keys = batch(worker, n, max_batch)
            began = time.perf_counter()
            try:
                result = store.append(session, records, keys=keys)
            except Exception as exc:  # counted by type: every error is a finding
                line: dict[str, Any] = {"error": error_kind(exc), "message": str(exc)[:300]}
            else:
                line = {"session": session, "keys": keys,
                        "positions": [m.position for m in result.stored],
                        "skipped": list(result.skipped_keys),
                        "seconds": time.perf_counter() - began}
                last = (session, records, keys)
            out.write(json.dumps(line) + "\n")
            n += 1
            if n % 7 == 0 and last is not None:
                session, records, keys = last
                try:
                    again = store.append(session, records, keys=keys)
                except Exception as exc:
                    line = {"error": error_kind(exc), "message": str(exc)[:300]}
                else:
                    line = {"retry": True, "stored": len(again.stored)}
                out.write(json.dumps(line) + "\n")
            if n % 10 == 0:
                try:
                    seen = [m.position for m in store.load(shared)]
                except Exception as exc:
                    line = {"error": error_kind(exc), "message": str(exc)[:300]}
                else:
                    line = {"read": len(seen), "gapless": seen == list(range(len(seen)))}
                out.write(json.dumps(line) + "\n")
    store.close()


@contextmanager
def database(args: argparse.Namespace) -> Iterator[str]:
    """The URL to stress (see the module docstring), created and dropped as needed."""
    if args.url:
        yield args.url
        return
    if args.backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="stress-") as tmp:
            yield f"sqlite:///{Path(tmp) / 'stress.sqlite'}"
        return
    from sqlalchemy import create_engine, text

    name = f"stress_{os.getpid()}"
    admin = create_engine(args.pg_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield args.pg_admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        if not args.keep:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def run(args: argparse.Namespace, url: str) -> dict[str, Any]:
    TranscriptStore.open(url).close()  # create the schema once, before the workers race
    prefix = f"stress-{os.getpid()}"
    shared = f"{prefix}-shared"
    own = {w: [f"{prefix}-w{w}-{s}" for s in range(args.sessions_per_worker)]
           for w in range(args.processes)}
    context = multiprocessing.get_context("spawn")
    start_at = time.time() + STARTUP_SECONDS
    with tempfile.TemporaryDirectory(prefix="stress-out-") as tmp:
        paths = {w: str(Path(tmp) / f"w{w}.jsonl") for w in range(args.processes)}
        procs = [context.Process(target=worker_main, args=(
            url, w, shared, own[w], start_at, args.seconds, args.max_batch, paths[w]))
            for w in range(args.processes)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
        crashed = [w for w, proc in enumerate(procs) if proc.exitcode != 0]
        events = {w: [json.loads(line) for line in Path(paths[w]).read_text().splitlines()]
                  for w in range(args.processes) if Path(paths[w]).exists()}
    return verify(url, shared, own, events, crashed)


def verify(url: str, shared: str, own: dict[int, list[str]], events: dict[int, list[dict]],
           crashed: list[int]) -> dict[str, Any]:
    acked: dict[str, dict[str, int]] = {}
    order: dict[tuple[str, int], list[str]] = {}
    errors: Counter[str] = Counter()
    samples: dict[str, str] = {}
    figures: Counter[str] = Counter()
    latencies: list[float] = []
    for w, lines in events.items():
        for line in lines:
            if "error" in line:
                errors[line["error"]] += 1
                samples.setdefault(line["error"], line["message"])
            elif line.get("retry"):
                figures["retries"] += 1
                figures["retries that stored"] += line["stored"] > 0
            elif "read" in line:
                figures["concurrent loads"] += 1
                figures["loads not gapless"] += not line["gapless"]
            else:
                figures["appends acknowledged"] += 1
                latencies.append(line["seconds"])
                if line["skipped"]:
                    figures["first sends skipped as stored"] += 1
                for key, position in zip(line["keys"], line["positions"], strict=False):
                    acked.setdefault(line["session"], {})[key] = position
                order.setdefault((line["session"], w), []).extend(line["keys"])
    figures["messages acknowledged"] = sum(len(keys) for keys in acked.values())
    sessions = [shared, *(s for names in own.values() for s in names)]
    with TranscriptStore.open(url) as store:
        for session in sessions:
            try:
                transcript = store.load(session)
            except KeyError:
                figures["lost"] += len(acked.get(session, {}))
                continue
            keys = [m.key for m in transcript]
            positions = [m.position for m in transcript]
            figures["messages stored"] += len(keys)
            figures["sessions with gaps"] += positions != list(range(len(positions)))
            counts = Counter(keys)
            figures["duplicated"] += sum(n - 1 for n in counts.values() if n > 1)
            where = dict(zip(keys, positions, strict=True))
            want = acked.get(session, {})
            for key, position in want.items():
                if key not in where:
                    figures["lost"] += 1
                elif where[key] != position:
                    figures["misplaced"] += 1
                else:
                    figures["found"] += 1
            figures["unacknowledged"] += sum(1 for key in counts if key not in want)
            for (s, w), worker_keys in order.items():
                if s == session:
                    seen = [k for k in keys if k is not None and k.startswith(f"w{w}-")]
                    figures["order violations"] += seen != worker_keys
    latencies.sort()
    return {"figures": figures, "errors": errors, "samples": samples, "crashed": crashed,
            "p50": statistics.median(latencies) if latencies else None,
            "p99": latencies[int(0.99 * (len(latencies) - 1))] if latencies else None}


BAD = ("lost", "misplaced", "duplicated", "unacknowledged", "order violations",
       "sessions with gaps", "retries that stored", "loads not gapless")


def report(args: argparse.Namespace, url: str, result: dict[str, Any]) -> bool:
    figures, errors = result["figures"], result["errors"]
    from store.db.schema.engine import redact_url

    print(f"stress: {args.backend}, {args.processes} processes, {args.seconds:g} s, "
          f"{redact_url(url)}")
    rows = ["appends acknowledged", "messages acknowledged", "found", "lost", "misplaced",
            "duplicated", "unacknowledged", "messages stored", "order violations",
            "sessions with gaps", "retries", "retries that stored", "concurrent loads",
            "loads not gapless"]
    for name in rows:
        print(f"  {name:<24}{figures[name]:>10}")
    print(f"  {'errors':<24}{sum(errors.values()):>10}")
    for kind, n in errors.most_common():
        print(f"    {kind:<40}{n:>8}   e.g. {result['samples'][kind][:120]}")
    if result["p50"] is not None:
        rate = figures["appends acknowledged"] / args.seconds
        print(f"  throughput {rate:.0f} appends/s; append latency p50 "
              f"{result['p50'] * 1000:.1f} ms, p99 {result['p99'] * 1000:.1f} ms")
    if result["crashed"]:
        print(f"  workers that crashed: {result['crashed']}")
    ok = not errors and not result["crashed"] and not any(figures[b] for b in BAD)
    ok = ok and figures["found"] == figures["messages acknowledged"] > 0
    print("  result: " + ("OK" if ok else "FAILED"))
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--url", help="database URL (default: a new scratch database)")
    parser.add_argument("--pg-admin-url", default=DEFAULT_PG_ADMIN_URL)
    parser.add_argument("--sessions-per-worker", type=int, default=1)
    parser.add_argument("--max-batch", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the scratch PostgreSQL db")
    args = parser.parse_args(argv)
    if not 2 <= args.processes <= 8:
        parser.error("--processes must be between 2 and 8")
    if args.url:
        args.backend = "postgres" if args.url.startswith("postgres") else "sqlite"
    with database(args) as url:
        result = run(args, url)
        ok = report(args, url, result)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
