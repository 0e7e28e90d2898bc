"""Loading by whole turns, from a position or a time; forking a session (both backends)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from store import SessionNotFound


def call(call_id, name="bash", args='{"command": "ls"}'):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def turn(n, *, late_result_for=None):
    """A user turn: question, assistant call, result."""
    out = [
        {"role": "user", "content": f"question {n}"},
        {"role": "assistant", "content": None, "tool_calls": [call(f"c{n}")]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"answer {n}"},
    ]
    if late_result_for is not None:
        out.append({"role": "tool", "tool_call_id": late_result_for, "content": "late"})
    return out


def positions(transcript):
    return [m.position for m in transcript.messages]


class TestWindows:
    def test_last_turns_loads_whole_turns(self, store):
        store.append("s", turn(0) + turn(1) + turn(2))
        window = store.load("s", last_turns=2)
        assert positions(window) == [3, 4, 5, 6, 7, 8]
        assert [c.result.content for c in window.calls()] == ["answer 1", "answer 2"]
        assert len(store.load("s", last_turns=10)) == 9

    def test_a_window_never_separates_a_call_from_its_result(self, store):
        # The result of c0 arrives in turn 2 (out of order): the window moves back to c0.
        store.append("s", turn(0)[:2] + turn(1) + turn(2, late_result_for="c0"))
        window = store.load("s", last_turns=1)
        assert positions(window)[0] == 1
        loaded = {c.call.id: c.result for c in window.calls()}
        assert loaded["c0"].content == "late"
        assert list(window.orphan_results()) == []

    def test_from_a_position(self, store):
        store.append("s", turn(0) + turn(1))
        assert positions(store.load("s", since_position=3)) == [3, 4, 5]
        assert positions(store.load("s", since_position=5)) == [4, 5]  # moved back to the call

    def test_from_a_time(self, store):
        lines = [
            {"type": "user", "uuid": "u1", "timestamp": "2025-01-01T00:00:00Z",
             "message": {"role": "user", "content": "old"}},
            {"type": "user", "uuid": "u2", "timestamp": "2025-06-01T00:00:00Z",
             "message": {"role": "user", "content": "new"}},
        ]
        store.append("s", lines)
        window = store.load("s", since=datetime(2025, 3, 1, tzinfo=UTC))
        assert [m.message.text for m in window] == ["new"]
        assert len(store.load("s", since=datetime(2030, 1, 1, tzinfo=UTC))) == 0

    @pytest.mark.parametrize("kwargs", [{"last_turns": 0}, {"since_position": -1}])
    def test_bad_windows_are_refused(self, store, kwargs):
        store.append("s", turn(0))
        with pytest.raises(ValueError):
            store.load("s", **kwargs)


class TestFork:
    def test_a_fork_copies_the_history_before_the_position(self, store):
        store.append("s", turn(0) + turn(1), title="original", provider="openai")
        store.record_tools("s", {"name": "bash", "description": "run"})
        info = store.fork("s", 3, "s-retry")
        assert (info.session_id, info.title, info.provider, info.message_count) == (
            "s-retry", "original", "openai", 3)
        assert info.metadata["forked_from"] == {"session_id": "s", "position": 3}
        fork = store.load("s-retry")
        assert positions(fork) == [0, 1, 2]
        assert [(c.call.id, c.result.content) for c in fork.calls()] == [("c0", "answer 0")]
        assert [d.name for d in store.tool_definitions("s-retry")] == ["bash"]
        # Both sessions go on independently.
        store.append("s-retry", [{"role": "user", "content": "try again"}])
        assert len(store.load("s")) == 6 and len(store.load("s-retry")) == 4

    def test_forking_an_unknown_session_is_session_not_found(self, store):
        with pytest.raises(SessionNotFound):
            store.fork("nope", 0)

    def test_forking_onto_an_existing_id_is_refused(self, store):
        store.append("s", turn(0))
        store.append("t", turn(0))
        with pytest.raises(Exception, match="exists already"):
            store.fork("s", 1, "t")


class TestTruncate:
    def test_truncate_deletes_the_tail_with_its_calls_and_results(self, store):
        store.append("s", turn(0) + turn(1))
        assert store.truncate("s", 3) == 3
        assert positions(store.load("s")) == [0, 1, 2]
        assert store.count_calls("s") == 1 and store.get_session("s").message_count == 3
        store.append("s", turn(2))  # positions go on from the new end
        assert positions(store.load("s")) == [0, 1, 2, 3, 4, 5]
        assert store.verify("s").ok

    def test_truncate_is_a_compare_and_delete(self, store):
        from store import ConflictError

        store.append("s", turn(0))
        with pytest.raises(ConflictError, match="has 3 messages, not 2"):
            store.truncate("s", 2, expected_length=2)
        assert store.truncate("s", 2, expected_length=3) == 1
        assert store.truncate("s", 5) == 0

    def test_truncate_compares_the_last_message_by_identity(self, store):
        """A writer that removes the last message and appends another restores the length:
        ``expected_last`` tells the new message from the one read, ``expected_length`` not."""
        from store import ConflictError, UsageError

        store.append("s", [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
        last = store.load("s").messages[-1]
        store.truncate("s", 1)
        store.append("s", [{"role": "user", "content": "b"}])  # same length, same content
        with pytest.raises(ConflictError, match="not the one read"):
            store.truncate("s", 1, expected_last=last)
        store.append("k", [{"role": "user", "content": "x"}], keys=["k1"])
        keyed = store.load("k").messages[-1]
        store.truncate("k", 0)
        store.append("k", [{"role": "user", "content": "y"}], keys=["k2"])
        with pytest.raises(ConflictError, match="not the one read"):
            store.truncate("k", 0, expected_last=keyed)
        store.append("s", [{"role": "user", "content": "c"}])
        with pytest.raises(ConflictError, match="has 3 messages, not 2"):
            store.truncate("s", 1, expected_last=store.load("s").messages[1])
        with pytest.raises(UsageError, match="disagree"):
            store.truncate("s", 2, expected_length=2, expected_last=store.load("s").messages[2])
        now = store.load("s").messages[-1]
        assert store.truncate("s", 2, expected_last=now) == 1
        assert [m.message.text for m in store.load("s")] == ["a", "b"]
        assert store.load("k").messages[0].message.text == "y"

    def test_truncating_an_unknown_session_is_session_not_found(self, store):
        with pytest.raises(SessionNotFound):
            store.truncate("nope", 0)
