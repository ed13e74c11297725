"""Real manifests pass the CRD schemas; the checker used for that really checks.

Every ``kueue.x-k8s.io`` manifest quoted in ``tests/reference/seeds/*.txt`` (the
product documentation, a blog post, a tutorial) is walked through the schema
of its kind and version: the API server must accept what users copy from the
docs.  The same checker is shown to reject unknown fields, bad enums, missing
required fields and malformed quantities, so a passing seed means something.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.crds import load_crds
from scheduler.api.crds.schema_kit import QUANTITY_PATTERN
from scheduler.api.quantity import Quantity, QuantityError
from tests.api.crd_helpers import structural_problems, value_problems
from tests.api.seed_examples import documents
from tests.builders import cluster_queue, flavor_quotas, resource_group

GROUP = "kueue.x-k8s.io"
SCHEMAS: dict[tuple[str, str], dict[str, Any]] = {
    (crd["spec"]["names"]["kind"], version["name"]): version["schema"]["openAPIV3Schema"]
    for crd in load_crds()
    for version in crd["spec"]["versions"]
}


def seed_manifests() -> list[Any]:
    found = []
    for document in documents():
        group, _, version = document.api_version.rpartition("/")
        if group == GROUP:
            label = f"{document.source[:3]}-{document.line}-{document.kind}-{version}"
            found.append(pytest.param(document.raw, version, id=label))
    return found


SEED_MANIFESTS = seed_manifests()


def test_the_seeds_hold_manifests_of_every_quoted_version() -> None:
    versions = {param.values[1] for param in SEED_MANIFESTS}
    kinds = {param.values[0]["kind"] for param in SEED_MANIFESTS}
    assert versions == {"v1alpha1", "v1alpha2", "v1beta2"}
    assert {
        "ClusterQueue",
        "ResourceFlavor",
        "LocalQueue",
        "AdmissionCheck",
        "MultiKueueConfig",
        "MultiKueueCluster",
    } <= kinds
    assert len(SEED_MANIFESTS) >= 24


@pytest.mark.parametrize(("manifest", "version"), SEED_MANIFESTS)
def test_seed_manifest_passes_the_schema_of_its_version(
    manifest: dict[str, Any], version: str
) -> None:
    schema = SCHEMAS[(manifest["kind"], version)]
    assert value_problems(manifest, schema) == []


def test_a_legacy_cluster_queue_is_not_a_v1beta2_one() -> None:
    legacy = next(
        p.values[0]
        for p in SEED_MANIFESTS
        if p.values[0]["kind"] == "ClusterQueue" and p.values[1] == "v1alpha1"
    )
    assert value_problems(legacy, SCHEMAS[("ClusterQueue", "v1beta2")]) == [
        "spec.resources: unknown field"
    ]


def test_kinds_are_not_served_in_versions_they_never_had() -> None:
    assert ("Cohort", "v1alpha1") not in SCHEMAS
    assert ("Topology", "v1alpha2") not in SCHEMAS
    assert ("Workload", "v1alpha2") in SCHEMAS


# --- the checker rejects what the API server rejects --------------------------

CQ = SCHEMAS[("ClusterQueue", "v1beta2")]
WL = SCHEMAS[("Workload", "v1beta2")]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"queueingStrategy": "Fifo"}, "spec.queueingStrategy: 'Fifo' not in"),
        ({"cohort": "team"}, "spec.cohort: unknown field"),
        (
            {
                "resourceGroups": [
                    resource_group(flavor_quotas("default").resource("cpu", "9 cpus"))
                ]
            },
            "does not match the quantity pattern",
        ),
        (
            {"resourceGroups": [resource_group(flavor_quotas("default").resource("cpu", None))]},
            "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: required",
        ),
        (
            {"resourceGroups": [resource_group(flavor_quotas("default").resource("cpu", 1.5))]},
            "must be an integer or a string",
        ),
        (
            {"preemption": {"borrowWithinCohort": {"maxPriorityThreshold": "100"}}},
            "expected integer",
        ),
        (
            {
                "resourceGroups": [
                    resource_group(flavor_quotas("default").resource("cpu", 1).resource("cpu", 2))
                ]
            },
            "duplicate key ('cpu',)",
        ),
        (
            {
                "admissionChecksStrategy": {
                    "admissionChecks": [{"name": "ac", "onFlavors": ["a", "a"]}]
                }
            },
            "duplicate entries in a set",
        ),
    ],
)
def test_the_checker_reports_what_the_api_server_would(spec: dict[str, Any], problem: str) -> None:
    problems = value_problems(cluster_queue().namespace_selector(None).spec(**spec).build(), CQ)
    assert any(problem in p for p in problems), problems


def test_free_form_pod_templates_keep_any_field() -> None:
    workload = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "n"},
        "spec": {
            "queueName": "q",
            "podSets": [
                {
                    "count": 3,
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                            "anything": {"nested": True},
                        }
                    },
                }
            ],
        },
        "status": {
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [
                    {
                        "name": "main",
                        "flavors": {"cpu": "default"},
                        "resourceUsage": {"cpu": "3"},
                        "count": 3,
                    }
                ],
            }
        },
    }
    assert value_problems(workload, WL) == []
    workload["spec"]["podSets"][0]["surprise"] = 1
    assert value_problems(workload, WL) == ["spec.podSets[0].surprise: unknown field"]


def test_two_unnamed_pod_sets_collide_on_the_default_name() -> None:
    pod_sets = [{"template": {}}, {"template": {}}]
    problems = value_problems({"spec": {"podSets": pod_sets}}, WL)
    assert problems == ["spec.podSets: duplicate key ('main',)"]


def test_the_structural_checker_rejects_what_apiextensions_rejects() -> None:
    root = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "q": {
                "type": "string",
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            },
            "untyped": {"description": "no type"},
            "keyed": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            "embedded": {"type": "object", "x-kubernetes-embedded-resource": True},
            "badDefault": {"type": "string", "enum": ["A"], "default": "B"},
        },
    }
    problems = structural_problems(root)
    expected = [
        "properties.q: int-or-string must not carry a type",
        "properties.untyped: missing or unknown type",
        "list-map key 'name' must be required or defaulted",
        "properties.embedded: keys not allowed here",
        "properties.badDefault.default: 'B' not in",
    ]
    for fragment in expected:
        assert any(fragment in p for p in problems), (fragment, problems)
    root["properties"]["metadata"] = {"type": "object", "properties": {"name": {"type": "string"}}}
    assert any("metadata: must be exactly" in p for p in structural_problems(root))


# --- the quantity pattern never refuses a quantity kuota accepts ---------------

_QUANTITY_TEXT = st.text(alphabet="0123456789.+-eEKMGTPinumk", min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(_QUANTITY_TEXT)
def test_every_quantity_kuota_parses_matches_the_schema_pattern(text: str) -> None:
    try:
        Quantity.parse(text)
    except QuantityError:
        return
    assert re.search(QUANTITY_PATTERN, text), text


@settings(max_examples=200, deadline=None)
@given(st.from_regex(QUANTITY_PATTERN, fullmatch=True).filter(lambda s: len(s) < 16))
def test_schema_pattern_matches_are_quantities_up_to_exponent_rules(text: str) -> None:
    # apimachinery refuses a fractional exponent (1e1.5) and kuota refuses
    # absurd magnitudes; both are reported by the webhook, not the schema.
    fractional_exponent = re.search(r"[eE][+-]?[0-9]*\.", text)
    try:
        Quantity.parse(text)
    except QuantityError:
        exponent = re.search(r"[eE][+-]?([0-9]+)$", text)
        assert fractional_exponent or (exponent and int(exponent.group(1)) > 30), text
