"""What the engine's state says, read out for status writes and the CLI (pure).

The two read-outs users see most: a Workload's state with the reason and
message of its condition (:func:`workload_state`), and a ClusterQueue's
counts, usage and ``Active`` condition (:func:`cluster_queue_status`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from scheduler.core.decisions import WorkloadKey
from scheduler.core.engine_types import ClusterQueueStatus, WorkloadState
from scheduler.core.fair_share import ZERO, Share, dominant_resource_share
from scheduler.core.pending_reasons import Blocker, Shortage
from scheduler.core.queue_manager import QueueManager
from scheduler.core.quota_cache import QuotaCache
from scheduler.core.resource_node import QuotaNode
from scheduler.core.state import ADMITTED, FINISHED, WorkloadRecord, inactive_message


def workload_state(record: WorkloadRecord, queues: QueueManager) -> WorkloadState:
    """What a workload's conditions say now (state, reason, message and their structure)."""
    state: Literal["Admitted", "Pending", "Finished"]
    admission, reason, message = record.admission, record.reason, record.message
    shortages: tuple[Shortage, ...] = ()
    blockers: tuple[Blocker, ...] = ()
    if record.state == ADMITTED:
        state = "Admitted"
        if record.evicted:
            reason, message = record.eviction_reason or "Preempted", record.eviction_message
        elif record.awaiting_checks:
            reason = "QuotaReserved"
            message = (
                f"Quota reserved in ClusterQueue {record.cluster_queue}, "
                "waiting for admission checks"
            )
        else:
            reason = "QuotaReserved"
            message = f"Quota reserved in ClusterQueue {record.cluster_queue}"
    elif record.state == FINISHED:
        state, reason, message = "Finished", None, ""
    else:
        state, admission = "Pending", ()
        pending = queues.pending_status(record)
        reason, message = (None, "") if pending is None else (pending.reason, pending.message)
        if pending is not None:
            shortages, blockers = pending.shortages, pending.blockers
    return WorkloadState(
        key=record.key,
        state=state,
        cluster_queue=record.cluster_queue,
        admission=admission,
        reason=reason,
        message=message,
        evictions=record.evictions,
        shortages=shortages,
        blockers=blockers,
        local_queue=record.queue_name,
    )


def cluster_queue_status(
    name: str,
    cache: QuotaCache,
    queues: QueueManager,
    records: Mapping[WorkloadKey, WorkloadRecord],
    *,
    fair_sharing: bool = False,
) -> ClusterQueueStatus:
    """Pending and admitted counts, usage, borrowing, the ``Active`` condition and,
    with fair sharing on, the weighted share.

    See docs/scheduling.md#queue-status.
    """
    cache.ensure_forest()
    used, borrowed = cache.usage_report(name)
    reserving = cache.admitted.get(name, set())
    # Only a queue that lists checks has workloads waiting for them (a removed check's
    # workloads get their list synced at once: ``scheduler.kube.checks``).
    awaiting = (
        [
            record
            for key in reserving
            if (record := records.get(key)) is not None and record.awaiting_checks
        ]
        if cache.cluster_queues[name].admission_checks
        else []
    )
    if awaiting:
        admitted_usage = dict(cache.usage.get(name, {}))
        for record in awaiting:
            for fr, amount in (record.usage or {}).get(name, {}).items():
                admitted_usage[fr] = admitted_usage.get(fr, 0) - amount
        admitted_used, admitted_borrowed = cache.usage_report(name, admitted_usage)
    else:
        admitted_used, admitted_borrowed = used, borrowed
    reason, message = inactive_message(cache.inactive_reasons(name))
    return ClusterQueueStatus(
        name=name,
        pending=queues.pending_count(name),
        reserving=len(reserving),
        admitted=len(reserving) - len(awaiting),
        usage=used,
        borrowed=borrowed,
        admitted_usage=admitted_used,
        admitted_borrowed=admitted_borrowed,
        active=reason == "Ready",
        active_reason=reason,
        active_message=message,
        share=node_share(cache.cluster_queues[name].node) if fair_sharing else None,
    )


def node_share(node: QuotaNode | None) -> Share:
    """The dominant resource share of a ClusterQueue or Cohort node (none: 0): pure.

    See docs/scheduling.md#dominant-resource-share.
    """
    return ZERO if node is None else dominant_resource_share(node)
