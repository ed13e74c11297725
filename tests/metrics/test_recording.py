"""Recorded series (counters, histograms), their deletion, and the text Prometheus reads."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from scheduler.metrics.exposition import KueueCollector, build_info
from scheduler.metrics.options import MetricOptions
from scheduler.metrics.pruning import forget_other_roles, prune
from scheduler.metrics.recorder import KueueRecorder, QueueRef
from scheduler.metrics.store import SeriesStore

QUEUE = QueueRef("cq", ("ml", "lq"), "high")


def recorder(options: MetricOptions | None = None) -> KueueRecorder:
    recording = KueueRecorder(SeriesStore(), options)
    recording.role = "leader"
    return recording


def scrape(recording: KueueRecorder, live: dict | None = None) -> str:
    registry = CollectorRegistry()
    registry.register(
        KueueCollector(
            recording.store,
            options=lambda: recording.options,
            gauges=(lambda: live or {}),
            build=build_info("1.2.3"),
        )
    )
    return generate_latest(registry).decode()


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def get(text: str, series: str, /, **labels: str) -> float | None:
    return samples(text).get((series, frozenset({**labels, "replica_role": "leader"}.items())))


def test_an_admission_counts_in_the_queue_the_local_queue_and_every_cohort_above() -> None:
    recording = recorder()
    recording.quota_reserved(QUEUE, waited=3)
    recording.admitted(QUEUE, waited=4, checks_waited=1, cohorts=["team", "root"])
    text = scrape(recording)
    cq = {"cluster_queue": "cq", "priority_class": "high"}
    lq = {"name": "lq", "namespace": "ml", "priority_class": "high"}
    assert get(text, "kueue_quota_reserved_workloads_total", **cq) == 1
    assert get(text, "kueue_admitted_workloads_total", **cq) == 1
    assert get(text, "kueue_local_queue_admitted_workloads_total", **lq) == 1
    assert get(text, "kueue_local_queue_quota_reserved_workloads_total", **lq) == 1
    for cohort in ("team", "root"):
        assert (
            get(
                text,
                "kueue_cohort_subtree_admitted_workloads_total",
                cohort=cohort,
                priority_class="high",
            )
            == 1
        )
    wait = "kueue_admission_wait_time_seconds"
    assert get(text, f"{wait}_bucket", **cq, le="2.5") == 0
    assert get(text, f"{wait}_bucket", **cq, le="5") == 1
    assert get(text, f"{wait}_bucket", **cq, le="+Inf") == 1
    assert get(text, f"{wait}_sum", **cq) == 4
    assert get(text, "kueue_admission_checks_wait_time_seconds_count", **cq) == 1
    assert get(text, "kueue_local_queue_admission_checks_wait_time_seconds_sum", **lq) == 1


def test_bucket_bounds_are_written_as_client_golang_writes_them() -> None:
    recording = recorder()
    recording.cycle(admitted=True, seconds=0.003)
    text = scrape(recording)
    bounds = [
        line.split('le="')[1].split('"')[0]
        for line in text.splitlines()
        if line.startswith("kueue_admission_attempt_duration_seconds_bucket")
    ]
    assert bounds == [
        "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"
    ]  # fmt: skip
    assert get(text, "kueue_admission_attempts_total", result="success") == 1


def test_evictions_and_preemptions() -> None:
    recording = recorder()
    recording.evicted(QUEUE, reason="Preempted", cause="InCohortReclamation", first_time=True)
    recording.evicted(QUEUE, reason="Preempted", cause="InCohortReclamation", first_time=False)
    recording.preempted(preempting_cluster_queue="other", reason="InCohortReclamation")
    recording.eviction_completed(cluster_queue="cq", reason="Preempted", seconds=7)
    text = scrape(recording)
    labels = {
        "cluster_queue": "cq",
        "reason": "Preempted",
        "underlying_cause": "InCohortReclamation",
        "priority_class": "high",
    }
    assert get(text, "kueue_evicted_workloads_total", **labels) == 2
    assert get(text, "kueue_evicted_workloads_once_total", **labels) == 1
    lq = {**labels, "name": "lq", "namespace": "ml"}
    del lq["cluster_queue"]
    assert get(text, "kueue_local_queue_evicted_workloads_total", **lq) == 2
    preempted = {"preempting_cluster_queue": "other", "reason": "InCohortReclamation"}
    assert get(text, "kueue_preempted_workloads_total", **preempted) == 1
    latency = {"cluster_queue": "cq", "reason": "Preempted"}
    assert get(text, "kueue_workload_eviction_latency_seconds_sum", **latency) == 7


def test_a_replaced_workload_slice_counts_in_its_cluster_queue() -> None:
    recording = recorder()
    recording.slice_replaced(cluster_queue="cq")
    recording.slice_replaced(cluster_queue="cq")
    assert get(scrape(recording), "kueue_replaced_workload_slices_total", cluster_queue="cq") == 2


def test_pods_ready_and_their_eviction() -> None:
    recording = recorder()
    recording.pods_ready(QUEUE, waited=30, since_admitted=12)
    recording.pods_ready_to_evicted(QUEUE, reason="Preempted", cause="InClusterQueue", seconds=7)
    text = scrape(recording)
    cq = {"cluster_queue": "cq", "priority_class": "high"}
    lq = {"name": "lq", "namespace": "ml", "priority_class": "high"}
    assert get(text, "kueue_ready_wait_time_seconds_sum", **cq) == 30
    assert get(text, "kueue_admitted_until_ready_wait_time_seconds_sum", **cq) == 12
    assert get(text, "kueue_local_queue_ready_wait_time_seconds_count", **lq) == 1
    assert get(text, "kueue_local_queue_admitted_until_ready_wait_time_seconds_sum", **lq) == 12
    evicted = {"cluster_queue": "cq", "reason": "Preempted", "underlying_cause": "InClusterQueue"}
    assert get(text, "kueue_pods_ready_to_evicted_time_seconds_sum", **evicted) == 7
    assert get(text, "kueue_pods_ready_to_evicted_time_seconds_bucket", **evicted, le="10") == 1
    prune(recording.store, cluster_queues=[], local_queues=[], cohorts=[])
    assert "ready" not in scrape(recording), "gone with their queues"


def test_a_local_queue_without_series_records_only_the_cluster_queue() -> None:
    recording = recorder()
    recording.finished(QueueRef("cq", None, ""))
    text = scrape(recording)
    assert get(text, "kueue_finished_workloads_total", cluster_queue="cq", priority_class="") == 1
    assert "kueue_local_queue_finished_workloads_total" not in text


def test_empty_families_are_not_written_at_all() -> None:
    """Kueue's suites look for a series' name anywhere in the text: no bare # HELP lines."""
    recording = recorder()
    text = scrape(recording)
    assert [line for line in text.splitlines() if not line.startswith("#")] == [
        'kueue_build_info{build_date="",compiler="cpython",git_commit="",git_version="1.2.3",'
        f'go_version="{build_info("")[3]}",platform="{build_info("")[5]}"}} 1.0'
    ]
    assert "kueue_admitted_workloads_total" not in text
    assert "_created" not in scrape(recorder()) + text


def test_deleted_queues_lose_their_series_and_weighted_share_stays() -> None:
    recording = recorder(MetricOptions(cluster_queue_resources=True, fair_sharing=True))
    recording.quota_reserved(QUEUE, waited=1)
    recording.admitted(QUEUE, waited=1, checks_waited=None, cohorts=["team"])
    recording.preempted(preempting_cluster_queue="cq", reason="InClusterQueue")
    recording.preemption_skips({"cq": 2})
    recording.store.set_gauge(
        "kueue_cluster_queue_weighted_share",
        {"cluster_queue": "cq", "cohort": "team", "replica_role": "leader"},
        0.5,
    )
    prune(recording.store, cluster_queues={"cq"}, local_queues={("ml", "lq")}, cohorts={"team"})
    assert "kueue_admitted_workloads_total" in scrape(recording)
    prune(recording.store, cluster_queues=set(), local_queues={("ml", "lq")}, cohorts={"team"})
    text = scrape(recording)
    for gone in (
        "kueue_admitted_workloads_total",
        "kueue_quota_reserved_wait_time_seconds",
        "kueue_preempted_workloads_total",
        "kueue_admission_cycle_preemption_skips",
    ):
        assert gone not in text
    assert "kueue_local_queue_admitted_workloads_total" in text
    assert get(text, "kueue_cluster_queue_weighted_share", cluster_queue="cq", cohort="team") == 0.5
    prune(recording.store, cluster_queues=set(), local_queues=set(), cohorts=set())
    text = scrape(recording)
    assert "kueue_local_queue_" not in text
    assert "kueue_cohort_subtree_admitted_workloads_total" not in text


def test_live_gauges_come_first_and_options_hide_series() -> None:
    recording = recorder(MetricOptions(local_queue_metrics=False))
    live = {
        "kueue_pending_workloads": [(("cq", "active", "leader"), 3.0)],
        "kueue_local_queue_status": [(("lq", "ml", "True", "leader"), 1.0)],
    }
    text = scrape(recording, live)
    assert get(text, "kueue_pending_workloads", cluster_queue="cq", status="active") == 3
    assert "kueue_local_queue_status" not in text


def test_a_role_change_forgets_the_remembered_gauges_of_the_old_role() -> None:
    recording = recorder()
    recording.preemption_skips({"cq": 1})
    recording.role = "follower"
    forget_other_roles(recording.store, recording.role)
    assert "kueue_admission_cycle_preemption_skips" not in scrape(recording)


def test_wrong_labels_are_a_programming_error() -> None:
    store = SeriesStore()
    with pytest.raises(ValueError, match="takes the labels cluster_queue, priority_class"):
        store.inc("kueue_admitted_workloads_total", {"cluster_queue": "cq"})
    with pytest.raises(ValueError, match="is a counter, not a gauge"):
        store.set_gauge("kueue_admitted_workloads_total", {}, 1)


def test_options_from_a_configuration() -> None:
    from scheduler.api.config import parse_configuration

    config = parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "fairSharing": {},
            "featureGates": {"MetricsForCohorts": False},
            "metrics": {
                "enableClusterQueueResources": True,
                "localQueueMetrics": {
                    "enable": True,
                    "localQueueSelector": {"matchLabels": {"metrics": "on"}},
                },
            },
        }
    )
    options = MetricOptions.from_configuration(config)
    assert options.cluster_queue_resources and options.fair_sharing
    assert not options.cohort_info
    assert options.local_queue_selected({"metrics": "on"})
    assert not options.local_queue_selected({})
    default = MetricOptions.from_configuration(None)
    assert default.local_queue_metrics and not default.cluster_queue_resources
    disabled = parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "metrics": {"localQueueMetrics": {"enable": False}},
        }
    )
    assert not MetricOptions.from_configuration(disabled).local_queue_selected({})
