"""Kueue v0.19's feature gates in a Configuration: what kuota reads, refuses and warns about
(scheduler.api.feature_gates, docs/configuration.md#feature-gates)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from scheduler.api.feature_gates import GATES, KNOWN_FEATURE_GATES, judge, kuota_default
from scheduler.api.validation.configuration import check_configuration

KUEUE_FEATURES = (
    Path(
        os.environ.get(
            "KUEUE_MODULE_DIR",
            Path.home() / "go" / "pkg" / "mod" / "sigs.k8s.io" / "kueue@v0.19.2",
        )
    )
    / "pkg"
    / "features"
    / "kube_features.go"
)


def _messages(gates: dict[str, object]) -> tuple[list[str], list[str]]:
    errors, warnings = judge(gates)
    return [e.render() for e in errors], warnings


def test_every_gate_of_kueue_v0_19_is_listed_with_its_default_and_lock() -> None:
    if not KUEUE_FEATURES.is_file():
        pytest.skip(f"Kueue's Go module is not at {KUEUE_FEATURES}; nothing to compare against")
    source = KUEUE_FEATURES.read_text()
    names = set(re.findall(r'featuregate\.Feature = "(\w+)"', source))
    assert names == set(GATES)
    for name, gate in GATES.items():
        specs = re.search(rf"\n\t{name}: {{\n(.*?)\n\t}},", source, re.S)
        assert specs is not None, name
        last = specs.group(1).strip().splitlines()[-1]
        assert f"Default: {str(gate.kueue_default).lower()}" in last, name
        assert ("LockToDefault: true" in last) == gate.locked, name


def test_a_gate_kuota_reads_is_accepted_either_way() -> None:
    for value in (True, False):
        assert _messages({"PartialAdmission": value, "PriorityBoost": value}) == ([], [])


def test_asking_for_what_kuota_does_not_have_is_refused_saying_what_it_does() -> None:
    errors, _ = _messages({"ConcurrentAdmission": True, "MultiKueueManagerQuotaAutomation": True})
    assert errors == [
        "featureGates[ConcurrentAdmission]: kuota cannot enable this: kuota does not pursue "
        "several flavors at once (concurrentAdmissionPolicy); remove it (kuota behaves as "
        "ConcurrentAdmission=false)",
        "featureGates[MultiKueueManagerQuotaAutomation]: kuota cannot enable this: kuota does "
        "not set a MultiKueue manager's quota from its workers (MultiKueueConfig "
        "quotaManagement: Automated); set it by hand; remove it (kuota behaves as "
        "MultiKueueManagerQuotaAutomation=false)",
    ]


def test_turning_off_what_kuota_always_does_is_refused() -> None:
    errors, _ = _messages({"FlavorFungibility": False})
    assert errors and errors[0].startswith("featureGates[FlavorFungibility]: kuota cannot disable")


def test_restating_kueues_default_where_kuota_differs_is_a_warning() -> None:
    errors, warnings = _messages(
        {"ElasticJobsViaWorkloadSlicesWithTAS": False, "LocalQueueMetrics": True}
    )
    assert errors == []
    assert warnings == [
        "featureGates[ElasticJobsViaWorkloadSlicesWithTAS]: a scaled-up slice of an elastic "
        "Job keeps the topology placement of its pods (docs/concepts.md#elastic-jobs): kuota "
        "behaves as ElasticJobsViaWorkloadSlicesWithTAS=true, unlike Kueue's default",
    ], "LocalQueueMetrics is read: either value is accepted"


def test_turning_off_what_kuota_does_not_have_asks_for_nothing() -> None:
    assert _messages({"TASBalancedPlacement": False, "VisibilityOnDemand": False}) == (
        [],
        [],
    )


def test_topology_aware_scheduling_cannot_be_turned_off() -> None:
    errors, _ = _messages({"TopologyAwareScheduling": False})
    assert errors and errors[0].startswith(
        "featureGates[TopologyAwareScheduling]: kuota cannot disable"
    )
    assert _messages({"TopologyAwareScheduling": True}) == ([], [])


def test_the_visibility_gate_is_read_both_ways() -> None:
    assert _messages({"VisibilityOnDemand": False}) == ([], [])
    assert _messages({"VisibilityOnDemand": True}) == ([], [])


def test_a_gate_without_counterpart_is_a_warning_whatever_its_value() -> None:
    for value in (True, False):
        errors, warnings = _messages({"TASCacheTopologyTree": value})
        assert errors == [] and warnings == [
            "featureGates[TASCacheTopologyTree]: an implementation choice of Kueue's topology "
            "cache, with no counterpart in kuota: no effect"
        ]


def test_a_locked_gate_refuses_the_other_value_as_kueue_does() -> None:
    errors, _ = _messages({"HierarchicalCohorts": False})
    assert errors == [
        "featureGates[HierarchicalCohorts]: cannot be set to false: Kueue v0.19 locks it to true"
    ]
    assert _messages({"HierarchicalCohorts": True}) == ([], [])


def test_gates_of_earlier_kueue_versions_are_accepted_with_a_warning() -> None:
    assert "QueueVisibility" in KNOWN_FEATURE_GATES and "QueueVisibility" not in GATES
    assert _messages({"QueueVisibility": True}) == (
        [],
        ["featureGates[QueueVisibility]: not a feature gate of Kueue v0.19; no effect"],
    )


def test_kuotas_defaults_are_kueues_but_where_kuota_behaves_otherwise() -> None:
    assert kuota_default("PartialAdmission") and kuota_default("AdmissionGatedBy")
    assert kuota_default("ElasticJobsViaWorkloadSlices"), "elastic Jobs are on, as in Kueue"
    assert GATES["ElasticJobsViaWorkloadSlices"].read
    assert kuota_default("TopologyAwareScheduling") and not kuota_default("PriorityBoost")
    assert kuota_default("TASFailedNodeReplacement"), "kuota replaces failed nodes"
    assert kuota_default("TASReplaceNodeOnNodeTaints"), "a tainted node may fail, as in Kueue"
    assert GATES["TASReplaceNodeOnNodeTaints"].read


def test_the_configuration_check_reports_the_gates() -> None:
    errors, warnings = check_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "featureGates": {"ConcurrentAdmission": True, "KueueDRAIntegration": True},
        }
    )
    assert [(e.field, e.rule) for e in errors] == [("featureGates[ConcurrentAdmission]", "CFG-K")]
    assert warnings == [
        "featureGates[KueueDRAIntegration]: kuota does not charge Dynamic Resource Allocation "
        "devices to quota: no effect"
    ]


def test_the_docs_list_every_gate_with_kuotas_stance() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    for name, gate in GATES.items():
        row = next((line for line in docs.splitlines() if line.startswith(f"| `{name}` |")), None)
        assert row is not None, f"docs/configuration.md#feature-gates lacks {name}"
        assert gate.note in row, (name, row)


def test_gates_of_features_kuota_now_has_are_accepted_at_kueues_values() -> None:
    for gates in (
        {"DisableWaitForPodsReady": False},
        {"DisableWaitForPodsReady": True},
        {"ObjectRetentionPolicies": True},
    ):
        errors, warnings = judge(gates)
        assert (errors, warnings) == ([], []), gates
    errors, _ = judge({"ObjectRetentionPolicies": False})
    assert [e.field for e in errors] == ["featureGates[ObjectRetentionPolicies]"]
