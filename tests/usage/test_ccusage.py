"""The usage report agrees with ccusage (what Claude Code users run for token reports) on the
same Claude Code files: every day's four token counts to the token, its cost within 1%, and
each model's share of the day (ccusage's ``--breakdown``) to the token and to the cent.

ccusage is pinned and installed by ``scripts/setup`` into ``.cache/ccusage``; it runs offline
(its bundled prices) over a temporary ``CLAUDE_CONFIG_DIR`` and an empty home (no other
agent's files), grouping days in UTC as the store does. The files: the corpus's real Claude
Code sessions (one response per several lines, sidechains) and our own fixtures, one of
which repeats another's responses (a resumed session), counted once by both."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
from usage_agent_files import claude_lines, write_jsonl

from store import TranscriptStore, import_paths, usage_report

REPO = Path(__file__).resolve().parents[2]
CCUSAGE = REPO / ".cache" / "ccusage" / "node_modules" / ".bin" / "ccusage"


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def ccusage() -> Path:
    if not CCUSAGE.exists() or shutil.which("node") is None:
        _missing(f"ccusage not installed at {CCUSAGE} (scripts/setup installs it with npm)")
    return CCUSAGE


def _corpus() -> Path | None:
    configured = os.environ.get("TRANSCRIPT_CORPUS")
    path = Path(configured) if configured else REPO.parent / "shared" / "corpus"
    return path / "claude_code" if (path / "claude_code").is_dir() else None


def _projects(root: Path) -> Path:
    project = root / "claude" / "projects" / "-work-demo"
    write_jsonl(project / "a.jsonl", claude_lines("a", "2025-09-03"))
    write_jsonl(project / "b.jsonl", claude_lines("b", "2025-09-03")
                + claude_lines("b", "2025-09-04", prefix="n"))
    corpus = _corpus()
    if corpus is not None:
        for file in sorted(corpus.glob("*.jsonl")):
            shutil.copyfile(file, project / file.name)
    elif os.environ.get("CI"):
        pytest.fail("transcript corpus not found (set TRANSCRIPT_CORPUS)")
    return project


def _ccusage_daily(ccusage: Path, root: Path) -> dict[str, dict[str, float]]:
    home = root / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
           "CLAUDE_CONFIG_DIR": str(root / "claude"), "CODEX_HOME": str(home / ".codex"),
           "TZ": "UTC", "NO_COLOR": "1", "LANG": "C.UTF-8"}
    done = subprocess.run([str(ccusage), "daily", "--json", "--offline", "--timezone", "UTC"],
                          env=env, capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    report = orjson.loads(done.stdout)
    return {day.get("period") or day["date"]: day for day in report["daily"]}


def test_daily_tokens_and_costs_agree_with_ccusage(
    ccusage: Path, db: TranscriptStore, tmp_path: Path
) -> None:
    project = _projects(tmp_path)
    theirs = _ccusage_daily(ccusage, tmp_path)

    import_paths(db, [project], format="claude-code", settle=0)
    ours = {t.key: t for t in usage_report(db, by="day")}

    assert sorted(ours) == sorted(theirs)
    for day, their in theirs.items():
        mine = ours[day]
        assert (mine.input_tokens, mine.output_tokens, mine.cache_creation_tokens,
                mine.cache_read_tokens) == (their["inputTokens"], their["outputTokens"],
                                            their["cacheCreationTokens"],
                                            their["cacheReadTokens"]), day
        assert mine.cost_usd == pytest.approx(their["totalCost"], rel=0.01), day
        # ... and per model (ccusage daily --breakdown), to the token and to the cent
        parts = {part["modelName"]: part for part in their["modelBreakdowns"]}
        assert sorted(mine.by_model) == sorted(parts), day
        for model, part in parts.items():
            own = mine.by_model[model]
            assert (own.input_tokens, own.output_tokens, own.cache_creation_tokens,
                    own.cache_read_tokens) == (part["inputTokens"], part["outputTokens"],
                                               part["cacheCreationTokens"],
                                               part["cacheReadTokens"]), (day, model)
            assert round(own.cost_usd, 2) == round(part["cost"], 2), (day, model)
