"""Where heads go after a round, and what brings parked workloads back.

A head that was not admitted goes back to its ClusterQueue: parked in the
inadmissible set, or pushed to the heap, by its requeue reason and the
queueing strategy (the ``_PARKS`` table; docs/scheduling.md#requeueing).
Parked workloads stay parked until a requeue event names their ClusterQueue
or its cohort tree; each round first runs the events raised since the one
before.  It also reports, once, every workload whose queueing status
(docs/scheduling.md#queues: outside every queue, or in an inactive
ClusterQueue) changed.

These functions work on the cycle's narrow views (``cycle_inputs``) only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.cycle_inputs import CycleQueues, CycleQuota, CycleRouting
from scheduler.core.decisions import Decision
from scheduler.core.state import PENDING, WorkloadRecord

_PARKS: dict[str, tuple[bool, bool]] = {
    "NoFit": (True, False),
    "PreemptionNoCandidates": (True, False),
    "FailedAfterNomination": (False, False),
    "PendingPreemption": (False, False),
    "NamespaceMismatch": (True, True),
    "Generic": (True, False),
}
"""Requeue reason -> (parks under BestEffortFIFO?, parks under StrictFIFO?)."""


def return_head(
    queues: CycleQueues, record: WorkloadRecord, cq: ClusterQueueInfo, requeue: str
) -> bool:
    """Put a head that was not admitted back; True when it was parked as inadmissible."""
    best_effort_parks, strict_parks = _PARKS[requeue]
    park = strict_parks if cq.strict_fifo else best_effort_parks
    if park and not cq.strict_fifo and record.scan is not None and record.scan.untried_remain:
        park = False  # untried flavors remain: back to the heap (flavor-scan position)
    sticky = not park and requeue == "PendingPreemption" and not cq.strict_fifo
    queues.put_back(record, cq.name, park=park, sticky=sticky)
    return park


def execute_requeues(
    quota: CycleQuota,
    queues: CycleQueues,
    records: Mapping[str, WorkloadRecord],
    now: datetime,
) -> bool:
    """Run the requeue events raised since the last round; True if a workload moved.

    A parked workload stays parked while its backoff (``requeueAt``) lies
    ahead or its namespace no longer matches the ClusterQueue's selector.
    """
    trees, names = queues.take_requeue_events()
    for name in trees:
        members = quota.tree.tree_members(name)
        names.update(members if members else ([name] if name in quota.cluster_queues else []))
    moved = 0
    for name in sorted(names):
        info = quota.cluster_queues.get(name)
        if info is None:
            continue

        def keep_parked(key: str, info: ClusterQueueInfo = info) -> bool:
            record = records[key]
            if record.requeue_at is not None and record.requeue_at > now:
                return True
            return not quota.namespace_matches(info, record.namespace)

        moved += queues.requeue_inadmissible(name, keep_parked)
    return moved > 0


def report_unqueued(routing: CycleRouting, records: Mapping[str, WorkloadRecord]) -> list[Decision]:
    """Pending decisions for workloads whose queueing status changed since the last round."""
    decisions: list[Decision] = []
    for key in routing.take_to_report():
        record = records.get(key)
        if record is None or record.state != PENDING:
            continue
        pending = routing.pending_status(record)
        if pending is not None:
            decisions.append(pending)
    return decisions


__all__ = ["execute_requeues", "report_unqueued", "return_head"]
