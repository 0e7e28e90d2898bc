"""Issue 23, planner traps on PostgreSQL: statistics kept current after bulk work, no plan
forced, and the key check of an append probing the key index for the chunk's keys only.

Each test makes its own fresh database (the shared test database has statistics from earlier
tests), fills it with the store's own append, and asserts what the planner was given and
chose, never how long it took. SQLite: the key check and the catch-up run the same and
answer the same (no statistics to keep; its planner picks the key index by its equality
constraints).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from backends import ADMIN_URL, postgres_unavailable
from sqlalchemy import create_engine, text

from store import CallQuery, TranscriptStore, iter_calls
from store.db.index.search_index import ANALYZED_TABLES, refresh_statistics
from store.db.writing.compiled import statements


@pytest.fixture
def fresh_postgres() -> Iterator[str]:
    """A new PostgreSQL database at head whose tables were never analyzed (as after a bulk
    load before autovacuum runs; this server runs with autovacuum off)."""
    name = f"ts_test_plan_{os.getpid()}"
    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001
        admin.dispose()
        postgres_unavailable(str(exc).splitlines()[0])
    url = ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    TranscriptStore.open(url).close()
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def turns(session: int, count: int) -> list[dict]:
    out: list[dict] = []
    for number in range(count):
        out.append({"role": "assistant", "tool_calls": [
            {"id": f"c{number}", "type": "function", "function": {
                "name": "bash", "arguments": f'{{"command": "grep zebrafish f{number}"}}'}}]})
        out.append({"role": "tool", "tool_call_id": f"c{number}",
                    "content": f"session {session} line {number}"})
    return out


def reltuples(store: TranscriptStore) -> dict[str, float]:
    with store.engine.connect() as conn:
        return {str(name): float(tuples) for name, tuples in conn.execute(text(
            "SELECT relname, reltuples FROM pg_class WHERE relname = ANY(:names) "
            "AND relkind = 'r'"), {"names": list(ANALYZED_TABLES)}).all()}


def test_the_catch_up_analyzes_every_table_an_import_fills_and_a_search_joins(fresh_postgres):
    with TranscriptStore.open(fresh_postgres) as store:
        for session in range(12):
            store.append(f"s{session:02d}", turns(session, 100))
        before = reltuples(store)
        assert set(before) == set(ANALYZED_TABLES)
        assert all(value < 0 for value in before.values()), before  # never analyzed
        store.update_search_index()  # (what `import` and `db index` end with)
        after = reltuples(store)
        assert after["messages"] == 2400 and after["tool_calls"] == 1200
        assert after["tool_results"] == 1200
        assert after["sessions"] == 12 and after["call_views"] == 1200
        with store.engine.begin() as conn:  # now current: nothing more to analyze
            assert refresh_statistics(conn) == []
        found = list(iter_calls(store, CallQuery(text="zebrafish")))
        assert len(found) == 1200


def test_statistics_of_a_grown_table_are_refreshed(fresh_postgres):
    with TranscriptStore.open(fresh_postgres) as store:
        store.append("small", turns(0, 10))
        store.update_search_index()
        assert reltuples(store)["messages"] == 20
        store.append("big", turns(1, 600))
        store.update_search_index()
        assert reltuples(store)["messages"] == 1220


def test_a_search_forces_no_plan(fresh_postgres):
    """The search used to SET enable_seqscan = off (a nested loop of 61k x 29k on a store
    without statistics); the settings a search leaves in its transaction are the defaults,
    but for the cursor's fraction when every row is read."""
    from store.audit.search import _matches
    from store.audit.sql import connect

    with TranscriptStore.open(fresh_postgres) as store:
        store.append("s", turns(0, 50))
        store.update_search_index()
        with connect(store) as conn:
            rows = list(_matches(conn, CallQuery(text="zebrafish"), None, 0, None, None))
            settings = dict(conn.exec_driver_sql(
                "SELECT name, setting FROM pg_settings WHERE name LIKE 'enable%%' "
                "OR name = 'cursor_tuple_fraction'").all())
        assert len(rows) == 50
        assert {k: v for k, v in settings.items() if v != "on"} == {
            "cursor_tuple_fraction": "1", "enable_partitionwise_aggregate": "off",
            "enable_partitionwise_join": "off"}


def key_check_plan(url: str, session: str, keys: list[str]) -> str:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            cursor = conn.connection.cursor()
            cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, FORMAT TEXT) "
                           + statements("postgresql").existing_keys_probe, (keys, session))
            return "\n".join(row[0] for row in cursor.fetchall())
    finally:
        engine.dispose()


def test_the_key_check_probes_the_key_index_for_the_chunks_keys_only(fresh_postgres):
    """A session of 6,000 messages, never analyzed (a bulk import before autovacuum): the
    key check of the next chunk probes ux_messages_session_key once per key of the chunk
    and never reads the session through the primary key (the old ``IN (...)`` form read
    all 6,000 rows for every chunk: quadratic in the session's length)."""
    with TranscriptStore.open(fresh_postgres) as store:
        items = turns(0, 3000)
        keys = [f"k{n}" for n in range(len(items))]
        for start in range(0, len(items), 2000):
            store.append("big", items[start:start + 2000], keys=keys[start:start + 2000])
        assert reltuples(store)["messages"] < 0
    chunk = [f"new{n}" for n in range(500)] + ["k7", "k5999"]
    plan = key_check_plan(fresh_postgres, "big", chunk)
    assert "ux_messages_session_key" in plan, plan
    assert "pk_messages" not in plan and "Seq Scan" not in plan, plan
    assert "Rows Removed by Filter" not in plan, plan
    assert f"loops={len(chunk)}" in plan, plan  # one probe per key of the chunk
    with TranscriptStore.open(fresh_postgres) as store:  # and the append answers the same
        again = store.append("big", items[:3] + [{"role": "user", "content": "new"}],
                             keys=[*keys[:3], "new0"])
        assert again.skipped_keys == tuple(keys[:3]) and len(again.stored) == 1


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_key_check_answers_the_same_on_sqlite(tmp_path, backend):
    with TranscriptStore.open(f"sqlite:///{tmp_path / 'keys.sqlite'}") as store:
        items = turns(0, 300)
        keys = [f"k{n}" for n in range(len(items))]
        store.append("big", items, keys=keys)
        again = store.append("big", items[:3] + [{"role": "user", "content": "new"}],
                             keys=[*keys[:3], "new0"])
        assert again.skipped_keys == tuple(keys[:3]) and len(again.stored) == 1
