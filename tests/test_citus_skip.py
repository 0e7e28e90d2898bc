"""Under CI (``CI`` set) without a Citus cluster the Citus tests are skipped and the run
passes: Debian has no Citus package, so a CI machine never has one. (The PostgreSQL tests,
by contrast, fail there when the server is missing: tests/backends.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_a_ci_run_without_citus_skips_the_citus_tests_and_passes():
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_STORE_CITUS_URL"}
    env["CI"] = "true"

    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         str(TESTS / "citus"), str(TESTS / "unit" / "test_keys.py")],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=300)

    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "passed, 1 skipped" in run.stdout  # the Citus module, skipped as a whole
    assert "Debian has no Citus package" in run.stdout
