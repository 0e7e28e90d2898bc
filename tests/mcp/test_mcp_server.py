"""Issue 36: agents ask the archive over MCP. ``transcript-store mcp`` is started as a
subprocess and driven with the MCP SDK's own clients (stdio; streamable HTTP in
test_mcp_http.py), on both backends, over a store holding several agents' sessions."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_helpers import (
    CODEX,
    LONG,
    PARENT,
    SECRET,
    SECRET_SESSION,
    SUBAGENT,
    call,
    database_state,
    error,
    fill,
    over_stdio,
)

import store

pytest.importorskip("mcp.server.mcpserver")

TOOLS = {"findings", "get_session", "lineage", "list_sessions", "search_calls",
         "search_messages", "sessions_touching_file", "tool_usage", "usage_cost"}


@pytest.fixture
def archive(store_url: str, tmp_path: Path) -> str:
    """The URL of a store holding the agent fixtures and the secret session."""
    with store.TranscriptStore.open(store_url) as opened:
        fill(opened, tmp_path)
        store.save_findings(opened, store.check_rules(opened))
    return store_url


def test_every_tool_answers_from_the_store(archive):
    async def work(session):
        listed = await session.list_tools()
        schemas = {t.name: t for t in listed.tools}
        assert set(schemas) == TOOLS
        for tool in schemas.values():
            assert tool.annotations.read_only_hint is True
            if "limit" in tool.input_schema["properties"]:
                assert tool.input_schema["properties"]["limit"]["maximum"] <= 100

        sessions = await call(session, "list_sessions", limit=100)
        ids = {s["session_id"] for s in sessions["items"]}
        assert {PARENT, SUBAGENT, CODEX, SECRET_SESSION} <= ids
        assert sessions["total"] == len(ids)
        agents = {s["agent"] for s in sessions["items"]}
        assert {"claude-code", "codex", "gemini-cli", "test-agent"} <= agents
        codex_only = await call(session, "list_sessions", agent="codex")
        assert {s["agent"] for s in codex_only["items"]} == {"codex"}
        in_project = await call(session, "list_sessions", project="/home/u/deploy")
        assert SECRET_SESSION in [s["session_id"] for s in in_project["items"]]
        assert all(s["cwd"] == "/home/u/deploy" or s["cwd"].startswith("/home/u/deploy/")
                   for s in in_project["items"])  # (an agent's fixture works there too)

        rm = await call(session, "search_calls", tool="bash", command="rm -rf build")
        assert PARENT in {m["session_id"] for m in rm["items"]}
        assert CODEX in {m["session_id"] for m in rm["items"]}
        assert {m["tool"] for m in rm["items"]} == {"bash"}
        september = await call(session, "search_calls", tool="bash",
                               since="2025-09-01", until="2025-10-01")
        assert all(m["at"].startswith("2025-09") for m in september["items"])
        assert september["items"]
        by_agent = await call(session, "search_calls", agent="codex")
        assert {m["agent"] for m in by_agent["items"]} == {"codex"}
        by_text = await call(session, "search_calls", text="deploy.sh")
        assert [m["session_id"] for m in by_text["items"]] == [SECRET_SESSION]
        one = await call(session, "search_calls", session_id=CODEX[:8])
        assert {m["session_id"] for m in one["items"]} == {CODEX}
        ok = await call(session, "search_calls", status="ok", limit=100)
        assert {m["arguments_status"] for m in ok["items"]} == {"valid"}
        by_path = await call(session, "search_calls", path="src/app.py")
        assert by_path["items"] and all("src/app.py" in m["arguments"]
                                        for m in by_path["items"])

        said = await call(session, "search_messages", query="deploy.sh")
        assert SECRET_SESSION in {m["session_id"] for m in said["items"]}
        assert all("deploy" in m["snippet"].lower() for m in said["items"])
        assert (await call(session, "search_messages", query="deploy.sh",
                           agent="codex"))["items"] == []

        touched = await call(session, "sessions_touching_file", path="src/app.py")
        touching = {t["session_id"]: t for t in touched["items"]}
        assert PARENT in touching or SUBAGENT in touching
        assert all("path" in t["via"] or "mention" in t["via"] for t in touched["items"])
        assert all(t["calls"] >= 1 for t in touched["items"])
        dates = [t["last_at"] for t in touched["items"]]
        assert dates == sorted(dates, reverse=True)
        assert (await call(session, "sessions_touching_file",
                           path="no/such/file.txt"))["items"] == []

        usage = await call(session, "tool_usage", limit=100)
        bash = next(u for u in usage["items"] if u["tool"] == "bash")
        assert {"Bash", "shell", "run_shell_command"} <= set(bash["raw_names"])
        assert bash["calls"] >= 5
        codex_usage = await call(session, "tool_usage", agent="codex")
        assert codex_usage["items"] and all(u["sessions"] == 1 for u in codex_usage["items"])

        for by in ("day", "model", "agent"):
            cost = await call(session, "usage_cost", by=by)
            assert cost["items"], by
            assert sum(r["total_tokens"] for r in cost["items"]) > 0
        models = await call(session, "usage_cost", by="model")
        assert "claude-sonnet-4-5" in {r["key"] for r in models["items"]}

        findings = await call(session, "findings", limit=100)
        assert findings["items"], "the built-in rules find the rm -rf / token in the fixtures"
        assert all(f["rule_id"] and f["level"] for f in findings["items"])
        high = await call(session, "findings", min_level="high", limit=100)
        assert {f["level"] for f in high["items"]} <= {"high", "critical"}

        family = await call(session, "lineage", session_id=PARENT)
        assert family["session"]["session_id"] == PARENT
        assert [d["session_id"] for d in family["descendants"]] == [SUBAGENT]
        child = await call(session, "lineage", session_id=SUBAGENT)
        assert [a["session_id"] for a in child["ancestors"]] == [PARENT]
        assert child["session"]["lineage"] == "subagent"

        window = await call(session, "get_session", session_id=PARENT, last_turns=1)
        assert window["session"]["session_id"] == PARENT
        assert window["session"]["calls"] >= 1
        calls = [c for m in window["messages"] for c in m.get("calls", [])]
        assert calls and all("result" in c for c in calls)
        answered = [c for c in calls if c["result"] is not None]
        assert answered and all(c["result"]["position"] > 0 for c in answered)
        return True

    assert over_stdio(archive, work)


def test_a_session_is_read_in_windows_with_long_texts_cut(archive):
    async def work(session):
        whole = await call(session, "get_session", session_id=SECRET_SESSION, last_turns=50)
        assert whole["total_messages"] == 5
        assert whole["first_position"] == 0 and whole["last_position"] == 4
        # the results are under their calls; the messages that only carried them are left out
        assert [m["position"] for m in whole["messages"]] == [0, 1, 4]
        calls = whole["messages"][1]["calls"]
        assert [c["call_id"] for c in calls] == ["c1", "c2"]
        long = calls[1]["result"]["text"]
        assert long.startswith(LONG[:500]) and "[truncated:" in long
        assert f"{len(LONG) - 500} more characters" in long
        longer = await call(session, "get_session", session_id=SECRET_SESSION, around=1,
                            max_chars=20000)
        assert longer["messages"][1]["calls"][1]["result"]["text"] == LONG.rstrip("\n") \
            or longer["messages"][1]["calls"][1]["result"]["text"] == LONG
        around = await call(session, "get_session", session_id=SECRET_SESSION, around=4,
                            before=0, after=0)
        assert [m["position"] for m in around["messages"]] == [4]
        assert "earlier: get_session with around=3" in around["more"]
        start = await call(session, "get_session", session_id=SECRET_SESSION, around=0,
                           before=0, after=1)
        assert [m["position"] for m in start["messages"]] == [0, 1]
        assert start["more"] == ["later: get_session with around=2"]
        # the results of the calls shown are under them, though their messages are not shown
        assert start["messages"][1]["calls"][0]["result"]["position"] == 2
        last = await call(session, "get_session", session_id=SECRET_SESSION, last_turns=1)
        assert last["first_position"] == 0  # one turn: the whole (one-prompt) session
        return True

    assert over_stdio(archive, work)


def test_lists_are_paged(archive):
    async def work(session):
        seen: list[str] = []
        offset = 0
        pages = 0
        while offset is not None:
            page = await call(session, "list_sessions", limit=3, offset=offset)
            assert len(page["items"]) <= 3
            seen += [s["session_id"] for s in page["items"]]
            offset = page["next_offset"]
            pages += 1
        assert pages >= 3
        assert len(seen) == len(set(seen)) == page["total"]
        first = await call(session, "search_calls", limit=2)
        second = await call(session, "search_calls", limit=2, offset=first["next_offset"])
        assert first["next_offset"] == 2
        keys = {(m["session_id"], m["position"], m["index"]) for m in first["items"]}
        assert keys.isdisjoint((m["session_id"], m["position"], m["index"])
                               for m in second["items"])
        usage = await call(session, "tool_usage", limit=1)
        assert len(usage["items"]) == 1 and usage["next_offset"] == 1
        return True

    assert over_stdio(archive, work)


def test_bad_inputs_are_tool_errors_that_say_what_is_wrong(archive):
    async def work(session):
        unknown = await error(session, "get_session", session_id="abc")
        assert "no session matches 'abc'" in unknown
        typo = "22222222-2222-4222-9222-222222222222"
        near = await error(session, "get_session", session_id=typo)
        assert "did you mean" in near and CODEX in near
        # a prefix shared only by a session and its own subagent names the session
        family = await call(session, "lineage", session_id="5555")
        assert family["session"]["session_id"] == PARENT
        assert "less than or equal to 100" in await error(session, "list_sessions", limit=500)
        assert "greater than or equal to 1" in await error(session, "search_calls", limit=0)
        assert "greater than or equal to 0" in await error(session, "list_sessions",
                                                           offset=-1)
        bad_time = await error(session, "search_calls", since="next tuesday")
        assert "since: 'next tuesday' is not a time" in bad_time
        assert "until:" in await error(session, "list_sessions", until="soon")
        assert "at least 3 characters" in await error(session, "search_calls", text="ab")
        assert "status" in await error(session, "search_calls", status="broken")
        assert "Input should be 'day'" in await error(session, "usage_cost", by="tool")
        assert "Unknown tool" in await error(session, "drop_everything")
        for message in (unknown, bad_time):
            assert "Traceback" not in message
        return True

    assert over_stdio(archive, work)


def test_every_answer_is_redacted_unless_asked_not_to(archive):
    async def redacted(session):
        found = await session.call_tool("search_calls", {"text": "deploy.sh"})
        shown = found.content[0].text
        assert SECRET not in shown and "[REDACTED:github_token]" in shown
        window = await session.call_tool("get_session", {"session_id": SECRET_SESSION})
        assert SECRET not in window.content[0].text
        assert window.content[0].text.count("[REDACTED:github_token]") == 2
        resource = await session.read_resource(f"transcript://session/{SECRET_SESSION}")
        assert SECRET not in resource.contents[0].text
        return True

    async def plain(session):
        found = await session.call_tool("search_calls", {"text": "deploy.sh"})
        return found.content[0].text

    assert over_stdio(archive, redacted)
    assert SECRET in over_stdio(archive, plain, "--no-redact")


def test_resources_and_prompts(archive):
    async def work(session):
        templates = await session.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == [
            "transcript://session/{session_id}"]
        read = await session.read_resource(f"transcript://session/{CODEX}")
        assert read.contents[0].mime_type == "application/json"
        assert f'"session_id":"{CODEX}"' in read.contents[0].text
        prompts = {p.name for p in (await session.list_prompts()).prompts}
        assert {"what_did_we_try", "sessions_touching_file", "failed_commands"} <= prompts
        asked = await session.get_prompt("sessions_touching_file", {"path": "src/app.py"})
        text = asked.messages[0].content.text
        assert "sessions_touching_file" in text and "src/app.py" in text
        tried = await session.get_prompt("what_did_we_try", {"project": "/home/u/proj"})
        assert "project='/home/u/proj'" in tried.messages[0].content.text
        return True

    assert over_stdio(archive, work)


def test_an_unknown_session_resource_is_an_error(archive):
    from mcp.shared.exceptions import MCPError

    async def work(session):
        with pytest.raises(MCPError, match="no session matches 'nope'"):
            await session.read_resource("transcript://session/nope")
        return True

    assert over_stdio(archive, work)


def test_a_session_of_calls_writes_nothing(archive):
    before = database_state(archive)
    folder = Path(archive.removeprefix("sqlite:///")).parent \
        if archive.startswith("sqlite:///") else None
    files = sorted(p.name for p in folder.iterdir()) if folder else None

    async def work(session):
        for tool, arguments in [
                ("list_sessions", {}), ("search_calls", {"text": "rm -rf"}),
                ("search_calls", {"path": "app.py"}), ("sessions_touching_file",
                                                       {"path": "src/app.py"}),
                ("get_session", {"session_id": PARENT}), ("tool_usage", {}),
                ("usage_cost", {}), ("findings", {}), ("lineage", {"session_id": PARENT})]:
            await call(session, tool, **arguments)
        await session.read_resource(f"transcript://session/{PARENT}")
        return True

    assert over_stdio(archive, work)
    assert database_state(archive) == before
    if folder is not None:  # no journal, WAL or shared-memory file left beside it
        assert sorted(p.name for p in folder.iterdir()) == files


def test_a_missing_database_is_not_created(tmp_path):
    missing = tmp_path / "none.sqlite"

    async def work(session):  # pragma: no cover - the server never starts
        return True

    with pytest.raises(Exception):  # noqa: B017 - the stdio client sees the process exit
        over_stdio(f"sqlite:///{missing}", work)
    assert not missing.exists()
