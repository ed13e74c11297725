"""The admission pipeline end to end (docs/validation.md#order-of-processing):
legacy rules before conversion, v1beta1 paths reported as written, defaults by
operation, and the legacy examples of tests/reference/validation.md, sections
16 and 17."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.pipeline import UnsupportedKind, review


def legacy_cq(*resources: dict[str, Any], cohort: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"namespaceSelector": {}, "resources": list(resources)}
    if cohort:
        spec["cohort"] = cohort
    return {
        "apiVersion": "kueue.x-k8s.io/v1alpha1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": spec,
    }


def res(name: str, *flavors: str, quota: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "flavors": [{"name": f, "quota": dict(quota or {"min": 1})} for f in flavors],
    }


INVALID_LEGACY = [
    (
        "59",
        legacy_cq(res("cpu", "spot", "on-demand"), res("memory", "on-demand", "spot")),
        "spec.resources[1].flavors",
        "in a different order; codependent resources must list their flavors in the same order",
    ),
    (
        "60",
        legacy_cq(res("cpu", "spot", "on-demand"), res("nvidia.com/gpu", "spot")),
        "spec.resources[1].flavors",
        'shares flavor(s) spot with resource "cpu"',
    ),
    (
        "61",
        legacy_cq(res("cpu", "default", quota={"min": 10, "max": 5})),
        "spec.resources[0].flavors[0].quota.max",
        "max (5) must be greater than or equal to min (10)",
    ),
    (
        "62",
        legacy_cq(res("cpu", "spot", "on_demand")),
        "spec.resources[0].flavors[1].name",
        '"on_demand" is not a valid flavor name',
    ),
    (
        "63",
        legacy_cq({"name": "cpu", "flavors": []}),
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
    obj = legacy_cq(
        res("cpu", "spot", "on-demand"),
        res("memory", "spot", "on-demand"),
        res("nvidia.com/gpu", "vendor1", "vendor2"),
    )
    result = review(obj)
    assert result.valid, result.errors
    groups = result.stored["spec"]["resourceGroups"]  # type: ignore[index]
    assert [g["coveredResources"] for g in groups] == [["cpu", "memory"], ["nvidia.com/gpu"]]
    assert [f["name"] for f in groups[0]["flavors"]] == ["spot", "on-demand"]


def test_v17_max_equal_min_means_no_borrowing_and_max_without_cohort_is_kept() -> None:
    with_cohort = review(
        legacy_cq(res("cpu", "default", quota={"min": 9, "max": 9}), cohort="team")
    )
    assert with_cohort.valid, with_cohort.errors
    quota = with_cohort.stored["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]  # type: ignore[index]
    assert quota["nominalQuota"] == "9" and quota["borrowingLimit"] == "0"
    alone = review(legacy_cq(res("cpu", "default", quota={"min": 9, "max": 12})))
    assert alone.valid, alone.errors
    assert any(
        "conversion.kuota.io" in key for key in alone.stored["metadata"].get("annotations", {})
    )  # type: ignore[index]


def test_v18_unnamed_flavor_and_empty_quota_default() -> None:
    result = review(legacy_cq({"name": "cpu", "flavors": [{"quota": {}}]}))
    assert result.valid, result.errors
    flavor = result.stored["spec"]["resourceGroups"][0]["flavors"][0]  # type: ignore[index]
    assert flavor["name"] == "default" and flavor["resources"][0]["nominalQuota"] == "0"


def test_legacy_failure_stops_before_v1beta2_rules() -> None:
    # Invalid as legacy (max < min) and would also be odd as v1beta2: only the legacy rule is
    # reported.
    result = review(legacy_cq(res("cpu", "default", quota={"min": 10, "max": 5})))
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
