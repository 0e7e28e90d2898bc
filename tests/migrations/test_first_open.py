"""Issue 12, item 7: opening a new database at the same time from several threads or
processes creates it once, and every opener gets a working store (both backends).

Before: four threads opening four new SQLite files all failed ("table sessions already
exists", ``KeyError: 'script'``: Alembic's command API is not thread-safe); three processes
opening one new PostgreSQL database: two failed on ``pg_type_typname_nsp_index``.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from store import StoreError, TranscriptStore
from store.db.schema import migrate
from store.db.schema.engine import create_store_engine

pytest.importorskip("agents")

from store.integrations.openai_agents import TranscriptStoreSession  # noqa: E402


def open_and_append(url: str, sid: str, barrier: threading.Barrier) -> tuple[str, Any]:
    barrier.wait()
    try:
        with TranscriptStore.open(url) as store:
            store.append(sid, [{"role": "user", "content": sid}])
            return ("ok", len(store.load(sid)))
    except BaseException as exc:  # every failure is a finding
        return (type(exc).__name__, str(exc))


def run_threads(targets: list[tuple[str, str]]) -> list[tuple[str, Any]]:
    barrier = threading.Barrier(len(targets))
    results: list[tuple[str, Any]] = [("not run", None)] * len(targets)

    def work(i: int, url: str, sid: str) -> None:
        results[i] = open_and_append(url, sid, barrier)

    threads = [threading.Thread(target=work, args=(i, url, sid))
               for i, (url, sid) in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return results


def test_four_threads_open_four_new_sqlite_files(tmp_path: Path) -> None:
    urls = [f"sqlite:///{tmp_path / f'new{i}' / 'db.sqlite'}" for i in range(4)]
    results = run_threads([(url, f"s{i}") for i, url in enumerate(urls)])
    assert results == [("ok", 1)] * 4
    for url in urls:
        engine = create_store_engine(url, read_only=True)
        try:
            assert migrate.current(engine) == migrate.head()
        finally:
            engine.dispose()


def test_threads_open_one_new_database(new_url: str) -> None:
    results = run_threads([(new_url, f"s{i}") for i in range(4)])
    assert results == [("ok", 1)] * 4
    with TranscriptStore.open(new_url, read_only=True) as store:
        assert sorted(s.session_id for s in store.list_sessions()) == ["s0", "s1", "s2", "s3"]


CHILD = textwrap.dedent("""
    import sys, time
    from store import TranscriptStore
    url, sid, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    time.sleep(max(0.0, start - time.time()))
    with TranscriptStore.open(url) as store:
        store.append(sid, [{"role": "user", "content": sid}])
    print("ok")
""")


def test_processes_open_one_new_database(new_url: str) -> None:
    start = time.time() + 2.0  # every child imports first, then all open at once
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, new_url, f"p{i}", repr(start)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(3)]
    outcomes = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err[-1500:] for _, err in outcomes]
    with TranscriptStore.open(new_url, read_only=True) as store:
        assert sorted(s.session_id for s in store.list_sessions()) == ["p0", "p1", "p2"]


def test_agents_sessions_from_url_first_access_at_once(new_url: str) -> None:
    """The Agents SDK's ``test_add_items_concurrent_first_access_across_from_url_sessions``,
    on this package's session: two sessions on one new database, first writes together."""
    async def run() -> None:
        a = TranscriptStoreSession("from_url_a", new_url)
        b = TranscriptStoreSession("from_url_b", new_url)
        try:
            results = await asyncio.gather(
                a.add_items([{"role": "user", "content": "one"}]),
                b.add_items([{"role": "user", "content": "two"}]),
                return_exceptions=True)
            assert [r for r in results if isinstance(r, BaseException)] == []
            assert [i.get("content") for i in await a.get_items()] == ["one"]
            assert [i.get("content") for i in await b.get_items()] == ["two"]
        finally:
            a.close()
            b.close()

    asyncio.run(run())


def test_agents_sessions_first_access_across_event_loops(new_url: str) -> None:
    """The SDK's ``..._cross_loop`` variant: each session in its own thread and event loop."""
    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    def worker(sid: str, content: str) -> None:
        async def run() -> Any:
            session = TranscriptStoreSession(sid, new_url)
            barrier.wait()
            try:
                await session.add_items([{"role": "user", "content": content}])
                return await session.get_items()
            finally:
                session.close()
        try:
            results[sid] = ("ok", [i.get("content") for i in asyncio.run(run())])
        except BaseException as exc:
            results[sid] = (type(exc).__name__, str(exc))

    threads = [threading.Thread(target=worker, args=args)
               for args in (("loop_a", "one"), ("loop_b", "two"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert results == {"loop_a": ("ok", ["one"]), "loop_b": ("ok", ["two"])}


def test_a_failed_open_is_a_store_error(tmp_path: Path) -> None:
    folder = tmp_path / "file-not-folder"
    folder.write_text("x")
    with pytest.raises(StoreError):
        TranscriptStore.open(f"sqlite:///{folder / 'db.sqlite'}")
