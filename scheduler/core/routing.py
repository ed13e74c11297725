"""LocalQueue -> ClusterQueue routing and the workload controller's texts (scheduling.md 3.1).

A workload is queued in the pending structure of the CQ its LocalQueue names,
unless it cannot be: deactivated, LocalQueue missing or stopped, CQ missing,
admission-gated.  Those workloads sit outside every queue with the reason and
message of the 3.1 table; they are routed again whenever their LocalQueue or
ClusterQueue changes (indexes by LocalQueue keep that O(affected)).
Workloads queued in an inactive CQ stay queued (they count as pending) but
are never popped (3.11).

``Router`` is a mixin of ``Engine``; it owns the queues and the indexes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.core.decisions import Pending
from scheduler.core.queues import ClusterQueueQueue
from scheduler.core.state import ADMITTED, FINISHED, WorkloadRecord

if TYPE_CHECKING:
    from scheduler.core.engine import Engine


class Router:
    def __init__(self) -> None:
        self.local_queues: dict[str, tuple[str, str]] = {}
        """``namespace/name`` -> (ClusterQueue name, stopPolicy)."""
        self.queues: dict[str, ClusterQueueQueue] = {}
        self.by_local_queue: dict[str, set[str]] = {}
        self.by_priority_ref: dict[tuple[str, str], set[str]] = {}
        self.unqueued_status: dict[str, tuple[str, str]] = {}
        """Workloads outside every queue: key -> (reason, message) of 3.1."""
        self.to_report: dict[str, None] = {}
        """Workloads whose controller status changed since the last cycle reported it."""

    # --- indexes -------------------------------------------------------------

    def index_add(self: Engine, record: WorkloadRecord) -> None:  # type: ignore[misc]
        if record.queue_name:
            self.by_local_queue.setdefault(f"{record.namespace}/{record.queue_name}", set()).add(
                record.key
            )
        if record.priority_ref is not None:
            self.by_priority_ref.setdefault(record.priority_ref, set()).add(record.key)

    def index_remove(self: Engine, record: WorkloadRecord) -> None:  # type: ignore[misc]
        if record.queue_name:
            self.by_local_queue.get(f"{record.namespace}/{record.queue_name}", set()).discard(
                record.key
            )
        if record.priority_ref is not None:
            self.by_priority_ref.get(record.priority_ref, set()).discard(record.key)
        self.unqueued_status.pop(record.key, None)
        self.to_report.pop(record.key, None)

    # --- routing -------------------------------------------------------------

    def target(self: Engine, record: WorkloadRecord) -> tuple[str | None, str | None, str]:  # type: ignore[misc]
        """(CQ to queue in, reason, message): the CQ is None when it cannot be queued (3.1 table): pure."""
        if not record.active:
            return None, "Deactivated", "The workload is deactivated"
        lq_key = f"{record.namespace}/{record.queue_name or ''}"
        lq = self.local_queues.get(lq_key)
        if lq is None:
            return None, "Misconfigured", f"LocalQueue {record.queue_name or ''} doesn't exist"
        cq_name, stop_policy = lq
        if stop_policy != "None":
            return None, "Suspended", f"LocalQueue {record.queue_name} is inactive"
        if cq_name not in self.cluster_queues or cq_name in self.terminating:
            return None, "Misconfigured", f"ClusterQueue {cq_name} doesn't exist"
        if record.gate:
            return None, "AdmissionGated", f"Admission is gated by: {record.gate}"
        return cq_name, None, ""

    def route(self: Engine, record: WorkloadRecord, *, force_heap: bool = False) -> None:  # type: ignore[misc]
        """Queue ``record`` where it belongs now (or take it out of every queue)."""
        if record.state in (ADMITTED, FINISHED):
            return
        cq_name, reason, message = self.target(record)
        if cq_name is None:
            self.unqueue(record)
            record.cluster_queue = None
            assert reason is not None
            if self.unqueued_status.get(record.key) != (reason, message):
                self.unqueued_status[record.key] = (reason, message)
                self.to_report[record.key] = None
            return
        if self.unqueued_status.pop(record.key, None) is not None:
            record.tried = False
        record.cluster_queue = cq_name
        if self.inactive_reasons(cq_name):
            self.to_report[record.key] = None
        if record.queued_in == cq_name and not force_heap:
            return
        self.unqueue(record)
        queue = self.queues.setdefault(cq_name, ClusterQueueQueue())
        record.queued_in = cq_name
        queue.push(record.queue_order())

    def unqueue(self: Engine, record: WorkloadRecord) -> None:  # type: ignore[misc]
        if record.queued_in is not None:
            queue = self.queues.get(record.queued_in)
            if queue is not None:
                queue.remove(record.key)
            record.queued_in = None

    def requeue_one(self: Engine, record: WorkloadRecord) -> None:  # type: ignore[misc]
        """Re-key ``record`` in its heap (its priority or spec changed, 3.7)."""
        if record.queued_in is not None:
            self.queues[record.queued_in].push(record.queue_order())

    def reroute_local_queue(self: Engine, lq_key: str) -> None:  # type: ignore[misc]
        for key in sorted(self.by_local_queue.get(lq_key, ())):
            self.route(self.workloads[key])

    def reroute_cluster_queue(self: Engine, cq_name: str) -> None:  # type: ignore[misc]
        for lq_key, (target, _) in sorted(self.local_queues.items()):
            if target == cq_name:
                self.reroute_local_queue(lq_key)

    def pending_status(self: Engine, record: WorkloadRecord) -> Pending | None:  # type: ignore[misc]
        """A pending workload's status as ``QuotaReserved=False`` shows it; None before any attempt: pure."""
        key, cq = record.key, record.cluster_queue
        unqueued = self.unqueued_status.get(key)
        if unqueued is not None:
            return Pending(key, cq, *unqueued)
        if cq is not None and self.inactive_reasons(cq):
            return Pending(key, cq, "Suspended", f"ClusterQueue {cq} is inactive")
        if record.tried and record.reason is not None:
            return Pending(
                key, cq, record.reason, record.message, record.shortages, record.blockers
            )
        return None


__all__ = ["Router"]
