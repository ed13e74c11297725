"""The queue manager: where each pending workload waits.

See docs/scheduling.md#queues, docs/scheduling.md#queue-order and
docs/scheduling.md#requeueing.

A workload is queued in the pending structure of the ClusterQueue its
LocalQueue names (``pending``, a ``pending_queues.PendingQueues``: one active
heap + inadmissible set per ClusterQueue), unless it cannot be: deactivated,
LocalQueue missing or stopped, ClusterQueue missing, admission-gated.  Those
workloads sit outside every queue with the reason and message of the docs'
table, reported once per change (``take_to_report``); they are routed again
whenever their LocalQueue or ClusterQueue changes, and the indexes of
``local_queues`` (by LocalQueue, and by priority class for priority changes)
keep that O(affected).  Under admission fair sharing (``fair_usage``,
docs/concepts.md#admission-fair-sharing) the manager samples each
LocalQueue's usage into the ledger the pending queues order by.  Workloads
queued in an inactive ClusterQueue stay queued (they count as pending) but
are never popped (docs/scheduling.md#inactive-clusterqueues).

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
from scheduler.core.local_queues import LocalQueues
from scheduler.core.pending_queues import PendingQueues, held
from scheduler.core.state import ADMITTED, FINISHED, WorkloadRecord


class ClusterQueueView(Protocol):
    """What routing needs to know about ClusterQueues (``QuotaCache`` answers it)."""

    def exists(self, name: str) -> bool:
        """Known and not terminating."""
        ...

    def is_active(self, name: str) -> bool:
        """May admit (not inactive)."""
        ...


class QueueManager:
    """LocalQueue routing into the pending queues, and what it reports (module docstring)."""

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
        self.local_queues = LocalQueues(records)
        """The LocalQueues and the workload indexes (``local_queues``)."""
        self.pending = PendingQueues(records, fair_usage)
        """Each ClusterQueue's queue, and the requeue requests (``pending_queues``)."""
        self._unqueued: dict[str, tuple[str, str]] = {}
        """Workloads outside every queue: key -> (reason, message) (docs/scheduling.md#queues)."""
        self._to_report: dict[str, None] = {}
        """Workloads whose queueing status changed since the last cycle reported it."""

    # --- LocalQueues and ClusterQueues --------------------------------------------

    def apply_local_queue(self, key: str, cluster_queue: str, stop_policy: str) -> None:
        """Insert or update LocalQueue ``namespace/name``; route its workloads again when its
        ClusterQueue or stop policy changed (not on a status update, which kuota itself
        writes about once a second)."""
        if self.local_queues.apply(key, cluster_queue, stop_policy):
            self.reroute_local_queue(key)

    def remove_local_queue(self, key: str) -> None:
        """Forget LocalQueue ``namespace/name``; its workloads become unqueued, and its
        admission fair sharing history goes."""
        if self.local_queues.remove(key):
            self.reroute_local_queue(key)
        if self.fair_usage is not None:
            self.fair_usage.forget(key)

    def add_cluster_queue(self, name: str, *, usage_based: bool = False) -> None:
        """Make sure ``name`` has a queue (an existing one keeps its workloads), ordered by
        LocalQueue usage when ``usage_based`` (its ``admissionScope``)."""
        self.pending.add(name, usage_based=usage_based)

    def reroute_local_queue(self, key: str) -> None:
        """Route again every workload submitted to LocalQueue ``namespace/name``."""
        for record in self.local_queues.members(key):
            self.route(record)

    def reroute_cluster_queue(self, name: str) -> None:
        """Route again every workload of every LocalQueue that points at ``name``."""
        for key in self.local_queues.pointing_at(name):
            self.reroute_local_queue(key)

    # --- indexes -------------------------------------------------------------------

    def index(self, record: WorkloadRecord) -> None:
        """Add ``record`` to the LocalQueue and priority-class indexes (by its current spec)."""
        self.local_queues.index(record)

    def unindex(self, record: WorkloadRecord) -> None:
        """Take ``record`` out of the indexes and forget its queueing status (spec change)."""
        self.local_queues.unindex(record)
        self._unqueued.pop(record.key, None)
        self._to_report.pop(record.key, None)

    # --- routing -------------------------------------------------------------------

    def target(self, record: WorkloadRecord) -> tuple[str | None, str | None, str]:
        """(CQ to queue in, reason, message); no CQ when it cannot be queued: pure."""
        if not record.active:
            return None, "Deactivated", "The workload is deactivated"
        if record.on_hold is not None:
            return None, "OnHold", record.on_hold
        local_queue = self.local_queues.get(record.local_queue_key())
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
            self.pending.unqueue(record)
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
        self.pending.push(record, cq_name)

    # --- reports ------------------------------------------------------------------

    def draining_local_queues(self) -> dict[str, set[str]]:
        """LocalQueues set to ``HoldAndDrain`` -> keys of the workloads submitted to them: pure."""
        return self.local_queues.draining()

    def take_to_report(self) -> list[str]:
        """Keys whose queueing status changed since the last call (sorted); the list is cleared."""
        keys = sorted(self._to_report)
        self._to_report.clear()
        return keys

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
        for key, (cluster_queue, stop_policy) in self.local_queues.items():
            if stop_policy != "None" or not self._cluster_queues.is_active(cluster_queue):
                continue
            members = self.local_queues.members(key)
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


__all__ = ["ClusterQueueView", "QueueManager"]
