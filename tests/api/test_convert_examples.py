"""Conversion on hand-written examples and on the seed manifests.

See docs/api-differences.md#legacy-versions-and-conversion.  One test per
(kind, version pair) at least, with worked values; round trips in both
directions; and the error cases.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from scheduler.api.convert import ConversionError, convert, convert_with_warnings, from_hub, to_hub
from scheduler.api.convert.v1beta1 import (
    domains_from_slices,
    slices_from_domains,
    v1beta1_report_path,
)
from scheduler.api.field import FieldPath
from tests.api.seed_examples import documents

HUB_FIELDS = "conversion.kuota.io/v1beta2-fields"
V1ALPHA1_FIELDS = "conversion.kuota.io/v1alpha1-fields"


def load(text: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def annotation(obj: dict[str, Any], key: str) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(obj["metadata"]["annotations"][key])
    return decoded


def seed(kind: str, name: str, version: str) -> dict[str, Any]:
    for document in documents():
        if (
            document.kind == kind
            and document.raw["metadata"].get("name") == name
            and document.api_version.endswith(version)
        ):
            return document.raw
    raise LookupError(f"{version} {kind} {name} not in the seeds")


# --- ClusterQueue ---------------------------------------------------------------------------------


def test_worked_example_team_a_cq_v1alpha1_to_v1beta2() -> None:
    hub = to_hub(seed("ClusterQueue", "team-a-cq", "v1alpha1"))
    assert hub["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert hub["spec"] == {
        "namespaceSelector": {},
        "cohortName": "team-ab",
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "default",
                        "resources": [
                            {"name": "cpu", "nominalQuota": "9"},
                            {"name": "memory", "nominalQuota": "36Gi"},
                        ],
                    }
                ],
            }
        ],
    }
    assert "annotations" not in hub["metadata"]


@pytest.mark.parametrize(
    ("name", "cohort", "quotas"),
    [
        ("cluster-total", None, [("cpu", "9"), ("memory", "36Gi")]),
        ("team-a-cq", "team-ab", [("cpu", "9"), ("memory", "36Gi")]),
        ("team-b-cq", "team-ab", [("cpu", "12"), ("memory", "48Gi")]),
    ],
)
def test_valid_v1alpha1_seed_cluster_queues_convert_with_their_quotas(
    name: str, cohort: str | None, quotas: list[tuple[str, str]]
) -> None:
    legacy = seed("ClusterQueue", name, "v1alpha1")
    hub = to_hub(legacy)
    assert hub["spec"].get("cohortName") == cohort
    (group,) = hub["spec"]["resourceGroups"]
    assert group["coveredResources"] == [resource for resource, _ in quotas]
    (flavor,) = group["flavors"]
    assert flavor["name"] == "default"
    assert [(q["name"], q["nominalQuota"]) for q in flavor["resources"]] == quotas
    for version in ("v1alpha1", "v1alpha2", "v1beta1"):
        assert to_hub(from_hub(hub, version)) == hub


def test_codependency_seed_with_on_demand_is_rejected_before_conversion() -> None:
    candidates = [d.raw for d in documents() if d.kind == "ClusterQueue" and d.line == 69]
    assert len(candidates) == 1
    with pytest.raises(ConversionError) as caught:
        to_hub(candidates[0])
    assert caught.value.field == "spec.resources[0].flavors[1].name"
    assert '"on_demand" is not a valid flavor name' in caught.value.message
    assert {e.rule for e in caught.value.errors} == {"LEG-CQ-6"}


def test_codependency_example_with_valid_names_gives_two_groups() -> None:
    cq = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata: {name: cluster-total}
spec:
  namespaceSelector: {}
  resources:
  - name: cpu
    flavors: [{name: spot, quota: {min: 18}}, {name: on-demand, quota: {min: 9}}]
  - name: memory
    flavors: [{name: spot, quota: {min: 72Gi}}, {name: on-demand, quota: {min: 36Gi}}]
  - name: gpu
    flavors: [{name: vendor1, quota: {min: 10}}, {name: vendor2, quota: {min: 10}}]
"""
    )
    hub = to_hub(cq)
    groups = hub["spec"]["resourceGroups"]
    assert [g["coveredResources"] for g in groups] == [["cpu", "memory"], ["gpu"]]
    assert [f["name"] for f in groups[0]["flavors"]] == ["spot", "on-demand"]
    assert groups[0]["flavors"][0]["resources"] == [
        {"name": "cpu", "nominalQuota": "18"},
        {"name": "memory", "nominalQuota": "72Gi"},
    ]
    back = from_hub(hub, "v1alpha1")
    assert [r["name"] for r in back["spec"]["resources"]] == ["cpu", "memory", "gpu"]
    assert back["spec"]["resources"][1]["flavors"][1] == {
        "name": "on-demand",
        "quota": {"min": "36Gi"},
    }


def test_max_in_a_cohort_becomes_borrowing_limit_and_comes_back() -> None:
    cq = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata: {name: q}
spec:
  cohort: c
  resources:
  - name: cpu
    flavors: [{name: default, quota: {min: "10", max: "15"}}]
  - name: memory
    flavors: [{name: default, quota: {min: 1Gi, max: 1Gi}}]
"""
    )
    hub = to_hub(cq)
    cpu, memory = hub["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert cpu == {"name": "cpu", "nominalQuota": "10", "borrowingLimit": "5"}
    assert memory == {"name": "memory", "nominalQuota": "1Gi", "borrowingLimit": "0"}
    assert from_hub(hub, "v1alpha1") == cq


def test_max_without_cohort_is_kept_in_the_annotation_with_a_warning() -> None:
    cq = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata: {name: q}
spec:
  resources:
  - name: cpu
    flavors: [{name: spot, quota: {min: "9", max: "24"}}]
"""
    )
    result = convert_with_warnings(cq, "v1beta2")
    quota = result.object["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert quota == {"name": "cpu", "nominalQuota": "9"}
    assert annotation(result.object, V1ALPHA1_FIELDS) == {
        "maxWithoutCohort": [{"resource": "cpu", "flavor": "spot", "max": "24"}]
    }
    assert (
        "quota.max of cpu/spot has no effect without a cohort; it was kept only in an annotation"
        in result.warnings
    )
    assert (
        result.warnings[0]
        == "kueue.x-k8s.io/v1alpha1 ClusterQueue is a legacy form; it was converted to v1beta2"
    )
    assert from_hub(result.object, "v1alpha1") == cq


def test_interleaved_resource_order_is_restored() -> None:
    cq = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata: {name: q}
spec:
  resources:
  - {name: cpu, flavors: [{name: a, quota: {min: "1"}}]}
  - {name: gpu, flavors: [{name: b, quota: {min: "2"}}]}
  - {name: memory, flavors: [{name: a, quota: {min: 1Gi}}]}
"""
    )
    hub = to_hub(cq)
    assert [g["coveredResources"] for g in hub["spec"]["resourceGroups"]] == [
        ["cpu", "memory"],
        ["gpu"],
    ]
    assert annotation(hub, V1ALPHA1_FIELDS) == {"resourceOrder": ["cpu", "gpu", "memory"]}
    assert from_hub(hub, "v1alpha1") == cq


def test_quantities_are_written_in_canonical_form_and_defaults_filled() -> None:
    cq = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata: {name: q}
spec:
  queueingStrategy: ""
  resources:
  - name: cpu
    flavors: [{quota: {min: 1000m}}, {name: other, quota: {}}]
"""
    )
    hub = to_hub(cq)
    assert hub["spec"]["queueingStrategy"] == "BestEffortFIFO"
    flavors = hub["spec"]["resourceGroups"][0]["flavors"]
    assert flavors == [
        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "1"}]},
        {"name": "other", "resources": [{"name": "cpu", "nominalQuota": "0"}]},
    ]


def test_v1beta2_cluster_queue_down_keeps_hub_only_fields_in_the_annotation() -> None:
    hub = load(
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  cohortName: c
  stopPolicy: Hold
  preemption: {withinClusterQueue: Never}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources: [{name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 2, lendingLimit: 0}]
"""
    )
    legacy = from_hub(hub, "v1alpha1")
    assert legacy["spec"] == {
        "cohort": "c",
        "resources": [
            {
                "name": "nvidia.com/gpu",
                "flavors": [{"name": "default", "quota": {"min": "4", "max": "6"}}],
            }
        ],
    }
    assert legacy["metadata"]["annotations"][HUB_FIELDS] == (
        '{"stopPolicy":"Hold","lendingLimits":[{"flavor":"default","resource":"nvidia.com/gpu","lendingLimit":"0"}]}'
    )
    again = to_hub(legacy)
    quota = again["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert quota == {
        "name": "nvidia.com/gpu",
        "nominalQuota": "4",
        "borrowingLimit": "2",
        "lendingLimit": "0",
    }
    assert again["spec"]["stopPolicy"] == "Hold"
    assert "preemption" not in again["spec"]  # equal to the default: re-created by defaulting
    assert "annotations" not in again["metadata"]


def test_stale_lending_limit_is_dropped_when_its_flavor_is_gone() -> None:
    legacy = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata:
  name: q
  annotations:
    conversion.kuota.io/v1beta2-fields: >-
      {"lendingLimits":[{"flavor":"gone","resource":"cpu","lendingLimit":"1"}]}
spec:
  cohort: c
  resources: [{name: cpu, flavors: [{name: default, quota: {min: "4"}}]}]
"""
    )
    hub = to_hub(legacy)
    assert hub["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0] == {
        "name": "cpu",
        "nominalQuota": "4",
    }
    assert "annotations" not in hub["metadata"]


def test_unreadable_annotation_is_removed_with_a_warning() -> None:
    legacy = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: LocalQueue
metadata: {name: q, namespace: ns, annotations: {conversion.kuota.io/v1beta2-fields: "not json"}}
spec: {clusterQueue: cq}
"""
    )
    result = convert_with_warnings(legacy, "v1beta2")
    assert "annotations" not in result.object["metadata"]
    assert any("is not a JSON object" in warning for warning in result.warnings)


def test_seed_v1beta2_cluster_queues_go_down_and_back_to_every_version() -> None:
    for document in documents():
        if document.kind != "ClusterQueue" or not document.api_version.endswith("v1beta2"):
            continue
        spec = document.raw.get("spec") or {}
        groups = spec.get("resourceGroups") or []
        complete = all(
            len(f.get("resources", [])) == len(g["coveredResources"])
            for g in groups
            for f in g["flavors"]
        )
        for version in ("v1alpha1", "v1alpha2", "v1beta1"):
            if not complete and version != "v1beta1":
                with pytest.raises(ConversionError) as caught:
                    from_hub(document.raw, version)
                assert caught.value.field == "spec.resourceGroups[0].flavors[0].resources"
                continue
            back = to_hub(from_hub(document.raw, version))
            assert _canonical_groups(back) == _canonical_groups(document.raw), (
                document.line,
                version,
            )
            for key in ("preemption", "admissionChecksStrategy", "cohortName", "namespaceSelector"):
                assert back["spec"].get(key) == spec.get(key) or key == "preemption", (
                    document.line,
                    key,
                )


def _canonical_groups(cq: dict[str, Any]) -> list[Any]:
    from scheduler.api.quantity import Quantity

    groups = copy.deepcopy(cq["spec"].get("resourceGroups") or [])
    for group in groups:
        for flavor in group["flavors"]:
            for quota in flavor["resources"]:
                for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                    if key in quota:
                        quota[key] = Quantity.parse(quota[key])
    return groups


def test_cluster_queue_status_converts_both_ways() -> None:
    legacy = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: ClusterQueue
metadata: {name: q}
spec: {}
status:
  pendingWorkloads: 2
  admittedWorkloads: 1
  usedResources:
    cpu: {spot: {total: "3", borrowing: "1"}}
    memory: {spot: {total: 1Gi}}
"""
    )
    hub = to_hub(legacy)
    assert hub["status"]["flavorsUsage"] == [
        {
            "name": "spot",
            "resources": [
                {"name": "cpu", "total": "3", "borrowed": "1"},
                {"name": "memory", "total": "1Gi"},
            ],
        }
    ]
    assert hub["status"]["flavorsReservation"] == hub["status"]["flavorsUsage"]
    assert hub["status"]["reservingWorkloads"] == 1
    assert from_hub(hub, "v1alpha1") == legacy


def test_v1alpha2_cluster_queue_seed_converts() -> None:
    hub = to_hub(seed("ClusterQueue", "research-pool", "v1alpha2"))
    assert hub["spec"]["resourceGroups"] == [
        {
            "coveredResources": ["cpu"],
            "flavors": [
                # canonical Kubernetes form: 1000 is written 1k
                {"name": "ondemand", "resources": [{"name": "cpu", "nominalQuota": "1k"}]},
                {"name": "spot", "resources": [{"name": "cpu", "nominalQuota": "2k"}]},
            ],
        }
    ]
    assert convert(hub, "kueue.x-k8s.io/v1alpha2")["apiVersion"] == "kueue.x-k8s.io/v1alpha2"


def test_v1alpha2_late_preemption_is_copied_and_kept_in_spec() -> None:
    cq = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha2
kind: ClusterQueue
metadata: {name: q}
spec:
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
  resources: [{name: cpu, flavors: [{name: a, quota: {min: "1"}}]}]
"""
    )
    hub = to_hub(cq)
    assert hub["spec"]["preemption"] == {
        "reclaimWithinCohort": "Any",
        "withinClusterQueue": "LowerPriority",
    }
    hub["spec"]["preemption"]["borrowWithinCohort"] = {"policy": "LowerPriority"}
    down = from_hub(hub, "v1alpha2")
    assert down["spec"]["preemption"] == {
        "reclaimWithinCohort": "Any",
        "withinClusterQueue": "LowerPriority",
    }
    assert to_hub(down)["spec"]["preemption"]["borrowWithinCohort"] == {"policy": "LowerPriority"}


# --- ResourceFlavor -------------------------------------------------------------------------------


def test_v1alpha1_resource_flavor_seed_moves_labels_and_taints_under_spec() -> None:
    hub = to_hub(seed("ResourceFlavor", "spot", "v1alpha1"))
    assert hub["spec"] == {
        "nodeLabels": {"instance-type": "spot"},
        "nodeTaints": [{"effect": "NoSchedule", "key": "spot", "value": "true"}],
    }
    assert "labels" not in hub and "taints" not in hub
    assert from_hub(hub, "v1alpha1") == seed("ResourceFlavor", "spot", "v1alpha1")


def test_empty_v1alpha1_flavor_converts_to_empty_spec_and_back_to_no_fields() -> None:
    empty = seed("ResourceFlavor", "default", "v1alpha1")
    hub = to_hub(empty)
    assert hub["spec"] == {}
    assert from_hub(hub, "v1alpha1") == empty


def test_v1alpha2_resource_flavor_seed_reads_node_labels_from_metadata() -> None:
    ondemand = seed("ResourceFlavor", "ondemand", "v1alpha2")
    hub = to_hub(ondemand)
    assert hub["spec"] == {"nodeLabels": {"instance-type": "ondemand"}}
    assert hub["metadata"]["labels"] == {"instance-type": "ondemand"}
    assert from_hub(hub, "v1alpha2") == ondemand
    spot = to_hub(seed("ResourceFlavor", "spot", "v1alpha2"))
    assert spot["spec"]["nodeTaints"] == [{"effect": "NoSchedule", "key": "spot", "value": "true"}]


def test_v1alpha2_node_selector_wins_over_metadata_labels() -> None:
    flavor = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha2
kind: ResourceFlavor
metadata: {name: f, labels: {team: a}}
nodeSelector: {pool: gpu}
"""
    )
    hub = to_hub(flavor)
    assert hub["spec"] == {"nodeLabels": {"pool": "gpu"}}
    assert from_hub(hub, "v1alpha2") == flavor


def test_v1beta2_flavor_tolerations_and_topology_survive_the_legacy_trip() -> None:
    hub = load(
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas}
spec:
  nodeLabels: {pool: a}
  tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]
  topologyName: default
"""
    )
    legacy = from_hub(hub, "v1alpha1")
    assert legacy["labels"] == {"pool": "a"}
    assert annotation(legacy, HUB_FIELDS) == {
        "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
        "topologyName": "default",
    }
    assert to_hub(legacy) == hub
    assert to_hub(from_hub(hub, "v1alpha2")) == hub
    assert to_hub(from_hub(hub, "v1beta1")) == hub


# --- LocalQueue -----------------------------------------------------------------------------------


def test_v1alpha2_local_queue_seed_converts() -> None:
    training = seed("LocalQueue", "training", "v1alpha2")
    hub = to_hub(training)
    assert hub["spec"] == {"clusterQueue": "research-pool"}
    assert hub["metadata"] == {"name": "training", "namespace": "team-ml"}
    assert from_hub(hub, "v1alpha2") == training


def test_v1alpha1_queue_kind_is_an_alias_that_round_trips() -> None:
    queue = load(
        """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Queue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
status: {pendingWorkloads: 3}
"""
    )
    result = convert_with_warnings(queue, "v1beta2")
    assert result.object["kind"] == "LocalQueue"
    assert any("Queue" in warning for warning in result.warnings)
    assert from_hub(result.object, "v1alpha1") == queue


def test_v1beta2_local_queue_stop_policy_goes_to_the_annotation() -> None:
    hub = load(
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq, stopPolicy: HoldAndDrain, fairSharing: {weight: "2"}}
status: {pendingWorkloads: 1, admittedWorkloads: 4, conditions: []}
"""
    )
    legacy = from_hub(hub, "v1alpha1")
    assert legacy["spec"] == {"clusterQueue": "cq"}
    assert legacy["status"] == {"pendingWorkloads": 1}
    assert annotation(legacy, HUB_FIELDS) == {
        "stopPolicy": "HoldAndDrain",
        "fairSharing": {"weight": "2"},
    }
    again = to_hub(legacy)
    assert again["spec"] == hub["spec"]


def test_seed_v1beta2_local_queue_to_each_version_and_back() -> None:
    user_queue = seed("LocalQueue", "user-queue", "v1beta2")
    for version in ("v1alpha1", "v1alpha2", "v1beta1"):
        assert to_hub(from_hub(user_queue, version)) == user_queue


# --- Workload -------------------------------------------------------------------------------------

LEGACY_WORKLOAD = """
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Workload
metadata: {name: job-1, namespace: ns, creationTimestamp: "2022-05-01T00:00:00Z"}
spec:
  queueName: q
  priorityClassName: high
  priority: 1000
  podSets:
  - name: main
    count: 3
    spec:
      containers:
      - name: c
        image: busybox
        resources:
          requests: {cpu: 500m}
          limits: {cpu: "1", memory: 1Gi}
  admission:
    clusterQueue: cq
    podSetFlavors:
    - name: main
      flavors: {cpu: spot, memory: spot}
"""


def test_v1alpha1_workload_admission_moves_to_status_with_usage_and_conditions() -> None:
    legacy = load(LEGACY_WORKLOAD)
    hub = to_hub(legacy)
    assert hub["spec"]["priorityClassRef"] == {
        "group": "scheduling.k8s.io",
        "kind": "PriorityClass",
        "name": "high",
    }
    assert hub["spec"]["podSets"][0]["template"]["spec"] == legacy["spec"]["podSets"][0]["spec"]
    assert "admission" not in hub["spec"]
    assert hub["status"]["admission"] == {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {
                "name": "main",
                "flavors": {"cpu": "spot", "memory": "spot"},
                "resourceUsage": {"cpu": "1500m", "memory": "3Gi"},
                "count": 3,
            }
        ],
    }
    types = {c["type"]: c for c in hub["status"]["conditions"]}
    assert (
        types["QuotaReserved"]["status"] == "True"
        and types["QuotaReserved"]["reason"] == "QuotaReserved"
    )
    assert types["Admitted"]["status"] == "True" and types["Admitted"]["reason"] == "Admitted"
    assert types["Admitted"]["lastTransitionTime"] == "2022-05-01T00:00:00Z"
    assert from_hub(hub, "v1alpha1") == legacy


def test_v1beta2_workload_down_keeps_v1beta2_only_fields() -> None:
    hub = load(
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: ns}
spec:
  queueName: q
  active: false
  maximumExecutionTimeSeconds: 600
  priority: 5
  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: gold}
  podSets:
  - name: main
    count: 4
    minCount: 2
    template:
      metadata: {labels: {app: x}}
      spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
status:
  conditions:
  - {type: Evicted, status: "True", reason: Deactivated, message: m,
     lastTransitionTime: "2024-01-01T00:00:00Z"}
  requeueState: {count: 1}
"""
    )
    legacy = from_hub(hub, "v1alpha1")
    assert legacy["spec"] == {
        "queueName": "q",
        "priority": 5,
        "podSets": [
            {
                "name": "main",
                "count": 4,
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
            }
        ],
    }
    kept = annotation(legacy, HUB_FIELDS)
    assert kept["active"] is False and kept["maximumExecutionTimeSeconds"] == 600
    assert kept["podSets"] == {
        "main": {"minCount": 2, "templateMetadata": {"labels": {"app": "x"}}}
    }
    assert to_hub(legacy) == hub


def test_reserved_v1beta2_workload_keeps_its_admission_through_the_legacy_form() -> None:
    hub = load(
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: ns}
spec:
  podSets:
  - name: main
    count: 2
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments:
    - {name: main, flavors: {cpu: a}, resourceUsage: {cpu: "2", pods: "2"}, count: 2}
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved, message: r,
     lastTransitionTime: "2024-01-01T00:00:00Z"}
  - {type: Admitted, status: "False", reason: UnsatisfiedAdmissionChecks, message: u,
     lastTransitionTime: "2024-01-01T00:00:00Z"}
"""
    )
    legacy = from_hub(hub, "v1alpha2")
    assert legacy["spec"]["admission"] == {
        "clusterQueue": "cq",
        "podSetFlavors": [{"name": "main", "flavors": {"cpu": "a"}}],
    }
    assert [c["type"] for c in legacy["status"]["conditions"]] == ["Admitted"]
    assert to_hub(legacy) == hub


def test_unreserved_admission_is_not_written_to_the_legacy_spec() -> None:
    hub = load(
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: ns}
spec: {podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]}
status:
  admission: {clusterQueue: cq, podSetAssignments: [{name: main, flavors: {}, count: 1}]}
  conditions:
  - {type: QuotaReserved, status: "False", reason: Pending, message: p,
     lastTransitionTime: "2024-01-01T00:00:00Z"}
"""
    )
    legacy = from_hub(hub, "v1alpha1")
    assert "admission" not in legacy["spec"]
    assert to_hub(legacy) == hub


# --- v1beta1 --------------------------------------------------------------------------------------


def test_v1beta1_cluster_queue_renames_and_spellings() -> None:
    old = load(
        """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  cohort: team
  admissionChecks: [prov, multikueue]
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}
  resourceGroups:
  - {coveredResources: [cpu], flavors: [{name: a, resources: [{name: cpu, nominalQuota: 9}]}]}
status: {pendingWorkloadsStatus: {clusterQueuePendingWorkload: []}, pendingWorkloads: 1}
"""
    )
    hub = to_hub(old)
    assert hub["spec"]["cohortName"] == "team"
    assert hub["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "prov"}, {"name": "multikueue"}]
    }
    assert hub["spec"]["flavorFungibility"] == {
        "whenCanBorrow": "MayStopSearch",
        "whenCanPreempt": "MayStopSearch",
    }
    assert hub["status"] == {"pendingWorkloads": 1}
    back = from_hub(hub, "v1beta1")
    del old["status"]["pendingWorkloadsStatus"]
    assert back == old


def test_v1beta1_cluster_queue_with_both_admission_check_forms_is_rejected() -> None:
    old = load(
        """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  admissionChecks: [a]
  admissionChecksStrategy: {admissionChecks: [{name: b}]}
"""
    )
    with pytest.raises(ConversionError) as caught:
        to_hub(old)
    assert caught.value.field == "spec"
    assert caught.value.errors[0].rule == "CQ-V3"
    unchecked = to_hub(old, check=False)
    assert unchecked["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "a"}]}


def test_v1beta1_workload_priority_source_and_spelling() -> None:
    old = load(
        """
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: ns}
spec:
  priorityClassName: gold
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  priority: 10
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]
status:
  accumulatedPastExexcutionTimeSeconds: 30
  admission:
    clusterQueue: cq
    podSetAssignments:
    - name: main
      count: 3
      topologyAssignment:
        levels: [block, kubernetes.io/hostname]
        domains:
        - {values: [b1, node-1], count: 2}
        - {values: [b1, node-2], count: 1}
"""
    )
    hub = to_hub(old)
    assert hub["spec"]["priorityClassRef"] == {
        "group": "kueue.x-k8s.io",
        "kind": "WorkloadPriorityClass",
        "name": "gold",
    }
    assert hub["status"]["accumulatedPastExecutionTimeSeconds"] == 30
    topology = hub["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert topology == {
        "levels": ["block", "kubernetes.io/hostname"],
        "slices": [
            {
                "domainCount": 2,
                "valuesPerLevel": [
                    {"universal": "b1"},
                    {"individual": {"prefix": "node-", "roots": ["1", "2"]}},
                ],
                "podCounts": {"individual": [2, 1]},
            }
        ],
    }
    assert from_hub(hub, "v1beta1") == old


def test_v1beta1_workload_without_source_keeps_the_name_in_the_annotation() -> None:
    old = load(
        """
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: ns}
spec: {priorityClassName: x, priorityClassSource: "", podSets: []}
"""
    )
    hub = to_hub(old, check=False)
    assert "priorityClassRef" not in hub["spec"]
    assert from_hub(hub, "v1beta1") == old


def test_topology_slices_with_prefix_and_suffix_expand() -> None:
    path = FieldPath(("t",))
    compressed = {
        "levels": ["h"],
        "slices": [
            {
                "domainCount": 2,
                "valuesPerLevel": [
                    {"individual": {"prefix": "pool-", "suffix": "-x", "roots": ["1", "2"]}}
                ],
                "podCounts": {"universal": 4},
            }
        ],
    }
    assert domains_from_slices(compressed, path) == {
        "levels": ["h"],
        "domains": [{"values": ["pool-1-x"], "count": 4}, {"values": ["pool-2-x"], "count": 4}],
    }
    assert domains_from_slices(
        slices_from_domains(domains_from_slices(compressed, path), path), path
    ) == domains_from_slices(compressed, path)


def test_multikueue_kinds_between_v1beta1_and_v1beta2() -> None:
    cluster = seed("MultiKueueCluster", "onprem-worker", "v1beta2")
    old = from_hub(cluster, "v1beta1")
    assert old["spec"] == {
        "kubeConfig": {"locationType": "Secret", "location": "onprem-worker-secret"}
    }
    assert to_hub(old) == cluster
    config = copy.deepcopy(seed("MultiKueueConfig", "multikueue-config", "v1beta2"))
    config["spec"]["quotaManagement"] = "Automated"
    old_config = from_hub(config, "v1beta1")
    assert "quotaManagement" not in old_config["spec"]
    assert to_hub(old_config) == config


def test_admission_check_retry_delay_round_trips_from_v1beta1() -> None:
    old = load(
        """
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: ac}
spec: {controllerName: kueue.x-k8s.io/multikueue, retryDelayMinutes: 15}
"""
    )
    hub = to_hub(old)
    assert hub["spec"] == {"controllerName": "kueue.x-k8s.io/multikueue"}
    assert from_hub(hub, "v1beta1") == old
    assert to_hub(
        from_hub(seed("AdmissionCheck", "multikueue-check", "v1beta2"), "v1beta1")
    ) == seed("AdmissionCheck", "multikueue-check", "v1beta2")


def test_v1beta1_report_paths() -> None:
    original = {"spec": {"cohort": "c", "admissionChecks": ["a", "b"]}}
    assert v1beta1_report_path(original, "spec.cohortName") == "spec.cohort"
    assert (
        v1beta1_report_path(original, "spec.admissionChecksStrategy.admissionChecks[1].name")
        == "spec.admissionChecks[1]"
    )
    assert v1beta1_report_path(
        {"spec": {}}, "spec.admissionChecksStrategy.admissionChecks[1].name"
    ) == ("spec.admissionChecksStrategy.admissionChecks[1].name")


# --- cross-version and errors ---------------------------------------------------------------------


def test_legacy_to_v1beta1_goes_through_the_hub() -> None:
    team_a = seed("ClusterQueue", "team-a-cq", "v1alpha1")
    old = convert(team_a, "v1beta1")
    assert old["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert old["spec"]["cohort"] == "team-ab"
    assert convert(old, "v1alpha1") == {
        **team_a,
        "spec": {
            **team_a["spec"],
            "resources": [
                {"name": "cpu", "flavors": [{"name": "default", "quota": {"min": "9"}}]},
                {"name": "memory", "flavors": [{"name": "default", "quota": {"min": "36Gi"}}]},
            ],
        },
    }
    assert convert(convert(team_a, "v1alpha2"), "v1beta2") == to_hub(team_a)


def test_conversion_never_mutates_its_input() -> None:
    legacy = load(LEGACY_WORKLOAD)
    snapshot = copy.deepcopy(legacy)
    hub = to_hub(legacy)
    hub_snapshot = copy.deepcopy(hub)
    from_hub(hub, "v1alpha1")
    assert legacy == snapshot and hub == hub_snapshot


@pytest.mark.parametrize(
    ("obj", "version", "field"),
    [
        ({"apiVersion": "batch/v1", "kind": "Job"}, "v1beta2", "apiVersion"),
        (
            {"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "Cohort", "metadata": {"name": "c"}},
            "v1beta2",
            "kind",
        ),
        (
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "c"}},
            "v1alpha1",
            "kind",
        ),
        ({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue"}, "v2", "version"),
        (
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "spec": {"resources": []},
            },
            "v1alpha1",
            "spec.resources",
        ),
        (
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "spec": {
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [
                                {"name": "a", "resources": [{"name": "cpu", "nominalQuota": "ten"}]}
                            ],
                        }
                    ]
                },
            },
            "v1alpha1",
            "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
        ),
    ],
)
def test_inconvertible_input_raises_with_a_field_path(
    obj: dict[str, Any], version: str, field: str
) -> None:
    with pytest.raises(ConversionError) as caught:
        convert(obj, version)
    assert caught.value.field == field
    assert isinstance(caught.value, ValueError)


def test_same_shape_kinds_only_change_api_version() -> None:
    for document in documents():
        if document.kind in (
            "ResourceFlavor",
            "WorkloadPriorityClass",
        ) and document.api_version.endswith("v1beta2"):
            old = from_hub(document.raw, "v1beta1")
            assert old == {**document.raw, "apiVersion": "kueue.x-k8s.io/v1beta1"}
            assert to_hub(old) == document.raw
