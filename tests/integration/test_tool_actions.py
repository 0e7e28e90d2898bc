"""Issue 33: an editor tool whose ``command`` says what it did is named by that action
(``view`` -> read, ``create`` -> write, ``str_replace`` -> edit), in a load, in ``tools
usage``, in ``calls search --tool`` and in the rules' events; the raw name stays as recorded,
an action without a row of its own keeps the raw name's name, and a user's row wins."""

from __future__ import annotations

import json

import store
from store import CallQuery, search_calls, tool_usage


def _call(call_id: str, name: str, arguments: dict[str, object] | str) -> dict[str, object]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def _session(db: store.TranscriptStore, sid: str, agent: str, name: str) -> None:
    calls = [_call(f"{sid}-v", name, {"command": "view", "path": "/p/a.py"}),
             _call(f"{sid}-c", name, {"command": "create", "path": "/p/b.py",
                                      "file_text": "x"}),
             _call(f"{sid}-e", name, {"command": "str_replace", "path": "/p/a.py",
                                      "old_str": "a", "new_str": "b"}),
             _call(f"{sid}-u", name, {"command": "frobnicate", "path": "/p/c.py"}),
             _call(f"{sid}-i", name, '{"command": "view", "path": ')]
    db.append(sid, [{"role": "user", "content": "look at a.py"},
                    {"role": "assistant", "content": None, "tool_calls": calls},
                    *({"role": "tool", "tool_call_id": c["id"], "content": "ok"}
                      for c in calls)], agent=agent)


def test_each_call_is_named_by_its_action_and_keeps_its_raw_name(store):
    _session(store, "oh", "openhands", "str_replace_editor")

    calls = [(c.call.name, c.call.raw_name) for c in store.load("oh").calls()]

    assert calls == [("read", "str_replace_editor"), ("write", "str_replace_editor"),
                     ("edit", "str_replace_editor"),
                     ("edit", "str_replace_editor"),  # an action with no row: as before
                     ("edit", "str_replace_editor")]  # invalid arguments: no action


def test_tools_usage_counts_reads_and_writes_apart(store):
    _session(store, "oh", "openhands", "file_editor")  # (scoped to OpenHands: edit)
    _session(store, "goose", "goose", "developer__text_editor")

    usage = {u.name: (u.calls, u.raw_names, u.sessions) for u in tool_usage(store)}

    assert usage["read"] == (2, ("developer__text_editor", "file_editor"), 2)
    assert usage["write"] == (2, ("developer__text_editor", "file_editor"), 2)
    assert usage["edit"] == (6, ("developer__text_editor", "file_editor"), 2)


def test_calls_search_by_tool_finds_the_action_not_the_raw_name(store):
    _session(store, "oh", "openhands", "str_replace_editor")
    _session(store, "cp", "copilot-cli", "str_replace_editor")

    def ids(**query: object) -> list[str]:
        return sorted(m.call_id for m in search_calls(store, CallQuery(**query)))

    assert ids(tool="read") == ["cp-v", "oh-v"]
    assert ids(tool="write") == ["cp-c", "oh-c"]
    assert ids(tool="edit") == ["cp-e", "cp-i", "cp-u", "oh-e", "oh-i", "oh-u"]
    assert ids(tool="read", session_id="oh") == ["oh-v"]
    assert ids(tool="edit", session_id="oh") == ["oh-e", "oh-i", "oh-u"]
    assert [m.name for m in search_calls(store, CallQuery(tool="read"))] == ["read", "read"]


def test_a_users_row_for_an_action_wins(store):
    _session(store, "oh", "openhands", "str_replace_editor")
    store.add_alias("str_replace_editor#view", "inspect")

    names = [c.call.name for c in store.load("oh").calls()]

    assert names[0] == "inspect"
    assert [m.call_id for m in search_calls(store, CallQuery(tool="inspect"))] == ["oh-v"]
