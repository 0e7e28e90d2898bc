"""Issue 26 (more agents): Cline, Roo Code and OpenHands sessions imported on both backends.

The fixtures in tests/fixtures/vscode are small sessions written in each agent's own format
(read from the agents' source): a Cline task of the XML-tool era with its ui_messages and
task_metadata, a Cline SDK (CLI) session with a subagent file, Roo Code tasks with native
tool calls and a subtask, OpenHands conversations. Each test checks what the store holds:
calls in the canonical vocabulary with their argument views, results linked, errors marked,
missing results left missing, times, cwd, model, title, token usage and lineage.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

import store
from store import CallQuery, ViewCondition, import_paths, search_calls

FIXTURES = Path(__file__).parent.parent / "fixtures" / "vscode"
CLINE_TASK = "1757318400000"
CLINE_SDK = "1757404800000_abcde"
CLINE_SUB = f"{CLINE_SDK}__reviewer"
ROO = "0199b0c0-1111-7000-8000-000000000001"
ROO_CHILD = "0199b0c0-2222-7000-8000-000000000002"
OH = "0c1d2e3f40514a6b8c9d0e1f2a3b4c5d"
OH_SUB = "9f8e7d6c5b4a49388716a5b4c3d2e1f0"
OH_V0 = "5e6f7a8b9c0d4e1f"


def copy_fixtures(target: Path, part: str) -> Path:
    """One agent's fixtures in a fresh folder, dated long ago (settled)."""
    shutil.copytree(FIXTURES / part, target)
    for path in target.rglob("*"):
        if path.is_file():
            os.utime(path, (1_700_000_000, 1_700_000_000))
    return target


def imported(db: store.TranscriptStore, tmp_path: Path, part: str) -> store.TranscriptStore:
    summary = import_paths(db, [copy_fixtures(tmp_path / part, part)])
    assert summary.ok, (summary.problems, summary.failed_files)
    assert summary.deferred == []
    return db


def session(db: store.TranscriptStore, sid: str) -> store.SessionInfo:
    found = [s for s in db.list_sessions(limit=None) if s.session_id == sid]
    assert found, f"no session {sid}"
    return found[0]


def calls(db: store.TranscriptStore, sid: str) -> list[tuple[Any, ...]]:
    """``(name, raw name, result content or None, is_error)`` of each call, in order."""
    return [(c.call.name, c.call.recorded_name, None if c.result is None else c.result.content,
             None if c.result is None else c.result.is_error)
            for c in db.load(sid).calls()]


def usage_rows(db: store.TranscriptStore, sid: str) -> list[tuple[Any, ...]]:
    with db.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(
            "SELECT position, model, input_tokens, output_tokens, cache_creation_tokens, "
            "cache_read_tokens FROM message_usage WHERE session_id = :sid ORDER BY position"),
            {"sid": sid}).all()]


def ms(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1000, UTC)


class TestCline:
    @pytest.fixture
    def cline(self, store: store.TranscriptStore, tmp_path: Path) -> store.TranscriptStore:
        return imported(store, tmp_path, "cline")

    def test_xml_tool_uses_become_calls_with_their_results(self, cline):
        assert calls(cline, CLINE_TASK) == [
            ("bash", "execute_command", "Command executed.", False),
            ("read", "read_file", "The tool execution failed with the following error:\n"
                                  "<error>\nError reading file: ENOENT\n</error>", True),
            ("grep", "search_files", None, None),  # the task ended before its result
        ]
        loaded = cline.load(CLINE_TASK).messages
        assert "<execute_command>" in loaded[1].message.text  # the text is kept as written
        assert [p.text for p in loaded[2].message.parts
                if isinstance(p, store.TextPart)][0].startswith("<environment_details>")

    def test_argument_views_find_the_calls(self, cline):
        found = search_calls(cline, CallQuery(tool="bash", views=(
            ViewCondition("command", "rm -rf build"),)))
        assert [m.session_id for m in found] == [CLINE_TASK]
        grep = search_calls(cline, CallQuery(tool="grep", views=(
            ViewCondition("pattern", "TODO"),)))
        assert [m.session_id for m in grep] == [CLINE_TASK]
        read = search_calls(cline, CallQuery(tool="read", views=(
            ViewCondition("path", "src/app.py"),)))
        assert sorted(m.session_id for m in read) == sorted([CLINE_TASK, CLINE_SUB])
        fetch = search_calls(cline, CallQuery(tool="web_fetch", views=(
            ViewCondition("url", "https://example.com/docs"),)))
        assert [m.session_id for m in fetch] == [CLINE_SDK]

    def test_the_task_has_its_times_cwd_model_title_and_agent(self, cline):
        task = session(cline, CLINE_TASK)

        assert task.agent == "cline" and "cline" in task.tags
        assert task.title == "Clean the build folder, then check src/app.py for TODOs"
        assert task.cwd == "/home/u/shop"
        assert task.model == "claude-sonnet-4-20250514"
        assert task.metadata["version"] == "3.26.1"
        # its own start: the task's id is its creation time (before its first message)
        assert task.started_at == ms(1757318400000)
        assert task.ended_at == ms(1757318419000)

    def test_each_request_s_tokens_go_with_its_answer(self, cline):
        sonnet = "claude-sonnet-4-20250514"
        assert usage_rows(cline, CLINE_TASK) == [
            (1, sonnet, 1200, 80, 900, 0), (3, sonnet, 30, 40, 120, 900),
            (5, sonnet, 25, 60, 90, 1020)]
        assert usage_rows(cline, CLINE_SDK) == [
            (1, "claude-sonnet-4-6", 500, 40, 300, 0), (3, "claude-sonnet-4-6", 60, 12, 0, 300)]

    def test_an_sdk_session_and_its_subagent(self, cline):
        lead = session(cline, CLINE_SDK)
        sub = session(cline, CLINE_SUB)

        assert calls(cline, CLINE_SDK) == [
            ("bash", "run_commands", "app.py", False),
            ("web_fetch", "fetch_web_content", "fetch failed: 404", True)]
        assert (lead.cwd, lead.model, lead.title) == (
            "/home/u/cli-proj", "claude-sonnet-4-6", "List the sources and fetch the docs")
        assert lead.started_at == datetime(2025, 9, 9, 8, 0, tzinfo=UTC)
        # the session's own end, its record's ended_at (after its last message, 08:00:06)
        assert lead.ended_at == datetime(2025, 9, 9, 8, 1, tzinfo=UTC)
        assert sub.metadata["parent_session"] == CLINE_SDK
        assert "subagent" in sub.tags and sub.agent == "cline"
        assert calls(cline, CLINE_SUB) == [("read", "read_files", None, None)]

    def test_a_task_s_other_files_are_read_with_it_not_alone(self, cline, tmp_path):
        summary = import_paths(cline, [tmp_path / "cline"])
        assert summary.ok and summary.failed_files == [] and summary.messages_added == 0
        assert summary.files == 0 and summary.unchanged == 3  # the history files only

    def test_importing_again_stores_nothing_twice(self, cline, tmp_path):
        before = cline.load(CLINE_TASK).messages
        import_paths(cline, [tmp_path / "cline"], settle=0)
        assert len(cline.load(CLINE_TASK).messages) == len(before) == 6


class TestRooCode:
    @pytest.fixture
    def roo(self, store: store.TranscriptStore, tmp_path: Path) -> store.TranscriptStore:
        return imported(store, tmp_path, "roo")

    def test_native_calls_results_errors_and_a_missing_result(self, roo):
        assert calls(roo, ROO) == [
            ("bash", "execute_command", "Command executed. Exit code: 0", False),
            ("read", "read_file", '{"status":"error","message":"The tool execution failed",'
                                  '"error":"File not found"}', True),
            ("task", "new_task", f"Subtask {ROO_CHILD} completed.\n\nResult:\nDocs written.",
             False),
            ("edit", "apply_diff", None, None),
        ]
        assert calls(roo, ROO_CHILD) == [
            ("grep", "search_files", [{"type": "text", "text": "Found 0 results."}], False)]
        found = search_calls(roo, CallQuery(tool="bash", views=(
            ViewCondition("command", "rm -rf build"),)))
        assert [m.session_id for m in found] == [ROO]
        edit = search_calls(roo, CallQuery(tool="edit", views=(
            ViewCondition("path", "build.sh"),)))
        assert [m.session_id for m in edit] == [ROO]

    def test_the_task_has_its_times_cwd_model_title_and_mode(self, roo):
        task = session(roo, ROO)

        assert task.agent == "roo-code" and "roo-code" in task.tags
        assert task.title == "Audit the build script and delegate the docs"
        assert (task.cwd, task.model) == ("/home/u/roo-proj", "anthropic/claude-sonnet-4.5")
        assert task.metadata["mode"] == "code"
        assert task.started_at == ms(1757577600000)
        assert task.ended_at == ms(1757577663000)

    def test_each_request_s_tokens_go_with_its_answer(self, roo):
        model = "anthropic/claude-sonnet-4.5"
        assert usage_rows(roo, ROO) == [
            (1, model, 900, 50, 800, 0), (3, model, 20, 30, 100, 800),
            (5, model, 15, 45, 60, 900), (7, model, 10, 90, 40, 960)]
        assert usage_rows(roo, ROO_CHILD) == [(1, model, 100, 20, 0, 0)]

    def test_a_subtask_is_linked_to_its_parent(self, roo):
        child = session(roo, ROO_CHILD)

        assert child.metadata["parent_session"] == ROO
        assert child.metadata["parent_call_id"] == "toolu_r3"  # the parent's new_task call
        assert child.metadata["root_task"] == ROO
        assert "subtask" in child.tags and child.agent == "roo-code"
        assert child.title == "Write the docs" and child.metadata["mode"] == "architect"

    def test_the_tasks_index_and_task_files_are_not_imported_alone(self, roo, tmp_path):
        summary = import_paths(roo, [tmp_path / "roo"])
        assert summary.ok and summary.unchanged == 2 and summary.files == 0


class TestOpenHands:
    @pytest.fixture
    def openhands(self, store: store.TranscriptStore, tmp_path: Path) -> store.TranscriptStore:
        return imported(store, tmp_path, "openhands")

    def test_v1_events_become_calls_with_results_errors_and_a_missing_one(self, openhands):
        assert calls(openhands, OH) == [
            ("bash", "terminal", "", False),
            ("grep", "grep", "grep: src: No such file or directory", True),
            ("read", "file_editor", "Not that file", True),  # a view, rejected by the user
            ("task", "delegate", None, None),
        ]
        assert calls(openhands, OH_SUB) == [("browser", "browser_navigate", "Navigated.", False)]
        url = search_calls(openhands, CallQuery(tool="browser", views=(
            ViewCondition("url", "https://example.com/docs"),)))
        assert [m.session_id for m in url] == [OH_SUB]
        command = search_calls(openhands, CallQuery(tool="bash", views=(
            ViewCondition("command", "rm -rf build"),)))
        assert [m.session_id for m in command] == [OH]
        edit = search_calls(openhands, CallQuery(tool="edit", views=(
            ViewCondition("command", "view"),)))
        assert edit == []  # the editor's sub-command is not a shell command

    def test_v1_times_cwd_model_title_usage_and_lineage(self, openhands):
        conv = session(openhands, OH)
        sub = session(openhands, OH_SUB)
        model = "litellm_proxy/claude-sonnet-4-5"

        assert conv.agent == "openhands"
        assert (conv.cwd, conv.model) == ("/home/u/oh-proj", model)
        assert conv.title == "Remove the build folder and look for TODOs in src"
        assert conv.started_at == datetime(2025, 9, 15, 10, 0, 1, tzinfo=UTC)
        assert conv.ended_at == datetime(2025, 9, 15, 10, 0, 15, tzinfo=UTC)
        # one response with two calls counts once; input is prompt less cache reads
        assert usage_rows(openhands, OH) == [
            (1, model, 1000, 90, 800, 2000), (3, model, 400, 120, 100, 2800),
            (7, model, 500, 60, 200, 3000)]
        assert sub.metadata["parent_session"] == OH and "subagent" in sub.tags

    def test_v0_file_store_sessions(self, openhands):
        v0 = session(openhands, OH_V0)
        sonnet = "claude-sonnet-4-20250514"

        assert calls(openhands, OH_V0) == [
            ("bash", "execute_bash", "1 failed", True),
            ("read", "str_replace_editor", "def test_app(): assert 1 == 2", False),  # (a view)
            ("bash", "execute_bash", None, None),
        ]
        assert [m.message.role for m in openhands.load(OH_V0).messages] == [
            "user", "assistant", "tool", "assistant", "tool", "assistant", "assistant"]
        assert (v0.title, v0.model, v0.cwd) == (
            "Fix the failing test", "anthropic/claude-sonnet-4-20250514", None)
        assert v0.metadata["selected_repository"] == "u/shop"
        assert v0.started_at == datetime(2025, 9, 16, 9, 0, 1, tzinfo=UTC)
        assert v0.ended_at == datetime(2025, 9, 16, 9, 0, 9, tzinfo=UTC)
        assert usage_rows(openhands, OH_V0) == [
            (1, sonnet, 500, 50, 0, 1500), (3, sonnet, 200, 40, 0, 1900),
            (6, sonnet, 300, 20, 0, 2000)]

    def test_only_each_conversation_s_main_file_is_walked(self, openhands, tmp_path):
        summary = import_paths(openhands, [tmp_path / "openhands"])
        assert summary.ok and summary.unchanged == 3 and summary.files == 0

    def test_a_new_event_adds_only_itself(self, openhands, tmp_path):
        folder = tmp_path / "openhands" / "conversations" / OH
        event = folder / "events" / "event-00010-00000000-0000-4000-8000-000000000011.json"
        event.write_text('{"kind": "MessageEvent", "id": "00000000-0000-4000-8000-000000000011",'
                         ' "timestamp": "2025-09-15T10:01:00", "source": "user", "llm_message":'
                         ' {"role": "user", "content": [{"type": "text", "text": "thanks"}]}}',
                         encoding="utf-8")
        (folder / "base_state.json").touch()  # the state is saved with every event

        summary = import_paths(openhands, [folder], settle=0)

        assert summary.messages_added == 1 and summary.messages_already_stored == 8


class TestDefaultFolders:
    """``import`` with no paths finds each agent's folder under a fake home."""

    def test_import_without_paths_finds_the_agents_folders(self, store_url, tmp_path,
                                                           monkeypatch):
        from click.testing import CliRunner

        from store.cli.main import cli

        home = tmp_path / "home"
        fixtures = copy_fixtures(tmp_path / "fx", ".")
        storage = "User/globalStorage/saoudrizwan.claude-dev/tasks"
        shutil.copytree(fixtures / "cline" / "globalStorage" / "saoudrizwan.claude-dev" / "tasks",
                        home / ".config" / "Code - Insiders" / storage)
        shutil.copytree(fixtures / "cline" / "data", home / ".cline" / "data")
        shutil.copytree(fixtures / "openhands", home / ".openhands")
        roo = "User/globalStorage/rooveterinaryinc.roo-cline/tasks"
        shutil.copytree(fixtures / "roo" / "globalStorage" / "rooveterinaryinc.roo-cline" /
                        "tasks", home / ".config" / "VSCodium" / roo)
        for name in ("XDG_CONFIG_HOME", "APPDATA", "CLINE_DATA_DIR", "OH_PERSISTENCE_DIR",
                     "CLAUDE_CONFIG_DIR",
                     "CODEX_HOME", "GEMINI_CLI_HOME"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HOME", str(home))
        runner = CliRunner()

        declined = runner.invoke(cli, ["import", "--db", store_url], input="n\n")
        assert declined.exit_code == 0  # a declined prompt is not an error
        for agent, folder in (("cline", f".config/Code - Insiders/{storage}"),
                              ("cline", ".cline/data/sessions"),
                              ("roo-code", f".config/VSCodium/{roo}"),
                              ("openhands", ".openhands/conversations"),
                              ("openhands", ".openhands/sessions")):
            assert f"{agent:12} {home / folder}" in declined.stderr
        done = runner.invoke(cli, ["import", "--db", store_url, "--yes", "--settle", "0"])
        assert done.exit_code == 0, done.output
        with store.TranscriptStore.open(store_url) as opened:
            assert {s.session_id: s.agent for s in opened.list_sessions(limit=None)} == {
                CLINE_TASK: "cline", CLINE_SDK: "cline", CLINE_SUB: "cline",
                ROO: "roo-code", ROO_CHILD: "roo-code", OH: "openhands",
                OH_SUB: "openhands", OH_V0: "openhands"}
