"""``bench/storage.py --profile OP``: the store's side of one operation under cProfile."""

from __future__ import annotations

import cProfile
import io
import pstats

from workload import ASCII_TERM, NON_ASCII_TERM, Session

from store import CallQuery, TranscriptStore, search_calls


def profile_store(store_url: str, op: str, sessions: list[Session],
                  incremental: list[Session], top: int) -> str:
    """The store's side of one operation under cProfile, on a fresh database."""
    store = TranscriptStore.open(store_url)
    try:
        for s in sessions:
            store.append(s.session_id, s.messages, keys=s.keys)
        inc = [Session("prof-" + s.session_id, s.messages,
                       ["prof-" + k for k in s.keys]) for s in incremental]
        store.count_calls_by_tool()
        store.find_calls(ASCII_TERM)
        store.load(sessions[0].session_id)
        profiler = cProfile.Profile()
        if op == "bulk":
            fresh = [Session("prof-" + s.session_id, s.messages, ["prof-" + k for k in s.keys])
                     for s in sessions]
            profiler.enable()
            for s in fresh:
                store.append(s.session_id, s.messages, keys=s.keys)
        elif op == "incremental":
            profiler.enable()
            for s in inc:
                for record, key in zip(s.messages, s.keys, strict=True):
                    store.append(s.session_id, [record], keys=[key])
        elif op == "load":
            profiler.enable()
            for s in sessions:
                store.load(s.session_id)
        elif op == "count":
            profiler.enable()
            for _ in range(200):
                store.count_calls_by_tool()
        elif op == "text":
            search_calls(store, CallQuery(text=ASCII_TERM))  # the catch-up, not profiled
            profiler.enable()
            for _ in range(10):
                search_calls(store, CallQuery(text=ASCII_TERM))
                search_calls(store, CallQuery(text="grep -n"))
        else:
            profiler.enable()
            for _ in range(10):
                store.find_calls(ASCII_TERM)
                store.find_calls(NON_ASCII_TERM)
        profiler.disable()
    finally:
        store.close()
    out = io.StringIO()
    stats_ = pstats.Stats(profiler, stream=out)
    stats_.sort_stats("tottime").print_stats(top)
    stats_.sort_stats("cumulative").print_stats(r"store[/\\]", top)
    return out.getvalue()
