"""The built wheel carries the migrations: installed in a fresh virtual environment and run
from outside the checkout, it migrates a new database to head and stores a message.

The wheel is built from a copy of the checkout (setuptools writes ``build/`` and
``*.egg-info`` beside the sources), with ``--no-build-isolation`` when the project venv can
build it, else with build isolation (which fetches setuptools). The new venv gets the wheel
and its dependencies from the configured package index; when that fails the test fails and
says so (it never skips).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import store
from store.db.schema import migrate

REPO = Path(__file__).resolve().parents[2]
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".mypy_cache",
    ".ruff_cache", ".pytest_cache", ".hypothesis", "*.sqlite", "*.sqlite-*",
)

# Run by the new venv's interpreter, from a directory outside the checkout.
SNIPPET = textwrap.dedent(
    """
    import json, sys, sysconfig

    from sqlalchemy import inspect

    import store
    from store import TranscriptStore
    from store.db.schema import migrate
    from store.db.schema.engine import create_store_engine

    url = sys.argv[1]
    engine = create_store_engine(url)
    before = migrate.current(engine)
    after = migrate.upgrade(engine)
    columns = sorted(c["name"] for c in inspect(engine).get_columns("tool_calls"))
    engine.dispose()
    with TranscriptStore.open(url) as ts:
        ts.append("s1", [{
            "role": "assistant",
            "content": "listing",
            "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "run_shell_command", "arguments": '{"command":"ls"}'}}],
        }])
        message = ts.load("s1").messages[0].message
    (call,) = message.tool_calls
    print(json.dumps({
        "store_file": store.__file__,
        "script_location": migrate.script_location(),
        "purelib": sysconfig.get_paths()["purelib"],
        "sys_path": sys.path,
        "head": migrate.head(),
        "before": before,
        "after": after,
        "wire_version_column": "wire_version" in columns,
        "text": message.text,
        "call": [call.id, call.name, call.raw_name, call.input],
    }))
    """
)


def _clean_env() -> dict[str, str]:
    """The environment without anything pointing back at the checkout or its venv."""
    env = {
        k: v for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "TRANSCRIPT_STORE_URL")
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=timeout,
        check=False,
    )


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    return "\n".join((done.stdout + done.stderr).strip().splitlines()[-25:])


_BUILD_LOG: list[str] = []


def _build_wheel(tmp: Path) -> Path:
    source = tmp / "src"
    shutil.copytree(REPO, source, ignore=COPY_IGNORE)
    wheels = tmp / "wheels"
    # -v: setuptools' warnings (package data outside `packages`, license) reach the log.
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(wheels)]
    done = _run([*pip_wheel, "--no-build-isolation", str(source)], tmp, 120)
    if done.returncode != 0:  # the venv's setuptools is too old for pyproject.toml
        shutil.rmtree(source)
        shutil.copytree(REPO, source, ignore=COPY_IGNORE)
        done = _run([*pip_wheel, str(source)], tmp, 180)
    if done.returncode != 0:
        pytest.fail(
            "could not build the wheel (build isolation needs the package index for "
            f"setuptools; is the network down?):\n{_tail(done)}"
        )
    _BUILD_LOG.append(done.stdout + done.stderr)
    (wheel,) = wheels.glob("transcript_store-*.whl")
    return wheel


def _install(wheel: Path, tmp: Path) -> Path:
    venv = tmp / "venv"
    done = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, 60)
    assert done.returncode == 0, _tail(done)
    python = venv / "bin" / "python"
    done = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(wheel)],
        tmp, 240,
    )
    if done.returncode != 0:
        pytest.fail(
            "could not install the wheel and its dependencies into a new venv (they come from "
            f"the package index; is the network down?):\n{_tail(done)}"
        )
    return venv


class TestInstalledWheel:
    def test_it_migrates_and_stores_from_outside_the_checkout(self, tmp_path: Path) -> None:
        wheel = _build_wheel(tmp_path)
        venv = _install(wheel, tmp_path)
        outside = tmp_path / "elsewhere"
        outside.mkdir()

        version = _run([str(venv / "bin" / "transcript-store"), "--version"], outside, 60)
        assert version.returncode == 0, _tail(version)
        assert store.__version__ in version.stdout
        # the version is pyproject's (read at run time through importlib.metadata), the
        # newest released section of the CHANGELOG, and `python -m store` says the same
        declared = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(),
                             re.M)
        assert declared is not None and store.__version__ == declared[1]
        assert wheel.name.startswith(f"transcript_store-{declared[1]}-")
        module = _run([str(venv / "bin" / "python"), "-m", "store", "--version"], outside, 60)
        assert module.returncode == 0, _tail(module)
        assert module.stdout.strip() == f"transcript-store, version {declared[1]}"
        asked = _run([str(venv / "bin" / "python"), "-c",
                      "import store, importlib.metadata as m; "
                      "print(store.__version__, m.version('transcript-store'))"], outside, 60)
        assert asked.stdout.split() == [declared[1], declared[1]], _tail(asked)

        # the license travels in the wheel and the metadata declares it
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            (license_name,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
            assert archive.read(license_name).decode() == (REPO / "LICENSE").read_text()
            (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
            metadata = archive.read(metadata_name).decode()
            # the data-only folders ship (store/examples, the viewer's static files)
            assert any(n.startswith("store/examples/") and n.endswith(".jsonl") for n in names)
            assert any(n.startswith("store/viewer/static/") and n.endswith(".css")
                       for n in names)
            # the baked head schema a new SQLite file is made from (else Alembic runs)
            assert "store/db/schema/head_sqlite.json" in names
        assert "License-Expression: MIT" in metadata
        assert "License-File: LICENSE" in metadata
        assert "Classifier: Programming Language :: Python :: 3.11" in metadata
        assert "Project-URL: Repository, https://" in metadata
        assert "Author: The transcript-store authors" in metadata
        installed_license = _run([str(venv / "bin" / "python"), "-c",
                                  "import importlib.metadata as m; "
                                  "print(m.distribution('transcript-store')"
                                  ".read_text('licenses/LICENSE'))"], outside, 60)
        assert "MIT License" in installed_license.stdout, _tail(installed_license)
        # setuptools no longer warns about data folders missing from `packages`
        log = "\n".join(_BUILD_LOG)
        assert "is absent from the `packages` configuration" not in log
        assert "store.examples" not in log or "absent" not in log

        url = f"sqlite:///{outside / 'fresh.sqlite'}"
        done = _run([str(venv / "bin" / "python"), "-c", SNIPPET, url], outside, 60)
        assert done.returncode == 0, _tail(done)
        report = json.loads(done.stdout.strip().splitlines()[-1])

        purelib = Path(report["purelib"]).resolve()
        assert purelib.is_relative_to(venv.resolve())
        assert not any(Path(p).resolve() == REPO for p in report["sys_path"] if p)
        assert Path(report["store_file"]).resolve().is_relative_to(purelib)
        location = Path(report["script_location"]).resolve()
        assert location == purelib / "store" / "_migrations"
        assert not location.is_relative_to(REPO)
        assert sorted(p.name for p in (location / "versions").glob("*_0*.py")) == sorted(
            p.name for p in (REPO / "migrations" / "versions").glob("*_0*.py")
        )
        assert report["head"] == migrate.head()
        assert (report["before"], report["after"]) == (None, migrate.head())
        assert report["wire_version_column"] is True
        assert report["text"] == "listing"
        assert report["call"] == ["call_1", "bash", "run_shell_command", {"command": "ls"}]
