"""The CLI as Python users expect it (issue 17): session management, db downgrade with a
confirmation, --no-color / NO_COLOR, completion, -v logging, output that reads well."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest
from backends import corpus
from click.testing import CliRunner

import store
from store.cli.main import cli
from store.db.schema.migrate import head


@pytest.fixture
def db_url(tmp_path):
    return f"sqlite:///{tmp_path / 'cli.sqlite'}"


@pytest.fixture(autouse=True)
def _quiet_store_logger():
    """-v adds a handler to the 'store' logger: take it away after each test."""
    logger = logging.getLogger("store")
    handlers, level = list(logger.handlers), logger.level
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


def run(*args: str, code: int = 0, input: str | None = None, env: dict[str, str] | None = None):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, input=input, env=env)
    assert result.exit_code == code, (result.output, result.stderr)
    return result


def seeded(db_url: str, *ids: str) -> None:
    with store.TranscriptStore.open(db_url) as opened:
        for sid in ids:
            opened.append(sid, [{"role": "user", "content": "hi"},
                                {"role": "assistant", "content": "hello"}],
                          keys=["a", "b"], title=f"title {sid}", tags=["first"])


class TestSessionManagement:
    def test_delete_asks_and_deletes_only_on_yes(self, db_url):
        seeded(db_url, "s1", "s2")
        refused = run("sessions", "delete", "s1", "--db", db_url, input="n\n", code=0)
        assert "delete s1 (2 messages)" in refused.stderr
        assert "not confirmed: nothing changed" in refused.stderr
        with store.TranscriptStore.open(db_url) as opened:
            assert opened.get_session("s1").message_count == 2
        done = run("sessions", "delete", "s1", "--db", db_url, input="y\n")
        assert "deleted s1 (2 messages)" in done.stdout
        done = run("sessions", "delete", "s2", "--db", db_url, "--yes")
        with store.TranscriptStore.open(db_url) as opened:
            assert opened.list_sessions() == []

    def test_delete_of_an_unknown_session_deletes_nothing(self, db_url):
        seeded(db_url, "s1")
        out = run("sessions", "delete", "s1", "nope", "--db", db_url, "--yes", code=1)
        assert "error: no session with id 'nope'" in out.stderr
        with store.TranscriptStore.open(db_url) as opened:
            assert opened.get_session("s1").message_count == 2

    def test_rename_and_tag(self, db_url):
        seeded(db_url, "s1")
        assert "s1: title 'New name'" in run("sessions", "rename", "s1", "New name",
                                             "--db", db_url).stdout
        assert "s1: tags first, bug, urgent" in run("sessions", "tag", "s1", "bug", "urgent",
                                                    "bug", "--db", db_url).stdout
        assert "s1: tags bug" in run("sessions", "tag", "s1", "--remove", "first", "-r",
                                     "urgent", "--db", db_url).stdout
        with store.TranscriptStore.open(db_url) as opened:
            info = opened.get_session("s1")
        assert (info.title, info.tags) == ("New name", ("bug",))
        assert "s1: no title" in run("sessions", "rename", "s1", "", "--db", db_url).stdout
        assert "no session with id 'zz'" in run("sessions", "tag", "zz", "x", "--db", db_url,
                                                code=1).stderr
        assert "no session with id 'zz'" in run("sessions", "rename", "zz", "x", "--db",
                                                db_url, code=1).stderr

    def test_fork_past_the_end_is_an_error(self, db_url):
        seeded(db_url, "s1")
        out = run("sessions", "fork", "s1", "99", "--new-id", "f", "--db", db_url, code=1)
        assert out.stderr.strip() == ("error: session 's1' has 2 messages: fork at a position "
                                      "from 0 to 2, not 99")
        assert "forked s1 at 2 into f" in run("sessions", "fork", "s1", "2", "--new-id", "f",
                                               "--db", db_url).stdout
        with store.TranscriptStore.open(db_url) as opened:
            assert {s.session_id for s in opened.list_sessions()} == {"f", "s1"}


class TestDowngrade:
    def test_downgrade_asks_then_goes_one_step_and_upgrade_returns(self, db_url):
        seeded(db_url, "s1")
        refused = run("db", "downgrade", "--db", db_url, input="n\n", code=0)
        assert f"from revision {head()} to -1" in refused.stderr
        assert store.database_status(db_url).current == head()
        out = run("db", "downgrade", "--db", db_url, "--", "-1", input="y\n").stdout
        status = store.database_status(db_url)
        assert status.current != head() and status.current is not None
        assert f"at revision {status.current} (head {head()})" in out
        with pytest.raises(store.SchemaOutOfDate):
            store.TranscriptStore.open(db_url)
        run("db", "upgrade", "--db", db_url)
        with store.TranscriptStore.open(db_url) as opened:
            assert opened.get_session("s1").message_count == 2

    def test_downgrade_to_base_and_bad_revisions(self, db_url):
        seeded(db_url, "s1")
        out = run("db", "downgrade", "base", "--yes", "--db", db_url).stdout
        assert "at revision base (no schema)" in out
        assert store.database_status(db_url).current is None
        assert "no transcript-store schema to downgrade" in run(
            "db", "downgrade", "--yes", "--db", db_url, code=1).stderr
        run("db", "upgrade", "--db", db_url)
        bad = run("db", "downgrade", "nope", "--yes", "--db", db_url, code=1)
        assert bad.stderr.startswith("error: ") and "revision identified by 'nope'" in bad.stderr
        assert store.database_status(db_url).current == head()


class TestColorAndCompletion:
    def test_no_color_flag_and_env_strip_escapes_a_forced_terminal_would_get(self, db_url):
        seeded(db_url, "s1")
        forced = {"FORCE_COLOR": "1", "TTY_COMPATIBLE": "1"}
        coloured = run("sessions", "show", "s1", "--db", db_url, env=forced).stdout
        assert "\x1b[" in coloured
        plain = run("--no-color", "sessions", "show", "s1", "--db", db_url, env=forced).stdout
        assert "\x1b[" not in plain and "hello" in plain
        plain = run("sessions", "show", "s1", "--db", db_url,
                    env={**forced, "NO_COLOR": "1"}).stdout
        assert "\x1b[" not in plain and "hello" in plain

    def test_completion_scripts_and_completion_itself(self):
        for shell, marker in (("bash", "complete -o nosort -F"), ("zsh", "#compdef"),
                              ("fish", "complete --no-files")):
            assert marker in run("completion", shell).stdout
        done = subprocess.run([sys.executable, "-m", "store"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "COMP_WORDS": "transcript-store ses",
                                               "COMP_CWORD": "1",
                                               "_TRANSCRIPT_STORE_COMPLETE": "bash_complete"})
        assert "plain,sessions" in done.stdout.splitlines()
        assert "completion" in run("--help").stdout

    def test_version_from_python_dash_m(self):
        done = subprocess.run([sys.executable, "-m", "store", "--version"],
                              capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == f"transcript-store, version {store.__version__}"


class TestLogging:
    def test_silent_by_default_and_verbose_logs_migrations_and_import(self, tmp_path, db_url):
        session = tmp_path / "chat.jsonl"
        session.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n")
        bad = tmp_path / "what.json"
        bad.write_text('{"nothing": "known"}')
        quiet = run("import", str(session), str(bad), "--db", db_url, "-q", code=1)
        assert "INFO" not in quiet.stderr and "migrated" not in quiet.stderr
        other = f"sqlite:///{tmp_path / 'other.sqlite'}"
        loud = run("-v", "import", str(session), str(bad), "--db", other, "-q", code=1)
        assert f"INFO store.db.schema.migrate: migrated {other} from revision none" in loud.stderr
        assert "INFO store.importers.walk: importing" in loud.stderr
        assert f"WARNING store.importers.walk: not imported: {bad}: cannot tell" in loud.stderr
        assert "INFO store.importers.walk: imported 1 files" in loud.stderr

    def test_the_library_logs_nothing_without_configuration(self, tmp_path):
        code = ("import store; s = store.TranscriptStore.open('sqlite:///%s'); "
                "s.append('x', [{'role': 'user', 'content': 'hi'}]); s.close()"
                % (tmp_path / "lib.sqlite"))
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0 and done.stderr == ""

    def test_a_retry_after_a_lock_conflict_is_logged(self, tmp_path, caplog, monkeypatch):
        import sqlite3
        import threading

        from store.db.schema import engine

        # a short busy timeout, so that SQLite reports the lock instead of waiting it out
        monkeypatch.setattr(engine, "SQLITE_BUSY_TIMEOUT_MS", 20)
        url = f"sqlite:///{tmp_path / 'locked.sqlite'}"
        with store.TranscriptStore.open(url) as opened:
            opened.append("s", [{"role": "user", "content": "one"}])
            holder = sqlite3.connect(tmp_path / "locked.sqlite", timeout=0,
                                     check_same_thread=False)
            holder.execute("BEGIN IMMEDIATE")
            release = threading.Timer(0.5, holder.rollback)
            release.start()
            try:
                with caplog.at_level(logging.INFO, logger="store"):
                    opened.append("s", [{"role": "user", "content": "two"}])
                assert opened.get_session("s").message_count == 2
            finally:
                release.join()
                holder.close()
        retries = [r for r in caplog.records if "retrying the transaction" in r.getMessage()]
        assert retries and retries[0].name == "store.db.base"
        assert "database is locked" in retries[0].getMessage()

    def test_viewer_requests_log_at_debug(self, tmp_path, caplog):
        import threading
        import urllib.request

        from store.viewer import make_server

        url = f"sqlite:///{tmp_path / 'v.sqlite'}"
        store.TranscriptStore.open(url).close()
        with store.TranscriptStore.open(url, read_only=True) as opened:
            server = make_server(opened, "127.0.0.1", 0)
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            try:
                with caplog.at_level(logging.DEBUG, logger="store"):
                    urllib.request.urlopen(server.url, timeout=10).read()
            finally:
                server.shutdown()
                server.server_close()
        lines = [r for r in caplog.records if r.name == "store.viewer.server"]
        assert lines and lines[0].levelno == logging.DEBUG
        assert '"GET / HTTP/1.1" 302' in lines[0].getMessage()


class TestOutput:
    def test_multi_line_results_fold_to_one_line_in_tables(self, db_url):
        long = "\n".join(f"line {n}" for n in range(13))
        with store.TranscriptStore.open(db_url) as opened:
            opened.append("s", [
                {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "c1", "type": "function",
                    "function": {"name": "bash", "arguments": '{\n  "command": "ls"\n}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": long}])
        out = run("calls", "search", "--db", db_url).stdout
        (row,) = [line for line in out.splitlines() if "bash" in line]
        assert "line 0 …" in row and '{ …' in row
        assert "line 1" not in out  # one line per row
        whole = run("calls", "show", "s:0.0", "--db", db_url).stdout
        assert "line 12" in whole

    def test_titles_are_their_own_line_so_a_url_never_wraps(self, tmp_path):
        folder = tmp_path / ("a-long-directory-name-" * 4)
        folder.mkdir()
        url = f"sqlite:///{folder}/demo.sqlite"
        out = run("demo", "--db", url).stdout
        assert f"stored in {url}\n" in out

    def test_import_groups_identical_failures_and_verbose_lists_them(self, tmp_path, db_url):
        for n in range(3):
            (tmp_path / f"what{n}.json").write_text('{"nothing": "known"}')
        out = run("import", str(tmp_path), "--db", db_url, "-q", code=1)
        (line,) = [line for line in out.stderr.splitlines() if line.startswith("failed:")]
        assert line.startswith("failed: 3 files: cannot tell the format")
        assert line.endswith("(-v lists them: transcript-store -v import ...)")
        listed = run("-v", "import", str(tmp_path), "--db", db_url, "-q", code=1)
        lines = listed.stderr.splitlines()
        assert len([line for line in lines if line.startswith("failed: /")]) == 3
        assert f"imported into {db_url}\n" in out.stdout

    @pytest.mark.corpus
    def test_importing_the_corpus_groups_the_undetected_files(self, db_url):
        out = run("import", str(corpus()), "--db", db_url, "-q", code=1)
        failed = [line for line in out.stderr.splitlines() if line.startswith("failed:")]
        assert len(failed) < 5
        assert any(line.startswith("failed: ") and " files: cannot tell the format" in line
                   for line in failed)

    def test_audit_schema_says_what_it_checked(self, db_url):
        seeded(db_url, "s1")
        out = run("audit", "schema", "--db", db_url).stdout
        assert out.startswith("no schema violations: checked the 0 stored calls against the "
                              "tool definitions recorded with each session")

    def test_export_of_an_unknown_session_exits_1_for_csv_as_for_jsonl(self, db_url):
        seeded(db_url, "s1")
        for target in ("jsonl", "csv"):
            out = run("export", "nope", "--to", target, "--db", db_url, code=1)
            assert out.stderr.strip() == "error: no session with id 'nope'"
            assert out.stdout == ""

    def test_serve_prints_the_url_the_user_gave(self, tmp_path):
        path = tmp_path / "served.sqlite"
        store.TranscriptStore.open(f"sqlite:///{path}").close()
        proc = subprocess.Popen([sys.executable, "-m", "store", "serve", "--port", "0",
                                 "--db", f"sqlite:///{path}"], stderr=subprocess.PIPE,
                                text=True)
        assert proc.stderr is not None
        try:
            first = proc.stderr.readline()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            proc.stderr.close()
        assert first.startswith(f"serving sqlite:///{path} read-only at http://127.0.0.1:")
        assert "mode" not in first and "%3A" not in first
