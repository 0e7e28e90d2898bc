"""The command line, through click's runner and once as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

import store
from store.cli.main import cli
from store.db.schema.migrate import head

HEAD = head()


@pytest.fixture
def db_url(tmp_path):
    return f"sqlite:///{tmp_path / 'cli.sqlite'}"


def run(*args: str, code: int = 0, env: dict[str, str] | None = None):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)
    assert result.exit_code == code, result.output
    return result


class TestCli:
    def test_help_lists_the_commands(self):
        output = run("--help").output
        assert "demo" in output and "db" in output

    def test_version(self):
        assert store.__version__ in run("--version").output

    def test_every_command_has_help(self):
        for args in (["demo"], ["db"], ["db", "upgrade"], ["db", "current"], ["db", "check"]):
            assert "Usage:" in run(*args, "--help").output

    def test_python_dash_m_runs_the_same_cli(self):
        done = subprocess.run([sys.executable, "-m", "store", "--help"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "demo" in done.stdout


class TestDemo:
    def test_demo_stores_the_examples_and_prints_the_calls(self, db_url):
        rows = [json.loads(line)
                for line in run("demo", "--db", db_url, "--json").output.splitlines()]
        assert len(rows) == 8
        by_id = {row["call_id"]: row for row in rows}
        assert (by_id["call_ls01"]["tool"], by_id["call_ls01"]["raw_tool"]) == (
            "bash", "run_shell_command")
        assert by_id["call_ls01"]["result"] == "README.md\nstore\ntests"
        assert by_id["call_ts7x0"]["status"] == "invalid_json"
        assert by_id["call_k1"]["arguments"] == '{"command":"pytest -q"}'
        with store.TranscriptStore.open(db_url) as opened:
            sessions = {s.session_id: s for s in opened.list_sessions()}
        assert set(sessions) == {"legacy-kward", "mixed-providers"}
        assert sessions["legacy-kward"].cwd == "/home/dev/app"

    def test_demo_twice_stores_nothing_twice(self, db_url):
        run("demo", "--db", db_url)
        output = run("demo", "--db", db_url).output
        assert "already stored" in output
        with store.TranscriptStore.open(db_url) as opened:
            assert opened.count_calls() == 8

    def test_demo_uses_the_environment_url(self, db_url):
        run("demo", env={"TRANSCRIPT_STORE_URL": db_url})
        with store.TranscriptStore.open(db_url) as opened:
            assert opened.count_calls() == 8

    def test_demo_reads_given_files(self, tmp_path, db_url):
        path = tmp_path / "one.json"
        path.write_text(json.dumps({"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}))
        rows = [json.loads(line)
                for line in run("demo", "--db", db_url, "--json", str(path)).output.splitlines()]
        assert [(r["call_id"], r["tool"], r["session_id"]) for r in rows] == [("c", "f", "one")]

    def test_an_unrecognised_record_is_one_error_line_and_exit_1(self, tmp_path, db_url):
        path = tmp_path / "bad.jsonl"
        path.write_text('{"role": "assistant"}\n{"nope": 1}\n')
        result = CliRunner().invoke(cli, ["demo", "--db", db_url, str(path)])
        assert result.exit_code == 1
        assert result.output.strip().splitlines() == [
            "error: message 1: not a message: found keys ['nope']"
        ]

    def test_traceback_flag_reraises(self, tmp_path, db_url):
        path = tmp_path / "bad.json"
        path.write_text('{"nope": 1}')
        with pytest.raises(store.UnrecognizedRecord, match="not a message"):
            CliRunner().invoke(cli, ["--traceback", "demo", "--db", db_url, str(path)],
                               catch_exceptions=False)

    def test_a_missing_file_is_a_usage_error(self, db_url):
        assert CliRunner().invoke(cli, ["demo", "--db", db_url, "/no/such.json"]).exit_code == 2


class TestDb:
    def test_upgrade_current_and_check(self, db_url):
        assert f"at revision {HEAD}" in run("db", "upgrade", "--db", db_url).output
        assert "(at head)" in run("db", "current", "--db", db_url).output
        assert "schema matches the code" in run("db", "check", "--db", db_url).output

    def test_an_older_database_is_reported_and_upgraded(self, db_url):
        run("db", "upgrade", "--db", db_url, "--revision", "0001")
        current = run("db", "current", "--db", db_url, code=1).output
        assert "revision 0001" in current and "transcript-store db upgrade" in current
        check = CliRunner().invoke(cli, ["db", "check", "--db", db_url])
        assert check.exit_code == 1 and "run `transcript-store db upgrade`" in check.output
        opened = CliRunner().invoke(cli, ["demo", "--db", db_url])
        assert opened.exit_code == 1 and "SchemaOutOfDate" not in opened.output
        assert "transcript-store db upgrade" in opened.output
        run("db", "upgrade", "--db", db_url)
        assert "(at head)" in run("db", "current", "--db", db_url).output

    def test_a_password_in_the_url_is_never_printed(self):
        url = "postgresql+psycopg://user:hunter2@127.0.0.1:1/nowhere"
        result = CliRunner().invoke(cli, ["db", "current", "--db", url])
        assert result.exit_code == 1
        assert "hunter2" not in result.output and "***" in result.output

    def test_a_real_subprocess_upgrades_a_database(self, tmp_path):
        url = f"sqlite:///{tmp_path / 'sub.sqlite'}"
        done = subprocess.run(
            [sys.executable, "-m", "store", "db", "upgrade", "--db", url],
            capture_output=True, text=True, timeout=120, env={**os.environ},
        )
        assert done.returncode == 0, done.stderr
        assert f"at revision {HEAD}" in done.stdout


class TestSessionsAndVerify:
    def test_sessions_list_show_fork_and_verify(self, db_url):
        run("demo", "--db", db_url)
        listed = [json.loads(line) for line in
                  run("sessions", "list", "--db", db_url, "--json").output.splitlines()]
        assert {row["session_id"] for row in listed} == {"legacy-kward", "mixed-providers"}
        assert "mixed-providers" in run("sessions", "list", "--db", db_url).output
        shown = run("sessions", "show", "mixed-providers", "--db", db_url).output
        assert "call bash (recorded as run_shell_command)" in shown
        assert "INVALID ARGUMENTS (invalid_json)" in shown
        assert "no result (dangling call)" in shown
        assert '"command": "ls -la"' in shown
        as_json = [json.loads(line) for line in run(
            "sessions", "show", "mixed-providers", "--db", db_url, "--json").output.splitlines()]
        assert as_json[1]["calls"][0]["function"]["name"] == "run_shell_command"
        assert "into copy" in run("sessions", "fork", "mixed-providers", "3", "--new-id",
                                  "copy", "--db", db_url).output
        assert "checked 3 sessions" in run("verify", "--db", db_url).output

    def test_show_of_an_unknown_session_is_one_error_line(self, db_url):
        run("db", "upgrade", "--db", db_url)
        result = CliRunner().invoke(cli, ["sessions", "show", "nope", "--db", db_url])
        assert result.exit_code == 1
        assert result.output.strip() == "error: no session with id 'nope'"

    def test_a_markup_injection_in_a_transcript_is_shown_as_text(self, db_url, tmp_path):
        path = tmp_path / "evil.jsonl"
        path.write_text(json.dumps({"role": "user", "content": "[bold red]boom[/] <script>"}))
        run("demo", "--db", db_url, str(path))
        shown = run("sessions", "show", "evil", "--db", db_url).output
        assert "[bold red]boom[/] <script>" in shown

    def test_verify_exits_1_on_errors(self, db_url):
        run("demo", "--db", db_url)
        from sqlalchemy import create_engine, text

        engine = create_engine(db_url)
        with engine.begin() as conn:
            conn.execute(text("UPDATE sessions SET next_position = 99"))
        engine.dispose()
        result = CliRunner().invoke(cli, ["verify", "--db", db_url, "--json"])
        assert result.exit_code == 1
        # (the chain says it too: the session's length no longer matches its chain)
        assert {json.loads(line)["check"] for line in result.output.splitlines()} == {
            "positions", "chain"}


class TestImport:
    def test_import_reports_a_summary_and_is_idempotent(self, db_url, tmp_path):
        lines = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {
                "name": "read_file", "arguments": '{"path": "a"}'}}]},
            {"role": "tool", "tool_call_id": "c", "content": "A"},
        ]
        path = tmp_path / "chat.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
        first = CliRunner().invoke(cli, ["import", "--db", db_url, "--json", "-q", str(path)])
        assert first.exit_code == 1  # the bad line is a problem, the rest is imported
        summary = json.loads(first.stdout.splitlines()[0])
        assert (summary["messages_added"], summary["calls"]) == (3, 1)
        assert any("chat.jsonl:4" in p for p in summary["problems"])
        second = CliRunner().invoke(cli, ["import", "--db", db_url, "--json", "-q", str(path)])
        assert json.loads(second.stdout.splitlines()[0])["messages_added"] == 0

    def test_import_as_a_real_subprocess(self, db_url, tmp_path):
        path = tmp_path / "one.json"
        path.write_text(json.dumps([{"role": "user", "content": "hello"}]))
        done = subprocess.run(
            [sys.executable, "-m", "store", "import", "--db", db_url, "-q", str(path)],
            capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "messages added" in done.stdout


class TestExport:
    @pytest.mark.parametrize("target", ["openai-chat", "openai-responses", "anthropic",
                                        "gemini", "bedrock"])
    def test_export_with_repair_passes_the_providers_rules(self, db_url, target):
        from provider_rules import VALIDATORS

        run("demo", "--db", db_url)
        result = CliRunner().invoke(cli, ["export", "mixed-providers", "--to", target,
                                          "--repair", "--db", db_url])
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        assert VALIDATORS[target](payload) == []
        assert "repair: synthesized_result" in result.stderr
        assert "repair: substituted_arguments" in result.stderr

    def test_export_without_repair_refuses_a_history_the_target_would_refuse(self, db_url):
        run("demo", "--db", db_url)
        refused = run("export", "mixed-providers", "--to", "openai-chat", "--db", db_url,
                      code=1)
        assert refused.stdout == ""
        assert "problem: synthesized_result (message 5)" in refused.stderr
        assert "problem: substituted_arguments (message 7)" in refused.stderr
        assert "export with --repair" in refused.stderr

    def test_export_keeps_argument_text_byte_for_byte(self, db_url):
        run("demo", "--db", db_url)
        payload = json.loads(run("export", "mixed-providers", "--to", "openai-chat",
                                 "--repair", "--db", db_url).stdout)
        calls = [c for m in payload["messages"] for c in m.get("tool_calls") or []]
        assert calls[0]["function"]["arguments"] == '{"command": "ls -la"}'

    def test_export_last_turns(self, db_url):
        run("demo", "--db", db_url)
        payload = json.loads(run("export", "legacy-kward", "--to", "openai-chat",
                                 "--last-turns", "1", "--db", db_url).stdout)
        assert payload["messages"][0]["content"] == "Run the tests and fix what fails."


class TestAuditCommands:
    def test_tools_usage_calls_search_and_show(self, db_url):
        run("demo", "--db", db_url)
        usage = {json.loads(line)["tool"]: json.loads(line) for line in
                 run("tools", "usage", "--db", db_url, "--json").output.splitlines()}
        assert usage["bash"]["calls"] == 2 and usage["bash"]["sessions"] == 2
        assert usage["send_email"]["invalid_calls"] == 1
        found = [json.loads(line) for line in run(
            "calls", "search", "--db", db_url, "--tool", "bash", "--contains",
            "command=ls -la", "--json").output.splitlines()]
        assert [(f["session_id"], f["call_id"]) for f in found] == [
            ("mixed-providers", "call_ls01")]
        text = run("calls", "search", "--db", db_url, "--text", "readme", "--json").output
        assert "toolu_01readme" in text
        shown = run("calls", "show", "mixed-providers:1.0", "--db", db_url).output
        assert "recorded as run_shell_command" in shown and "-> README.md" in shown
        by_id = run("calls", "show", "call_k1", "--session", "legacy-kward", "--db", db_url,
                    "--json").output
        assert json.loads(by_id)["arguments"] == {"command": "pytest -q"}

    def test_every_listing_offers_json(self):
        for args in (["tools", "usage"], ["calls", "search"], ["sessions", "list"],
                     ["audit", "schema"], ["verify"]):
            assert "--json" in run(*args, "--help").output, args

    def test_audit_schema_reports_violations_and_exits_1(self, db_url, tmp_path):
        run("demo", "--db", db_url)
        schema = tmp_path / "tools.json"
        schema.write_text(json.dumps([{"name": "bash", "description": "run",
                                       "input_schema": {"type": "object",
                                                        "properties": {"cmd": {"type": "string"}},
                                                        "required": ["cmd"]}}]))
        result = CliRunner().invoke(cli, ["audit", "schema", "--db", db_url, "--schema",
                                          str(schema), "--tool", "bash"])
        assert result.exit_code == 1
        assert "Missing required parameter `cmd`" in result.output

    def test_export_jsonl_and_csv_with_redaction(self, db_url, tmp_path):
        path = tmp_path / "secret.jsonl"
        arguments = json.dumps({"url": "https://u:hunter2@example.com",
                                "auth": "Bearer abcdefghijklmnop"})
        path.write_text(json.dumps({"role": "assistant", "tool_calls": [{
            "id": "c", "type": "function",
            "function": {"name": "fetch", "arguments": arguments}}]}))
        run("demo", "--db", db_url, str(path))
        jsonl = run("export", "--to", "jsonl", "secret", "--redact", "--db", db_url).stdout
        assert "hunter2" not in jsonl and "[REDACTED:" in jsonl
        csv_text = run("export", "--to", "csv", "--redact", "--db", db_url).stdout
        assert csv_text.startswith("session_id,") and "hunter2" not in csv_text
        plain = run("export", "--to", "jsonl", "secret", "--db", db_url).stdout
        assert "hunter2" in plain

    def test_export_to_a_provider_needs_exactly_one_session(self, db_url):
        run("demo", "--db", db_url)
        result = CliRunner().invoke(cli, ["export", "--to", "anthropic", "--db", db_url])
        assert result.exit_code == 2 and "exactly one session" in result.output
