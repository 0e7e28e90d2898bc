"""A year of one heavy user's history on one machine (issue 39): import, size, reads, watch.

Run::

    .venv/bin/python bench/scale.py [--messages 100000 [1000000 ...]] [--huge]
        [--backend sqlite|postgres|both] [--pg-dsn postgresql://postgres@127.0.0.1:5432/postgres]
        [--keep DIR] [--repeat 3] [--watch-seconds 20] [--workers N] [--json FILE]

For each size (default 10^5 and 10^6 messages; ``--huge`` adds 10^7) it writes a Claude Code
home (``bench/scale_home.py``: ~4,000 sessions per 10^6 messages, ~1.1-1.3 KB a message, tool
calls and results with ``toolUseResult``, usage, summaries; files settled months ago) into a
temporary folder, then, through the CLI as a user runs it (``python -m store``, a process,
``HOME`` set to that folder, the default SQLite file under it or ``TRANSCRIPT_STORE_URL`` for
PostgreSQL):

* ``import --yes`` with no paths: wall time, messages/s, MB/s of files, peak memory (the
  child's ``ru_maxrss`` from ``wait4``, the largest process; and the process tree's summed
  proportional set size sampled every 50 ms: a forked worker's pages shared with its parent
  count once), the import's own JSON summary (its counts are checked); SQLite: the peak disk
  use of the database folder meanwhile (the file, its write-ahead log and shared memory,
  sampled every 50 ms: what the import needs free beyond what it leaves);
* the database's size against the files' (SQLite: the file and its WAL; PostgreSQL:
  ``pg_database_size`` less an empty database's), and ``db stats --json``'s per table and
  per index sizes;
* each read command as a process at ``--columns`` (80) columns, median of ``--repeat`` runs
  to a pipe and as many in a pseudo-terminal (``bench/scale_terminal.py``): ``calls search
  --text`` (a phrase in 0.2 % of the results), ``calls search --command 'git push' --limit 0
  --json`` (every hit, streamed; and as a table), ``tools usage`` (and for the home's last
  month), ``sessions list``, ``sessions show ID`` (and ``--last-turns 3``), ``usage daily``,
  ``usage session`` and ``project``, ``search`` (message search: a rare phrase, a common
  word, its tool parts), ``tools usage --by day`` and ``--by model``, ``sessions tree ID``,
  ``aliases list``;
* a read-only open in the library (``TranscriptStore.open(read_only=True)``, and
  ``ReadOnlyStore.open``, to the end of its first query, ``list_sessions(limit=1)``), in a
  fresh process, median of ``--repeat``;
* ``watch`` over the imported home (``S`` = ``--watch-seconds``): after its first pass, its
  CPU seconds (utime + stime from ``/proc``) over S with no pass in them (``--idle`` a day),
  then, in a second process with ``--idle S``, the CPU of the pass its idle timer starts (a
  pass over every unchanged file: one per ``--idle``, 60 s by default), and the steady cost
  of both at the default idle;
* last (SQLite): ``db compact`` (pack what is not packed, VACUUM), its time and the size after
  (skipped when the disk cannot hold the copy VACUUM writes);

beside the floor on the same lines, in this process: ``orjson.loads`` of every line, and a
raw ``sqlite3`` insert of the same rows (one per message, call and result, their JSON as the
file holds it) into a plain three-table schema, one transaction per file; and beside each
read (SQLite) a user's own script asking the same question, a fresh Python process running
plain SQL of its own on the store's file (``bench/scale_floors.py``).

Prints a Markdown table per size and backend, and writes every figure as JSON (``--json``).
``--workers`` is passed to the import as ``TRANSCRIPT_STORE_IMPORT_WORKERS`` (unset: the
import's default).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_floors import floor_ms, floor_statements  # noqa: E402
from scale_home import COMMAND_TEXT, COMMON_WORD, RARE_TEXT, iter_lines, make_home, read_commands  # noqa: E402
from scale_terminal import terminal_seconds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: The terminal width the commands run at (``--columns``; at 200, wider than a terminal's,
#: tables rich narrowed did not show: `usage session` 3.4 s at 80 or 120 columns, 0.24 s).
_COLUMNS = [80]


def _env(home: Path, url: str | None, workers: int | None) -> dict[str, str]:
    # (PYTHONDONTWRITEBYTECODE dropped: the commands run on the bytecode compiled up front,
    # :func:`compiled`, as an installed package's do; without it each run compiles every
    # module it imports again, ~40 % of a read command)
    env = {k: v for k, v in os.environ.items()
           if k not in ("TRANSCRIPT_STORE_URL", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR",
                        "PYTHONDONTWRITEBYTECODE")}
    env["HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT)
    env["COLUMNS"] = str(_COLUMNS[0])
    if url:
        env["TRANSCRIPT_STORE_URL"] = url
    if workers is not None:
        env["TRANSCRIPT_STORE_IMPORT_WORKERS"] = str(workers)
    return env


def compiled() -> None:
    """Compile the package's bytecode once, before anything is timed (pip does it when it
    installs a package; an editable checkout run with ``PYTHONDONTWRITEBYTECODE`` never
    would)."""
    import compileall

    compileall.compile_dir(str(ROOT / "store"), quiet=1)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "store", *args]


class _TreeRss:
    """The summed RSS of a process and its descendants, sampled (Linux /proc); and the
    largest total size the files of ``folder`` reached meanwhile."""

    def __init__(self, pid: int, folder: Path | None = None) -> None:
        self.pid = pid
        self.peak = 0
        self.folder = folder
        self.disk_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _tree(self, pid: int) -> list[int]:
        found = [pid]
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    for child in handle.read().split():
                        found += self._tree(int(child))
        except OSError:
            pass
        return found

    @staticmethod
    def _memory(pid: int) -> int:
        """The process's proportional set size (PSS: a page shared by n processes counts
        1/n, so a forked worker's pages shared with its parent are not counted twice), else
        its resident size."""
        try:
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        try:
            with open(f"/proc/{pid}/statm") as handle:
                return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            return 0

    def _run(self) -> None:
        while not self._stop.is_set():
            total = sum(self._memory(pid) for pid in self._tree(self.pid))
            self.peak = max(self.peak, total)
            if self.folder is not None:
                self.disk_peak = max(self.disk_peak, _folder_bytes(self.folder))
            self._stop.wait(0.05)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _folder_bytes(folder: Path) -> int:
    total = 0
    try:
        for entry in os.scandir(folder):
            try:
                total += entry.stat().st_size
            except OSError:
                pass  # (gone meanwhile)
    except OSError:
        pass  # (not made yet)
    return total


def run_import(home: Path, url: str | None, workers: int | None,
               folder: Path | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    child = subprocess.Popen(_cli("import", "--yes", "--json", "--quiet"),
                             env=_env(home, url, workers), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    tree = _TreeRss(child.pid, folder)
    out_chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: out_chunks.append(child.stdout.read()),  # type: ignore[union-attr]
                              daemon=True)
    reader.start()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    peak_tree = tree.stop()
    reader.join()
    err = child.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"import failed ({child.returncode}): {err[-2000:]}")
    summary = json.loads(b"".join(out_chunks).decode().strip().splitlines()[-1])
    return {"seconds": wall, "maxrss_mb": usage.ru_maxrss / 1024,
            "tree_rss_mb": peak_tree / 2**20, "cpu_s": usage.ru_utime + usage.ru_stime,
            "disk_peak_bytes": tree.disk_peak if folder is not None else None,
            "summary": summary}


def timed_cli(home: Path, url: str | None, args: list[str], repeat: int) -> dict[str, Any]:
    runs = []
    out = b""
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(_cli(*args), env=_env(home, url, None), capture_output=True)
        runs.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"{args} failed: {done.stderr.decode()[-2000:]}")
        out = done.stdout
    terminal = [terminal_seconds(_cli(*args), _env(home, url, None), _COLUMNS[0])
                for _ in range(repeat)]  # (bench/scale_terminal.py: rich's colour, line buffering)
    return {"median_ms": statistics.median(runs) * 1000, "first_ms": runs[0] * 1000,
            "out_lines": out.count(b"\n"), "terminal_ms": statistics.median(terminal) * 1000}


_OPEN = """
import sys, time
started = time.perf_counter()
import store
imported = time.perf_counter()
opening = (store.ReadOnlyStore.open(sys.argv[1]) if sys.argv[2] == "reader"
           else store.TranscriptStore.open(sys.argv[1], read_only=True))
with opening as s:
    opened = time.perf_counter()
    s.list_sessions(limit=1)
    queried = time.perf_counter()
print(imported - started, opened - imported, queried - opened)
"""


def read_only_open(home: Path, url: str, repeat: int, how: str = "store") -> dict[str, float]:
    """A fresh process's ``import store``, open and first query (``how``: ``store`` for
    ``TranscriptStore.open(read_only=True)``, ``reader`` for ``ReadOnlyStore.open``)."""
    runs = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", _OPEN, url, how],
                              env=_env(home, None, None),
                              capture_output=True, check=True, text=True)
        runs.append([float(x) for x in done.stdout.split()])
    return {"import_ms": statistics.median(r[0] for r in runs) * 1000,
            "open_ms": statistics.median(r[1] for r in runs) * 1000,
            "first_query_ms": statistics.median(r[2] for r in runs) * 1000,
            "open_to_first_query_ms": statistics.median(r[1] + r[2] for r in runs) * 1000}


def _cpu(pid: int) -> float:
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _settled(pid: int, quiet: float = 1.5, cap: float = 600.0) -> float:
    """Wait until the process has used no CPU for ``quiet`` seconds (a pass is over); its
    CPU seconds then."""
    started = time.monotonic()
    last, still = _cpu(pid), time.monotonic()
    while time.monotonic() - started < cap:
        time.sleep(0.25)
        now = _cpu(pid)
        if now != last:
            last, still = now, time.monotonic()
        elif time.monotonic() - still >= quiet:
            break
    return last


def _watch(home: Path, url: str | None, idle: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen(_cli("watch", "--idle", f"{idle:g}"), env=_env(home, url, None),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _stop(child: subprocess.Popen[bytes]) -> None:
    child.terminate()
    child.wait(timeout=30)


def watch_idle(home: Path, url: str | None, seconds: float) -> dict[str, float]:
    """``watch`` over the imported home, as two processes: one whose idle timer never fires
    in the window (``--idle`` a day): after its first pass (over every file, unchanged), its
    CPU over SECONDS, with no pass in it; one with ``--idle SECONDS``: after its first pass,
    the CPU of the next, which its idle timer starts (one per ``--idle``, 60 s by default,
    and one per burst of changes). The steady cost at the default idle is both together.
    (Measured in one process, the timer's pass, which follows the first pass's start by
    ``--idle``, fell inside the window and was counted as idle time.)"""
    child = _watch(home, url, 86400)
    try:
        time.sleep(2.0)
        first = _settled(child.pid)
        time.sleep(seconds)
        between = _cpu(child.pid) - first
    finally:
        _stop(child)
    child = _watch(home, url, seconds)
    try:
        time.sleep(2.0)
        settled = _settled(child.pid)
        started = time.monotonic()
        while _cpu(child.pid) == settled and time.monotonic() - started < 3 * seconds:
            time.sleep(0.1)  # (until the idle timer's pass begins)
        passed = _settled(child.pid) - settled
    finally:
        _stop(child)
    per_30s = between * 30 / seconds
    return {"seconds": seconds, "first_pass_cpu_s": first, "cpu_s": between,
            "cpu_s_per_30s": per_30s, "pass_cpu_s": passed,
            "steady_cpu_s_per_30s_at_60s_idle": per_30s + passed * 30 / 60}


def floor(home: Path) -> dict[str, float]:
    """orjson over every line; a raw sqlite3 insert of the same rows in a plain schema."""
    files = iter_lines(home)
    started = time.perf_counter()
    lines = 0
    size = 0
    for path in files:
        data = path.read_bytes()
        size += len(data)
        for line in data.splitlines():
            orjson.loads(line)
            lines += 1
    decode = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="scale-floor-") as tmp:
        db = sqlite3.connect(Path(tmp) / "raw.sqlite", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(
            "CREATE TABLE messages (session_id TEXT, position INTEGER, role TEXT, body TEXT,"
            " PRIMARY KEY (session_id, position));"
            "CREATE TABLE calls (session_id TEXT, position INTEGER, idx INTEGER, call_id TEXT,"
            " name TEXT, arguments TEXT, PRIMARY KEY (session_id, position, idx));"
            "CREATE TABLE results (session_id TEXT, position INTEGER, idx INTEGER,"
            " call_id TEXT, content TEXT, PRIMARY KEY (session_id, position, idx));")
        started = time.perf_counter()
        rows = 0
        for path in files:
            messages, calls, results = [], [], []
            sid = path.stem
            for position, line in enumerate(path.read_bytes().splitlines()):
                record = orjson.loads(line)
                inner = record.get("message")
                if not isinstance(inner, dict):
                    continue
                messages.append((sid, position, inner.get("role"), line.decode()))
                content = inner.get("content")
                if isinstance(content, list):
                    for index, block in enumerate(content):
                        if block.get("type") == "tool_use":
                            calls.append((sid, position, index, block.get("id"),
                                          block.get("name"),
                                          orjson.dumps(block.get("input")).decode()))
                        elif block.get("type") == "tool_result":
                            results.append((sid, position, index, block.get("tool_use_id"),
                                            orjson.dumps(block.get("content")).decode()))
            db.execute("BEGIN")
            db.executemany("INSERT INTO messages VALUES (?, ?, ?, ?)", messages)
            db.executemany("INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?)", calls)
            db.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?)", results)
            db.execute("COMMIT")
            rows += len(messages) + len(calls) + len(results)
        insert = time.perf_counter() - started
        db.close()
    return {"lines": lines, "decode_s": decode, "decode_lines_per_s": lines / decode,
            "decode_mb_per_s": size / 2**20 / decode, "raw_insert_s": insert,
            "raw_rows": rows, "raw_rows_per_s": rows / insert,
            "raw_lines_per_s": lines / insert}


def _pg_url(dsn: str) -> tuple[str, str]:
    import psycopg

    name = f"bench_scale_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    base = dsn.replace("postgresql://", "postgresql+psycopg://").rsplit("/", 1)[0]
    return f"{base}/{name}", name


def _pg_size(dsn: str, name: str) -> int:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        size = conn.execute("SELECT pg_database_size(%s)", (name,)).fetchone()
        empty = conn.execute("SELECT pg_database_size('template1')").fetchone()
    assert size is not None and empty is not None
    return int(size[0]) - int(empty[0])


def _pg_drop(dsn: str, name: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _sqlite_bytes(path: Path) -> int:
    """The SQLite file's size with its WAL and shared memory."""
    return sum(p.stat().st_size for p in path.parent.iterdir() if p.name.startswith(path.name))


def one(home: Path, stats: Any, backend: str, args: argparse.Namespace) -> dict[str, Any]:
    pg_name = None
    if backend == "postgres":
        url, pg_name = _pg_url(args.pg_dsn)
    else:
        url = None  # the default: an SQLite file in HOME's data directory
        shutil.rmtree(home / ".local", ignore_errors=True)
    sqlite_file = home / ".local" / "share" / "transcript-store" / "transcripts.sqlite"
    library_url = url or f"sqlite:///{sqlite_file}"
    try:
        imp = run_import(home, url, args.workers,
                         sqlite_file.parent if backend == "sqlite" else None)
        added = imp["summary"]["messages_added"]
        if added != stats.messages:
            raise SystemExit(f"the import stored {added} messages, the home holds "
                             f"{stats.messages}")
        if backend == "postgres":
            db_bytes = _pg_size(args.pg_dsn, pg_name)  # type: ignore[arg-type]
        else:
            db_bytes = _sqlite_bytes(sqlite_file)
        size = subprocess.run(_cli("db", "stats", "--json"), env=_env(home, url, None),
                              capture_output=True, text=True)
        breakdown = [json.loads(line) for line in size.stdout.splitlines() if line.strip()] \
            if size.returncode == 0 else [{"error": size.stderr.strip()[-300:]}]
        listed = subprocess.run(_cli("sessions", "list", "--json", "--limit", "1"),
                                env=_env(home, url, None), capture_output=True, text=True,
                                check=True)
        sid = json.loads(listed.stdout.splitlines()[0])["session_id"]
        reads = {}
        floors = floor_statements(RARE_TEXT, COMMAND_TEXT, COMMON_WORD, sid) \
            if backend == "sqlite" else {}
        for label, command in read_commands(sid):
            reads[label] = timed_cli(home, url, command, args.repeat)
            if label in floors:  # (bench/scale_floors.py: a script's plain SQL)
                reads[label]["floor"] = floor_ms(sqlite_file, floors[label], args.repeat)
        opened = read_only_open(home, library_url, args.repeat)
        reader = read_only_open(home, library_url, args.repeat, "reader")
        watch = watch_idle(home, url, args.watch_seconds) if args.watch_seconds > 0 else None
        compact = None
        free = shutil.disk_usage(sqlite_file.parent).free if backend == "sqlite" else 0
        if backend == "sqlite" and free < 1.2 * db_bytes:  # (VACUUM writes a whole copy)
            print(f"db compact skipped: {_mb(free)} free, the VACUUM of {_mb(db_bytes)} "
                  "needs as much", file=sys.stderr)
        elif backend == "sqlite":  # last: it rewrites the file (PostgreSQL keeps text)
            started = time.perf_counter()
            subprocess.run(_cli("db", "compact"), env=_env(home, url, None),
                           capture_output=True, text=True, check=True)
            after = _sqlite_bytes(sqlite_file)
            compact = {"seconds": time.perf_counter() - started, "db_bytes": after,
                       "ratio_to_files": after / stats.bytes}
        return {"backend": backend, "import": imp,
                "messages_per_s": stats.messages / imp["seconds"],
                "mb_per_s": stats.bytes / 2**20 / imp["seconds"],
                "db_bytes": db_bytes, "ratio_to_files": db_bytes / stats.bytes,
                "db_stats": breakdown, "reads": reads, "read_only_open": opened,
                "read_only_reader": reader,
                "watch_idle": watch, "compact": compact}
    finally:
        if pg_name is not None and not args.keep:
            _pg_drop(args.pg_dsn, pg_name)


def _mb(value: float) -> str:
    return f"{value / 2**20:,.1f} MB"


def table(size: dict[str, Any]) -> str:
    home = size["home"]
    fl = size["floor"]
    rows = [f"### {home['messages']:,} messages: {home['files']:,} files, "
            f"{_mb(home['bytes'])} ({home['bytes'] / home['messages']:,.0f} B a message)", "",
            "| what | " + " | ".join(r["backend"] for r in size["runs"]) + " | the floor |",
            "|---|" + "---|" * (len(size["runs"]) + 1)]

    def row(label: str, cells: list[str], floor_cell: str = "-") -> None:
        rows.append(f"| {label} | " + " | ".join(cells) + f" | {floor_cell} |")

    runs = size["runs"]
    row("import (no paths)", [f"{r['import']['seconds']:.1f} s: **{r['messages_per_s']:,.0f} "
                              f"messages/s**, {r['mb_per_s']:.1f} MB/s" for r in runs],
        f"orjson {fl['decode_lines_per_s']:,.0f} lines/s ({fl['decode_mb_per_s']:.0f} MB/s); "
        f"raw sqlite3 {fl['raw_lines_per_s']:,.0f} lines/s ({fl['raw_rows_per_s']:,.0f} rows/s)"
        if fl["decode_lines_per_s"] else "- (`--no-floor`)")
    row("import CPU (all processes)", [f"{r['import']['cpu_s']:.1f} s" for r in runs])
    row("peak memory (largest process / tree)",
        [f"{r['import']['maxrss_mb']:.0f} MB / {r['import']['tree_rss_mb']:.0f} MB"
         for r in runs])
    row("database size", [f"{_mb(r['db_bytes'])} ({r['ratio_to_files']:.2f}x the files)"
                          for r in runs], "the files")
    row("peak disk during the import (file, WAL, shm)",
        [_mb(r["import"]["disk_peak_bytes"]) if r["import"].get("disk_peak_bytes") else "-"
         for r in runs])
    row("after `db compact` (VACUUM)",
        [f"{_mb(r['compact']['db_bytes'])} ({r['compact']['ratio_to_files']:.2f}x the files, "
         f"{r['compact']['seconds']:.1f} s)" if r["compact"] else "-" for r in runs])
    for label in runs[0]["reads"]:
        floor = next((r["reads"][label]["floor"] for r in runs
                      if "floor" in r["reads"][label]), None)
        row(f"`{label}`", [f"{r['reads'][label]['median_ms']:.0f} ms "
                           f"({r['reads'][label]['out_lines']} lines; in a terminal "
                           f"{r['reads'][label].get('terminal_ms', 0):.0f} ms)" for r in runs],
            f"{floor['median_ms']:.0f} ms (plain SQL, {floor['out_lines']} lines)" if floor
            else "-")
    row("read-only open to first query (library)",
        [f"{r['read_only_open']['open_to_first_query_ms']:.0f} ms "
         f"(open {r['read_only_open']['open_ms']:.0f} ms; import store "
         f"{r['read_only_open']['import_ms']:.0f} ms)" for r in runs])
    row("`ReadOnlyStore.open` to first query (library)",
        [f"{r['read_only_reader']['open_to_first_query_ms']:.0f} ms "
         f"(open {r['read_only_reader']['open_ms']:.0f} ms)" for r in runs])
    if runs[0]["watch_idle"] is not None:
        row("`watch` idle between passes", [f"{r['watch_idle']['cpu_s_per_30s']:.2f} CPU s "
                                            "per 30 s" for r in runs])
        row("`watch` pass over unchanged files (one per `--idle`, 60 s)",
            [f"{r['watch_idle']['pass_cpu_s']:.2f} CPU s; "
             f"{r['watch_idle']['steady_cpu_s_per_30s_at_60s_idle']:.2f} CPU s per 30 s "
             "with the passes" for r in runs])
    for r in runs:
        stats = [s for s in r["db_stats"] if "bytes" in s]
        if not stats:
            continue
        rows += ["", f"{r['backend']}: the largest tables and indexes (`db stats`)", "",
                 "| object | kind | table | size |", "|---|---|---|---|"]
        for entry in sorted(stats, key=lambda s: -s["bytes"])[:12]:
            rows.append(f"| {entry['name']} | {entry['kind']} | {entry.get('table') or ''} | "
                        f"{_mb(entry['bytes'])} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--huge", action="store_true", help="also 10^7 messages")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--pg-dsn", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--keep", type=Path, help="generate (or reuse) the homes here")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--watch-seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--no-floor", action="store_true")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--columns", type=int, default=80,
                        help="the terminal width the read commands run at (default 80, a "
                             "terminal's default; the tables are narrowed to it)")
    args = parser.parse_args()
    _COLUMNS[0] = args.columns
    compiled()
    sizes = [*args.messages, *([10_000_000] if args.huge else [])]
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    results = []
    try:
        for messages in sizes:
            home = scratch / f"home-{messages}"
            marker = home / "stats.json"
            if marker.exists():
                from scale_home import HomeStats
                stats = HomeStats(**json.loads(marker.read_text()))
            else:
                shutil.rmtree(home, ignore_errors=True)
                started = time.perf_counter()
                stats = make_home(home, messages)
                marker.write_text(json.dumps(stats.__dict__))
                print(f"generated {messages:,} messages in {time.perf_counter() - started:.0f} s",
                      file=sys.stderr)
            entry: dict[str, Any] = {"home": stats.__dict__, "columns": args.columns,
                                     "floor": floor(home) if not args.no_floor else None,
                                     "runs": []}
            for backend in backends:
                entry["runs"].append(one(home, stats, backend, args))
            if entry["floor"] is None:
                entry["floor"] = {"decode_lines_per_s": 0, "decode_mb_per_s": 0,
                                  "raw_lines_per_s": 0, "raw_rows_per_s": 0}
            results.append(entry)
            print(table(entry) + "\n", flush=True)
    finally:
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
