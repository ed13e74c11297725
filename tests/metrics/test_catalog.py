"""The catalogue against Kueue v0.19.2's metrics reference: every name, label and bucket.

The expected table is written out by hand from Kueue's reference (names, label names
in Kueue's order, bucket bounds), so a typo in the catalogue fails here instead of in
somebody's dashboard.
"""

from __future__ import annotations

import pytest

from scheduler.metrics.catalog import BY_NAME, SERIES, Needs, default_buckets, wait_buckets

CQ = ("cluster_queue",)
LQ = ("name", "namespace")
PC = ("priority_class",)
EV = ("reason", "underlying_cause")
FR = ("flavor", "resource")
CQ_FR = ("cohort", "cluster_queue", *FR)

KUEUE = {
    "kueue_admission_attempts_total": ("counter", ("result",)),
    "kueue_admission_attempt_duration_seconds": ("histogram", ("result",)),
    "multikueue_workloads_dispatched_total": ("counter", (*CQ, "cluster")),
    "multikueue_workloads_admitted_total": ("counter", (*CQ, "cluster")),
    "kueue_admission_cycle_preemption_skips": ("gauge", CQ),
    "kueue_pending_workloads": ("gauge", (*CQ, "status")),
    "kueue_local_queue_pending_workloads": ("gauge", (*LQ, "status")),
    "kueue_finished_workloads": ("gauge", CQ),
    "kueue_local_queue_finished_workloads": ("gauge", LQ),
    "kueue_quota_reserved_workloads_total": ("counter", (*CQ, *PC)),
    "kueue_local_queue_quota_reserved_workloads_total": ("counter", (*LQ, *PC)),
    "kueue_finished_workloads_total": ("counter", (*CQ, *PC)),
    "kueue_local_queue_finished_workloads_total": ("counter", (*LQ, *PC)),
    "kueue_quota_reserved_wait_time_seconds": ("histogram", (*CQ, *PC)),
    "kueue_pods_ready_to_evicted_time_seconds": ("histogram", (*CQ, *EV)),
    "kueue_local_queue_quota_reserved_wait_time_seconds": ("histogram", (*LQ, *PC)),
    "kueue_admitted_workloads_total": ("counter", (*CQ, *PC)),
    "kueue_local_queue_admitted_workloads_total": ("counter", (*LQ, *PC)),
    "kueue_admission_wait_time_seconds": ("histogram", (*CQ, *PC)),
    "kueue_ready_wait_time_seconds": ("histogram", (*CQ, *PC)),
    "kueue_admitted_until_ready_wait_time_seconds": ("histogram", (*CQ, *PC)),
    "kueue_local_queue_admission_wait_time_seconds": ("histogram", (*LQ, *PC)),
    "kueue_admission_checks_wait_time_seconds": ("histogram", (*CQ, *PC)),
    "kueue_local_queue_admission_checks_wait_time_seconds": ("histogram", (*LQ, *PC)),
    "kueue_local_queue_ready_wait_time_seconds": ("histogram", (*LQ, *PC)),
    "kueue_local_queue_admitted_until_ready_wait_time_seconds": ("histogram", (*LQ, *PC)),
    "kueue_evicted_workloads_total": ("counter", (*CQ, *EV, *PC)),
    "kueue_replaced_workload_slices_total": ("counter", CQ),
    "kueue_local_queue_evicted_workloads_total": ("counter", (*LQ, *EV, *PC)),
    "kueue_evicted_workloads_once_total": ("counter", (*CQ, *EV, *PC)),
    "kueue_preempted_workloads_total": ("counter", ("preempting_cluster_queue", "reason")),
    "kueue_workload_eviction_latency_seconds": ("histogram", (*CQ, "reason")),
    "kueue_workload_creation_latency_seconds": ("histogram", ("job_kind",)),
    "kueue_pod_scheduling_gate_removal_seconds": (
        "histogram",
        ("name", "cluster_queue", "is_group"),
    ),
    "kueue_reserving_active_workloads": ("gauge", CQ),
    "kueue_local_queue_reserving_active_workloads": ("gauge", LQ),
    "kueue_admitted_active_workloads": ("gauge", CQ),
    "kueue_local_queue_admitted_active_workloads": ("gauge", LQ),
    "kueue_cluster_queue_status": ("gauge", (*CQ, "status")),
    "kueue_local_queue_status": ("gauge", (*LQ, "active")),
    "kueue_unadmitted_workloads": ("gauge", (*CQ, *EV)),
    "kueue_local_queue_unadmitted_workloads": ("gauge", (*LQ, *CQ, *EV)),
    "kueue_cluster_queue_resource_reservation": ("gauge", CQ_FR),
    "kueue_cluster_queue_resource_usage": ("gauge", CQ_FR),
    "kueue_cluster_queue_resource_pending": ("gauge", (*CQ, "resource")),
    "kueue_local_queue_resource_reservation": ("gauge", (*LQ, *FR)),
    "kueue_local_queue_resource_usage": ("gauge", (*LQ, *FR)),
    "kueue_local_queue_admission_fair_sharing_usage": ("gauge", (*LQ, *CQ)),
    "kueue_cluster_queue_nominal_quota": ("gauge", CQ_FR),
    "kueue_cluster_queue_borrowing_limit": ("gauge", CQ_FR),
    "kueue_cluster_queue_lending_limit": ("gauge", CQ_FR),
    "kueue_cluster_queue_weighted_share": ("gauge", (*CQ, "cohort")),
    "kueue_cohort_weighted_share": ("gauge", ("cohort",)),
    "kueue_cohort_subtree_quota": ("gauge", ("cohort", *FR)),
    "kueue_cohort_subtree_admitted_workloads_total": ("counter", ("cohort", *PC)),
    "kueue_cohort_subtree_resource_reservations": ("gauge", ("cohort", *FR)),
    "kueue_cohort_subtree_admitted_active_workloads": ("gauge", ("cohort",)),
    "kueue_cohort_info": ("gauge", ("cohort", "parent_cohort", "root_cohort")),
    "kueue_cluster_queue_info": ("gauge", (*CQ, "parent_cohort", "root_cohort")),
}
BUILD_INFO = ("git_version", "git_commit", "build_date", "go_version", "compiler", "platform")

EXP_14 = (1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240)
EXP_16 = (*EXP_14, 20480, 40960)
DEFAULT = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
CREATION = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24)
BUCKETS = {
    "kueue_admission_attempt_duration_seconds": DEFAULT,
    "kueue_pod_scheduling_gate_removal_seconds": DEFAULT,
    "kueue_admission_wait_time_seconds": EXP_16,
    "kueue_workload_creation_latency_seconds": CREATION,
}


def test_every_series_of_kueue_and_nothing_else() -> None:
    assert set(BY_NAME) == {*KUEUE, "kueue_build_info"}
    assert len(SERIES) == len(BY_NAME)


@pytest.mark.parametrize("name", sorted(KUEUE))
def test_type_and_labels_as_kueue_has_them(name: str) -> None:
    kind, labels = KUEUE[name]
    series = BY_NAME[name]
    assert (series.kind, series.labels) == (kind, (*labels, "replica_role"))


def test_build_info_has_no_role() -> None:
    assert BY_NAME["kueue_build_info"].labels == BUILD_INFO


@pytest.mark.parametrize("name", sorted(n for n, (kind, _) in KUEUE.items() if kind == "histogram"))
def test_histogram_buckets(name: str) -> None:
    assert BY_NAME[name].buckets == pytest.approx(BUCKETS.get(name, EXP_14))


def test_bucket_helpers() -> None:
    assert wait_buckets(14) == pytest.approx(EXP_14)
    assert default_buckets() == DEFAULT


def test_what_kuota_cannot_emit_says_which_feature_is_missing() -> None:
    missing = {s.name: s.missing for s in SERIES if s.needs is Needs.MISSING_FEATURE}
    assert set(missing) == {"kueue_local_queue_admission_fair_sharing_usage"}
    assert all(missing.values())
