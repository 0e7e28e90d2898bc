"""``calls search --command/--path`` (argument views) match the value as a literal substring
on both backends, LIKE's own characters included: PostgreSQL binds a substring condition as a
LIKE pattern (its planner estimates one from its letters; a ``strpos`` condition it took for
a third of the table and hash-joined every call), SQLite keeps ``instr``. Before and after
the catch-up (the views' rows, then the tail of calls not reached yet)."""

from __future__ import annotations

import json

import pytest

import store
from store import CallQuery, ViewCondition
from store.core.model import make_tool_call

COMMANDS = ["echo 50%", "echo 50x", "cp a_b c", "cp aXb c", r"grep a\b f", r"grep a\\b f",
            "ls %_\\", "LS %_\\ X", "git push"]


def _stored(db: store.TranscriptStore) -> None:
    calls = tuple(make_tool_call(f"c{i}", "bash", {"command": c})
                  for i, c in enumerate(COMMANDS))
    db.append("s", [store.Message("assistant", calls)], keys=["a"])


@pytest.mark.parametrize("needle", ["50%", "%", "_", "a_b", "\\", r"a\b", "%_\\", "it p", "0x"])
def test_a_view_value_is_a_literal_substring(store_url: str, needle: str) -> None:
    with store.TranscriptStore.open(store_url) as db:
        _stored(db)
        for caught_up in (False, True):
            if caught_up:
                db.update_search_index()
            for op, want in (("contains", [c for c in COMMANDS if needle in c]),
                             ("icontains", [c for c in COMMANDS
                                            if needle.lower() in c.lower()])):
                query = CallQuery(views=(ViewCondition("command", needle, op),))
                found = [json.loads(m.arguments_text)["command"]
                         for m in store.iter_calls(db, query)]
                assert sorted(found) == sorted(want), (needle, op, caught_up)
