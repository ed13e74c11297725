"""The pending queues: each ClusterQueue's queue, what a cycle takes from it and gives back.

See docs/scheduling.md#queues, docs/scheduling.md#queue-order and
docs/scheduling.md#requeueing.

One ``queues.ClusterQueueQueue`` (active heap + inadmissible set) per
ClusterQueue, holding the workloads the queue manager routed there.  A cycle
pops heads (``pop_head``), puts back those it did not admit, parked as
inadmissible or to the heap (``put_back``), and takes the admitted ones out
(``admitted``).  Parked workloads come back when a requeue event names their
ClusterQueue or its cohort tree: the engine requests those between cycles
(``requeue_tree``, ``requeue_cluster_queue``) and the next cycle takes them
(``take_requeue_events``).

Under admission fair sharing (docs/concepts.md#admission-fair-sharing) a
ClusterQueue in ``UsageBasedAdmissionFairSharing`` mode hands out the head
of its LocalQueue with the least usage first (``local_queue_usage``); an
admission from it charges its LocalQueue the entry penalty in the ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scheduler.core.admission_fair_sharing import UsageLedger
from scheduler.core.queues import ClusterQueueQueue, Rank
from scheduler.core.resources import to_quantity
from scheduler.core.state import WorkloadRecord


class PendingQueues:
    """The ClusterQueues' queues of pending workloads and their requeue requests."""

    def __init__(
        self, records: Mapping[str, WorkloadRecord], fair_usage: UsageLedger | None = None
    ) -> None:
        self._records = records
        self._fair_usage = fair_usage
        """Admission fair sharing's ledger; None when it is off."""
        self._usage_based: set[str] = set()
        """ClusterQueues in ``UsageBasedAdmissionFairSharing`` mode."""
        self._queues: dict[str, ClusterQueueQueue] = {}
        self._requeue_trees: set[str] = set()
        self._requeue_cluster_queues: set[str] = set()

    # --- ClusterQueues and their order ---------------------------------------------

    def add(self, name: str, *, usage_based: bool) -> None:
        """Make sure ``name`` has a queue (an existing one keeps its workloads), ordered by
        LocalQueue usage when ``usage_based`` (the ClusterQueue's ``admissionScope``)."""
        if usage_based:
            self._usage_based.add(name)
        else:
            self._usage_based.discard(name)
        self._queue_of(name).rank = self.local_queue_usage(name)

    def local_queue_usage(self, cluster_queue: str) -> Rank | None:
        """LocalQueue key -> its usage, for a ClusterQueue that orders by it; else None."""
        ledger = self._fair_usage
        if ledger is None or cluster_queue not in self._usage_based:
            return None
        return ledger.usage

    def _queue_of(self, name: str) -> ClusterQueueQueue:
        """``name``'s queue, made (ordered by LocalQueue usage if it is so set) when missing."""
        queue = self._queues.get(name)
        if queue is None:
            queue = self._queues[name] = ClusterQueueQueue()
            queue.rank = self.local_queue_usage(name)
        return queue

    # --- queueing ------------------------------------------------------------------

    def push(self, record: WorkloadRecord, cluster_queue: str) -> None:
        """Queue ``record`` in ``cluster_queue``'s heap, keyed afresh (out of any other queue)."""
        self.unqueue(record)
        queue = self._queue_of(cluster_queue)
        record.queued_in = cluster_queue
        queue.push(record.queue_order(), record.local_queue_key())

    def unqueue(self, record: WorkloadRecord) -> None:
        """Take ``record`` out of the queue that holds it, if any."""
        if record.queued_in is not None:
            queue = self._queues.get(record.queued_in)
            if queue is not None:
                queue.remove(record.key)
            record.queued_in = None

    def requeue_one(self, record: WorkloadRecord) -> None:
        """Re-key ``record`` in its heap (its priority or spec changed)."""
        if record.queued_in is not None:
            self._queues[record.queued_in].push(record.queue_order(), record.local_queue_key())

    # --- what the cycle does with heads -------------------------------------------

    def pop_head(self, cluster_queue: str) -> WorkloadRecord | None:
        """The head of ``cluster_queue``'s heap, taken out of the queue."""
        key = self._queues[cluster_queue].pop()
        if key is None:
            return None
        record = self._records[key]
        record.queued_in = None
        return record

    def put_back(
        self, record: WorkloadRecord, cluster_queue: str, *, park: bool, sticky: bool
    ) -> None:
        """Return a head that was not admitted: parked as inadmissible, or to the heap.

        ``sticky`` keeps it at the head of its BestEffortFIFO heap.
        """
        queue = self._queues[cluster_queue]
        record.queued_in = cluster_queue
        if park:
            queue.park(record.queue_order(), record.local_queue_key())
            return
        queue.push(record.queue_order(), record.local_queue_key())
        if sticky:
            queue.sticky = record.key

    def admitted(self, record: WorkloadRecord, cluster_queue: str) -> None:
        """``record`` was admitted from ``cluster_queue``: it leaves the queue, sticky no more.

        In a ClusterQueue ordered by LocalQueue usage, its LocalQueue pays the entry
        penalty of what it holds now (``record.usage``, charged before).
        """
        self._queues[cluster_queue].remove(record.key)
        if self.local_queue_usage(cluster_queue) is not None and self._fair_usage is not None:
            holds = held(record, cluster_queue)
            self._fair_usage.admitted(record.local_queue_key(), record.key, holds)

    def requeue_inadmissible(self, cluster_queue: str, keep_parked: Callable[[str], bool]) -> int:
        """Move ``cluster_queue``'s inadmissible workloads back to the heap; how many moved.

        Those for which ``keep_parked(key)`` is true stay parked.
        """
        queue = self._queues.get(cluster_queue)
        return queue.requeue_inadmissible(keep_parked) if queue is not None else 0

    # --- requeue events ------------------------------------------------------------

    def requeue_tree(self, name: str) -> None:
        """Request a requeue of every CQ in the tree of CQ or cohort ``name``."""
        self._requeue_trees.add(name)

    def requeue_cluster_queue(self, name: str) -> None:
        """Request a requeue of one ClusterQueue."""
        self._requeue_cluster_queues.add(name)

    def take_requeue_events(self) -> tuple[set[str], set[str]]:
        """(trees, ClusterQueues) requested since the last call; the requests are cleared."""
        trees, cluster_queues = self._requeue_trees, self._requeue_cluster_queues
        self._requeue_trees, self._requeue_cluster_queues = set(), set()
        return trees, cluster_queues

    # --- reading -------------------------------------------------------------------

    def count(self, cluster_queue: str) -> int:
        """``pendingWorkloads`` of the ClusterQueue: active + inadmissible: pure."""
        queue = self._queues.get(cluster_queue)
        return len(queue) if queue is not None else 0

    def queue(self, cluster_queue: str) -> ClusterQueueQueue | None:
        """The queue of ``cluster_queue`` itself, for reading (tests, diagnostics): pure."""
        return self._queues.get(cluster_queue)

    def position(self, record: WorkloadRecord) -> tuple[int, int] | None:
        """(1-based position, pending count) in its ClusterQueue's queue order; None if not queued.

        Pure; O(log n) (the queue keeps its ranking, ``queues.Ranking``), O(LocalQueues x
        log n) in a ClusterQueue ordered by LocalQueue usage.
        """
        queue = self._queues.get(record.cluster_queue or "")
        if queue is None:
            return None
        place = queue.ranking.position(record.key, queue.first)
        return None if place is None else (place + 1, len(queue))


def held(record: WorkloadRecord, cluster_queue: str | None = None) -> dict[str, int]:
    """What ``record`` holds, per resource name over its flavors, in nano-units: pure."""
    totals: dict[str, int] = {}
    for cq, usage in (record.usage or {}).items():
        if cluster_queue is not None and cq != cluster_queue:
            continue
        for (_, resource), amount in usage.items():
            totals[resource] = totals.get(resource, 0) + to_quantity(resource, amount).nanos
    return totals


__all__ = ["PendingQueues", "held"]
