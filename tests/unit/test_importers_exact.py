"""Issue 33 (exact on real files), reader level: each agent's files give every call with its
status, the prompts the user typed (never tool results), subagents as sessions of their own
linked to their spawning call, the session's own recorded start and end, and the usage the
file records.

Files: the real Claude Code and Codex transcripts of the shared corpus (``corpus/SOURCES.md``)
and fixtures written from each agent's writer (``tests/fixtures/exact/*``,
``tests/fixtures/agents/*``; the sources are cited in the readers' docstrings and in
``docs/agents.md``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from backends import corpus

from store.core.model import Message
from store.importers.base import ParsedSession
from store.importers.formats import read_sessions

FIXTURES = Path(__file__).parent.parent / "fixtures" / "exact"
AGENTS = Path(__file__).parent.parent / "fixtures" / "agents"
NEVER = 0  # settle: every file is complete


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def is_prompt(message: Message) -> bool:
    """A user turn as ``sessions show`` prints it: a user message that is not only results."""
    return message.role == "user" and not (message.tool_results and not message.text)


def statuses(session: ParsedSession) -> dict[str, str]:
    """Each call's result state: ok / error / none."""
    results = {r.call_id: r for m in session.items for r in m.tool_results}
    return {c.id: ("none" if c.id not in results else
                   "error" if results[c.id].is_error else "ok")
            for m in session.items for c in m.tool_calls}


def sessions(path: Path) -> dict[str, ParsedSession]:
    parsed = read_sessions(path, settle=NEVER)
    assert parsed.problems == []
    return {s.session_id: s for s in parsed.sessions}


class TestClaudeCodeSubagents:
    SID = "7a7a0000-0000-4000-8000-000000000007"
    FILE = FIXTURES / "claude/parallel/projects/-home-u-todo" / f"{SID}.jsonl"

    def test_three_parallel_task_subagents_are_three_sessions_each_linked_to_its_call(self):
        found = sessions(self.FILE)
        sid = self.SID
        assert set(found) == {sid, f"{sid}:sidechain", f"{sid}:sidechain-2",
                              f"{sid}:sidechain-3"}
        links = {k: (s.parent.kind, s.parent.parent_session_id, s.parent.parent_call_id)
                 for k, s in found.items() if s.parent is not None}
        assert links == {f"{sid}:sidechain": ("subagent", sid, "toolu_T2"),
                         f"{sid}:sidechain-2": ("subagent", sid, "toolu_T1"),
                         f"{sid}:sidechain-3": ("subagent", sid, "toolu_T3")}
        assert statuses(found[sid]) == {"toolu_T1": "ok", "toolu_T2": "ok", "toolu_T3": "ok"}
        assert statuses(found[f"{sid}:sidechain"]) == {"toolu_B2": "ok"}
        assert statuses(found[f"{sid}:sidechain-2"]) == {"toolu_B1": "error"}
        assert [m.text for m in found[f"{sid}:sidechain-3"].items if is_prompt(m)] == [
            "Write the components"]

    def test_lines_without_uuid_or_session_id_are_read_and_times_are_the_sessions_own(self):
        main = sessions(self.FILE)[self.SID]
        assert [m.text for m in main.items if is_prompt(m)] == [
            "build the todo app in parallel", "thanks"]
        assert main.items[-2].text == "Two of three done; npm is missing."
        assert (main.started_at, main.ended_at) == (at("2025-09-03T10:00:00"),
                                                   at("2025-09-03T10:00:30"))
        side = sessions(self.FILE)[f"{self.SID}:sidechain"]
        assert (side.started_at, side.ended_at) == (at("2025-09-03T10:00:05"),
                                                   at("2025-09-03T10:00:10"))

    def test_the_real_sidechain_excerpt_links_its_subagent_to_the_third_task_call(self):
        path = corpus("claude_code") / "cc-1.0.98-task-subagent-sidechain.jsonl"
        sid = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
        found = sessions(path)
        side = found[f"{sid}:sidechain"]
        assert side.parent is not None
        assert side.parent.parent_call_id == "toolu_01LS6tcVd796SbQKmZqeVnWY"
        # the excerpt ends while the other two Task calls run: no result yet, none invented
        assert [k for k, v in statuses(found[sid]).items() if v == "none"] == [
            "toolu_014i9ThHMNShCHocf9xMKasf", "toolu_01EbxY94wRUAGyMLj5wh699C"]
        assert (found[sid].started_at, found[sid].ended_at) == (
            at("2025-09-03T00:52:31.217"), at("2025-09-03T00:53:39.790"))


class TestCodexTimes:
    def test_the_rollout_s_first_and_last_lines_are_its_start_and_end(self):
        path = corpus("codex") / "codex-0.58-rollout-shell-function_call.jsonl"
        (session,) = sessions(path).values()
        assert (session.started_at, session.ended_at) == (at("2025-11-17T21:30:28.664"),
                                                         at("2025-11-17T21:33:04.359"))
        assert set(statuses(session).values()) == {"ok"}


class TestCopilotCli:
    SID = "6f5e4d3c-2b1a-4098-8e7d-6c5b4a3f2e1d"
    FILE = FIXTURES / "copilot/usage/session-state" / SID / "events.jsonl"

    def test_events_without_id_are_read(self):
        session = sessions(self.FILE)[self.SID]
        assert statuses(session) == {"call_1": "ok", "call_2": "error"}
        assert [m.text for m in session.items if is_prompt(m)] == ["add a health endpoint"]

    def test_usage_is_what_the_shutdown_records(self):
        session = sessions(self.FILE)[self.SID]
        usage = list(session.usage.values())
        assert sum(u.input_tokens + u.cache_read_tokens for u in usage) == 184_213
        assert sum(u.cache_read_tokens for u in usage) == 151_002
        assert sum(u.output_tokens for u in usage) == 1200
        assert {u.model for u in usage} == {"gpt-5"}

    def test_start_and_end_are_the_session_start_and_shutdown(self):
        session = sessions(self.FILE)[self.SID]
        assert (session.started_at, session.ended_at) == (at("2025-10-01T09:00:00"),
                                                         at("2025-10-01T09:01:00"))

    def test_a_subagent_is_linked_to_its_task_call(self):
        sid = "5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c"
        path = AGENTS / "copilot/session-state" / sid / "events.jsonl"
        sub = {s.session_id: s for s in read_sessions(path, settle=NEVER).sessions}[
            f"{sid}:agent-sa-1"]
        assert sub.parent is not None
        assert (sub.parent.parent_session_id, sub.parent.kind, sub.parent.parent_call_id) == (
            sid, "subagent", "toolu_c3")
        assert (sub.started_at, sub.ended_at) == (at("2025-09-19T10:00:10.300"),
                                                 at("2025-09-19T10:00:13"))


class TestCline:
    TASK = "1759312800123"
    FILE = FIXTURES / "cline/tasks" / TASK / "api_conversation_history.json"

    def test_every_call_of_the_task_is_found_xml_native_and_an_unclosed_last_tag(self):
        session = sessions(self.FILE)[self.TASK]
        names = [c.raw_name or c.name for m in session.items for c in m.tool_calls]
        assert names == ["list_files", "read_file", "read_file", "generate_explanation",
                         "execute_command", "write_to_file", "attempt_completion",
                         "execute_command"]
        assert list(statuses(session).values()) == ["ok", "ok", "error", "ok", "ok", "ok",
                                                    "ok", "none"]

    def test_only_the_task_is_a_prompt(self):
        session = sessions(self.FILE)[self.TASK]
        prompts = [m for m in session.items if is_prompt(m)]
        assert len(prompts) == 1 and "Tidy the repo" in (prompts[0].text or "")

    def test_a_task_without_times_is_dated_by_its_folder_name(self):
        session = sessions(self.FILE)[self.TASK]
        created = at("2025-10-01T10:00:00.123")
        assert (session.started_at, session.ended_at) == (created, created)
        assert {m.metadata.get("timestamp") for m in session.items} == {1759312800123.0}


class TestRooCode:
    TASK = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    PANEL_ONLY = "0199a1b2-ffff-7000-8000-00000000000f"

    def test_tool_results_are_not_prompts(self):
        path = FIXTURES / "roo/tasks" / self.TASK / "api_conversation_history.json"
        session = sessions(path)[self.TASK]
        assert [m for m in session.items if is_prompt(m)][0].text.count("Fix the failing test")
        assert sum(is_prompt(m) for m in session.items) == 1
        assert list(statuses(session).values()) == ["ok", "ok", "error", "ok", "ok"]
        assert (session.started_at, session.ended_at) == (at("2025-10-01T11:00:00"),
                                                         at("2025-10-01T11:00:55"))

    def test_a_task_with_only_its_panel_and_history_item_is_read(self):
        path = FIXTURES / "roo/tasks" / self.PANEL_ONLY / "ui_messages.json"
        parsed = read_sessions(path, settle=NEVER)
        assert parsed.format == "roo-code" and parsed.problems == []
        (session,) = parsed.sessions
        names = [c.raw_name or c.name for m in session.items for c in m.tool_calls]
        assert names == ["readFile", "execute_command"]
        assert list(statuses(session).values()) == ["none", "ok"]
        assert [m.text for m in session.items if is_prompt(m)] == [
            "Read src/a.ts and run the tests"]
        assert session.title == "Read src/a.ts and run the tests"
        assert (session.started_at, session.ended_at) == (at("2025-10-01T12:00:00"),
                                                         at("2025-10-01T12:00:06"))

    def test_a_panel_tool_entry_that_is_not_json_is_counted_not_invented(self, tmp_path):
        task = tmp_path / "tasks" / self.PANEL_ONLY
        task.mkdir(parents=True)
        (task / "history_item.json").write_text('{"ts": 1759320000000, "task": "Look"}')
        (task / "ui_messages.json").write_text(
            '[{"ts": 1759320000000, "type": "say", "say": "text", "text": "Look"},'
            ' {"ts": 1759320001000, "type": "ask", "ask": "tool", "text": "readFile a.ts"}]')
        parsed = read_sessions(task / "ui_messages.json", settle=NEVER)
        (session,) = parsed.sessions
        assert [c for m in session.items for c in m.tool_calls] == []  # no {"text": ...} call
        assert parsed.skipped == {"roo-code: panel tool entry that is not a JSON object": 1}

    def test_the_panel_is_not_read_again_beside_a_history(self):
        path = FIXTURES / "roo/tasks" / self.TASK / "api_conversation_history.json"
        panel = path.with_name("ui_messages.json")
        assert not panel.exists()  # (the fixture's history task has no panel)
        parsed = read_sessions(AGENTS.parent / "vscode/roo/globalStorage/rooveterinaryinc"
                               ".roo-cline/tasks/0199b0c0-1111-7000-8000-000000000001"
                               "/ui_messages.json", settle=NEVER)
        assert parsed.messages == 0 and parsed.problems == []


class TestTimesOfTheOtherReaders:
    def test_gemini_cli_start_time_and_last_update(self):
        path = AGENTS / "gemini/tmp/proj/chats/session-2025-09-15T10-00-6f1c2a9e.json"
        (session,) = read_sessions(path, settle=NEVER).sessions
        assert session.started_at is not None and session.ended_at is not None
        assert session.started_at <= session.ended_at

    def test_qwen_code_subagent_is_linked_and_dated(self):
        path = (AGENTS / "qwen/projects/-home-u-proj/chats"
                / "8b1d6c2e-4f3a-4c5b-9d7e-0a1b2c3d4e5f.jsonl")
        found = {s.session_id: s for s in read_sessions(path, settle=NEVER).sessions}
        sid = "8b1d6c2e-4f3a-4c5b-9d7e-0a1b2c3d4e5f"
        sub = found[f"{sid}:agent-explore-7f3c"]
        assert sub.parent is not None and sub.parent.parent_call_id == "call_q3"
        assert (found[sid].started_at, found[sid].ended_at) == (at("2025-09-18T09:00:00"),
                                                               at("2025-09-18T09:01:01"))
