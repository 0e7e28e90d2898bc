"""The audit queries on a big store: build one, time the usage summary and three searches.

Run::

    .venv/bin/python bench/audit.py [--backend sqlite|postgres] [--calls 1000000]
        [--workers 2] [--db PATH_OR_URL] [--keep] [--reuse] [--repeat 3]
        [--pg-dsn postgresql://postgres@127.0.0.1:5432/postgres] [--tools 1000]

Builds a store of ``--calls`` tool calls through ``TranscriptStore.append`` (one append per
session, ~100 calls each; ``--workers`` processes append different sessions at once: on
SQLite they take turns at the write lock, the other one preparing its next batch), then runs
``ANALYZE`` and times (median of ``--repeat`` runs, and the first run):

* the usage summary (``tool_usage``);
* a tool filter and a time range (``search_calls(CallQuery(tool="bash", since=, until=))``,
  one week out of half a year; the newest 50);
* an argument condition (``command`` contains ``TODO(perf)``, in ~0.5 % of bash calls);
* a full-text search (``segfault at 0x7331``, in ~0.2 % of the results);
* an argument equality (``path`` equals one file path, ~0.06 % of the calls);

the two argument views (``--command`` under ``--tool bash``; ``--path`` ignoring case), then
times ``tool_usage`` against two hand-written GROUP BYs over the same rows through the raw
driver (``sqlite3`` / ``psycopg``): a bare ``count(*)`` per raw name, and the figures a usage
summary needs (calls, distinct sessions, first and last seen), and prints the ratios; then the
``EXPLAIN`` plan of each. The sessions are generated deterministically
(``bench/workload.py``'s style, smaller texts: arguments ~40-400 B, results ~40-700 B; 1 % of
the calls with invalid arguments, 4 % error results, 2 % without a result, 3 % under the
legacy name ``run_shell_command``, aliased to ``bash``), spread over 180 days by their
messages' own timestamps.

SQLite: the database is a file in a temporary directory (``--db`` to choose it, ``--keep``
to keep it, ``--reuse`` to time an existing one without building). PostgreSQL: a scratch
database ``bench_audit_<pid>`` is created and dropped (``--keep`` keeps it; ``--db URL``
names an existing one to fill or, with ``--reuse``, to time).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store import (  # noqa: E402
    ArgumentCondition,
    CallQuery,
    Message,
    TextPart,
    ToolResult,
    TranscriptStore,
    ViewCondition,
    search_calls,
    tool_usage,
)
from store.audit.plans import explain_search, explain_usage  # noqa: E402
from store.core.model import make_tool_call  # noqa: E402

DEFAULT_PG_DSN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
SEED = 20261130
START = datetime(2026, 5, 1, tzinfo=UTC)
DAYS = 180
CALLS_PER_SESSION = 100
TOOLS = (("bash", 30), ("read_file", 25), ("edit_file", 15), ("grep", 15), ("web_search", 9),
         ("run_shell_command", 3), ("Read", 3))
RARE_ARGUMENT = "TODO(perf)"
RARE_RESULT = "segfault at 0x7331"
WORDS = (
    "the", "a", "of", "to", "and", "in", "is", "for", "return", "self", "value", "def", "class",
    "import", "from", "None", "True", "if", "else", "with", "path", "config", "session",
    "store", "test", "assert", "error", "fix", "bug", "update", "build", "cache", "index",
    "query", "result", "message", "call", "tool", "render", "--verbose", "-rn", "|", "x = 1",
    "print(x)", "async", "await", '"quoted"', "C:\\Users\\dev", "tab\there", "café", "Größe",
    "日本語", "🙂", "naïve", "Übersicht", "http://example.com/a?b=c",
)


# -- the workload -------------------------------------------------------------------------------


def _words(rng: random.Random, low: int, high: int) -> str:
    size = int(low * (high / low) ** rng.random())
    return " ".join(rng.choices(WORDS, k=max(1, size // 5)))[:size]


def _arguments(rng: random.Random, tool: str) -> dict[str, Any]:
    path = f"src/{rng.choice(('store', 'app', 'lib', 'docs'))}/module_{rng.randrange(500)}.py"
    if tool in ("bash", "run_shell_command"):
        command = _words(rng, 20, 300)
        if rng.random() < 0.005:
            command = f"grep -rn '{RARE_ARGUMENT}' src && {command}"
        return {"command": command, "timeout": rng.choice((30, 60, 120))}
    if tool in ("read_file", "Read"):
        return {"path": path, "offset": rng.randrange(2000), "limit": 400}
    if tool == "edit_file":
        return {"path": path, "old_string": _words(rng, 10, 150),
                "new_string": _words(rng, 10, 250)}
    if tool == "grep":
        return {"pattern": _words(rng, 5, 40), "path": "src/"}
    if tool.startswith("mcp__"):
        return {"input": _words(rng, 10, 80)}
    return {"query": _words(rng, 10, 120), "max_results": rng.randint(3, 10)}


#: Distinct MCP tools (``mcp__server<k>__tool<j>``) that 20 % of the calls go to (--tools).
MCP_TOOLS = int(os.environ.get("BENCH_AUDIT_TOOLS", "0"))


def session_messages(number: int, calls: int, seed: int = SEED) -> tuple[str, list[Message]]:
    """One generated session of about ``calls`` calls: its id and messages."""
    import orjson

    rng = random.Random(seed * 1_000_003 + number)
    names = [name for name, _ in TOOLS]
    weights = [weight for _, weight in TOOLS]
    if MCP_TOOLS:
        names += [f"mcp__server{k % 40}__tool{k}" for k in range(MCP_TOOLS)]
        weights += [25 / MCP_TOOLS] * MCP_TOOLS
    clock = START + timedelta(seconds=rng.uniform(0, DAYS * 86400))
    out: list[Message] = []
    made = 0
    turn = 0

    def stamp() -> dict[str, str]:
        nonlocal clock
        clock += timedelta(seconds=rng.uniform(1, 90))
        return {"timestamp": clock.isoformat()}

    while made < calls:
        out.append(Message("user", (TextPart(_words(rng, 20, 300)),), metadata=stamp()))
        batch = []
        for index in range(min(rng.choice((1, 1, 2, 3)), calls - made)):
            tool = rng.choices(names, weights)[0]
            arguments = orjson.dumps(_arguments(rng, tool)).decode()
            if rng.random() < 0.01:
                arguments = arguments[: len(arguments) // 2]  # cut short: invalid JSON
            call_id = f"call_{number}_{turn}_{index}"
            batch.append(make_tool_call(call_id, tool, arguments))
        made += len(batch)
        turn += 1
        out.append(Message("assistant", tuple(batch), metadata=stamp()))
        for call in batch:
            if rng.random() < 0.02:
                continue  # no result
            is_error = rng.random() < 0.04
            body = _words(rng, 40, 700)
            if rng.random() < 0.002:
                body = f"{body}\n{RARE_RESULT} (core dumped)"
            out.append(Message("tool", (ToolResult(call.id, body, is_error),),
                               metadata=stamp()))
    return f"audit-{number:07d}", out


# -- building -----------------------------------------------------------------------------------


def _fill(args: tuple[str, int, int, int, int]) -> int:
    url, first, count, calls, step = args
    done = 0
    with TranscriptStore.open(url) as store:
        for number in range(first, first + count * step, step):
            session_id, batch = session_messages(number, calls)
            store.append(session_id, batch)
            done += sum(len(m.tool_calls) for m in batch)
    return done


def build(url: str, total_calls: int, workers: int) -> float:
    """Fill the store at ``url`` with ``total_calls`` calls; returns the seconds it took."""
    sessions = max(1, total_calls // CALLS_PER_SESSION)
    TranscriptStore.open(url).close()  # create the schema once, before the workers
    began = time.perf_counter()
    chunks = [(url, worker, len(range(worker, sessions, workers)), CALLS_PER_SESSION, workers)
              for worker in range(workers)]
    if workers == 1:
        made = _fill(chunks[0])
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            made = sum(pool.map(_fill, chunks))
    elapsed = time.perf_counter() - began
    print(f"built {made} calls in {sessions} sessions in {elapsed:.1f} s "
          f"({made / elapsed:,.0f} calls/s)", flush=True)
    return elapsed


@contextmanager
def database(backend: str, args: argparse.Namespace) -> Iterator[str]:
    if backend == "sqlite":
        if args.db:
            yield f"sqlite:///{Path(args.db).resolve()}"
            return
        folder = tempfile.mkdtemp(prefix="bench_audit_")
        path = Path(folder) / "audit.sqlite"
        try:
            yield f"sqlite:///{path}"
        finally:
            if args.keep:
                print(f"kept {path}")
            else:
                for leftover in Path(folder).iterdir():
                    leftover.unlink()
                os.rmdir(folder)
        return
    if args.db:
        yield args.db
        return
    name = f"bench_audit_{os.getpid()}"
    admin = create_engine(args.pg_dsn, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield args.pg_dsn.rsplit("/", 1)[0] + f"/{name}"
    finally:
        if args.keep:
            print(f"kept database {name}")
        else:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


# -- timing -------------------------------------------------------------------------------------


def _timed(function: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    times = []
    result = None
    for _ in range(repeat):
        began = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - began)
    return times[0], statistics.median(times), result


def measure(url: str, repeat: int) -> None:
    with TranscriptStore.open(url) as store:
        with store.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
        if store.dialect == "postgresql":  # index-only scans need the visibility map
            with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM ANALYZE")
        calls = store.count_calls()
        size = _size(store)
        print(f"\n{store.dialect}: {calls:,} calls, database {size / 1e9:.2f} GB\n", flush=True)
        week = START + timedelta(days=100)
        cases: list[tuple[str, Callable[[], Any], Callable[[], str]]] = [
            ("usage summary (tool_usage)", lambda: tool_usage(store),
             lambda: explain_usage(store)),
        ]
        searches = [
            ("tool filter + time range (bash, 7 of 180 days)",
             CallQuery(tool="bash", since=week, until=week + timedelta(days=7))),
            (f"argument contains (command ~ {RARE_ARGUMENT!r})",
             CallQuery(where=(ArgumentCondition("command", "contains", RARE_ARGUMENT),))),
            (f"full text ({RARE_RESULT!r})", CallQuery(text=RARE_RESULT)),
            ("argument eq (path == src/store/module_7.py)",
             CallQuery(where=(ArgumentCondition("path", "eq", "src/store/module_7.py"),))),
            (f"tool + command view (bash, command ~ {RARE_ARGUMENT!r})",
             CallQuery(tool="bash", views=(ViewCondition("command", RARE_ARGUMENT),))),
            ("path view, ignoring case (path ~ SRC/STORE/MODULE_7.)",
             CallQuery(views=(ViewCondition("path", "SRC/STORE/MODULE_7.", "icontains"),))),
        ]
        for label, query in searches:
            cases.append((label, lambda q=query: search_calls(store, q),  # type: ignore[misc]
                          lambda q=query: explain_search(store, q)))  # type: ignore[misc]
        print(f"{'query':<52}{'first':>10}{'median':>10}  rows")
        print("-" * 80)
        plans = []
        for label, run, plan in cases:
            first, median, result = _timed(run, repeat)
            print(f"{label:<52}{first * 1000:>8.1f}ms{median * 1000:>8.1f}ms  {len(result)}",
                  flush=True)
            plans.append((label, plan()))
        print("\nusage against hand-written SQL (raw driver, same rows; timed alternately, "
              "medians):")
        for label, sql in BASELINES.items():
            ours: list[float] = []
            theirs: list[float] = []
            rows: list[Any] = []
            for _ in range(max(repeat, 3)):  # alternate, so that load swings hit both alike
                ours.append(_timed(lambda: tool_usage(store, limit=None), 1)[0])
                began = time.perf_counter()
                rows = _raw(url, sql)
                theirs.append(time.perf_counter() - began)
            usage_median, median = statistics.median(ours), statistics.median(theirs)
            print(f"  {label:<58}{median * 1000:>8.1f}ms  {len(rows)} rows; tool_usage "
                  f"{usage_median * 1000:.1f}ms = {usage_median / median:.2f}x", flush=True)
        usage = tool_usage(store)
        print("\nusage:")
        for row in usage:
            print(f"  {row.name:<12} calls {row.calls:>8,} sessions {row.sessions:>6,} invalid "
                  f"{row.invalid_calls:>6,} errors {row.error_results:>6,} no result "
                  f"{row.calls_without_result:>6,} raw {','.join(row.raw_names)}")
        for label, text_plan in plans:
            print(f"\nplan: {label}\n{text_plan}")


#: The baselines of the usage summary: plain GROUP BYs over the same rows, by hand.
BASELINES = {
    "GROUP BY raw_name: count(*)":
        "SELECT raw_name, count(*) FROM tool_calls GROUP BY raw_name",
    "GROUP BY raw_name: calls, sessions, first/last seen (join)":
        "SELECT c.raw_name, count(*), count(DISTINCT c.session_id), min(m.created_at), "
        "max(m.created_at) FROM tool_calls c JOIN messages m ON m.session_id = c.session_id "
        "AND m.position = c.position GROUP BY c.raw_name",
}


def _raw(url: str, sql: str) -> list[Any]:
    """``sql`` through the raw driver (sqlite3 / psycopg), no SQLAlchemy."""
    if url.startswith("sqlite"):
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        conn.execute("SET jit = off")
        return conn.execute(sql).fetchall()


def _size(store: TranscriptStore) -> int:
    with store.engine.connect() as conn:
        if store.dialect == "postgresql":
            citus = conn.exec_driver_sql(
                "SELECT 1 FROM pg_extension WHERE extname = 'citus'").first()
            if citus:  # the shards on the workers, not the coordinator's own database
                return int(conn.exec_driver_sql(
                    "SELECT sum(citus_total_relation_size(logicalrelid)) FROM pg_dist_partition"
                ).scalar_one())
            return int(conn.exec_driver_sql("SELECT pg_database_size(current_database())")
                       .scalar_one())
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar_one()
        page_size = conn.exec_driver_sql("PRAGMA page_size").scalar_one()
        return int(pages) * int(page_size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db", help="SQLite path or PostgreSQL URL to use")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument("--reuse", action="store_true", help="time an existing database")
    parser.add_argument("--pg-dsn", default=DEFAULT_PG_DSN)
    parser.add_argument("--tools", type=int, default=0,
                        help="distinct MCP tools taking 20%% of the calls (e.g. 1000)")
    args = parser.parse_args()
    if args.tools:  # the workers (spawned) read it from the environment
        os.environ["BENCH_AUDIT_TOOLS"] = str(args.tools)
        global MCP_TOOLS
        MCP_TOOLS = args.tools
    with database(args.backend, args) as url:
        if not args.reuse:
            build(url, args.calls, args.workers)
        measure(url, args.repeat)


if __name__ == "__main__":
    main()
