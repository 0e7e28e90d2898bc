"""The frameworks' own tests, run against our integrations (scripts/conformance): the OpenAI
Agents SDK's session tests with ``TranscriptStoreSession`` in place of its sessions, and
langchain-core's chat-history and ``RunnableWithMessageHistory`` tests with
``TranscriptChatMessageHistory`` in place of ``InMemoryChatMessageHistory``.

The source distribution of the installed version is fetched with pip (cached in
.cache/conformance/). Each plugin lists the tests it excludes with the reason; here every
excluded test must exist in the framework's suite, and every other selected test must pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(framework: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    report = tmp_path / "report.json"
    junit = tmp_path / "junit.xml"
    env = {k: v for k, v in os.environ.items() if k != "TRANSCRIPT_STORE_URL"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "conformance"), framework, "--report",
         str(report), "--", f"--junitxml={junit}", "-rfE", "--tb=short"],
        capture_output=True, text=True, env=env, timeout=1200)
    assert report.exists(), done.stdout[-4000:] + done.stderr[-4000:]
    data = json.loads(report.read_text())
    data["junit"] = junit.read_text() if junit.exists() else ""
    return done, data


def counts(junit: str) -> dict[str, int]:
    import xml.etree.ElementTree as ET

    suite = ET.fromstring(junit)
    suite = suite if suite.tag == "testsuite" else suite[0]
    return {key: int(suite.get(key, "0")) for key in ("tests", "failures", "errors", "skipped")}


def test_the_agents_sdk_session_tests_pass_with_our_session(tmp_path):
    done, data = run("openai-agents", tmp_path)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    got = counts(data["junit"])
    assert got["failures"] == got["errors"] == got["skipped"] == 0
    assert got["tests"] == len(data["run"]) >= 120
    # the genuine failures of the issue run here (not excluded) and pass
    run_ids = "\n".join(data["run"])
    for name in ("test_session_limit_drops_unmatched_history_function_call_output[run]",
                 "test_prepare_input_with_session_leaves_custom_callback_output_unchanged",
                 "test_session_settings_rejects_unknown_dictionary_fields",
                 "test_add_items_concurrent_first_access_across_from_url_sessions",
                 "test_add_items_concurrent_first_access_across_from_url_sessions_cross_loop"):
        assert name in run_ids
    for node, reason in data["excluded"].items():
        assert len(reason) > 40, node  # every exclusion says why


def test_langchain_core_history_tests_pass_with_our_history(tmp_path):
    done, data = run("langchain-core", tmp_path)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    got = counts(data["junit"])
    assert got["failures"] == got["errors"] == got["skipped"] == 0
    assert got["tests"] == len(data["run"]) == 29
    assert data["excluded"] == {}


def test_every_message_langchain_cores_tests_build_round_trips(tmp_path):
    """The messages langchain-core's own message tests construct (content blocks with raw
    bytes, tool calls, chunks, ...) are each stored through our history and read back equal;
    only a message holding a Python object with no JSON form is refused, by design."""
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "conformance"), "langchain-core-messages",
         "--report", str(report), "--", "-p", "no:randomly"],
        capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["tests_failed"] == 0
    assert data["messages"] >= 600
    assert data["failures"] == []
    assert len(data["refused"]) <= 2
    assert all("BadObject" in line for line in data["refused"]), data["refused"]


def test_an_exclusion_must_name_a_selected_test(tmp_path):
    """An excluded test that the framework does not have fails the run (the list stays true);
    one it has is excluded and reported. (The check is shared by both frameworks' plugins.)"""
    script = [sys.executable, str(ROOT / "scripts" / "conformance"), "langchain-core"]
    gone = subprocess.run([*script, "--exclude", "tests/nope.py::test_gone=reason", "--", "--co"],
                          capture_output=True, text=True, timeout=600)
    assert gone.returncode != 0
    assert "excluded tests that are not selected" in gone.stdout + gone.stderr
    report = tmp_path / "report.json"
    first = "tests/unit_tests/runnables/test_history.py::test_interfaces"
    done = subprocess.run([*script, "--report", str(report), "--exclude", f"{first}=local",
                           "--", "--co"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads(report.read_text())
    assert data["excluded"][first] == "local"
    assert first not in data["run"]
