"""Bulk work runs with fewer cyclic collections (``store.core.collecting``): the young
generation's threshold is raised for the block and put back after it, once however deeply
blocks nest; a higher threshold, or a collector switched off, is left alone."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store.core.collecting import BULK_THRESHOLD, fewer_collections


@pytest.fixture(autouse=True)
def _restored() -> Iterator[None]:
    before = gc.get_threshold()
    enabled = gc.isenabled()
    yield
    gc.set_threshold(*before)
    if enabled:
        gc.enable()


def test_the_threshold_is_raised_for_the_block_and_put_back() -> None:
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (BULK_THRESHOLD, 10, 10)
        with fewer_collections(threshold=90_000):  # nested: the outer setting stays
            assert gc.get_threshold() == (BULK_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (BULK_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_it_is_put_back_when_the_block_raises() -> None:
    gc.set_threshold(500, 7, 3)
    with pytest.raises(ZeroDivisionError), fewer_collections():
        assert gc.get_threshold() == (BULK_THRESHOLD, 7, 3)
        _ = 1 / 0
    assert gc.get_threshold() == (500, 7, 3)


def test_a_higher_threshold_or_no_collector_is_left_alone() -> None:
    gc.set_threshold(200_000, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (200_000, 10, 10)
    gc.set_threshold(0, 10, 10)  # (a threshold of 0 switches collection off)
    with fewer_collections():
        assert gc.get_threshold() == (0, 10, 10)
    assert gc.get_threshold() == (0, 10, 10)


def test_a_decorated_function_runs_inside_it() -> None:
    gc.set_threshold(700, 10, 10)

    @fewer_collections()
    def work() -> tuple[int, int, int]:
        return gc.get_threshold()

    assert work() == (BULK_THRESHOLD, 10, 10)
    assert work() == (BULK_THRESHOLD, 10, 10)  # (a decorator made once runs again)
    assert gc.get_threshold() == (700, 10, 10)



def test_verify_and_compact_run_inside_it(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The other bulk passes over every message (``verify``, ``db compact``) run with the
    raised threshold too, and put the caller's back."""
    import store.db.store as store_module
    from store import TranscriptStore, compact_database
    from store.core.model import Message, TextPart

    gc.set_threshold(700, 10, 10)
    seen: list[int] = []
    checking = store_module.verify

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.get_threshold()[0])
        return checking(*args, **kwargs)

    monkeypatch.setattr(store_module, "verify", spy)
    with TranscriptStore.open(f"sqlite:///{tmp_path / 'gc.sqlite'}") as opened:
        opened.append("s", [Message("user", (TextPart("hello"),), metadata={"a": 1})])
        assert opened.verify().ok
        assert gc.get_threshold()[0] == 700
        compact_database(opened, vacuum=False,
                         progress=lambda *_: seen.append(gc.get_threshold()[0]))
    assert len(seen) == 2 and set(seen) == {BULK_THRESHOLD}
    assert gc.get_threshold()[0] == 700
