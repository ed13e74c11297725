"""What a preempted workload reads on its ``Evicted``/``Preempted`` conditions.

See docs/scheduling.md#preemption-messages.

``"Preempted to accommodate a workload (UID: <uid>, JobUID: <job uid>) due
to <why>; preemptor path: <path>; preemptee path: <path>"``, with
``UNKNOWN`` for any missing value; a path is ``/`` followed by the cohort
chain from the root down to the ClusterQueue (``/<cq>`` without a cohort).
"""

from __future__ import annotations

from scheduler.core.resource_node import QuotaNode

UNKNOWN = "UNKNOWN"

WHY: dict[str, str] = {
    "InClusterQueue": "prioritization in the ClusterQueue",
    "InCohortReclamation": "reclamation within the cohort",
    "InCohortReclaimWhileBorrowing": "reclamation within the cohort while borrowing",
    "InCohortFairSharing": "Fair Sharing within the cohort",
}


def queue_path(node: QuotaNode | None) -> str:
    """``/root/.../cq`` for a CQ's node: pure."""
    if node is None:
        return UNKNOWN
    names: list[str] = []
    current: QuotaNode | None = node
    while current is not None:
        names.append(current.name)
        current = current.parent
    return "/" + "/".join(reversed(names))


def preemption_message(
    *,
    preemptor_uid: str | None,
    preemptor_job_uid: str | None,
    reason: str,
    preemptor_node: QuotaNode | None,
    victim_node: QuotaNode | None,
) -> str:
    """The eviction message (module docstring): pure."""
    return (
        f"Preempted to accommodate a workload (UID: {preemptor_uid or UNKNOWN}, "
        f"JobUID: {preemptor_job_uid or UNKNOWN}) due to {WHY.get(reason, UNKNOWN)}; "
        f"preemptor path: {queue_path(preemptor_node)}; preemptee path: {queue_path(victim_node)}"
    )


__all__ = ["UNKNOWN", "WHY", "preemption_message", "queue_path"]
