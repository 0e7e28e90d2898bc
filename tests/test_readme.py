"""Every command the README shows is run here, so the README cannot rot."""

from __future__ import annotations

import json
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
    assert re.search(r"^scripts/test$", ci, re.MULTILINE)
    # ... and then the Citus module on a local cluster (issue 28: scale-out is tested in CI).
    assert ci.index("\nscripts/test\n") < ci.index("\nscripts/test-citus")
    citus = (ROOT / "scripts" / "test-citus").read_text(encoding="utf-8")
    assert "TRANSCRIPT_STORE_REQUIRE_CITUS=1" in citus and "tests/citus" in citus


def test_the_main_job_command_runs(tmp_path):
    env = {**os.environ, "COLUMNS": "200",
           "TRANSCRIPT_STORE_URL": f"sqlite:///{tmp_path / 'main.sqlite'}"}
    for attempt in ("new messages", "already stored"):
        done = subprocess.run(["scripts/demo"], cwd=ROOT, capture_output=True, text=True,
                              timeout=600, env=env)
        assert done.returncode == 0, done.stderr
        assert attempt in done.stdout
        assert "run_shell_command" in done.stdout and "invalid_json" in done.stdout


def test_the_main_job_defaults_to_a_file_in_the_data_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_STORE_URL"}
    env["XDG_DATA_HOME"] = str(tmp_path)
    done = subprocess.run([str(VENV_BIN / "transcript-store"), "demo"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "transcript-store" / "transcripts.sqlite").exists()


@pytest.mark.parametrize(
    "code", [b for lang, b in BLOCKS if lang == "python"], ids=lambda c: c.splitlines()[0][:40]
)
def test_python_examples_run(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})


CLI_LINES = [line for lang, b in BLOCKS[1:] if lang == "sh" for line in shell_lines(b)]


@pytest.fixture(scope="module")
def shared_dir(tmp_path_factory):
    """One folder for the README's CLI lines, which run in order and build on each other."""
    return tmp_path_factory.mktemp("readme-cli")


def cli_argv(line: str) -> list[str]:
    """A README command line as run from a scratch folder: repo paths made absolute."""
    argv = shlex.split(line)
    argv = [str(ROOT / a) if a.startswith(("../shared", "tests/fixtures/")) else a
            for a in argv]
    if argv[0].startswith(".venv/bin/"):
        argv[0] = str(VENV_BIN / argv[0].removeprefix(".venv/bin/"))
    elif argv[0] == "python":
        argv[0] = sys.executable
    return argv


@pytest.mark.parametrize("line", CLI_LINES)
def test_cli_examples_run(line, shared_dir):
    tmp_path = shared_dir
    argv = cli_argv(line)
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


@pytest.mark.parametrize(
    "code", [b for lang, b in BLOCKS if lang == "python"], ids=lambda c: c.splitlines()[0][:40]
)
def test_python_examples_run_twice(code, tmp_path, monkeypatch):
    """A reader who runs a snippet again (same folder, same database) gets no error."""
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    exec(compile(code, "README.md", "exec"), {})


def test_the_readme_uses_only_files_of_the_repo():
    """A fresh clone has no ../shared beside it: every example runs on the repo's own files
    (store/examples, tests/fixtures)."""
    for lang, block in BLOCKS:
        assert "../shared" not in block
        for line in shell_lines(block) if lang == "sh" else ():
            for arg in shlex.split(line):
                if arg.startswith(("tests/", "store/")):
                    assert (ROOT / arg).exists(), arg


#: Runs each command line given on stdin (a JSON list of argument lists) in this one process,
#: in order, as ``transcript-store`` would: one JSON line per command, its exit status and
#: what it wrote to stderr.
_AGAIN = """
import contextlib, io, json, os, sys
from store.cli.main import main
for argv in json.load(sys.stdin):
    err = io.StringIO()
    code = 0
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), \\
            contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    print(json.dumps([code, err.getvalue()[-2000:]]), flush=True)
"""


def test_the_cli_examples_run_twice(shared_dir):
    """The README's command lines, all again in order in the folder where
    ``test_cli_examples_run`` ran each once (a reader running them twice gets no error).
    The second pass runs them in one process (``store.cli.main.main``, what the console
    script calls): the first pass ran each as its own process already, and ~55 interpreter
    start-ups were a third of this file's time."""
    if not any(shared_dir.iterdir()):  # run alone: the first pass first
        for line in CLI_LINES:
            subprocess.run(cli_argv(line), cwd=shared_dir, capture_output=True, timeout=120)
    argvs = []
    for line in CLI_LINES:
        argv = cli_argv(line)
        if argv[0] == sys.executable:  # python -m store ...
            assert argv[1:3] == ["-m", "store"], line
            argvs.append(argv[3:])
        else:
            assert Path(argv[0]).name == "transcript-store", line
            argvs.append(argv[1:])
    done = subprocess.run([sys.executable, "-c", _AGAIN], cwd=shared_dir, input=json.dumps(argvs),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(out) for out in done.stdout.splitlines()]
    assert len(results) == len(CLI_LINES), done.stderr[-3000:]
    for line, (code, err) in zip(CLI_LINES, results, strict=True):
        assert code == 0, (line, err)
