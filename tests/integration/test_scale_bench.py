"""``bench/scale.py`` keeps working (issue 39): on a tiny home it imports every message (it
checks the count itself), times the read commands, opens the store read-only, compacts the
file and reports it all, as Markdown and as JSON. Nothing here asserts a speed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "scale.py"


@pytest.mark.sqlite
def test_the_scale_benchmark_runs_on_a_tiny_home(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    done = subprocess.run([sys.executable, str(BENCH), "--messages", "3000", "--repeat", "1",
                           "--watch-seconds", "0", "--keep", str(tmp_path / "homes"),
                           "--json", str(out)], capture_output=True, text=True, timeout=600)

    assert done.returncode == 0, done.stderr[-2000:]
    assert "after `db compact` (VACUUM)" in done.stdout and "`usage daily`" in done.stdout
    (size,) = json.loads(out.read_text())
    (run,) = size["runs"]
    assert run["import"]["summary"]["messages_added"] == 3000
    assert run["compact"]["db_bytes"] <= run["db_bytes"]
    # (the folder's peak holds at least the database it left)
    assert run["import"]["disk_peak_bytes"] >= run["db_bytes"] * 0.5
    assert "peak disk during the import" in done.stdout
    # (every command printed something; a home this small may hold no `git push`)
    assert all(read["out_lines"] > 0 for label, read in run["reads"].items()
               if "--command" not in label)
    # (each read also run in a pseudo-terminal at the benchmark's 80 columns, as a user runs it)
    assert size["columns"] == 80
    assert all(read["terminal_ms"] > 0 for read in run["reads"].values())
    assert "in a terminal" in done.stdout
    # (beside the reads a script's plain SQL asks, each its answer's lines: bench/scale_floors)
    floors = {label: read["floor"] for label, read in run["reads"].items() if "floor" in read}
    assert {"usage daily", "sessions list", "search (a common word, best 20)"} <= set(floors)
    assert all(f["median_ms"] > 0 for f in floors.values())
    assert floors["sessions list"]["out_lines"] >= 2  # (the count, then the sessions)
    assert "(plain SQL, " in done.stdout
