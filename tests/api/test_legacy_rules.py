"""Legacy rules (LEG-*, CQ-V3, CQ-V4): one failing and one passing case each."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from scheduler.api.convert import ConversionError, to_hub
from scheduler.api.validation_legacy import validate_legacy, validate_legacy_update


def cq(resources: Any, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1alpha1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"resources": resources, **spec},
    }


def res(
    name: str, *flavors: str | dict[str, Any], quota: dict[str, Any] | None = None
) -> dict[str, Any]:
    items = [
        f if isinstance(f, dict) else {"name": f, "quota": quota or {"min": "1"}} for f in flavors
    ]
    return {"name": name, "flavors": items}


def rf(version: str = "v1alpha1", **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "ResourceFlavor",
        "metadata": {"name": "f"},
        **fields,
    }


def lq(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1alpha2",
        "kind": "LocalQueue",
        "metadata": {"name": "q", "namespace": "n"},
        "spec": spec,
    }


def pod_set(name: str | None = "main", count: int = 1) -> dict[str, Any]:
    item: dict[str, Any] = {"count": count, "spec": {"containers": [{"name": "c"}]}}
    if name is not None:
        item["name"] = name
    return item


def wl(**spec: Any) -> dict[str, Any]:
    spec.setdefault("podSets", [pod_set()])
    return {
        "apiVersion": "kueue.x-k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "n"},
        "spec": spec,
    }


SEVENTEEN = [res(f"example.com/r{i}", f"f{i}") for i in range(17)]
NINE_LABELS = {f"l{i}": "v" for i in range(9)}
NINE_TAINTS = [{"key": f"t{i}", "effect": "NoSchedule"} for i in range(9)]

# rule, invalid object, reported path, distinctive message, valid object
CASES: list[tuple[str, dict[str, Any], str, str, dict[str, Any]]] = [
    (
        "LEG-CQ-1",
        cq(SEVENTEEN),
        "spec.resources",
        "has 17 items; at most 16 are allowed",
        cq(SEVENTEEN[:16]),
    ),
    (
        "LEG-CQ-2",
        cq([res("@cpu", "a")]),
        "spec.resources[0].name",
        '"@cpu" is not a valid name',
        cq([res("cpu_credits", "a")]),
    ),
    (
        "LEG-CQ-3",
        cq([res("cpu", "a"), res("cpu", "b")]),
        "spec.resources[1].name",
        'duplicate resource "cpu"',
        cq([res("cpu", "a"), res("memory", "b")]),
    ),
    (
        "LEG-CQ-4",
        cq([{"name": "cpu", "flavors": []}]),
        "spec.resources[0].flavors",
        "must list at least 1 flavor",
        cq([res("cpu", "a")]),
    ),
    (
        "LEG-CQ-5",
        cq([res("cpu", *[f"f{i}" for i in range(17)])]),
        "spec.resources[0].flavors",
        "has 17 items; at most 16",
        cq([res("cpu", *[f"f{i}" for i in range(16)])]),
    ),
    (
        "LEG-CQ-6",
        cq([res("cpu", "spot", "on_demand")]),
        "spec.resources[0].flavors[1].name",
        '"on_demand" is not a valid flavor name',
        cq([res("cpu", "spot", "on-demand")]),
    ),
    (
        "LEG-CQ-7",
        cq([res("cpu", "a", "a")]),
        "spec.resources[0].flavors[1].name",
        'duplicate flavor "a"',
        cq([res("cpu", "a", "b")]),
    ),
    (
        "LEG-CQ-8",
        cq([res("cpu", {"name": "a"})]),
        "spec.resources[0].flavors[0].quota",
        "required: give quota.min",
        cq([res("cpu", {"quota": {}})]),
    ),
    (
        "LEG-CQ-9",
        cq([res("cpu", "a", quota={"min": "ten"})]),
        "spec.resources[0].flavors[0].quota.min",
        '"ten" is not a valid quantity (examples: 9, 500m, 36Gi)',
        cq([res("cpu", "a", quota={"min": "1.5", "max": "2e3"})]),
    ),
    (
        "LEG-CQ-10",
        cq([res("cpu", "a", quota={"min": "-1"})]),
        "spec.resources[0].flavors[0].quota.min",
        "must be greater than or equal to 0, got -1",
        cq([res("cpu", "a", quota={"min": "0"})]),
    ),
    (
        "LEG-CQ-11",
        cq([res("cpu", "a", quota={"min": 10, "max": 5})]),
        "spec.resources[0].flavors[0].quota.max",
        "max (5) must be greater than or equal to min (10)",
        cq([res("cpu", "a", quota={"min": 9, "max": 9})], cohort="c"),
    ),
    (
        "LEG-CQ-12",
        cq([res("cpu", "spot", "on-demand"), res("memory", "on-demand", "spot")]),
        "spec.resources[1].flavors",
        'lists the same flavors as resource "cpu" in a different order; codependent resources '
        "must list their flavors in the same order (spot, on-demand)",
        cq([res("cpu", "spot", "on-demand"), res("memory", "spot", "on-demand")]),
    ),
    (
        "LEG-CQ-13",
        cq([res("cpu", "spot", "on-demand"), res("nvidia.com/gpu", "spot")]),
        "spec.resources[1].flavors",
        'shares flavor(s) spot with resource "cpu" but the lists differ; resources either list '
        "exactly the same flavors in the same order (codependent) or share no flavor at all",
        cq([res("cpu", "spot", "on-demand"), res("nvidia.com/gpu", "vendor1", "vendor2")]),
    ),
    (
        "LEG-CQ-14",
        cq([], cohort="@prod"),
        "spec.cohort",
        '"@prod" is not a valid name',
        cq([], cohort="team-ab"),
    ),
    (
        "LEG-CQ-15",
        cq([], queueingStrategy="FIFO"),
        "spec.queueingStrategy",
        'unsupported value "FIFO": use one of StrictFIFO, BestEffortFIFO',
        cq([], queueingStrategy=""),
    ),
    (
        "LEG-CQ-16",
        cq([], namespaceSelector={"matchExpressions": [{"key": "team", "operator": "In"}]}),
        "spec.namespaceSelector.matchExpressions[0].values",
        "must list at least one value when operator is In",
        cq([], namespaceSelector={"matchExpressions": [{"key": "team", "operator": "Exists"}]}),
    ),
    (
        "CQ-V4",
        {**cq([]), "spec": {"resourceGroups": []}},
        "spec.resourceGroups",
        'unknown field "resourceGroups"; v1alpha1 ClusterQueues use spec.resources (see '
        'kuota\'s docs/api-differences.md, "Legacy versions and conversion")',
        cq([]),
    ),
    (
        "LEG-RF-1",
        rf(labels=NINE_LABELS),
        "labels",
        "has 9 items; at most 8 are allowed",
        rf(labels=dict(list(NINE_LABELS.items())[:8])),
    ),
    (
        "LEG-RF-2",
        rf(labels={"@abc": "x"}),
        "labels[@abc]",
        'invalid label key "@abc"',
        rf(labels={"example.com/zone": ""}),
    ),
    (
        "LEG-RF-3",
        rf(taints=NINE_TAINTS),
        "taints",
        "has 9 items; at most 8 are allowed",
        rf(taints=NINE_TAINTS[:8]),
    ),
    (
        "LEG-RF-4",
        rf(
            taints=[
                {"key": "spot", "effect": "NoSchedule"},
                {"key": "spot", "effect": "NoSchedule"},
            ]
        ),
        "taints[1]",
        'duplicate taint "spot:NoSchedule": taints must be unique by key and effect',
        rf(
            taints=[{"key": "spot", "effect": "NoSchedule"}, {"key": "spot", "effect": "NoExecute"}]
        ),
    ),
    (
        "LEG-LQ-1",
        lq({"clusterQueue": "invalid_name"}),
        "spec.clusterQueue",
        '"invalid_name" is not a valid name',
        lq({"clusterQueue": "research-pool"}),
    ),
    ("LEG-WL-1", wl(podSets=[]), "spec.podSets", "must list at least 1 item(s)", wl()),
    (
        "LEG-WL-2",
        wl(podSets=[pod_set("a"), pod_set("a")]),
        "spec.podSets[1].name",
        'duplicate pod set name "a"',
        wl(podSets=[pod_set(None)]),
    ),
    (
        "LEG-WL-3",
        wl(podSets=[pod_set(count=0)]),
        "spec.podSets[0].count",
        "must be greater than 0",
        wl(podSets=[pod_set(count=1)]),
    ),
    (
        "LEG-WL-4",
        wl(priorityClassName="high"),
        "spec.priority",
        "required when priorityClassName is set",
        wl(priorityClassName="high", priority=0),
    ),
    (
        "LEG-WL-5",
        wl(queueName="Team_A"),
        "spec.queueName",
        '"Team_A" is not a valid name',
        wl(queueName="team-a"),
    ),
    (
        "LEG-WL-6",
        wl(admission={"clusterQueue": "cq", "podSetFlavors": [{"name": "other", "flavors": {}}]}),
        "spec.admission.podSetFlavors[0].name",
        'no pod set named "other"',
        wl(
            admission={
                "clusterQueue": "cq",
                "podSetFlavors": [{"name": "main", "flavors": {"cpu": "a"}}],
            }
        ),
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
    errors = validate_legacy(rf("v1alpha2", metadata={"name": "f", "labels": NINE_LABELS}))
    assert [(e.field, e.rule) for e in errors] == [("metadata.labels", "LEG-RF-1")]
    assert (
        validate_legacy(rf("v1alpha2", metadata={"name": "f", "labels": {"instance-type": "spot"}}))
        == []
    )


def test_taint_field_rules() -> None:
    errors = validate_legacy(rf(taints=[{"value": "@", "effect": "Sometimes"}, {"key": "a"}]))
    assert [(e.field, e.message.split(":")[0]) for e in errors] == [
        ("taints[0].key", "required"),
        ("taints[0].value", '"@" is not a valid label value'),
        ("taints[0].effect", 'unsupported value "Sometimes"'),
        ("taints[1].effect", "required"),
    ]


def test_local_queue_needs_a_cluster_queue() -> None:
    errors = validate_legacy(lq({}))
    assert [(e.field, e.message, e.rule) for e in errors] == [
        ("spec.clusterQueue", "required: name the ClusterQueue", "LEG-LQ-1")
    ]


def test_partial_overlap_reports_once_per_earlier_conflicting_resource() -> None:
    obj = cq([res("cpu", "a", "b"), res("memory", "a", "b"), res("gpu", "b")])
    errors = [e for e in validate_legacy(obj) if e.rule == "LEG-CQ-13"]
    assert [(e.field, 'resource "cpu"' in e.message) for e in errors] == [
        ("spec.resources[2].flavors", True),
        ("spec.resources[2].flavors", False),
    ]


def test_violations_come_in_rule_table_order() -> None:
    obj = cq(
        [
            res("cpu", "spot", "on_demand", quota={"min": 10, "max": 5}),
            res("memory", "on_demand", "spot"),
        ]
    )
    assert [e.rule for e in validate_legacy(obj)] == [
        "LEG-CQ-6",
        "LEG-CQ-6",
        "LEG-CQ-11",
        "LEG-CQ-11",
        "LEG-CQ-12",
    ]


def test_legacy_local_queue_cluster_queue_is_immutable() -> None:
    old = lq({"clusterQueue": "foo"})
    new = lq({"clusterQueue": "bar"})
    errors = validate_legacy_update(new, old)
    assert [(e.field, e.message, e.rule) for e in errors] == [
        (
            "spec.clusterQueue",
            'is immutable; it was "foo": create a new LocalQueue to point at another ClusterQueue',
            "LEG-LQ-2",
        )
    ]
    assert validate_legacy_update(lq({"clusterQueue": "foo"}), lq({})) == []


def test_legacy_workload_update_rules() -> None:
    admission = {"clusterQueue": "cq", "podSetFlavors": [{"name": "main", "flavors": {"cpu": "a"}}]}
    old = wl(queueName="a", admission=admission)
    renamed = wl(queueName="b", admission=admission)
    assert [(e.field, e.rule) for e in validate_legacy_update(renamed, old)] == [
        ("spec.queueName", "LEG-WL-7")
    ]
    resized = copy.deepcopy(old)
    resized["spec"]["podSets"][0]["count"] = 2
    assert [e.field for e in validate_legacy_update(resized, old)] == ["spec.podSets"]
    reassigned = copy.deepcopy(old)
    reassigned["spec"]["admission"]["clusterQueue"] = "other"
    assert [e.field for e in validate_legacy_update(reassigned, old)] == ["spec.admission"]
    cleared = wl(queueName="b")
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
    obj = cq([res("cpu", "on_demand")])
    obj["apiVersion"] = "kueue.x-k8s.io/v1beta2"
    assert validate_legacy(obj) == []
