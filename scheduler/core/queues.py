"""Pending workloads of one ClusterQueue: an active heap and an inadmissible set.

See docs/scheduling.md#queues.

The heap holds ``(queue key..., seq)`` tuples and is lazily pruned: removing
or re-keying a workload only forgets its current ``seq``; a popped entry
whose ``seq`` is no longer current is skipped.  Pushing and popping are
O(log n), removal O(1), and nothing ever scans the whole queue during a
cycle.  The inadmissible set is an insertion-ordered dict, scanned only when
a requeue event moves its workloads back.

Beside them, every member (active or inadmissible) is kept in queue order in
a :class:`Ranking`: one sorted list for the whole queue and one per
LocalQueue, updated by bisection as members come and go.  It answers "where
is this workload, and who comes before it" (``kuota explain``, the
visibility API: docs/visibility.md#positions) in O(log n) and a page of the
order by slicing, without ever sorting the queue; a member entering or
leaving costs a bisection and a list insertion or deletion (a memory move,
tens of microseconds at 50,000 members).

Under admission fair sharing (docs/concepts.md#admission-fair-sharing) a
ClusterQueue hands out the head of the LocalQueue with the least usage
first.  Each workload is then also pushed to the heap of its LocalQueue, so
that ``pop`` compares one head per LocalQueue, never every workload; the
ranking orders its LocalQueues by the same usage when asked, so positions
follow the order of ``pop``.  The usage changes with time and admissions,
which is why it is read when asked (``rank``), never stored in a key.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, islice

from scheduler.core.ordering import QueueKey

Entry = tuple[int, object, str, str, int]
"""A heap entry: the queue key and the sequence number of the push."""
Rank = Callable[[str], float]
"""LocalQueue key -> its admission fair sharing usage (smaller first)."""


class Ranking:
    """The members of one queue in queue order, overall and per group (LocalQueue).

    ``first`` is the member that comes before every other whatever its key
    (BestEffortFIFO's sticky preemptor, docs/scheduling.md#queue-order), or None.

    With ``rank`` set (admission fair sharing), the whole queue's order is
    (usage of the member's group, ``first`` before the rest, queue key), as
    ``ClusterQueueQueue.pop`` hands them out; the order inside a group does
    not change.
    """

    __slots__ = ("_order", "_members", "_groups", "rank")

    def __init__(self) -> None:
        self._order: list[QueueKey] = []
        self._members: dict[str, tuple[QueueKey, str]] = {}
        self._groups: dict[str, list[QueueKey]] = {}
        self.rank: Rank | None = None

    def __len__(self) -> int:
        return len(self._order)

    def enter(self, order: QueueKey, group: str) -> None:
        """Rank ``order`` (its key is ``order[3]``) in ``group``, replacing its earlier rank."""
        key = order[3]
        known = self._members.get(key)
        if known == (order, group):
            return
        if known is not None:
            self.leave(key)
        self._members[key] = (order, group)
        insort(self._order, order)
        insort(self._groups.setdefault(group, []), order)

    def leave(self, key: str) -> None:
        """Forget ``key`` (nothing if it is not ranked)."""
        known = self._members.pop(key, None)
        if known is None:
            return
        order, group = known
        del self._order[bisect_left(self._order, order)]
        members = self._groups[group]
        del members[bisect_left(members, order)]
        if not members:
            del self._groups[group]

    def group_of(self, key: str) -> str | None:
        known = self._members.get(key)
        return known[1] if known is not None else None

    def group_size(self, group: str) -> int:
        return len(self._groups.get(group, ()))

    def position(self, key: str, first: str | None) -> int | None:
        """0-based place of ``key`` in the whole queue; None if not ranked: pure."""
        known = self._members.get(key)
        if known is None:
            return None
        if self.rank is not None:
            return self._ranked_place(known, first, self.rank)
        return self._place(self._order, known[0], first)

    def group_position(self, key: str, first: str | None) -> int | None:
        """0-based place of ``key`` among the members of its group; None if not ranked: pure."""
        known = self._members.get(key)
        if known is None:
            return None
        order, group = known
        ahead = first if first is not None and self.group_of(first) == group else None
        return self._place(self._groups[group], order, ahead)

    def keys(self, start: int, stop: int, first: str | None) -> list[str]:
        """Keys of the whole queue's places ``start`` to ``stop`` (exclusive), in order: pure."""
        if self.rank is not None:
            return self._ranked_keys(start, stop, first, self.rank)
        return [order[3] for order in self._window(self._order, start, stop, first)]

    def group_keys(self, group: str, start: int, stop: int, first: str | None) -> list[str]:
        """Keys of ``group``'s places ``start`` to ``stop`` (exclusive), in order: pure."""
        members = self._groups.get(group, [])
        ahead = first if first is not None and self.group_of(first) == group else None
        return [order[3] for order in self._window(members, start, stop, ahead)]

    def _classes(self, rank: Rank) -> list[tuple[float, list[str]]]:
        """The groups by usage, equal usages together, smallest first: pure."""
        by_usage: dict[float, list[str]] = {}
        for group in self._groups:
            by_usage.setdefault(rank(group), []).append(group)
        return sorted(by_usage.items())

    def _ranked_place(self, known: tuple[QueueKey, str], first: str | None, rank: Rank) -> int:
        """Place of a member in (group usage, ``first``, queue key) order: pure.

        O(groups × log n): the groups with a smaller usage count whole, those with
        the same usage by bisection.
        """
        order, group = known
        usage = rank(group)
        first_known = self._members.get(first) if first is not None else None
        if first_known is not None and rank(first_known[1]) != usage:
            first_known = None
        ahead = sum(len(members) for other, members in self._groups.items() if rank(other) < usage)
        if first_known is not None and first_known[0] == order:
            return ahead
        place = ahead if first_known is None else ahead + 1
        for other, members in self._groups.items():
            if rank(other) == usage:
                place += bisect_left(members, order)
                if first_known is not None and first_known[1] == other:
                    place -= first_known[0] < order
        return place

    def _ranked_keys(self, start: int, stop: int, first: str | None, rank: Rank) -> list[str]:
        """Places ``start``..``stop`` in (group usage, ``first``, queue key) order: pure."""
        start, stop = max(start, 0), max(stop, 0)
        first_known = self._members.get(first) if first is not None else None
        keys: list[str] = []
        passed = 0
        for usage, groups in self._classes(rank):
            if passed >= stop:
                break
            size = sum(len(self._groups[group]) for group in groups)
            if passed + size <= start:
                passed += size
                continue
            lead: list[QueueKey] = []
            if first_known is not None and rank(first_known[1]) == usage:
                lead = [first_known[0]]
            merged = heapq.merge(*(self._groups[group] for group in groups))
            rest = (order for order in merged if not lead or order != lead[0])
            members = chain(lead, rest)
            low = max(start - passed, 0)
            high = min(stop - passed, size)
            keys.extend(order[3] for order in islice(members, low, high))
            passed += size
        return keys

    def _place(self, ranked: list[QueueKey], order: QueueKey, first: str | None) -> int:
        index = bisect_left(ranked, order)
        if first is None:
            return index
        if first == order[3]:
            return 0
        first_index = bisect_left(ranked, self._members[first][0])
        return index + 1 if index < first_index else index

    def _window(
        self, ranked: list[QueueKey], start: int, stop: int, first: str | None
    ) -> Sequence[QueueKey]:
        """Places ``start``..``stop`` of ``ranked`` with ``first`` moved to place 0: pure."""
        start, stop = max(start, 0), min(max(stop, 0), len(ranked))
        if first is None:
            return ranked[start:stop]
        first_order = self._members[first][0]
        first_index = bisect_left(ranked, first_order)
        window: list[QueueKey] = [first_order] if start == 0 < stop else []
        # Places 1..first_index hold ranked[0..first_index-1]; later places are unmoved.
        low, high = max(start, 1), min(stop, first_index + 1)
        if low < high:
            window.extend(ranked[low - 1 : high - 1])
        low = max(start, first_index + 1)
        if low < stop:
            window.extend(ranked[low:stop])
        return window


class ClusterQueueQueue:
    """Active heap + inadmissible set of one ClusterQueue, and its members' ranking.

    ``group`` (push, park) is the member's LocalQueue, ``namespace/name``: the
    ranking orders each LocalQueue's members apart too, and each LocalQueue has
    a heap of its own for admission fair sharing (``rank``).
    """

    __slots__ = ("_heap", "_groups", "_current", "_inadmissible", "_counter", "sticky", "ranking")

    def __init__(self) -> None:
        self._heap: list[Entry] = []
        self._groups: dict[str, list[Entry]] = {}
        """LocalQueue key -> the heap of its workloads (the same entries as ``_heap``)."""
        self._current: dict[str, int] = {}
        self._inadmissible: dict[str, QueueKey] = {}
        self._counter = 0
        self.sticky: str | None = None
        """BestEffortFIFO's sticky preemptor: popped first while it is in the heap."""
        self.ranking = Ranking()
        """Every member in queue order (read it through ``first``: the sticky one leads)."""

    def __len__(self) -> int:
        """``pendingWorkloads`` of the CQ: active + inadmissible."""
        return len(self._current) + len(self._inadmissible)

    @property
    def rank(self) -> Rank | None:
        """LocalQueue usage, when this queue orders by it (admission fair sharing); else None."""
        return self.ranking.rank

    @rank.setter
    def rank(self, rank: Rank | None) -> None:
        self.ranking.rank = rank

    @property
    def active_count(self) -> int:
        return len(self._current)

    @property
    def first(self) -> str | None:
        """The member ranked before every other (the sticky preemptor while it is queued)."""
        sticky = self.sticky
        return sticky if sticky is not None and sticky in self._current else None

    def __contains__(self, key: str) -> bool:
        return key in self._current or key in self._inadmissible

    def is_inadmissible(self, key: str) -> bool:
        return key in self._inadmissible

    def keys(self) -> Iterator[str]:
        yield from self._current
        yield from self._inadmissible

    def push(self, order: QueueKey, group: str) -> None:
        """Put a workload (by its queue key) into the active heap, replacing any earlier place."""
        key = order[3]
        self._inadmissible.pop(key, None)
        self._counter += 1
        self._current[key] = self._counter
        entry = (*order, self._counter)
        heapq.heappush(self._heap, entry)
        heapq.heappush(self._groups.setdefault(group, []), entry)
        self.ranking.enter(order, group)
        if len(self._heap) > 2 * len(self._current) + 64:
            self._compact()

    def park(self, order: QueueKey, group: str) -> None:
        """Put a workload into the inadmissible set."""
        key = order[3]
        self._current.pop(key, None)
        self._inadmissible[key] = order
        self.ranking.enter(order, group)

    def remove(self, key: str) -> None:
        if self.sticky == key:
            self.sticky = None
        self._current.pop(key, None)
        self._inadmissible.pop(key, None)
        self.ranking.leave(key)

    def pop(self) -> str | None:
        """The key of the heap minimum, removed from the queue; None when the heap is empty.

        With ``rank``, the minimum of (usage of its LocalQueue, queue key) instead; the
        sticky workload then leads only among equal usages (the ranking's order).
        """
        if self.rank is not None:
            return self._pop_ranked(self.rank)
        sticky = self.sticky
        if sticky is not None and sticky in self._current:
            del self._current[sticky]
            self.ranking.leave(sticky)
            return sticky
        heap = self._heap
        while heap:
            entry = heapq.heappop(heap)
            key = entry[3]
            if self._current.get(key) == entry[4]:
                del self._current[key]
                self.ranking.leave(key)
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
        sticky = self.first
        if sticky is not None:
            usage = rank(self.ranking.group_of(sticky) or "")
            if best is None or (usage, False) <= best[:2]:
                return self._take(sticky)
        return None if best is None else self._take(best[2][3])

    def _take(self, key: str) -> str:
        del self._current[key]
        self.ranking.leave(key)
        return key

    def requeue_inadmissible(self, keep_parked: Callable[[str], bool]) -> int:
        """Move every inadmissible workload back to the heap unless ``keep_parked(key)``.

        Returns how many moved.
        """
        moved = 0
        for key, order in list(self._inadmissible.items()):
            if keep_parked(key):
                continue
            self.push(order, self.ranking.group_of(key) or "")
            moved += 1
        return moved

    def _compact(self) -> None:
        def live(heap: list[Entry]) -> list[Entry]:
            kept = [entry for entry in heap if self._current.get(entry[3]) == entry[4]]
            heapq.heapify(kept)
            return kept

        self._heap = live(self._heap)
        self._groups = {group: kept for group, heap in self._groups.items() if (kept := live(heap))}


__all__ = ["ClusterQueueQueue", "Entry", "Rank", "Ranking"]
