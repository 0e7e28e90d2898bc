"""``bench/storage.py`` keeps working: on a tiny workload its correctness checks (the same rows
in the store's and the raw driver's databases, the same loaded calls, counts and hits, an
idempotent re-append) pass on both backends. It reports ratios; nothing here asserts a speed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from backends import ADMIN_URL, postgres_unavailable
from sqlalchemy import create_engine, text

BENCH = Path(__file__).resolve().parents[2] / "bench" / "storage.py"
TINY = ["--sessions", "4", "--turns", "3", "--repeat", "1", "--incremental-sessions", "1",
        "--query-repeat", "1", "--writers", "0"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), *TINY, *args], capture_output=True,
                          text=True, timeout=600)


@pytest.mark.sqlite
def test_the_storage_benchmark_checks_pass_on_sqlite() -> None:
    done = run("--backend", "sqlite")

    assert done.returncode == 0, done.stderr[-2000:]
    assert "checks: ok" in done.stdout
    assert "bulk append" in done.stdout and "SDK SQLiteSession" in done.stdout


@pytest.mark.postgres
def test_the_storage_benchmark_checks_pass_on_postgres() -> None:
    probe = create_engine(ADMIN_URL)
    try:
        probe.connect().close()
    except Exception as exc:  # noqa: BLE001 - the server is down
        postgres_unavailable(str(exc).splitlines()[0])
    finally:
        probe.dispose()
    dsn = ADMIN_URL.replace("postgresql+psycopg://", "postgresql://")

    done = run("--backend", "postgres", "--pg-dsn", dsn)

    assert done.returncode == 0, done.stderr[-2000:]
    assert "checks: ok" in done.stdout and "SDK SQLAlchemySession" in done.stdout
    engine = create_engine(ADMIN_URL)
    with engine.connect() as conn:  # its scratch databases are dropped
        left = conn.execute(text("SELECT count(*) FROM pg_database "
                                 "WHERE datname LIKE 'bench\\_%'")).scalar_one()
    engine.dispose()
    assert left == 0
