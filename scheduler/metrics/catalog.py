"""Every Prometheus series of Kueue v0.19.2's metrics reference, as data (docs/metrics.md).

One entry per series: its exact name, type, label names (in Kueue's order),
histogram buckets, a one-line description in kuota's words, and what it
needs to be emitted (:class:`Needs`).  The store, the gauges and the
collector read this table and nothing else about a series, so a name or a
label is written once.  Series kuota cannot give a true value for (they need
a feature kuota lacks) are listed with ``Needs.MISSING_FEATURE`` and a
``missing`` text: they are never emitted, and docs/metrics.md says why.

Every series but ``kueue_build_info`` carries ``replica_role`` (``leader``,
``follower``, or ``standalone`` without leader election).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Literal

from scheduler.api.refs import CustomLabelSourceKind
from scheduler.metrics.custom_sources import CUSTOM_SOURCES

Kind = Literal["counter", "gauge", "histogram"]


class Needs(Enum):
    """When a series is emitted (docs/metrics.md#which-series-are-emitted)."""

    ALWAYS = "always"
    LOCAL_QUEUE_METRICS = "LocalQueueMetrics gate and metrics.localQueueMetrics"
    CLUSTER_QUEUE_RESOURCES = "metrics.enableClusterQueueResources"
    RESOURCES_AND_FAIR_SHARING = "metrics.enableClusterQueueResources and fairSharing"
    FAIR_SHARING = "fairSharing"
    METRICS_FOR_COHORTS = "MetricsForCohorts gate"
    UNADMITTED_OBSERVABILITY = "UnadmittedWorkloadsObservability gate"
    LQ_UNADMITTED_OBSERVABILITY = "UnadmittedWorkloadsObservability gate and LocalQueue metrics"
    CREATION_LATENCY = "MetricForWorkloadCreationLatency gate"
    MULTIKUEUE = "kuota-multikueue"
    MISSING_FEATURE = "a feature kuota lacks"


def default_buckets() -> tuple[float, ...]:
    """client_golang's default histogram buckets (``prometheus.DefBuckets``): pure."""
    return (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


def wait_buckets(count: int) -> tuple[float, ...]:
    """Kueue's wait-time buckets: 1, then ``count - 1`` doubling from 2.5 (1, 2.5, 5, ...): pure."""
    return (1, *(2.5 * 2**index for index in range(count - 1)))


def exponential(start: float, factor: float, count: int) -> tuple[float, ...]:
    """``count`` buckets from ``start``, each ``factor`` times the last: pure."""
    return tuple(start * factor**index for index in range(count))


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    kind: Kind
    labels: tuple[str, ...]
    description: str
    needs: Needs = Needs.ALWAYS
    buckets: tuple[float, ...] = ()
    missing: str = ""
    """For ``Needs.MISSING_FEATURE``: the feature, as docs/metrics.md names it."""
    custom: tuple[CustomLabelSourceKind, ...] = ()
    """The kinds whose ``metrics.customLabels`` follow :attr:`labels` (:data:`CUSTOM_SOURCES`)."""


ROLE = "replica_role"
CQ = ("cluster_queue",)
LQ = ("name", "namespace")
PRIORITY = ("priority_class",)
FR = ("flavor", "resource")
CQ_FR = ("cohort", "cluster_queue", "flavor", "resource")
EVICTION = ("reason", "underlying_cause")
WAIT_14 = wait_buckets(14)
WAIT_16 = wait_buckets(16)


def _s(
    name: str,
    kind: Kind,
    labels: tuple[str, ...],
    description: str,
    needs: Needs = Needs.ALWAYS,
    buckets: tuple[float, ...] = (),
    missing: str = "",
) -> Series:
    with_role = labels if name == "kueue_build_info" else (*labels, ROLE)
    return Series(name, kind, with_role, description, needs, buckets, missing)


_LQ = Needs.LOCAL_QUEUE_METRICS
_RES = Needs.CLUSTER_QUEUE_RESOURCES
_GONE = Needs.MISSING_FEATURE

SERIES: tuple[Series, ...] = (
    # --- health of the scheduler -------------------------------------------------------
    _s(
        "kueue_admission_attempts_total",
        "counter",
        ("result",),
        "Scheduling cycles, by whether they admitted something (success) or not (inadmissible).",
    ),
    _s(
        "kueue_admission_attempt_duration_seconds",
        "histogram",
        ("result",),
        "Duration of a scheduling cycle, by result.",
        buckets=default_buckets(),
    ),
    _s(
        "kueue_admission_cycle_preemption_skips",
        "gauge",
        CQ,
        "Workloads of the ClusterQueue, in its last cycle with any, that had preemption targets "
        "but were skipped because another ClusterQueue's workload claimed the same ones.",
    ),
    _s(
        "kueue_build_info",
        "gauge",
        ("git_version", "git_commit", "build_date", "go_version", "compiler", "platform"),
        "1, labelled with the build: kuota's version, and the Python runtime in go_version "
        "and compiler.",
    ),
    _s(
        "kueue_workload_creation_latency_seconds",
        "histogram",
        ("job_kind",),
        "Time from a job's creation to its Workload's, for jobs at generation 1.",
        Needs.CREATION_LATENCY,
        exponential(0.01, 2, 11),
    ),
    _s(
        "kueue_pod_scheduling_gate_removal_seconds",
        "histogram",
        ("name", "cluster_queue", "is_group"),
        "Time from a Workload's admission to the removal of a scheduling gate from its pod.",
        buckets=default_buckets(),
    ),
    # --- ClusterQueue ------------------------------------------------------------------
    _s(
        "kueue_pending_workloads",
        "gauge",
        (*CQ, "status"),
        "Pending workloads of the ClusterQueue: active (in its queue) or inadmissible (parked "
        "until something changes; every pending one while the queue is inactive).",
    ),
    _s(
        "kueue_finished_workloads",
        "gauge",
        CQ,
        "Finished Workloads of the ClusterQueue that still exist.",
    ),
    _s(
        "kueue_quota_reserved_workloads_total",
        "counter",
        (*CQ, *PRIORITY),
        "Quota reservations made in the ClusterQueue.",
    ),
    _s(
        "kueue_finished_workloads_total",
        "counter",
        (*CQ, *PRIORITY),
        "Workloads of the ClusterQueue declared finished.",
    ),
    _s(
        "kueue_quota_reserved_wait_time_seconds",
        "histogram",
        (*CQ, *PRIORITY),
        "Time from a workload's creation or last requeue to its quota reservation.",
        buckets=WAIT_14,
    ),
    _s(
        "kueue_admitted_workloads_total",
        "counter",
        (*CQ, *PRIORITY),
        "Admissions in the ClusterQueue.",
    ),
    _s(
        "kueue_admission_wait_time_seconds",
        "histogram",
        (*CQ, *PRIORITY),
        "Time from a workload's creation or last requeue to its admission.",
        buckets=WAIT_16,
    ),
    _s(
        "kueue_admission_checks_wait_time_seconds",
        "histogram",
        (*CQ, *PRIORITY),
        "Time from a workload's quota reservation to its admission (its admission checks).",
        buckets=WAIT_14,
    ),
    _s(
        "kueue_evicted_workloads_total",
        "counter",
        (*CQ, *EVICTION, *PRIORITY),
        "Evictions from the ClusterQueue, by reason and underlying cause.",
    ),
    _s(
        "kueue_evicted_workloads_once_total",
        "counter",
        (*CQ, *EVICTION, *PRIORITY),
        "Workloads evicted from the ClusterQueue for a reason (and cause) for the first time.",
    ),
    _s(
        "kueue_preempted_workloads_total",
        "counter",
        ("preempting_cluster_queue", "reason"),
        "Workloads preempted for a workload of the preempting ClusterQueue, by reason "
        "(InClusterQueue, InCohortReclamation, InCohortFairSharing, "
        "InCohortReclaimWhileBorrowing).",
    ),
    _s(
        "kueue_workload_eviction_latency_seconds",
        "histogram",
        (*CQ, "reason"),
        "Time from a workload's eviction to the release of its quota.",
        buckets=WAIT_14,
    ),
    _s(
        "kueue_reserving_active_workloads",
        "gauge",
        CQ,
        "Workloads holding quota in the ClusterQueue, admitted or waiting for admission checks.",
    ),
    _s(
        "kueue_admitted_active_workloads",
        "gauge",
        CQ,
        "Admitted, unfinished Workloads of the ClusterQueue.",
    ),
    _s(
        "kueue_cluster_queue_status",
        "gauge",
        (*CQ, "status"),
        "1 for the ClusterQueue's status (pending, active or terminating), 0 for the others.",
    ),
    _s(
        "kueue_cluster_queue_info",
        "gauge",
        (*CQ, "parent_cohort", "root_cohort"),
        "1, labelled with the ClusterQueue's cohort and the root of its cohort tree.",
        Needs.METRICS_FOR_COHORTS,
    ),
    _s(
        "kueue_unadmitted_workloads",
        "gauge",
        (*CQ, *EVICTION),
        "Workloads of the ClusterQueue not admitted, by the reason of their Admitted condition "
        "and the reason of their QuotaReserved condition.",
        Needs.UNADMITTED_OBSERVABILITY,
    ),
    _s(
        "kueue_cluster_queue_resource_pending",
        "gauge",
        (*CQ, "resource"),
        "Resources requested by the ClusterQueue's pending workloads (no flavor chosen yet).",
        _RES,
    ),
    _s(
        "kueue_cluster_queue_resource_reservation",
        "gauge",
        CQ_FR,
        "Quota reserved in the ClusterQueue, per flavor and resource.",
        _RES,
    ),
    _s(
        "kueue_cluster_queue_resource_usage",
        "gauge",
        CQ_FR,
        "Quota used by the ClusterQueue's admitted workloads, per flavor and resource.",
        _RES,
    ),
    _s(
        "kueue_cluster_queue_nominal_quota",
        "gauge",
        CQ_FR,
        "The ClusterQueue's nominal quota, per flavor and resource.",
        _RES,
    ),
    _s(
        "kueue_cluster_queue_borrowing_limit",
        "gauge",
        CQ_FR,
        "The ClusterQueue's borrowing limit, per flavor and resource (+Inf when unset).",
        _RES,
    ),
    _s(
        "kueue_cluster_queue_lending_limit",
        "gauge",
        CQ_FR,
        "The ClusterQueue's lending limit, per flavor and resource (+Inf when unset).",
        _RES,
    ),
    _s(
        "kueue_cluster_queue_weighted_share",
        "gauge",
        (*CQ, "cohort"),
        "The ClusterQueue's dominant resource share divided by its weight (0 when it borrows "
        "nothing, NaN when it borrows with weight 0).",
        Needs.RESOURCES_AND_FAIR_SHARING,
    ),
    # --- cohorts -------------------------------------------------------------------------
    _s(
        "kueue_cohort_weighted_share",
        "gauge",
        ("cohort",),
        "The cohort's dominant resource share in its parent divided by its weight.",
        Needs.FAIR_SHARING,
    ),
    _s(
        "kueue_cohort_subtree_quota",
        "gauge",
        ("cohort", *FR),
        "Nominal quota of the cohort's subtree, per flavor and resource (positive ones only).",
    ),
    _s(
        "kueue_cohort_subtree_admitted_workloads_total",
        "counter",
        ("cohort", *PRIORITY),
        "Admissions in the ClusterQueues of the cohort's subtree.",
    ),
    _s(
        "kueue_cohort_subtree_resource_reservations",
        "gauge",
        ("cohort", *FR),
        "Quota reserved in the cohort's subtree, per flavor and resource (positive ones only).",
    ),
    _s(
        "kueue_cohort_subtree_admitted_active_workloads",
        "gauge",
        ("cohort",),
        "Admitted, unfinished Workloads in the ClusterQueues of the cohort's subtree.",
    ),
    _s(
        "kueue_cohort_info",
        "gauge",
        ("cohort", "parent_cohort", "root_cohort"),
        "1, labelled with the cohort's parent and the root of its tree.",
        Needs.METRICS_FOR_COHORTS,
    ),
    # --- LocalQueue ----------------------------------------------------------------------
    _s(
        "kueue_local_queue_pending_workloads",
        "gauge",
        (*LQ, "status"),
        "Pending workloads of the LocalQueue: active or inadmissible (as for ClusterQueues).",
        _LQ,
    ),
    _s(
        "kueue_local_queue_finished_workloads",
        "gauge",
        LQ,
        "Finished Workloads of the LocalQueue that still exist.",
        _LQ,
    ),
    _s(
        "kueue_local_queue_quota_reserved_workloads_total",
        "counter",
        (*LQ, *PRIORITY),
        "Quota reservations of the LocalQueue's workloads.",
        _LQ,
    ),
    _s(
        "kueue_local_queue_finished_workloads_total",
        "counter",
        (*LQ, *PRIORITY),
        "Workloads of the LocalQueue declared finished.",
        _LQ,
    ),
    _s(
        "kueue_local_queue_quota_reserved_wait_time_seconds",
        "histogram",
        (*LQ, *PRIORITY),
        "Time from a workload's creation or last requeue to its quota reservation.",
        _LQ,
        WAIT_14,
    ),
    _s(
        "kueue_local_queue_admitted_workloads_total",
        "counter",
        (*LQ, *PRIORITY),
        "Admissions of the LocalQueue's workloads.",
        _LQ,
    ),
    _s(
        "kueue_local_queue_admission_wait_time_seconds",
        "histogram",
        (*LQ, *PRIORITY),
        "Time from a workload's creation or last requeue to its admission.",
        _LQ,
        WAIT_14,
    ),
    _s(
        "kueue_local_queue_admission_checks_wait_time_seconds",
        "histogram",
        (*LQ, *PRIORITY),
        "Time from a workload's quota reservation to its admission.",
        _LQ,
        WAIT_14,
    ),
    _s(
        "kueue_local_queue_evicted_workloads_total",
        "counter",
        (*LQ, *EVICTION, *PRIORITY),
        "Evictions of the LocalQueue's workloads, by reason and underlying cause.",
        _LQ,
    ),
    _s(
        "kueue_local_queue_reserving_active_workloads",
        "gauge",
        LQ,
        "Workloads of the LocalQueue holding quota.",
        _LQ,
    ),
    _s(
        "kueue_local_queue_admitted_active_workloads",
        "gauge",
        LQ,
        "Admitted, unfinished Workloads of the LocalQueue.",
        _LQ,
    ),
    _s(
        "kueue_local_queue_status",
        "gauge",
        (*LQ, "active"),
        "1 for the status of the LocalQueue's Active condition (True, False or Unknown).",
        _LQ,
    ),
    _s(
        "kueue_local_queue_resource_reservation",
        "gauge",
        (*LQ, *FR),
        "Quota reserved by the LocalQueue's workloads, per flavor and resource.",
        _LQ,
    ),
    _s(
        "kueue_local_queue_resource_usage",
        "gauge",
        (*LQ, *FR),
        "Quota used by the LocalQueue's admitted workloads, per flavor and resource.",
        _LQ,
    ),
    _s(
        "kueue_local_queue_unadmitted_workloads",
        "gauge",
        (*LQ, *CQ, *EVICTION),
        "Workloads of the LocalQueue not admitted, by reason and underlying cause.",
        Needs.LQ_UNADMITTED_OBSERVABILITY,
    ),
    # --- MultiKueue (served by kuota-multikueue) -----------------------------------------
    _s(
        "multikueue_workloads_dispatched_total",
        "counter",
        (*CQ, "cluster"),
        "Copies of Workloads created on a worker cluster.",
        Needs.MULTIKUEUE,
    ),
    _s(
        "multikueue_workloads_admitted_total",
        "counter",
        (*CQ, "cluster"),
        "Admissions of Workload copies on a worker cluster (again after each eviction).",
        Needs.MULTIKUEUE,
    ),
    # --- waitForPodsReady --------------------------------------------------------------
    _s(
        "kueue_pods_ready_to_evicted_time_seconds",
        "histogram",
        (*CQ, *EVICTION),
        "Time from a workload's pods being ready to its eviction.",
        Needs.ALWAYS,
        WAIT_14,
    ),
    _s(
        "kueue_ready_wait_time_seconds",
        "histogram",
        (*CQ, *PRIORITY),
        "Time from a workload's creation or requeue to its pods being ready.",
        Needs.ALWAYS,
        WAIT_14,
    ),
    _s(
        "kueue_admitted_until_ready_wait_time_seconds",
        "histogram",
        (*CQ, *PRIORITY),
        "Time from a workload's admission to its pods being ready.",
        Needs.ALWAYS,
        WAIT_14,
    ),
    _s(
        "kueue_local_queue_ready_wait_time_seconds",
        "histogram",
        (*LQ, *PRIORITY),
        "Time from a workload's creation or requeue to its pods being ready.",
        _LQ,
        WAIT_14,
    ),
    _s(
        "kueue_local_queue_admitted_until_ready_wait_time_seconds",
        "histogram",
        (*LQ, *PRIORITY),
        "Time from a workload's admission to its pods being ready.",
        _LQ,
        WAIT_14,
    ),
    _s(
        "kueue_replaced_workload_slices_total",
        "counter",
        CQ,
        "Workload slices of elastic jobs replaced by a resized one.",
    ),
    # --- features kuota lacks: never emitted ---------------------------------------------
    _s(
        "kueue_local_queue_admission_fair_sharing_usage",
        "gauge",
        (*LQ, *CQ),
        "The LocalQueue's admission fair sharing usage.",
        _GONE,
        missing="its admission fair sharing usage export, not written yet",
    ),
)


SERIES = tuple(replace(entry, custom=CUSTOM_SOURCES.get(entry.name, ())) for entry in SERIES)
BY_NAME: dict[str, Series] = {series.name: series for series in SERIES}
EMITTED: tuple[Series, ...] = tuple(s for s in SERIES if s.needs is not Needs.MISSING_FEATURE)


def series(name: str) -> Series:
    """The catalogue entry of ``name``; a KeyError names an unknown series: pure."""
    return BY_NAME[name]


__all__ = [
    "BY_NAME",
    "EMITTED",
    "SERIES",
    "Needs",
    "Series",
    "default_buckets",
    "exponential",
    "series",
    "wait_buckets",
]
