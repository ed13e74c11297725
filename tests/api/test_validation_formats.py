"""Common format rules (docs/validation.md#field-formats) and the webhook rendering."""

from __future__ import annotations

import pytest

from scheduler.api.field import FieldError, FieldPath
from scheduler.api.validation import admission_status, validate_cluster_queue, validate_local_queue
from scheduler.api.validation.formats import (
    check_selector,
    is_label,
    is_label_value,
    is_qualified_name,
    is_subdomain,
    selector_matches,
)
from tests.api.cases import find
from tests.builders import cluster_queue, flavor_quotas, local_queue


@pytest.mark.parametrize("value", ["a", "default-flavor", "a.b-c.d", "x" * 253, "0abc"])
def test_subdomain_accepts(value: str) -> None:
    assert is_subdomain(value)


@pytest.mark.parametrize("value", ["", "A", "a_b", "-a", "a-", "a..b", ".a", "x" * 254, "a/b"])
def test_subdomain_rejects(value: str) -> None:
    assert not is_subdomain(value)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("main", True),
        ("x" * 63, True),
        ("x" * 64, False),
        ("a.b", False),
        ("Main", False),
        ("", False),
    ],
)
def test_label(value: str, valid: bool) -> None:
    assert is_label(value) is valid


@pytest.mark.parametrize(
    "value",
    [
        "cpu",
        "nvidia.com/gpu",
        "cpu_credits",
        "example.com/My.Gpu_1",
        "A" * 63,
        "kubernetes.io/hostname",
    ],
)
def test_qualified_name_accepts(value: str) -> None:
    assert is_qualified_name(value)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "@cpu",
        "/cpu",
        "a/b/c",
        "Example.com/gpu",
        "_cpu",
        "cpu_",
        "A" * 64,
        "nospecialchars^=@",
        "a b",
    ],
)
def test_qualified_name_rejects(value: str) -> None:
    assert not is_qualified_name(value)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("", True),
        ("spot", True),
        ("a_b.c-D", True),
        ("-a", False),
        ("a b", False),
        ("x" * 64, False),
    ],
)
def test_label_value(value: str, valid: bool) -> None:
    assert is_label_value(value) is valid


def test_selector_rules() -> None:
    errors: list[FieldError] = []
    selector = {
        "matchLabels": {"ok": "-bad"},
        "matchExpressions": [
            {"key": "a", "operator": "Exists", "values": ["x"]},
            {"key": "b", "operator": "Has"},
            {"key": "bad key", "operator": "NotIn", "values": ["ok", "not ok"]},
        ],
    }
    check_selector(selector, FieldPath(("sel",)), errors, rule="T")
    rendered = [item.render() for item in errors]
    assert rendered[0].startswith('sel.matchLabels: invalid label value "-bad"')
    assert "sel.matchExpressions[0].values: must be empty when operator is Exists" in rendered
    assert (
        'sel.matchExpressions[1].operator: "Has" is not a valid operator: '
        "use In, NotIn, Exists or DoesNotExist"
    ) in rendered
    assert any(
        line.startswith('sel.matchExpressions[2].key: "bad key" is not a valid name')
        for line in rendered
    )
    assert any(
        line.startswith('sel.matchExpressions[2].values[1]: invalid label value "not ok"')
        for line in rendered
    )


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ({}, {"a": "b"}, True),
        ({"matchLabels": {"a": "b"}}, {"a": "b"}, True),
        ({"matchLabels": {"a": "b"}}, {"a": "c"}, False),
        (
            {"matchExpressions": [{"key": "n", "operator": "NotIn", "values": ["kube-system"]}]},
            {"n": "kube-system"},
            False,
        ),
        ({"matchExpressions": [{"key": "n", "operator": "In", "values": ["x"]}]}, {}, False),
        ({"matchExpressions": [{"key": "n", "operator": "DoesNotExist"}]}, {}, True),
        ({"matchExpressions": [{"key": "n", "operator": "Exists"}]}, {}, False),
    ],
)
def test_selector_matching(selector: dict, labels: dict, matches: bool) -> None:
    assert selector_matches(selector, labels) is matches


def test_namespace_is_checked_for_namespaced_kinds() -> None:
    find(
        validate_local_queue(local_queue("lq", "-bad").cluster_queue("cq").build()),
        "metadata.namespace",
        "not a valid namespace",
        rule="META-NAMESPACE",
    )
    assert [
        item.origin
        for item in validate_local_queue(local_queue("lq", "-bad").cluster_queue("cq").build())
    ] == ["A"]


def test_non_mapping_object() -> None:
    errors = validate_cluster_queue(["not", "an", "object"])  # type: ignore[arg-type]
    assert [(item.field, item.rule, item.origin) for item in errors] == [("", "TYPE", "S")]


# --- admission_status ---------------------------------------------------------------------


def test_webhook_only_violations_are_forbidden() -> None:
    errors = [
        FieldError("spec.a", "first", "W", "CQ-5"),
        FieldError("spec.b", "second", "W", "CQ-9"),
    ]
    status = admission_status(errors)
    assert status["code"] == 403
    assert status["reason"] == "Forbidden"
    assert status["message"] == "spec.a: first; spec.b: second"
    assert status["details"]["causes"] == [
        {"field": "spec.a", "message": "first"},
        {"field": "spec.b", "message": "second"},
    ]


@pytest.mark.parametrize("origin", ["S", "C", "A", "L", "K"])
def test_any_schema_like_violation_is_invalid(origin: str) -> None:
    status = admission_status(
        [FieldError("spec.a", "w", "W", "X"), FieldError("spec.b", "s", origin, "Y")]
    )  # type: ignore[arg-type]
    assert (status["code"], status["reason"]) == (422, "Invalid")


def test_rendering_a_real_validation_result() -> None:
    queue = (
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu=-1))
        .queueing_strategy("FIFO")
        .build()
    )
    status = admission_status(validate_cluster_queue(queue))
    assert status["code"] == 422  # CQ-27 is a schema rule
    assert status["message"] == (
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: "
        "must be greater than or equal to 0, got -1; "
        'spec.queueingStrategy: unsupported value "FIFO": use one of StrictFIFO, BestEffortFIFO'
    )
    only_webhook = admission_status(
        validate_cluster_queue(
            cluster_queue().resource_group(flavor_quotas("alpha", cpu=-1)).build()
        )
    )
    assert only_webhook["code"] == 403
