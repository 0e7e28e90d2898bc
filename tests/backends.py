"""The real backends the tests run on, shared by the conftest files.

``ADMIN_URL`` is the PostgreSQL server's maintenance database
(``TRANSCRIPT_TEST_POSTGRES_URL`` overrides it); ``BACKENDS`` parametrizes a fixture over
SQLite and PostgreSQL, and over a Citus coordinator too when ``TRANSCRIPT_STORE_CITUS_URL``
names one (``scripts/test-citus``, which CI runs after the suite, starts a local cluster and
runs ``tests/citus`` on it; the README's test command itself runs without one, skipping the
Citus tests); ``postgres_unavailable`` skips on a laptop and
**fails** under CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

ADMIN_URL = os.environ.get(
    "TRANSCRIPT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
CITUS_URL = os.environ.get("TRANSCRIPT_STORE_CITUS_URL", "")
BACKENDS = [
    pytest.param("sqlite", marks=pytest.mark.sqlite),
    pytest.param("postgres", marks=pytest.mark.postgres),
    *([pytest.param("citus", marks=[pytest.mark.postgres, pytest.mark.citus])]
      if CITUS_URL else []),
]


#: The recorded corpus: ``TRANSCRIPT_CORPUS``, else ``../shared/corpus`` beside the repo.
CORPUS = Path(os.environ.get("TRANSCRIPT_CORPUS")
              or Path(__file__).resolve().parents[2] / "shared" / "corpus")


def corpus(*parts: str) -> Path:
    """A folder of the corpus; when it is missing (a fresh clone without ``../shared``) the
    test is skipped with the reason, and **fails** under CI (``CI`` set), where the corpus is
    laid beside the repo."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        message = f"transcript corpus not found at {path} (set TRANSCRIPT_CORPUS)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def postgres_unavailable(reason: str) -> None:
    """No PostgreSQL server answers: a skip on a laptop, a failure under CI (``CI`` set)."""
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is required under CI: {reason}")
    pytest.skip(f"PostgreSQL not available: {reason}")


@contextmanager
def scratch_postgres(name: str) -> Iterator[str]:
    """A PostgreSQL database of this name, new (dropped first if a killed run left it), its
    URL for the block, dropped after it; ``postgres_unavailable`` when no server answers."""
    from sqlalchemy import create_engine, text

    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # the server is down or refuses us
        admin.dispose()
        postgres_unavailable(str(exc).splitlines()[0])
    try:
        yield ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def imported_modules(*argv: str, roots: tuple[str, ...]) -> tuple[set[str], str]:
    """Run the command line with ``argv`` in a fresh process: the modules it imported under
    ``roots`` (and ``store.*``), and what it printed before them."""
    probe = (
        "import json, sys\n"
        "from store.cli.main import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{roots!r} or m.startswith('store.'))))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    lines = done.stdout.strip().splitlines()
    return set(json.loads(lines[-1])), "\n".join(lines[:-1])


def is_citus(url: str) -> bool:
    """The test database on the Citus cluster (``conftest.citus_url``): each statement takes a
    hop from the coordinator to a worker, so tests that count work done in a fixed time give
    it more time there."""
    return "/ts_test_citus_" in url


#: The tables emptied before each test: these, and every table that refers to them.
EMPTIED = ("sessions", "tool_aliases", "source_files", "tombstones", "chain_heads", "log_leaves")
#: URL -> the tables that ``TRUNCATE ... CASCADE`` of :data:`EMPTIED` empties (found once).
_DOOMED: dict[str, list[str]] = {}
#: URL -> the engine that empties it (one pooled connection, kept for the run: a new
#: connection is a new server process, ~10 ms a test).
_ENGINES: dict[str, Any] = {}
#: URL -> the alias table's signature as last seeded: a test that left it so (most) needs no
#: new seeding (600 rows a test).
_SEEDED: dict[str, str] = {}
#: The emptying connection's ``application_name`` (tests that count a database's server
#: processes leave it out).
EMPTIER = "ts_test_emptier"
_ALIAS_SIGNATURE = (
    "SELECT count(*)::text || ':' || coalesce(md5(string_agg(agent || chr(1) || raw_name "
    "|| chr(1) || current_name || chr(1) || created_at::text, chr(2) ORDER BY agent, "
    "raw_name)), '') FROM tool_aliases")


def _empty(conn: Any, url: str, keep_aliases: bool) -> bool:
    """What ``TRUNCATE <EMPTIED> CASCADE`` does, as deletes where it can (``tool_aliases``
    left as it is when ``keep_aliases``), in one round trip: a truncate makes every table and
    index a new file (~0.1 s a test, 1,400 tests), a delete of a test's few rows ~5 ms.
    Foreign keys are not checked meanwhile (``session_replication_role``: a superuser's, as on
    the test server); Citus, or a role that cannot, truncates (and the aliases go too).
    Whether the aliases were kept."""
    from sqlalchemy import text

    truncate = text(f"TRUNCATE {', '.join(EMPTIED)} CASCADE")
    if is_citus(url):
        conn.execute(truncate)
        return False
    if url not in _DOOMED:
        _DOOMED[url] = list(conn.execute(text(
            "WITH RECURSIVE doomed(rel) AS ("
            f" SELECT unnest(ARRAY{list(EMPTIED)!r}::regclass[])"
            " UNION SELECT c.conrelid FROM pg_constraint c JOIN doomed d ON c.confrelid = d.rel"
            " WHERE c.contype = 'f') SELECT rel::regclass::text FROM doomed")).scalars())
    deletes = [f"DELETE FROM {table}" for table in _DOOMED[url]
               if not (keep_aliases and table == "tool_aliases")]
    try:
        with conn.begin_nested():
            # (no parameters: psycopg sends the statements as one simple query)
            conn.connection.driver_connection.execute(
                "; ".join(["SET LOCAL session_replication_role = replica", *deletes,
                           "SET LOCAL session_replication_role = DEFAULT"]))
    except Exception:  # noqa: BLE001 - not a superuser: the truncate
        conn.execute(truncate)
        return False
    return keep_aliases


def empty_postgres(url: str) -> None:
    """Empty the store's tables of a PostgreSQL (or Citus) test database, the seeded tool
    vocabulary put back (the agents' own ``tools`` rows too: ``alias_seeds`` is kept, so
    an open would not seed them again). The alias table is left as it is when its rows are
    the ones last seeded (checked by a signature of every column)."""
    from sqlalchemy import create_engine, insert, text

    from store.agents.registry import vocabulary_rows
    from store.db.schema.tables import tool_aliases

    engine = _ENGINES.get(url)
    if engine is None:
        engine = _ENGINES[url] = create_engine(
            url, pool_size=1, max_overflow=2, pool_pre_ping=True,
            connect_args={"application_name": EMPTIER})
    with engine.begin() as conn:
        seeded = _SEEDED.get(url)  # (never on Citus: its tables are truncated, aliases too)
        unchanged = seeded is not None and conn.execute(text(_ALIAS_SIGNATURE)).scalar() == seeded
        if _empty(conn, url, keep_aliases=unchanged):
            return
        now = datetime.now(UTC)
        conn.execute(insert(tool_aliases), [
            {"agent": agent or "", "raw_name": raw, "current_name": cur,
             "created_at": now}
            for agent, raw, cur in vocabulary_rows()  # (agents' own rows too)
        ])
        if not is_citus(url):
            _SEEDED[url] = conn.execute(text(_ALIAS_SIGNATURE)).scalar_one()


def forget_postgres(url: str) -> None:
    """Close :func:`empty_postgres`'s connection to ``url`` (before its database is dropped)."""
    engine = _ENGINES.pop(url, None)
    _SEEDED.pop(url, None)
    _DOOMED.pop(url, None)
    if engine is not None:
        engine.dispose()


def commit_elsewhere(url: str, *statements: str) -> None:
    """Run ``statements`` in one transaction on an engine of its own: a write no store's
    engine sees (no commit event), as another process's or a tampering tool's."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            for statement in statements:
                conn.execute(text(statement))
    finally:
        engine.dispose()
