"""Round trips to PostgreSQL per operation, and what they cost one network hop away.

Run::

    .venv/bin/python bench/roundtrips.py [--delay-ms 1] [--ops 50]
        [--pg-dsn postgresql://postgres@127.0.0.1:5432/postgres]

A real deployment keeps its database one network hop away, where every round trip costs the
hop's latency twice. This puts a TCP proxy (:class:`DelayProxy`, loopback only) in front of the
PostgreSQL server that forwards every chunk after ``--delay-ms`` in each direction and counts
**round trips**: the times a client sends after it has heard from the server (a pipelined
flight of statements is one). Then, in one run, through that proxy:

* **store**: ``TranscriptStore.append(sid, [msg])`` (committed, one message) and
  ``load(sid)``;
* **raw**: what a user's hand-written psycopg code needs at the least: one ``INSERT`` of the
  message as JSON in autocommit, one ``SELECT`` of the session's rows;
* **sdk**: the Agents SDK's ``SQLAlchemySession`` (``add_items`` of one item, ``get_items``),
  when ``openai-agents`` is installed.

It prints the round trips per operation (exact: the median of ``--ops`` operations, after a
warm-up that fills each side's pool) and the milliseconds per operation through the proxy.
Issue 28's target for the store: at most 2 round trips per append and per load.
A scratch database ``bench_rt_<pid>`` is created and dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
import psycopg

from store import TranscriptStore

DEFAULT_PG_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"


class DelayProxy:
    """A loopback TCP proxy to ``upstream`` that delays each chunk by ``delay`` seconds in each
    direction (order kept) and counts round trips over all its connections."""

    def __init__(self, upstream: tuple[str, int], delay: float) -> None:
        self.upstream = upstream
        self.delay = delay
        self.round_trips = 0
        #: What clients sent, when :attr:`recording` (a test's look at the statements).
        self.recording = False
        self.sent: list[bytes] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    def reset(self) -> int:
        with self._lock:
            count, self.round_trips = self.round_trips, 0
        return count

    async def _serve(self, client_r: asyncio.StreamReader,
                     client_w: asyncio.StreamWriter) -> None:
        self._writers.add(client_w)
        server_r, server_w = await asyncio.open_connection(*self.upstream)
        self._writers.add(server_w)
        state = {"heard": True}  # a connection's first client send opens a round trip

        async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       from_client: bool) -> None:
            queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

            async def deliver() -> None:
                while True:
                    due, data = await queue.get()
                    if not data:
                        writer.close()
                        return
                    wait = due - self._loop.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    writer.write(data)
                    await writer.drain()

            sender = asyncio.ensure_future(deliver())
            try:
                while True:
                    data = await reader.read(65536)
                    if data:
                        with self._lock:
                            if from_client and state["heard"]:
                                self.round_trips += 1
                            if from_client and self.recording:
                                self.sent.append(data)
                            state["heard"] = not from_client
                    await queue.put((self._loop.time() + self.delay, data))
                    if not data:
                        break
                await sender
            except (ConnectionError, asyncio.CancelledError):
                sender.cancel()

        await asyncio.gather(pump(client_r, server_w, True), pump(server_r, client_w, False),
                             return_exceptions=True)

    def close(self) -> None:
        async def stop() -> None:
            if self._server is not None:
                self._server.close()
            for writer in self._writers:  # every transport closed before the loop is
                writer.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for writer in self._writers:
                try:
                    await writer.wait_closed()
                except (ConnectionError, OSError):
                    pass
            self._loop.stop()
        asyncio.run_coroutine_threadsafe(stop(), self._loop)
        self._thread.join(5)
        self._loop.close()


def _dsn_with(dsn: str, *, database: str | None = None, port: int | None = None) -> str:
    parts = urlsplit(dsn)
    netloc = parts.netloc
    if port is not None:
        netloc = netloc.rsplit(":", 1)[0] + f":{port}"
    path = f"/{database}" if database is not None else parts.path
    return urlunsplit((parts.scheme, netloc, path, parts.query, parts.fragment))


@contextmanager
def scratch_database(dsn: str) -> Iterator[str]:
    name = f"bench_rt_{__import__('os').getpid()}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _dsn_with(dsn, database=name)
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _message(i: int) -> dict[str, Any]:
    if i % 2:
        return {"role": "tool", "tool_call_id": f"call_{i - 1}", "content": f"output {i}"}
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": f"call_{i}", "type": "function",
        "function": {"name": "bash", "arguments": orjson.dumps({"command": f"ls {i}"}).decode()}}]}


def measure(proxy: DelayProxy, ops: int, fn: Callable[[int], Any]) -> tuple[int, float]:
    """Median round trips and milliseconds of ``fn(i)`` over ``ops`` calls (after 3 warm-ups)."""
    for i in range(3):
        fn(-1 - i)
    trips, times = [], []
    for i in range(ops):
        proxy.reset()
        started = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - started) * 1000)
        trips.append(proxy.reset())
    return int(statistics.median(trips)), statistics.median(times)


def store_side(url: str, ops: int, proxy: DelayProxy) -> dict[str, tuple[int, float]]:
    with TranscriptStore.open(url) as db:
        sid = "rt-store"
        appended = measure(proxy, ops, lambda i: db.append(
            sid, [_message(i + 10)], keys=[f"k{i}"]))
        loaded = measure(proxy, ops, lambda i: db.load(sid))
    return {"append": appended, "load": loaded}


def raw_side(dsn: str, ops: int, proxy: DelayProxy) -> dict[str, tuple[int, float]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS raw_items (session_id text, position serial, "
                     "item jsonb, PRIMARY KEY (session_id, position))")
        sid = "rt-raw"
        appended = measure(proxy, ops, lambda i: conn.execute(
            "INSERT INTO raw_items (session_id, item) VALUES (%s, %s)",
            (sid, orjson.dumps(_message(i + 10)).decode())))
        loaded = measure(proxy, ops, lambda i: conn.execute(
            "SELECT item FROM raw_items WHERE session_id = %s ORDER BY position",
            (sid,)).fetchall())
    return {"append": appended, "load": loaded}


def sdk_side(dsn: str, ops: int, proxy: DelayProxy) -> dict[str, tuple[int, float]] | None:
    try:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
        from sqlalchemy.ext.asyncio import create_async_engine
    except ImportError:
        return None
    loop = asyncio.new_event_loop()
    engine = create_async_engine("postgresql+psycopg://" + dsn.split("://", 1)[1])
    session = SQLAlchemySession("rt-sdk", engine=engine, create_tables=True)
    try:
        appended = measure(proxy, ops, lambda i: loop.run_until_complete(
            session.add_items([_message(i + 10)])))  # type: ignore[list-item]
        loaded = measure(proxy, ops, lambda i: loop.run_until_complete(session.get_items()))
    finally:
        loop.run_until_complete(engine.dispose())
        loop.close()
    return {"append": appended, "load": loaded}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay-ms", type=float, default=1.0)
    parser.add_argument("--ops", type=int, default=50)
    parser.add_argument("--pg-dsn", default=DEFAULT_PG_DSN)
    args = parser.parse_args(argv)
    with scratch_database(args.pg_dsn) as dsn:
        parts = urlsplit(dsn)
        proxy = DelayProxy((parts.hostname or "127.0.0.1", parts.port or 5432),
                           args.delay_ms / 1000)
        try:
            through = _dsn_with(dsn, port=proxy.port)
            rows = {"store": store_side("postgresql+psycopg://" + through.split("://", 1)[1],
                                        args.ops, proxy),
                    "raw": raw_side(through, args.ops, proxy)}
            sdk = sdk_side(through, args.ops, proxy)
            if sdk is not None:
                rows["sdk"] = sdk
        finally:
            proxy.close()
    print(f"PostgreSQL through a proxy adding {args.delay_ms:g} ms each way "
          f"(median of {args.ops} operations)")
    print(f"{'side':<8}{'append: trips':>15}{'ms':>9}{'load: trips':>14}{'ms':>9}")
    for side, ops in rows.items():
        (at, am), (lt, lm) = ops["append"], ops["load"]
        print(f"{side:<8}{at:>15}{am:>9.2f}{lt:>14}{lm:>9.2f}")
    return 0


if __name__ == "__main__":
    socket.setdefaulttimeout(60)
    sys.exit(main())
