"""Conversion never lets a stale round-trip value override what a request sets.

Each test plays what ``kubectl apply`` of an older-version manifest does to a
stored v1beta2 object: convert it down, change only what the manifest
changes (everything else the down-conversion wrote, annotations included,
stays as it was), convert it back up, and check what v1beta2 then says.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from scheduler.api.convert import annotation_store as store
from scheduler.api.convert import convert_with_warnings, from_hub

HUB_FIELDS = "conversion.kuota.io/v1beta2-fields"
V1ALPHA2_FIELDS = "conversion.kuota.io/v1alpha2-fields"
V1BETA1_FIELDS = "conversion.kuota.io/v1beta1-fields"


def load(text: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def annotations_of(obj: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = obj.get("metadata", {}).get("annotations", {})
    return found


def up(obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """What the API server stores: the unchecked conversion the conversion webhook runs."""
    result = convert_with_warnings(obj, "v1beta2", check=False)
    return result.object, result.warnings


# --- the annotation store ----------------------------------------------------------------------


def test_a_fingerprint_ignores_key_order_and_tells_values_apart() -> None:
    assert store.fingerprint({"a": "1", "b": "2"}) == store.fingerprint({"b": "2", "a": "1"})
    assert store.fingerprint({"a": "1"}) != store.fingerprint({"a": "2"})
    assert store.fingerprint(None) != store.fingerprint({})
    assert len(store.fingerprint({"a": "1"})) == 16


def test_a_recorded_field_is_unchanged_only_with_the_same_value() -> None:
    stash: dict[str, Any] = {"tolerations": []}
    store.record(stash, {"nodeSelector": {"pool": "a"}})
    warnings: list[str] = []
    shadows = store.shadowed(stash, HUB_FIELDS, warnings)
    assert stash == {"tolerations": []}, "the record is split off the stash"
    assert shadows.unchanged("nodeSelector", {"pool": "a"})
    assert not shadows.changed("nodeSelector", {"pool": "a"})
    assert shadows.changed("nodeSelector", {"pool": "b"})
    assert not shadows.unchanged("nodeSelector", {"pool": "b"})
    # Never recorded: neither (a stash written before fingerprints keeps its meaning).
    assert not shadows.changed("metadata.labels", {"x": "y"})
    assert not shadows.unchanged("metadata.labels", {"x": "y"})
    assert warnings == []


def test_an_unreadable_record_is_reported_and_counts_every_field_as_changed() -> None:
    stash: dict[str, Any] = {"shadowed": ["not", "a", "map"]}
    warnings: list[str] = []
    shadows = store.shadowed(stash, HUB_FIELDS, warnings)
    assert stash == {}
    assert shadows.changed("spec.preemption", None)
    assert not shadows.unchanged("nodeSelector", {})
    assert len(warnings) == 1 and "unreadable 'shadowed' record" in warnings[0]


# --- ResourceFlavor -------------------------------------------------------------------------------

HUB_FLAVOR = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
spec:
  nodeLabels: {instance-type: ondemand, zone: a}
  tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]
"""


def test_v1alpha2_labels_set_after_a_v1beta2_apply_become_the_node_labels() -> None:
    view = from_hub(load(HUB_FLAVOR), "v1alpha2")
    assert view["nodeSelector"] == {"instance-type": "ondemand", "zone": "a"}
    # The blog post's v1alpha2 manifest sets metadata.labels; the patch leaves nodeSelector.
    view["metadata"]["labels"] = {"instance-type": "spot"}
    stored, warnings = up(view)
    assert stored["spec"] == {
        "nodeLabels": {"instance-type": "spot"},
        "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
    }
    assert stored["metadata"] == {"name": "f", "labels": {"instance-type": "spot"}}
    assert any("metadata.labels are the node labels" in warning for warning in warnings)
    again = from_hub(stored, "v1alpha2")
    assert "nodeSelector" not in again, "labels and node labels agree: no nodeSelector"


def test_a_nodeselector_the_request_changes_wins_over_the_labels() -> None:
    view = from_hub(load(HUB_FLAVOR), "v1alpha2")
    view["metadata"]["labels"] = {"team": "ml"}
    view["nodeSelector"] = {"instance-type": "spot"}
    stored, _ = up(view)
    assert stored["spec"]["nodeLabels"] == {"instance-type": "spot"}
    assert stored["metadata"]["labels"] == {"team": "ml"}
    back = from_hub(stored, "v1alpha2")
    assert back["nodeSelector"] == {"instance-type": "spot"}
    kept = json.loads(annotations_of(back).get(HUB_FIELDS, "{}"))
    assert "shadowed" not in kept, "the user's own nodeSelector is not an artifact"


def test_an_unchanged_view_keeps_the_v1beta2_node_labels() -> None:
    hub = load(HUB_FLAVOR)
    hub["metadata"]["labels"] = {"team": "ml"}
    view = from_hub(hub, "v1alpha2")
    assert view["nodeSelector"] == {"instance-type": "ondemand", "zone": "a"}
    assert view["metadata"]["labels"] == {"team": "ml"}
    stored, _ = up(view)
    assert stored == hub


def test_a_nodeselector_written_in_v1alpha2_keeps_winning_over_new_object_labels() -> None:
    written = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha2
kind: ResourceFlavor
metadata: {name: f, labels: {team: a}}
nodeSelector: {pool: gpu}
"""
    )
    view = from_hub(up(written)[0], "v1alpha2")
    assert view == written, "a late-v1alpha2 flavor round-trips exactly"
    # Re-applying the same manifest with one more object label does not touch nodeSelector.
    view["metadata"]["labels"] = {"team": "a", "cost-center": "42"}
    stored, _ = up(view)
    assert stored["spec"]["nodeLabels"] == {"pool": "gpu"}


def test_a_v1alpha2_nodeselector_a_v1beta2_write_replaced_is_no_longer_the_users() -> None:
    written = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha2
kind: ResourceFlavor
metadata: {name: f, labels: {pool: gpu}}
nodeSelector: {pool: gpu}
"""
    )
    hub = up(written)[0]
    assert V1ALPHA2_FIELDS in annotations_of(hub)
    hub["spec"]["nodeLabels"] = {"pool": "cpu"}  # a v1beta2 apply; the annotation stays
    view = from_hub(hub, "v1alpha2")
    assert view["nodeSelector"] == {"pool": "cpu"}
    view["metadata"]["labels"] = {"pool": "tpu"}
    stored, _ = up(view)
    assert stored["spec"]["nodeLabels"] == {"pool": "tpu"}
    # And when the v1beta2 write made node labels and object labels agree, no nodeSelector.
    hub["spec"]["nodeLabels"] = {"pool": "gpu-2"}
    hub["metadata"]["labels"] = {"pool": "gpu-2"}
    assert "nodeSelector" not in from_hub(hub, "v1alpha2")


def test_an_unreadable_record_leaves_the_flavor_as_the_object_says() -> None:
    view = from_hub(load(HUB_FLAVOR), "v1alpha2")
    view["metadata"]["annotations"][HUB_FIELDS] = json.dumps({"shadowed": "garbage"})
    view["metadata"]["labels"] = {"instance-type": "spot"}
    stored, warnings = up(view)
    assert stored["spec"]["nodeLabels"] == {"instance-type": "ondemand", "zone": "a"}
    assert any("unreadable" in warning for warning in warnings)


# --- ClusterQueue (legacy) ----------------------------------------------------------------------

HUB_CLUSTER_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  cohortName: team
  stopPolicy: Hold
  preemption:
    withinClusterQueue: LowerPriority
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: "4", lendingLimit: "1"}]
"""


def test_v1alpha2_preemption_set_after_a_v1beta2_apply_replaces_the_stashed_one() -> None:
    view = from_hub(load(HUB_CLUSTER_QUEUE), "v1alpha2")
    assert "preemption" not in view["spec"]
    view["spec"]["preemption"] = {"reclaimWithinCohort": "LowerPriority"}
    stored, warnings = up(view)
    assert stored["spec"]["preemption"] == {
        "reclaimWithinCohort": "LowerPriority",
        "borrowWithinCohort": {"policy": "LowerPriority"},  # v1alpha2 cannot say it: kept
    }
    assert stored["spec"]["stopPolicy"] == "Hold"
    quota = stored["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert quota["lendingLimit"] == "1"
    assert any(
        "withinClusterQueue and reclaimWithinCohort are the request's" in w for w in warnings
    )


def test_an_unchanged_legacy_cluster_queue_keeps_the_whole_v1beta2_preemption() -> None:
    hub = load(HUB_CLUSTER_QUEUE)
    for version in ("v1alpha1", "v1alpha2"):
        view = from_hub(hub, version)
        view["spec"]["queueingStrategy"] = "StrictFIFO"  # a change elsewhere
        stored, _ = up(view)
        assert stored["spec"]["preemption"] == hub["spec"]["preemption"]
        assert stored["spec"]["queueingStrategy"] == "StrictFIFO"


def test_legacy_preemption_the_down_conversion_showed_is_the_requests_to_change() -> None:
    written = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha2
kind: ClusterQueue
metadata: {name: q}
spec:
  cohort: team
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resources: [{name: cpu, flavors: [{name: default, quota: {min: "4"}}]}]
"""
    )
    hub = up(written)[0]
    hub["spec"]["preemption"]["borrowWithinCohort"] = {"policy": "LowerPriority"}
    view = from_hub(hub, "v1alpha2")
    assert view["spec"]["preemption"] == written["spec"]["preemption"]
    del view["spec"]["preemption"]["withinClusterQueue"]
    stored, _ = up(view)
    assert stored["spec"]["preemption"] == {
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "LowerPriority"},
    }


# --- Workload (legacy) ----------------------------------------------------------------------------

HUB_WORKLOAD = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: ns}
spec:
  queueName: q
  priority: 5
  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: gold}
  podSets:
  - name: main
    count: 2
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
"""


def test_a_legacy_priority_class_name_replaces_a_stashed_workload_priority_class() -> None:
    hub = load(HUB_WORKLOAD)
    for version in ("v1alpha1", "v1alpha2"):
        view = from_hub(hub, version)
        assert "priorityClassName" not in view["spec"]
        view["spec"]["priorityClassName"] = ""  # "no priority class"
        stored, warnings = up(view)
        assert "priorityClassRef" not in stored["spec"]
        assert any("priority class reference kept there was dropped" in w for w in warnings)
        view["spec"]["priorityClassName"] = "high"
        stored, _ = up(view)
        assert stored["spec"]["priorityClassRef"] == {
            "group": "scheduling.k8s.io",
            "kind": "PriorityClass",
            "name": "high",
        }
        unchanged = from_hub(hub, version)
        unchanged["spec"]["queueName"] = "other"
        stored, _ = up(unchanged)
        assert stored["spec"]["priorityClassRef"] == hub["spec"]["priorityClassRef"]


# --- ClusterQueue (v1beta1) ----------------------------------------------------------------------

V1BETA1_CLUSTER_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  admissionChecks: [first]
  resourceGroups:
  - {coveredResources: [cpu], flavors: [{name: a, resources: [{name: cpu, nominalQuota: 9}]}]}
"""


def test_v1beta1_list_form_is_not_restored_after_a_v1beta2_strategy_change() -> None:
    hub = up(load(V1BETA1_CLUSTER_QUEUE))[0]
    assert V1BETA1_FIELDS in annotations_of(hub)
    hub["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "second"}]}
    view = from_hub(hub, "v1beta1")
    assert "admissionChecks" not in view["spec"]
    assert view["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "second"}]}
    view["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "third"}]}
    stored, _ = up(view)
    assert stored["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "third"}]}


def test_v1beta1_list_form_stays_while_the_strategy_is_unchanged() -> None:
    written = load(V1BETA1_CLUSTER_QUEUE)
    hub = up(written)[0]
    hub["spec"]["queueingStrategy"] = "StrictFIFO"  # a v1beta2 write elsewhere
    view = from_hub(hub, "v1beta1")
    assert view["spec"]["admissionChecks"] == ["first"]
    assert "admissionChecksStrategy" not in view["spec"]


def test_v1beta1_empty_list_is_not_written_next_to_a_strategy_set_since() -> None:
    written = load(V1BETA1_CLUSTER_QUEUE)
    written["spec"]["admissionChecks"] = []
    hub = up(written)[0]
    assert from_hub(hub, "v1beta1") == written
    hub["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "second"}]}
    view = from_hub(hub, "v1beta1")
    assert "admissionChecks" not in view["spec"]
