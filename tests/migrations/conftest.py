"""Fixtures of the migration tests: new, empty databases on both backends.

Unlike the integration fixtures (a template already at head), every database here starts
empty, so that the tests can migrate it themselves: an SQLite file that does not exist yet,
or a PostgreSQL database created for the test and dropped after it. Set
``TRANSCRIPT_TEST_POSTGRES_URL`` to use another server; when none answers, the PostgreSQL half
is skipped on a laptop and **fails** under CI (``CI`` set).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from backends import ADMIN_URL, BACKENDS, postgres_unavailable  # noqa: E402
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from store.db.schema.engine import create_store_engine


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine]:
    """An AUTOCOMMIT engine on the server's maintenance database (CREATE/DROP DATABASE)."""
    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # the server is down or refuses us
        admin.dispose()
        postgres_unavailable(str(exc).splitlines()[0])
    yield admin
    admin.dispose()


@contextmanager
def new_database(backend: str, directory: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a new, empty database, removed afterwards (PostgreSQL)."""
    if backend == "sqlite":
        yield f"sqlite:///{directory / 'new.sqlite'}"
        return
    admin: Engine = request.getfixturevalue("postgres_admin")
    name = f"ts_mig_{os.getpid()}_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def new_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new, empty database (for SQLite, a file that does not exist yet)."""
    with new_database(backend, tmp_path, request) as url:
        yield url


@pytest.fixture(scope="module", params=BACKENDS)
def module_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A new, empty database shared by the tests of one module (one per backend)."""
    with new_database(request.param, tmp_path_factory.mktemp("module"), request) as url:
        yield url


@pytest.fixture
def engine(new_url: str) -> Iterator[Engine]:
    """A store engine (``create_store_engine``) on the new database."""
    opened = create_store_engine(new_url)
    yield opened
    opened.dispose()
