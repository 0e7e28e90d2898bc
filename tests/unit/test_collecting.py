"""Bulk work runs with fewer cyclic collections (``store.core.collecting``): the young
generation's threshold is raised for the block and put back after it, once however deeply
blocks nest; a higher threshold, or a collector switched off, is left alone."""

from __future__ import annotations

import gc
from collections.abc import Iterator

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
