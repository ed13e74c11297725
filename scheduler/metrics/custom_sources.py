"""Whose ``metrics.customLabels`` each of Kueue's series carries (docs/metrics.md#custom-labels).

Kept apart from the catalogue it completes (:mod:`scheduler.metrics.catalog`
sets each series' ``custom`` from this table), as data: Kueue's choice of
sources, series by series.
"""

from __future__ import annotations

from typing import Final

from scheduler.api.refs import CustomLabelSourceKind

_CQ_SOURCED: Final = (
    "kueue_admission_cycle_preemption_skips",
    "kueue_pending_workloads",
    "kueue_finished_workloads",
    "kueue_quota_reserved_workloads_total",
    "kueue_finished_workloads_total",
    "kueue_quota_reserved_wait_time_seconds",
    "kueue_pods_ready_to_evicted_time_seconds",
    "kueue_admitted_workloads_total",
    "kueue_admission_wait_time_seconds",
    "kueue_ready_wait_time_seconds",
    "kueue_admitted_until_ready_wait_time_seconds",
    "kueue_admission_checks_wait_time_seconds",
    "kueue_pod_scheduling_gate_removal_seconds",
    "kueue_evicted_workloads_total",
    "kueue_replaced_workload_slices_total",
    "kueue_evicted_workloads_once_total",
    "kueue_preempted_workloads_total",
    "kueue_workload_eviction_latency_seconds",
    "kueue_reserving_active_workloads",
    "kueue_cluster_queue_status",
    "kueue_unadmitted_workloads",
    "kueue_cluster_queue_resource_reservation",
    "kueue_cluster_queue_resource_pending",
    "kueue_cluster_queue_resource_usage",
    "kueue_cluster_queue_nominal_quota",
    "kueue_cluster_queue_borrowing_limit",
    "kueue_cluster_queue_lending_limit",
    "kueue_cluster_queue_weighted_share",
    "kueue_cohort_subtree_admitted_active_workloads",
    "kueue_cluster_queue_info",
)
_LQ_SOURCED: Final = (
    "kueue_local_queue_pending_workloads",
    "kueue_local_queue_finished_workloads",
    "kueue_local_queue_quota_reserved_workloads_total",
    "kueue_local_queue_finished_workloads_total",
    "kueue_local_queue_quota_reserved_wait_time_seconds",
    "kueue_local_queue_admitted_workloads_total",
    "kueue_local_queue_admission_wait_time_seconds",
    "kueue_local_queue_admission_checks_wait_time_seconds",
    "kueue_local_queue_ready_wait_time_seconds",
    "kueue_local_queue_admitted_until_ready_wait_time_seconds",
    "kueue_workload_creation_latency_seconds",
    "kueue_local_queue_evicted_workloads_total",
    "kueue_local_queue_reserving_active_workloads",
    "kueue_local_queue_admitted_active_workloads",
    "kueue_local_queue_status",
    "kueue_local_queue_unadmitted_workloads",
    "kueue_local_queue_resource_reservation",
    "kueue_local_queue_resource_usage",
    "kueue_local_queue_admission_fair_sharing_usage",
)
_COHORT_SOURCED: Final = (
    "kueue_cohort_weighted_share",
    "kueue_cohort_subtree_quota",
    "kueue_cohort_subtree_admitted_workloads_total",
    "kueue_cohort_subtree_resource_reservations",
    "kueue_cohort_info",
)
CUSTOM_SOURCES: Final[dict[str, tuple[CustomLabelSourceKind, ...]]] = {
    **dict.fromkeys(_CQ_SOURCED, ("ClusterQueue",)),
    **dict.fromkeys(_LQ_SOURCED, ("LocalQueue",)),
    **dict.fromkeys(_COHORT_SOURCED, ("Cohort",)),
    "kueue_admitted_active_workloads": ("ClusterQueue", "Workload"),
}
"""Whose ``metrics.customLabels`` each series carries, as Kueue's (docs/metrics.md#custom-labels).

``kueue_cohort_subtree_admitted_active_workloads`` takes the ClusterQueues' labels (Kueue
reports it from each ClusterQueue of the subtree) and ``kueue_workload_creation_latency_seconds``
its LocalQueue's, although neither names that queue."""


__all__ = ["CUSTOM_SOURCES"]
