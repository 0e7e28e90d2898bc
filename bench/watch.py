"""What a capture pass costs (issue 25): the first import of a Claude Code history, then a
pass with nothing new and a pass after two new lines, as ``watch`` runs them.

Run::

    .venv/bin/python bench/watch.py [--files 150] [--lines 300] [--repeat 3]
        [--backend sqlite|postgres] [--pg-dsn postgresql://postgres@127.0.0.1:5432/postgres]

Workload (deterministic): ``--files`` Claude Code transcripts in project folders, each of
``--lines`` lines (a user prompt, then assistant ``tool_use`` lines and user ``tool_result``
lines of a few hundred bytes, about 150 KB a file: 150 files make a 23 MB history, the size
the issue measured). Each pass is ``store.import_paths`` over the history with the store's
per-file states (what ``transcript-store watch`` runs), in a fresh store; shown: the median
over ``--repeat`` runs, and each pass as a share of the first import. The bounds the issue
sets: a pass with nothing new at most 5% of the first import, after two new lines at most
10%; the run ends with status 1 when one is passed, and when a pass stored the wrong number
of messages.

Measured (2 cores shared with other work, 150 files, 23.6 MB, 45,000 messages, one run)::

                    SQLite file            PostgreSQL 15
    first import    21.8 s                 47.1 s
    nothing new     0.033 s  (0.15 %)      0.076 s  (0.16 %)
    two new lines   0.047 s  (0.21 %)      0.093 s  (0.20 %)

Before the per-file states (issue 25's report), the same passes cost 64 % and 54 %: every
pass read and parsed every file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text

from store import TranscriptStore, import_paths

DEFAULT_PG_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"


def _line(session: str, number: int) -> str:
    base = {"sessionId": session, "uuid": f"{session}-{number}", "cwd": "/work/project",
            "parentUuid": f"{session}-{number - 1}" if number else None,
            "timestamp": "2026-11-30T12:00:00.000Z", "isSidechain": False}
    if number == 0:
        return json.dumps({**base, "type": "user", "message": {
            "role": "user", "content": "look at the project and fix the failing tests"}})
    if number % 2:
        return json.dumps({**base, "type": "assistant", "message": {
            "id": f"msg_{session}_{number}", "role": "assistant", "model": "claude-x",
            "stop_reason": "tool_use", "content": [{
                "type": "tool_use", "id": f"toolu_{session}_{number}", "name": "Bash",
                "input": {"command": f"pytest tests/test_{number}.py -q -x --maxfail=1",
                          "description": "run the tests of one module"}}]}})
    return json.dumps({**base, "type": "user", "message": {"role": "user", "content": [{
        "type": "tool_result", "tool_use_id": f"toolu_{session}_{number - 1}",
        "content": "." * 120 + f"\n{number} passed in 0.{number % 97:02d}s\n" + "x" * 100}]}})


def make_history(root: Path, files: int, lines: int) -> int:
    """Write the history; its size in bytes."""
    total = 0
    for index in range(files):
        folder = root / f"-work-project-{index % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        session = f"bench-{index:04d}"
        body = "".join(_line(session, n) + "\n" for n in range(lines))
        (folder / f"{session}.jsonl").write_text(body, encoding="utf-8")
        total += len(body.encode())
    return total


def _store_url(backend: str, scratch: Path, pg_dsn: str) -> tuple[str, str | None]:
    if backend == "sqlite":
        return f"sqlite:///{scratch / f'{uuid.uuid4().hex}.sqlite'}", None
    name = f"bench_watch_{uuid.uuid4().hex[:8]}"
    admin = create_engine(pg_dsn.replace("postgresql://", "postgresql+psycopg://"),
                          isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    base = pg_dsn.replace("postgresql://", "postgresql+psycopg://").rsplit("/", 1)[0]
    return f"{base}/{name}", name


def _drop(pg_dsn: str, name: str) -> None:
    admin = create_engine(pg_dsn.replace("postgresql://", "postgresql+psycopg://"),
                          isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def one_run(backend: str, files: int, lines: int, pg_dsn: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as tmp:
        scratch = Path(tmp)
        history = scratch / "projects"
        make_history(history, files, lines)
        url, pg_name = _store_url(backend, scratch, pg_dsn)
        try:
            with TranscriptStore.open(url) as opened:
                started = time.perf_counter()
                first = import_paths(opened, [history], settle=0)
                first_s = time.perf_counter() - started
                assert first.messages_added == files * lines, first
                started = time.perf_counter()
                idle = import_paths(opened, [history], settle=0, notice_deleted=True)
                idle_s = time.perf_counter() - started
                assert idle.messages_added == 0 and idle.unchanged == files, idle
                target = next(history.rglob("*.jsonl"))
                session = target.stem
                with target.open("a", encoding="utf-8") as handle:
                    handle.write(_line(session, lines) + "\n" + _line(session, lines + 1) + "\n")
                started = time.perf_counter()
                grown = import_paths(opened, [history], settle=0, notice_deleted=True)
                grown_s = time.perf_counter() - started
                assert grown.messages_added == 2 and grown.messages_already_stored == 0, grown
        finally:
            if pg_name:
                _drop(pg_dsn, pg_name)
    return {"first import": first_s, "nothing new": idle_s, "two new lines": grown_s}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=150)
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--pg-dsn", default=DEFAULT_PG_DSN)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        size = make_history(Path(tmp), args.files, args.lines)
    print(f"history: {args.files} files, {args.files * args.lines:,} lines, "
          f"{size / 1e6:.1f} MB; backend {args.backend}; median of {args.repeat} runs")
    runs = [one_run(args.backend, args.files, args.lines, args.pg_dsn)
            for _ in range(args.repeat)]
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    bounds = {"nothing new": 0.05, "two new lines": 0.10}
    ok = True
    for name, seconds in median.items():
        share = seconds / median["first import"]
        bound = bounds.get(name)
        verdict = "" if bound is None else (
            f"  (bound {bound:.0%}: {'ok' if share <= bound else 'PASSED'})")
        ok = ok and (bound is None or share <= bound)
        print(f"{name:15} {seconds:9.3f} s  {share:7.2%} of the first import{verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
