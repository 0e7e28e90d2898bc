"""Every command the README shows is run here, so the README cannot rot."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, re.DOTALL)
VENV_BIN = Path(sys.executable).parent


def shell_lines(block: str) -> list[str]:
    lines = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line]


def test_the_readme_opens_with_the_two_commands():
    lang, first = BLOCKS[0]
    assert lang == "sh"
    assert shell_lines(first) == ["scripts/demo", "scripts/test"]
    assert README.index("```sh") < README.index("\n## ")
    for script in ("scripts/demo", "scripts/test", "scripts/setup"):
        assert os.access(ROOT / script, os.X_OK), script


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^scripts/test\b", ci, re.MULTILINE)


def test_the_main_job_command_runs():
    done = subprocess.run(
        ["scripts/demo"], cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    assert "tool calls" in done.stdout
    assert "run_shell_command" in done.stdout and "invalid_json" in done.stdout


@pytest.mark.parametrize(
    "code", [b for lang, b in BLOCKS if lang == "python"], ids=lambda c: c.splitlines()[0][:40]
)
def test_python_examples_run(code):
    exec(compile(code, "README.md", "exec"), {})


CLI_LINES = [line for lang, b in BLOCKS[1:] if lang == "sh" for line in shell_lines(b)]


@pytest.mark.parametrize("line", CLI_LINES)
def test_cli_examples_run(line):
    argv = shlex.split(line)
    if argv[0].startswith(".venv/bin/"):
        argv[0] = str(VENV_BIN / argv[0].removeprefix(".venv/bin/"))
    elif argv[0] == "python":
        argv[0] = sys.executable
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
