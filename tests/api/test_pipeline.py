"""The admission pipeline end to end (docs/validation.md#order-of-processing):
legacy rules before conversion, v1beta1 paths reported as written, defaults by
operation, and the legacy examples of tests/reference/validation.md, sections
16 and 17."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.pipeline import UnsupportedKind, review
from tests.builders import cluster_queue, legacy_resource

INVALID_LEGACY = [
    (
        "59",
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources(
            legacy_resource("cpu", "spot", "on-demand", quota={"min": 1}),
            legacy_resource("memory", "on-demand", "spot", quota={"min": 1}),
        )
        .build(),
        "spec.resources[1].flavors",
        "in a different order; codependent resources must list their flavors in the same order",
    ),
    (
        "60",
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources(
            legacy_resource("cpu", "spot", "on-demand", quota={"min": 1}),
            legacy_resource("nvidia.com/gpu", "spot", quota={"min": 1}),
        )
        .build(),
        "spec.resources[1].flavors",
        'shares flavor(s) spot with resource "cpu"',
    ),
    (
        "61",
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources(legacy_resource("cpu", "default", quota={"min": 10, "max": 5}))
        .build(),
        "spec.resources[0].flavors[0].quota.max",
        "max (5) must be greater than or equal to min (10)",
    ),
    (
        "62",
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources(legacy_resource("cpu", "spot", "on_demand", quota={"min": 1}))
        .build(),
        "spec.resources[0].flavors[1].name",
        '"on_demand" is not a valid flavor name',
    ),
    (
        "63",
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources({"name": "cpu", "flavors": []})
        .build(),
        "spec.resources[0].flavors",
        "must list at least 1",
    ),
    (
        "64",
        {
            "apiVersion": "kueue.x-k8s.io/v1alpha1",
            "kind": "ResourceFlavor",
            "metadata": {"name": "rf"},
            "labels": {f"k{i}": "v" for i in range(9)},
        },
        "labels",
        "has 9 items; at most 8 are allowed",
    ),
]


@pytest.mark.parametrize(
    ("number", "obj", "field", "words"), INVALID_LEGACY, ids=[c[0] for c in INVALID_LEGACY]
)
def test_legacy_invalid_examples_of_section_16(
    number: str, obj: dict[str, Any], field: str, words: str
) -> None:
    result = review(obj)
    assert not result.valid and result.stored is None
    assert any(e.field == field and words in e.message for e in result.errors), result.errors


def test_v16_codependent_and_disjoint_lists_become_two_groups() -> None:
    obj = (
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources(
            legacy_resource("cpu", "spot", "on-demand", quota={"min": 1}),
            legacy_resource("memory", "spot", "on-demand", quota={"min": 1}),
            legacy_resource("nvidia.com/gpu", "vendor1", "vendor2", quota={"min": 1}),
        )
        .build()
    )
    result = review(obj)
    assert result.valid, result.errors
    groups = result.stored["spec"]["resourceGroups"]  # type: ignore[index]
    assert [g["coveredResources"] for g in groups] == [["cpu", "memory"], ["nvidia.com/gpu"]]
    assert [f["name"] for f in groups[0]["flavors"]] == ["spot", "on-demand"]


def test_v17_max_equal_min_means_no_borrowing_and_max_without_cohort_is_kept() -> None:
    with_cohort = review(
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources(legacy_resource("cpu", "default", quota={"min": 9, "max": 9}))
        .spec(cohort="team")
        .build()
    )
    assert with_cohort.valid, with_cohort.errors
    quota = with_cohort.stored["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]  # type: ignore[index]
    assert quota["nominalQuota"] == "9" and quota["borrowingLimit"] == "0"
    alone = review(
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources(legacy_resource("cpu", "default", quota={"min": 9, "max": 12}))
        .build()
    )
    assert alone.valid, alone.errors
    assert any(
        "conversion.kuota.io" in key for key in alone.stored["metadata"].get("annotations", {})
    )  # type: ignore[index]


def test_v18_unnamed_flavor_and_empty_quota_default() -> None:
    result = review(
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources({"name": "cpu", "flavors": [{"quota": {}}]})
        .build()
    )
    assert result.valid, result.errors
    flavor = result.stored["spec"]["resourceGroups"][0]["flavors"][0]  # type: ignore[index]
    assert flavor["name"] == "default" and flavor["resources"][0]["nominalQuota"] == "0"


def test_legacy_failure_stops_before_v1beta2_rules() -> None:
    # Invalid as legacy (max < min) and would also be odd as v1beta2: only the legacy rule is
    # reported.
    result = review(
        cluster_queue()
        .version("v1alpha1")
        .legacy_resources(legacy_resource("cpu", "default", quota={"min": 10, "max": 5}))
        .build()
    )
    assert result.errors and all(e.rule.startswith("LEG") for e in result.errors), result.errors


def test_v1beta1_violations_are_reported_at_the_paths_the_user_wrote() -> None:
    obj = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "cohort": "Not_A_Name",
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "1"}]}
                    ],
                }
            ],
        },
    }
    result = review(obj)
    assert [e.field for e in result.errors] == ["spec.cohort"]


def test_create_adds_the_finalizer_and_update_does_not() -> None:
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "rf"},
    }
    created = review(flavor, operation="CREATE")
    assert created.stored["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]  # type: ignore[index]
    updated = review(flavor, old=flavor, operation="UPDATE")
    assert "finalizers" not in updated.stored["metadata"]  # type: ignore[index]


def test_update_rules_see_the_old_object() -> None:
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "q", "namespace": "ns"},
        "spec": {"clusterQueue": "a"},
    }
    moved = {**queue, "spec": {"clusterQueue": "b"}}
    result = review(moved, old=queue, operation="UPDATE")
    assert [e.field for e in result.errors] == ["spec.clusterQueue"]
    assert "immutable" in result.errors[0].message


def test_unsupported_kinds_raise() -> None:
    with pytest.raises(UnsupportedKind):
        review({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    with pytest.raises(UnsupportedKind):
        review({"apiVersion": "kueue.x-k8s.io/v9", "kind": "ClusterQueue"})


def test_a_metadata_that_is_not_a_map_is_an_error_at_its_path_not_a_crash() -> None:
    """Found by the webhook's fuzzed reviews: a namespaced kind with ``metadata: 1``."""
    raw = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": 1}
    checked = review(raw, default_namespace="team-a")
    assert [(e.field, e.message) for e in checked.errors] == [
        ("metadata", "must be an object, not an integer")
    ]
