"""Legacy rules (LEG-*, CQ-V3, CQ-V4): one failing and one passing case each."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from scheduler.api.convert import ConversionError, to_hub
from scheduler.api.validation_legacy import validate_legacy, validate_legacy_update
from tests.builders import (
    cluster_queue,
    container,
    legacy_resource,
    local_queue,
    pod_set,
    resource_flavor,
    workload,
)

BARE = container(image=None, resources=False)  # a container with a name only


def legacy_cq() -> cluster_queue:
    """A v1alpha1 ClusterQueue ``cq`` as a user wrote it (no namespaceSelector), no resources."""
    return cluster_queue().version("v1alpha1").namespace_selector(None).legacy_resources()


def legacy_wl() -> workload:
    """A v1alpha1 Workload ``w`` in ``n`` as a user wrote it: one pod set ``main`` of 1 pod."""
    return (
        workload("w", "n")
        .version("v1alpha1")
        .as_written()
        .pod_sets(pod_set().containers(BARE).legacy())
    )


SEVENTEEN = [legacy_resource(f"example.com/r{i}", f"f{i}") for i in range(17)]
NINE_LABELS = {f"l{i}": "v" for i in range(9)}
NINE_TAINTS = [{"key": f"t{i}", "effect": "NoSchedule"} for i in range(9)]

# rule, invalid object, reported path, distinctive message, valid object
CASES: list[tuple[str, dict[str, Any], str, str, dict[str, Any]]] = [
    (
        "LEG-CQ-1",
        legacy_cq().legacy_resources(*SEVENTEEN).build(),
        "spec.resources",
        "has 17 items; at most 16 are allowed",
        legacy_cq().legacy_resources(*SEVENTEEN[:16]).build(),
    ),
    (
        "LEG-CQ-2",
        legacy_cq().legacy_resources(legacy_resource("@cpu", "a")).build(),
        "spec.resources[0].name",
        '"@cpu" is not a valid name',
        legacy_cq().legacy_resources(legacy_resource("cpu_credits", "a")).build(),
    ),
    (
        "LEG-CQ-3",
        legacy_cq()
        .legacy_resources(legacy_resource("cpu", "a"), legacy_resource("cpu", "b"))
        .build(),
        "spec.resources[1].name",
        'duplicate resource "cpu"',
        legacy_cq()
        .legacy_resources(legacy_resource("cpu", "a"), legacy_resource("memory", "b"))
        .build(),
    ),
    (
        "LEG-CQ-4",
        legacy_cq().legacy_resources({"name": "cpu", "flavors": []}).build(),
        "spec.resources[0].flavors",
        "must list at least 1 flavor",
        legacy_cq().legacy_resources(legacy_resource("cpu", "a")).build(),
    ),
    (
        "LEG-CQ-5",
        legacy_cq().legacy_resources(legacy_resource("cpu", *[f"f{i}" for i in range(17)])).build(),
        "spec.resources[0].flavors",
        "has 17 items; at most 16",
        legacy_cq().legacy_resources(legacy_resource("cpu", *[f"f{i}" for i in range(16)])).build(),
    ),
    (
        "LEG-CQ-6",
        legacy_cq().legacy_resources(legacy_resource("cpu", "spot", "on_demand")).build(),
        "spec.resources[0].flavors[1].name",
        '"on_demand" is not a valid flavor name',
        legacy_cq().legacy_resources(legacy_resource("cpu", "spot", "on-demand")).build(),
    ),
    (
        "LEG-CQ-7",
        legacy_cq().legacy_resources(legacy_resource("cpu", "a", "a")).build(),
        "spec.resources[0].flavors[1].name",
        'duplicate flavor "a"',
        legacy_cq().legacy_resources(legacy_resource("cpu", "a", "b")).build(),
    ),
    (
        "LEG-CQ-8",
        legacy_cq().legacy_resources(legacy_resource("cpu", {"name": "a"})).build(),
        "spec.resources[0].flavors[0].quota",
        "required: give quota.min",
        legacy_cq().legacy_resources(legacy_resource("cpu", {"quota": {}})).build(),
    ),
    (
        "LEG-CQ-9",
        legacy_cq().legacy_resources(legacy_resource("cpu", "a", quota={"min": "ten"})).build(),
        "spec.resources[0].flavors[0].quota.min",
        '"ten" is not a valid quantity (examples: 9, 500m, 36Gi)',
        legacy_cq()
        .legacy_resources(legacy_resource("cpu", "a", quota={"min": "1.5", "max": "2e3"}))
        .build(),
    ),
    (
        "LEG-CQ-10",
        legacy_cq().legacy_resources(legacy_resource("cpu", "a", quota={"min": "-1"})).build(),
        "spec.resources[0].flavors[0].quota.min",
        "must be greater than or equal to 0, got -1",
        legacy_cq().legacy_resources(legacy_resource("cpu", "a", quota={"min": "0"})).build(),
    ),
    (
        "LEG-CQ-11",
        legacy_cq()
        .legacy_resources(legacy_resource("cpu", "a", quota={"min": 10, "max": 5}))
        .build(),
        "spec.resources[0].flavors[0].quota.max",
        "max (5) must be greater than or equal to min (10)",
        legacy_cq()
        .legacy_resources(legacy_resource("cpu", "a", quota={"min": 9, "max": 9}))
        .spec(cohort="c")
        .build(),
    ),
    (
        "LEG-CQ-12",
        legacy_cq()
        .legacy_resources(
            legacy_resource("cpu", "spot", "on-demand"),
            legacy_resource("memory", "on-demand", "spot"),
        )
        .build(),
        "spec.resources[1].flavors",
        'lists the same flavors as resource "cpu" in a different order; codependent resources '
        "must list their flavors in the same order (spot, on-demand)",
        legacy_cq()
        .legacy_resources(
            legacy_resource("cpu", "spot", "on-demand"),
            legacy_resource("memory", "spot", "on-demand"),
        )
        .build(),
    ),
    (
        "LEG-CQ-13",
        legacy_cq()
        .legacy_resources(
            legacy_resource("cpu", "spot", "on-demand"), legacy_resource("nvidia.com/gpu", "spot")
        )
        .build(),
        "spec.resources[1].flavors",
        'shares flavor(s) spot with resource "cpu" but the lists differ; resources either list '
        "exactly the same flavors in the same order (codependent) or share no flavor at all",
        legacy_cq()
        .legacy_resources(
            legacy_resource("cpu", "spot", "on-demand"),
            legacy_resource("nvidia.com/gpu", "vendor1", "vendor2"),
        )
        .build(),
    ),
    (
        "LEG-CQ-14",
        legacy_cq().spec(cohort="@prod").build(),
        "spec.cohort",
        '"@prod" is not a valid name',
        legacy_cq().spec(cohort="team-ab").build(),
    ),
    (
        "LEG-CQ-15",
        legacy_cq().queueing_strategy("FIFO").build(),
        "spec.queueingStrategy",
        'unsupported value "FIFO": use one of StrictFIFO, BestEffortFIFO',
        legacy_cq().queueing_strategy("").build(),
    ),
    (
        "LEG-CQ-16",
        legacy_cq()
        .namespace_selector({"matchExpressions": [{"key": "team", "operator": "In"}]})
        .build(),
        "spec.namespaceSelector.matchExpressions[0].values",
        "must list at least one value when operator is In",
        legacy_cq()
        .namespace_selector({"matchExpressions": [{"key": "team", "operator": "Exists"}]})
        .build(),
    ),
    (
        "CQ-V4",
        {**legacy_cq().build(), "spec": {"resourceGroups": []}},
        "spec.resourceGroups",
        'unknown field "resourceGroups"; v1alpha1 ClusterQueues use spec.resources (see '
        'kuota\'s docs/api-differences.md, "Legacy versions and conversion")',
        legacy_cq().build(),
    ),
    (
        "LEG-RF-1",
        resource_flavor("f").version("v1alpha1").unset("spec").set(labels=NINE_LABELS).build(),
        "labels",
        "has 9 items; at most 8 are allowed",
        resource_flavor("f")
        .version("v1alpha1")
        .unset("spec")
        .set(labels=dict(list(NINE_LABELS.items())[:8]))
        .build(),
    ),
    (
        "LEG-RF-2",
        resource_flavor("f").version("v1alpha1").unset("spec").set(labels={"@abc": "x"}).build(),
        "labels[@abc]",
        'invalid label key "@abc"',
        resource_flavor("f")
        .version("v1alpha1")
        .unset("spec")
        .set(labels={"example.com/zone": ""})
        .build(),
    ),
    (
        "LEG-RF-3",
        resource_flavor("f").version("v1alpha1").unset("spec").set(taints=NINE_TAINTS).build(),
        "taints",
        "has 9 items; at most 8 are allowed",
        resource_flavor("f").version("v1alpha1").unset("spec").set(taints=NINE_TAINTS[:8]).build(),
    ),
    (
        "LEG-RF-4",
        resource_flavor("f")
        .version("v1alpha1")
        .unset("spec")
        .set(
            taints=[
                {"key": "spot", "effect": "NoSchedule"},
                {"key": "spot", "effect": "NoSchedule"},
            ]
        )
        .build(),
        "taints[1]",
        'duplicate taint "spot:NoSchedule": taints must be unique by key and effect',
        resource_flavor("f")
        .version("v1alpha1")
        .unset("spec")
        .set(
            taints=[{"key": "spot", "effect": "NoSchedule"}, {"key": "spot", "effect": "NoExecute"}]
        )
        .build(),
    ),
    (
        "LEG-LQ-1",
        local_queue("q", "n").version("v1alpha2").cluster_queue("invalid_name").build(),
        "spec.clusterQueue",
        '"invalid_name" is not a valid name',
        local_queue("q", "n").version("v1alpha2").cluster_queue("research-pool").build(),
    ),
    (
        "LEG-WL-1",
        legacy_wl().pod_sets().build(),
        "spec.podSets",
        "must list at least 1 item(s)",
        legacy_wl().build(),
    ),
    (
        "LEG-WL-2",
        legacy_wl()
        .pod_sets(
            pod_set("a", 1).containers(BARE).legacy(), pod_set("a", 1).containers(BARE).legacy()
        )
        .build(),
        "spec.podSets[1].name",
        'duplicate pod set name "a"',
        legacy_wl().pod_sets(pod_set(None, 1).containers(BARE).legacy()).build(),
    ),
    (
        "LEG-WL-3",
        legacy_wl().pod_sets(pod_set("main", 0).containers(BARE).legacy()).build(),
        "spec.podSets[0].count",
        "must be greater than 0",
        legacy_wl().pod_sets(pod_set("main", 1).containers(BARE).legacy()).build(),
    ),
    (
        "LEG-WL-4",
        legacy_wl().spec(priorityClassName="high").build(),
        "spec.priority",
        "required when priorityClassName is set",
        legacy_wl().spec(priorityClassName="high").priority(0).build(),
    ),
    (
        "LEG-WL-5",
        legacy_wl().queue("Team_A").build(),
        "spec.queueName",
        '"Team_A" is not a valid name',
        legacy_wl().queue("team-a").build(),
    ),
    (
        "LEG-WL-6",
        legacy_wl()
        .spec(admission={"clusterQueue": "cq", "podSetFlavors": [{"name": "other", "flavors": {}}]})
        .build(),
        "spec.admission.podSetFlavors[0].name",
        'no pod set named "other"',
        legacy_wl()
        .spec(
            admission={
                "clusterQueue": "cq",
                "podSetFlavors": [{"name": "main", "flavors": {"cpu": "a"}}],
            }
        )
        .build(),
    ),
]


@pytest.mark.parametrize(
    ("rule", "invalid", "path", "message", "valid"), CASES, ids=[case[0] for case in CASES]
)
def test_legacy_rule_rejects(
    rule: str, invalid: dict[str, Any], path: str, message: str, valid: dict[str, Any]
) -> None:
    errors = validate_legacy(invalid)
    matching = [e for e in errors if e.rule == rule]
    assert matching, errors
    assert matching[0].field == path
    assert message in matching[0].message
    with pytest.raises(ConversionError) as caught:
        to_hub(invalid)
    assert any(e.rule == rule for e in caught.value.errors)


@pytest.mark.parametrize(
    ("rule", "invalid", "path", "message", "valid"), CASES, ids=[case[0] for case in CASES]
)
def test_legacy_rule_accepts(
    rule: str, invalid: dict[str, Any], path: str, message: str, valid: dict[str, Any]
) -> None:
    assert validate_legacy(valid) == []
    assert to_hub(valid)["apiVersion"] == "kueue.x-k8s.io/v1beta2"


def test_legacy_origins_follow_the_rule_table() -> None:
    origins = {
        case[0]: next(e.origin for e in validate_legacy(case[1]) if e.rule == case[0])
        for case in CASES
    }
    assert origins["LEG-CQ-3"] == "S" and origins["LEG-CQ-4"] == "K" and origins["CQ-V4"] == "K"
    assert origins["LEG-CQ-12"] == "L" and origins["LEG-WL-3"] == "L" and origins["LEG-RF-1"] == "L"


def test_v1alpha2_flavor_labels_are_checked_in_metadata() -> None:
    errors = validate_legacy(
        resource_flavor("f")
        .version("v1alpha2")
        .unset("spec")
        .set(metadata={"name": "f", "labels": NINE_LABELS})
        .build()
    )
    assert [(e.field, e.rule) for e in errors] == [("metadata.labels", "LEG-RF-1")]
    assert (
        validate_legacy(
            resource_flavor("f")
            .version("v1alpha2")
            .unset("spec")
            .set(metadata={"name": "f", "labels": {"instance-type": "spot"}})
            .build()
        )
        == []
    )


def test_taint_field_rules() -> None:
    errors = validate_legacy(
        resource_flavor("f")
        .version("v1alpha1")
        .unset("spec")
        .set(taints=[{"value": "@", "effect": "Sometimes"}, {"key": "a"}])
        .build()
    )
    assert [(e.field, e.message.split(":")[0]) for e in errors] == [
        ("taints[0].key", "required"),
        ("taints[0].value", '"@" is not a valid label value'),
        ("taints[0].effect", 'unsupported value "Sometimes"'),
        ("taints[1].effect", "required"),
    ]


def test_local_queue_needs_a_cluster_queue() -> None:
    errors = validate_legacy(local_queue("q", "n").version("v1alpha2").build())
    assert [(e.field, e.message, e.rule) for e in errors] == [
        ("spec.clusterQueue", "required: name the ClusterQueue", "LEG-LQ-1")
    ]


def test_partial_overlap_reports_once_per_earlier_conflicting_resource() -> None:
    obj = (
        legacy_cq()
        .legacy_resources(
            legacy_resource("cpu", "a", "b"),
            legacy_resource("memory", "a", "b"),
            legacy_resource("gpu", "b"),
        )
        .build()
    )
    errors = [e for e in validate_legacy(obj) if e.rule == "LEG-CQ-13"]
    assert [(e.field, 'resource "cpu"' in e.message) for e in errors] == [
        ("spec.resources[2].flavors", True),
        ("spec.resources[2].flavors", False),
    ]


def test_violations_come_in_rule_table_order() -> None:
    obj = (
        legacy_cq()
        .legacy_resources(
            legacy_resource("cpu", "spot", "on_demand", quota={"min": 10, "max": 5}),
            legacy_resource("memory", "on_demand", "spot"),
        )
        .build()
    )
    assert [e.rule for e in validate_legacy(obj)] == [
        "LEG-CQ-6",
        "LEG-CQ-6",
        "LEG-CQ-11",
        "LEG-CQ-11",
        "LEG-CQ-12",
    ]


def test_legacy_local_queue_cluster_queue_is_immutable() -> None:
    old = local_queue("q", "n").version("v1alpha2").cluster_queue("foo").build()
    new = local_queue("q", "n").version("v1alpha2").cluster_queue("bar").build()
    errors = validate_legacy_update(new, old)
    assert [(e.field, e.message, e.rule) for e in errors] == [
        (
            "spec.clusterQueue",
            'is immutable; it was "foo": create a new LocalQueue to point at another ClusterQueue',
            "LEG-LQ-2",
        )
    ]
    assert (
        validate_legacy_update(
            local_queue("q", "n").version("v1alpha2").cluster_queue("foo").build(),
            local_queue("q", "n").version("v1alpha2").build(),
        )
        == []
    )


def test_legacy_workload_update_rules() -> None:
    admission = {"clusterQueue": "cq", "podSetFlavors": [{"name": "main", "flavors": {"cpu": "a"}}]}
    old = legacy_wl().queue("a").spec(admission=admission).build()
    renamed = legacy_wl().queue("b").spec(admission=admission).build()
    assert [(e.field, e.rule) for e in validate_legacy_update(renamed, old)] == [
        ("spec.queueName", "LEG-WL-7")
    ]
    resized = copy.deepcopy(old)
    resized["spec"]["podSets"][0]["count"] = 2
    assert [e.field for e in validate_legacy_update(resized, old)] == ["spec.podSets"]
    reassigned = copy.deepcopy(old)
    reassigned["spec"]["admission"]["clusterQueue"] = "other"
    assert [e.field for e in validate_legacy_update(reassigned, old)] == ["spec.admission"]
    cleared = legacy_wl().queue("b").build()
    assert validate_legacy_update(cleared, old) == []


def test_cq_v3_for_v1beta1_both_admission_check_forms() -> None:
    both = yaml.safe_load(
        """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec: {admissionChecks: [a], admissionChecksStrategy: {admissionChecks: [{name: b}]}}
"""
    )
    errors = validate_legacy(both)
    assert [(e.field, e.message, e.origin, e.rule) for e in errors] == [
        ("spec", "set either admissionChecks or admissionChecksStrategy, not both", "W", "CQ-V3")
    ]
    both["spec"]["admissionChecks"] = []
    assert validate_legacy(both) == []


def test_v1beta2_objects_have_no_legacy_rules() -> None:
    obj = legacy_cq().legacy_resources(legacy_resource("cpu", "on_demand")).build()
    obj["apiVersion"] = "kueue.x-k8s.io/v1beta2"
    assert validate_legacy(obj) == []
