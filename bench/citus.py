"""The store on a Citus cluster next to one PostgreSQL server: appends and audits.

Run::

    .venv/bin/python bench/citus.py --citus-url postgresql+psycopg://postgres@127.0.0.1:9700/ts
        [--pg-dsn postgresql+psycopg://postgres@127.0.0.1:5432/postgres] [--calls 200000]
        [--workers 4] [--shard-count 32] [--stress-seconds 20] [--repeat 3] [--only citus|single]

For each target, the Citus coordinator database named by ``--citus-url`` (its workers
registered; **the store's tables in it are dropped first**, then ``db upgrade`` and
``db distribute --shard-count``) and a scratch database ``bench_citus_single_<pid>`` on the
single server of ``--pg-dsn`` (dropped afterwards):

1. ``bench/audit.py``'s build: ``--calls`` tool calls appended by ``--workers`` processes
   (one append of ~100 calls per session), then its timings of the usage summary and the four
   searches (first run and median of ``--repeat``) with their plans;
2. ``bench/stress.py`` for ``--stress-seconds`` with the same number of processes: small
   appends (1-3 messages) to a shared session and to each worker's own, checked for loss.

The load average is printed before each step: on a shared machine it is part of the result.
On one machine a cluster cannot be faster than one server (the same cores run the three
nodes plus the coordinator's hop); the point is that everything works and how the cost splits.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, text

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import audit  # noqa: E402

from store import distribute_database, upgrade_database  # noqa: E402
from store.db.schema.tables import metadata  # noqa: E402

DEFAULT_PG_DSN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"


def reset_citus(url: str, shard_count: int) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            names = ", ".join([t.name for t in metadata.sorted_tables] + ["alembic_version"])
            conn.execute(text(f"DROP TABLE IF EXISTS {names} CASCADE"))
    finally:
        engine.dispose()
    upgrade_database(url)
    report = distribute_database(url, shard_count=shard_count)
    print(report.state.describe(), flush=True)


def run_target(label: str, url: str, args: argparse.Namespace) -> None:
    print(f"\n==== {label}: {url}\n{load()}", flush=True)
    audit.build(url, args.calls, args.workers)
    print(load(), flush=True)
    audit.measure(url, args.repeat)
    print(f"\n{load()}\nstress: {args.workers} processes, {args.stress_seconds} s", flush=True)
    subprocess.run([sys.executable, str(BENCH / "stress.py"), "--url", url, "--processes",
                    str(args.workers), "--seconds", str(args.stress_seconds)], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--citus-url", required=True)
    parser.add_argument("--pg-dsn", default=DEFAULT_PG_DSN)
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--shard-count", type=int, default=32)
    parser.add_argument("--stress-seconds", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=("citus", "single"))
    args = parser.parse_args()
    if args.only != "single":
        reset_citus(args.citus_url, args.shard_count)
        run_target(f"Citus ({args.shard_count} shards)", args.citus_url, args)
    if args.only != "citus":
        name = f"bench_citus_single_{os.getpid()}"
        admin = create_engine(args.pg_dsn, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            run_target("one PostgreSQL server", args.pg_dsn.rsplit("/", 1)[0] + f"/{name}", args)
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()


if __name__ == "__main__":
    main()
