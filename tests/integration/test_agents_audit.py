"""Issue 14: audits that are right across agents, on both backends.

The fixtures in tests/fixtures/agents are small sessions in each agent's real file format
(Claude Code with a subagent file, Codex with compaction records, Gemini CLI legacy JSON and
JSON lines) in which the same ``rm -rf build`` and the same read of ``src/app.py`` happen in
September 2025; one Claude Code session happens in October.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import event

import store
from store import CallQuery, ViewCondition, import_paths, search_calls, tool_usage

FIXTURES = Path(__file__).parent.parent / "fixtures" / "agents"
SEPTEMBER = (datetime(2025, 9, 1, tzinfo=UTC), datetime(2025, 10, 1, tzinfo=UTC))
PARENT = "55550000-0000-4000-8000-000000000001"
SUBAGENT = f"{PARENT}:agent-a1b2c3d4e5f6a7b8c"
CODEX = "22222222-2222-4222-8222-222222222222"
GEMINI_JSON = "6f1c2a9e-3b7d-4c1e-9a55-0d2f8e7b4c11"
GEMINI_JSONL = "7a2b3c4d-1111-4222-8333-444455556666"
OCTOBER = "66660000-0000-4000-8000-000000000002"


#: The agents these audits count (other agents' fixtures have tests of their own).
AUDITED = ("claude", "codex", "gemini")


def copy_fixtures(target: Path) -> Path:
    """The audited agents' fixtures in a fresh folder, their files dated long ago (settled:
    nothing held back as possibly still being written)."""
    for agent in AUDITED:
        shutil.copytree(FIXTURES / agent, target / agent)
    for path in target.rglob("*"):
        if path.is_file():
            os.utime(path, (1_700_000_000, 1_700_000_000))
    return target


@pytest.fixture
def agents(store: store.TranscriptStore, tmp_path: Path) -> store.TranscriptStore:
    summary = import_paths(store, [copy_fixtures(tmp_path / "agents")])
    assert summary.ok, (summary.problems, summary.failed_files)
    assert summary.deferred == []
    return store


def store_message(metadata: dict[str, object]) -> store.Message:
    return store.Message("user", (store.TextPart("hi"),), metadata=metadata)


def usage(opened: store.TranscriptStore, **filters: object) -> dict[str, store.ToolUsage]:
    return {u.name: u for u in tool_usage(opened, limit=None, **filters)}  # type: ignore[arg-type]


class TestOneVocabulary:
    def test_every_agents_shell_and_read_are_one_tool(self, agents):
        found = usage(agents)

        assert found["bash"].raw_names == ("Bash", "run_shell_command", "shell")
        assert found["bash"].calls == 5 and found["bash"].sessions == 5
        assert found["read"].raw_names == ("Read", "read_file")
        assert found["read"].calls == 4 and found["read"].sessions == 4
        assert {"Bash", "shell", "run_shell_command", "Read", "read_file"}.isdisjoint(found)
        assert found["task"].calls == 1 and found["grep"].calls == 1

    def test_the_same_rm_rf_is_found_in_every_agent_by_one_condition(self, agents):
        query = CallQuery(tool="bash", views=(ViewCondition("command", "rm -rf build"),))
        matches = search_calls(agents, query)

        assert sorted(m.session_id for m in matches) == sorted(
            [PARENT, CODEX, GEMINI_JSON, GEMINI_JSONL])
        assert {m.name for m in matches} == {"bash"}
        assert {m.raw_name for m in matches} == {"Bash", "shell", "run_shell_command"}

    def test_the_same_file_read_is_one_path_condition(self, agents):
        query = CallQuery(tool="read", views=(ViewCondition("path", "src/app.py"),))

        assert sorted(m.session_id for m in search_calls(agents, query)) == sorted(
            [PARENT, CODEX, GEMINI_JSON, GEMINI_JSONL])

    def test_raw_names_stay_queryable(self, agents):
        codex = search_calls(agents, CallQuery(raw_name="shell"))

        assert [m.session_id for m in codex] == [CODEX]
        assert codex[0].name == "bash"

    def test_kwards_seed_names_keep_their_names(self, agents):
        table = agents.aliases()

        assert [table.resolve(raw) for raw in
                ("run_shell_command", "read_file", "edit_file", "write_file")] == [
            "bash", "read", "edit", "write"]

    def test_a_scoped_alias_applies_to_its_agents_sessions_only(self, agents):
        agents.append("kward-1", [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "k1", "type": "function",
                 "function": {"name": "list_directory", "arguments": '{"path": "src"}'}}]},
        ], agent="kward")
        agents.append("gemini-1", [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "g1", "type": "function",
                 "function": {"name": "list_directory", "arguments": '{"dir_path": "src"}'}}]},
        ], agent="gemini-cli")

        found = usage(agents)

        assert found["list"].calls == 1 and found["list_directory"].calls == 1
        assert [m.session_id for m in search_calls(agents, CallQuery(tool="list"))] == [
            "gemini-1"]
        assert [m.session_id for m in search_calls(
            agents, CallQuery(tool="list_directory"))] == ["kward-1"]
        assert agents.load("gemini-1").messages[0].message.parts[0].name == "list"
        assert agents.load("kward-1").messages[0].message.parts[0].name == "list_directory"

    def test_aliases_are_user_editable_and_regroup_at_once(self, agents):
        agents.add_alias("shell", "codex_shell", agent="codex")
        assert usage(agents)["bash"].calls == 4
        assert usage(agents)["codex_shell"].calls == 1

        agents.remove_alias("shell", agent="codex")
        assert usage(agents)["bash"].calls == 5
        with pytest.raises(store.AliasError):
            agents.remove_alias("shell", agent="codex")


class TestSessionTimes:
    def test_sessions_are_dated_by_their_own_times_not_the_import(self, agents):
        since, until = SEPTEMBER
        september = agents.list_sessions(since=since, until=until, limit=None)

        assert {s.session_id for s in september} == {
            PARENT, SUBAGENT, CODEX, GEMINI_JSON, GEMINI_JSONL}
        assert agents.count_sessions(since=since, until=until) == 5
        october = agents.list_sessions(since=until, limit=None)
        assert [s.session_id for s in october] == [OCTOBER]
        codex = next(s for s in september if s.session_id == CODEX)
        # its own start record (the session_meta line), before its first message's time
        assert codex.started_at == datetime(2025, 9, 12, 8, 0, 0, 100000, tzinfo=UTC)
        assert codex.ended_at == datetime(2025, 9, 12, 9, 10, 0, 500000, tzinfo=UTC)
        assert codex.created_at.year > 2025  # the import time, kept apart

    def test_calls_and_sessions_agree_on_a_date_range(self, agents):
        since, until = SEPTEMBER
        calls = search_calls(agents, CallQuery(tool="bash", since=since, until=until))
        sessions = {s.session_id for s in agents.list_sessions(since=since, until=until,
                                                               limit=None)}

        assert len(calls) == 4
        assert {m.session_id for m in calls} <= sessions
        assert usage(agents, since=since, until=until)["bash"].calls == 4

    def test_provider_created_epochs_date_a_message(self, store, tmp_path):
        body = tmp_path / "completion.json"
        body.write_text('{"id": "chatcmpl-1", "object": "chat.completion", "created": '
                        '1757000000, "model": "gpt-4o", "choices": [{"index": 0, "message": '
                        '{"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}')
        assert import_paths(store, [body], settle=0).ok
        store.append("epoch-ms", [store_message({"timestamp": 1_757_000_000_000})])

        sid = store.list_sessions(tag="openai-chat")[0].session_id
        for session in (sid, "epoch-ms"):
            assert store.load(session).messages[0].created_at == datetime.fromtimestamp(
                1_757_000_000, UTC)


class TestImporters:
    def test_codex_compaction_records_are_summary_messages(self, agents):
        messages = agents.load(CODEX).messages
        compacted = [m for m in messages if m.message.metadata.get("codex_type") == "compacted"]

        assert [m.message.role for m in compacted] == ["user", "user"]
        assert compacted[0].message.parts[0].text.startswith("Summary: cleaned build/")
        remote = compacted[1].message.metadata["compacted"]
        assert remote["replacement_history"][1]["type"] == "compaction"
        assert messages[1].created_at == datetime(2025, 9, 12, 8, 0, 3, tzinfo=UTC)

    def test_a_claude_code_subagent_is_its_own_session_linked_to_its_task_call(self, agents):
        sub = agents.get_session(SUBAGENT)
        parent = agents.load(PARENT)

        assert sub.metadata["parent_session"] == PARENT
        assert sub.metadata["parent_call_id"] == "toolu_agent"
        assert sub.metadata["agent_type"] == "general-purpose"
        assert "subagent" in sub.tags and sub.agent == "claude-code"
        task = [c for c in parent.calls() if c.call.id == "toolu_agent"]
        assert task and task[0].call.name == "task"
        assert [c.call.name for c in agents.load(SUBAGENT).calls()] == ["grep"]
        assert all(":sidechain" not in s.session_id for s in agents.list_sessions(limit=None))

    def test_gemini_cli_json_lines_upserts_rewinds_and_checkpoints(self, tmp_path, store):
        path = tmp_path / "chats" / "session-2025-09-21T00-00-aaaa.jsonl"
        path.parent.mkdir()
        rows = [
            {"sessionId": "g-lines", "projectHash": "ab" * 32, "startTime": "2025-09-21T00:00:00Z"},
            {"id": "u1", "timestamp": "2025-09-21T00:00:01Z", "type": "user",
             "content": [{"text": "one"}]},
            {"id": "a1", "timestamp": "2025-09-21T00:00:02Z", "type": "gemini", "content": "v1"},
            {"id": "a1", "timestamp": "2025-09-21T00:00:02Z", "type": "gemini", "content": "v2"},
            {"id": "u2", "timestamp": "2025-09-21T00:00:03Z", "type": "user",
             "content": [{"text": "rewound"}]},
            {"$rewindTo": "u2"},
            {"$set": {"summary": "a summary"}},
            {"id": "u3", "timestamp": "2025-09-21T00:00:04Z", "type": "user",
             "content": [{"text": "three"}]},
        ]
        import orjson

        path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
        os.utime(path, (1_700_000_000, 1_700_000_000))
        for fmt in (None, "gemini-cli"):
            summary = import_paths(store, [path], format=fmt)
            assert summary.ok
        texts = [m.message.text for m in store.load("g-lines").messages]

        assert texts == ["one", "v2", "three"]
        assert store.get_session("g-lines").agent == "gemini-cli"


class TestBoundedUsage:
    def test_usage_costs_the_same_number_of_queries_whatever_the_number_of_tools(self, store):
        def statements(tools: int) -> int:
            for number in range(tools):
                store.append(f"s{tools}-{number}", [
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": f"c{number}", "type": "function", "function": {
                            "name": f"mcp__server__tool_{number}", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": f"c{number}", "content": "ok"},
                ])
            count = 0

            def count_it(*_: object) -> None:
                nonlocal count
                count += 1

            event.listen(store.engine, "before_cursor_execute", count_it)
            try:
                assert len(tool_usage(store, limit=None)) >= tools
            finally:
                event.remove(store.engine, "before_cursor_execute", count_it)
            return count

        assert statements(3) == statements(60)


class TestHonestListingsCli:
    def test_listings_say_when_rows_are_cut_and_limit_0_means_all(self, agents, tmp_path):
        from click.testing import CliRunner

        from store.cli.main import cli

        runner = CliRunner()
        url = agents.url
        cut = runner.invoke(cli, ["calls", "search", "--db", url, "--limit", "2"])
        assert cut.exit_code == 0, cut.output
        assert "showing 2 of 11 calls; --limit 0 for all" in cut.stderr
        every = runner.invoke(cli, ["calls", "search", "--db", url, "--limit", "0", "--json"])
        assert len(every.stdout.splitlines()) == 11 and "showing" not in every.stderr
        rm = runner.invoke(cli, ["calls", "search", "--db", url, "--tool", "bash",
                                 "--command", "RM -RF", "-i", "--json"])
        assert len(rm.stdout.splitlines()) == 5
        regex = runner.invoke(cli, ["calls", "search", "--db", url, "--path",
                                    r"src/[a-z]+\.py$", "--regex", "--json"])
        assert len(regex.stdout.splitlines()) == 4
        month = runner.invoke(cli, ["sessions", "list", "--db", url, "--since", "2025-09-01",
                                    "--until", "2025-10-01", "--json", "--limit", "2"])
        assert len(month.stdout.splitlines()) == 2
        assert "showing 2 of 5 sessions" in month.stderr

    def test_aliases_cli(self, agents):
        from click.testing import CliRunner

        from store.cli.main import cli

        runner = CliRunner()
        url = agents.url
        added = runner.invoke(cli, ["aliases", "add", "--db", url, "shell", "sh", "--agent",
                                    "codex"])
        assert added.exit_code == 0, added.output
        listed = runner.invoke(cli, ["aliases", "list", "--db", url, "--agent", "codex",
                                     "--json"])
        assert '{"agent":"codex","raw_tool":"shell","tool":"sh"}' in listed.stdout
        removed = runner.invoke(cli, ["aliases", "remove", "--db", url, "nope"])
        assert removed.exit_code == 1 and "no alias for tool name 'nope'" in removed.stderr


class TestExportsAndOpening:
    def test_render_takes_a_transcript_or_its_stored_messages(self, agents):
        transcript = agents.load(GEMINI_JSONL)
        expected = store.render([s.message for s in transcript], "openai-chat")

        assert store.render(transcript, "openai-chat") == expected
        assert store.render(transcript.messages, "openai-chat") == expected

    def test_db_takes_a_plain_file_path(self, tmp_path, monkeypatch):
        from click.testing import CliRunner

        from store.cli.main import cli

        monkeypatch.chdir(tmp_path)
        runner = CliRunner()
        made = runner.invoke(cli, ["db", "upgrade", "--db", "audit.sqlite"])
        assert made.exit_code == 0, made.output
        assert (tmp_path / "audit.sqlite").is_file()
        listed = runner.invoke(cli, ["sessions", "list", "--db", "audit.sqlite"])
        assert listed.exit_code == 0, listed.output
        bad = runner.invoke(cli, ["sessions", "list", "--db", "sqlite://x"])
        assert bad.exit_code == 1
        assert bad.stderr.count("\n") == 1 and "three slashes" in bad.stderr
        assert "Traceback" not in bad.output

    def test_import_without_paths_lists_the_agents_folders_then_imports(self, tmp_path,
                                                                         monkeypatch):
        from click.testing import CliRunner

        from store.cli.main import cli

        home = copy_fixtures(tmp_path / "fx")
        (tmp_path / "home" / ".claude").mkdir(parents=True)
        shutil.copytree(home / "claude" / "projects", tmp_path / "home" / ".claude" / "projects")
        shutil.copytree(home / "codex", tmp_path / "home" / ".codex")
        shutil.copytree(home / "gemini", tmp_path / "home" / ".gemini")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.delenv("CODEX_HOME", raising=False)
        db = f"sqlite:///{tmp_path / 'db.sqlite'}"
        runner = CliRunner()

        declined = runner.invoke(cli, ["import", "--db", db], input="n\n")
        assert declined.exit_code == 0  # a declined prompt is not an error
        for folder in (".claude/projects", ".codex/sessions", ".gemini/tmp/proj/chats",
                       ".gemini/tmp/proj2/chats"):
            assert str(tmp_path / "home" / folder) in declined.stderr
        done = runner.invoke(cli, ["import", "--db", db, "--yes", "--settle", "0", "--json"])
        assert done.exit_code == 0, done.output
        with store.TranscriptStore.open(db) as opened:
            assert opened.count_sessions() == 6
