"""Defaulting (docs/validation.md#defaulting)."""

from __future__ import annotations

import copy

from scheduler.api.defaults import (
    RESOURCE_IN_USE_FINALIZER,
    apply_create_defaults,
    apply_schema_defaults,
)
from tests.builders import (
    KUEUE,
    cluster_queue,
    cohort,
    container,
    flavor_quotas,
    job,
    local_queue,
    multikueue_cluster,
    pod_set,
    resource_flavor,
    workload,
)

WHEN = "2025-01-01T00:00:00Z"  # every condition's time


def test_cluster_queue_schema_defaults() -> None:
    queue = apply_schema_defaults(
        {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "cq"}}
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
    queue = (
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .queueing_strategy("")
        .stop_policy("Hold")
        .preemption(reclaimWithinCohort="Any", borrowWithinCohort={"policy": "LowerPriority"})
        .spec(flavorFungibility={"whenCanBorrow": ""})
        .build()
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
    assert apply_schema_defaults(
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).spec(fairSharing={}).build()
    )["spec"]["fairSharing"] == {"weight": 1}
    assert (
        "fairSharing"
        not in apply_schema_defaults(
            cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).build()
        )["spec"]
    )
    assert apply_schema_defaults(cohort("co").spec(fairSharing={}).build())["spec"][
        "fairSharing"
    ] == {"weight": 1}
    assert apply_schema_defaults(
        local_queue().cluster_queue("cq").spec(fairSharing={"weight": "0"}).build()
    )["spec"]["fairSharing"] == {"weight": "0"}
    assert "fairSharing" not in apply_schema_defaults(cohort("co").build())["spec"]


def test_local_queue_stop_policy() -> None:
    assert apply_schema_defaults(local_queue().cluster_queue("cq").build())["spec"] == {
        "clusterQueue": "cq",
        "stopPolicy": "None",
    }


def test_workload_defaults() -> None:
    wl = (
        workload()
        .as_written()
        .queue("lq")
        .pod_sets(pod_set(None, None, cpu="1"), pod_set("b", 0, cpu="1"))
        .reserve_quota("cq", {"count": 1}, at=WHEN, message="")
        .build()
    )
    defaulted = apply_schema_defaults(wl)
    assert defaulted["spec"]["active"] is True
    assert [(item["name"], item["count"]) for item in defaulted["spec"]["podSets"]] == [
        ("main", 1),
        ("b", 0),
    ]
    assert defaulted["status"]["admission"]["podSetAssignments"][0]["name"] == "main"
    assert (
        apply_schema_defaults(
            workload().as_written().queue("lq").pod_set(None, None, cpu="1").active(False).build()
        )["spec"]["active"]
        is False
    )


def test_multikueue_cluster_location_type() -> None:
    defaulted = apply_schema_defaults(
        multikueue_cluster("worker").kubeconfig_secret("worker-secret", location_type=None).build()
    )
    assert defaulted["spec"]["clusterSource"]["kubeConfig"] == {
        "location": "worker-secret",
        "locationType": "Secret",
    }
    profile = apply_schema_defaults(
        multikueue_cluster("worker")
        .spec(clusterSource={"clusterProfileRef": {"name": "p"}})
        .build()
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
    queue = cluster_queue().build()
    before = copy.deepcopy(queue)
    apply_schema_defaults(queue)
    apply_create_defaults(queue)
    assert queue == before


def test_other_groups_are_untouched() -> None:
    obj = job().labels().parallelism(None).completions(None).containers(container()).build()
    assert apply_schema_defaults(obj) == obj
    assert apply_create_defaults(obj) == obj


def test_finalizer_added_on_create_once() -> None:
    for obj in (cluster_queue().build(), resource_flavor("rf").build()):
        created = apply_create_defaults(obj)
        assert created["metadata"]["finalizers"] == [RESOURCE_IN_USE_FINALIZER]
        assert apply_create_defaults(created)["metadata"]["finalizers"] == [
            RESOURCE_IN_USE_FINALIZER
        ]
    other = cluster_queue().build()
    other["metadata"]["finalizers"] = ["example.com/keep"]
    assert apply_create_defaults(other)["metadata"]["finalizers"] == [
        "example.com/keep",
        RESOURCE_IN_USE_FINALIZER,
    ]
    assert (
        "finalizers"
        not in apply_create_defaults(local_queue().cluster_queue("cq").build())["metadata"]
    )
    assert "finalizers" not in apply_create_defaults(cohort("co").build())["metadata"]


def test_min_count_dropped_only_without_partial_admission() -> None:
    wl = (
        workload().as_written().queue("lq").pod_sets(pod_set(None, 3, cpu="1").min_count(2)).build()
    )
    assert apply_create_defaults(wl)["spec"]["podSets"][0]["minCount"] == 2
    assert (
        "minCount" not in apply_create_defaults(wl, partial_admission=False)["spec"]["podSets"][0]
    )


def test_wrong_shapes_are_left_for_validation() -> None:
    queue = cluster_queue().spec(preemption="Never", flavorFungibility=["x"]).build()
    spec = apply_schema_defaults(queue)["spec"]
    assert spec["preemption"] == "Never"
    assert spec["flavorFungibility"] == ["x"]
    assert (
        apply_schema_defaults({"kind": "ClusterQueue", "apiVersion": KUEUE, "spec": 5})["spec"] == 5
    )
