"""The CRD manifests: names, versions, structural schemas, columns, defaults.

What an operator would check before ``kubectl apply``: one CRD per kind with
the right scope and short names, only the versions each kind ever had,
``v1beta2`` as the single storage version, schemas the API server accepts,
printer columns that point at real fields, and exactly the schema defaults of
docs/validation.md#defaulting.
"""

from __future__ import annotations

import base64
import copy
from importlib import resources
from typing import Any

import pytest

from scheduler.api.crds import (
    CONVERSION_PATH,
    LEGACY_VERSIONS,
    cel_other,
    cel_workload,
    load_crds,
    serving_legacy_versions,
    with_conversion_webhook,
)
from scheduler.api.crds.generate import build_crds, rendered_files
from tests.api.crd_helpers import (
    all_nodes,
    json_path_node,
    node_at,
    structural_problems,
)

ALL = ("v1alpha1", "v1alpha2", "v1beta1", "v1beta2")
BETA = ("v1beta1", "v1beta2")

# kind: (plural, scope, short names, versions, status subresource)
EXPECTED: dict[str, tuple[str, str, list[str], tuple[str, ...], bool]] = {
    "ResourceFlavor": ("resourceflavors", "Cluster", ["flavor", "flavors", "rf"], ALL, False),
    "ClusterQueue": ("clusterqueues", "Cluster", ["cq"], ALL, True),
    "LocalQueue": ("localqueues", "Namespaced", ["queue", "queues", "lq"], ALL, True),
    "Cohort": ("cohorts", "Cluster", ["co"], BETA, True),
    "Workload": (
        "workloads",
        "Namespaced",
        ["kwl", "kueueworkload", "kueueworkloads", "wl"],
        ALL,
        True,
    ),
    "WorkloadPriorityClass": ("workloadpriorityclasses", "Cluster", ["wpc"], BETA, False),
    "AdmissionCheck": ("admissionchecks", "Cluster", ["ac"], BETA, True),
    "MultiKueueConfig": ("multikueueconfigs", "Cluster", ["mkconf"], BETA, False),
    "MultiKueueCluster": ("multikueueclusters", "Cluster", ["mkc"], BETA, True),
    "Topology": ("topologies", "Cluster", ["topo"], BETA, False),
}

CRDS = load_crds()
BY_KIND = {crd["spec"]["names"]["kind"]: crd for crd in CRDS}
VERSIONS = [
    pytest.param(crd, version, id=f"{crd['spec']['names']['kind']}-{version['name']}")
    for crd in CRDS
    for version in crd["spec"]["versions"]
]


def schema_of(kind: str, version: str) -> dict[str, Any]:
    for served in BY_KIND[kind]["spec"]["versions"]:
        if served["name"] == version:
            return served["schema"]["openAPIV3Schema"]
    raise KeyError(version)


def test_one_crd_per_kind_and_nothing_else() -> None:
    assert sorted(BY_KIND) == sorted(EXPECTED)
    assert len(CRDS) == len(EXPECTED)


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_names_scope_short_names_and_versions(kind: str) -> None:
    plural, scope, short_names, versions, _ = EXPECTED[kind]
    crd = BY_KIND[kind]
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"]["name"] == f"{plural}.kueue.x-k8s.io"
    spec = crd["spec"]
    assert spec["group"] == "kueue.x-k8s.io"
    assert spec["names"] == {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": plural,
        "singular": kind.lower(),
        "shortNames": short_names,
    }
    assert spec["scope"] == scope
    assert tuple(v["name"] for v in spec["versions"]) == versions


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_v1beta2_is_the_only_storage_version_and_everything_is_served(kind: str) -> None:
    versions = BY_KIND[kind]["spec"]["versions"]
    assert [v["name"] for v in versions if v["storage"]] == ["v1beta2"]
    assert all(v["served"] is True for v in versions)
    for version in versions:
        if version["name"] != "v1beta2":
            assert version["deprecated"] is True
            assert "use kueue.x-k8s.io/v1beta2" in version["deprecationWarning"]
        else:
            assert "deprecated" not in version


@pytest.mark.parametrize(("crd", "version"), VERSIONS)
def test_every_version_has_a_structural_schema(
    crd: dict[str, Any], version: dict[str, Any]
) -> None:
    schema = version["schema"]["openAPIV3Schema"]
    assert structural_problems(schema) == []


@pytest.mark.parametrize(("crd", "version"), VERSIONS)
def test_cel_rules_only_the_declared_twins_and_no_name_patterns(
    crd: dict[str, Any], version: dict[str, Any]
) -> None:
    # The only CEL rules are the rules with a Python twin (cel_workload, cel_other);
    # every other message comes from kuota's webhook, and the only pattern is the
    # quantity grammar.
    twins = [rule.render() for rule in (*cel_workload.EVERY_RULE, *cel_other.EVERY_RULE)]
    for path, node in all_nodes(version["schema"]["openAPIV3Schema"]):
        for rule in node.get("x-kubernetes-validations", []):
            assert rule in twins, path
        if "pattern" in node:
            assert node.get("x-kubernetes-int-or-string") is True, path


@pytest.mark.parametrize(("crd", "version"), VERSIONS)
def test_status_subresource_exactly_where_there_is_a_status(
    crd: dict[str, Any], version: dict[str, Any]
) -> None:
    kind = crd["spec"]["names"]["kind"]
    has_status = "status" in version["schema"]["openAPIV3Schema"]["properties"]
    assert has_status == EXPECTED[kind][4] or version["name"] in ("v1alpha1", "v1alpha2")
    assert ("subresources" in version) == has_status
    if has_status:
        assert version["subresources"] == {"status": {}}


@pytest.mark.parametrize(("crd", "version"), VERSIONS)
def test_printer_columns_point_at_fields_of_the_right_type(
    crd: dict[str, Any], version: dict[str, Any]
) -> None:
    schema = version["schema"]["openAPIV3Schema"]
    expected_type = {"integer": "integer", "string": "string", "date": "string"}
    for column in version.get("additionalPrinterColumns", []):
        node = json_path_node(schema, column["jsonPath"])
        assert node is not None, column["jsonPath"]
        assert node.get("type") == expected_type[column["type"]], column
        assert column.get("priority", 0) in (0, 1)


def columns(kind: str, version: str) -> list[tuple[str, str, bool]]:
    served = next(v for v in BY_KIND[kind]["spec"]["versions"] if v["name"] == version)
    return [
        (c["name"], c["jsonPath"], c.get("priority") == 1)
        for c in served.get("additionalPrinterColumns", [])
    ]


def test_cluster_queue_columns_match_kubectl_get_cq() -> None:
    assert columns("ClusterQueue", "v1beta2") == [
        ("Cohort", ".spec.cohortName", False),
        ("Strategy", ".spec.queueingStrategy", False),
        ("Pending Workloads", ".status.pendingWorkloads", False),
        ("Admitted Workloads", ".status.admittedWorkloads", False),
        ("Age", ".metadata.creationTimestamp", False),
    ]
    assert columns("ClusterQueue", "v1alpha1")[0] == ("Cohort", ".spec.cohort", False)


def test_workload_columns_show_queue_and_reserving_cluster_queue() -> None:
    assert [name for name, _, _ in columns("Workload", "v1beta2")] == [
        "Queue",
        "Admitted by",
        "Admitted",
        "Finished",
        "Age",
    ]
    assert ("Admitted by", ".status.admission.clusterQueue", False) in columns(
        "Workload", "v1beta2"
    )
    assert ("Admitted by", ".spec.admission.clusterQueue", False) in columns("Workload", "v1alpha1")


def test_local_queue_and_other_columns() -> None:
    assert [name for name, _, _ in columns("LocalQueue", "v1beta2")] == [
        "ClusterQueue",
        "Pending Workloads",
        "Admitted Workloads",
        "Age",
    ]
    assert [name for name, _, _ in columns("LocalQueue", "v1alpha1")] == [
        "ClusterQueue",
        "Pending Workloads",
        "Age",
    ]
    assert [name for name, _, _ in columns("WorkloadPriorityClass", "v1beta2")] == ["Value", "Age"]
    assert [name for name, _, _ in columns("MultiKueueCluster", "v1beta2")] == ["Connected", "Age"]
    assert [name for name, _, _ in columns("AdmissionCheck", "v1beta2")] == [
        "Controller",
        "Active",
        "Age",
    ]
    assert columns("Cohort", "v1beta2") == []


def test_workload_cluster_queue_is_a_selectable_field() -> None:
    for version in BY_KIND["Workload"]["spec"]["versions"]:
        fields = [f["jsonPath"] for f in version.get("selectableFields", [])]
        if version["name"] in BETA:
            assert fields == [".status.admission.clusterQueue"]
            node = json_path_node(version["schema"]["openAPIV3Schema"], fields[0])
            assert node is not None and node["type"] == "string"
        else:
            assert fields == []


# Every schema default (docs/validation.md#defaulting), per kind and version.
SCHEMA_DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {
    ("ClusterQueue", "v1beta2"): {
        "spec.queueingStrategy": "BestEffortFIFO",
        "spec.stopPolicy": "None",
        "spec.flavorFungibility": {},
        "spec.flavorFungibility.whenCanBorrow": "MayStopSearch",
        "spec.flavorFungibility.whenCanPreempt": "TryNextFlavor",
        "spec.preemption": {},
        "spec.preemption.withinClusterQueue": "Never",
        "spec.preemption.reclaimWithinCohort": "Never",
        "spec.preemption.borrowWithinCohort": {},
        "spec.preemption.borrowWithinCohort.policy": "Never",
        "spec.fairSharing.weight": 1,
    },
    ("Cohort", "v1beta2"): {"spec.fairSharing.weight": 1},
    ("LocalQueue", "v1beta2"): {"spec.stopPolicy": "None", "spec.fairSharing.weight": 1},
    ("Workload", "v1beta2"): {
        "spec.active": True,
        "spec.podSets[].name": "main",
        "spec.podSets[].count": 1,
        "status.admission.podSetAssignments[].name": "main",
    },
    ("MultiKueueCluster", "v1beta2"): {
        "spec.clusterSource.kubeConfig.locationType": "Secret",
    },
    ("ClusterQueue", "v1alpha1"): {
        "spec.queueingStrategy": "BestEffortFIFO",
        "spec.resources[].flavors[].name": "default",
        "spec.resources[].flavors[].quota.min": 0,
    },
    ("ResourceFlavor", "v1beta2"): {},
    ("WorkloadPriorityClass", "v1beta2"): {},
    ("AdmissionCheck", "v1beta2"): {},
    ("MultiKueueConfig", "v1beta2"): {},
    ("Topology", "v1beta2"): {},
    ("Workload", "v1alpha1"): {},
    ("ResourceFlavor", "v1alpha1"): {},
    ("LocalQueue", "v1alpha1"): {},
}


@pytest.mark.parametrize(("kind", "version"), sorted(SCHEMA_DEFAULTS))
def test_schema_defaults_are_exactly_those_of_validation_md(kind: str, version: str) -> None:
    schema = schema_of(kind, version)
    found = {path: node["default"] for path, node in all_nodes(schema) if "default" in node}
    assert found == SCHEMA_DEFAULTS[(kind, version)]


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("ClusterQueue", "spec.queueingStrategy"),
        ("ClusterQueue", "spec.stopPolicy"),
        ("ClusterQueue", "spec.flavorFungibility.whenCanBorrow"),
        ("ClusterQueue", "spec.preemption.borrowWithinCohort.policy"),
        ("LocalQueue", "spec.stopPolicy"),
        ("MultiKueueCluster", "spec.clusterSource.kubeConfig.locationType"),
    ],
)
def test_defaulted_enums_admit_the_empty_string_for_the_webhook(kind: str, path: str) -> None:
    # "" means "use the default"; the API server must not reject it first.
    node = node_at(schema_of(kind, "v1beta2"), path)
    assert "" in node["enum"] and node["default"] in node["enum"]


def test_undefaulted_enums_reject_the_empty_string() -> None:
    node = node_at(schema_of("ClusterQueue", "v1beta2"), "spec.flavorFungibility.preference")
    assert "" not in node["enum"]


def test_quantities_are_int_or_string_with_the_kubernetes_pattern() -> None:
    node = node_at(
        schema_of("ClusterQueue", "v1beta2"),
        "spec.resourceGroups[].flavors[].resources[].nominalQuota",
    )
    assert node["x-kubernetes-int-or-string"] is True
    assert node["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert "type" not in node and node["pattern"].startswith("^(\\+|-)?")


def test_pod_templates_are_free_form_and_the_rest_is_pruned() -> None:
    schema = schema_of("Workload", "v1beta2")
    preserved = sorted(
        path for path, node in all_nodes(schema) if node.get("x-kubernetes-preserve-unknown-fields")
    )
    assert preserved == [
        "spec.podSets[].template",
        "spec.podSets[].topologyRequest",
        "status.admission.podSetAssignments[].topologyAssignment",
    ]
    for kind in ("ClusterQueue", "LocalQueue", "ResourceFlavor", "Cohort"):
        assert not any(
            node.get("x-kubernetes-preserve-unknown-fields")
            for _, node in all_nodes(schema_of(kind, "v1beta2"))
        )


@pytest.mark.parametrize(
    ("kind", "path", "keys"),
    [
        ("ClusterQueue", "spec.resourceGroups[].flavors", ["name"]),
        ("ClusterQueue", "spec.resourceGroups[].flavors[].resources", ["name"]),
        ("ClusterQueue", "spec.admissionChecksStrategy.admissionChecks", ["name"]),
        ("ClusterQueue", "status.conditions", ["type"]),
        ("ClusterQueue", "status.flavorsUsage", ["name"]),
        ("Workload", "spec.podSets", ["name"]),
        ("Workload", "status.admission.podSetAssignments", ["name"]),
        ("Workload", "status.admissionChecks", ["name"]),
        ("Workload", "status.reclaimablePods", ["name"]),
        ("Workload", "status.schedulingStats.evictions", ["reason", "underlyingCause"]),
    ],
)
def test_keyed_lists_are_list_maps(kind: str, path: str, keys: list[str]) -> None:
    node = node_at(schema_of(kind, "v1beta2"), path)
    assert node["x-kubernetes-list-type"] == "map"
    assert node["x-kubernetes-list-map-keys"] == keys


def test_version_specific_field_names() -> None:
    cq_beta1 = schema_of("ClusterQueue", "v1beta1")["properties"]["spec"]["properties"]
    cq_beta2 = schema_of("ClusterQueue", "v1beta2")["properties"]["spec"]["properties"]
    assert "cohort" in cq_beta1 and "admissionChecks" in cq_beta1 and "cohortName" not in cq_beta1
    assert "cohortName" in cq_beta2 and "cohort" not in cq_beta2
    assert "admissionChecks" not in cq_beta2
    wl_beta1 = schema_of("Workload", "v1beta1")["properties"]
    assert "priorityClassSource" in wl_beta1["spec"]["properties"]
    assert "accumulatedPastExexcutionTimeSeconds" in wl_beta1["status"]["properties"]
    mkc_beta1 = schema_of("MultiKueueCluster", "v1beta1")["properties"]["spec"]["properties"]
    assert set(mkc_beta1) == {"kubeConfig", "clusterProfileRef"}
    rf_alpha1 = schema_of("ResourceFlavor", "v1alpha1")["properties"]
    assert {"labels", "taints"} <= set(rf_alpha1) and "spec" not in rf_alpha1


# --- files and loading ---------------------------------------------------------


def test_checked_in_files_are_what_the_generator_renders() -> None:
    package = resources.files("scheduler.api.crds")
    on_disk = {
        entry.name: entry.read_text(encoding="utf-8")
        for entry in package.iterdir()
        if entry.name.endswith(".yaml")
    }
    assert on_disk == rendered_files(), "run: python -m scheduler.api.crds.generate"


def test_load_crds_reads_every_file_in_name_order() -> None:
    names = [crd["metadata"]["name"] for crd in load_crds()]
    assert names == sorted(names)
    assert sorted(names) == sorted(crd["metadata"]["name"] for crd in build_crds())
    assert sorted(load_crds(), key=lambda c: c["metadata"]["name"]) == sorted(
        build_crds(), key=lambda c: c["metadata"]["name"]
    )


def test_files_carry_conversion_strategy_none_until_install() -> None:
    for crd in CRDS:
        assert crd["spec"]["conversion"] == {"strategy": "None"}


# --- conversion webhook --------------------------------------------------------

CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()


def test_with_conversion_webhook_by_service_defaults_the_convert_path() -> None:
    crd = BY_KIND["ClusterQueue"]
    before = copy.deepcopy(crd)
    result = with_conversion_webhook(
        crd,
        service={"namespace": "kuota-system", "name": "kuota-webhook", "port": 443},
        ca_bundle=CA,
    )
    assert crd == before, "the input must not be modified"
    assert result["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "path": CONVERSION_PATH,
                    "namespace": "kuota-system",
                    "name": "kuota-webhook",
                    "port": 443,
                },
                "caBundle": CA,
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    result["spec"].pop("conversion")
    before["spec"].pop("conversion")
    assert result == before


def test_with_conversion_webhook_by_url_keeps_an_explicit_path() -> None:
    result = with_conversion_webhook(
        BY_KIND["Workload"], url="https://127.0.0.1:9443/convert", ca_bundle=CA
    )
    assert result["spec"]["conversion"]["webhook"]["clientConfig"] == {
        "url": "https://127.0.0.1:9443/convert",
        "caBundle": CA,
    }
    custom = with_conversion_webhook(
        BY_KIND["Workload"], service={"namespace": "n", "name": "s", "path": "/x"}, ca_bundle=CA
    )
    assert custom["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["path"] == "/x"


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"url": "https://a/convert", "service": {"namespace": "n", "name": "s"}},
        {"url": "http://a/convert"},
        {"service": {"namespace": "n"}},
    ],
)
def test_with_conversion_webhook_rejects_impossible_client_configs(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        with_conversion_webhook(BY_KIND["Cohort"], ca_bundle=CA, **kwargs)


@pytest.mark.parametrize("bundle", ["", "not base64!"])
def test_with_conversion_webhook_needs_a_base64_ca_bundle(bundle: str) -> None:
    with pytest.raises(ValueError):
        with_conversion_webhook(BY_KIND["Cohort"], url="https://a/convert", ca_bundle=bundle)


def _served(crd: dict[str, Any]) -> list[str]:
    return [v["name"] for v in crd["spec"]["versions"] if v["served"]]


def test_an_installation_can_serve_fewer_legacy_versions_never_the_storage_one() -> None:
    crds = {crd["metadata"]["name"]: crd for crd in load_crds()}
    workloads = crds["workloads.kueue.x-k8s.io"]
    assert _served(workloads) == ["v1alpha1", "v1alpha2", "v1beta1", "v1beta2"]
    assert _served(serving_legacy_versions(workloads, ["v1beta1"])) == ["v1beta1", "v1beta2"]
    assert _served(serving_legacy_versions(workloads, [])) == ["v1beta2"]
    assert _served(workloads) == ["v1alpha1", "v1alpha2", "v1beta1", "v1beta2"]  # a copy
    for crd in crds.values():
        assert _served(serving_legacy_versions(crd, LEGACY_VERSIONS)) == _served(crd)


def test_an_unknown_legacy_version_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"unknown legacy versions \['v2'\]"):
        serving_legacy_versions(load_crds()[0], ["v1beta1", "v2"])
