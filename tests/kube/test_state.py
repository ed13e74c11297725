"""The cluster state: informer events into the engine and the indexes the executor reads."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from scheduler.api import objects
from scheduler.core.engine import Engine
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.kube.cluster_settings import toleration_json
from scheduler.kube.informer import Event
from scheduler.kube.state import ClusterState
from tests.builders import container, pod_set, workload

from .world import SPOT_TOLERATION, cluster_queue, flavor, job, local_queue, priority_class


def event(kind: str, obj: dict[str, Any]) -> Event:
    return Event(kind, obj, objects.key(obj))  # type: ignore[arg-type]


def queued(name: str) -> workload:
    """Workload ``name`` in ``ml`` as stored: queue ``lq``, one pod of 1 cpu, no owner."""
    return (
        workload(name, "ml")
        .created(None)
        .queue("lq")
        .pod_sets(pod_set().containers(container(image=None, requests={"cpu": "1"})))
    )


def unfinished(state: ClusterState) -> set[str]:
    return {objects.key(workload) for workload in state.unfinished_workloads()}


@pytest.fixture
def state() -> ClusterState:
    return ClusterState(Engine())


def test_kuota_objects_reach_the_engine_and_the_queues_are_kept_as_stored(
    state: ClusterState,
) -> None:
    queue = cluster_queue()
    state.on_kueue(event("ADDED", queue))
    state.on_kueue(event("ADDED", local_queue()))
    assert "cq" in state.engine.view.cluster_queue_names()
    assert state.stored("ClusterQueue")["cq"] == queue
    assert state.stored("LocalQueue")["ml/lq"]["spec"] == {"clusterQueue": "cq"}

    state.on_kueue(event("DELETED", queue))
    assert "cq" not in state.stored("ClusterQueue")
    assert "cq" not in state.engine.view.cluster_queue_names()


def test_a_workload_is_indexed_by_the_job_that_owns_it(state: ClusterState) -> None:
    state.on_kueue(event("ADDED", queued("w1").owner("Job", "train", "uid-train").build()))
    assert objects.key(state.workload_for("uid-train") or {}) == "ml/w1"
    assert (
        state.workload_for("uid-train") == queued("w1").owner("Job", "train", "uid-train").build()
    )
    assert state.jobs_to_decide.take() == {"uid-train"}
    assert state.engine.view.workload_state("ml/w1").state == "Pending"

    state.on_kueue(event("ADDED", queued("w2").job_uid("uid-other").build()))
    assert objects.key(state.workload_for("uid-other") or {}) == "ml/w2", (
        "the job-uid label, without owner"
    )


def test_a_deleted_workload_frees_the_job_index(state: ClusterState) -> None:
    state.on_kueue(event("ADDED", queued("w1").owner("Job", "train", "uid-train").build()))
    state.jobs_to_decide.take()
    state.on_kueue(event("DELETED", queued("w1").owner("Job", "train", "uid-train").build()))
    assert state.workload_for("uid-train") is None
    assert "ml/w1" not in state.stored("Workload")
    assert state.jobs_to_decide.take() == {"uid-train"}, "its Job is decided again (a new Workload)"
    with pytest.raises(KeyError):
        state.engine.view.workload_state("ml/w1")


def test_deleting_an_older_workload_keeps_the_index_of_the_newer_one(state: ClusterState) -> None:
    state.on_kueue(event("ADDED", queued("old").owner("Job", "train", "uid-train").build()))
    state.on_kueue(event("ADDED", queued("new").owner("Job", "train", "uid-train").build()))
    state.on_kueue(event("DELETED", queued("old").owner("Job", "train", "uid-train").build()))
    assert objects.key(state.workload_for("uid-train") or {}) == "ml/new"


def test_the_unfinished_workloads_are_those_the_queue_statuses_count(state: ClusterState) -> None:
    """Finished Workloads stay until their owner deletes them; the per-second queue status
    refresh walks only the others."""
    running, done = (
        queued("running").owner("Job", "train", "uid-train").build(),
        queued("done").build(),
    )
    done["metadata"]["resourceVersion"] = "1"
    state.on_kueue(event("ADDED", running))
    state.on_kueue(event("ADDED", done))
    assert unfinished(state) == {"ml/running", "ml/done"}
    finished = {
        **done,
        "metadata": {**done["metadata"], "resourceVersion": "2"},
        "status": {
            "conditions": [
                {
                    "type": "Finished",
                    "status": "True",
                    "reason": "Succeeded",
                    "lastTransitionTime": "2026-11-26T10:00:00Z",
                }
            ]
        },
    }
    state.on_kueue(event("MODIFIED", finished))
    assert unfinished(state) == {"ml/running"}
    state.remember(done)  # older than the stored one: ignored
    assert unfinished(state) == {"ml/running"}
    state.on_kueue(event("DELETED", running))
    assert unfinished(state) == set()


def test_an_object_that_does_not_parse_is_skipped_and_logged(
    state: ClusterState, caplog: pytest.LogCaptureFixture
) -> None:
    broken = cluster_queue()
    broken["spec"]["resourceGroups"] = "everything"
    with caplog.at_level(logging.WARNING, logger="kuota.state"):
        state.on_kueue(event("ADDED", broken))
    assert "cq" not in state.engine.view.cluster_queue_names()
    (record,) = caplog.records
    assert record.getMessage() == "skipping an object that does not parse"
    assert record.object == "ClusterQueue/cq"  # type: ignore[attr-defined]
    assert "resourceGroups" in record.error  # type: ignore[attr-defined]

    state.on_kueue(event("ADDED", cluster_queue()))
    assert "cq" in state.engine.view.cluster_queue_names(), "the next good version is applied"


def test_flavor_placements_are_read_from_the_engine(state: ClusterState) -> None:
    state.on_job(event("ADDED", job("train")))
    state.jobs_to_decide.take()
    state.on_kueue(event("ADDED", flavor()))
    assert state.jobs_to_decide.take() == {"uid-train"}, "a Job waiting for the flavor may start"
    assert state.settings.flavor_placements()["spot"] == FlavorPlacement(
        node_labels={"instance-type": "spot"}, tolerations=(SPOT_TOLERATION,)
    )
    assert state.engine.view.flavor_specs()["spot"].node_labels == {"instance-type": "spot"}

    state.on_kueue(event("DELETED", flavor()))
    assert "spot" not in state.settings.flavor_placements()


def test_tolerations_are_rendered_as_the_api_serializes_them(state: ClusterState) -> None:
    rendered = flavor()
    rendered["spec"]["tolerations"] = [
        {
            "key": "a",
            "operator": "Equal",
            "value": "1",
            "effect": "NoExecute",
            "tolerationSeconds": 30,
        },
        {"operator": "Exists"},
    ]
    state.on_kueue(event("ADDED", rendered))
    spec = state.engine.view.flavor_specs()["spot"]
    assert [toleration_json(t) for t in spec.tolerations] == rendered["spec"]["tolerations"]


def test_priority_classes_come_from_the_engine_with_the_lowest_global_default(
    state: ClusterState,
) -> None:
    for obj in (
        priority_class("high", 100),
        priority_class("default-b", 5, default=True),
        priority_class("default-a", 5, default=True),
        priority_class("default-c", 9, default=True),
    ):
        state.settings.on_priority_class(event("ADDED", obj))
    state.on_kueue(
        event(
            "ADDED",
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": "urgent"},
                "value": 1000,
            },
        )
    )
    classes = state.settings.classes()
    assert classes.pod == {"high": 100, "default-b": 5, "default-a": 5, "default-c": 9}
    assert classes.workload == {"urgent": 1000}
    assert classes.global_default == ("default-a", 5), "lowest value, then name"

    state.settings.on_priority_class(event("DELETED", priority_class("default-a", 5, default=True)))
    state.settings.on_priority_class(event("MODIFIED", priority_class("default-b", 5)))
    assert state.settings.classes().global_default == ("default-c", 9)
    assert "default-a" not in state.settings.classes().pod


def test_jobs_and_namespaces(state: ClusterState) -> None:
    state.on_job(event("ADDED", job("train")))
    assert (state.job("uid-train") or {})["metadata"]["name"] == "train"
    assert state.jobs_to_decide.take() == {"uid-train"}
    state.on_job(event("DELETED", job("train")))
    assert state.job("uid-train") is None
    nameless = job("x")
    del nameless["metadata"]["uid"]
    state.on_job(event("ADDED", nameless))
    assert state.counts()["jobs"] == 0, "a Job without a UID cannot be indexed"

    state.settings.on_namespace(
        event("ADDED", {"metadata": {"name": "ml", "labels": {"team": "a", "n": 1}}})
    )
    assert state.engine.cache.namespace_labels("ml") == {"team": "a"}


def test_a_job_naming_a_prebuilt_workload_is_matched_with_it_both_ways(state: ClusterState) -> None:
    """MultiKueue's worker side: the Workload (a copy, no owner) exists before its Job."""
    state.on_kueue(event("ADDED", queued("from-manager").build()))
    worker_job = job("train")
    worker_job["metadata"]["labels"]["kueue.x-k8s.io/prebuilt-workload-name"] = "from-manager"
    state.on_job(event("ADDED", worker_job))
    assert state.workload_for("uid-train") == queued("from-manager").build()
    state.jobs_to_decide.take()
    admitted = queued("from-manager").build()
    admitted["metadata"]["resourceVersion"] = "9"
    state.on_kueue(event("MODIFIED", admitted))
    assert state.jobs_to_decide.take() == {"uid-train"}, (
        "a change of the Workload decides for its Job"
    )
    state.on_job(event("DELETED", worker_job))
    assert state.job_key_of(queued("from-manager").build()) is None, "no Job names it"


def test_a_pod_groups_pods_are_kept_together_and_its_workload_indexed_by_the_group(
    state: ClusterState,
) -> None:
    def pod(index: int, group: str | None = "g") -> dict[str, Any]:
        labels = {"kueue.x-k8s.io/managed": "true", "kueue.x-k8s.io/queue-name": "lq"}
        if group:
            labels["kueue.x-k8s.io/pod-group-name"] = group
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"p{index}",
                "namespace": "ml",
                "uid": f"pod-{index}",
                "labels": labels,
                "resourceVersion": "1",
            },
        }

    for index in range(2):
        state.on_job(event("ADDED", pod(index)))
    state.on_job(event("ADDED", pod(9, group=None)))
    assert {objects.uid(p) for p in state.group("podgroup/ml/g")} == {"pod-0", "pod-1"}
    assert state.job("pod-9") is not None and state.counts()["jobs"] == 1, (
        "a single pod is a job of its own"
    )
    assert {"podgroup/ml/g", "pod-9"} <= state.jobs_to_decide.take()
    grouped = queued("g").build()
    grouped["metadata"]["annotations"] = {"kueue.x-k8s.io/is-group-workload": "true"}
    state.on_kueue(event("ADDED", grouped))
    assert state.workload_for("podgroup/ml/g") == grouped
    state.on_job(event("DELETED", pod(0)))
    state.on_job(event("DELETED", pod(1)))
    assert state.group("podgroup/ml/g") == []
