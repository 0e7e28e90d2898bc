"""The two real backends the tests run on, shared by the conftest files.

``ADMIN_URL`` is the PostgreSQL server's maintenance database
(``TRANSCRIPT_TEST_POSTGRES_URL`` overrides it); ``BACKENDS`` parametrizes a fixture over
SQLite and PostgreSQL; ``postgres_unavailable`` skips on a laptop and **fails** under CI.
"""

from __future__ import annotations

import os

import pytest

ADMIN_URL = os.environ.get(
    "TRANSCRIPT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
BACKENDS = [
    pytest.param("sqlite", marks=pytest.mark.sqlite),
    pytest.param("postgres", marks=pytest.mark.postgres),
]


def postgres_unavailable(reason: str) -> None:
    """No PostgreSQL server answers: a skip on a laptop, a failure under CI (``CI`` set)."""
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is required under CI: {reason}")
    pytest.skip(f"PostgreSQL not available: {reason}")
