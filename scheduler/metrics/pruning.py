"""Dropping the recorded series nobody may see any more (docs/metrics.md#series-of-deleted-queues).

The recorder (:mod:`scheduler.metrics.recorder`) only adds to the store;
these drop from it, as Kueue clears its series: :func:`prune` the counters
and histograms of the queues and cohorts that are gone, at every scrape;
:func:`forget_other_roles` the gauges remembered under an earlier
``replica_role`` (Kueue clears gauges on a role change).
"""

from __future__ import annotations

from collections.abc import Collection

from scheduler.metrics.store import SeriesStore

CQ_SERIES = (
    "kueue_quota_reserved_workloads_total",
    "kueue_quota_reserved_wait_time_seconds",
    "kueue_finished_workloads_total",
    "kueue_admitted_workloads_total",
    "kueue_admission_wait_time_seconds",
    "kueue_admission_checks_wait_time_seconds",
    "kueue_evicted_workloads_total",
    "kueue_evicted_workloads_once_total",
    "kueue_workload_eviction_latency_seconds",
    "kueue_pod_scheduling_gate_removal_seconds",
    "kueue_admission_cycle_preemption_skips",
    "kueue_ready_wait_time_seconds",
    "kueue_admitted_until_ready_wait_time_seconds",
    "kueue_pods_ready_to_evicted_time_seconds",
)
"""Recorded series of a ClusterQueue, dropped with it (as Kueue clears them)."""
LQ_SERIES = (
    "kueue_local_queue_quota_reserved_workloads_total",
    "kueue_local_queue_quota_reserved_wait_time_seconds",
    "kueue_local_queue_finished_workloads_total",
    "kueue_local_queue_admitted_workloads_total",
    "kueue_local_queue_admission_wait_time_seconds",
    "kueue_local_queue_admission_checks_wait_time_seconds",
    "kueue_local_queue_evicted_workloads_total",
    "kueue_local_queue_ready_wait_time_seconds",
    "kueue_local_queue_admitted_until_ready_wait_time_seconds",
)
"""Recorded series of a LocalQueue, dropped with it."""
REMEMBERED_GAUGES = ("kueue_admission_cycle_preemption_skips", "kueue_cluster_queue_weighted_share")
"""Gauges kept from their last report: Kueue keeps a deleted ClusterQueue's weighted share."""


def prune(
    store: SeriesStore,
    *,
    cluster_queues: Collection[str],
    local_queues: Collection[tuple[str, str]],
    cohorts: Collection[str],
) -> None:
    """Drop the recorded series of every queue and cohort not among these (gone)."""
    for series in CQ_SERIES:
        for name in store.label_values(series, "cluster_queue") - set(cluster_queues):
            store.forget(CQ_SERIES, {"cluster_queue": name})
    preempting = store.label_values("kueue_preempted_workloads_total", "preempting_cluster_queue")
    for name in preempting - set(cluster_queues):
        store.forget(("kueue_preempted_workloads_total",), {"preempting_cluster_queue": name})
    for series in LQ_SERIES:
        for namespace, name in store.label_tuples(series, "namespace", "name"):
            if (namespace, name) not in local_queues:
                store.forget(LQ_SERIES, {"namespace": namespace, "name": name})
    cohort_series = "kueue_cohort_subtree_admitted_workloads_total"
    for name in store.label_values(cohort_series, "cohort") - set(cohorts):
        store.forget((cohort_series,), {"cohort": name})


def forget_other_roles(store: SeriesStore, role: str) -> None:
    """Drop remembered gauges of a role other than ``role``, the one recorded now."""
    for series in REMEMBERED_GAUGES:
        for other in store.label_values(series, "replica_role") - {role}:
            store.forget((series,), {"replica_role": other})


__all__ = ["CQ_SERIES", "LQ_SERIES", "REMEMBERED_GAUGES", "forget_other_roles", "prune"]
