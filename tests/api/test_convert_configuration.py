"""A v1beta1 Configuration file rewritten as v1beta2 (docs/configuration.md#versions): what it
meant to Kueue with v1beta1 it still means with v1beta2, and kuota reads it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler.api.config import parse_configuration
from scheduler.api.convert import ConversionError, configuration_to_v1beta2
from scheduler.api.validation import validate_configuration

V1BETA1 = "config.kueue.x-k8s.io/v1beta1"
V1BETA2 = "config.kueue.x-k8s.io/v1beta2"


def v1beta1(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": V1BETA1, "kind": "Configuration", **fields}


def test_enabled_sections_keep_their_meaning_and_v1beta1_defaults_are_written_out() -> None:
    raw = v1beta1(
        namespace="kueue-system",
        waitForPodsReady={"enable": True, "requeuingStrategy": {"timestamp": "Creation"}},
        fairSharing={"enable": True},
        integrations={"frameworks": ["batch/job"]},
    )
    before = copy.deepcopy(raw)
    result = configuration_to_v1beta2(raw)
    assert raw == before, "the input is not mutated"
    assert result.object == {
        "apiVersion": V1BETA2,
        "kind": "Configuration",
        "namespace": "kueue-system",
        "waitForPodsReady": {
            "requeuingStrategy": {"timestamp": "Creation"},
            "timeout": "5m",
            "blockAdmission": True,
        },
        "fairSharing": {
            "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
        },
        "integrations": {"frameworks": ["batch/job"]},
    }
    assert result.warnings == []
    config = parse_configuration(result.object)
    assert config.wait_for_pods_ready.block_admission is True
    assert config.wait_for_pods_ready.timeout.total_seconds() == 300
    assert config.fair_sharing is not None
    assert validate_configuration(result.object, None) == []


def test_values_the_user_wrote_win_over_v1beta1_defaults() -> None:
    result = configuration_to_v1beta2(
        v1beta1(
            waitForPodsReady={"enable": True, "timeout": "10m", "blockAdmission": False},
            fairSharing={"enable": True, "preemptionStrategies": ["LessThanInitialShare"]},
        )
    )
    assert result.object["waitForPodsReady"] == {"timeout": "10m", "blockAdmission": False}
    assert result.object["fairSharing"] == {"preemptionStrategies": ["LessThanInitialShare"]}


@pytest.mark.parametrize("fair", [None, {"enable": False, "preemptionStrategies": []}])
def test_fair_sharing_off_in_v1beta1_is_no_section_in_v1beta2(fair: Any) -> None:
    raw = v1beta1(waitForPodsReady={"enable": True})
    if fair is not None:
        raw["fairSharing"] = fair
    converted = configuration_to_v1beta2(raw).object
    assert "fairSharing" not in converted
    assert parse_configuration(converted).fair_sharing is None


@pytest.mark.parametrize("ready", [None, {"enable": False, "timeout": "1m"}])
def test_wait_for_pods_ready_off_stays_off_through_the_feature_gate(ready: Any) -> None:
    """v1beta2 turns waitForPodsReady on when the section is absent."""
    raw = v1beta1(featureGates={"PartialAdmission": True})
    if ready is not None:
        raw["waitForPodsReady"] = ready
    result = configuration_to_v1beta2(raw)
    assert "waitForPodsReady" not in result.object
    assert result.object["featureGates"] == {
        "PartialAdmission": True,
        "DisableWaitForPodsReady": True,
    }
    assert any("DisableWaitForPodsReady: true keeps it off" in w for w in result.warnings)
    assert validate_configuration(result.object, None) == []


def test_a_gate_the_user_set_is_kept_as_written() -> None:
    result = configuration_to_v1beta2(v1beta1(featureGates={"DisableWaitForPodsReady": False}))
    assert result.object["featureGates"] == {"DisableWaitForPodsReady": False}
    assert result.warnings == []


def test_removed_fields_are_dropped_with_a_warning() -> None:
    result = configuration_to_v1beta2(
        v1beta1(
            waitForPodsReady={"enable": True},
            queueVisibility={"clusterQueues": {"maxCount": 10}},
            integrations={"frameworks": ["pod"], "podOptions": {"namespaceSelector": {}}},
        )
    )
    assert "queueVisibility" not in result.object
    assert result.object["integrations"] == {"frameworks": ["pod"]}
    assert [w.split(" ", 1)[0] for w in result.warnings] == [
        "queueVisibility",
        "integrations.podOptions",
    ]
    # The replacement is served: the warning says where to read pending workloads now.
    assert (
        "GET /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/NAME/pendingworkloads"
        in (result.warnings[0])
    )


def test_a_v1beta2_file_is_returned_as_it_is() -> None:
    raw = {"apiVersion": V1BETA2, "kind": "Configuration", "fairSharing": {"enable": True}}
    result = configuration_to_v1beta2(raw)
    assert result.object == raw and result.object is not raw and result.warnings == []


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (v1beta1(fairSharing=3), "fairSharing"),
        (v1beta1(waitForPodsReady={"enable": "yes"}), "waitForPodsReady.enable"),
        (v1beta1(featureGates=["DisableWaitForPodsReady"]), "featureGates"),
        ({"apiVersion": "config.kueue.x-k8s.io/v1alpha1", "kind": "Configuration"}, "apiVersion"),
        ({"apiVersion": V1BETA1, "kind": "Settings"}, "kind"),
    ],
)
def test_what_cannot_be_read_names_its_field(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(ConversionError) as failed:
        configuration_to_v1beta2(raw)
    assert failed.value.field == field
