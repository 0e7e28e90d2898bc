"""import_paths on both backends: the recorded corpus and small fixtures of every format."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pytest

from store import Message, TextPart, ToolResult
from store.importers import parallel as reading
from store.importers.formats import decode_codex_output, path_session_id
from store.importers.walk import ImportProgress, import_paths

NEVER = math.inf


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The corpus folder: env ``TRANSCRIPT_CORPUS``, else ``<repo>/../shared/corpus``; a
    missing corpus fails under CI (env ``CI``) and skips elsewhere."""
    configured = os.environ.get("TRANSCRIPT_CORPUS")
    path = Path(configured) if configured else Path(__file__).resolve().parents[3] / \
        "shared" / "corpus"
    if not (path / "claude_code").is_dir() or not (path / "codex").is_dir():
        message = f"transcript corpus not found at {path} (set TRANSCRIPT_CORPUS)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                            for r in records), encoding="utf-8")
    return path


def append_jsonl(path: Path, records) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in records)


def check_pairing(transcript):
    """Every result links to the call with its id; returns the calls without a result."""
    by_position = {m.position: m.message for m in transcript.messages}
    for (rpos, ridx), (cpos, cidx) in transcript.links.items():
        result = by_position[rpos].tool_results[ridx]
        call = by_position[cpos].tool_calls[cidx]
        assert result.call_id is None or result.call_id == call.id
    return [c for c in transcript.calls() if c.result is None]


# -- the corpus ----------------------------------------------------------------------------------


@pytest.mark.corpus
def test_corpus_claude_code_and_codex(store, corpus, tmp_path):
    folder = tmp_path / "corpus"
    shutil.copytree(corpus / "claude_code", folder / "claude_code")
    shutil.copytree(corpus / "codex", folder / "codex")
    seen: list[ImportProgress] = []
    summary = import_paths(store, [folder], progress=seen.append)
    assert summary.files == 4 and summary.failed_files == [] and summary.problems == []
    assert summary.deferred == []
    assert summary.sessions == 6 and summary.sessions_created == 6
    assert summary.messages_added == 86 and summary.messages_already_stored == 0
    assert (summary.calls, summary.invalid_calls) == (41, 0)
    assert summary.skipped["codex: event_msg"] == 19
    assert summary.skipped["claude-code: summary line"] == 1
    assert summary.skipped_lines == 28
    assert [p.files_done for p in seen] == [0, 1, 2, 3, 4]
    assert seen[-1].current is None and seen[-1].bytes_done == seen[-1].bytes_total

    # five parallel calls on split lines: one message; results out of order, all paired
    split = store.load("1af7fc5e-8455-4414-9ccd-011d40f70b2a")
    turn = next(m for m in split.messages if m.key == "msg_018mu4atNCkxSiLt7VVQquTL")
    assert len(turn.message.tool_calls) == 5
    assert check_pairing(split) == []
    assert len(split.links) == 12

    # results that arrive after a sub-agent's sidechain lines still pair; the sidechain is
    # its own session
    head = store.load("5c0375b4-57a5-4f26-b12d-d022ee4e51b7")
    assert check_pairing(head) == []
    side = store.load("5c0375b4-57a5-4f26-b12d-d022ee4e51b7:sidechain")
    assert len(side) == 6 and check_pairing(side) == []
    assert side.session.metadata["parent_session"] == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    # the excerpt ends before two Task results: those calls stay without one
    task = store.load("fe5e1c67-53e7-4862-81ae-d0e013e3270b")
    assert [c.call.name for c in check_pairing(task)] == ["task", "task"]  # aliased
    assert [c.call.raw_name for c in check_pairing(task)] == ["Task", "Task"]
    assert task.session.title == "Empty Repo Setup: CLAUDE.md Foundation Created"

    codex = store.load("019a93b9-f380-7600-98ff-940e6b99603c")
    assert codex.session.model == "gpt-5.1-codex" and codex.session.cwd.endswith("chatbot-ui")
    assert codex.session.metadata["cli_version"] == "0.58.0"
    calls = list(codex.calls())
    assert len(calls) == 6 and all(c.result is not None for c in calls)
    output = calls[0].result.content
    assert output.startswith('{"output":"LM Studio configuration.md\\n')  # verbatim
    assert decode_codex_output(output).startswith("LM Studio configuration.md\n")

    again = import_paths(store, [folder])  # unchanged files are not even read
    assert (again.messages_added, again.messages_already_stored, again.files) == (0, 0, 0)
    assert again.unchanged == summary.files
    assert again.sessions_created == 0


# -- fixtures of every other format --------------------------------------------------------------


def fixtures(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    chat = folder / "chat.json"
    chat.write_text(json.dumps([
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]), encoding="utf-8")
    chat_lines = write_jsonl(folder / "chat-lines.jsonl", [
        {"role": "user", "content": "ls"},
        {"role": "assistant", "tool_calls": [{"id": "c2", "type": "function", "function": {
            "name": "run_shell_command", "arguments": '{"command": "ls"}'}}]},
        "{this is not json",
        {"role": "tool", "tool_call_id": "c2", "content": "a.txt"}])
    responses = folder / "responses.json"
    responses.write_text(json.dumps({"input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "call_id": "r1", "name": "grep", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "r1", "output": "none"}]}),
        encoding="utf-8")
    anthropic = folder / "anthropic.json"
    anthropic.write_text(json.dumps({"system": "be brief", "messages": [
        {"role": "user", "content": "look up a"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {"q": "a"}},
            {"type": "tool_use", "id": "toolu_b", "name": "lookup", "input": {"q": "b"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "B"},
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"}]}]}),
        encoding="utf-8")
    gemini = folder / "chats" / "session-1.json"
    gemini.parent.mkdir()
    gemini.write_text(json.dumps({"sessionId": "gem-1", "projectHash": "h", "messages": [
        {"id": "g1", "type": "user", "content": "read it"},
        {"id": "g2", "type": "gemini", "content": "", "toolCalls": [
            {"id": "read_file-1", "name": "read_file", "args": {"path": "x"}, "status": "error",
             "result": [{"functionResponse": {"id": "read_file-1", "name": "read_file",
                                              "response": {"error": "no such file"}}}]}]},
        {"id": "g3", "type": "gemini", "content": "It does not exist."}]}), encoding="utf-8")
    kward = write_jsonl(folder / "kward.jsonl", [
        {"type": "session", "version": 2, "id": "kw-1", "cwd": "/d", "provider": "openai",
         "model": "gpt-4o"},
        {":type": "message", ":id": "m1", ":message": {":role": "user", ":content": "test"}},
        {":type": "message", ":id": "m2", ":message": {":role": "assistant", ":tool_calls": [
            {":id": "call_k", ":function": {":name": "run_shell_command",
                                            ":arguments": {":command": "pytest"}}}]}},
        {"type": "tool_execution_end", "id": "m3", "toolCallId": "call_k", "toolName": "bash",
         "result": "ok", "isError": False},
        {"type": "leaf", "id": "l1", "targetId": "m3"}])
    return {"chat": chat, "chat_lines": chat_lines, "responses": responses,
            "anthropic": anthropic, "gemini": gemini, "kward": kward}


def test_every_other_format(store, tmp_path):
    paths = fixtures(tmp_path / "in")
    summary = import_paths(store, [tmp_path / "in"], settle=0)
    assert summary.files == 6 and summary.failed_files == [] and summary.deferred == []
    assert [(p.path, p.line) for p in summary.problems] == [(paths["chat_lines"], 3)]
    assert str(summary.problems[0]).startswith(f"{paths['chat_lines']}:3: not JSON")
    assert summary.sessions == 6
    assert summary.messages_added == 3 + 3 + 3 + 4 + 4 + 3
    assert (summary.calls, summary.invalid_calls) == (7, 1)
    assert summary.skipped == {"kward: session header": 1, "kward: leaf record": 1}

    for name in ("chat", "chat_lines", "responses", "anthropic"):
        transcript = store.load(path_session_id(paths[name]))
        assert check_pairing(transcript) == [], name
    anthropic = store.load(path_session_id(paths["anthropic"]))
    assert [m.message.role for m in anthropic] == ["system", "user", "assistant", "user"]
    assert [(c.call.id, c.result.content) for c in anthropic.calls()] == [("toolu_a", "A"),
                                                                        ("toolu_b", "B")]
    gemini = store.load("gem-1")
    (call,) = gemini.calls()
    assert call.result.is_error and call.result.content == {"error": "no such file"}
    kward = store.load("kw-1")
    assert (kward.session.provider, kward.session.model) == ("openai", "gpt-4o")
    (call,) = kward.calls()
    assert call.call.input == {"command": "pytest"} and call.result.content == "ok"
    assert [m.key for m in kward] == ["m1", "m2", "m3"]

    again = import_paths(store, [tmp_path / "in"], settle=0)  # unchanged: not read again
    assert (again.messages_added, again.files, again.unchanged) == (0, 0, 6)


# -- growth --------------------------------------------------------------------------------------


def cc(uuid, parent, message, kind="user", **extra):
    return {"parentUuid": parent, "isSidechain": False, "sessionId": "grow-1", "cwd": "/w",
            "type": kind, "message": message, "uuid": uuid, **extra}


def cc_call(uuid, parent, index):
    return cc(uuid, parent, {"id": "msg_G", "role": "assistant", "model": "claude-x",
                             "content": [{"type": "tool_use", "id": f"toolu_{index}",
                                          "name": "Read", "input": {"n": index}}],
                             "stop_reason": None}, kind="assistant", requestId="req_G")


def test_a_file_that_grows_adds_only_its_new_part(store, tmp_path):
    prompt = cc("u1", None, {"role": "user", "content": "read five"})
    split = [cc_call(f"a{i}", f"a{i - 1}" if i else "u1", i) for i in range(5)]
    path = write_jsonl(tmp_path / "grow.jsonl", [prompt, *split[:3]])  # mid-turn
    first = import_paths(store, [path], settle=NEVER)
    assert first.messages_added == 1 and [d.line for d in first.deferred] == [2, 3, 4]
    assert "held back" in str(first.deferred[0])

    append_jsonl(path, split[3:])
    results = [cc(f"r{i}", f"a{4 - i}", {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"toolu_{4 - i}", "content": str(4 - i)}]})
        for i in range(5)]  # in reverse order
    append_jsonl(path, results)
    second = import_paths(store, [path], settle=NEVER)
    # read from the held-back turn on: the prompt is not read again
    assert (second.messages_added, second.messages_already_stored) == (6, 0)
    assert (second.calls, second.deferred) == (5, [])
    transcript = store.load("grow-1")
    assert [m.key for m in transcript] == ["u1", "msg_G", "r0", "r1", "r2", "r3", "r4"]
    assert check_pairing(transcript) == []
    assert [(c.call.id, c.result.content) for c in transcript.calls()] == [
        (f"toolu_{i}", str(i)) for i in range(5)]

    third = import_paths(store, [path], settle=NEVER)
    assert (third.messages_added, third.files, third.unchanged) == (0, 0, 1)


def test_a_growing_codex_rollout(store, tmp_path):
    def line(kind, payload):
        return {"timestamp": "2025-11-17T21:30:28Z", "type": kind, "payload": payload}

    head = [line("session_meta", {"id": "cx-1", "cwd": "/r", "model_provider": "openai"}),
            line("response_item", {"type": "function_call", "name": "shell",
                                   "arguments": "{}", "call_id": "call_x"})]
    path = write_jsonl(tmp_path / "rollout.jsonl", head)
    assert import_paths(store, [path]).messages_added == 1
    output = json.dumps({"output": "done", "metadata": {"exit_code": 0}})
    append_jsonl(path, [line("event_msg", {"type": "token_count"}),
                        line("response_item", {"type": "function_call_output",
                                               "call_id": "call_x", "output": output})])
    grown = import_paths(store, [path])  # read from where the last read stopped
    assert (grown.messages_added, grown.messages_already_stored) == (1, 0)
    (call,) = store.load("cx-1").calls()
    assert isinstance(call.result, ToolResult) and call.result.content == output


# -- bad input -----------------------------------------------------------------------------------


def test_an_unreadable_file_fails_alone(store, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    good = write_jsonl(folder / "good.jsonl", [{"role": "user", "content": "hi"}])
    bad = folder / "bad.jsonl"
    bad.write_bytes(b'{"role": "user", "content": "caf\xe9"}\n')
    (folder / "notes.txt").write_text("not imported", encoding="utf-8")
    (folder / ".hidden").mkdir()
    write_jsonl(folder / ".hidden" / "skipped.jsonl", [{"role": "user", "content": "no"}])
    outside = write_jsonl(tmp_path / "outside.jsonl", [{"role": "user", "content": "no"}])
    (folder / "link.jsonl").symlink_to(outside)
    (folder / "inner.jsonl").symlink_to(good)
    os.mkfifo(folder / "pipe.jsonl")
    summary = import_paths(store, [folder, tmp_path / "missing.json"])
    assert summary.files == 1 and summary.messages_added == 1
    failed = {f.path.name: f.error for f in summary.failed_files}
    assert set(failed) == {"bad.jsonl", "link.jsonl", "pipe.jsonl", "missing.json"}
    assert "not UTF-8" in failed["bad.jsonl"]
    assert "outside" in failed["link.jsonl"] and "not followed" in failed["link.jsonl"]
    assert "not a regular file" in failed["pipe.jsonl"]
    assert store.load(path_session_id(good)).messages[0].message.text == "hi"


def test_a_session_or_message_the_store_refuses_is_reported_and_the_rest_stored(
        store, tmp_path, monkeypatch):
    long_id = write_jsonl(tmp_path / "long.jsonl", [
        {"type": "session", "version": 2, "id": "k" * 600},
        {"type": "message", "id": "m1", "message": {"role": "user", "content": "hi"}}])
    summary = import_paths(store, [long_id])
    assert summary.messages_added == 0 and summary.files == 1
    (problem,) = summary.problems
    assert problem.path == long_id and "at most 512 characters" in problem.message

    # the store refuses one message (a lone surrogate cannot be stored exactly): only it is
    # reported, with its line; the others are stored
    path = write_jsonl(tmp_path / "chat.jsonl", [{"role": "user", "content": c}
                                                 for c in ("one", "two", "three")])
    real = reading.read_changes

    def poisoned(file, state, **options):
        read = real(file, state, **options)
        session = read.parsed.sessions[0]
        session.items[1] = Message("user", (TextPart("bad \ud800"),))
        return read

    monkeypatch.setattr(reading, "read_changes", poisoned)
    summary = import_paths(store, [path])
    assert summary.messages_added == 2
    assert [(p.path, p.line) for p in summary.problems] == [(path, 2)]
    assert "lone surrogate" in summary.problems[0].message


# -- issue 23: one bad entry never gives up on the folder or the file ------------------------------


def test_a_symbolic_link_loop_is_a_failed_entry_and_the_folder_is_imported(store, tmp_path):
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    good = write_jsonl(folder / "good.jsonl", [{"role": "user", "content": "hi"}])
    deeper = write_jsonl(folder / "sub" / "deeper.jsonl", [{"role": "user", "content": "yo"}])
    (folder / "a.jsonl").symlink_to(folder / "b.jsonl")
    (folder / "b.jsonl").symlink_to(folder / "a.jsonl")
    (folder / "sub" / "up").symlink_to("..")  # a directory link back into the root
    (folder / "sub" / "out").symlink_to("../..")  # and one out of it
    (folder / "self.jsonl").symlink_to("self.jsonl")
    summary = import_paths(store, [folder])
    assert summary.files == 2 and summary.messages_added == 2
    failed = {f.path.name: f.error for f in summary.failed_files}
    assert set(failed) == {"a.jsonl", "b.jsonl", "self.jsonl", "out"}
    assert all("symbolic link loop" in failed[n] for n in ("a.jsonl", "b.jsonl", "self.jsonl"))
    assert "outside" in failed["out"]
    assert store.load(path_session_id(good)).messages[0].message.text == "hi"
    assert store.load(path_session_id(deeper)).messages[0].message.text == "yo"
    # given explicitly, a loop is a failed entry too
    again = import_paths(store, [folder / "a.jsonl", good])
    assert [f.path.name for f in again.failed_files] == ["a.jsonl"]
    assert again.unchanged == 1  # the good file, read already and unchanged: not read again


def test_a_line_that_is_not_utf8_is_reported_with_its_offset_and_the_rest_imported(
        store, tmp_path):
    path = tmp_path / "session.jsonl"
    lines = [b'{"role": "user", "content": "one"}',
             b'{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", '
             b'"function": {"name": "f", "arguments": "{}"}}]}',
             b'{"role": "tool", "tool_call_id": "c1", "content": "bad \xff byte"}',
             b'{"role": "user", "content": "caf\xc3\xa9 four"}',
             b'{"role": "user", "content": "\xe9 five"}',
             b'{"role": "user", "content": "six"}']
    data = b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n"
    path.write_bytes(data)
    summary = import_paths(store, [path])
    assert summary.failed_files == [] and summary.messages_added == 4
    first, second = data.index(b"\xff"), data.index(b"\xe9 five")
    assert [(p.line, p.message) for p in summary.problems] == [
        (3, f"not UTF-8 text (bad byte at offset {first}): line not imported"),
        (5, f"not UTF-8 text (bad byte at offset {second}): line not imported")]
    texts = [m.message.text for m in store.load(path_session_id(path)).messages]
    assert texts == ["one", "", "café four", "six"]  # nothing repaired or fabricated
    # importing it again stores nothing twice; the unchanged file is not read again, so its
    # bad lines were reported once and are remembered (issue 24: no exit 1 forever)
    again = import_paths(store, [path])
    assert again.messages_added == 0 and again.unchanged == 1 and again.problems == []


def test_a_json_document_that_is_not_utf8_is_still_refused_whole(store, tmp_path):
    path = tmp_path / "doc.json"
    data = b'[\n {"role": "user", "content": "a"},\n {"role": "user", "content": "\xff"}\n]\n'
    path.write_bytes(data)
    summary = import_paths(store, [path])
    offset = data.index(b"\xff")
    assert [f.error for f in summary.failed_files] == [
        f"not UTF-8 text (bad byte at offset {offset})"]
    assert summary.messages_added == 0


def test_a_new_session_is_created_by_its_first_append_with_its_metadata(store, tmp_path):
    """A session the store does not hold yet is created in its first append's transaction,
    with everything create_session would have given it (title, folder, agent, the reader's
    metadata, the parent link); importing again finds it and stores nothing twice; a session
    of which nothing can be stored leaves nothing behind and is not counted."""
    from store import read_sessions

    folder = tmp_path / "home"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "agents" / "copilot",
                    folder)
    events = next(folder.rglob("events.jsonl"))
    parsed = {s.session_id: s for s in read_sessions(events, settle=0).sessions}
    assert any(s.metadata for s in parsed.values()) and any(s.parent for s in parsed.values())

    summary = import_paths(store, [events], settle=0)
    assert summary.sessions == summary.sessions_created == len(parsed)
    for sid, session in parsed.items():
        info = store.get_session(sid)
        assert dict(info.metadata) == session.metadata, sid
        assert (info.title, info.cwd, info.agent) == (session.title, session.cwd,
                                                      session.agent), sid
        assert info.parent == session.parent, sid

    again = import_paths(store, [events], settle=0, reread=True)
    assert again.sessions_created == 0 and again.messages_added == 0

    # a new session whose every message the store refuses: no session, not counted
    bad = write_jsonl(tmp_path / "bad.jsonl", [
        {"role": "user", "content": "x" * 2000, "session_id": "refused"}])
    store._limits = type(store._limits)(store._limits.max_argument_bytes, 100)
    refused = import_paths(store, [bad], format="openai-chat", settle=0)
    assert refused.sessions == refused.sessions_created == 0 and refused.problems
    assert "bad" not in {s.session_id for s in store.list_sessions(limit=0)}
