"""What the conformance plugins share: running the selection less the excluded tests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


def select_excluded(config: pytest.Config, keep: list[pytest.Item], drop: list[pytest.Item],
                    excluded: dict[str, str]) -> None:
    """Run ``keep`` less ``excluded`` (each of which must be among them: a stale list is an
    error); write the excluded ones with their reasons where ``TS_CONFORMANCE_REPORT`` says."""
    excluded = {**excluded, **json.loads(os.environ.get("TS_CONFORMANCE_EXCLUDE") or "{}")}
    ids = {item.nodeid for item in keep}
    stale = sorted(set(excluded) - ids)
    if stale:
        raise pytest.UsageError(f"excluded tests that are not selected: {stale}")
    run = [item for item in keep if item.nodeid not in excluded]
    drop.extend(item for item in keep if item.nodeid in excluded)
    config.hook.pytest_deselected(items=drop)
    keep[:] = run
    report = os.environ.get("TS_CONFORMANCE_REPORT")
    if report:
        Path(report).write_text(json.dumps({
            "selected": len(ids), "excluded": excluded, "run": [i.nodeid for i in run]}))
