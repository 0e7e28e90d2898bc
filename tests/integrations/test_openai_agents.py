"""``TranscriptStoreSession`` with the real openai-agents package, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, SQLiteSession, function_tool
from agents.memory import Session, SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call
from agents_scenario import run_turns

from store import SessionNotFound, TranscriptStore
from store.integrations import MissingExtra
from store.integrations.openai_agents import TranscriptStoreSession, safe_start

SCENARIO = Path(__file__).with_name("agents_scenario.py")


def as_json(value: Any) -> str:
    """Equality as JSON: key order aside, ``true`` is not ``1``."""
    return json.dumps(value, sort_keys=True)


def run_elsewhere(kind: str, where: str, session_id: str, *turns: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(SCENARIO), kind, where, session_id, *map(str, turns)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same conversation through the SDK's own SQLiteSession: two turns, then the third
    through a new session object on the same file."""
    path = str(tmp_path_factory.mktemp("sdk") / "sdk.sqlite")
    out = {}
    for name, turns in (("first", [1, 2]), ("resumed", [3])):
        session = SQLiteSession("conversation", path)
        try:
            out[name] = asyncio.run(run_turns(session, turns))
        finally:
            session.close()
    return out


def test_a_runner_resumes_in_another_process_as_with_the_sdks_own_store(store_url, reference):
    session = TranscriptStoreSession("conversation", store_url)
    assert isinstance(session, Session)
    try:
        first = asyncio.run(run_turns(session, [1, 2]))
    finally:
        session.close()
    assert as_json(first) == as_json(reference["first"])
    resumed = run_elsewhere("transcript", store_url, "conversation", 3)
    assert as_json(resumed) == as_json(reference["resumed"])
    assert len(resumed["inputs"][0]) == len(first["items"]) + 1  # the whole history, resumed

    with TranscriptStore.open(store_url) as db:  # the calls are rows the audits see
        assert db.count_calls_by_tool() == {"get_weather": 2, "add": 1, "divide": 1}
        assert [hit.call_id for hit in db.find_calls("Oslo")] == ["call_2"]
        calls = {c.call.id: c for c in db.load("conversation").calls()}
        assert calls["call_3"].call.input == {"a": 2, "b": 3}
        assert calls["call_3"].result is not None and calls["call_3"].result.content == "5"
        assert "error occurred" in str(calls["call_4"].result.content)  # type: ignore[union-attr]


ITEMS: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi \u2603 and a NUL \u0000?"},
    {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "Look:"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=",
         "detail": "auto"}]},
    {"type": "reasoning", "id": "rs_9", "summary": [], "encrypted_content": "gAAAAB"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "run_shell_command",
     "arguments": '{"command": "ls",  "n": 12345678901234567890}', "status": "completed"},
    {"type": "function_call", "call_id": "call_2", "name": "broken", "arguments": "{not json"},
    {"type": "function_call", "call_id": "call_3", "name": "no_args", "arguments": ""},
    {"type": "function_call_output", "call_id": "call_1", "output": "README.md\n"},
    {"type": "function_call_output", "call_id": "call_2",
     "output": [{"type": "input_text", "text": "bad arguments"}]},
    {"type": "function_call_output", "call_id": "call_3", "output": ""},
    {"type": "custom_tool_call", "call_id": "call_4", "name": "apply_patch",
     "input": "*** Begin Patch"},
    {"type": "custom_tool_call_output", "call_id": "call_4", "output": "done"},
    {"type": "item_reference", "id": "msg_0"},
    {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "fs", "name": "rm",
     "arguments": "{}"},
    {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "Done.", "annotations": [], "logprobs": []}]},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "Same id.", "annotations": []}]},
]


def test_items_come_back_exactly_as_given(db, store_url):
    session = TranscriptStoreSession("exact", db)
    asyncio.run(session.add_items(ITEMS[:5]))
    asyncio.run(session.add_items(ITEMS[5:]))
    assert as_json(asyncio.run(session.get_items())) == as_json(ITEMS)
    again = TranscriptStoreSession("exact", store_url)  # another store, as another process
    try:
        assert as_json(asyncio.run(again.get_items())) == as_json(ITEMS)
    finally:
        again.close()
    # The calls went through the normalizer: rows, aliases, invalid arguments kept.
    calls = {c.call.id: c for c in db.load("exact").calls()}
    assert calls["call_1"].call.name == "bash"  # aliased on load; the item keeps its name
    assert calls["call_1"].call.input["n"] == 12345678901234567890
    assert not calls["call_2"].call.is_valid
    assert calls["call_2"].result is not None
    assert db.count_calls() == 4


def test_nothing_is_stored_twice(db):
    session = TranscriptStoreSession("lean", db)
    big = "x" * 50_000
    asyncio.run(session.add_items([
        {"type": "function_call", "call_id": "c", "name": "write", "arguments": json.dumps(
            {"text": big})},
        {"type": "function_call_output", "call_id": "c", "output": big},
    ]))
    for stored in db.load("lean"):
        assert len(json.dumps(dict(stored.message.metadata))) < 500
    assert asyncio.run(session.get_items())[1]["output"] == big


def is_call(item: dict[str, Any]) -> bool:
    return str(item.get("type", "")).endswith("_call")


def answered(item: dict[str, Any]) -> str | None:
    kind = str(item.get("type", ""))
    return item.get("call_id") if kind.endswith("_output") else None


def first_safe_cut(items: list[dict[str, Any]], at_least: int) -> int:
    """Brute force: the first cut that separates no output from its call (the latest call with
    its id before it) and no item from the reasoning item before it."""

    def call_of(at: int) -> int:
        ref = answered(items[at])
        return max((n for n in range(at) if is_call(items[n]) and items[n]["call_id"] == ref),
                   default=-1)

    for cut in range(at_least, len(items) + 1):
        outputs = [n for n in range(cut, len(items)) if answered(items[n]) is not None]
        if any(call_of(n) < cut for n in outputs):
            continue
        if cut > 0 and items[cut - 1].get("type") == "reasoning":
            continue
        return cut
    return len(items)


WINDOW_ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "one"},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
    {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "a", "output": "A"},
    {"type": "function_call_output", "call_id": "b", "output": "B"},
    {"type": "message", "role": "assistant", "content": "done"},
    {"role": "user", "content": "two"},
    {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},  # id reused
    {"type": "function_call_output", "call_id": "a", "output": "A2"},
    {"type": "reasoning", "id": "rs_2", "summary": []},
    {"type": "message", "role": "assistant", "content": "done again"},
]


def test_a_limited_window_never_separates_an_output_from_its_call(db):
    session = TranscriptStoreSession("window", db, pair_safe_limit=True)
    asyncio.run(session.add_items(WINDOW_ITEMS))
    total = len(WINDOW_ITEMS)
    for limit in range(total + 2):
        got = asyncio.run(session.get_items(limit))
        cut = first_safe_cut(WINDOW_ITEMS, max(0, total - limit))
        assert got == WINDOW_ITEMS[cut:], limit
        assert len(got) <= limit
    assert asyncio.run(session.get_items(-1)) == WINDOW_ITEMS
    settings = TranscriptStoreSession("window", db, session_settings={"limit": 3},
                                      pair_safe_limit=True)
    assert asyncio.run(settings.get_items()) == WINDOW_ITEMS[first_safe_cut(WINDOW_ITEMS,
                                                                             total - 3):]


def test_the_plain_window_is_the_sdks(db):
    ours = TranscriptStoreSession("plain", db)  # the default: the SDK's plain "last N items"
    sdk = SQLiteSession("plain")
    try:
        asyncio.run(ours.add_items(WINDOW_ITEMS))
        asyncio.run(sdk.add_items(WINDOW_ITEMS))
        for limit in range(-1, len(WINDOW_ITEMS) + 2):
            assert (asyncio.run(ours.get_items(limit))
                    == asyncio.run(sdk.get_items(limit))), limit
    finally:
        sdk.close()


def test_unknown_session_settings_raise_type_error_like_the_sdk(db):
    with pytest.raises(TypeError, match="Unknown session settings: limitt"):
        SQLiteSession("sdk", session_settings={"limitt": 1})
    with pytest.raises(TypeError, match="Unknown session settings: limitt"):
        TranscriptStoreSession("ours", db, session_settings={"limitt": 1})
    with pytest.raises(TypeError, match="SessionSettings or a dict"):
        TranscriptStoreSession("ours", db, session_settings=3)  # type: ignore[arg-type]
    assert TranscriptStoreSession("ours", db, session_settings={"limit": 2}).session_settings \
        == SessionSettings(limit=2)


def test_safe_start_drops_an_output_whose_call_is_nowhere():
    items = [{"type": "function_call_output", "call_id": "x", "output": "?"},
             {"role": "user", "content": "hi"}]
    assert safe_start(items, 0) == 1


def test_pop_item_removes_the_newest_item(db):
    session = TranscriptStoreSession("pop", db)
    assert asyncio.run(session.pop_item()) is None  # no session yet
    asyncio.run(session.add_items(WINDOW_ITEMS[:3]))
    assert asyncio.run(session.pop_item()) == WINDOW_ITEMS[2]
    assert asyncio.run(session.get_items()) == WINDOW_ITEMS[:2]
    assert asyncio.run(session.get_items(1)) == [WINDOW_ITEMS[1]]
    asyncio.run(session.add_items([WINDOW_ITEMS[6]]))
    assert asyncio.run(session.get_items()) == [*WINDOW_ITEMS[:2], WINDOW_ITEMS[6]]
    assert [asyncio.run(session.pop_item()) for _ in range(4)] == [
        WINDOW_ITEMS[6], WINDOW_ITEMS[1], WINDOW_ITEMS[0], None]
    assert asyncio.run(session.get_items()) == []
    assert asyncio.run(session.get_items(5)) == []


def test_a_backdated_message_remains_the_latest_item(db):
    """The session orders its items by position, never by a clock: a message whose stored time
    is older than the others' (another machine's clock, another time zone) stays the newest
    (the case of the SDK's own ``test_backdated_append_remains_the_latest_item``, 0.25)."""
    from sqlalchemy import func, select, update

    from store.db.schema.tables import messages

    session = TranscriptStoreSession("backdated", db)
    for item in WINDOW_ITEMS[:3]:
        asyncio.run(session.add_items([item]))
    with db.engine.begin() as conn:
        last = select(func.max(messages.c.position)).where(
            messages.c.session_id == "backdated").scalar_subquery()
        done = conn.execute(update(messages).where(
            messages.c.session_id == "backdated", messages.c.position == last).values(
            created_at=datetime(2000, 1, 1, tzinfo=UTC)))
        assert done.rowcount == 1
    assert asyncio.run(session.get_items()) == WINDOW_ITEMS[:3]
    assert asyncio.run(session.get_items(1)) == [WINDOW_ITEMS[2]]
    assert asyncio.run(session.pop_item()) == WINDOW_ITEMS[2]
    assert asyncio.run(session.get_items()) == WINDOW_ITEMS[:2]


def test_concurrent_pops_never_remove_one_item_twice(store_url):
    items = [{"role": "user", "content": f"m{n}"} for n in range(12)]
    setup = TranscriptStoreSession("race", store_url)
    asyncio.run(setup.add_items(items))
    setup.close()
    popped: list[list[Any]] = [[], []]

    def popper(into: list[Any]) -> None:
        session = TranscriptStoreSession("race", store_url)
        try:
            for _ in range(6):
                into.append(asyncio.run(session.pop_item()))
        finally:
            session.close()

    threads = [threading.Thread(target=popper, args=(p,)) for p in popped]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    contents = sorted(item["content"] for part in popped for item in part)
    assert contents == sorted(item["content"] for item in items)
    for part in popped:  # each popper saw the items newest first
        numbers = [int(item["content"][1:]) for item in part]
        assert numbers == sorted(numbers, reverse=True)


def test_windows_follow_other_writers(db):
    mine = TranscriptStoreSession("shared", db)
    other = TranscriptStoreSession("shared", db)
    many = [{"role": "user", "content": f"m{n}"} for n in range(30)]
    asyncio.run(mine.add_items(many))
    assert asyncio.run(mine.get_items(5)) == many[-5:]
    asyncio.run(other.add_items(many[:2]))  # the length mine saw is now too short
    assert asyncio.run(mine.get_items(3)) == [many[-1], *many[:2]]
    asyncio.run(other.clear_session())
    asyncio.run(other.add_items(many[:3]))  # ... and now too long
    assert asyncio.run(mine.get_items(5)) == many[:3]
    assert asyncio.run(mine.pop_item()) == many[2]
    assert asyncio.run(other.get_items(5)) == many[:2]


def test_clear_session_deletes_the_session(db):
    session = TranscriptStoreSession("gone", db)
    asyncio.run(session.add_items(WINDOW_ITEMS[:2]))
    asyncio.run(session.clear_session())
    assert asyncio.run(session.get_items()) == []
    with pytest.raises(SessionNotFound):
        db.get_session("gone")
    asyncio.run(session.clear_session())  # clearing nothing is fine
    asyncio.run(session.add_items(WINDOW_ITEMS[:1]))
    assert asyncio.run(session.get_items()) == WINDOW_ITEMS[:1]


def test_messages_written_otherwise_are_read_as_responses_items(db):
    db.append("chat", [
        {"role": "user", "content": "List files."},
        {"role": "assistant", "content": "Sure.", "tool_calls": [{"id": "call_1",
         "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "README.md"},
    ])
    session = TranscriptStoreSession("chat", db)
    items = asyncio.run(session.get_items())
    assert [i.get("type") for i in items] == [
        "message", "message", "function_call", "function_call_output"]
    assert items[2]["call_id"] == items[3]["call_id"] == "call_1"
    assert asyncio.run(session.pop_item()) == items[3]
    assert asyncio.run(session.pop_item()) == items[2]
    assert asyncio.run(session.get_items()) == items[:2]


def test_a_tombstone_hides_an_item_of_the_message_it_names_only(db):
    """A popper that read a message shared by two items, and writes its tombstone after
    another writer replaced that message, hides nothing of the new message at the position."""
    from store.integrations.openai_agents import KEY, _identity

    def assistant(text: str, call_id: str) -> dict[str, Any]:
        return {"role": "assistant", "content": text, "tool_calls": [{"id": call_id,
                "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}

    db.append("named", [{"role": "user", "content": "List files."}, assistant("Sure.", "c1")])
    session = TranscriptStoreSession("named", db)
    read = db.load("named").messages[1]  # what the slow popper read
    db.truncate("named", 1)
    db.append("named", [assistant("Again.", "c2")])
    stale = store_message_tombstone(KEY, [1, 1], _identity(read))
    db.append("named", [stale], keys=[f"openai_agents:pop:1:1:{_identity(read)}"])
    items = asyncio.run(session.get_items())
    assert [i.get("type") for i in items] == ["message", "message", "function_call"]
    assert items[2]["call_id"] == "c2"
    assert asyncio.run(session.pop_item()) == items[2]  # a tombstone naming the new message
    assert asyncio.run(session.get_items()) == items[:2]


def store_message_tombstone(key: str, at: list[int], of: str) -> Any:
    from store import Message

    return Message("system", (), "openai_agents", metadata={key: {"pop": at, "of": of}})


def test_items_are_kept_under_keys_of_their_own(db):
    session = TranscriptStoreSession("keys", db)
    asyncio.run(session.add_items(WINDOW_ITEMS[:3]))
    keys = [m.key for m in db.load("keys")]
    assert len(set(keys)) == 3 and all(k and k.startswith("openai_agents:") for k in keys)


def test_database_work_never_runs_on_the_event_loop(db, monkeypatch):
    loop_threads: set[int] = set()
    worker_threads: set[int] = set()
    for name in ("append", "load", "get_session", "delete_session"):
        real = getattr(db, name)

        def spy(*args: Any, __real: Any = real, __name: str = name, **kwargs: Any) -> Any:
            worker_threads.add(threading.get_ident())
            if __name == "append":
                time.sleep(0.2)  # a slow database: the loop must keep running meanwhile
            return __real(*args, **kwargs)

        monkeypatch.setattr(db, name, spy)
    session = TranscriptStoreSession("loop", db)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async def main() -> None:
        loop_threads.add(threading.get_ident())
        task = asyncio.create_task(ticker())
        await session.add_items(WINDOW_ITEMS[:1])
        await session.get_items()
        await session.get_items(1)
        await session.pop_item()
        await session.clear_session()
        task.cancel()

    asyncio.run(main())
    assert worker_threads and not worker_threads & loop_threads
    assert ticks >= 5  # about 20 when the loop runs free


def test_a_cancelled_add_items_lands_before_the_cancellation_is_raised(db, monkeypatch):
    real = db.append

    def slow_append(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.2)
        return real(*args, **kwargs)

    monkeypatch.setattr(db, "append", slow_append)
    session = TranscriptStoreSession("cancel", db)

    async def main() -> None:
        task = asyncio.create_task(session.add_items(WINDOW_ITEMS[:1]))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await session.get_items() == WINDOW_ITEMS[:1]  # landed before the raise

    asyncio.run(main())


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@function_tool
def list_files() -> str:
    """List the files."""
    return "a.txt b.txt"


async def approve_and_resume(session: Any) -> list[Any]:
    """A run interrupted for a tool approval (one of two parallel calls), then resumed."""
    model = ScriptedModel([
        [function_call("list_files", {}, call_id="c1"),
         function_call("delete_file", {"path": "a.txt"}, call_id="c2")],
        [assistant_message("Done.")],
    ])
    agent = Agent(name="a", model=model, tools=[delete_file, list_files])
    first = await Runner.run(agent, "Clean up.", session=session)
    assert len(first.interruptions) == 1
    state = first.to_state()
    state.approve(first.interruptions[0])
    second = await Runner.run(agent, state, session=session)
    assert second.final_output == "Done."
    items: list[Any] = await session.get_items()
    return items


def test_a_run_interrupted_for_approval_resumes_as_with_the_sdks_own_store(db):
    sdk = SQLiteSession("hitl")
    try:
        expected = asyncio.run(approve_and_resume(sdk))
    finally:
        sdk.close()
    got = asyncio.run(approve_and_resume(TranscriptStoreSession("hitl", db)))
    assert as_json(got) == as_json(expected)


def test_without_the_extra_the_error_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "agents", None)
    with pytest.raises(MissingExtra, match=r"pip install 'transcript-store\[agents\]'"):
        TranscriptStoreSession("x", "sqlite://")
