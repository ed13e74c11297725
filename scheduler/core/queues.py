"""Pending workloads of one ClusterQueue: an active heap and an inadmissible set.

See docs/scheduling.md#queues.

The heap holds ``(queue key..., seq)`` tuples and is lazily pruned: removing
or re-keying a workload only forgets its current ``seq``; a popped entry
whose ``seq`` is no longer current is skipped.  Pushing and popping are
O(log n), removal O(1), and nothing ever scans the whole queue during a
cycle.  The inadmissible set is an insertion-ordered dict, scanned only when
a requeue event moves its workloads back.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator

from scheduler.core.ordering import QueueKey


class ClusterQueueQueue:
    """Active heap + inadmissible set of one ClusterQueue."""

    __slots__ = ("_heap", "_current", "_inadmissible", "_counter", "sticky")

    def __init__(self) -> None:
        self._heap: list[tuple[int, object, str, str, int]] = []
        self._current: dict[str, int] = {}
        self._inadmissible: dict[str, QueueKey] = {}
        self._counter = 0
        self.sticky: str | None = None
        """BestEffortFIFO's sticky preemptor: popped first while it is in the heap."""

    def __len__(self) -> int:
        """``pendingWorkloads`` of the CQ: active + inadmissible."""
        return len(self._current) + len(self._inadmissible)

    @property
    def active_count(self) -> int:
        return len(self._current)

    def __contains__(self, key: str) -> bool:
        return key in self._current or key in self._inadmissible

    def is_inadmissible(self, key: str) -> bool:
        return key in self._inadmissible

    def keys(self) -> Iterator[str]:
        yield from self._current
        yield from self._inadmissible

    def push(self, order: QueueKey) -> None:
        """Put a workload (by its queue key) into the active heap, replacing any earlier place."""
        key = order[3]
        self._inadmissible.pop(key, None)
        self._counter += 1
        self._current[key] = self._counter
        heapq.heappush(self._heap, (*order, self._counter))
        if len(self._heap) > 2 * len(self._current) + 64:
            self._compact()

    def park(self, order: QueueKey) -> None:
        """Put a workload into the inadmissible set."""
        key = order[3]
        self._current.pop(key, None)
        self._inadmissible[key] = order

    def remove(self, key: str) -> None:
        if self.sticky == key:
            self.sticky = None
        self._current.pop(key, None)
        self._inadmissible.pop(key, None)

    def pop(self) -> str | None:
        """The key of the heap minimum, removed from the queue; None when the heap is empty."""
        sticky = self.sticky
        if sticky is not None and sticky in self._current:
            del self._current[sticky]
            return sticky
        heap = self._heap
        while heap:
            entry = heapq.heappop(heap)
            key = entry[3]
            if self._current.get(key) == entry[4]:
                del self._current[key]
                return key
        return None

    def requeue_inadmissible(self, keep_parked: Callable[[str], bool]) -> int:
        """Move every inadmissible workload back to the heap unless ``keep_parked(key)``.

        Returns how many moved.
        """
        moved = 0
        for key, order in list(self._inadmissible.items()):
            if keep_parked(key):
                continue
            self.push(order)
            moved += 1
        return moved

    def _compact(self) -> None:
        self._heap = [entry for entry in self._heap if self._current.get(entry[3]) == entry[4]]
        heapq.heapify(self._heap)


__all__ = ["ClusterQueueQueue"]
