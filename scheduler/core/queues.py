"""Pending workloads of one ClusterQueue: an active heap and an inadmissible set.

See docs/scheduling.md#queues.

The heap holds ``(queue key..., seq)`` tuples and is lazily pruned: removing
or re-keying a workload only forgets its current ``seq``; a popped entry
whose ``seq`` is no longer current is skipped.  Pushing and popping are
O(log n), removal O(1), and nothing ever scans the whole queue during a
cycle.  The inadmissible set is an insertion-ordered dict, scanned only when
a requeue event moves its workloads back.

Each workload is also pushed to the heap of its LocalQueue, so that under
admission fair sharing (docs/concepts.md#admission-fair-sharing) ``pop`` can
take the head of the LocalQueue with the least usage by comparing one head
per LocalQueue, never every workload.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator

from scheduler.core.ordering import QueueKey

Entry = tuple[int, object, str, str, int]
Rank = Callable[[str], float]
"""LocalQueue key -> its admission fair sharing usage (smaller first)."""


class ClusterQueueQueue:
    """Active heap + inadmissible set of one ClusterQueue."""

    __slots__ = ("_heap", "_groups", "_group_of", "_current", "_inadmissible", "_counter", "sticky")

    def __init__(self) -> None:
        self._heap: list[Entry] = []
        self._groups: dict[str, list[Entry]] = {}
        """LocalQueue key -> the heap of its workloads (same entries as ``_heap``)."""
        self._group_of: dict[str, str] = {}
        """Workload key -> its LocalQueue key, as last pushed or parked."""
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

    def push(self, order: QueueKey, group: str = "") -> None:
        """Put a workload (by its queue key) into the active heap, replacing any earlier place.

        ``group`` is its LocalQueue key.
        """
        key = order[3]
        self._inadmissible.pop(key, None)
        self._counter += 1
        self._current[key] = self._counter
        self._group_of[key] = group
        entry = (*order, self._counter)
        heapq.heappush(self._heap, entry)
        heapq.heappush(self._groups.setdefault(group, []), entry)
        if len(self._heap) > 2 * len(self._current) + 64:
            self._compact()

    def park(self, order: QueueKey, group: str = "") -> None:
        """Put a workload into the inadmissible set."""
        key = order[3]
        self._current.pop(key, None)
        self._inadmissible[key] = order
        self._group_of[key] = group

    def remove(self, key: str) -> None:
        if self.sticky == key:
            self.sticky = None
        self._current.pop(key, None)
        self._inadmissible.pop(key, None)
        self._group_of.pop(key, None)

    def group_of(self, key: str) -> str:
        return self._group_of.get(key, "")

    def pop(self, rank: Rank | None = None) -> str | None:
        """The key of the heap minimum, removed from the queue; None when the heap is empty.

        With ``rank``, the minimum of (rank of its LocalQueue, queue key) instead; the
        sticky workload then wins only among equal ranks.
        """
        if rank is not None:
            return self._pop_ranked(rank)
        sticky = self.sticky
        if sticky is not None and sticky in self._current:
            del self._current[sticky]
            self._group_of.pop(sticky, None)
            return sticky
        heap = self._heap
        while heap:
            entry = heapq.heappop(heap)
            key = entry[3]
            if self._current.get(key) == entry[4]:
                del self._current[key]
                self._group_of.pop(key, None)
                return key
        return None

    def _pop_ranked(self, rank: Rank) -> str | None:
        best: tuple[float, bool, Entry] | None = None
        for group, heap in list(self._groups.items()):
            while heap and self._current.get(heap[0][3]) != heap[0][4]:
                heapq.heappop(heap)
            if not heap:
                del self._groups[group]
                continue
            head = heap[0]
            candidate = (rank(group), head[3] != self.sticky, head)
            if best is None or candidate < best:
                best = candidate
        sticky = self.sticky
        if sticky is not None and sticky in self._current:
            order = (rank(self._group_of.get(sticky, "")), False)
            if best is None or order <= best[:2]:
                del self._current[sticky]
                self._group_of.pop(sticky, None)
                return sticky
        if best is None:
            return None
        key = best[2][3]
        del self._current[key]
        self._group_of.pop(key, None)
        return key

    def requeue_inadmissible(self, keep_parked: Callable[[str], bool]) -> int:
        """Move every inadmissible workload back to the heap unless ``keep_parked(key)``.

        Returns how many moved.
        """
        moved = 0
        for key, order in list(self._inadmissible.items()):
            if keep_parked(key):
                continue
            self.push(order, self._group_of.get(key, ""))
            moved += 1
        return moved

    def _compact(self) -> None:
        def live(heap: list[Entry]) -> list[Entry]:
            kept = [entry for entry in heap if self._current.get(entry[3]) == entry[4]]
            heapq.heapify(kept)
            return kept

        self._heap = live(self._heap)
        self._groups = {group: kept for group, heap in self._groups.items() if (kept := live(heap))}


__all__ = ["ClusterQueueQueue"]
