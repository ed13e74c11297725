"""Settling the heap: garbage collected, the survivors out of the collector's way."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from scheduler.service import heap


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()  # the rest of the test session collects as usual


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_settling_frees_garbage_cycles_and_freezes_what_lives() -> None:
    kept = [Cycle() for _ in range(100)]
    kept_refs = [weakref.ref(o) for o in kept]
    garbage = weakref.ref(Cycle())  # unreachable at once, but a cycle: only the collector frees it
    assert garbage() is not None
    heap.settle("test")
    assert garbage() is None
    assert gc.get_freeze_count() > len(kept)
    assert all(ref() is not None for ref in kept_refs)
    # Frozen objects that die later are collected by the next settling (it thaws first).
    kept.clear()
    assert any(ref() is not None for ref in kept_refs), "cycles: not freed by reference counts"
    heap.settle("again")
    assert all(ref() is None for ref in kept_refs)


async def test_it_waits_for_the_first_lists_then_settles_periodically() -> None:
    synced = asyncio.Event()
    keeping = asyncio.create_task(heap.keep_settled(synced.is_set, interval=0.05))
    await asyncio.sleep(0.6)
    assert gc.get_freeze_count() == 0
    synced.set()
    for _ in range(100):
        await asyncio.sleep(0.05)
        if gc.get_freeze_count():
            break
    assert gc.get_freeze_count() > 0
    keeping.cancel()
    await asyncio.gather(keeping, return_exceptions=True)
