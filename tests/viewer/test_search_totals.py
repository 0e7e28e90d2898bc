"""The viewer's call search (issue 24): filters by shell command, path, agent and project,
and says how many calls match in all; on both backends."""

from __future__ import annotations

import re

from viewer_helpers import fetcher, running

from store import TranscriptStore


def shell(call_id: str, command: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": call_id, "type": "function",
        "function": {"name": "Bash", "arguments": f'{{"command": "{command}"}}'}}]}


def test_search_by_command_agent_and_project_with_totals(store: TranscriptStore,
                                                         store_url: str) -> None:
    store.append("one", [shell("a1", "rm -rf build"), shell("a2", "ls")],
                 agent="claude-code", cwd="/home/u/app")
    store.append("two", [shell("b1", "RM -RF dist"), shell("b2", "rm -rf tmp")],
                 agent="codex", cwd="/home/u/other")
    store.update_search_index()
    with running(store_url) as server:
        server.viewer.page_size = 1
        fetch = fetcher(server)
        everything = fetch("/search?command=rm+-rf").text
        assert "3 calls (showing 1-1)" in everything  # every match counted, one shown
        codex = fetch("/search?command=rm+-rf&agent=codex").text
        assert "2 calls" in codex and 'href="/session/one' not in codex
        app = fetch("/search?command=rm&cwd=/home/u/app").text
        assert re.search(r'<p class="totals">1 call</p>', app)
        assert 'name="command" value="rm"' in app  # the form keeps the filter
        none = fetch("/search?command=shutdown").text
        assert "0 calls" in none and "No calls match" in none
