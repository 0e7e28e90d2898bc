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
    forget_postgres,
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
        forget_postgres(url)


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
    forget_postgres(url)
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


#: The files that take longest (worker seconds, summed over their tests, in a --durations run
#: of stop 64), run first. ``--dist loadfile`` hands files to the workers in the order of its
#: queue, which pytest-xdist sorts by the number of tests in a file unless told not to
#: (``--no-loadscope-reorder``, in scripts/test): a file of a few slow tests (the races, the
#: frameworks' suites, the benchmark's checks) came last and kept one worker busy while the
#: other had nothing left (the last 6 % of the tests took a third of the run).
SLOW_FIRST = (
    "lossless/test_bad_input.py", "integrations/test_session_races.py", "test_readme.py",
    "lite/test_lite_search.py", "viewer/test_http.py", "mcp/test_mcp_server.py",
    "conformance/test_frameworks.py", "usage/test_summaries.py", "integration/test_bench.py",
    "viewer/test_browser_archive.py", "integration/test_audit.py", "unit/test_detectors.py",
    "integration/test_lost_connections.py", "integration/test_crash.py",
    "mcp/test_mcp_http.py", "integration/test_verify_index.py",
    "integration/test_search_index.py", "viewer/test_browser.py",
    "agent_files/test_agent_homes.py", "migrations/test_upgrade_from_empty.py",
    "migrations/test_wheel.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest files first (:data:`SLOW_FIRST`), then the others by their number of tests
    (xdist's own order), each file's tests in their order."""
    tests = Path(__file__).resolve().parent
    rank = {str(tests / name): i for i, name in enumerate(SLOW_FIRST)}
    count: dict[str, int] = {}
    for item in items:
        count[str(item.path)] = count.get(str(item.path), 0) + 1
    items.sort(key=lambda item: (rank.get(str(item.path), len(SLOW_FIRST)),
                                 -count[str(item.path)]))
