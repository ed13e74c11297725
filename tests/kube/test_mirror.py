"""The mirror: informer events into the engine and the indexes the executor reads."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from scheduler.api import objects
from scheduler.core.engine import Engine
from scheduler.jobs.controller import FlavorPlacement
from scheduler.kube.informer import Event
from scheduler.kube.mirror import Mirror, toleration_json

from .world import SPOT_TOLERATION, cluster_queue, flavor, job, local_queue, priority_class


def event(kind: str, obj: dict[str, Any]) -> Event:
    return Event(kind, obj, objects.key(obj))  # type: ignore[arg-type]


def workload(name: str, *, owner: str | None = "uid-train", label: str | None = None) -> dict:  # type: ignore[type-arg]
    metadata: dict[str, Any] = {"name": name, "namespace": "ml", "uid": f"uid-{name}"}
    if owner:
        metadata["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": owner}
        ]
    if label:
        metadata["labels"] = {"kueue.x-k8s.io/job-uid": label}
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": metadata,
        "spec": {
            "queueName": "lq",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture
def mirror() -> Mirror:
    return Mirror(Engine())


def test_kuota_objects_reach_the_engine_and_the_queues_are_kept_as_stored(mirror: Mirror) -> None:
    queue = cluster_queue()
    mirror.on_kueue(event("ADDED", queue))
    mirror.on_kueue(event("ADDED", local_queue()))
    assert "cq" in mirror.engine.cluster_queue_names()
    assert mirror.cluster_queues["cq"] == queue
    assert mirror.local_queues["ml/lq"]["spec"] == {"clusterQueue": "cq"}

    mirror.on_kueue(event("DELETED", queue))
    assert "cq" not in mirror.cluster_queues
    assert "cq" not in mirror.engine.cluster_queue_names()


def test_a_workload_is_indexed_by_the_job_that_owns_it(mirror: Mirror) -> None:
    mirror.on_kueue(event("ADDED", workload("w1")))
    assert mirror.workload_of_job == {"uid-train": "ml/w1"}
    assert mirror.workload_for("uid-train") == workload("w1")
    assert mirror.dirty_jobs == {"uid-train"}
    assert mirror.engine.workload_state("ml/w1").state == "Pending"

    mirror.on_kueue(event("ADDED", workload("w2", owner=None, label="uid-other")))
    assert mirror.workload_of_job["uid-other"] == "ml/w2", "the job-uid label, without owner"


def test_a_deleted_workload_frees_the_job_index(mirror: Mirror) -> None:
    mirror.on_kueue(event("ADDED", workload("w1")))
    mirror.dirty_jobs.clear()
    mirror.on_kueue(event("DELETED", workload("w1")))
    assert mirror.workload_for("uid-train") is None
    assert "ml/w1" not in mirror.workloads
    assert mirror.dirty_jobs == {"uid-train"}, "its Job is decided again (a new Workload)"
    with pytest.raises(KeyError):
        mirror.engine.workload_state("ml/w1")


def test_deleting_an_older_workload_keeps_the_index_of_the_newer_one(mirror: Mirror) -> None:
    mirror.on_kueue(event("ADDED", workload("old")))
    mirror.on_kueue(event("ADDED", workload("new")))
    mirror.on_kueue(event("DELETED", workload("old")))
    assert mirror.workload_of_job["uid-train"] == "ml/new"


def test_the_unfinished_workloads_are_those_the_queue_statuses_count(mirror: Mirror) -> None:
    """Finished Workloads stay until their owner deletes them; the per-second queue status
    refresh walks only the others."""
    running, done = workload("running"), workload("done", owner=None)
    done["metadata"]["resourceVersion"] = "1"
    mirror.on_kueue(event("ADDED", running))
    mirror.on_kueue(event("ADDED", done))
    assert mirror.unfinished_workloads == {"ml/running", "ml/done"}
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
    mirror.on_kueue(event("MODIFIED", finished))
    assert mirror.unfinished_workloads == {"ml/running"}
    mirror.remember_workload("ml/done", done)  # older than the stored one: ignored
    assert mirror.unfinished_workloads == {"ml/running"}
    mirror.on_kueue(event("DELETED", running))
    assert mirror.unfinished_workloads == set()


def test_an_object_that_does_not_parse_is_skipped_and_logged(
    mirror: Mirror, caplog: pytest.LogCaptureFixture
) -> None:
    broken = cluster_queue()
    broken["spec"]["resourceGroups"] = "everything"
    with caplog.at_level(logging.WARNING, logger="kuota.mirror"):
        mirror.on_kueue(event("ADDED", broken))
    assert "cq" not in mirror.engine.cluster_queue_names()
    (record,) = caplog.records
    assert record.getMessage() == "skipping an object that does not parse"
    assert record.object == "ClusterQueue/cq"  # type: ignore[attr-defined]
    assert "resourceGroups" in record.error  # type: ignore[attr-defined]

    mirror.on_kueue(event("ADDED", cluster_queue()))
    assert "cq" in mirror.engine.cluster_queue_names(), "the next good version is applied"


def test_flavor_placements_are_read_from_the_engine(mirror: Mirror) -> None:
    mirror.on_job(event("ADDED", job("train")))
    mirror.dirty_jobs.clear()
    mirror.on_kueue(event("ADDED", flavor()))
    assert mirror.dirty_jobs == {"uid-train"}, "a Job waiting for the flavor may start"
    assert mirror.flavor_placements()["spot"] == FlavorPlacement(
        node_labels={"instance-type": "spot"}, tolerations=(SPOT_TOLERATION,)
    )
    assert mirror.engine.flavor_specs()["spot"].node_labels == {"instance-type": "spot"}

    mirror.on_kueue(event("DELETED", flavor()))
    assert "spot" not in mirror.flavor_placements()


def test_tolerations_are_rendered_as_the_api_serializes_them(mirror: Mirror) -> None:
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
    mirror.on_kueue(event("ADDED", rendered))
    spec = mirror.engine.flavor_specs()["spot"]
    assert [toleration_json(t) for t in spec.tolerations] == rendered["spec"]["tolerations"]


def test_priority_classes_come_from_the_engine_with_the_lowest_global_default(
    mirror: Mirror,
) -> None:
    for obj in (
        priority_class("high", 100),
        priority_class("default-b", 5, default=True),
        priority_class("default-a", 5, default=True),
        priority_class("default-c", 9, default=True),
    ):
        mirror.on_priority_class(event("ADDED", obj))
    mirror.on_kueue(
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
    classes = mirror.classes()
    assert classes.pod == {"high": 100, "default-b": 5, "default-a": 5, "default-c": 9}
    assert classes.workload == {"urgent": 1000}
    assert classes.global_default == ("default-a", 5), "lowest value, then name"

    mirror.on_priority_class(event("DELETED", priority_class("default-a", 5, default=True)))
    mirror.on_priority_class(event("MODIFIED", priority_class("default-b", 5)))
    assert mirror.classes().global_default == ("default-c", 9)
    assert "default-a" not in mirror.classes().pod


def test_jobs_and_namespaces(mirror: Mirror) -> None:
    mirror.on_job(event("ADDED", job("train")))
    assert mirror.jobs["uid-train"]["metadata"]["name"] == "train"
    assert mirror.dirty_jobs == {"uid-train"}
    mirror.on_job(event("DELETED", job("train")))
    assert "uid-train" not in mirror.jobs
    nameless = job("x")
    del nameless["metadata"]["uid"]
    mirror.on_job(event("ADDED", nameless))
    assert mirror.jobs == {}, "a Job without a UID cannot be indexed"

    mirror.on_namespace(
        event("ADDED", {"metadata": {"name": "ml", "labels": {"team": "a", "n": 1}}})
    )
    assert mirror.engine.cache.namespace_labels("ml") == {"team": "a"}


def test_a_job_naming_a_prebuilt_workload_is_matched_with_it_both_ways(mirror: Mirror) -> None:
    """MultiKueue's worker side: the Workload (a copy, no owner) exists before its Job."""
    mirror.on_kueue(event("ADDED", workload("from-manager", owner=None)))
    worker_job = job("train")
    worker_job["metadata"]["labels"]["kueue.x-k8s.io/prebuilt-workload-name"] = "from-manager"
    mirror.on_job(event("ADDED", worker_job))
    assert mirror.workload_for("uid-train") == workload("from-manager", owner=None)
    mirror.dirty_jobs.clear()
    admitted = workload("from-manager", owner=None)
    admitted["metadata"]["resourceVersion"] = "9"
    mirror.on_kueue(event("MODIFIED", admitted))
    assert mirror.dirty_jobs == {"uid-train"}, "a change of the Workload decides for its Job"
    mirror.on_job(event("DELETED", worker_job))
    assert mirror.prebuilt_jobs == {}


def test_a_pod_groups_pods_are_kept_together_and_its_workload_indexed_by_the_group(
    mirror: Mirror,
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
        mirror.on_job(event("ADDED", pod(index)))
    mirror.on_job(event("ADDED", pod(9, group=None)))
    assert set(mirror.pod_groups["podgroup/ml/g"]) == {"pod-0", "pod-1"}
    assert set(mirror.jobs) == {"pod-9"}, "a single pod is a job of its own"
    assert {"podgroup/ml/g", "pod-9"} <= mirror.dirty_jobs
    grouped = workload("g", owner=None)
    grouped["metadata"]["annotations"] = {"kueue.x-k8s.io/is-group-workload": "true"}
    mirror.on_kueue(event("ADDED", grouped))
    assert mirror.workload_for("podgroup/ml/g") == grouped
    mirror.on_job(event("DELETED", pod(0)))
    mirror.on_job(event("DELETED", pod(1)))
    assert "podgroup/ml/g" not in mirror.pod_groups
