"""Shared fixtures for the tests over the recorded corpus (``../shared/corpus``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The corpus folder: env ``TRANSCRIPT_CORPUS``, else ``<repo>/../shared/corpus``.

    When it is missing the test fails under CI (env ``CI`` set) and is skipped elsewhere.
    """
    configured = os.environ.get("TRANSCRIPT_CORPUS")
    repo = Path(__file__).resolve().parents[2]
    path = Path(configured) if configured else repo.parent / "shared" / "corpus"
    if not path.is_dir():
        message = f"transcript corpus not found at {path} (set TRANSCRIPT_CORPUS)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path
