"""``metrics.customLabels`` as ``custom_*`` metric labels (docs/metrics.md#custom-labels)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from scheduler.api.config_file import load_configuration
from scheduler.api.custom_labels import UNTRACKED_VALUE, CustomLabel, CustomLabels, SourceKind
from scheduler.metrics.catalog import SERIES
from scheduler.metrics.custom_sources import CUSTOM_SOURCES
from scheduler.metrics.custom_values import CustomValues
from scheduler.metrics.exposition import KueueCollector
from scheduler.metrics.gauges import queue_gauges
from scheduler.metrics.recorder import KueueRecorder, QueueRef
from scheduler.metrics.store import SeriesStore
from tests.metrics.test_gauges import ALL, LQS, team_engine

LABELS = CustomLabels(
    (
        CustomLabel(name="team", source_kind="ClusterQueue"),
        CustomLabel(name="tier", source_kind="Cohort", annotation_key="example.com/tier"),
        CustomLabel(name="site", source_kind="LocalQueue", label_key="example.com/site"),
        CustomLabel(name="wl_team", source_kind="Workload", tracked_values=("ml", "infra")),
    )
)


def meta(labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> Any:
    return {"metadata": {"labels": labels or {}, "annotations": annotations or {}}}


OBJECTS: dict[tuple[SourceKind, str], Any] = {
    ("ClusterQueue", "cq-a"): meta({"team": "vision"}),
    ("ClusterQueue", "cq-b"): meta({"team": "speech"}),
    ("Cohort", "team"): meta(annotations={"example.com/tier": "gold"}),
    ("LocalQueue", "ml/lq-a"): meta({"example.com/site": "eu"}),
    ("Workload", "ml/running"): meta({"wl_team": "research"}),
}


def values(objects: dict[tuple[SourceKind, str], Any] = OBJECTS) -> CustomValues:
    return CustomValues(LABELS, lambda kind, ref: objects.get((kind, ref)))


def scrape(store: SeriesStore, live: Any = None) -> dict[str, list[dict[str, str]]]:
    registry = CollectorRegistry()
    registry.register(
        KueueCollector(store, options=lambda: ALL, gauges=(lambda: live or {}), build=None)
    )
    found: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            found.setdefault(sample.name, []).append({**sample.labels, "value": str(sample.value)})
    return found


def test_a_value_is_read_from_its_label_or_annotation_and_kept_to_the_tracked_ones() -> None:
    by_name = CustomLabel(name="team")
    assert by_name.value_of({"team": "ml"}, {}) == "ml"
    by_annotation = CustomLabel(name="team", annotation_key="example.com/team")
    assert by_annotation.value_of({"team": "ml"}, {"example.com/team": "infra"}) == "infra"
    tracked = CustomLabel(name="team", tracked_values=("ml",))
    assert tracked.value_of({"team": "ml"}, {}) == "ml"
    assert tracked.value_of({"team": "other"}, {}) == UNTRACKED_VALUE
    assert CustomLabel(name="team").value_of({}, {}) == ""


def test_the_entries_apply_only_with_the_gate_on() -> None:
    def loaded(gate: bool) -> CustomLabels:
        raw = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "featureGates": {"CustomMetricLabels": gate},
            "metrics": {"customLabels": [{"name": "team", "sourceKind": "LocalQueue"}]},
        }
        return CustomLabels.from_configuration(load_configuration(raw).config)

    assert loaded(True) == CustomLabels((CustomLabel(name="team", source_kind="LocalQueue"),))
    assert loaded(False) == CustomLabels()


def test_label_names_follow_kueues_order_of_source_kinds() -> None:
    both = ("Workload", "ClusterQueue")
    assert LABELS.names(both) == ("custom_team", "custom_wl_team")  # type: ignore[arg-type]


def test_a_counter_carries_its_queues_values_as_they_were_when_counted() -> None:
    store = SeriesStore()
    store.custom_labels = LABELS
    objects = dict(OBJECTS)
    recording = KueueRecorder(store)
    recording.custom = values(objects)
    queue = QueueRef("cq-a", ("ml", "lq-a"), "high")
    recording.admitted(queue, waited=1, checks_waited=None, cohorts=["team"])
    objects[("ClusterQueue", "cq-a")] = meta({"team": "robotics"})
    recording.admitted(queue, waited=1, checks_waited=None, cohorts=["team"])
    text = scrape(store)
    teams = {(s["custom_team"], s["value"]) for s in text["kueue_admitted_workloads_total"]}
    assert teams == {("vision", "1.0"), ("robotics", "1.0")}
    (lq,) = text["kueue_local_queue_admitted_workloads_total"]
    assert lq["custom_site"] == "eu"
    (cohort,) = text["kueue_cohort_subtree_admitted_workloads_total"]
    assert cohort["custom_tier"] == "gold"


def test_a_series_of_an_unknown_queue_has_empty_values() -> None:
    store = SeriesStore()
    store.custom_labels = LABELS
    recording = KueueRecorder(store)
    recording.custom = values()
    recording.preempted(preempting_cluster_queue="gone", reason="InClusterQueue")
    (sample,) = scrape(store)["kueue_preempted_workloads_total"]
    assert sample["custom_team"] == ""


def test_gauges_carry_the_values_of_their_queue_cohort_and_workloads() -> None:
    store = SeriesStore()
    store.custom_labels = LABELS
    live = queue_gauges(team_engine(), LQS, ALL, "leader", custom=values())
    text = scrape(store, live)
    pending = {s["cluster_queue"]: s["custom_team"] for s in text["kueue_pending_workloads"]}
    assert pending == {"cq-a": "vision", "cq-b": "speech"}
    admitted = {
        (s["cluster_queue"], s["custom_team"], s["custom_wl_team"], s["value"])
        for s in text["kueue_admitted_active_workloads"]
    }
    # "running" is labelled research, which the entry does not track.
    assert admitted == {("cq-a", "vision", UNTRACKED_VALUE, "1.0"), ("cq-b", "speech", "", "0.0")}
    quota = {s["cohort"]: s["custom_tier"] for s in text["kueue_cohort_subtree_quota"]}
    assert quota == {"team": "gold", "root": ""}
    subtree = {
        (s["cohort"], s["custom_team"], s["value"])
        for s in text["kueue_cohort_subtree_admitted_active_workloads"]
    }
    assert ("team", "vision", "1.0") in subtree and ("team", "speech", "1.0") in subtree
    sites = {s["name"]: s["custom_site"] for s in text["kueue_local_queue_pending_workloads"]}
    assert sites == {"lq-a": "eu", "lq-b": ""}


def test_every_series_with_custom_labels_is_written_with_all_of_them() -> None:
    store = SeriesStore()
    store.custom_labels = LABELS
    live = queue_gauges(team_engine(), LQS, ALL, "leader", custom=values())
    text = scrape(store, live)
    for series in SERIES:
        wanted = set(LABELS.names(series.custom))
        for sample in text.get(series.name, []):
            assert wanted <= set(sample), series.name


def test_other_custom_labels_drop_what_was_recorded_with_the_old_ones() -> None:
    store = SeriesStore()
    recording = KueueRecorder(store)
    recording.finished(QueueRef("cq-a", None))
    assert scrape(store)["kueue_finished_workloads_total"]
    store.custom_labels = LABELS
    assert "kueue_finished_workloads_total" not in scrape(store)


def test_the_table_of_sources_names_only_series_of_the_catalogue() -> None:
    assert set(CUSTOM_SOURCES) <= {series.name for series in SERIES}
