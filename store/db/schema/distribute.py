"""Scale out on Citus: distribute the store by session (persistence layer).

On a Citus coordinator, after ``db upgrade``, :func:`distribute` turns every table that has a
``session_id`` column into a hash-distributed table keyed by ``session_id``, all co-located
with ``sessions`` (a session's messages, calls, results and definitions live in one shard
group, so every per-session statement is routed to one shard and the foreign keys hold
shard-locally), and every other table of the schema (``tool_aliases``) into a reference table
(a copy on every node, joinable locally with any shard). ``alembic_version`` stays a local
table of the coordinator. The plan is derived from :data:`store.db.schema.tables.metadata`, so a
table
added by a later revision is covered without editing this module; :data:`LOCAL_TABLES` and
:data:`REFERENCE_TABLES` override the rule, :data:`SQL_TABLES` adds the tables created by SQL
(the message index: ``message_search``, co-located too, so that its catch-up is a shard-local
``INSERT ... SELECT`` and a search joins it to the messages on each shard).

Distribution is idempotent (tables already in the right form are left alone), runs in one
transaction (it all happens or nothing does), moves the rows already stored into the shards,
and refuses with a :class:`~store.core.errors.DistributionError` naming the problem on a server
without Citus, on a worker node, on a cluster without workers, on workers missing an extension
the schema needs (``pg_trgm``) and on a schema that is not at head.

:func:`distribution_state` reads what Citus knows about the tables; ``db check`` / ``db upgrade``
/ ``db current`` report it, and :mod:`store.db.schema.migrate` uses it so that a revision applied
to a
distributed schema leaves it distributed (see :func:`prepare_migration` and
:func:`distributing_new_tables`, :func:`finish_migration`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import Connection, Engine, ForeignKeyConstraint, Table, event, text
from sqlalchemy.schema import AddConstraint

from store.core.errors import DistributionError, UsageError
from store.db.schema.citusprobe import citus_version, is_citus
from store.db.schema.tables import metadata

__all__ = [
    "DEFAULT_SHARD_COUNT",
    "LOCAL_TABLES",
    "REFERENCE_TABLES",
    "REQUIRED_EXTENSIONS",
    "DistributionReport",
    "DistributionState",
    "TableAction",
    "citus_version",
    "distribute",
    "distribution_plan",
    "distributing_new_tables",
    "distribution_state",
    "finish_migration",
    "is_citus",
    "prepare_migration",
]

#: Shards per distributed table. 32 (Citus' own default) lets a cluster grow to 32 workers by
#: moving shards (``citus_rebalance_start``) without splitting any; each shard is one table per
#: worker, so far more shards only add planning and DDL fan-out cost on small clusters.
DEFAULT_SHARD_COUNT = 32

#: Tables that stay on the coordinator only.
LOCAL_TABLES: frozenset[str] = frozenset({"alembic_version"})
#: Tables copied to every node whatever their columns (global vocabularies, small).
REFERENCE_TABLES: frozenset[str] = frozenset({"tool_aliases"})
#: Tables that revisions create with SQL on PostgreSQL, outside ``store/db/schema/tables.py`` (the
#: search index of ``store/db/index/search_index.py``, revision 0005), and the form they take.
SQL_TABLES: dict[str, Kind] = {"message_search": "distributed"}
#: The distribution column, and the table every distributed table is co-located with.
DISTRIBUTION_COLUMN = "session_id"
ANCHOR_TABLE = "sessions"
#: Extensions the schema needs on every node (revision 0004's trigram indexes).
REQUIRED_EXTENSIONS = ("pg_trgm",)

Kind = Literal["distributed", "reference"]
CitusKind = Literal["distributed", "reference", "local", "absent"]


def distribution_plan() -> list[tuple[str, Kind]]:
    """Every table of the schema with the form it takes on Citus, in creation order
    (referenced tables first: reference tables, then ``sessions``, then the rest)."""
    plan: list[tuple[str, Kind]] = []
    for table in metadata.sorted_tables:
        if table.name in LOCAL_TABLES:
            continue
        plan.append((table.name, _kind(table)))
    plan.extend(SQL_TABLES.items())
    plan.sort(key=lambda item: (item[1] == "distributed", item[0] != ANCHOR_TABLE))
    return plan  # sort is stable: within each group the foreign-key order stays


def _kind(table: Table) -> Kind:
    if table.name in REFERENCE_TABLES or DISTRIBUTION_COLUMN not in table.c:
        return "reference"
    return "distributed"


@dataclass(frozen=True, slots=True)
class DistributionState:
    """What Citus knows about the store's tables on one database."""

    citus_version: str
    #: table -> distributed | reference | local (a plain table) | absent (not created yet)
    tables: dict[str, CitusKind]
    #: shards of each distributed table
    shard_counts: dict[str, int]
    #: co-location group of each distributed table
    colocation: dict[str, int]
    workers: tuple[str, ...]

    @property
    def distributed(self) -> bool:
        """``sessions`` is distributed, every other table of the plan that exists is in its
        form, and the distributed ones are co-located (a table a downgrade removed does not
        count: the upgrade that re-creates it distributes it)."""
        present = [(n, k) for n, k in distribution_plan() if self.tables.get(n) != "absent"]
        return (self.tables.get(ANCHOR_TABLE) == "distributed"
                and all(self.tables.get(name) == kind for name, kind in present)
                and len({self.colocation.get(n) for n, k in present if k == "distributed"}) == 1)

    @property
    def partly(self) -> bool:
        """Some but not all of the plan is distributed (an interrupted or outdated layout)."""
        return not self.distributed and any(
            kind in ("distributed", "reference") for kind in self.tables.values())

    @property
    def shard_count(self) -> int | None:
        counts = set(self.shard_counts.values())
        return counts.pop() if len(counts) == 1 else None

    def describe(self) -> str:
        """One line: distributed or not, and how."""
        if self.distributed:
            dist = [n for n, k in self.tables.items() if k == "distributed"]
            ref = [n for n, k in self.tables.items() if k == "reference"]
            return (f"distributed on Citus {self.citus_version} ({len(self.workers)} workers): "
                    f"{len(dist)} tables by session_id in {self.shard_count} co-located shards, "
                    f"reference: {', '.join(ref)}")
        if self.partly:
            wrong = [f"{n} is {self.tables.get(n, 'absent')} (should be {k})"
                     for n, k in distribution_plan() if self.tables.get(n) != k]
            return ("PARTLY distributed on Citus " + self.citus_version + ": "
                    + "; ".join(wrong) + ": run `transcript-store db distribute`")
        return (f"not distributed (Citus {self.citus_version} is installed, "
                f"{len(self.workers)} workers): run `transcript-store db distribute` to scale out")


@dataclass(frozen=True, slots=True)
class TableAction:
    """What :func:`distribute` did with one table."""

    table: str
    kind: Kind
    #: created (this run distributed it) | already (it was in that form)
    outcome: Literal["created", "already"]
    #: rows moved from the coordinator into shards (0 when already distributed)
    rows: int = 0


@dataclass(frozen=True, slots=True)
class DistributionReport:
    """The result of :func:`distribute`: per table what happened, and the layout now."""

    url: str
    shard_count: int
    actions: tuple[TableAction, ...]
    state: DistributionState
    notes: tuple[str, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return any(a.outcome == "created" for a in self.actions)


# -- reading what Citus knows ------------------------------------------------------------------


def distribution_state(conn: Connection) -> DistributionState | None:
    """The Citus layout of the store's tables, ``None`` when the database has no Citus."""
    version = citus_version(conn)
    if version is None:
        return None
    present = set(conn.execute(text(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")).scalars())
    tables: dict[str, CitusKind] = {
        name: ("local" if name in present else "absent") for name, _ in distribution_plan()}
    shard_counts: dict[str, int] = {}
    colocation: dict[str, int] = {}
    # Citus' metadata tables, not the citus_tables view: the view sizes every shard over new
    # connections to the workers, which wait for the locks of the caller's own transaction
    # (a migration's DDL) and hang it.
    rows = conn.execute(text(
        "SELECT c.relname, p.partmethod, p.repmodel, p.colocationid, "
        "(SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid) "
        "FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()"))
    for name, method, model, colocation_id, shards in rows:
        name = str(name)
        if name not in tables:
            continue
        if method == "h":
            tables[name] = "distributed"
            shard_counts[name] = int(shards)
            colocation[name] = int(colocation_id)
        elif method == "n" and model == "t":
            tables[name] = "reference"
        # "local": a Citus local table (added to the metadata by a foreign key to a reference
        # table) is still a coordinator-only table
    workers = tuple(f"{host}:{port}" for host, port in conn.execute(text(
        "SELECT nodename, nodeport FROM pg_dist_node WHERE noderole = 'primary' AND isactive "
        "AND groupid <> 0 ORDER BY nodename, nodeport")))
    return DistributionState(str(version), tables, shard_counts, colocation, workers)


def _preflight(conn: Connection, url: str) -> tuple[str, ...]:
    """Refuse (``DistributionError``) a database that cannot be distributed."""
    if conn.dialect.name != "postgresql":
        raise DistributionError(
            "not_citus", f"{url} is {conn.dialect.name}: only a PostgreSQL server with the "
            "Citus extension (a Citus coordinator) can be distributed")
    if citus_version(conn) is None:
        available = conn.execute(text(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'citus'")).first()
        loaded = "citus" in str(conn.execute(text(
            "SELECT current_setting('shared_preload_libraries')")).scalar())
        hint = ("run CREATE EXTENSION citus on every node and register the workers "
                "(citus_add_node)" if available and loaded else
                "Citus is installed but not loaded: add it to shared_preload_libraries and "
                "restart, on every node" if available else
                "the server has no Citus installed (Citus is not part of PostgreSQL: "
                "install it on every node, with shared_preload_libraries = 'citus')")
        raise DistributionError("not_citus", f"{url} has no Citus extension: {hint}")
    if not conn.execute(text("SELECT citus_is_coordinator()")).scalar():
        raise DistributionError(
            "not_coordinator", f"{url} is not a Citus coordinator: connect to the coordinator "
            "(a database with registered workers), not to a worker")
    workers = conn.execute(text(
        "SELECT nodename, nodeport FROM pg_dist_node WHERE noderole = 'primary' AND isactive "
        "AND groupid <> 0 ORDER BY nodename, nodeport")).all()
    if not workers:
        raise DistributionError(
            "no_workers", f"{url}: the Citus coordinator has no active worker nodes: add them "
            "with SELECT citus_add_node('<host>', <port>) (their database needs "
            "CREATE EXTENSION citus first)")
    missing: list[str] = []
    for ext in REQUIRED_EXTENSIONS:
        query = ("SELECT nodename, nodeport, success, result FROM run_command_on_workers("
                 f"$$SELECT count(*) FROM pg_extension WHERE extname = '{ext}'$$)")
        for host, port, success, result in conn.execute(text(query)):
            if not success:
                raise DistributionError(
                    "worker_unreachable", f"{url}: worker {host}:{port} does not answer: "
                    f"{result}")
            if str(result) != "1":
                missing.append(f"{host}:{port} lacks {ext}")
    if missing:
        raise DistributionError(
            "missing_extension", f"{url}: workers miss extensions the schema needs: "
            f"{'; '.join(missing)}: run CREATE EXTENSION on them (in this database; the "
            "extension must be installed there, e.g. PostgreSQL's contrib package)")
    return tuple(f"{host}:{port}" for host, port in workers)


def _rows(conn: Connection, table: str) -> int:
    return int(conn.execute(text(f'SELECT count(*) FROM ONLY "{table}"')).scalar() or 0)


def distribute(engine: Engine, url: str, *, shard_count: int | None = None,
               revision: tuple[str | None, str] | None = None) -> DistributionReport:
    """Distribute the store's tables (see the module docstring); idempotent. ``shard_count``
    (default :data:`DEFAULT_SHARD_COUNT`) applies when ``sessions`` is not distributed yet;
    ``revision`` (the database's, head) refuses a schema not at head."""
    asked = shard_count
    shard_count = DEFAULT_SHARD_COUNT if shard_count is None else shard_count
    if not 1 <= shard_count <= 64000:
        raise UsageError(f"shard_count must be between 1 and 64000, got {shard_count}")
    with engine.begin() as conn:
        _preflight(conn, url)
        if revision is not None and revision[0] != revision[1]:
            raise DistributionError(
                "not_at_head", f"database {url} is at revision {revision[0] or 'none'}, head "
                f"is {revision[1]}: run `transcript-store db upgrade` first")
        state = distribution_state(conn)
        assert state is not None
        absent = [n for n, k in state.tables.items() if k == "absent"]
        if absent:
            raise DistributionError(
                "not_at_head", f"{url}: tables {', '.join(absent)} do not exist: run "
                "`transcript-store db upgrade` first")
        existing = state.shard_counts.get(ANCHOR_TABLE)
        notes: list[str] = []
        if existing is not None and asked is not None and asked != existing:
            notes.append(
                f"sessions is distributed with {existing} shards already, and every table is "
                f"co-located with it: shard count {asked} is ignored (Citus' "
                "alter_distributed_table(..., shard_count => n, cascade_to_colocated => true) "
                "changes it)")
        actions = _apply(conn, state, shard_count)
        after = distribution_state(conn)
        assert after is not None
    return DistributionReport(url, after.shard_count or shard_count, tuple(actions), after,
                              tuple(notes))


def _distribute_one(conn: Connection, name: str, kind: Kind, shard_count: int) -> TableAction:
    rows = _rows(conn, name)
    if kind == "reference":
        conn.execute(text("SELECT create_reference_table(:t)"), {"t": name})
    elif name == ANCHOR_TABLE:
        conn.execute(text(
            "SELECT create_distributed_table(:t, :col, shard_count => :n, "
            "colocate_with => 'none')"), {"t": name, "col": DISTRIBUTION_COLUMN,
                                          "n": shard_count})
    else:
        conn.execute(text(
            "SELECT create_distributed_table(:t, :col, colocate_with => :anchor)"),
            {"t": name, "col": DISTRIBUTION_COLUMN, "anchor": ANCHOR_TABLE})
    return TableAction(name, kind, "created", rows)


def _apply(conn: Connection, state: DistributionState, shard_count: int) -> list[TableAction]:
    """Distribute what is not yet; in the caller's transaction."""
    # One connection per node for the whole transaction: the DDL that follows the copies
    # (co-location, foreign keys between shards) must see the rows those connections wrote.
    conn.execute(text("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'"))
    actions: list[TableAction] = []
    moved: list[str] = []
    for name, kind in distribution_plan():
        if state.tables.get(name) == kind:
            actions.append(TableAction(name, kind, "already"))
            continue
        action = _distribute_one(conn, name, kind, shard_count)
        if action.rows:
            moved.append(name)
        actions.append(action)
    for name in moved:  # the coordinator's own copy of the rows now in the shards
        conn.execute(text("SELECT truncate_local_data_after_distributing_table(:t)"),
                     {"t": name})
    return actions


# -- migrations on a distributed schema -------------------------------------------------------


def prepare_migration(conn: Connection) -> DistributionState | None:
    """Before revisions run on ``conn`` (inside the migration's transaction): on Citus, one
    connection per node for the transaction (``multi_shard_modify_mode = sequential``), so that
    a revision may mix data changes over all shards with DDL (``ALTER TABLE``, foreign keys,
    ``CREATE INDEX``) that Citus refuses after a parallel multi-shard statement. Returns the
    layout before the migration (``None`` off Citus)."""
    state = distribution_state(conn)
    if state is not None:
        conn.execute(text("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'"))
    return state


@contextmanager
def distributing_new_tables(conn: Connection, before: DistributionState | None
                            ) -> Iterator[list[TableAction]]:
    """While revisions run on a distributed schema: every table a revision creates
    (``op.create_table``) is distributed at once, by the rule of :func:`distribution_plan`
    (a ``session_id`` column: co-located with ``sessions``; else a reference table), so that
    the same revision can go on to add foreign keys to it or from it (Citus does not
    propagate ``CREATE TABLE``: the new table would stay a local table of the coordinator,
    which no distributed table may reference). Its own foreign keys are added once it is
    distributed (Citus refuses them on a local table). Yields the list of what it did."""
    done: list[TableAction] = []
    if before is None or not before.distributed:
        yield done
        return
    shards = before.shard_count or DEFAULT_SHARD_COUNT
    deferred: dict[str, list[ForeignKeyConstraint]] = {}

    def creating(table: Table, connection: Connection, **_: Any) -> None:
        # Citus refuses a new local table with a foreign key to a distributed table (and one
        # to a reference table turns it into a "Citus local table"): create it without its
        # foreign keys, distribute it, then add them.
        if connection is not conn or table.name in LOCAL_TABLES:
            return
        keys = [c for c in table.constraints if isinstance(c, ForeignKeyConstraint)]
        for key in keys:
            table.constraints.discard(key)
        deferred[table.name] = keys

    def created(table: Table, connection: Connection, **_: Any) -> None:
        if connection is not conn or table.name in LOCAL_TABLES:
            return
        done.append(_distribute_one(conn, table.name, _kind(table), shards))
        for key in deferred.pop(table.name, []):
            table.constraints.add(key)
            conn.execute(AddConstraint(key))

    event.listen(Table, "before_create", creating)
    event.listen(Table, "after_create", created)
    try:
        yield done
    finally:
        event.remove(Table, "after_create", created)
        event.remove(Table, "before_create", creating)


def finish_migration(conn: Connection, before: DistributionState | None) -> list[TableAction]:
    """After revisions ran on a schema that was distributed: distribute any table of the plan
    that is still local (one a revision created with raw SQL), in the same transaction.
    Nothing to do when the schema was not distributed."""
    if before is None or not before.distributed:
        return []
    after = distribution_state(conn)
    if after is None or after.distributed:
        return []
    if after.tables.get(ANCHOR_TABLE) != "distributed":
        return []  # a downgrade below the tables' creation: nothing left to distribute
    return _apply(conn, after, before.shard_count or DEFAULT_SHARD_COUNT)
