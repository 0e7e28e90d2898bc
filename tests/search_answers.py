"""What the search-index revisions' tests compare before and after a migration: the same
calls stored, and the same answers (searches, rule findings, ``verify``)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from store import CallQuery, TranscriptStore, check_rules, search_calls


def bash_call(call_id: str, command_line: str) -> dict:
    """An assistant message with one ``Bash`` call running ``command_line``."""
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": call_id, "type": "function",
        "function": {"name": "Bash", "arguments": json.dumps({"command": command_line})}}]}


def filled(url: str) -> None:
    """Session ``s``: two calls and their results (``rm -rf /etc``, ``git push``), caught up."""
    with TranscriptStore.open(url) as opened:
        opened.create_session("s", agent="claude-code", cwd="/home/dev/app")
        opened.append("s", [
            {"role": "user", "content": "tidy up"}, bash_call("c1", "rm -rf /etc"),
            {"role": "tool", "tool_call_id": "c1", "content": "Removed 12 Files"},
            bash_call("c2", "git push origin main"),
            {"role": "tool", "tool_call_id": "c2", "content": "Everything up-to-date"}])
        opened.update_search_index()


def answers(url: str, needles: Iterable[str]
            ) -> tuple[list[list[str]], set[tuple[str, str, int, int]], bool]:
    """The call ids each needle finds, the rule findings, whether ``verify`` is clean."""
    with TranscriptStore.open(url, read_only=True) as reader:
        hits = [[m.call_id for m in search_calls(reader, CallQuery(text=needle))]
                for needle in needles]
        found = {(f.rule_id, f.session_id, f.position, f.call_index)
                 for f in check_rules(reader)}
        return hits, found, reader.verify().ok
