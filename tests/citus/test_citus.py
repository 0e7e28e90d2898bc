"""The store on a Citus cluster: ``db distribute``, migrations on a distributed schema, routing.

These run only when ``TRANSCRIPT_STORE_CITUS_URL`` names a Citus coordinator (with registered
workers). ``scripts/test-citus`` (run by ``.ci/run`` after the suite) builds Citus once from
``../shared/vendor``, starts a local 3-node cluster and runs this module with
``TRANSCRIPT_STORE_REQUIRE_CITUS`` set, so there a missing cluster fails instead of
skipping. Each test that needs a database of its own gets one on every node
(``tests/citus_cluster.py``); the rest of the suite runs on the distributed store as the
``citus`` backend (``tests/conftest.py``).

Routing is checked with ``EXPLAIN`` on the coordinator: every statement an operation sends
(recorded by a psycopg cursor class, Core and the hot path's raw statements alike) is
explained with its own values; Citus' plan says how many shards it touches (``Task Count``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from backends import ADMIN_URL, CITUS_URL
from click.testing import CliRunner
from sqlalchemy import Column, ForeignKeyConstraint, String, Table, create_engine, event, text
from sqlalchemy.engine import make_url

import store
from store import (
    ArgumentCondition,
    CallQuery,
    DistributionError,
    TranscriptStore,
    search_calls,
    tool_usage,
)
from store.cli.main import cli
from store.db.schema import migrate
from store.db.schema.tables import metadata

if not CITUS_URL:
    if os.environ.get("TRANSCRIPT_STORE_REQUIRE_CITUS"):
        pytest.fail("TRANSCRIPT_STORE_REQUIRE_CITUS is set but TRANSCRIPT_STORE_CITUS_URL is not: "
                    "scripts/test-citus starts the cluster and sets it", pytrace=False)
    pytest.skip("TRANSCRIPT_STORE_CITUS_URL is not set (scripts/test-citus starts a local Citus "
                "cluster and runs this module; CI does)", allow_module_level=True)
pytestmark = pytest.mark.citus

SHARDS = 4


@pytest.fixture
def fresh(request: pytest.FixtureRequest) -> Iterator[Callable[..., str]]:
    """Make databases of this test's own on every node; dropped afterwards."""
    from citus_cluster import create_citus_database, drop_citus_database

    made: list[str] = []

    def make(suffix: str = "", **options: Any) -> str:
        name = f"ts_test_citus_{os.getpid()}_{len(made)}{suffix}"
        url = create_citus_database(name, coordinator_url=CITUS_URL, **options)
        made.append(url)
        return url

    yield make
    for url in made:
        drop_citus_database(url)


def chat_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def turns(n: int, tag: str = "") -> list[dict[str, Any]]:
    """``n`` turns: a user message, a call (bash, or the legacy name every third), a result."""
    records: list[dict[str, Any]] = []
    for i in range(n):
        name = "run_shell_command" if i % 3 == 2 else "bash"
        records += [
            {"role": "user", "content": f"step {i} {tag}"},
            {"role": "assistant", "content": None,
             "tool_calls": [chat_call(f"c{i}", name, {"command": f"ls {i} needle{tag}"})]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"out {i} haystack{tag}"},
        ]
    return records


def layout(url: str) -> dict[str, tuple[str, int | None]]:
    """table -> (Citus type, co-location id), from the coordinator's metadata."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT table_name::text, citus_table_type, colocation_id FROM citus_tables"))
            return {str(n): (str(k), int(c) if k == "distributed" else None) for n, k, c in rows}
    finally:
        engine.dispose()


def snapshot(opened: TranscriptStore, session_id: str) -> list[tuple[Any, ...]]:
    return [(m.position, m.key, m.message.role, m.message.text,
             [(c.id, c.name, c.arguments_text) for c in m.message.tool_calls])
            for m in opened.load(session_id)]


# -- db distribute ------------------------------------------------------------------------------


def test_distribute_moves_the_stored_rows_and_a_second_run_changes_nothing(fresh):
    url = fresh()
    store.upgrade_database(url)
    with TranscriptStore.open(url) as opened:
        for n in range(6):
            opened.append(f"s{n}", turns(3, str(n)), keys=[f"k{i}" for i in range(9)])
        before = {f"s{n}": snapshot(opened, f"s{n}") for n in range(6)}
    assert store.database_status(url).describe_distribution().startswith("not distributed")
    aliases = _count(url, "tool_aliases")
    seeds = _count(url, "alias_seeds")

    report = store.distribute_database(url, shard_count=SHARDS)

    outcome = {a.table: (a.kind, a.outcome, a.rows) for a in report.actions}
    assert outcome == {
        "tool_aliases": ("reference", "created", aliases),
        "sessions": ("distributed", "created", 6),
        "messages": ("distributed", "created", 54),
        "tool_calls": ("distributed", "created", 18),
        "tool_results": ("distributed", "created", 18),
        "tool_definitions": ("distributed", "created", 0),
        "message_search": ("distributed", "created", 0),  # the message index (revision 0017)
        "call_views": ("distributed", "created", 0),  # the argument views: the same
        "source_files": ("reference", "created", 0),  # capture (revision 0010)
        "session_sources": ("distributed", "created", 0),
        "findings": ("distributed", "created", 0),  # Sigma findings (revision 0009)
        "message_usage": ("distributed", "created", 0),  # token usage (revision 0008)
        # the per-session summaries (revision 0022): co-located, never filled on Citus
        "session_summaries": ("distributed", "created", 0),
        "tool_summary": ("distributed", "created", 0),
        "usage_summary": ("distributed", "created", 0),
        "context_summary": ("distributed", "created", 0),  # (revision 0027)
        "tombstones": ("distributed", "created", 0),  # trust (revision 0011)
        "session_holds": ("distributed", "created", 0),
        "call_secrets": ("distributed", "created", 0),
        "chain_heads": ("reference", "created", 0),
        "trust_keys": ("reference", "created", 1),  # the store's key, made by the revision
        "log_leaves": ("reference", "created", 0),  # the transparency log (revision 0018)
        "log_state": ("reference", "created", 1),  # its origin, made by the revision
        "alias_seeds": ("reference", "created", seeds),  # the vocabulary seeded (0020)
    }
    assert report.changed and report.shard_count == SHARDS and report.state.distributed
    tables = layout(url)
    assert tables["tool_aliases"] == ("reference", None)
    colocation = {tables[t][1] for t in ("sessions", "messages", "tool_calls", "tool_results",
                                         "tool_definitions", "call_views",
                                         "findings")}
    assert len(colocation) == 1 and None not in colocation
    assert "alembic_version" not in tables  # stays a local table of the coordinator
    engine = create_engine(url)
    with engine.connect() as conn:
        shards = conn.execute(text(
            "SELECT count(*), count(DISTINCT nodeport) FROM citus_shards "
            "WHERE table_name = 'messages'::regclass")).one()
        # the coordinator's own copy of the moved rows is gone: only the shards hold them
        local = conn.execute(text(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relname = 'messages' AND pg_relation_size(c.oid) > 0")).scalar_one()
    engine.dispose()
    assert tuple(shards) == (SHARDS, 2)  # spread over both workers
    assert local == 0
    with TranscriptStore.open(url) as opened:
        assert {f"s{n}": snapshot(opened, f"s{n}") for n in range(6)} == before
        assert opened.verify().ok

    again = store.distribute_database(url, shard_count=SHARDS + 4)

    assert [a.outcome for a in again.actions] == ["already"] * len(outcome)
    assert not again.changed
    assert again.notes and "ignored" in again.notes[0]  # the other shard count is not applied
    assert layout(url) == tables


def test_the_cli_says_what_it_did_and_db_check_reports_the_layout(fresh):
    url = fresh()
    runner = CliRunner()
    assert runner.invoke(cli, ["db", "upgrade", "--db", url]).exit_code == 0
    aliases = _count(url, "tool_aliases")

    first = runner.invoke(cli, ["db", "distribute", "--db", url, "--shard-count", str(SHARDS)])
    second = runner.invoke(cli, ["db", "distribute", "--db", url])
    check = runner.invoke(cli, ["db", "check", "--db", url])
    current = runner.invoke(cli, ["db", "current", "--db", url])
    as_json = runner.invoke(cli, ["db", "distribute", "--db", url, "--json"])

    assert first.exit_code == 0, first.output
    assert "sessions: now distributed by session_id, 4 shards, 0 rows moved" in first.output
    assert (f"tool_aliases: now reference table (a copy on every node), {aliases} rows moved"
            in first.output)
    assert ": distributed; distributed on Citus" in first.output
    assert second.exit_code == 0 and "already distributed, nothing changed" in second.output
    assert check.exit_code == 0 and "schema matches the code" in check.output
    assert ("17 tables by session_id in 4 co-located shards, reference: alias_seeds, "
            "chain_heads, log_leaves, log_state, source_files, tool_aliases, trust_keys"
            ) in check.output
    assert current.exit_code == 0 and "distributed on Citus" in current.output
    rows = [json.loads(line) for line in as_json.output.splitlines()]
    assert {r["table"]: r["outcome"] for r in rows} == dict.fromkeys(
        ("tool_aliases", "source_files", "sessions", "messages", "tool_definitions",
         "tool_calls", "tool_results", "message_search", "call_views",
         "session_sources", "message_usage", "findings", "tombstones", "session_holds",
         "call_secrets", "chain_heads", "trust_keys", "log_leaves", "log_state", "alias_seeds",
         "session_summaries", "tool_summary", "usage_summary", "context_summary"),
        "already")


def test_db_check_fails_on_a_partly_distributed_schema(fresh):
    url = fresh()
    store.upgrade_database(url)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("SELECT create_reference_table('tool_aliases')"))
        conn.execute(text(f"SELECT create_distributed_table('sessions', 'session_id', "
                          f"shard_count => {SHARDS})"))
    engine.dispose()

    result = CliRunner().invoke(cli, ["db", "check", "--db", url])

    assert result.exit_code == 1
    assert "PARTLY distributed" in result.output and "messages is local" in result.output
    # ``db distribute`` completes the layout
    report = store.distribute_database(url)
    assert {a.table for a in report.actions if a.outcome == "created"} == {
        "messages", "tool_calls", "tool_results", "tool_definitions", "message_search",
        "call_views", "source_files", "session_sources", "message_usage", "findings",
        "tombstones", "session_holds", "call_secrets", "chain_heads", "trust_keys",
        "log_leaves", "log_state", "alias_seeds", "session_summaries", "tool_summary",
        "usage_summary", "context_summary"}
    assert store.check_database(url).distributed


class TestRefusals:
    """Each refusal is a ``DistributionError`` whose ``problem`` says why, and leaves the
    database as it was."""

    def test_sqlite(self, tmp_path: Path):
        path = tmp_path / "store.sqlite"

        with pytest.raises(DistributionError) as caught:
            store.distribute_database(f"sqlite:///{path}")

        assert caught.value.problem == "not_citus" and "is sqlite" in str(caught.value)
        assert not path.exists()  # refused before anything was created

    def test_postgresql_without_citus(self):
        with pytest.raises(DistributionError) as caught:
            store.distribute_database(ADMIN_URL)

        assert caught.value.problem == "not_citus"
        assert "has no Citus extension" in str(caught.value)

    def test_a_schema_not_at_head(self, fresh):
        url = fresh()

        with pytest.raises(DistributionError) as caught:
            store.distribute_database(url)

        assert caught.value.problem == "not_at_head"
        assert "transcript-store db upgrade" in str(caught.value)

    def test_a_worker_instead_of_the_coordinator(self, fresh):
        from citus_cluster import worker_nodes

        url = fresh()
        host, port = worker_nodes(url)[0]
        worker_url = make_url(url).set(host=host, port=port).render_as_string(
            hide_password=False)

        with pytest.raises(DistributionError) as caught:
            store.distribute_database(worker_url)

        assert caught.value.problem == "not_coordinator"
        assert "not a Citus coordinator" in str(caught.value)

    def test_a_coordinator_without_workers(self, fresh):
        url = fresh()
        engine = create_engine(url)
        with engine.begin() as conn:
            for (port,) in conn.execute(text(
                    "SELECT nodeport FROM pg_dist_node WHERE groupid <> 0")).all():
                conn.execute(text(f"SELECT citus_remove_node('127.0.0.1', {port})"))
        engine.dispose()
        store.upgrade_database(url)

        with pytest.raises(DistributionError) as caught:
            store.distribute_database(url)

        assert caught.value.problem == "no_workers" and "citus_add_node" in str(caught.value)

    def test_a_worker_missing_pg_trgm(self, fresh):
        from citus_cluster import worker_nodes

        url = fresh()
        store.upgrade_database(url)  # CREATE EXTENSION pg_trgm reaches the workers ...
        host, port = worker_nodes(url)[1]
        dsn = psycopg.conninfo.conninfo_to_dict(_dsn(url))
        with psycopg.connect(host=host, port=port, user=dsn.get("user"),
                             dbname=dsn["dbname"], autocommit=True) as worker:
            worker.execute("SET citus.enable_ddl_propagation TO off")  # allowed on a worker
            worker.execute("DROP EXTENSION pg_trgm")  # ... and is then removed from one

        with pytest.raises(DistributionError) as caught:
            store.distribute_database(url)

        assert caught.value.problem == "missing_extension"
        assert f"{host}:{port} lacks pg_trgm" in str(caught.value)
        assert all(kind == "local" for kind in store.database_status(url).distribution
                   .tables.values())  # nothing was distributed

    def test_a_bad_shard_count(self):
        result = CliRunner().invoke(cli, ["db", "distribute", "--db", CITUS_URL,
                                          "--shard-count", "0"])

        assert result.exit_code == 2 and "--shard-count" in result.output


def _count(url: str, table: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
    finally:
        engine.dispose()


def _dsn(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


# -- migrations on a distributed schema ---------------------------------------------------------


@pytest.fixture
def distributed(fresh) -> str:
    """A distributed store holding two sessions."""
    url = fresh()
    store.upgrade_database(url)
    store.distribute_database(url, shard_count=SHARDS)
    with TranscriptStore.open(url) as opened:
        opened.append("a", turns(4, "a"), keys=[f"a{i}" for i in range(12)])
        opened.append("b", turns(2, "b"))
    return url


@pytest.mark.parametrize("down_to", ["0001", "0003"])
def test_the_revisions_go_down_and_up_again_on_a_distributed_schema(distributed, down_to):
    url = distributed
    with TranscriptStore.open(url) as opened:
        before = [snapshot(opened, s) for s in ("a", "b")]
    tables = layout(url)
    engine = create_engine(url)
    try:
        assert migrate.downgrade(engine, down_to) == down_to
        assert store.database_status(url).distributed  # dropped columns and indexes only
        assert migrate.upgrade(engine) == migrate.head()
    finally:
        engine.dispose()

    status = store.check_database(url)  # at head, the tables match the code

    assert status.distributed and layout(url) == tables
    with TranscriptStore.open(url) as opened:
        assert [snapshot(opened, s) for s in ("a", "b")] == before
        assert search_calls(opened, CallQuery(text="needlea"))  # the trigram index is back


TEST_REVISION = '''"""a test revision: what a future revision may do on a distributed schema

Revision ID: 9001
Revises: {head}
"""
import sqlalchemy as sa
from alembic import op

revision = "9001"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade():
    # a data change over every shard (parallel, unless the glue makes it sequential) ...
    op.execute("UPDATE messages SET source = coalesce(source, 'unknown')")
    # ... then new tables (Citus would leave them local) ...
    op.create_table(
        "tool_kinds",
        sa.Column("kind", sa.String(), primary_key=True),
    )
    op.create_table(
        "session_notes",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("note_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), sa.ForeignKey("tool_kinds.kind")),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("session_id", "note_id"),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.session_id"], ondelete="CASCADE"),
    )
    op.create_index("ix_session_notes_kind", "session_notes", ["kind"])
    # ... and a foreign key from a distributed table to the new one, in the same transaction
    op.add_column("tool_definitions", sa.Column("kind", sa.String(), nullable=True))
    op.create_foreign_key("fk_tool_definitions_kind", "tool_definitions", "tool_kinds",
                          ["kind"], ["kind"])
    op.execute("INSERT INTO tool_kinds VALUES ('shell')")
    op.execute("INSERT INTO session_notes SELECT session_id, 0, 'shell', 'first note' "
               "FROM sessions")


def downgrade():
    op.drop_constraint("fk_tool_definitions_kind", "tool_definitions", type_="foreignkey")
    op.drop_column("tool_definitions", "kind")
    op.drop_table("session_notes")
    op.drop_table("tool_kinds")
'''


def test_a_new_revision_applies_to_a_distributed_schema(distributed, tmp_path, monkeypatch):
    """A revision that mixes a multi-shard UPDATE with DDL, creates tables and adds a foreign
    key to one of them: plain Alembic, as it would be written for one server."""
    url = distributed
    scripts = tmp_path / "migrations"
    shutil.copytree(migrate.script_location(), scripts,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (scripts / "versions" / "9001_test.py").write_text(
        TEST_REVISION.replace("{head}", migrate.head()), encoding="utf-8")
    monkeypatch.setattr(migrate, "script_location", lambda: str(scripts))
    # the code's tables gain the new ones too (as a real revision's tables.py change would)
    kinds = Table("tool_kinds", metadata, Column("kind", String, primary_key=True))
    notes = Table("session_notes", metadata, Column("session_id", String, primary_key=True),
                  Column("note_id", String, primary_key=True),
                  ForeignKeyConstraint(["session_id"], ["sessions.session_id"]))
    engine = create_engine(url)
    try:
        assert migrate.upgrade(engine) == "9001"
        tables = layout(url)
        assert tables["tool_kinds"] == ("reference", None)
        assert tables["session_notes"] == ("distributed", tables["sessions"][1])  # co-located
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM session_notes")).scalar_one() == 2
            assert conn.execute(text(
                "SELECT count(*) FROM citus_shards WHERE table_name = 'session_notes'::regclass"
            )).scalar_one() == SHARDS
        assert store.database_status(url).distributed

        assert migrate.downgrade(engine, "-1") != "9001"
    finally:
        engine.dispose()
        metadata.remove(notes)
        metadata.remove(kinds)
        monkeypatch.undo()  # the real scripts again: head is the library's
    assert "session_notes" not in layout(url)
    assert store.check_database(url).distributed
    with TranscriptStore.open(url) as opened:
        assert len(opened.load("a")) == 12


def test_without_the_glue_citus_refuses_that_revision(distributed):
    """The proof that the sequential mode is needed: the same statements, run without it."""
    engine = create_engine(url := distributed)
    try:
        with pytest.raises(Exception, match="parallel operation"), engine.begin() as conn:
            conn.execute(text("UPDATE messages SET source = coalesce(source, 'unknown')"))
            conn.execute(text("CREATE TABLE tool_kinds (kind text PRIMARY KEY)"))
            conn.execute(text("SELECT create_reference_table('tool_kinds')"))
            conn.execute(text("ALTER TABLE tool_definitions ADD COLUMN kind text "
                              "REFERENCES tool_kinds(kind)"))
    finally:
        engine.dispose()
    assert "tool_kinds" not in layout(url)


# -- routing: one shard per session, all shards for audits --------------------------------------


class Recorder:
    """Every statement the store sends, with its values (a psycopg cursor class)."""

    def __init__(self, opened: TranscriptStore) -> None:
        self.statements: list[tuple[str, Any]] = []
        recorder = self

        class Cursor(psycopg.Cursor):  # type: ignore[type-arg]
            def execute(self, query, params=None, **kw):  # type: ignore[no-untyped-def]
                recorder.statements.append((str(query), params))
                return super().execute(query, params, **kw)

            def executemany(self, query, params_seq, **kw):  # type: ignore[no-untyped-def]
                params_seq = list(params_seq)
                recorder.statements.append((str(query), params_seq[0] if params_seq else None))
                return super().executemany(query, params_seq, **kw)

        event.listen(opened.engine, "connect",
                     lambda dbapi, _: setattr(dbapi, "cursor_factory", Cursor))
        opened.engine.dispose()  # new connections from here on

    def flight_queue(self, queue: Callable[..., int]) -> Callable[..., int]:
        """An append's statements go through store.db.writing.flight (bound on the client, sent
        together): record each one as it is queued (its values are already in its text)."""
        recorder = self

        def recording(flight: Any, statement: str) -> int:
            recorder.statements.append((statement, None))
            return queue(flight, statement)

        return recording

    def plans(self, url: str, work: Callable[[], object]) -> list[tuple[str, str]]:
        """(statement, plan) of each data statement ``work`` sends."""
        self.statements.clear()
        work()
        out = []
        with psycopg.connect(_dsn(url), autocommit=True) as conn:
            for sql, params in self.statements:
                if not re.match(r"\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b", sql, re.I) or re.search(
                        r"pg_catalog|pg_extension|pg_dist|citus|alembic_version|pg_tables|"
                        r"obj_description", sql):
                    continue
                # values inlined: Citus plans INSERT ... SELECT without the bound parameters
                literal = (psycopg.ClientCursor(conn).mogrify(sql, params) if params is not None
                           else sql)
                plan = "\n".join(str(r[0]) for r in conn.execute(f"EXPLAIN {literal}"))
                out.append((sql, plan))
        return out


def task_counts(plans: list[tuple[str, str]]) -> list[int]:
    counts = []
    for sql, plan in plans:
        found = re.search(r"Task Count: (\d+)", plan)
        assert found, f"not a Citus plan for {sql[:200]}:\n{plan}"
        counts.append(int(found.group(1)))
    return counts


@pytest.fixture
def routed(citus_url: str, monkeypatch: pytest.MonkeyPatch
           ) -> Iterator[tuple[TranscriptStore, Recorder]]:
    from backends import empty_postgres

    from store.db.writing.flight import Flight

    empty_postgres(citus_url)
    with TranscriptStore.open(citus_url) as opened:
        for n in range(8):  # sessions on every shard
            opened.append(f"other{n}", turns(2, f"o{n}"))
        recorder = Recorder(opened)
        monkeypatch.setattr(Flight, "_queue", recorder.flight_queue(Flight._queue))
        yield opened, recorder


def test_per_session_operations_touch_one_shard(routed, citus_url):
    opened, recorder = routed
    keys = [f"k{i}" for i in range(12)]
    operations: dict[str, Callable[[], object]] = {
        "append (new session)": lambda: opened.append("one", turns(4, "x"), keys=keys),
        "append (idempotent repeat)": lambda: opened.append("one", turns(4, "x"), keys=keys),
        "append (more)": lambda: opened.append("one", turns(1, "y")),
        "load": lambda: opened.load("one"),
        "window (last turns)": lambda: opened.load("one", last_turns=2),
        "window (since position)": lambda: opened.load("one", since_position=5),
        "search index catch-up": opened.update_search_index,
        "search in a session (text)": lambda: search_calls(
            opened, CallQuery(session_id="one", text="needlex")),
        "search in a session (argument contains)": lambda: search_calls(opened, CallQuery(
            session_id="one", where=(ArgumentCondition("command", "contains", "needlex"),))),
        "search in a session (tool)": lambda: search_calls(
            opened, CallQuery(session_id="one", tool="bash")),
        "usage of a session": lambda: tool_usage(opened, session_id="one"),
        "count": lambda: opened.count_calls("one"),
        "verify a session": lambda: opened.verify("one"),
        "truncate": lambda: opened.truncate("one", 9),
        "delete": lambda: opened.delete_session("other0"),
    }
    for label, work in operations.items():
        plans = recorder.plans(citus_url, work)

        assert plans, label
        if label == "search index catch-up":
            # a store-wide pass (not part of any one session's work): finding the lagging
            # sessions asks every shard, then each session is locked, read, indexed and its
            # watermark moved on its own shard
            # (and, issue 23, the statistics check of the tables it filled is store-wide too)
            # (a reference table's read, such as the store key of the secret digests, is one
            # task on the coordinator's copy)
            # (and an INSERT ... VALUES carries its session id: one shard)
            scans = ["session_id =" not in sql
                     and not re.search(r"FROM (trust_keys|tool_aliases)\b", sql)
                     and not re.match(r"INSERT INTO \w+ \([^)]*\) VALUES", sql)
                     for sql, _ in plans]
            assert any("next_position > indexed_position" in sql for sql, _ in plans)
            assert any(scans) and not all(scans)
            wrong = [(sql[:200], count) for (sql, _), count, scan
                     in zip(plans, task_counts(plans), scans, strict=True)
                     if count != (SHARDS if scan else 1)]
            assert not wrong, wrong
            continue
        if label in ("truncate", "delete"):
            # a removal first logs every message committed before it (the transparency log is
            # one tree in append order, issue 38): finding the sessions the log lags behind
            # asks every shard; the removal itself stays on its session's shard
            log_scan = ["next_position > logged_position" in sql for sql, _ in plans]
            plans = [plan for plan, scan in zip(plans, log_scan, strict=True) if not scan]
        assert task_counts(plans) == [1] * len(plans), (label, [
            (sql[:120], plan) for sql, plan in plans if "Task Count: 1\n" not in plan + "\n"])
    assert [m.position for m in opened.load("one")] == list(range(9))


def test_cross_session_audits_run_on_every_shard_as_distributed_aggregates(routed, citus_url):
    opened, recorder = routed
    usage = recorder.plans(citus_url, lambda: tool_usage(opened))
    search = recorder.plans(citus_url, lambda: search_calls(opened, CallQuery(tool="bash")))

    plans = usage + search
    # Lookups keyed by the matched sessions (a page's first results) go to those sessions'
    # shards only; every other statement but the alias read (a reference table: 1 task)
    # runs on every shard.
    keyed = [bool(re.search(r"session_id = |session_id IN \(|unnest\(|= ANY", sql))
             for sql, _ in plans]
    counts = task_counts(plans)
    spread = [c for c, k in zip(counts, keyed, strict=True) if not k and c != 1]
    assert spread and set(spread) == {SHARDS}, [
        (sql[:300], c) for (sql, _), c, k in zip(plans, counts, keyed, strict=True)
        if not k and c not in (1, SHARDS)]
    assert all(1 <= c <= SHARDS for c, k in zip(counts, keyed, strict=True) if k)
    grouped = [plan for sql, plan in usage if "GROUP BY" in sql]
    # grouped on each shard, the partial results combined on the coordinator
    assert grouped and all("remote_scan" in plan and "Aggregate" in plan for plan in grouped)
    rows = {row.name: row.calls for row in tool_usage(opened)}
    assert rows == {"bash": 16}  # run_shell_command is an alias of bash


def test_fork_into_a_session_on_another_shard(routed, citus_url):
    opened, recorder = routed
    opened.append("source", turns(5, "f"), keys=[f"f{i}" for i in range(15)])
    opened.record_tools("source", [{"type": "function", "function": {
        "name": "bash", "description": "run", "parameters": {"type": "object"}}}])
    engine = create_engine(citus_url)
    with engine.connect() as conn:
        def shard(session: str) -> int:
            return int(conn.execute(text(
                "SELECT get_shard_id_for_distribution_column('sessions', CAST(:s AS text))"),
                {"s": session}).scalar_one())
        target = next(f"fork{n}" for n in range(100) if shard(f"fork{n}") != shard("source"))
    engine.dispose()

    plans = recorder.plans(citus_url, lambda: opened.fork("source", 9, target))

    copies = [plan for sql, plan in plans if "INSERT" in sql and "SELECT" in sql]
    assert len(copies) == 4  # messages, calls, results, definitions
    assert all("Citus INSERT ... SELECT" in plan for plan in copies)
    assert all("Task Count: 1" in plan for plan in copies)  # read from the source's shard only
    forked = opened.load(target)
    assert snapshot(opened, target) == snapshot(opened, "source")[:9]
    assert [c.result.text for c in forked.calls()] == [
        c.result.text for c in opened.load("source").calls()][:3]
    assert [d.name for d in opened.tool_definitions(target)] == ["bash"]
    assert opened.get_session(target).metadata["forked_from"] == {"session_id": "source",
                                                                   "position": 9}
    assert opened.verify(target).ok


def test_an_append_takes_one_round_trip_and_a_load_one_on_citus(citus_url: str) -> None:
    """Issue 28's counts on the coordinator, through the benchmark's counting proxy: the
    flights of store/db/writing/flight.py are router statements there too."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from roundtrips import DelayProxy

    url = make_url(citus_url)
    proxy = DelayProxy((url.host or "127.0.0.1", url.port or 5432), 0.0)
    try:
        proxied = url.set(port=proxy.port).render_as_string(hide_password=False)
        with TranscriptStore.open(proxied) as db:
            sid = f"rt-{os.getpid()}"
            records = turns(3, "rt")
            db.append(sid, records[:1], keys=["k0"])  # warm: a pooled connection
            counts = []
            for n, record in enumerate(records[1:], start=1):
                proxy.reset()
                db.append(sid, [record], keys=[f"k{n}"])
                counts.append(proxy.reset())
            # (the first append read the session; from then on one flight each)
            assert counts == [1] * len(counts)
            db.append(f"{sid}-new", records[:1])
            proxy.reset()
            db.append(f"{sid}-other", records[:1])
            assert proxy.reset() == 2  # a session the store has not appended to: two
            db.load(sid)
            proxy.reset()
            transcript = db.load(sid)
            assert proxy.reset() == 1
            assert [c.result.content for c in transcript.calls() if c.result] == [
                "out 0 haystackrt", "out 1 haystackrt", "out 2 haystackrt"]
    finally:
        proxy.close()
