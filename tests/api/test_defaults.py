"""Defaulting (docs/validation.md#defaulting)."""

from __future__ import annotations

import copy

from scheduler.api.defaults import (
    RESOURCE_IN_USE_FINALIZER,
    apply_create_defaults,
    apply_schema_defaults,
)
from tests.api import validation_builders as b


def test_cluster_queue_schema_defaults() -> None:
    queue = apply_schema_defaults(
        {"apiVersion": b.KUEUE, "kind": "ClusterQueue", "metadata": {"name": "cq"}}
    )
    assert queue["spec"] == {
        "queueingStrategy": "BestEffortFIFO",
        "stopPolicy": "None",
        "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
        "preemption": {
            "withinClusterQueue": "Never",
            "reclaimWithinCohort": "Never",
            "borrowWithinCohort": {"policy": "Never"},
        },
    }
    assert "namespaceSelector" not in queue["spec"]


def test_empty_enum_strings_count_as_absent_and_set_values_are_kept() -> None:
    queue = b.simple_cluster_queue(
        queueingStrategy="",
        stopPolicy="Hold",
        flavorFungibility={"whenCanBorrow": ""},
        preemption={
            "reclaimWithinCohort": "Any",
            "borrowWithinCohort": {"policy": "LowerPriority"},
        },
    )
    spec = apply_schema_defaults(queue)["spec"]
    assert spec["queueingStrategy"] == "BestEffortFIFO"
    assert spec["stopPolicy"] == "Hold"
    assert spec["flavorFungibility"] == {
        "whenCanBorrow": "MayStopSearch",
        "whenCanPreempt": "TryNextFlavor",
    }
    assert spec["preemption"] == {
        "reclaimWithinCohort": "Any",
        "withinClusterQueue": "Never",
        "borrowWithinCohort": {"policy": "LowerPriority"},
    }


def test_fair_sharing_weight_only_when_fair_sharing_is_present() -> None:
    assert apply_schema_defaults(b.simple_cluster_queue(fairSharing={}))["spec"]["fairSharing"] == {
        "weight": 1
    }
    assert "fairSharing" not in apply_schema_defaults(b.simple_cluster_queue())["spec"]
    assert apply_schema_defaults(b.cohort(fairSharing={}))["spec"]["fairSharing"] == {"weight": 1}
    assert apply_schema_defaults(b.local_queue(fairSharing={"weight": "0"}))["spec"][
        "fairSharing"
    ] == {"weight": "0"}
    assert "fairSharing" not in apply_schema_defaults(b.cohort())["spec"]


def test_local_queue_stop_policy() -> None:
    assert apply_schema_defaults(b.local_queue())["spec"] == {
        "clusterQueue": "cq",
        "stopPolicy": "None",
    }


def test_workload_defaults() -> None:
    wl = b.reserved(
        b.workload(pod_sets=[b.pod_set(), b.pod_set("b", count=0)]), assignments=[{"count": 1}]
    )
    defaulted = apply_schema_defaults(wl)
    assert defaulted["spec"]["active"] is True
    assert [(item["name"], item["count"]) for item in defaulted["spec"]["podSets"]] == [
        ("main", 1),
        ("b", 0),
    ]
    assert defaulted["status"]["admission"]["podSetAssignments"][0]["name"] == "main"
    assert apply_schema_defaults(b.workload(active=False))["spec"]["active"] is False


def test_multikueue_cluster_location_type() -> None:
    defaulted = apply_schema_defaults(b.multikueue_cluster())
    assert defaulted["spec"]["clusterSource"]["kubeConfig"] == {
        "location": "worker-secret",
        "locationType": "Secret",
    }
    profile = apply_schema_defaults(
        b.multikueue_cluster(source={"clusterProfileRef": {"name": "p"}})
    )
    assert profile["spec"]["clusterSource"] == {"clusterProfileRef": {"name": "p"}}


def test_legacy_cluster_queue_defaults() -> None:
    legacy = {
        "apiVersion": "kueue.x-k8s.io/v1alpha1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "resources": [
                {
                    "name": "cpu",
                    "flavors": [{"quota": {}}, {"name": "spot", "quota": {"min": 9, "max": 12}}],
                }
            ]
        },
    }
    flavors = apply_schema_defaults(legacy)["spec"]["resources"][0]["flavors"]
    assert flavors == [
        {"name": "default", "quota": {"min": 0}},
        {"name": "spot", "quota": {"min": 9, "max": 12}},
    ]
    assert "queueingStrategy" not in apply_schema_defaults(legacy)["spec"]


def test_defaults_return_a_new_object() -> None:
    queue = b.cluster_queue()
    before = copy.deepcopy(queue)
    apply_schema_defaults(queue)
    apply_create_defaults(queue)
    assert queue == before


def test_other_groups_are_untouched() -> None:
    job = b.job()
    assert apply_schema_defaults(job) == job
    assert apply_create_defaults(job) == job


def test_finalizer_added_on_create_once() -> None:
    for obj in (b.cluster_queue(), b.resource_flavor()):
        created = apply_create_defaults(obj)
        assert created["metadata"]["finalizers"] == [RESOURCE_IN_USE_FINALIZER]
        assert apply_create_defaults(created)["metadata"]["finalizers"] == [
            RESOURCE_IN_USE_FINALIZER
        ]
    other = b.cluster_queue()
    other["metadata"]["finalizers"] = ["example.com/keep"]
    assert apply_create_defaults(other)["metadata"]["finalizers"] == [
        "example.com/keep",
        RESOURCE_IN_USE_FINALIZER,
    ]
    assert "finalizers" not in apply_create_defaults(b.local_queue())["metadata"]
    assert "finalizers" not in apply_create_defaults(b.cohort())["metadata"]


def test_min_count_dropped_only_without_partial_admission() -> None:
    wl = b.workload(pod_sets=[b.pod_set(count=3, min_count=2)])
    assert apply_create_defaults(wl)["spec"]["podSets"][0]["minCount"] == 2
    assert (
        "minCount" not in apply_create_defaults(wl, partial_admission=False)["spec"]["podSets"][0]
    )


def test_wrong_shapes_are_left_for_validation() -> None:
    queue = b.cluster_queue(preemption="Never", flavorFungibility=["x"])
    spec = apply_schema_defaults(queue)["spec"]
    assert spec["preemption"] == "Never"
    assert spec["flavorFungibility"] == ["x"]
    assert (
        apply_schema_defaults({"kind": "ClusterQueue", "apiVersion": b.KUEUE, "spec": 5})["spec"]
        == 5
    )
