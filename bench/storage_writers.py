"""The concurrent-writers scenario of ``bench/storage.py``: N processes, committed single
appends to sessions of their own, wall time of all; for the store, the raw driver and each
peer (the Agents SDK's session, LangChain's SQLChatMessageHistory)."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from typing import Any

from storage_peers import _langchain, _sdk_postgres, _sdk_sqlite
from storage_plain import PlainPostgres, PlainSQLite
from storage_raw import RawStore
from storage_raw_backends import RawPostgres, RawSQLite
from workload import (
    generate_sessions,
)

from store import TranscriptStore

# -- concurrent writers ---------------------------------------------------------------------------


def _writer(kind: str, target: str, worker: int, count: int, run: str, ready: Any,
            out: Any, shared: bool = False) -> None:
    """One writer process: ``count`` committed single-message appends to a session of its own
    (or, ``shared``, to the one session every writer appends to), once every writer is ready
    (``ready``: a barrier, passed after one warm-up append); puts (start, end) on ``out``.
    ``run`` makes the session ids this run's own."""
    (session,) = generate_sessions(1, count, seed=7000 + worker, prefix=f"{kind}{worker}")
    sid = f"writer-{kind}-shared-{run}" if shared else f"writer-{kind}-{worker}-{run}"
    pairs = list(zip(session.messages, session.keys, strict=True))[:count + 1]
    store = TranscriptStore.open(target) if kind == "store" else None
    raw: RawStore | None = None
    peer: Any = None
    if kind == "raw":
        raw = (RawSQLite(Path(target), create=False) if not target.startswith("post")
               else RawPostgres(target, create=False))
    elif kind == "sdk":
        peer = (_sdk_postgres(target) if target.startswith("post")
                else _sdk_sqlite(Path(target)))
    elif kind == "langchain":
        peer = _langchain(target)
    elif kind == "plain":
        peer = (PlainPostgres(target, create=False) if target.startswith("post")
                else PlainSQLite(Path(target), create=False))
    batches = [[record] for record, _ in pairs]
    if peer is not None:
        for batch in batches:  # what the peer needs before it can store them, untimed
            prepare = getattr(peer, "prepare", None)
            if prepare is not None:
                prepare(batch)

    def append(n: int, key: str) -> None:
        if store is not None:
            store.append(sid, batches[n], keys=[key])
        elif raw is not None:
            raw.append(sid, batches[n], [key])
        elif kind == "plain":
            peer.append(sid, batches[n], [key])
        else:
            peer.append(sid, batches[n])

    append(0, pairs[0][1])
    ready.wait(timeout=600)
    started = time.time()
    for n in range(1, len(pairs)):
        append(n, pairs[n][1])
    out.put((started, time.time()))
    if peer is not None:
        peer.close()


def run_writers(kind: str, target: str, processes: int, count: int, *,
                shared: bool = False) -> float:
    """Wall time of ``processes`` writer processes doing ``count`` appends each (to one
    session when ``shared``)."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    # (every writer starts once all have started and made their warm-up append: a fixed
    # delay cost ~2.6 s a run, and on a slow machine could start one before another was up)
    ready = context.Barrier(processes + 1)
    run = f"{time.time():.6f}"
    procs = [context.Process(target=_writer,
                             args=(kind, target, w, count, run, ready, queue, shared))
             for w in range(processes)]
    for proc in procs:
        proc.start()
    ready.wait(timeout=600)
    spans = [queue.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
    return max(end for _, end in spans) - min(start for start, _ in spans)
