"""Objects converted by kuota's converter fit the CRD schema of their version.

In a cluster the API server sends every read or write in a non-storage
version through kuota's conversion webhook and then *prunes* the answer with
the schema of the requested version: a field the converter emits but the
schema lacks disappears without an error.  So every seed manifest is
converted to every version its CRD serves, and the result must pass that
version's schema untouched.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.convert import ConversionError, convert_with_warnings
from scheduler.api.crds import load_crds
from tests.api.crd_helpers import value_problems
from tests.api.test_crds_seeds import SEED_MANIFESTS

SERVED: dict[str, dict[str, dict[str, Any]]] = {
    crd["spec"]["names"]["kind"]: {
        version["name"]: version["schema"]["openAPIV3Schema"] for version in crd["spec"]["versions"]
    }
    for crd in load_crds()
}

CASES = [
    pytest.param(param.values[0], target, id=f"{param.id}-to-{target}")
    for param in SEED_MANIFESTS
    for target in SERVED[param.values[0]["kind"]]
]


def lacks_a_covered_quota(manifest: dict[str, Any]) -> bool:
    """Pure: a ClusterQueue flavor that does not list every covered resource."""
    groups = manifest.get("spec", {}).get("resourceGroups", [])
    return any(
        len(flavor.get("resources", [])) != len(group.get("coveredResources", []))
        for group in groups
        for flavor in group.get("flavors", [])
    )


@pytest.mark.parametrize(("manifest", "target"), CASES)
def test_converted_seed_fits_the_schema_of_the_target_version(
    manifest: dict[str, Any], target: str
) -> None:
    try:
        converted = convert_with_warnings(manifest, target, check=False).object
    except ConversionError as exc:
        # One documentation example gives no memory quota for a covered
        # resource; it is invalid in every version and cannot be written in legacy form.
        if not lacks_a_covered_quota(manifest):
            pytest.fail(f"converter refused a valid seed manifest: {exc}")
        return
    assert converted["apiVersion"] == f"kueue.x-k8s.io/{target}"
    assert value_problems(converted, SERVED[manifest["kind"]][target]) == []


def test_a_full_v1beta2_workload_survives_every_served_version() -> None:
    workload = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "job-a", "namespace": "team-a"},
        "spec": {
            "queueName": "user-queue",
            "priority": 100,
            "priorityClassRef": {
                "group": "kueue.x-k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": "high",
            },
            "active": True,
            "maximumExecutionTimeSeconds": 3600,
            "podSets": [
                {
                    "name": "main",
                    "count": 2,
                    "minCount": 1,
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]
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
                        "resourceUsage": {"cpu": "2"},
                        "count": 2,
                    }
                ],
            },
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": "Quota reserved in ClusterQueue cq",
                    "lastTransitionTime": "2025-03-07T21:19:54Z",
                }
            ],
        },
    }
    assert value_problems(workload, SERVED["Workload"]["v1beta2"]) == []
    for target, schema in SERVED["Workload"].items():
        converted = convert_with_warnings(workload, target, check=False).object
        assert value_problems(converted, schema) == [], target


FULL_V1BETA2 = [
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "cohortName": "team",
            "queueingStrategy": "StrictFIFO",
            "namespaceSelector": {},
            "stopPolicy": "Hold",
            "fairSharing": {"weight": "2"},
            "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"},
            "flavorFungibility": {
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "PreemptionOverBorrowing",
            },
            "preemption": {
                "withinClusterQueue": "LowerPriority",
                "reclaimWithinCohort": "Any",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
            },
            "admissionChecksStrategy": {
                "admissionChecks": [{"name": "prov", "onFlavors": ["spot"]}]
            },
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "spot",
                            "resources": [
                                {
                                    "name": "cpu",
                                    "nominalQuota": 9,
                                    "borrowingLimit": "1",
                                    "lendingLimit": "500m",
                                },
                                {"name": "nvidia.com/gpu", "nominalQuota": "4", "lendingLimit": 0},
                            ],
                        }
                    ],
                }
            ],
        },
        "status": {
            "pendingWorkloads": 1,
            "admittedWorkloads": 2,
            "reservingWorkloads": 2,
            "flavorsUsage": [
                {"name": "spot", "resources": [{"name": "cpu", "total": "3", "borrowed": "0"}]}
            ],
        },
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "team-a"},
        "spec": {"clusterQueue": "cq", "stopPolicy": "HoldAndDrain", "fairSharing": {"weight": 0}},
        "status": {"pendingWorkloads": 3, "admittedWorkloads": 1},
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "spot"},
        "spec": {
            "nodeLabels": {"instance-type": "spot"},
            "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
            "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
            "topologyName": "default",
        },
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "MultiKueueCluster",
        "metadata": {"name": "worker"},
        "spec": {"clusterSource": {"clusterProfileRef": {"name": "worker-profile"}}},
    },
]


@pytest.mark.parametrize("manifest", FULL_V1BETA2, ids=lambda m: m["kind"])
def test_every_v1beta2_field_survives_a_trip_through_every_served_version(
    manifest: dict[str, Any],
) -> None:
    schemas = SERVED[manifest["kind"]]
    assert value_problems(manifest, schemas["v1beta2"]) == []
    for target, schema in schemas.items():
        converted = convert_with_warnings(manifest, target, check=False).object
        assert value_problems(converted, schema) == [], target
        back = convert_with_warnings(converted, "v1beta2", check=False).object
        assert value_problems(back, schemas["v1beta2"]) == [], target
