"""Round trips to PostgreSQL, counted exactly by the benchmark's delaying proxy
(``bench/roundtrips.py``): the proxy's count is checked against statements whose round trips
are known, then the store's append and load are counted (issue 28 wants at most 2 each)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from backends import EMPTIER, empty_postgres

from store import CallQuery, TranscriptStore, count_calls, search_calls

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from roundtrips import DelayProxy  # noqa: E402

pytestmark = pytest.mark.postgres


@contextmanager
def _behind_proxy(postgres_url: str, delay: float) -> Iterator[tuple[DelayProxy, str]]:
    """The emptied test database behind a proxy adding ``delay`` seconds each way: the proxy
    and the URL through it."""
    empty_postgres(postgres_url)
    proxy = DelayProxy(("127.0.0.1", 5432), delay)
    try:
        yield proxy, postgres_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    finally:
        proxy.close()


@pytest.fixture
def proxied(postgres_url: str) -> Iterator[tuple[DelayProxy, str]]:
    """The test database behind a proxy (no added delay): its URL through the proxy."""
    with _behind_proxy(postgres_url, 0.0) as behind:
        yield behind


@pytest.fixture
def slow_proxied(postgres_url: str) -> Iterator[tuple[DelayProxy, str]]:
    """The test database one slow hop away (1.5 ms each way: a round trip of 3 ms or more,
    over which binding 300 rows on the client costs less than a COPY's two round trips)."""
    with _behind_proxy(postgres_url, 0.0015) as behind:
        yield behind


def _dsn(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1]


def test_the_proxy_counts_round_trips_exactly(proxied):
    proxy, url = proxied
    with psycopg.connect(_dsn(url), autocommit=True) as conn:
        proxy.reset()
        conn.execute("SELECT 1").fetchall()
        assert proxy.reset() == 1
        with conn.transaction():
            conn.execute("SELECT 1")
            conn.execute("SELECT 2")
        assert proxy.reset() == 4  # BEGIN, two statements, COMMIT
        with conn.pipeline():
            for n in range(5):
                conn.execute("SELECT %s", (n,))
        assert proxy.reset() == 1  # one flight


def _counted(proxy: DelayProxy, fn) -> int:
    fn()  # warm: the pool holds a connection, statements are prepared
    proxy.reset()
    fn()
    return proxy.reset()


def test_a_committed_append_takes_one_round_trip_and_a_first_one_two(proxied):
    """The first append to a session this store has not appended to reads first (BEGIN, the
    session upsert, the key probe, the calls its results answer) and writes in a second
    flight (store/db/writing/flight.py); from then on the store remembers the session's state and an
    append is one flight: a guard that the session row is as remembered, the writes, COMMIT.
    A plain message, a call and the result that answers it alike."""
    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        proxy.reset()
        db.append("rt", [{"role": "user", "content": "hi"}], keys=["k0"])
        assert proxy.reset() == 2
        counts = []
        for n in range(1, 4):
            proxy.reset()
            db.append("rt", [{"role": "user", "content": f"hi {n}"}], keys=[f"k{n}"])
            counts.append(proxy.reset())
            proxy.reset()
            db.append("rt", [{"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{n}", "type": "function",
                 "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]}])
            counts.append(proxy.reset())
            proxy.reset()
            db.append("rt", [{"role": "tool", "tool_call_id": f"c{n}", "content": "ok"}])
            counts.append(proxy.reset())
        assert counts == [1] * 9
        transcript = db.load("rt")
        assert [(c.call.id, c.result.content if c.result else None)
                for c in transcript.calls()] == [
            ("c1", "ok"), ("c2", "ok"), ("c3", "ok")]
        assert db.verify().ok


def test_a_stale_memory_costs_one_failed_flight_and_the_append_is_right(proxied):
    """Another writer moved the session on: the guard fails the one flight as a whole
    (nothing applied), and the append runs the usual way, at the right position, chained."""
    proxy, url = proxied
    with TranscriptStore.open(url) as mine, TranscriptStore.open(url) as other:
        mine.append("s", [{"role": "user", "content": "one"}], keys=["k1"])
        other.append("s", [{"role": "user", "content": "two"}], keys=["k2"])
        proxy.reset()
        mine.append("s", [{"role": "user", "content": "three"}], keys=["k3"])
        assert proxy.reset() == 4  # the failed flight, its ROLLBACK, the two of the usual way
        proxy.reset()
        mine.append("s", [{"role": "user", "content": "four"}], keys=["k4"])
        assert proxy.reset() == 1  # remembered again
        loaded = mine.load("s")
        assert [(m.position, m.message.parts[0].text) for m in loaded.messages] == [
            (0, "one"), (1, "two"), (2, "three"), (3, "four")]
        assert mine.verify().ok


def test_a_key_already_stored_is_skipped_after_the_failed_flight(proxied):
    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        db.append("s", [{"role": "user", "content": "one"}], keys=["k1"])
        again = db.append("s", [{"role": "user", "content": "one"},
                                {"role": "user", "content": "new"}], keys=["k1", "k2"])
        assert again.skipped_keys == ("k1",) and [m.position for m in again.stored] == [1]
        assert [m.message.parts[0].text for m in db.load("s").messages] == ["one", "new"]
        assert db.verify().ok


def test_a_result_for_a_call_another_store_made_is_linked_the_usual_way(proxied):
    """A result naming a call this store does not remember reads the stored calls first."""
    proxy, url = proxied
    with TranscriptStore.open(url) as mine, TranscriptStore.open(url) as other:
        mine.append("s", [{"role": "user", "content": "go"}])
        other.append("s", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "x1", "type": "function",
             "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]}])
        mine.append("s", [{"role": "tool", "tool_call_id": "x1", "content": "done"}])
        (call,) = mine.load("s").calls()
        assert call.result is not None and call.result.content == "done"
        assert mine.verify().ok


def test_a_bulk_append_over_a_network_takes_two_round_trips(slow_proxied):
    """Over a link whose round trip costs more than binding the rows, a bulk append is two
    round trips (its rows bound into the flights); the link is timed once per connection
    (two ``SELECT 1``, at the first insert large enough to ask)."""
    proxy, url = slow_proxied
    with TranscriptStore.open(url) as db:
        batch = [{"role": "user", "content": f"m{i}"} for i in range(200)]
        db.append("warm", batch[:1])
        proxy.reset()
        db.append("first", batch, keys=[f"f{i}" for i in range(200)])
        assert proxy.reset() == 2 + 2  # (the link timed)
        db.append("bulk", batch, keys=[f"b{i}" for i in range(200)])
        assert proxy.reset() == 2
        assert [m.message.text for m in db.load("bulk").messages] == [f"m{i}" for i in
                                                                         range(200)]


def _bulk_with_calls(count: int, tag: str) -> list[dict[str, object]]:
    """``count`` assistant messages with a call each, answered by ``count`` results."""
    calls = [{"role": "assistant", "content": f"{tag} {i}", "tool_calls": [
        {"id": f"{tag}-c{i}", "type": "function",
         "function": {"name": "bash", "arguments": f'{{"command": "echo {i}"}}'}}]}
        for i in range(count)]
    results = [{"role": "tool", "tool_call_id": f"{tag}-c{i}", "content": f"out {i}"}
               for i in range(count)]
    return calls + results


def test_a_bulk_append_over_a_fast_link_goes_as_copy(proxied, monkeypatch):
    """Where binding the rows costs more than a COPY's two round trips (the same machine),
    each table's many rows go as ``COPY ... FROM STDIN`` after the reads: two round trips a
    table more, the same rows (here binding is made to cost a second a row, so that the
    decision does not hang on how quick the link is at this moment)."""
    from store.db.writing import flight

    monkeypatch.setattr(flight, "ROW_BIND_SECONDS", 1.0)
    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        db.append("warm", [{"role": "user", "content": "w"}])
        proxy.reset()
        db.append("first", _bulk_with_calls(20, "f"))
        # the reads, the link timed, COPY of the messages, calls and results, the rest
        assert proxy.reset() == 1 + 2 + 3 * 2 + 1
        batch = _bulk_with_calls(20, "b")
        result = db.append("bulk", batch, keys=[f"b{i}" for i in range(40)])
        assert proxy.reset() == 1 + 3 * 2 + 1
        assert len(result.stored) == 40
        loaded = db.load("bulk").messages
        assert [m.message.text for m in loaded[:20]] == [f"b {i}" for i in range(20)]
        assert [c.input for m in loaded for c in m.message.tool_calls] == [
            {"command": f"echo {i}"} for i in range(20)]
        assert [(r.call_id, r.content) for m in loaded for r in m.message.tool_results] == [
            (f"b-c{i}", f"out {i}") for i in range(20)]
        again = db.append("bulk", batch, keys=[f"b{i}" for i in range(40)])
        assert again.stored == () and len(again.skipped_keys) == 40
        assert db.verify().ok
        # a few rows still go bound into the flights: one round trip for the writes
        proxy.reset()
        db.append("bulk", [{"role": "user", "content": "one more"}])
        assert proxy.reset() == 1


def test_a_load_takes_one_round_trip(proxied):
    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        db.append("rt", [{"role": "user", "content": "hi"}], keys=["k"])
        assert _counted(proxy, lambda: db.load("rt")) == 1


def _kill_connections(url: str) -> int:
    """Terminate every server process of the store's database but this one's."""
    database = url.rsplit("/", 1)[1]
    with psycopg.connect(_dsn(url).replace(f"/{database}", "/postgres"), autocommit=True) as c:
        rows = c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE datname = %s AND pid <> pg_backend_pid()"
                         " AND application_name <> %s", (database, EMPTIER)).fetchall()
    return len(rows)


def test_a_hot_connection_is_not_pinged(proxied):
    """No liveness ping on every checkout: two appends in a row cost the same round trips, and
    a ping (one more) appears only for a connection idle past IDLE_PING_SECONDS."""
    import store.db.schema.engine as engine_module

    proxy, url = proxied
    keys = iter(range(100))

    def append(db):
        db.append("rt", [{"role": "user", "content": "hi"}], keys=[f"k{next(keys)}"])

    with TranscriptStore.open(url) as db:
        hot = _counted(proxy, lambda: append(db))
    engine_module.IDLE_PING_SECONDS, saved = -1.0, engine_module.IDLE_PING_SECONDS
    try:
        with TranscriptStore.open(url) as db:
            pinged = _counted(proxy, lambda: append(db))
    finally:
        engine_module.IDLE_PING_SECONDS = saved
    assert pinged == hot + 1


def test_an_append_on_a_connection_the_server_dropped_runs_once_on_a_new_one(postgres_url):
    empty_postgres(postgres_url)
    with TranscriptStore.open(postgres_url) as db:
        db.append("lost", [{"role": "user", "content": "one"}], keys=["k1"])
        assert _kill_connections(postgres_url) >= 1  # the pooled connection is dead now
        db.append("lost", [{"role": "user", "content": "two"}])  # no key: must not run twice

        loaded = db.load("lost")
    assert [m.message.parts[0].text for m in loaded.messages] == ["one", "two"]


def test_a_read_after_the_connections_died_while_idle_gets_a_live_one(postgres_url):
    import store.db.schema.engine as engine_module

    empty_postgres(postgres_url)
    engine_module.IDLE_PING_SECONDS, saved = -1.0, engine_module.IDLE_PING_SECONDS
    try:
        with TranscriptStore.open(postgres_url) as db:
            db.append("idle", [{"role": "user", "content": "kept"}], keys=["k1"])
            assert _kill_connections(postgres_url) >= 1
            loaded = db.load("idle")  # the ping finds the dead connection and replaces it
    finally:
        engine_module.IDLE_PING_SECONDS = saved
    assert loaded.messages[0].message.parts[0].text == "kept"


def test_a_large_import_chunk_goes_through_executemany_and_stores_every_row(slow_proxied):
    """Over a link too slow for COPY, from MANY_ROWS rows an insert takes the driver's
    executemany (throughput over round trips): the rows are the same, still one
    transaction."""
    from store.db.writing.flight import MANY_ROWS

    proxy, url = slow_proxied
    with TranscriptStore.open(url) as db:
        count = MANY_ROWS + 10
        batch = [{"role": "user", "content": f"m{i}"} for i in range(count)]
        result = db.append("big", batch, keys=[f"b{i}" for i in range(count)])
        assert len(result.stored) == count
        assert [m.message.text for m in db.load("big").messages] == [f"m{i}" for i in range(count)]
        again = db.append("big", batch, keys=[f"b{i}" for i in range(count)])
        assert again.stored == () and len(again.skipped_keys) == count


def test_a_result_for_a_call_older_than_the_remembered_ones_reads_the_stored_calls(proxied):
    """A session's state keeps the latest REMEMBERED_CALLS call ids (carrying it costs the same
    at any length): a result for an older call takes the usual two flights and is linked."""
    from store.db.writing.flight import REMEMBERED_CALLS

    proxy, url = proxied
    with TranscriptStore.open(url) as db:
        calls = [{"id": f"c{n}", "type": "function",
                  "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
                 for n in range(REMEMBERED_CALLS + 1)]
        db.append("s", [{"role": "assistant", "content": "", "tool_calls": calls}])
        proxy.reset()
        db.append("s", [{"role": "tool", "tool_call_id": f"c{REMEMBERED_CALLS}", "content": "new"}])
        assert proxy.reset() == 1  # a remembered call
        proxy.reset()
        db.append("s", [{"role": "tool", "tool_call_id": "c0", "content": "old"}])
        assert proxy.reset() == 2  # forgotten: read first
        results = {c.call.id: c.result.content for c in db.load("s").calls() if c.result}
        assert results == {f"c{REMEMBERED_CALLS}": "new", "c0": "old"}
        assert db.verify().ok


def test_a_session_two_writers_share_is_placed_by_the_server_in_one_flight(proxied):
    """Stale twice: the store stops betting on its memory of the session (each lost bet is a
    failed flight, its ROLLBACK and the append read first) and lets the server place each
    append: one flight, whatever the other writer did (store/db/writing/anchored.py)."""
    proxy, url = proxied
    with TranscriptStore.open(url) as mine, TranscriptStore.open(url) as other:
        mine.append("s", [{"role": "user", "content": "m0"}], keys=["m0"])
        costs, positions = [], []
        for n in range(1, 5):
            other.append("s", [{"role": "user", "content": f"o{n}"}], keys=[f"o{n}"])
            proxy.reset()
            done = mine.append("s", [{"role": "user", "content": f"m{n}"}], keys=[f"m{n}"])
            costs.append(proxy.reset())
            positions.append(done.stored[0].position)
        # stale once (a failed flight, its rollback, the reads, the writes), stale again
        # (the same, and whether the database is Citus, asked once), then one flight each
        assert costs[0] == 4 and costs[1] > 4 and costs[2:] == [1, 1]
        assert positions == [2, 4, 6, 8]  # the positions the server gave, not remembered
        loaded = mine.load("s")
        assert [m.message.parts[0].text for m in loaded.messages] == [
            "m0", "o1", "m1", "o2", "m2", "o3", "m3", "o4", "m4"]
        assert mine.verify().ok


def _turn(tag: str, n: int) -> list[dict[str, object]]:
    """An assistant message with two calls, then the tool message answering both."""
    calls = [{"id": f"{tag}{n}-{i}", "type": "function",
              "function": {"name": "bash", "arguments": f'{{"command": "echo {tag}{n}{i}"}}'}}
             for i in range(2)]
    text = f'{tag} {n} Größe "q" \\ ✓ \u2028'  # (what JSON escapes, and what it need not)
    return [{"role": "assistant", "content": text, "tool_calls": calls},
            *({"role": "tool", "tool_call_id": c["id"], "content": f"out {c['id']}"}
              for c in calls)]


def test_interleaved_writers_placed_by_the_server_chain_and_pair_exactly(proxied):
    """Both writers anchored, several messages per append, results answering the append's
    own calls and calls of an earlier append (remembered at the positions the server gave):
    what is stored verifies (each digest as the client would chain it), pairs, and a
    key already stored makes the flight fail and the append skip it the usual way."""
    proxy, url = proxied
    with TranscriptStore.open(url) as mine, TranscriptStore.open(url) as other:
        costs = []
        for n in range(6):
            proxy.reset()
            # each writer's calls, then each one's results: another append between them
            firsts = {}
            for tag, db in (("a", mine), ("b", other)):
                firsts[tag] = db.append("s", _turn(tag, n)[:1], keys=[f"{tag}{n}c"])
            for tag, db in (("a", mine), ("b", other)):
                done = db.append("s", _turn(tag, n)[1:], keys=[f"{tag}{n}r0", f"{tag}{n}r1"])
                stored = [m.position for m in done.stored]
                assert stored == [stored[0], stored[0] + 1]
                assert stored[0] == firsts[tag].stored[0].position + (2 if tag == "a" else 3)
            costs.append(proxy.reset())
        assert costs[-3:] == [4, 4, 4]  # four appends, one flight each, once both are anchored
        done = mine.append("s", [{"role": "user", "content": "again"}, {
            "role": "user", "content": "new"}], keys=["a5c", "fresh"])
        assert done.skipped_keys == ("a5c",) and len(done.stored) == 1
        loaded = mine.load("s")
        assert len(loaded.messages) == 6 * 2 * 3 + 1
        pairs = {c.call.id: c.result.content for c in loaded.calls() if c.result}
        assert pairs == {f"{t}{n}-{i}": f"out {t}{n}-{i}" for t in "ab" for n in range(6)
                         for i in range(2)}
        assert mine.verify().ok and other.verify().ok


def _sent_during(proxy: DelayProxy, fn, *, warm: bool = True) -> list[bytes]:
    """What the client sent while ``fn`` ran (after one warm-up run), chunk by chunk."""
    if warm:
        fn()
    proxy.sent.clear()
    proxy.recording = True
    try:
        fn()
    finally:
        proxy.recording = False
    return list(proxy.sent)


def test_a_read_sends_no_begin_or_rollback_and_leaves_its_connection_as_it_was(proxied):
    """A search's reads, and the store's other reads, run statement by statement
    (autocommit): each would otherwise pay a BEGIN round trip before its first statement and
    a ROLLBACK after its last (a search of every call that found nothing: 6.8 ms against the
    raw driver's 0.5 ms). The connection
    goes back to the pool in transactions again, and the answers are the same. (The searches
    run on a read-only store: a writable one's catch-up, which writes in transactions, runs
    whenever the server's WAL moved, and other tests move it.)"""
    proxy, url = proxied
    with TranscriptStore.open(url) as db, TranscriptStore.open(url, read_only=True) as ro:
        db.append("rt", [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "bash", "arguments": '{"command": "git push"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "pushed"}], keys=["a", "b"])
        db.update_search_index()
        # A writable store's search first asks whether anything is to catch up: that first
        # statement goes without a BEGIN before it.
        first = _sent_during(proxy, db.update_search_index, warm=False)[0]
        assert b"pg_current_wal_insert_lsn" in first and b"BEGIN" not in first
        found: dict[str, object] = {}
        searches = {
            "calls": lambda: found.__setitem__("calls", [
                (m.session_id, m.position, m.name, m.result_preview)
                for m in search_calls(ro, CallQuery(text="git push"))]),
            "nothing": lambda: found.__setitem__(
                "nothing", search_calls(ro, CallQuery(text="no such text"))),
            "count": lambda: found.__setitem__("count",
                                               count_calls(ro, CallQuery(text="git push"))),
            "messages": lambda: found.__setitem__("messages", [
                (h.session_id, h.position) for h in ro.search_messages("pushed")]),
            # (the store's other reads too: a listing, a session, its count)
            "sessions": lambda: found.__setitem__("sessions", [
                (info.session_id, ro.get_session(info.session_id).message_count,
                 ro.count_sessions()) for info in ro.list_sessions()]),
        }
        for name, search in searches.items():
            sent = b"".join(_sent_during(proxy, search))
            assert b"BEGIN" not in sent and b"ROLLBACK" not in sent, name
            assert b"SELECT" in sent, name  # (the recording saw the search's statements)
        assert found == {"calls": [("rt", 0, "bash", "pushed")], "nothing": [], "count": 1,
                         "messages": [("rt", 1)], "sessions": [("rt", 2, 1)]}
        for store in (db, ro):  # the pool's connections are back in transactions
            with store.engine.connect() as conn:
                assert conn.connection.dbapi_connection.autocommit is False
        db.append("rt", [{"role": "user", "content": "again"}], keys=["c"])
        assert [m.key for m in db.load("rt").messages] == ["a", "b", "c"]


def test_a_search_at_a_state_already_caught_up_takes_two_round_trips(proxied):
    """A writable store's search that finds the database where its last catch-up found
    nothing to do (the WAL position unchanged) takes what holds there as known: the state,
    the alias table, the key check and that no session lags. It asks the state, then
    searches: two round trips (nine before). Other tests write to the same server and move
    its WAL; the driver prepares a statement at its fifth run on a connection (a round trip
    of its own): a try during which either happened is not counted, and is made again."""
    proxy, url = proxied

    direct = _dsn(url).replace(f"127.0.0.1:{proxy.port}", "127.0.0.1:5432")

    def lsn() -> str:
        with psycopg.connect(direct, autocommit=True) as conn:  # (not through the proxy)
            return str(conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0])

    with TranscriptStore.open(url) as db:
        db.append("rt", [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "bash", "arguments": '{"command": "git push"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "pushed"}], keys=["a", "b"])
        counted: dict[str, int] = {}
        for name, search in (("nothing", lambda: search_calls(db, CallQuery(text="none"))),
                             ("messages", lambda: db.search_messages("zzz"))):
            for _ in range(200):
                # (a catch-up, if any; a check that finds nothing to do; a search at that
                # state, which keeps the alias table read there)
                # (the WAL position is read before the check: a write by another test between
                # the last one's reading of the state and the measured search makes that one
                # catch up, with the WAL by then where a read after the warm-up found it)
                search()
                before = lsn()
                search()
                search()
                proxy.reset()
                proxy.sent.clear()
                proxy.recording = True
                try:
                    assert search() == []
                finally:
                    proxy.recording = False
                trips = proxy.reset()
                # (psycopg prepares a statement at its fifth run on a connection: a Parse of
                # a named statement, a round trip of its own, once per connection)
                prepared = re.search(rb"P[\s\S]{4}_pg3_", b"".join(proxy.sent))
                if lsn() == before and not prepared:
                    counted[name] = trips
                    break
        assert counted == {"nothing": 2, "messages": 2}
        # Still never stale: what is appended next is found by the next search.
        db.append("rt", [{"role": "user", "content": "zzz"}], keys=["c"])
        assert [h.position for h in db.search_messages("zzz")] == [2]
        db.append("rt", [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c2", "type": "function",
             "function": {"name": "bash", "arguments": '{"command": "none"}'}}]}],
            keys=["d"])
        assert [m.position for m in search_calls(db, CallQuery(text="none"))] == [3]


def test_the_command_lines_reader_asks_its_settings_and_the_revision_in_one_flight(proxied):
    """The command line's PostgreSQL reader (``store.db.reading.pgread.open_pg``) sends its
    settings (read-only, one snapshot, UTC, no JIT) and the revision check as one message:
    one round trip after connecting, where it took two; a database at another revision
    still declines."""
    from store.db.reading.pgread import open_pg
    from store.db.schema.revisions import shipped_head

    proxy, url = proxied
    proxy.sent.clear()
    proxy.recording = True
    try:
        reader = open_pg(url, shipped_head)
    finally:
        proxy.recording = False
    assert reader is not None
    with reader:
        assert reader.execute("SHOW TimeZone").fetchone()[0] == "UTC"
        assert reader.execute("SHOW transaction_read_only").fetchone()[0] == "on"
    queries = [chunk for chunk in proxy.sent if chunk[:1] == b"Q"]
    assert len(queries) == 1
    assert b"SET default_transaction_read_only = on" in queries[0]
    assert b"SELECT version_num FROM alembic_version" in queries[0]
    assert open_pg(url, lambda: "0006") is None
