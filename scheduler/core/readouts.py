"""What the engine's state says, read out for status writes and the CLI (pure).

The two read-outs users see most: a Workload's state with the reason and
message of its condition (:func:`workload_state`), and a ClusterQueue's
counts, usage and ``Active`` condition (:func:`cluster_queue_status`, its
usage and borrowing as the status shows them from :func:`usage_report`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from scheduler.api.quantity import Quantity
from scheduler.core.decisions import WorkloadKey
from scheduler.core.engine_types import ClusterQueueStatus, WorkloadState
from scheduler.core.fair_share import ZERO, Share, dominant_resource_share
from scheduler.core.pending_reasons import Blocker, Shortage
from scheduler.core.queue_manager import QueueManager
from scheduler.core.quota_cache import QuotaCache
from scheduler.core.resource_node import QuotaNode
from scheduler.core.resources import FRValues, to_quantity
from scheduler.core.state import ADMITTED, FINISHED, WorkloadRecord, inactive_message

QuantitiesByFlavor = dict[str, dict[str, Quantity]]
"""Flavor -> resource -> quantity, as ``ClusterQueue.status`` reports usage."""


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
    cache.tree.ensure_forest()
    used, borrowed = usage_report(cache, name)
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
        admitted_used, admitted_borrowed = usage_report(cache, name, admitted_usage)
    else:
        admitted_used, admitted_borrowed = used, borrowed
    reason, message = inactive_message(cache.inactive_reasons(name))
    return ClusterQueueStatus(
        name=name,
        pending=queues.pending.count(name),
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


def usage_report(
    cache: QuotaCache, name: str, usage: FRValues | None = None
) -> tuple[QuantitiesByFlavor, QuantitiesByFlavor]:
    """(usage, borrowed) per flavor and covered resource of ClusterQueue ``name``, as
    ``status`` shows them: pure.

    Borrowed is usage above nominal quota, for a CQ in a cohort.  ``usage``:
    another total than every reservation's (the admitted workloads' only).
    """
    info = cache.cluster_queues[name]
    usage = cache.usage.get(name, {}) if usage is None else usage
    nominal = cache.tree.nominal(name)
    used: QuantitiesByFlavor = {}
    lent: QuantitiesByFlavor = {}
    for group in info.groups:
        for flavor in group.flavors:
            for resource in sorted(group.covered):
                amount = usage.get((flavor, resource), 0)
                over = max(0, amount - nominal.get((flavor, resource), 0)) if info.cohort else 0
                used.setdefault(flavor, {})[resource] = to_quantity(resource, amount)
                lent.setdefault(flavor, {})[resource] = to_quantity(resource, over)
    return used, lent


def node_share(node: QuotaNode | None) -> Share:
    """The dominant resource share of a ClusterQueue or Cohort node (none: 0): pure.

    See docs/scheduling.md#dominant-resource-share.
    """
    return ZERO if node is None else dominant_resource_share(node)
