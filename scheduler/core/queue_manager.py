"""The queue manager: where each pending workload waits.

See docs/scheduling.md#queues, docs/scheduling.md#queue-order and
docs/scheduling.md#requeueing.

A workload is queued in the pending structure of the ClusterQueue its
LocalQueue names (``queues.ClusterQueueQueue``: active heap + inadmissible
set), unless it cannot be: deactivated, LocalQueue missing or stopped,
ClusterQueue missing, admission-gated.  Those workloads sit outside every
queue with the reason and message of the docs' table, reported once per change
(``take_to_report``); they are routed again whenever their LocalQueue or
ClusterQueue changes, and indexes by LocalQueue (and by priority class, for
priority changes) keep that O(affected).  Under admission fair sharing
(``fair_usage``, docs/concepts.md#admission-fair-sharing) a ClusterQueue in
``UsageBasedAdmissionFairSharing`` mode hands out the head of its LocalQueue
with the least usage first; the manager keeps the usage ledger up to date
with each admission and each sample.  Workloads queued in an inactive
ClusterQueue stay queued (they count as pending) but are never popped
(docs/scheduling.md#inactive-clusterqueues).

Requeue events are collected here between cycles (``requeue_tree``,
``requeue_cluster_queue``) and taken by the next cycle.

The manager reads the quota side through the two questions of
``ClusterQueueView`` only, and workloads through the engine's record store;
it never imports the cache or the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Protocol

from scheduler.core.admission_fair_sharing import UsageLedger
from scheduler.core.decisions import Pending
from scheduler.core.queues import ClusterQueueQueue, Rank
from scheduler.core.resources import to_quantity
from scheduler.core.state import ADMITTED, FINISHED, WorkloadRecord

PriorityRef = tuple[str, str]
"""(kind, name) of a PriorityClass or WorkloadPriorityClass."""


class ClusterQueueView(Protocol):
    """What routing needs to know about ClusterQueues (``QuotaCache`` answers it)."""

    def exists(self, name: str) -> bool:
        """Known and not terminating."""
        ...

    def is_active(self, name: str) -> bool:
        """May admit (not inactive)."""
        ...


class QueueManager:
    """LocalQueue routing, the per-ClusterQueue queues and their indexes (module docstring)."""

    def __init__(
        self,
        cluster_queues: ClusterQueueView,
        records: Mapping[str, WorkloadRecord],
        fair_usage: UsageLedger | None = None,
    ) -> None:
        self._cluster_queues = cluster_queues
        self._records = records
        self.fair_usage = fair_usage
        """Admission fair sharing's ledger; None when it is off."""
        self._usage_based: set[str] = set()
        """ClusterQueues in ``UsageBasedAdmissionFairSharing`` mode."""
        self._local_queues: dict[str, tuple[str, str]] = {}
        """``namespace/name`` -> (ClusterQueue name, stopPolicy)."""
        self._queues: dict[str, ClusterQueueQueue] = {}
        self._by_local_queue: dict[str, set[str]] = {}
        self._by_priority_ref: dict[PriorityRef, set[str]] = {}
        self._unqueued: dict[str, tuple[str, str]] = {}
        """Workloads outside every queue: key -> (reason, message) (docs/scheduling.md#queues)."""
        self._to_report: dict[str, None] = {}
        """Workloads whose queueing status changed since the last cycle reported it."""
        self._requeue_trees: set[str] = set()
        self._requeue_cluster_queues: set[str] = set()
        self._draining: set[str] = set()
        """LocalQueues whose stopPolicy is ``HoldAndDrain``."""

    # --- LocalQueues and ClusterQueues --------------------------------------------

    def apply_local_queue(self, key: str, cluster_queue: str, stop_policy: str) -> None:
        """Insert or update LocalQueue ``namespace/name``; route its workloads again when its
        ClusterQueue or stop policy changed (not on a status update, which kuota itself
        writes about once a second)."""
        before = self._local_queues.get(key)
        self._local_queues[key] = (cluster_queue, stop_policy)
        if stop_policy == "HoldAndDrain":
            self._draining.add(key)
        else:
            self._draining.discard(key)
        if before != (cluster_queue, stop_policy):
            self.reroute_local_queue(key)

    def remove_local_queue(self, key: str) -> None:
        """Forget LocalQueue ``namespace/name``; its workloads become unqueued."""
        self._draining.discard(key)
        if self._local_queues.pop(key, None) is not None:
            self.reroute_local_queue(key)

    def set_usage_based(self, name: str, usage_based: bool) -> None:
        """Whether ClusterQueue ``name`` orders by LocalQueue usage (its ``admissionScope``)."""
        if usage_based:
            self._usage_based.add(name)
        else:
            self._usage_based.discard(name)
        queue = self._queues.get(name)
        if queue is not None:
            queue.rank = self._rank(name)

    def local_queue_usage(self, cluster_queue: str) -> Rank | None:
        """LocalQueue key -> its usage, for a ClusterQueue that orders by it; else None."""
        return self._rank(cluster_queue)

    def _rank(self, cluster_queue: str) -> Rank | None:
        ledger = self.fair_usage
        if ledger is None or cluster_queue not in self._usage_based:
            return None
        return ledger.usage

    def add_cluster_queue(self, name: str) -> None:
        """Make sure ``name`` has a queue (an existing one keeps its workloads)."""
        self._queue_of(name)

    def _queue_of(self, name: str) -> ClusterQueueQueue:
        """``name``'s queue, made (ordered by LocalQueue usage if it is so set) when missing."""
        queue = self._queues.get(name)
        if queue is None:
            queue = self._queues[name] = ClusterQueueQueue()
            queue.rank = self._rank(name)
        return queue

    def reroute_local_queue(self, key: str) -> None:
        """Route again every workload submitted to LocalQueue ``namespace/name``."""
        for workload in sorted(self._by_local_queue.get(key, ())):
            self.route(self._records[workload])

    def reroute_cluster_queue(self, name: str) -> None:
        """Route again every workload of every LocalQueue that points at ``name``."""
        for key, (target, _) in sorted(self._local_queues.items()):
            if target == name:
                self.reroute_local_queue(key)

    # --- indexes -------------------------------------------------------------------

    def index(self, record: WorkloadRecord) -> None:
        """Add ``record`` to the LocalQueue and priority-class indexes (by its current spec)."""
        if record.queue_name:
            self._by_local_queue.setdefault(record.local_queue_key(), set()).add(record.key)
        if record.priority_ref is not None:
            self._by_priority_ref.setdefault(record.priority_ref, set()).add(record.key)

    def unindex(self, record: WorkloadRecord) -> None:
        """Take ``record`` out of the indexes and forget its queueing status (spec change)."""
        if record.queue_name:
            self._by_local_queue.get(record.local_queue_key(), set()).discard(record.key)
        if record.priority_ref is not None:
            self._by_priority_ref.get(record.priority_ref, set()).discard(record.key)
        self._unqueued.pop(record.key, None)
        self._to_report.pop(record.key, None)

    def with_priority_ref(self, ref: PriorityRef) -> list[WorkloadRecord]:
        """Workloads whose priority comes from ``ref``, by key: pure."""
        return [self._records[key] for key in sorted(self._by_priority_ref.get(ref, ()))]

    # --- routing -------------------------------------------------------------------

    def target(self, record: WorkloadRecord) -> tuple[str | None, str | None, str]:
        """(CQ to queue in, reason, message); no CQ when it cannot be queued: pure."""
        if not record.active:
            return None, "Deactivated", "The workload is deactivated"
        if record.on_hold is not None:
            return None, "OnHold", record.on_hold
        local_queue = self._local_queues.get(record.local_queue_key())
        if local_queue is None:
            return None, "Misconfigured", f"LocalQueue {record.queue_name or ''} doesn't exist"
        cq_name, stop_policy = local_queue
        if stop_policy != "None":
            return None, "Suspended", f"LocalQueue {record.queue_name} is inactive"
        if not self._cluster_queues.exists(cq_name):
            return None, "Misconfigured", f"ClusterQueue {cq_name} doesn't exist"
        if record.gate:
            return None, "AdmissionGated", f"Admission is gated by: {record.gate}"
        return cq_name, None, ""

    def route(self, record: WorkloadRecord, *, force_heap: bool = False) -> None:
        """Queue ``record`` where it belongs now (or take it out of every queue).

        ``force_heap`` re-keys it in the heap even if it stays in the same
        ClusterQueue (its queue order or requests changed: it may fit now).
        """
        if record.state in (ADMITTED, FINISHED):
            return
        cq_name, reason, message = self.target(record)
        if cq_name is None:
            self.unqueue(record)
            record.cluster_queue = None
            assert reason is not None
            if self._unqueued.get(record.key) != (reason, message):
                self._unqueued[record.key] = (reason, message)
                self._to_report[record.key] = None
            return
        if self._unqueued.pop(record.key, None) is not None:
            record.forget_status()
        record.cluster_queue = cq_name
        if not self._cluster_queues.is_active(cq_name):
            self._to_report[record.key] = None
        if record.queued_in == cq_name and not force_heap:
            return
        self.unqueue(record)
        queue = self._queue_of(cq_name)
        record.queued_in = cq_name
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
        if self._rank(cluster_queue) is not None and self.fair_usage is not None:
            holds = held(record, cluster_queue)
            self.fair_usage.admitted(record.local_queue_key(), record.key, holds)

    def requeue_inadmissible(self, cluster_queue: str, keep_parked: Callable[[str], bool]) -> int:
        """Move ``cluster_queue``'s inadmissible workloads back to the heap; how many moved.

        Those for which ``keep_parked(key)`` is true stay parked.
        """
        queue = self._queues.get(cluster_queue)
        return queue.requeue_inadmissible(keep_parked) if queue is not None else 0

    # --- requeue events and reports ----------------------------------------------

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

    def draining_local_queues(self) -> dict[str, set[str]]:
        """LocalQueues set to ``HoldAndDrain`` -> keys of the workloads submitted to them: pure."""
        return {key: self._by_local_queue.get(key, set()) for key in self._draining}

    def take_to_report(self) -> list[str]:
        """Keys whose queueing status changed since the last call (sorted); the list is cleared."""
        keys = sorted(self._to_report)
        self._to_report.clear()
        return keys

    # --- reading -------------------------------------------------------------------

    def pending_status(self, record: WorkloadRecord) -> Pending | None:
        """A pending workload's ``QuotaReserved=False`` status; None before any attempt: pure."""
        key, cq = record.key, record.cluster_queue
        unqueued = self._unqueued.get(key)
        if unqueued is not None:
            return Pending(key, cq, *unqueued)
        if cq is not None and not self._cluster_queues.is_active(cq):
            return Pending(key, cq, "Suspended", f"ClusterQueue {cq} is inactive")
        if record.reason is not None:
            return Pending(key, cq, record.reason, record.message, *record.details)
        return None

    def pending_count(self, cluster_queue: str) -> int:
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

    def local_queue_target(self, key: str) -> str | None:
        """The ClusterQueue LocalQueue ``namespace/name`` points at; None if it is unknown: pure."""
        known = self._local_queues.get(key)
        return known[0] if known is not None else None

    # --- admission fair sharing --------------------------------------------------

    def sample_fair_usage(self, now: datetime) -> None:
        """Sample every LocalQueue's usage that is due (docs/concepts.md#admission-fair-sharing).

        As Kueue's LocalQueue controller: only LocalQueues that are not stopped and
        whose ClusterQueue exists and is active.  A workload's penalty settles once
        it is admitted (or already finished), and goes when it never will be from
        this queue (deleted, moved, deactivated before admission).
        """
        ledger = self.fair_usage
        if ledger is None:
            return
        for key, (cluster_queue, stop_policy) in sorted(self._local_queues.items()):
            if stop_policy != "None" or not self._cluster_queues.is_active(cluster_queue):
                continue
            members = self.local_queue_members(key)
            admitted: dict[str, int] = {}
            for record in members:
                if record.state == ADMITTED and not record.awaiting_checks:
                    for name, amount in held(record).items():
                        admitted[name] = admitted.get(name, 0) + amount
            ledger.sample(key, admitted, self._penalty_fate(key), now)

    def _penalty_fate(self, local_queue: str) -> Callable[[str], str]:
        def fate(workload: str) -> str:
            record = self._records.get(workload)
            if record is None or record.local_queue_key() != local_queue:
                return "drop"
            if record.state == FINISHED:
                return "settle"  # it ran: only admitted workloads pay a penalty
            if record.state == ADMITTED:
                return "keep" if record.awaiting_checks else "settle"
            return "keep" if record.active else "drop"

        return fate

    def forget_fair_usage(self, key: str) -> None:
        """LocalQueue ``key`` is gone: so is its admission fair sharing history."""
        if self.fair_usage is not None:
            self.fair_usage.forget(key)

    def fair_usage_status(self, key: str) -> tuple[dict[str, int], datetime] | None:
        """LocalQueue ``key``'s consumed resources (nano-units) and last sample; None when
        admission fair sharing is off or it was never sampled: pure."""
        entry = self.fair_usage.entry(key) if self.fair_usage is not None else None
        if entry is None or entry.last_update is None:
            return None
        return dict(entry.consumed), entry.last_update

    def local_queue_members(self, key: str) -> list[WorkloadRecord]:
        """The workloads submitted to LocalQueue ``namespace/name``, by key: pure."""
        return [self._records[k] for k in sorted(self._by_local_queue.get(key, ()))]


def held(record: WorkloadRecord, cluster_queue: str | None = None) -> dict[str, int]:
    """What ``record`` holds, per resource name over its flavors, in nano-units: pure."""
    totals: dict[str, int] = {}
    for cq, usage in (record.usage or {}).items():
        if cluster_queue is not None and cq != cluster_queue:
            continue
        for (_, resource), amount in usage.items():
            totals[resource] = totals.get(resource, 0) + to_quantity(resource, amount).nanos
    return totals


__all__ = ["ClusterQueueView", "PriorityRef", "QueueManager", "held"]
