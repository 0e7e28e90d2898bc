"""The README's test command runs without a Citus cluster: there the Citus module is skipped and
the run passes. ``scripts/test-citus`` (CI runs it after the suite) starts a cluster and sets
``TRANSCRIPT_STORE_REQUIRE_CITUS``, under which a missing cluster is a failure, not a skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_a_ci_run_without_citus_skips_the_citus_tests_and_passes():
    env = {k: v for k, v in os.environ.items()
           if k not in ("TRANSCRIPT_STORE_CITUS_URL", "TRANSCRIPT_STORE_REQUIRE_CITUS")}
    env["CI"] = "true"

    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         str(TESTS / "citus"), str(TESTS / "unit" / "test_keys.py")],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=300)

    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "passed, 1 skipped" in run.stdout  # the Citus module, skipped as a whole
    assert "scripts/test-citus starts a local Citus cluster" in run.stdout


def test_where_citus_is_required_a_missing_cluster_fails():
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_STORE_CITUS_URL"}
    env.update(CI="true", TRANSCRIPT_STORE_REQUIRE_CITUS="1")

    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(TESTS / "citus")],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=300)

    assert run.returncode != 0
    assert "TRANSCRIPT_STORE_CITUS_URL is not" in run.stdout
