"""Agents SDK sessions under real concurrent processes (issue 23), on SQLite and PostgreSQL:
every item ends exactly once (popped by one process, or still stored; never both, never
lost) and no error reaches a caller.

Each race runs ``TRANSCRIPT_RACE_SECONDS`` (default 3) in child processes
(``tests/helpers_races.py``); the assertions are about what happened, never how fast.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from helpers_races import item, run_workers

from store.integrations.openai_agents import TranscriptStoreSession


def seed(url: str, session_id: str, count: int) -> list[str]:
    contents = [f"seed-{n}" for n in range(count)]
    session = TranscriptStoreSession(session_id, url)
    try:
        asyncio.run(session.add_items([item(c) for c in contents]))  # type: ignore[misc]
    finally:
        session.close()
    return contents


def remaining(url: str, session_id: str) -> list[str]:
    session = TranscriptStoreSession(session_id, url)
    try:
        return [i["content"] for i in asyncio.run(session.get_items())]  # type: ignore[index]
    finally:
        session.close()


def events(lines: list[list[dict[str, Any]]], key: str) -> list[Any]:
    return [line[key] for worker in lines for line in worker if line.get(key) is not None]


def errors(lines: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [line for worker in lines for line in worker if "error" in line]


def assert_exactly_once(popped: list[str], added: list[str], left: list[str]) -> None:
    doubled = {c: n for c, n in Counter(popped).items() if n > 1}
    assert not doubled, f"{len(doubled)} items popped more than once: {sorted(doubled)[:10]}"
    both = set(popped) & set(left)
    assert not both, f"{len(both)} items popped and still stored: {sorted(both)[:10]}"
    assert len(left) == len(set(left)), "an item is stored twice"
    lost = set(added) - set(popped) - set(left)
    assert not lost, f"{len(lost)} items neither popped nor stored: {sorted(lost)[:10]}"
    unknown = (set(popped) | set(left)) - set(added)
    assert not unknown, f"items nobody added: {sorted(unknown)[:10]}"


def test_a_pop_never_takes_the_item_another_process_added_after_its_pop(store_url, tmp_path):
    """Process A only pops; B pops then adds a new item: B's pop-then-add restores the
    session's length, which once let A delete B's new item while returning the old one."""
    seeded = seed(store_url, "pop-add", 400)
    lines = run_workers([["pop", "pop-add"], ["pop", "pop-add", "--add", "b"]],
                        store_url, tmp_path)
    assert not errors(lines), errors(lines)[:5]
    popped, added = events(lines, "popped"), events(lines, "added")
    assert popped and added  # both ran
    assert_exactly_once(popped, seeded + added, remaining(store_url, "pop-add"))


def test_three_concurrent_poppers_never_pop_one_item_twice(store_url, tmp_path):
    seeded = seed(store_url, "three", 1500)
    lines = run_workers([["pop", "three", "--until-empty"]] * 3, store_url, tmp_path)
    assert not errors(lines), errors(lines)[:5]
    popped = events(lines, "popped")
    assert all(any("popped" in line for line in worker) for worker in lines)
    assert_exactly_once(popped, seeded, remaining(store_url, "three"))


def test_a_pop_racing_clear_session_pops_an_item_once_or_none(store_url, tmp_path):
    """Two poppers against a process that adds a batch and clears the session, in a loop:
    a pop never raises (``SessionNotFound`` crashed the SDK's runner), pops each item at
    most once, and never pops one that is still stored; the batch added after the last clear
    is all there, but for what was popped of it."""
    lines = run_workers([["pop", "clear"], ["pop", "clear"], ["clear", "clear", "c"]],
                        store_url, tmp_path)
    assert not errors(lines), errors(lines)[:5]
    popped = events(lines, "popped")
    batches = events(lines, "added")
    added = [content for batch in batches for content in batch]
    left = remaining(store_url, "clear")
    doubled = [c for c, n in Counter(popped).items() if n > 1]
    assert not doubled, doubled[:10]
    assert not set(popped) & set(left)
    assert set(popped) <= set(added) and set(left) <= set(added)
    assert set(batches[-1]) - set(popped) <= set(left)  # nothing lost after the last clear
    assert any("cleared" in line for line in lines[2])
