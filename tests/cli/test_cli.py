"""The command line, through click's runner and once as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

import store
from store.cli import cli


def run(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


class TestCli:
    def test_help_lists_the_commands(self):
        assert "demo" in run("--help").output

    def test_version(self):
        assert store.__version__ in run("--version").output

    def test_demo_prints_the_example_calls_as_json(self):
        rows = [json.loads(line) for line in run("demo", "--json").output.splitlines()]
        assert len(rows) == 6
        by_name = {row["name"]: row for row in rows}
        assert by_name["bash"]["raw_name"] == "run_shell_command"
        assert by_name["send_email"]["status"] == "invalid_json"
        assert by_name["edit"]["arguments"] == '{"path":"a.txt","old":":keep"}'

    def test_demo_reads_given_files(self, tmp_path):
        path = tmp_path / "one.json"
        path.write_text(json.dumps({"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}))
        rows = [json.loads(line) for line in run("demo", "--json", str(path)).output.splitlines()]
        assert [(r["id"], r["name"], r["record"]) for r in rows] == [("c", "f", "one.json")]

    def test_an_unrecognised_record_is_one_error_line_and_exit_1(self, tmp_path):
        path = tmp_path / "bad.jsonl"
        path.write_text('{"role": "assistant"}\n{"nope": 1}\n')
        result = CliRunner().invoke(cli, ["demo", str(path)])
        assert result.exit_code == 1
        assert result.output.strip().splitlines() == [
            "error: bad.jsonl:2: not a message: found keys ['nope']"
        ]

    def test_traceback_flag_reraises(self, tmp_path):
        path = tmp_path / "bad.json"
        path.write_text('{"nope": 1}')
        with pytest.raises(store.RecordError, match="bad.json: not a message"):
            CliRunner().invoke(cli, ["--traceback", "demo", str(path)],
                               catch_exceptions=False)

    def test_a_missing_file_is_a_usage_error(self):
        assert CliRunner().invoke(cli, ["demo", "/no/such/file.json"]).exit_code == 2

    def test_python_dash_m_runs_the_same_cli(self):
        done = subprocess.run([sys.executable, "-m", "store", "--help"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "demo" in done.stdout
