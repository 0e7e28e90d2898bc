"""Mistral Vibe's session folders beyond the fixture case (tests/agent_files/mistral-vibe):
forks, a folder without its metadata, a broken metadata file, a 1.x document read by a forced
format, a compacted session whose parent is not there, a role nobody has seen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store.importers.formats import claims, read_sessions
from store.usage.tokens import SESSION_TOTALS

PARENT = "0a1b2c3d-1111-4222-8333-444455556666"


def session_folder(root: Path, sid: str, lines: list[dict[str, Any]],
                   meta: dict[str, Any] | str | None) -> Path:
    folder = root / f"session_20260701_120000_{sid[:8]}"
    folder.mkdir(parents=True)
    messages = folder / "messages.jsonl"
    messages.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    if meta is not None:
        text = meta if isinstance(meta, str) else json.dumps(meta, indent=2)
        (folder / "meta.json").write_text(text, encoding="utf-8")
    return messages


def meta_of(sid: str, prompt: int, completion: int, parent: str | None = None) -> dict[str, Any]:
    return {"session_id": sid, "parent_session_id": parent,
            "start_time": "2026-07-01T12:00:00+00:00", "end_time": "2026-07-01T12:05:00+00:00",
            "environment": {"working_directory": "/w"}, "title": "Rename the flag",
            "stats": {"session_prompt_tokens": prompt, "session_completion_tokens": completion},
            "config": {"active_model": "local", "models": [
                {"name": "devstral", "provider": "llamacpp", "alias": "local"}]}}


LINES = [{"role": "user", "content": "Rename the flag", "injected": False, "message_id": "u1"},
         {"role": "assistant", "content": "Done.", "injected": False, "message_id": "a1"}]


def test_a_child_without_the_compaction_context_is_a_fork_with_its_own_totals(
        tmp_path: Path) -> None:
    session_folder(tmp_path, PARENT, LINES, meta_of(PARENT, 900, 90))
    child = "9f8e7d6c-aaaa-4bbb-8ccc-444455556666"
    file = session_folder(tmp_path, child, LINES, meta_of(child, 1000, 100, PARENT))
    (session,) = read_sessions(file, settle=0).sessions
    assert session.parent is not None
    assert (session.parent.parent_session_id, session.parent.kind) == (PARENT, "fork")
    (usage,) = session.usage.values()
    assert (usage.input_tokens, usage.output_tokens, usage.response_id) == (
        1000, 100, SESSION_TOTALS)
    assert (session.model, session.provider) == ("devstral", "llamacpp")


def test_a_compacted_session_whose_parent_is_gone_keeps_its_recorded_totals(
        tmp_path: Path) -> None:
    compaction = ("You are continuing a trajectory after a context compaction.\n\n"
                  "<previous_user_messages>\n</previous_user_messages>\n"
                  "<compaction_summary>\nRenamed.\n</compaction_summary>")
    child = "9f8e7d6c-aaaa-4bbb-8ccc-444455556666"
    file = session_folder(tmp_path, child, [
        {"role": "user", "content": compaction, "injected": True, "message_id": "c1"}, *LINES],
        {**meta_of(child, 1000, 100, PARENT), "title": compaction[:50] + "…"})
    (session,) = read_sessions(file, settle=0).sessions
    assert session.parent is not None and session.parent.kind == "continuation"
    (usage,) = session.usage.values()
    assert (usage.input_tokens, usage.output_tokens) == (1000, 100)
    assert session.title == "Rename the flag"  # (not the compaction context Vibe titled it by)


def test_a_folder_without_its_metadata_is_read_by_its_messages(tmp_path: Path) -> None:
    file = session_folder(tmp_path, PARENT, LINES, None)
    assert claims(file, [json.loads(line) for line in file.read_text().splitlines()])[0] \
        .format == "mistral-vibe"
    parsed = read_sessions(file, settle=0)
    (session,) = parsed.sessions
    assert [m.role for m in session.items] == ["user", "assistant"]
    assert session.usage == {} and session.started_at is None
    assert parsed.problems == []


def test_a_broken_metadata_file_is_a_problem_and_the_messages_are_kept(tmp_path: Path) -> None:
    file = session_folder(tmp_path, PARENT, LINES, '{"session_id": ')
    parsed = read_sessions(file, settle=0)
    assert [m.role for s in parsed.sessions for m in s.items] == ["user", "assistant"]
    assert len(parsed.problems) == 1 and "meta.json: not JSON" in parsed.problems[0].message


def test_a_role_nobody_has_seen_is_a_problem_and_an_unknown_kind(tmp_path: Path) -> None:
    file = session_folder(tmp_path, PARENT, [*LINES, {"role": "developer", "content": "x"}],
                          meta_of(PARENT, 1, 1))
    parsed = read_sessions(file, settle=0)
    assert [p.message for p in parsed.problems] == [
        "not a Mistral Vibe message: role 'developer'"]
    assert parsed.unknown_kinds == {"developer": 1}


def test_a_forced_format_reads_a_1x_document(tmp_path: Path) -> None:
    file = tmp_path / "session_20251201_090000_0a1b2c3d.json"
    file.write_text(json.dumps({
        "metadata": {"session_id": PARENT, "start_time": "2025-12-01T09:00:00",
                     "end_time": "2025-12-01T09:02:00", "environment": {
                         "working_directory": "/w"}, "stats": {}},
        "messages": [{"role": "system", "content": "You are Vibe."}, *LINES]}, indent=2),
        encoding="utf-8")
    (session,) = read_sessions(file, "mistral-vibe", settle=0).sessions
    assert [m.role for m in session.items] == ["system", "user", "assistant"]
    assert session.title == "Rename the flag" and session.cwd == "/w"
