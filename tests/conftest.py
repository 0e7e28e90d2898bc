"""Suite-wide fixtures and settings.

* Hypothesis profiles (``HYPOTHESIS_PROFILE=fuzz`` for long runs).
* One ``store`` fixture (and ``store_url``, ``db``) over both real backends: an SQLite file
  and a PostgreSQL database. SQLite: each test gets a copy of a template file migrated once
  to head. PostgreSQL: one database per test run (``ts_test_<pid>``) migrated once, emptied
  before each test (aliases re-seeded). Set ``TRANSCRIPT_TEST_POSTGRES_URL`` to use another
  server; when none answers the PostgreSQL half is skipped on a laptop and **fails** under CI
  (``CI`` set).
* With ``TRANSCRIPT_STORE_CITUS_URL`` set (a Citus coordinator with registered workers), a
  third backend, ``citus``: one database per test run (``ts_test_citus_<pid>``, created on every
  node by ``tests/citus_cluster.py``), upgraded to head and distributed (4 shards, to keep the
  DDL fan-out small), emptied before each test like the PostgreSQL one.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from store import TranscriptStore

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "fuzz", max_examples=20_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist gives its workers COLUMNS=80 / LINES; a serial run has none (tables then
    # fit 200 columns, the width for output to a file or pipe). The tests that care set it.
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

from backends import (  # noqa: E402
    BACKENDS,
    CITUS_URL,
    empty_postgres,
    scratch_postgres,
)

#: Shards per table in the Citus test database (the default, 32, only adds DDL fan-out here).
CITUS_TEST_SHARDS = 4


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.sqlite"
    TranscriptStore.open(f"sqlite:///{path}").close()
    return path


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with scratch_postgres(f"ts_test_{os.getpid()}") as url:
        TranscriptStore.open(url).close()
        yield url


@pytest.fixture(scope="session")
def citus_url() -> Iterator[str]:
    """A distributed store on the Citus cluster of ``TRANSCRIPT_STORE_CITUS_URL``."""
    if not CITUS_URL:
        pytest.skip("TRANSCRIPT_STORE_CITUS_URL is not set (scripts/test-citus starts a local "
                    "Citus cluster)")
    from citus_cluster import create_citus_database, drop_citus_database

    from store import distribute_database, upgrade_database

    url = create_citus_database(f"ts_test_citus_{os.getpid()}", coordinator_url=CITUS_URL)
    upgrade_database(url)
    distribute_database(url, shard_count=CITUS_TEST_SHARDS)
    yield url
    drop_citus_database(url)


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database URL at head, empty but for the default aliases."""
    if request.param == "sqlite":
        path = tmp_path / "store.sqlite"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        path.chmod(0o600)
        return f"sqlite:///{path}"
    url: str = request.getfixturevalue(
        "citus_url" if request.param == "citus" else "postgres_url")
    empty_postgres(url)
    return url


@pytest.fixture
def store(store_url: str) -> Iterator[TranscriptStore]:
    with TranscriptStore.open(store_url) as opened:
        yield opened


@pytest.fixture
def db(store: TranscriptStore) -> TranscriptStore:
    """The ``store`` fixture under the name the integration tests use."""
    return store
