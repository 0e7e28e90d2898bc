"""``bench/rules.py`` keeps working: on a tiny workload its check (every planted call found at
high or above, nothing else) passes. It reports times; nothing here asserts a speed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "rules.py"


@pytest.mark.sqlite
def test_the_rules_benchmark_check_passes_on_sqlite() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--calls", "3000", "--backend",
                           "sqlite", "--repeat", "1"], capture_output=True, text=True,
                          timeout=600)

    assert done.returncode == 0, done.stderr[-2000:]
    assert "checks: ok" in done.stdout and "ratio" in done.stdout
