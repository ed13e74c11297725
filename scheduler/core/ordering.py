"""The two orderings of scheduling, each one sort key.

See docs/scheduling.md#queue-order and docs/scheduling.md#processing-order.

**Queue order** inside a ClusterQueue, smaller first:

1. higher effective priority;
2. earlier queue-order timestamp (``workload.queue_timestamp``);
3. workload UID, then key (any total order; only for determinism).

(The sticky preemptor of BestEffortFIFO, first in queue order, is kept by the queue
itself: ``ClusterQueueQueue.sticky`` is popped first while it is queued.  Under
admission fair sharing the usage of each workload's LocalQueue comes before this
key; it changes with time, so ``ClusterQueueQueue.pop`` compares it when it pops,
docs/concepts.md#admission-fair-sharing.)

**Processing order** of the nominated entries of one cycle (classical,
fair sharing disabled), smaller first, after the entries that wait for their
own preemptions (kuota's rule, ``cycle``: they come first under either order):

1. lower borrowing level of the assignment (fits-in-nominal before borrowers);
2. higher effective priority (PrioritySortingWithinCohort);
3. earlier queue-order timestamp;
4. ClusterQueue name (kuota's deterministic tie-break).
"""

from __future__ import annotations

from datetime import datetime

QueueKey = tuple[int, datetime, str, str]


def queue_key(*, priority: int, timestamp: datetime, uid: str, key: str) -> QueueKey:
    """Sort key of a workload in its ClusterQueue's heap: pure."""
    return (-priority, timestamp, uid, key)


def processing_key(
    *, borrowing_level: int, priority: int, timestamp: datetime, cluster_queue: str
) -> tuple[int, int, datetime, str]:
    """Sort key of a nominated entry within a cycle: pure."""
    return (borrowing_level, -priority, timestamp, cluster_queue)


__all__ = ["QueueKey", "processing_key", "queue_key"]
