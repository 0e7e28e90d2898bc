"""Issue 26 ("More agents"): Qwen Code, Kimi CLI and GitHub Copilot CLI sessions imported on
both backends, from small fixtures written for these tests in each agent's file format
(tests/fixtures/agents/<agent>; see docs/agents.md for where each format was learnt).

Each agent's fixture holds the same ``rm -rf build`` and a read of ``src/app.py`` (as the
audited agents' fixtures do), a failed call, a call left without a result, token usage and a
subagent, in September 2025.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import store
from store import CallQuery, ViewCondition, import_paths, search_calls

FIXTURES = Path(__file__).parent.parent / "fixtures" / "agents"
QWEN = "8b1d6c2e-4f3a-4c5b-9d7e-0a1b2c3d4e5f"
QWEN_SUB = f"{QWEN}:agent-explore-7f3c"


def copy_agent(name: str, target: Path) -> Path:
    """One agent's fixtures in a fresh folder, dated long ago (settled)."""
    shutil.copytree(FIXTURES / name, target)
    for path in target.rglob("*"):
        if path.is_file():
            os.utime(path, (1_700_000_000, 1_700_000_000))
    return target


def imported(opened: store.TranscriptStore, folder: Path, problems: int = 0
             ) -> store.TranscriptStore:
    summary = import_paths(opened, [folder])
    assert summary.failed_files == [] and summary.deferred == []
    assert len(summary.problems) == problems, summary.problems
    return opened


def usage_rows(opened: store.TranscriptStore, session: str) -> list[tuple[object, ...]]:
    with opened.engine.connect() as conn:
        return [tuple(r) for r in conn.exec_driver_sql(
            "SELECT position, model, response_id, input_tokens, output_tokens, "
            "cache_read_tokens, reasoning_tokens FROM message_usage WHERE session_id = "
            f"'{session}' ORDER BY position").all()]


def listed(opened: store.TranscriptStore, session: str) -> store.SessionInfo:
    """A session as listings show it (with its first and last message times)."""
    return next(s for s in opened.list_sessions(limit=None) if s.session_id == session)


def import_without_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str,
                         home_folder: str, fixture: str, env: tuple[str, ...]) -> str:
    """``import`` with no paths under a fake HOME holding only this agent's folder: every
    session it imports is the agent's; the folders it listed. (The exit status is 1 when
    the fixture holds a corrupt line: a problem is reported, the rest imported.)"""
    from store.cli.main import cli

    home = tmp_path / "home"
    copy_agent(fixture, home / home_folder)
    monkeypatch.setenv("HOME", str(home))
    for name in env:
        monkeypatch.delenv(name, raising=False)
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    runner = CliRunner()
    declined = runner.invoke(cli, ["import", "--db", db], input="n\n")
    assert declined.exit_code == 0  # a declined prompt is not an error
    done = runner.invoke(cli, ["import", "--db", db, "--yes", "--settle", "0", "--json"])
    assert done.exit_code in (0, 1) and '"failed_files":0' in done.output, done.output
    with store.TranscriptStore.open(db) as opened:
        assert {s.agent for s in opened.list_sessions(limit=None)} == {agent}
    return declined.stderr


class TestQwenCode:
    @pytest.fixture
    def qwen(self, store: store.TranscriptStore, tmp_path: Path) -> store.TranscriptStore:
        return imported(store, copy_agent("qwen", tmp_path / "qwen"), problems=1)

    def test_calls_have_their_results_errors_marked_and_none_invented(self, qwen):
        calls = {c.call.id: c for c in qwen.load(QWEN).calls()}

        assert [c.call.name for c in calls.values()] == ["bash", "read", "task", "list"]
        assert calls["call_q1"].result is not None and not calls["call_q1"].result.is_error
        assert calls["call_q2"].result is not None and calls["call_q2"].result.is_error
        assert calls["call_q3"].result is not None
        assert calls["call_q4"].result is None  # never answered: no result made up
        assert qwen.get_session(QWEN).agent == "qwen-code"

    def test_the_same_rm_rf_and_read_are_found_by_the_canonical_conditions(self, qwen):
        rm = search_calls(qwen, CallQuery(tool="bash",
                                          views=(ViewCondition("command", "rm -rf build"),)))
        read = search_calls(qwen, CallQuery(tool="read",
                                            views=(ViewCondition("path", "src/app.py"),)))

        assert [(m.session_id, m.raw_name) for m in rm] == [(QWEN, "run_shell_command")]
        assert [m.session_id for m in read] == [QWEN]

    def test_times_cwd_model_and_title_come_from_the_records(self, qwen):
        info = listed(qwen, QWEN)

        assert info.started_at == datetime(2025, 9, 18, 9, 0, 0, tzinfo=UTC)
        # its last record (a system record a second after the last message), not the import
        assert info.ended_at == datetime(2025, 9, 18, 9, 1, 1, tzinfo=UTC)
        assert (info.cwd, info.model) == ("/home/u/proj", "qwen3-coder-plus")
        assert info.title == "Clean build and read app"  # its custom_title record
        assert info.metadata["git_branch"] == "main"

    def test_token_usage_is_kept_per_response_once(self, qwen, tmp_path):
        assert usage_rows(qwen, QWEN) == [
            (1, "qwen3-coder-plus", "q-a1", 200, 100, 1000, 20),
            (4, "qwen3-coder-plus", "q-a2", 300, 40, 1200, 0)]
        again = import_paths(qwen, [copy_agent("qwen", tmp_path / "again")])
        assert again.messages_added == 0
        assert len(usage_rows(qwen, QWEN)) == 2

    def test_a_subagent_is_its_own_session_linked_to_its_task_call(self, qwen):
        sub = qwen.get_session(QWEN_SUB)

        assert sub.metadata["parent_session"] == QWEN
        assert sub.metadata["parent_call_id"] == "call_q3"
        assert sub.metadata["agent_name"] == "general-purpose"
        assert "subagent" in sub.tags and sub.agent == "qwen-code"
        assert sub.title == "Clean build and read app (subagent general-purpose)"
        assert [c.call.name for c in qwen.load(QWEN_SUB).calls()] == ["glob"]
        assert usage_rows(qwen, QWEN_SUB) == [(0, "qwen3-coder-plus", "q-g1", 300, 10, 0, 0)]

    def test_a_corrupt_line_is_a_problem_and_the_rest_is_read(self, store, tmp_path):
        summary = import_paths(store, [copy_agent("qwen", tmp_path / "q")])

        assert [(p.line, p.message.startswith("not JSON")) for p in summary.problems] == [
            (4, True)]
        assert summary.messages_added == 8

    def test_import_without_paths_finds_the_qwen_folder(self, tmp_path, monkeypatch):
        listed = import_without_paths(tmp_path, monkeypatch, "qwen-code", ".qwen", "qwen",
                                      ("QWEN_RUNTIME_DIR",))

        assert str(tmp_path / "home" / ".qwen" / "projects" / "-home-u-proj" / "chats") in listed


KIMI = "3c9e7f10-5a2b-4d6e-8f01-a2b3c4d5e6f7"
KIMI_SUB = f"{KIMI}:agent-a7f3c21"


class TestKimiCli:
    @pytest.fixture
    def kimi(self, store: store.TranscriptStore, tmp_path: Path) -> store.TranscriptStore:
        return imported(store, copy_agent("kimi", tmp_path / "kimi") / "sessions", problems=1)

    def test_calls_have_their_results_errors_marked_and_none_invented(self, kimi):
        calls = {c.call.id: c for c in kimi.load(KIMI).calls()}

        assert [c.call.name for c in calls.values()] == ["bash", "read", "task", "glob"]
        assert calls["Shell:0"].result is not None and not calls["Shell:0"].result.is_error
        failed = calls["ReadFile:1"].result
        assert failed is not None and failed.is_error
        assert failed.content == "`src/app.py` does not exist."  # its message: no output
        assert calls["Agent:2"].result is not None
        assert calls["Glob:3"].result is None
        assert [s.agent for s in kimi.list_sessions(limit=None)] == ["kimi-cli", "kimi-cli"]

    def test_the_same_rm_rf_and_read_are_found_by_the_canonical_conditions(self, kimi):
        rm = search_calls(kimi, CallQuery(tool="bash",
                                          views=(ViewCondition("command", "rm -rf build"),)))
        read = search_calls(kimi, CallQuery(tool="read",
                                            views=(ViewCondition("path", "src/app.py"),)))

        assert [(m.session_id, m.raw_name) for m in rm] == [(KIMI, "Shell")]
        assert [m.session_id for m in read] == [KIMI]

    def test_times_cwd_and_title_come_from_the_wire_and_the_share_folder(self, kimi):
        info = listed(kimi, KIMI)

        assert info.started_at == datetime(2025, 9, 18, 9, 0, 0, tzinfo=UTC)
        assert info.ended_at == datetime(2025, 9, 18, 9, 0, 9, tzinfo=UTC)
        assert info.cwd == "/home/u/proj"  # kimi.json's work dir whose MD5 names the folder
        assert info.model is None  # the wire names no model for the main agent
        assert info.title == "Clean the build, then read src/app.py"
        assert [m.message.role for m in kimi.load(KIMI).messages] == [
            "user", "assistant", "tool", "tool", "assistant", "tool"]

    def test_token_usage_is_kept_per_step_once(self, kimi):
        assert usage_rows(kimi, KIMI) == [(1, None, "chatcmpl-k1", 900, 60, 3000, 0),
                                          (4, None, "chatcmpl-k2", 120, 30, 3900, 0)]

    def test_a_subagent_is_its_own_session_linked_to_its_agent_call(self, kimi):
        sub = listed(kimi, KIMI_SUB)

        assert sub.metadata["parent_session"] == KIMI
        assert sub.metadata["parent_call_id"] == "Agent:2"
        assert sub.metadata["agent_type"] == "explore"
        assert "subagent" in sub.tags and sub.model == "kimi-k2-turbo-preview"
        assert [c.call.name for c in kimi.load(KIMI_SUB).calls()] == ["grep"]
        assert usage_rows(kimi, KIMI_SUB) == [
            (1, "kimi-k2-turbo-preview", "chatcmpl-s1", 200, 15, 0, 0)]

    def test_a_session_title_set_by_the_user_wins(self, store, tmp_path):
        folder = copy_agent("kimi", tmp_path / "kimi")
        state = next(folder.rglob("state.json"))
        state.write_text('{"version": 1, "custom_title": "Cleanup"}', encoding="utf-8")
        imported(store, folder / "sessions", problems=1)

        assert store.get_session(KIMI).title == "Cleanup"

    def test_call_ids_reused_by_later_steps_pair_with_their_own_step(self, store, tmp_path):
        session = tmp_path / "sessions" / "h" / "k-reuse"
        session.mkdir(parents=True)
        lines = [{"type": "metadata", "protocol_version": "1.10"}]
        for step, command in ((0, "ls"), (10, "pwd")):
            lines += [
                {"timestamp": 1758186000 + step, "message": {"type": "StepBegin",
                                                             "payload": {"n": step}}},
                {"timestamp": 1758186001 + step, "message": {"type": "ToolCall", "payload": {
                    "type": "function", "id": "Shell:0",
                    "function": {"name": "Shell", "arguments": f'{{"command": "{command}"}}'}}}},
                {"timestamp": 1758186002 + step, "message": {"type": "ToolResult", "payload": {
                    "tool_call_id": "Shell:0", "return_value": {
                        "is_error": False, "output": f"out of {command}", "message": "",
                        "display": []}}}}]
        (session / "wire.jsonl").write_text("".join(orjson.dumps(r).decode() + "\n"
                                                    for r in lines))
        assert import_paths(store, [tmp_path / "sessions"], settle=0).ok

        pairs = [(c.call.input["command"], c.result.content if c.result else None)
                 for c in store.load("k-reuse").calls()]
        assert pairs == [("ls", "out of ls"), ("pwd", "out of pwd")]

    def test_a_wire_that_grew_adds_only_its_new_messages(self, store, tmp_path):
        sessions = copy_agent("kimi", tmp_path / "kimi") / "sessions"
        imported(store, sessions, problems=1)
        wire = next(p for p in sessions.rglob("wire.jsonl") if "subagents" not in p.parts)
        more = [{"timestamp": 1758186100.0, "message": {"type": "TurnBegin",
                                                         "payload": {"user_input": "Thanks"}}},
                {"timestamp": 1758186101.0, "message": {"type": "StepBegin",
                                                         "payload": {"n": 1}}},
                {"timestamp": 1758186102.0, "message": {"type": "ContentPart", "payload": {
                    "type": "text", "text": "Done."}}},
                {"timestamp": 1758186103.0, "message": {"type": "StatusUpdate", "payload": {
                    "token_usage": {"input_other": 10, "output": 3}, "message_id": "k3"}}}]
        with wire.open("a", encoding="utf-8") as handle:
            handle.writelines(orjson.dumps(r).decode() + "\n" for r in more)

        grown = import_paths(store, [sessions], settle=0)
        assert (grown.messages_added, grown.diverged) == (2, [])
        assert [m.message.text for m in store.load(KIMI).messages][-2:] == ["Thanks", "Done."]
        assert len(usage_rows(store, KIMI)) == 3

    def test_import_without_paths_finds_the_kimi_folder(self, tmp_path, monkeypatch):
        listed_folders = import_without_paths(tmp_path, monkeypatch, "kimi-cli", ".kimi",
                                              "kimi", ("KIMI_SHARE_DIR",))

        assert str(tmp_path / "home" / ".kimi" / "sessions") in listed_folders


COPILOT = "5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c"
COPILOT_SUB = f"{COPILOT}:agent-sa-1"


class TestCopilotCli:
    @pytest.fixture
    def copilot(self, store: store.TranscriptStore, tmp_path: Path) -> store.TranscriptStore:
        return imported(store, copy_agent("copilot", tmp_path / "copilot"), problems=1)

    def test_calls_have_their_results_errors_marked_and_none_invented(self, copilot):
        calls = {c.call.id: c for c in copilot.load(COPILOT).calls()}

        assert [c.call.name for c in calls.values()] == ["bash", "read", "task", "glob"]
        assert calls["toolu_c1"].result is not None and not calls["toolu_c1"].result.is_error
        failed = calls["toolu_c2"].result
        assert failed is not None and failed.is_error
        assert failed.content == "Path does not exist: /home/u/proj/src/app.py"
        assert calls["toolu_c3"].result is not None
        assert calls["toolu_c4"].result is None
        assert copilot.get_session(COPILOT).agent == "copilot-cli"

    def test_the_same_rm_rf_and_read_are_found_by_the_canonical_conditions(self, copilot):
        rm = search_calls(copilot, CallQuery(
            tool="bash", views=(ViewCondition("command", "rm -rf build"),)))
        read = search_calls(copilot, CallQuery(tool="read",
                                               views=(ViewCondition("path", "src/app.py"),)))

        assert [(m.session_id, m.raw_name) for m in rm] == [(COPILOT, "bash")]
        assert [(m.session_id, m.raw_name) for m in read] == [(COPILOT, "view")]

    def test_times_cwd_model_and_title_come_from_the_events(self, copilot):
        info = listed(copilot, COPILOT)

        # its session.start and session.shutdown events, around its messages' times
        assert info.started_at == datetime(2025, 9, 19, 10, 0, 0, tzinfo=UTC)
        assert info.ended_at == datetime(2025, 9, 19, 10, 0, 30, tzinfo=UTC)
        assert (info.cwd, info.model) == ("/home/u/proj", "claude-sonnet-4.5")
        assert info.title == "Clean the build and show me src/app.py"
        assert info.metadata["git_branch"] == "main"
        metrics = info.metadata["model_metrics"]
        assert metrics[0]["claude-sonnet-4.5"]["usage"]["inputTokens"] == 5200

    def test_outputs_per_response_and_the_shutdown_s_totals_on_the_run_s_last(self, copilot):
        # each response's output once per API call; the run's input and cache counts (only
        # in session.shutdown: 5200 input of which 4000 cache reads) on its last response
        assert usage_rows(copilot, COPILOT) == [
            (1, "claude-sonnet-4.5", "api-1", 0, 120, 0, 0),
            (4, "claude-sonnet-4.5", "api-2", 0, 40, 0, 0),  # two chunks, one call
            (5, "claude-sonnet-4.5", None, 1200, 0, 4000, 0)]

    def test_a_subagent_is_its_own_session_linked_to_its_task_call(self, copilot):
        sub = listed(copilot, COPILOT_SUB)

        assert sub.metadata["parent_session"] == COPILOT
        assert sub.metadata["parent_call_id"] == "toolu_c3"
        assert sub.metadata["agent_name"] == "explore"
        assert "subagent" in sub.tags and sub.model == "claude-haiku-4.5"
        assert [c.call.name for c in copilot.load(COPILOT_SUB).calls()] == ["grep"]
        assert [c.result is not None for c in copilot.load(COPILOT_SUB).calls()] == [True]

    def test_checkpoints_and_files_beside_the_log_are_not_walked(self, store, tmp_path):
        summary = import_paths(store, [copy_agent("copilot", tmp_path / "c")])

        assert summary.files == 1 and summary.failed_files == []

    def test_import_without_paths_finds_the_copilot_folder(self, tmp_path, monkeypatch):
        listed_folders = import_without_paths(tmp_path, monkeypatch, "copilot-cli",
                                              ".copilot", "copilot", ("COPILOT_HOME",))

        assert str(tmp_path / "home" / ".copilot" / "session-state") in listed_folders
