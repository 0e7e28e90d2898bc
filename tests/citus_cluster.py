"""A throw-away database on a running Citus cluster, for the tests and the benchmark.

``TRANSCRIPT_STORE_CITUS_URL`` names a database on a Citus coordinator whose worker nodes are
registered (``citus_add_node``). PostgreSQL's ``CREATE DATABASE`` is not propagated by Citus,
so :func:`create_citus_database` creates the new database on the coordinator **and on every
worker** (same user, same credentials), installs ``citus`` (and, unless told otherwise,
``pg_trgm``) in each, and registers the workers with the new coordinator database.
:func:`drop_citus_database` removes it from every node again.

These helpers are only used when the variable is set: ``scripts/test-citus`` (CI runs it)
starts a local cluster with ``../shared/tools/citus-cluster`` and sets it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url

CITUS_URL = os.environ.get("TRANSCRIPT_STORE_CITUS_URL", "")


def _sa_url(url: str | URL) -> URL:
    parsed = make_url(url)
    return parsed.set(drivername="postgresql+psycopg")


def _run(url: URL, statements: Iterable[str]) -> list[list[tuple[object, ...]]]:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            results = []
            for statement in statements:
                result = conn.execute(text(statement))
                results.append([tuple(r) for r in result] if result.returns_rows else [])
            return results
    finally:
        engine.dispose()


def worker_nodes(url: str | URL) -> list[tuple[str, int]]:
    """The active primary workers registered with the coordinator database at ``url``."""
    rows = _run(_sa_url(url), [
        "SELECT nodename, nodeport FROM pg_dist_node WHERE noderole = 'primary' "
        "AND isactive AND groupid <> 0 ORDER BY nodeport"
    ])[0]
    return [(str(host), int(str(port))) for host, port in rows]


def _node_url(base: URL, host: str, port: int, database: str) -> URL:
    return base.set(host=host, port=port, database=database)


def create_citus_database(name: str, *, coordinator_url: str | URL = CITUS_URL,
                          worker_extensions: tuple[str, ...] = ("pg_trgm",)) -> str:
    """Create database ``name`` on the coordinator and every worker; return its URL."""
    base = _sa_url(coordinator_url)
    workers = worker_nodes(base)
    nodes = [(str(base.host), int(base.port or 5432)), *workers]
    for host, port in nodes:
        admin = _node_url(base, host, port, "postgres")
        _run(admin, [f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"'])
    coordinator = _node_url(base, *nodes[0], name)
    for host, port in workers:
        _run(_node_url(base, host, port, name), [
            "CREATE EXTENSION citus",
            *(f"CREATE EXTENSION {ext}" for ext in worker_extensions),
        ])
    _run(coordinator, [
        "CREATE EXTENSION citus",
        f"SELECT citus_set_coordinator_host('{nodes[0][0]}', {nodes[0][1]})",
        *(f"SELECT citus_add_node('{host}', {port})" for host, port in workers),
    ])
    return coordinator.render_as_string(hide_password=False)


def drop_citus_database(url: str | URL) -> None:
    """Drop the database at ``url`` from the coordinator and from every worker."""
    base = _sa_url(url)
    name = str(base.database)
    workers = worker_nodes(base)
    for host, port in [(str(base.host), int(base.port or 5432)), *workers]:
        _run(_node_url(base, host, port, "postgres"),
             [f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'])
