"""Cline / Roo Code / OpenHands readers without a database: detection, tool calls written
as XML, titles, and the frozen vocabulary copies of the migrations."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from store.core.model import Message, TextPart
from store.importers.formats import read_sessions
from store.importers.titles import prompt_title
from store.tools.vocabulary import VOCABULARY

MIGRATIONS = Path(__file__).parent.parent.parent / "migrations" / "versions"


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


def test_a_task_history_is_told_by_its_name_and_folder(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "<task>\nhello\n</task>"}]
    cline = write(tmp_path / "tasks" / "1" / "api_conversation_history.json", history)
    roo = write(tmp_path / "rooveterinaryinc.roo-cline" / "tasks" / "2" /
                "api_conversation_history.json", history)
    plain = write(tmp_path / "messages.json", history)

    assert read_sessions(cline).format == "cline"
    assert read_sessions(roo).format == "roo-code"
    assert read_sessions(plain).format == "openai-chat"
    assert read_sessions(cline).sessions[0].title == "hello"


def test_an_sdk_messages_file_is_not_taken_for_a_gemini_chat(tmp_path: Path) -> None:
    path = write(tmp_path / "s1" / "s1.messages.json", {
        "version": 1, "sessionId": "s1", "agent": "lead",
        "messages": [{"id": "a", "role": "user", "content": [{"type": "text", "text": "hi"}]}]})

    parsed = read_sessions(path)

    assert parsed.format == "cline" and parsed.sessions[0].session_id == "s1"


def test_xml_calls_a_partial_tag_and_a_call_not_executed(tmp_path: Path) -> None:
    path = write(tmp_path / "tasks" / "7" / "api_conversation_history.json", [
        {"role": "user", "content": "<task>go</task>"},
        {"role": "assistant", "content": [{"type": "text", "text":
            "<write_to_file>\n<path>a.md</path>\n<content>\n<b>x</b>\n</content>\n"
            "</write_to_file>\n<list_files>\n<path>.</path>\n</list_files>"}]},
        {"role": "user", "content": [
            {"type": "text", "text": "[write_to_file for 'a.md'] Result:"},
            {"type": "text", "text": "The user denied this operation."},
            {"type": "text", "text": "Tool [list_files] was not executed because a tool has "
                                     "already been used in this message."}]},
        {"role": "assistant", "content": [{"type": "text", "text":
            "<read_file>\n<path>b.md</path>\n"}]},  # left open at the end: Cline runs it
        {"role": "user", "content": [{"type": "text", "text": "[read_file for 'b.md'] Result:"},
                                     {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": [{"type": "text", "text":
            "<read_file>\n<path>c.md</path>\n\n[Response interrupted by user]"}]},
    ])

    items = read_sessions(path).sessions[0].items
    write_call, list_call = items[1].tool_calls
    denied, skipped = items[2].tool_results

    assert write_call.input == {"path": "a.md", "content": "<b>x</b>"}
    assert list_call.input == {"path": "."}
    assert (denied.call_id, denied.is_error) == (write_call.id, True)
    assert (skipped.call_id, skipped.is_error) == (list_call.id, True)
    (open_call,) = items[3].tool_calls  # parseAssistantMessageV2 keeps it, then runs it
    assert open_call.input == {"path": "b.md"} and open_call.extras["unclosed"] is True
    assert items[4].tool_results[0].call_id == open_call.id
    assert items[5].tool_calls == ()  # an interrupted response's tag is no call


def test_titles_unwrap_cline_and_roo_prompts() -> None:
    for text in ("<task>\nFix it\n</task>\n<environment_details>x</environment_details>",
                 "<user_message>\nFix it\n</user_message>"):
        assert prompt_title([Message("user", (TextPart(text),))]) == "Fix it"


def _frozen(path: Path) -> list[tuple[str | None, str, str]]:
    source = path.read_text(encoding="utf-8")
    start = source.index("_VOCABULARY: list")
    namespace: dict[str, Any] = {}
    exec(source[start:source.index("]\n", start) + 2], namespace)  # noqa: S102
    return list(namespace["_VOCABULARY"])


def test_the_migrations_frozen_rows_are_the_vocabulary() -> None:
    """Revision 0006's frozen rows and those of every later vocabulary revision (0012 ...)
    are the vocabulary, each row once."""
    later = sorted(p for p in MIGRATIONS.glob("2026_12_02_*_vocabulary.py"))
    assert MIGRATIONS / "2026_12_02_0014_agents_vscode_vocabulary.py" in later
    rows = [row for path in [MIGRATIONS / "2026_12_01_0006_agent_vocabulary.py", *later]
            for row in _frozen(path)]

    assert len(rows) == len(set(rows)) and set(rows) == set(VOCABULARY)


def test_bad_events_and_messages_are_problems_and_the_rest_is_read(tmp_path: Path) -> None:
    conversation = tmp_path / "conversations" / "abc"
    write(conversation / "base_state.json", {"id": "abc", "agent": {"llm": {"model": "m"}},
                                             "workspace": {"working_dir": "/w"}})
    (conversation / "events").mkdir()
    (conversation / "events" / "event-00000-aaaaaaaa.json").write_text("{not json")
    write(conversation / "events" / "event-00001-bbbbbbbb.json", {
        "kind": "MessageEvent", "id": "bbbbbbbb", "timestamp": "2025-09-15T10:00:00",
        "source": "user", "llm_message": {"role": "user", "content": [
            {"type": "text", "text": "hello"}]}})
    history = write(tmp_path / "tasks" / "9" / "api_conversation_history.json",
                    ["not a message", {"role": "user", "content": "<task>hi</task>"}])

    parsed = read_sessions(conversation / "base_state.json")
    task = read_sessions(history)

    [problem] = parsed.problems
    assert str(problem).startswith(f"{conversation / 'base_state.json'}: item 0: event "
                                   "event-00000-aaaaaaaa.json: not JSON: ")
    assert [m.text for m in parsed.sessions[0].items] == ["hello"]
    assert [p.item for p in task.problems] == [0] and len(task.sessions[0].items) == 1


def test_a_last_event_cut_short_waits_while_the_conversation_is_written(tmp_path: Path) -> None:
    conversation = tmp_path / "sessions" / "s0"
    write(conversation / "metadata.json", {"conversation_id": "s0", "title": "t"})
    write(conversation / "events" / "0.json", {"id": 0, "source": "user", "action": "message",
                                                "args": {"content": "hi"}})
    (conversation / "events" / "1.json").write_text('{"id": 1, "source": "ag')
    (conversation / "metadata.json").touch()  # being written now

    young = read_sessions(conversation / "metadata.json", settle=300)
    settled = read_sessions(conversation / "metadata.json", settle=0)

    assert young.problems == [] and [d.item for d in young.deferred] == [1]
    assert [p.item for p in settled.problems] == [1] and settled.deferred == []
    assert [m.text for m in young.sessions[0].items] == ["hi"]
