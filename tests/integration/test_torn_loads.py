"""A load is one committed state (issue 23), on SQLite and PostgreSQL, under real processes.

One process replaces a session's last call and its result in a loop (``truncate``, then
``append``: two transactions, so the session is ``[user]`` or ``[user, call, result]`` of one
round); two others load it, whole and through windows (``last_turns``, ``since_position``),
and check every load against those states: no exception (a torn load raised a bare
``KeyError``), ``message_count`` equal to the messages a whole load returns, every link naming
a call the load holds, and the result answering the call beside it. Runs
``TRANSCRIPT_RACE_SECONDS`` (default 3); nothing about speed is asserted.
"""

from __future__ import annotations

from helpers_races import check_load, replacement, run_workers

from store import TranscriptStore


def test_every_load_is_a_state_that_existed(store_url, tmp_path):
    with TranscriptStore.open(store_url) as db:
        db.append("torn", [{"role": "user", "content": "go"}, *replacement(0)])
        assert check_load(db.load("torn"), "whole") is None  # the check passes a real state
        torn = db.load("torn")
    lines = run_workers([["replace", "torn"], ["load", "torn"], ["load", "torn"]],
                        store_url, tmp_path)
    problems = [line for worker in lines for line in worker if "error" in line or "torn" in line]
    assert not problems, f"{len(problems)} loads were not a committed state: {problems[:5]}"
    assert lines[0][-1]["done"] > 0  # the writer replaced the end ...
    assert all(worker[-2]["loads"] > 0 for worker in lines[1:])  # ... while both loaded
    with TranscriptStore.open(store_url) as db:
        after = db.load("torn")
    assert check_load(after, "whole") is None
    assert after.messages[0] == torn.messages[0]


def test_the_load_check_sees_a_torn_state(store_url):
    """The check above can fail: a transcript whose message_count and messages disagree, or
    whose result answers a call from another round, is refused."""
    with TranscriptStore.open(store_url) as db:
        db.append("mixed", [{"role": "user", "content": "go"}, *replacement(1)])
        whole = db.load("mixed")
        db.truncate("mixed", 1)
        db.append("mixed", [replacement(2)[0], replacement(1)[1]])  # round 2's call, 1's result
        mixed = db.load("mixed")
        db.truncate("mixed", 1)
        short = db.load("mixed")
    from dataclasses import replace

    assert check_load(whole, "whole") is None
    assert check_load(mixed, "whole") is not None
    assert "message_count" in str(check_load(
        type(short)(replace(short.session, message_count=3), short.messages, short.links),
        "whole"))
