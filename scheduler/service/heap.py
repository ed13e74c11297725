"""Keeping Python's cycle collector off the long-lived state (docs/architecture.md#memory).

The scheduler holds its whole picture of the cluster in memory: at 50,000
Workloads, some 350,000 objects that live as long as the process.  Python's
cycle collector walks every one of them in each full collection, a pause of
a few hundred milliseconds (measured on 2 cores) that stops scheduling turns,
informer events and visibility API answers alike, and comes back as often as
the population grows.  So the process *settles* its heap at the moments the
long-lived state has just been built: one full collection (garbage cycles are
freed), then ``gc.freeze()``, which moves every survivor into a generation the
collector never walks again; later collections see only what was allocated
since.  The settling happens after the informers' first lists, after each
rebuild of the state (a term of leadership ended), and every
``interval`` seconds, each time thawing first so that state discarded in
between (a replaced engine) is collected too; that one full collection is the
only pause of that size in the interval.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable

log = logging.getLogger("kuota.scheduler")
SETTLE_INTERVAL_SECONDS = 600.0


def settle(reason: str) -> float:
    """Thaw, collect everything, freeze the survivors; the pause in seconds."""
    started = time.perf_counter()
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    pause = time.perf_counter() - started
    log.info(
        "heap settled",
        extra={"reason": reason, "frozen": gc.get_freeze_count(), "pause_s": round(pause, 3)},
    )
    return pause


async def keep_settled(
    ready: Callable[[], bool], *, interval: float = SETTLE_INTERVAL_SECONDS
) -> None:
    """Settle once every informer has listed, then every ``interval`` seconds, until cancelled."""
    while not ready():
        await asyncio.sleep(0.5)
    settle("informers synced")
    while True:
        await asyncio.sleep(interval)
        settle("periodic")


__all__ = ["SETTLE_INTERVAL_SECONDS", "keep_settled", "settle"]
