"""The catch-ups' texts made ahead in worker processes (``store/db/index/ahead.py``, issue 39),
on both backends: the rows written (search items, argument views, secret digests, message
index rows) are exactly those of a catch-up without workers; a row that changed after it was
read ahead is made again in the transaction; a worker that dies leaves the catch-up to finish
alone; ``verify`` finds nothing wrong afterwards."""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest
from index_rows import derived_rows

from store import TranscriptStore, refill_search_index
from store.db.index import ahead as made_ahead
from store.db.index import message_index, search_index
from store.db.index.ahead import Ahead, plan

SESSIONS = 40  # of 7 messages each
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2


def _session(number: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": f"task {number}: deploy the app"}]
    for turn in range(3):
        call_id = f"c{number}_{turn}"
        command = (f"git push origin main --token {SECRET}" if turn == 1
                   else f"ls -la /srv/app{number}/{turn}")
        arguments = ('{"command": ' + f'"{command}"' + ', "timeout": 30}' if turn != 2
                     else '{"file_path": "/srv/app/main.py", "old_string": "a", '
                          '"new_string": "b"}')
        out.append({"role": "assistant", "content": f"step {turn} of {number}",
                    "tool_calls": [{"id": call_id, "type": "function", "function": {
                        "name": "bash" if turn != 2 else "edit", "arguments": arguments}}]})
        out.append({"role": "tool", "tool_call_id": call_id,
                    "content": f"done {number}.{turn} password=hunter2secret{number}"})
    return out


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of a few sessions (the real ones hold thousands of messages)."""
    monkeypatch.setattr(made_ahead, "CHUNK_MESSAGES", 30)
    monkeypatch.setattr(made_ahead, "MIN_MESSAGES", 100)


@pytest.fixture
def filled(store: TranscriptStore) -> TranscriptStore:
    for number in range(SESSIONS):
        store.append(f"s{number:03d}", _session(number))
    return store


def test_the_rows_are_those_of_a_catch_up_without_workers(filled, caplog):
    with caplog.at_level(logging.INFO, logger="store.db.index"):
        done = filled.update_search_index(workers=2)
    assert (done.sessions, done.calls, done.results) == (SESSIONS, 3 * SESSIONS, 3 * SESSIONS)
    assert done.messages == 7 * SESSIONS
    used = [r.getMessage() for r in caplog.records if "made ahead" in r.getMessage()]
    assert used and used[0].startswith(f"index texts made ahead: {6 * SESSIONS} used, 0 ")
    ahead = derived_rows(filled)
    assert ahead["secrets"]  # (the secrets were found: redaction ran in the workers)
    assert all(SECRET not in body for *_, body in ahead["items"])
    assert filled.verify().ok

    refill_search_index(filled, workers=1)
    alone = derived_rows(filled)
    assert ahead == alone


def _stale_calls(conn: Any) -> Any:
    read = _original_read_ahead(conn)

    def stale(chunk: Any) -> Any:
        # every call read ahead with other wire text than the one stored: none may be used
        return [(key, (*inputs[:4], inputs[4].replace("ls", "rm").replace("git", "got")))
                if len(inputs) == 5 else (key, inputs) for key, inputs in read(chunk)]

    return stale


_original_read_ahead = search_index._read_ahead


def test_a_row_changed_after_it_was_read_ahead_is_made_again(filled, monkeypatch, caplog):
    monkeypatch.setattr(search_index, "_read_ahead", _stale_calls)
    with caplog.at_level(logging.INFO, logger="store.db.index"):
        filled.update_search_index(workers=2)
    used = [r.getMessage() for r in caplog.records if "made ahead" in r.getMessage()]
    # the results and the edits were used, the changed calls made again in the transaction
    assert used == [f"index texts made ahead: {4 * SESSIONS} used, {2 * SESSIONS} made in "
                    "the transaction"]
    ahead = derived_rows(filled)
    assert not any("rm -la" in body or "got push" in body for *_, body in ahead["items"])
    refill_search_index(filled, workers=1)
    assert ahead == derived_rows(filled)


def _dying(inputs: list[Any]) -> list[Any]:
    os._exit(3)


def test_a_worker_that_dies_leaves_the_catch_up_to_finish_alone(filled, monkeypatch, caplog):
    monkeypatch.setattr(search_index, "make_items", _dying)
    monkeypatch.setattr(message_index, "make_rows", _dying)
    with caplog.at_level(logging.WARNING, logger="store.db.index"):
        done = filled.update_search_index(workers=2)
    assert any("died" in r.getMessage() for r in caplog.records)
    assert (done.sessions, done.calls, done.messages) == (SESSIONS, 3 * SESSIONS, 7 * SESSIONS)
    kept = derived_rows(filled)
    assert filled.verify().ok
    refill_search_index(filled, workers=1)
    assert kept == derived_rows(filled)


def _double(inputs: list[int]) -> list[int]:
    return [2 * i for i in inputs]


def test_ahead_gives_what_was_made_only_for_the_same_inputs():
    chunks = [[1, 2], [3], [4, 5]]
    with Ahead(2, chunks, lambda chunk: [(n, n) for n in chunk], _double) as ahead:
        assert ahead.next_chunk() == 2  # (the sessions of the chunk to take)
        assert ahead.made(1, 1) == 2 and ahead.made(2, 2) == 4
        assert ahead.made(2, 3) is None  # changed since it was read
        assert ahead.made(3, 3) is None  # the next chunk's: not yet
        assert ahead.next_chunk() == 1
        assert ahead.made(3, 3) == 6 and ahead.made(1, 1) is None  # the last one's forgotten
        assert ahead.next_chunk() == 2
        assert ahead.made(5, 5) == 10
        assert ahead.next_chunk() is None  # the plan is done
        assert ahead.made(5, 5) is None
    assert (ahead.hits, ahead.misses) == (4, 4)


def test_the_plan_cuts_chunks_by_messages():
    behind = [("a", 0, 10), ("b", 5, 30), ("c", 0, 5), ("d", 0, 100), ("e", 0, 1)]
    assert plan(behind, 200) == [[("a", 0, 10), ("b", 5, 30)], [("c", 0, 5), ("d", 0, 100)],
                                 [("e", 0, 1)]]
    assert plan(behind, 1) == [[b] for b in behind]  # (at most this many sessions)
    assert plan(behind[:2], 200) is None  # 35 messages: fewer than MIN_MESSAGES


def test_few_messages_waiting_start_no_workers(store, caplog):
    for number in range(14):  # 98 messages
        store.append(f"s{number:03d}", _session(number))
    with caplog.at_level(logging.INFO, logger="store.db.index"):
        store.update_search_index(workers=2)
    assert not [r for r in caplog.records if "made ahead" in r.getMessage()]
    assert store.verify().ok


def test_a_read_ahead_that_fails_leaves_no_worker_behind():
    def failing(chunk):
        if chunk == [2]:  # (the first chunk went to the workers: they were started)
            raise RuntimeError("the read connection is gone")
        return [(n, n) for n in chunk]

    with pytest.raises(RuntimeError, match="gone"):
        Ahead(2, [[1], [2]], failing, _double)
    import multiprocessing

    assert not [p for p in multiprocessing.active_children() if p.is_alive()]


def test_a_worker_dead_before_the_next_chunk_is_handed_out_is_no_failure(monkeypatch, caplog):
    """The pool breaks between two hand-outs (a worker killed, out of memory ...): the next
    ``submit`` refuses, and that is the same news as a result that never comes: the rest is
    made in the transactions, the catch-up does not fail (a race the catch-ups' test above
    met on a busy machine)."""
    import time
    from concurrent.futures import ProcessPoolExecutor

    pools: list[Any] = []

    def keeping(*args: Any, **kwargs: Any) -> ProcessPoolExecutor:
        pools.append(ProcessPoolExecutor(*args, **kwargs))
        return pools[-1]

    def read(chunk: list[int]) -> list[tuple[int, int]]:
        if chunk == [2]:  # (the first chunk's worker is dying: wait until the pool knows)
            deadline = time.monotonic() + 30
            while not pools[0]._broken and time.monotonic() < deadline:
                time.sleep(0.01)
            assert pools[0]._broken
        return [(n, n) for n in chunk]

    monkeypatch.setattr(made_ahead, "ProcessPoolExecutor", keeping)
    with caplog.at_level(logging.WARNING, logger="store.db.index"), \
            Ahead(2, [[1], [2], [3]], read, _dying) as ahead:
        assert ahead.next_chunk() is None  # (nothing made ahead: all of it in this process)
        assert ahead.made(1, 1) is None
    assert any("died" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_catch_up_holds_no_snapshot_between_its_chunks(tmp_path, monkeypatch, workers):
    """SQLite: after each chunk a checkpoint can copy every frame of the write-ahead log into
    the database (a read transaction held over the catch-up kept it from copying anything
    written after it: the log grew by the whole catch-up, 5.6 GB at 10^6 messages)."""
    import sqlite3

    monkeypatch.setattr(search_index, "CHUNK_SESSIONS", 4)
    monkeypatch.setattr(message_index, "CHUNK_SESSIONS", 4)
    path = tmp_path / "wal.sqlite"
    seen: list[tuple[int, int, int]] = []

    def checkpoint(*_: object) -> None:
        with sqlite3.connect(path) as other:
            seen.append(other.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())

    with TranscriptStore.open(f"sqlite:///{path}") as opened:
        for number in range(SESSIONS):
            opened.append(f"s{number:03d}", _session(number))
        checkpoint()
        seen.clear()
        done = opened.update_search_index(progress=checkpoint, workers=workers)

        assert done.calls == SESSIONS * 3 and done.messages == SESSIONS * 7
        assert len(seen) >= 2 * SESSIONS // 4  # (each index, after each of its chunks)
        # (busy, frames in the log, frames copied): every frame copied, each time
        assert all(busy == 0 and copied == frames for busy, frames, copied in seen), seen
