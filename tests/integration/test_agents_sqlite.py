"""Issue 26 ("More agents"): the agents that keep their sessions in SQLite, on both store
backends: calls, results, errors, missing results, times, cwd, model, title, usage, lineage,
the tool vocabulary, a database read while the agent writes it, and ``import`` with no paths
under a fake home."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from agent_databases import (
    CRUSH_SESSION,
    CRUSH_SUBAGENT,
    GOOSE_DIR,
    GOOSE_SESSION,
    MODEL,
    MS,
    OC_CHILD,
    OC_DIR,
    OC_SESSION,
    SEPT,
    CrushWriter,
    GooseWriter,
    OpenCodeWriter,
    crush_call,
    crush_finish,
    crush_part,
    crush_result,
    goose_request,
    goose_response,
    goose_text,
    oc_assistant,
    oc_tool,
    oc_user,
    write_crush,
    write_goose,
    write_opencode,
    write_opencode_storage,
)
from click.testing import CliRunner

from store import (
    CallQuery,
    ImportFileError,
    TranscriptStore,
    ViewCondition,
    agent_folders,
    import_paths,
    search_calls,
)
from store.cli.main import cli
from store.importers.agentdb import read_agent_db


def companions(path: Path) -> set[str]:
    return {p.name for p in path.parent.iterdir() if p.name.startswith(path.name + "-")}


class TestCrush:
    @pytest.fixture
    def crush(self, tmp_path: Path) -> Path:
        return write_crush(tmp_path / "proj")

    def test_calls_results_errors_and_a_missing_result(self, store: TranscriptStore,
                                                       crush: Path) -> None:
        summary = import_paths(store, [crush], settle=0)
        assert summary.ok, (summary.problems, summary.failed_files)

        calls = {c.call.id: c for c in store.load(CRUSH_SESSION).calls()}
        assert list(calls) == ["call-rm", "call-view", "call-false", "call-task", "call-grep"]
        assert calls["call-rm"].call.name == "bash"
        assert calls["call-rm"].call.input == {"command": "rm -rf build"}
        assert calls["call-view"].call.name == "read"
        assert calls["call-view"].result is not None
        assert calls["call-view"].result.content == "print('hi')"
        assert calls["call-false"].result is not None and calls["call-false"].result.is_error
        assert calls["call-rm"].result is not None and not calls["call-rm"].result.is_error
        assert calls["call-grep"].result is None  # never invented
        assert calls["call-task"].call.name == "task"

    def test_session_title_model_cwd_times_and_token_totals(self, store: TranscriptStore,
                                                            crush: Path) -> None:
        import_paths(store, [crush], settle=0)

        info = store.get_session(CRUSH_SESSION)
        assert (info.title, info.model, info.agent) == ("Fix the build", MODEL, "crush")
        assert info.cwd == str(crush.parent.parent)
        assert info.metadata["prompt_tokens"] == 15000
        loaded = store.load(CRUSH_SESSION)
        assert loaded.messages[0].created_at == datetime.fromtimestamp(SEPT, UTC)
        assert loaded.messages[-1].created_at == datetime.fromtimestamp(SEPT + 29, UTC)
        thinking = loaded.messages[1].message.parts[0]
        assert getattr(thinking, "text", None) == "Look first."

    def test_a_subagent_session_is_linked_and_title_sessions_are_skipped(
            self, store: TranscriptStore, crush: Path) -> None:
        summary = import_paths(store, [crush], settle=0)

        child = store.get_session(CRUSH_SUBAGENT)
        assert child.metadata["parent_session"] == CRUSH_SESSION
        assert child.metadata["parent_call_id"] == "call-task"
        assert "subagent" in child.tags and child.model == "claude-haiku-4-5"
        assert summary.skipped == {"crush: title-generation session": 1}
        assert {s.session_id for s in store.list_sessions(limit=None)} == {
            CRUSH_SESSION, CRUSH_SUBAGENT}
        glob = search_calls(store, CallQuery(tool="glob"))
        assert [m.session_id for m in glob] == [CRUSH_SUBAGENT]

    def test_reading_leaves_no_file_and_importing_again_stores_nothing(
            self, store: TranscriptStore, crush: Path) -> None:
        before = sorted(p.name for p in crush.parent.iterdir())
        first = import_paths(store, [crush], settle=0)
        assert sorted(p.name for p in crush.parent.iterdir()) == before
        os.utime(crush)  # touched: read again, keys make it idempotent
        again = import_paths(store, [crush], settle=0)
        assert (again.files, again.messages_added) == (1, 0)
        assert again.messages_already_stored == first.messages_added
        assert import_paths(store, [crush], settle=0).unchanged == 1

    def test_import_with_no_paths_finds_the_projects_crush_lists(
            self, store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        home = tmp_path / "home"
        project = tmp_path / "work" / "proj"
        database = write_crush(project)
        listing = home / ".local" / "share" / "crush" / "projects.json"
        listing.parent.mkdir(parents=True)
        listing.write_text(json.dumps({"projects": [
            {"path": str(project), "data_dir": str(database.parent),
             "last_accessed": "2025-09-04T00:00:00Z"}]}), encoding="utf-8")
        clear_agent_env(monkeypatch, home)

        result = CliRunner().invoke(cli, ["import", "--db", store_url, "--yes", "--settle",
                                          "0", "--json"])

        assert result.exit_code == 0, result.output
        with TranscriptStore.open(store_url) as opened:
            assert opened.get_session(CRUSH_SESSION).cwd == str(project)


def usage_rows(db: TranscriptStore, sid: str) -> list[tuple[object, ...]]:
    with db.engine.connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(
            "SELECT position, model, response_id, input_tokens, output_tokens, "
            "cache_creation_tokens, cache_read_tokens, reasoning_tokens FROM message_usage "
            f"WHERE session_id = '{sid}' ORDER BY position").all()]


def clear_agent_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    for name in ("CRUSH_GLOBAL_DATA", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
                 "GEMINI_CLI_HOME", "GOOSE_PATH_ROOT"):
        monkeypatch.delenv(name, raising=False)


class TestOpenCode:
    @pytest.fixture
    def opencode(self, tmp_path: Path) -> Path:
        return write_opencode(tmp_path / "data")

    def test_calls_results_errors_and_a_running_call(self, store: TranscriptStore,
                                                     opencode: Path) -> None:
        summary = import_paths(store, [opencode], settle=0)
        assert summary.ok, (summary.problems, summary.failed_files)

        calls = {c.call.id: c for c in store.load(OC_SESSION).calls()}
        assert list(calls) == ["call-rm", "call-read", "call-false", "call-task", "call-grep"]
        assert [calls[c].call.name for c in calls] == ["bash", "read", "bash", "task", "grep"]
        assert calls["call-read"].result is not None
        assert calls["call-read"].result.content == "print('hi')"
        assert calls["call-false"].result is not None and calls["call-false"].result.is_error
        assert calls["call-false"].result.content == "exit 1"
        assert calls["call-rm"].result is not None and not calls["call-rm"].result.is_error
        assert calls["call-grep"].result is None  # still running: never invented
        read = search_calls(store, CallQuery(tool="read"))
        assert [(m.session_id, m.raw_name) for m in read] == [(OC_SESSION, "read")]

    def test_title_model_cwd_times_and_usage_per_message(self, store: TranscriptStore,
                                                         opencode: Path) -> None:
        import_paths(store, [opencode], settle=0)

        info = store.get_session(OC_SESSION)
        assert (info.title, info.model, info.cwd, info.agent) == (
            "Fix the build", MODEL, OC_DIR, "opencode")
        loaded = store.load(OC_SESSION)
        assert [m.key for m in loaded.messages] == ["msg_01", "msg_02", "msg_02:results",
                                                    "msg_03"]
        assert loaded.messages[0].created_at == datetime.fromtimestamp(SEPT, UTC)
        assert loaded.messages[-1].created_at == datetime.fromtimestamp(SEPT + 20, UTC)
        assert usage_rows(store, OC_SESSION) == [(1, MODEL, "msg_02", 120, 48, 700, 9000, 8)]

    def test_a_subagent_session_is_linked_to_its_task_call(self, store: TranscriptStore,
                                                           opencode: Path) -> None:
        import_paths(store, [opencode], settle=0)

        child = store.get_session(OC_CHILD)
        assert child.metadata["parent_session"] == OC_SESSION
        assert child.metadata["parent_call_id"] == "call-task"
        assert "subagent" in child.tags and child.model == "claude-haiku-4-5"

    def test_a_default_title_gives_way_to_the_first_prompt(self, store: TranscriptStore,
                                                           tmp_path: Path) -> None:
        path = tmp_path / "opencode.db"
        w = OpenCodeWriter(path)
        w.session("ses_x", "New session - 2025-09-04T10:00:00.000Z", MS)
        w.message("m1", "ses_x", oc_user(MS), MS)
        w.part("p1", "m1", "ses_x", {"type": "text", "text": "rename the module"}, MS)
        w.close()

        import_paths(store, [path], settle=0)

        assert store.get_session("ses_x").title == "rename the module"

    def test_the_json_storage_of_older_versions_reads_the_same(
            self, store: TranscriptStore, opencode: Path, tmp_path: Path) -> None:
        storage = write_opencode_storage(tmp_path / "old", opencode)

        summary = import_paths(store, [storage], settle=0)

        assert summary.ok, (summary.problems, summary.failed_files)
        assert summary.files == 2  # the two session files; messages and parts read with them
        calls = {c.call.id: c for c in store.load(OC_SESSION).calls()}
        assert list(calls) == ["call-rm", "call-read", "call-false", "call-task", "call-grep"]
        assert calls["call-false"].result is not None and calls["call-false"].result.is_error
        assert store.get_session(OC_CHILD).metadata["parent_call_id"] == "call-task"
        assert usage_rows(store, OC_SESSION) == [(1, MODEL, "msg_02", 120, 48, 700, 9000, 8)]
        # the database that versions since moved them into: nothing new, nothing rewritten
        again = import_paths(store, [opencode], settle=0)
        assert again.diverged == [] and again.messages_added == 0

    def test_walking_the_data_folder_leaves_its_settings_unread(
            self, store: TranscriptStore, opencode: Path) -> None:
        (opencode.parent / "auth.json").write_text('{"example": {"type": "api"}}',
                                                   encoding="utf-8")

        summary = import_paths(store, [opencode.parent], settle=0)

        assert summary.ok and summary.failed_files == [] and summary.files == 1

    def test_import_with_no_paths_finds_the_data_folder(
            self, store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        home = tmp_path / "home"
        write_opencode(home / ".local" / "share")
        clear_agent_env(monkeypatch, home)

        result = CliRunner().invoke(cli, ["import", "--db", store_url, "--yes", "--settle",
                                          "0", "--json"])

        assert result.exit_code == 0, result.output
        with TranscriptStore.open(store_url) as opened:
            assert opened.get_session(OC_SESSION).cwd == OC_DIR


def store_usage(db: TranscriptStore) -> list[Any]:
    from store import usage_report

    return usage_report(db, by="session")


class TestGoose:
    @pytest.fixture
    def goose(self, tmp_path: Path) -> Path:
        return write_goose(tmp_path / "data")

    def test_calls_results_errors_and_a_missing_response(self, store: TranscriptStore,
                                                         goose: Path) -> None:
        summary = import_paths(store, [goose], settle=0)
        assert summary.ok, (summary.problems, summary.failed_files)

        calls = {c.call.id: c for c in store.load(GOOSE_SESSION).calls()}
        assert list(calls) == ["call-rm", "call-view", "call-false", "call-grep"]
        assert [calls[c].call.name for c in calls] == ["bash", "read", "bash", "bash"]
        assert calls["call-view"].result is not None
        assert calls["call-view"].result.content == "print('hi')"
        assert calls["call-false"].result is not None and calls["call-false"].result.is_error
        assert calls["call-rm"].result is not None and not calls["call-rm"].result.is_error
        assert calls["call-grep"].result is None  # never invented
        roles = [m.message.role for m in store.load(GOOSE_SESSION).messages]
        assert roles == ["user", "assistant", "tool", "assistant"]
        rm = search_calls(store, CallQuery(tool="bash", views=(
            ViewCondition("command", "rm -rf build"),)))
        assert [m.call_id for m in rm] == ["call-rm"]
        # the text editor's "command" is a sub-command (view), not a shell command
        assert search_calls(store, CallQuery(views=(ViewCondition("command", "view"),))) == []
        assert [m.call_id for m in search_calls(store, CallQuery(views=(
            ViewCondition("path", "src/app.py"),)))] == ["call-view"]

    def test_session_title_model_cwd_times_and_token_totals(self, store: TranscriptStore,
                                                            goose: Path) -> None:
        import_paths(store, [goose], settle=0)

        info = store.get_session(GOOSE_SESSION)
        assert (info.title, info.model, info.cwd, info.agent, info.provider) == (
            "Fix the build", MODEL, GOOSE_DIR, "goose", "anthropic")
        assert info.metadata["accumulated_input_tokens"] == 12000
        loaded = store.load(GOOSE_SESSION)
        assert loaded.messages[0].created_at == datetime.fromtimestamp(SEPT, UTC)
        assert loaded.messages[-1].created_at == datetime.fromtimestamp(SEPT + 30, UTC)
        child = store.get_session("20250904_2")
        assert "subagent" in child.tags and child.title == "find the tests"

    def test_the_sessions_token_totals_are_counted_once_as_the_session_grows(
            self, store: TranscriptStore, goose: Path) -> None:
        import_paths(store, [goose], settle=0)
        first = [r for r in store_usage(store) if r.key == GOOSE_SESSION]
        assert [(r.input_tokens, r.output_tokens) for r in first] == [(12000, 800)]
        with sqlite3.connect(goose, isolation_level=None) as conn:  # Goose counts on
            conn.execute("UPDATE sessions SET accumulated_input_tokens = 15000, "
                         "accumulated_output_tokens = 950 WHERE id = ?", (GOOSE_SESSION,))
        writer = GooseWriter.__new__(GooseWriter)
        writer.conn = sqlite3.connect(goose, isolation_level=None)
        writer.message(GOOSE_SESSION, "assistant", [goose_text("done")], SEPT + 70)
        writer.close()

        import_paths(store, [goose], settle=0)

        again = [r for r in store_usage(store) if r.key == GOOSE_SESSION]
        assert [(r.input_tokens, r.output_tokens) for r in again] == [(15000, 950)]

    def test_a_rewritten_conversation_stores_nothing_twice(self, store: TranscriptStore,
                                                           goose: Path) -> None:
        first = import_paths(store, [goose], settle=0)
        writer = GooseWriter.__new__(GooseWriter)  # the agent opens its database again
        writer.conn = sqlite3.connect(goose, isolation_level=None)
        writer.replace(GOOSE_SESSION)  # Goose renumbers the rows (compaction)
        writer.message(GOOSE_SESSION, "user", [goose_text("and the docs")], SEPT + 60)
        writer.close()

        again = import_paths(store, [goose], settle=0)

        assert again.diverged == [] and again.messages_added == 1
        assert again.messages_already_stored == first.messages_added
        assert store.load(GOOSE_SESSION).messages[-1].message.text == "and the docs"

    def test_a_legacy_session_file_beside_it_stores_nothing_twice(
            self, store: TranscriptStore, goose: Path) -> None:
        with sqlite3.connect(f"{goose.resolve().as_uri()}?immutable=1", uri=True) as conn:
            rows = conn.execute("SELECT role, content_json, created_timestamp FROM messages "
                                "WHERE session_id = ? ORDER BY id", (GOOSE_SESSION,)).fetchall()
        lines = [{"working_dir": GOOSE_DIR, "description": "Fix the build",
                  "message_count": len(rows), "total_tokens": 12800}]
        lines += [{"role": role, "created": at, "content": json.loads(content)}
                  for role, content, at in rows]
        lines.append({"role": "user", "created": SEPT + 90, "content": [goose_text("more")]})
        legacy = goose.parent / f"{GOOSE_SESSION}.jsonl"  # the file Goose imported from
        legacy.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
        os.utime(legacy, (1_700_000_000, 1_700_000_000))

        summary = import_paths(store, [goose.parent], settle=0)

        assert summary.ok, (summary.problems, summary.failed_files)
        loaded = store.load(GOOSE_SESSION)
        assert len(loaded.messages) == len(rows) + 1  # the database's, and one only the file has
        assert loaded.messages[-1].message.text == "more"
        assert store.get_session(GOOSE_SESSION).cwd == GOOSE_DIR

    def test_import_with_no_paths_finds_the_sessions_database(
            self, store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        home = tmp_path / "home"
        write_goose(home / ".local" / "share")
        clear_agent_env(monkeypatch, home)

        result = CliRunner().invoke(cli, ["import", "--db", store_url, "--yes", "--settle",
                                          "0", "--json"])

        assert result.exit_code == 0, result.output
        with TranscriptStore.open(store_url) as opened:
            assert opened.get_session(GOOSE_SESSION).cwd == GOOSE_DIR


class TestReadingWhileTheAgentWrites:
    """Another connection keeps writing the agent's WAL database while we import: each
    import sees one committed state, an unfinished turn waits, and later imports add the
    rest, nothing twice."""

    def test_crush_written_meanwhile(self, store: TranscriptStore, tmp_path: Path) -> None:
        path = tmp_path / "proj" / ".crush" / "crush.db"
        writer = CrushWriter(path)  # stays open: the agent is running
        sid = "live"
        writer.session(sid, "live session", SEPT)
        stop = threading.Event()
        turns = 40

        def agent() -> None:
            for n in range(turns):
                t = SEPT + 10 * n
                writer.message(f"u{n}", sid, "user", [crush_part("text", text=f"q{n}")], t)
                writer.message(f"a{n}", sid, "assistant", [], t + 1, MODEL)  # streaming
                call = crush_call(f"c{n}", "bash", {"command": f"echo {n}"})
                writer.update(f"a{n}", [call], t + 2)
                writer.update(f"a{n}", [call, crush_finish("tool_use", t + 3)], t + 3)
                writer.message(f"r{n}", sid, "tool", [crush_result(f"c{n}", "bash", str(n))],
                               t + 4)
                if stop.is_set():
                    break

        thread = threading.Thread(target=agent)
        thread.start()
        try:
            seen = []
            while thread.is_alive() or not seen:
                summary = import_paths(store, [path], settle=300)
                assert summary.ok and summary.diverged == [], summary.problems
                seen.append(summary.messages_added)
                assert companions(path) == {"crush.db-wal", "crush.db-shm"}
                stored = [m.key for m in store.load(sid).messages] if any(seen) else []
                # every stored turn is whole: a user prompt, its finished call, its result
                assert stored == [k for n in range(turns)
                                  for k in (f"u{n}", f"a{n}", f"r{n}")][:len(stored)]
        finally:
            stop.set()
            thread.join()
        import_paths(store, [path], settle=300)
        loaded = store.load(sid)
        assert len(loaded.messages) == 3 * turns
        assert all(c.result is not None for c in loaded.calls())
        assert len({m.key for m in loaded.messages}) == 3 * turns
        writer.close()

    def test_opencode_written_meanwhile(self, store: TranscriptStore, tmp_path: Path) -> None:
        path = tmp_path / "opencode.db"
        writer = OpenCodeWriter(path)
        sid = "ses_live"
        writer.session(sid, "live", MS)
        stop = threading.Event()
        turns = 30

        def agent() -> None:
            for n in range(turns):
                t = MS + 10_000 * n
                writer.message(f"m{n:03d}u", sid, oc_user(t), t)
                writer.part(f"p{n:03d}u", f"m{n:03d}u", sid, {"type": "text", "text": f"q{n}"},
                            t)
                mid = f"m{n:03d}a"
                writer.message(mid, sid, oc_assistant(t + 1, None, f"m{n:03d}u"), t + 1)
                writer.part(f"p{n:03d}a", mid, sid, oc_tool(f"c{n}", "bash",
                                                             {"command": f"echo {n}"},
                                                             "running"), t + 2)
                writer.part(f"p{n:03d}a", mid, sid, oc_tool(f"c{n}", "bash",
                                                             {"command": f"echo {n}"},
                                                             "completed", str(n)), t + 3)
                writer.message(mid, sid, oc_assistant(t + 1, t + 4, f"m{n:03d}u"), t + 1)
                if stop.is_set():
                    break

        thread = threading.Thread(target=agent)
        thread.start()
        try:
            passes = 0
            while thread.is_alive() or passes == 0:
                summary = import_paths(store, [path], settle=300)
                passes += 1
                assert summary.ok and summary.diverged == [], summary.problems
                assert companions(path) == {"opencode.db-wal", "opencode.db-shm"}
        finally:
            stop.set()
            thread.join()
        last = import_paths(store, [path], settle=300)
        loaded = store.load(sid)
        assert len(loaded.messages) == 3 * turns, (last, [m.key for m in loaded.messages])
        assert all(c.result is not None for c in loaded.calls())
        writer.close()

    def test_goose_written_meanwhile(self, store: TranscriptStore, tmp_path: Path) -> None:
        path = tmp_path / "sessions.db"
        writer = GooseWriter(path)
        sid = "20250904_9"
        writer.session(sid, "live")
        stop = threading.Event()
        turns = 30

        def agent() -> None:
            for n in range(turns):
                t = SEPT + 10 * n
                writer.message(sid, "user", [goose_text(f"q{n}")], t)
                writer.message(sid, "assistant", [goose_request(
                    f"c{n}", "developer__shell", {"command": f"echo {n}"})], t + 1)
                writer.message(sid, "user", [goose_response(f"c{n}", str(n))], t + 2)
                if n % 10 == 9:
                    writer.replace(sid)  # a compaction rewrites every row
                if stop.is_set():
                    break

        thread = threading.Thread(target=agent)
        thread.start()
        try:
            passes = 0
            while thread.is_alive() or passes == 0:
                summary = import_paths(store, [path], settle=300)
                passes += 1
                assert summary.ok and summary.diverged == [], summary.problems
                assert companions(path) == {"sessions.db-wal", "sessions.db-shm"}
        finally:
            stop.set()
            thread.join()
        import_paths(store, [path], settle=300)
        loaded = store.load(sid)
        assert len(loaded.messages) == 3 * turns
        assert all(c.result is not None for c in loaded.calls())
        writer.close()

    def test_an_unfinished_turn_waits_then_settles(self, tmp_path: Path) -> None:
        path = tmp_path / "proj" / ".crush" / "crush.db"
        writer = CrushWriter(path)
        writer.session("s", "t", SEPT)
        writer.message("u", "s", "user", [crush_part("text", text="hi")], SEPT)
        writer.message("a", "s", "assistant", [crush_part("text", text="thinking")],
                       SEPT + 1)
        try:
            held = read_agent_db(path, settle=300)
            assert [s.keys for s in held.sessions] == [["u"]]
            assert len(held.deferred) == 1
            settled = read_agent_db(path, settle=300, now=os.stat(path).st_mtime + 10_000)
            assert [s.keys for s in settled.sessions] == [["u", "a"]]
        finally:
            writer.close()


def test_the_database_agents_honour_their_own_variables(tmp_path: Path) -> None:
    home = tmp_path / "home"
    xdg = tmp_path / "xdg"
    write_opencode(xdg)
    (xdg / "opencode" / "opencode-local.db").write_bytes(b"")
    root = tmp_path / "goose-root"
    (root / "data" / "sessions").mkdir(parents=True)
    crush_data = tmp_path / "crush-data"
    project = write_crush(tmp_path / "proj")
    crush_data.mkdir()
    (crush_data / "projects.json").write_text(json.dumps({"projects": [
        {"path": str(project.parent.parent), "data_dir": str(project.parent)},
        {"path": "/gone", "data_dir": "/gone/.crush"}]}), encoding="utf-8")
    env = {"XDG_DATA_HOME": str(xdg), "GOOSE_PATH_ROOT": str(root),
           "CRUSH_GLOBAL_DATA": str(crush_data)}

    assert agent_folders(home, env) == [
        ("opencode", xdg / "opencode" / "opencode.db"),
        ("opencode", xdg / "opencode" / "opencode-local.db"),
        ("goose", root / "data" / "sessions"),
        ("crush", project)]
    assert agent_folders(home, {}) == []


def test_a_fifo_or_a_file_that_is_no_database_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "crush.db"
    os.mkfifo(fifo)
    with pytest.raises(ImportFileError, match="not a SQLite database"):
        read_agent_db(fifo, "crush")
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(ImportFileError, match="not one of an agent"):
        read_agent_db(other)
    crush = write_crush(tmp_path / "p")
    with pytest.raises(ImportFileError, match="looks like crush"):
        read_agent_db(crush, "opencode")
    with pytest.raises(ImportFileError, match="--format codex does not fit it"):
        read_agent_db(crush, "codex")


def test_a_database_in_rollback_journal_mode_reads_without_a_file_left(tmp_path: Path) -> None:
    path = write_crush(tmp_path / "proj")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    before = sorted(p.name for p in path.parent.iterdir())

    parsed = read_agent_db(path, settle=0)

    assert {s.session_id for s in parsed.sessions} == {CRUSH_SESSION, CRUSH_SUBAGENT}
    assert sorted(p.name for p in path.parent.iterdir()) == before
