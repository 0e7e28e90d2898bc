"""``store.sessions_touching`` (the persistence behind the ``sessions_touching_file`` tool), on
both backends, and docs/mcp.md naming every tool the server has."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

import store

ROOT = Path(__file__).resolve().parents[2]


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def _session(opened: store.TranscriptStore, sid: str, agent: str, calls: list[dict],
             results: list[str], cwd: str = "/home/u/proj") -> None:
    records: list[dict] = [{"role": "user", "content": "go"},
                           {"role": "assistant", "content": None, "tool_calls": calls}]
    records += [{"role": "tool", "tool_call_id": c["id"], "content": r}
                for c, r in zip(calls, results, strict=True)]
    opened.append(sid, records, agent=agent, cwd=cwd)


@pytest.fixture
def touched(store: store.TranscriptStore) -> store.TranscriptStore:
    _session(store, "reads-it", "claude-code",
             [_call("a", "Read", {"file_path": "/home/u/proj/src/app.py"})], ["print('hi')"])
    _session(store, "greps-it", "codex",
             [_call("b", "shell", {"command": ["bash", "-lc", "grep -rn main src"]})],
             ["src/app.py:1:def main():"])
    _session(store, "edits-twice", "claude-code",
             [_call("c", "Edit", {"file_path": "/home/u/proj/src/app.py", "old_string": "a",
                                  "new_string": "b"}),
              _call("d", "Write", {"file_path": "/home/u/proj/src/app.py", "content": "x"})],
             ["ok", "ok"])
    _session(store, "elsewhere", "claude-code",
             [_call("e", "Read", {"file_path": "/home/u/proj/src/other.py"})], ["..."])
    store.update_search_index()
    return store


def test_sessions_by_the_path_argument_and_by_mentions(touched):
    found, complete = store.sessions_touching(touched, "src/app.py")
    assert complete
    by_id = {t.session_id: t for t in found}
    assert set(by_id) == {"reads-it", "greps-it", "edits-twice"}
    assert by_id["reads-it"].via == {"path", "mention"}
    assert by_id["greps-it"].via == {"mention"}  # only its result names the file
    assert by_id["edits-twice"].calls == 2
    assert by_id["edits-twice"].tools == {"edit": 1, "write": 1}
    assert by_id["reads-it"].tools == {"read": 1}
    assert by_id["greps-it"].agent == "codex"
    assert all(t.first_at is not None and t.first_at <= t.last_at for t in found)
    lasts = [t.last_at for t in found]
    assert lasts == sorted(lasts, reverse=True)


def test_without_mentions_only_the_path_argument_counts(touched):
    found, _ = store.sessions_touching(touched, "src/app.py", mentions=False)
    assert {t.session_id for t in found} == {"reads-it", "edits-twice"}


def test_filters_and_paging(touched):
    codex, _ = store.sessions_touching(touched, "app.py", agent="codex")
    assert [t.session_id for t in codex] == ["greps-it"]
    assert store.sessions_touching(touched, "app.py", cwd="/elsewhere")[0] == []
    future = datetime(2999, 1, 1, tzinfo=UTC)
    assert store.sessions_touching(touched, "app.py", since=future)[0] == []
    first, _ = store.sessions_touching(touched, "app.py", limit=2)
    rest, _ = store.sessions_touching(touched, "app.py", limit=2, offset=2)
    assert len(first) == 2 and len(rest) == 1
    assert {t.session_id for t in first}.isdisjoint(t.session_id for t in rest)


def test_bad_inputs(touched):
    with pytest.raises(store.UsageError, match="a file path is needed"):
        store.sessions_touching(touched, "  ")
    with pytest.raises(store.UsageError, match="must not be negative"):
        store.sessions_touching(touched, "app.py", limit=-1)


def test_a_read_only_store_answers_the_same_without_writing(touched, store_url):
    expected = {t.session_id for t in store.sessions_touching(touched, "src/app.py")[0]}
    _session(touched, "late", "claude-code",
             [_call("f", "Read", {"file_path": "/home/u/proj/src/app.py"})], ["..."])
    with store.TranscriptStore.open(store_url, read_only=True) as reader:
        found = {t.session_id for t in store.sessions_touching(reader, "src/app.py")[0]}
    assert found == expected | {"late"}  # not indexed yet: scanned, not indexed


def test_the_docs_name_every_tool_and_prompt():
    pytest.importorskip("mcp.server.mcpserver")
    from store.mcp.archive import Archive
    from store.mcp.registry import tools_of
    from store.mcp.shapes import Shaper

    page = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    names = [name for name, _, _ in tools_of(Archive(None, Shaper(None)))]  # type: ignore[arg-type]
    assert len(names) == 9
    for name in names:
        assert f"| `{name}` |" in page, name
    for prompt in ("what_did_we_try", "sessions_touching_file", "failed_commands"):
        assert f"`{prompt}(" in page
