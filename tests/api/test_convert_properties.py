"""Round-trip properties of the converters (docs/api-differences.md#conversion-annotations).

* For generated valid legacy (v1alpha1, v1alpha2) and v1beta1 objects of each
  kind: ``from_hub(to_hub(x), v) == x`` exactly (quantities are generated in
  canonical form, as the legacy converter writes them).
* For generated valid v1beta2 objects: ``to_hub(from_hub(y, v))`` equals ``y``
  once values equal to v1beta2 defaults are dropped and quantities compared
  numerically (what defaulting re-creates and what "quantity spelling" means).
* For generated valid v1beta2 objects: converting down, changing one field the
  older version can express, and converting up gives the change and keeps what
  the older version cannot express (what ``kubectl apply`` of an older
  manifest does).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scheduler.api.convert import from_hub, to_hub
from scheduler.api.convert.clusterqueue import is_default_hub_field, is_default_preemption
from scheduler.api.quantity import Quantity

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

RESOURCE_NAMES = [
    "cpu",
    "memory",
    "nvidia.com/gpu",
    "pods",
    "cpu_credits",
    "example.com/foo",
    "ephemeral-storage",
]
FLAVOR_NAMES = [
    "spot",
    "on-demand",
    "default",
    "a100",
    "t4",
    "vendor1",
    "vendor2",
    "arm",
    "x86",
    "credits",
]
DNS = st.sampled_from(["team-a", "team-b", "cq", "research-pool", "c.example.com", "q1"])
TIMESTAMP = st.sampled_from(["2024-01-01T00:00:00Z", "2025-03-07T21:19:54Z"])


@st.composite
def quantity_pair(draw: st.DrawFn) -> tuple[str, str]:
    """A canonical quantity and a canonical larger-or-equal one of the same suffix family."""
    binary = draw(st.booleans())
    if binary:
        unit = draw(st.sampled_from(["", "Ki", "Mi", "Gi"]))
        low = draw(st.integers(0, 4096))
        extra = draw(st.integers(0, 4096))
    else:
        unit = draw(st.sampled_from(["", "m", "k", "M"]))
        low = draw(st.integers(0, 5000))
        extra = draw(st.integers(0, 5000))
    minimum = Quantity.parse(f"{low}{unit}")
    maximum = Quantity.parse(f"{low + extra}{unit}")
    return str(minimum), str(minimum + (maximum - minimum))


def canonical(text: str) -> str:
    return str(Quantity.parse(text))


QUANTITY = st.builds(
    lambda n, unit: canonical(f"{n}{unit}"),
    st.integers(0, 100000),
    st.sampled_from(["", "m", "k", "Mi", "Gi"]),
)


# --- legacy ClusterQueue --------------------------------------------------------------------------


@st.composite
def legacy_cluster_queue(draw: st.DrawFn, version: str) -> dict[str, Any]:
    resources = draw(st.lists(st.sampled_from(RESOURCE_NAMES), min_size=0, max_size=6, unique=True))
    flavors_pool = draw(st.permutations(FLAVOR_NAMES))
    class_count = draw(st.integers(1, max(1, len(resources))))
    classes = [draw(st.integers(0, class_count - 1)) for _ in resources]
    class_flavors: list[list[str]] = []
    cursor = 0
    for position in range(class_count):
        room = len(flavors_pool) - cursor - (class_count - position - 1)
        size = draw(st.integers(1, min(3, room)))
        class_flavors.append(list(flavors_pool[cursor : cursor + size]))
        cursor += size
    cohort = draw(st.one_of(st.none(), DNS))
    entries: list[dict[str, Any]] = []
    for name, cls in zip(resources, classes, strict=True):
        flavors = []
        for flavor in class_flavors[cls]:
            minimum, maximum = draw(quantity_pair())
            quota: dict[str, Any] = {"min": minimum}
            if draw(st.booleans()):
                quota["max"] = maximum
            flavors.append({"name": flavor, "quota": quota})
        entries.append({"name": name, "flavors": flavors})
    spec: dict[str, Any] = {"resources": entries}
    if cohort:
        spec["cohort"] = cohort
    if draw(st.booleans()):
        spec["namespaceSelector"] = draw(st.sampled_from([{}, {"matchLabels": {"team": "a"}}]))
    if draw(st.booleans()):
        spec["queueingStrategy"] = draw(st.sampled_from(["StrictFIFO", "BestEffortFIFO"]))
    if version == "v1alpha2" and draw(st.booleans()):
        spec["preemption"] = {
            "reclaimWithinCohort": draw(st.sampled_from(["Never", "Any", "LowerPriority"]))
        }
    obj: dict[str, Any] = {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": spec,
    }
    if draw(st.booleans()) and entries:
        used: dict[str, Any] = {}
        for entry in entries:
            amounts: dict[str, str] = {"total": draw(QUANTITY)}
            if draw(st.booleans()):
                amounts["borrowing"] = draw(QUANTITY)
            used[entry["name"]] = {entry["flavors"][0]["name"]: amounts}
        obj["status"] = {
            "usedResources": used,
            "pendingWorkloads": draw(st.integers(0, 9)),
            "admittedWorkloads": 2,
        }
    return obj


# --- legacy ResourceFlavor, LocalQueue, Workload --------------------------------------------------

LABELS = st.dictionaries(
    st.sampled_from(["instance-type", "pool", "example.com/zone", "arch"]),
    st.sampled_from(["spot", "a", "x86", ""]),
    min_size=1,
    max_size=4,
)
TAINTS = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(["spot", "gpu", "example.com/t"]),
            "effect": st.sampled_from(["NoSchedule", "NoExecute"]),
        },
        optional={"value": st.sampled_from(["true", "x"])},
    ),
    max_size=3,
    unique_by=lambda t: (t["key"], t["effect"]),
)


@st.composite
def legacy_resource_flavor(draw: st.DrawFn, version: str) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "ResourceFlavor",
        "metadata": {"name": "f"},
    }
    if draw(st.booleans()):
        obj["metadata"]["labels"] = draw(LABELS)
    if version == "v1alpha1" and draw(st.booleans()):
        obj["labels"] = draw(st.one_of(LABELS, st.just({})))
    if version == "v1alpha2" and draw(st.booleans()):
        obj["nodeSelector"] = draw(st.one_of(LABELS, st.just({})))
    if draw(st.booleans()):
        obj["taints"] = draw(TAINTS)
    return obj


@st.composite
def legacy_local_queue(draw: st.DrawFn, version: str) -> dict[str, Any]:
    kind = draw(st.sampled_from(["LocalQueue", "Queue"])) if version == "v1alpha1" else "LocalQueue"
    obj: dict[str, Any] = {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": kind,
        "metadata": {"name": "lq", "namespace": "ns"},
        "spec": {"clusterQueue": draw(DNS)},
    }
    if draw(st.booleans()):
        obj["status"] = {"pendingWorkloads": draw(st.integers(0, 50))}
    return obj


@st.composite
def pod_spec(draw: st.DrawFn) -> dict[str, Any]:
    containers = []
    for index in range(draw(st.integers(1, 2))):
        resources: dict[str, Any] = {}
        if draw(st.booleans()):
            resources["requests"] = draw(
                st.dictionaries(
                    st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), QUANTITY, max_size=2
                )
            )
        if draw(st.booleans()):
            resources["limits"] = draw(
                st.dictionaries(st.sampled_from(["cpu", "memory"]), QUANTITY, max_size=2)
            )
        containers.append({"name": f"c{index}", "image": "busybox", "resources": resources})
    return {"containers": containers}


@st.composite
def legacy_workload(draw: st.DrawFn, version: str) -> dict[str, Any]:
    names = draw(
        st.lists(
            st.sampled_from(["main", "driver", "workers"]), min_size=1, max_size=3, unique=True
        )
    )
    pod_sets = [
        {"name": name, "count": draw(st.integers(1, 8)), "spec": draw(pod_spec())} for name in names
    ]
    spec: dict[str, Any] = {"podSets": pod_sets}
    if draw(st.booleans()):
        spec["queueName"] = draw(DNS)
    if draw(st.booleans()):
        spec["priorityClassName"] = draw(st.sampled_from(["high", "low"]))
        spec["priority"] = draw(st.integers(-100, 1000))
    obj: dict[str, Any] = {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": spec,
    }
    if draw(st.booleans()):
        obj["metadata"]["creationTimestamp"] = draw(TIMESTAMP)
    admitted = draw(st.booleans())
    if admitted:
        spec["admission"] = {
            "clusterQueue": draw(DNS),
            "podSetFlavors": [
                {"name": name, "flavors": {"cpu": draw(st.sampled_from(FLAVOR_NAMES))}}
                for name in names
            ],
        }
    conditions = []
    if admitted and draw(st.booleans()):
        conditions.append(
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "by cq",
                "lastTransitionTime": draw(TIMESTAMP),
            }
        )
    if draw(st.booleans()):
        conditions.append(
            {
                "type": "Finished",
                "status": "True",
                "reason": "Succeeded",
                "message": "done",
                "lastTransitionTime": draw(TIMESTAMP),
            }
        )
    if conditions:
        obj["status"] = {"conditions": conditions}
    return obj


LEGACY_BUILDERS = {
    "ClusterQueue": legacy_cluster_queue,
    "ResourceFlavor": legacy_resource_flavor,
    "LocalQueue": legacy_local_queue,
    "Workload": legacy_workload,
}


def _legacy(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from(["v1alpha1", "v1alpha2"]).flatmap(LEGACY_BUILDERS[kind])


@SETTINGS
@given(_legacy("ClusterQueue"))
def test_legacy_cluster_queue_round_trips_exactly(obj: dict[str, Any]) -> None:
    version = obj["apiVersion"].split("/")[1]
    assert from_hub(to_hub(obj), version) == obj


@SETTINGS
@given(_legacy("ResourceFlavor"))
def test_legacy_resource_flavor_round_trips_exactly(obj: dict[str, Any]) -> None:
    version = obj["apiVersion"].split("/")[1]
    assert from_hub(to_hub(obj), version) == obj


@SETTINGS
@given(_legacy("LocalQueue"))
def test_legacy_local_queue_round_trips_exactly(obj: dict[str, Any]) -> None:
    version = obj["apiVersion"].split("/")[1]
    assert from_hub(to_hub(obj), version) == obj


@SETTINGS
@given(_legacy("Workload"))
def test_legacy_workload_round_trips_exactly(obj: dict[str, Any]) -> None:
    version = obj["apiVersion"].split("/")[1]
    hub = to_hub(obj)
    if "admission" in obj["spec"]:
        assert {c["type"]: c["status"] for c in hub["status"]["conditions"]}[
            "QuotaReserved"
        ] == "True"
    assert from_hub(hub, version) == obj


# --- v1beta1 --------------------------------------------------------------------------------------


@st.composite
def v1beta1_object(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(
            [
                "ClusterQueue",
                "LocalQueue",
                "Workload",
                "AdmissionCheck",
                "MultiKueueCluster",
                "MultiKueueConfig",
                "Cohort",
                "ResourceFlavor",
            ]
        )
    )
    obj: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": kind,
        "metadata": {"name": "x"},
    }
    spec: dict[str, Any] = {}
    if kind == "ClusterQueue":
        if draw(st.booleans()):
            spec["cohort"] = draw(DNS)
        form = draw(st.sampled_from(["none", "list", "strategy", "empty"]))
        if form == "list":
            spec["admissionChecks"] = draw(
                st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, unique=True)
            )
        elif form == "strategy":
            spec["admissionChecksStrategy"] = {
                "admissionChecks": [{"name": "a", "onFlavors": ["spot"]}]
                if draw(st.booleans())
                else [{"name": "b"}]
            }
        elif form == "empty":
            spec["admissionChecks"] = []
        if draw(st.booleans()):
            spec["flavorFungibility"] = {
                "whenCanBorrow": draw(
                    st.sampled_from(["Borrow", "MayStopSearch", "TryNextFlavor"])
                ),
                "whenCanPreempt": draw(
                    st.sampled_from(["Preempt", "MayStopSearch", "TryNextFlavor"])
                ),
            }
        spec["resourceGroups"] = [
            {
                "coveredResources": ["cpu"],
                "flavors": [
                    {
                        "name": "spot",
                        "resources": [
                            {
                                "name": "cpu",
                                "nominalQuota": draw(st.sampled_from([9, "500m", "1k"])),
                            }
                        ],
                    }
                ],
            }
        ]
    elif kind == "LocalQueue":
        spec["clusterQueue"] = draw(DNS)
        if draw(st.booleans()):
            obj["status"] = {
                "flavorUsage": [{"name": "spot", "resources": [{"name": "cpu", "total": "1"}]}],
                "pendingWorkloads": 1,
            }
    elif kind == "Workload":
        spec["podSets"] = [
            {"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}
        ]
        choice = draw(
            st.sampled_from(["none", "wpc", "pc", "name-only", "empty-source", "name-empty-source"])
        )
        if choice == "wpc":
            spec.update(
                priorityClassName="gold",
                priorityClassSource="kueue.x-k8s.io/workloadpriorityclass",
                priority=3,
            )
        elif choice == "pc":
            spec.update(
                priorityClassName="high",
                priorityClassSource="scheduling.k8s.io/priorityclass",
                priority=3,
            )
        elif choice == "name-only":
            spec.update(priorityClassName="high")
        elif choice == "empty-source":
            spec.update(priorityClassSource="")
        elif choice == "name-empty-source":
            spec.update(priorityClassName="high", priorityClassSource="")
        if draw(st.booleans()):
            levels = draw(st.integers(1, 3))
            domains = draw(
                st.lists(
                    st.builds(
                        lambda values, count: {"values": values, "count": count},
                        st.lists(
                            st.sampled_from(
                                ["b1", "b2", "rack-1", "rack-12", "node-a-x", "node-b-x"]
                            ),
                            min_size=levels,
                            max_size=levels,
                        ),
                        st.integers(1, 5),
                    ),
                    max_size=4,
                )
            )
            obj["status"] = {
                "accumulatedPastExexcutionTimeSeconds": draw(st.integers(0, 100)),
                "admission": {
                    "clusterQueue": "cq",
                    "podSetAssignments": [
                        {
                            "name": "main",
                            "count": 1,
                            "topologyAssignment": {
                                "levels": [f"l{i}" for i in range(levels)],
                                "domains": domains,
                            },
                        }
                    ],
                },
            }
    elif kind == "AdmissionCheck":
        spec["controllerName"] = "kueue.x-k8s.io/provisioning-request"
        if draw(st.booleans()):
            spec["retryDelayMinutes"] = draw(st.integers(0, 60))
    elif kind == "MultiKueueCluster":
        if draw(st.booleans()):
            spec["kubeConfig"] = {"location": "secret", "locationType": "Secret"}
        else:
            spec["clusterProfileRef"] = {"name": "profile"}
    elif kind == "MultiKueueConfig":
        spec["clusters"] = ["a", "b"]
    elif kind == "Cohort":
        if draw(st.booleans()):
            spec["parentName"] = draw(DNS)
    else:
        if draw(st.booleans()):
            spec["nodeLabels"] = draw(LABELS)
    obj["spec"] = spec
    return obj


@SETTINGS
@given(v1beta1_object())
def test_v1beta1_objects_round_trip_exactly(obj: dict[str, Any]) -> None:
    assert from_hub(to_hub(obj, check=False), "v1beta1") == obj


# --- v1beta2 → old → v1beta2 ----------------------------------------------------------------------


@st.composite
def hub_cluster_queue(draw: st.DrawFn) -> dict[str, Any]:
    resources = draw(st.lists(st.sampled_from(RESOURCE_NAMES), min_size=1, max_size=6, unique=True))
    flavors_pool = list(draw(st.permutations(FLAVOR_NAMES)))
    cohort = draw(st.one_of(st.none(), DNS))
    groups = []
    cursor = 0
    remaining = list(resources)
    while remaining:
        take = draw(st.integers(1, len(remaining)))
        covered, remaining = remaining[:take], remaining[take:]
        size = draw(st.integers(1, min(3, len(flavors_pool) - cursor - len(remaining))))
        flavors = []
        for flavor in flavors_pool[cursor : cursor + size]:
            quotas = []
            for resource in covered:
                nominal = draw(QUANTITY)
                quota: dict[str, Any] = {
                    "name": resource,
                    "nominalQuota": draw(st.sampled_from([nominal, 7])),
                }
                if cohort and draw(st.booleans()):
                    quota["borrowingLimit"] = draw(QUANTITY)
                if cohort and draw(st.booleans()):
                    quota["lendingLimit"] = draw(st.sampled_from(["0", quota["nominalQuota"]]))
                quotas.append(quota)
            flavors.append({"name": flavor, "resources": quotas})
        cursor += size
        groups.append({"coveredResources": covered, "flavors": flavors})
    spec: dict[str, Any] = {"resourceGroups": groups, "namespaceSelector": {}}
    if cohort:
        spec["cohortName"] = cohort
    optional = {
        "queueingStrategy": st.sampled_from(["StrictFIFO", "BestEffortFIFO"]),
        "stopPolicy": st.sampled_from(["None", "Hold", "HoldAndDrain"]),
        "preemption": st.fixed_dictionaries(
            {},
            optional={
                "withinClusterQueue": st.sampled_from(["Never", "LowerPriority"]),
                "reclaimWithinCohort": st.sampled_from(["Never", "Any"]),
                "borrowWithinCohort": st.just({"policy": "Never"}),
            },
        ),
        "flavorFungibility": st.fixed_dictionaries(
            {}, optional={"whenCanBorrow": st.sampled_from(["MayStopSearch", "TryNextFlavor"])}
        ),
        "fairSharing": st.fixed_dictionaries(
            {}, optional={"weight": st.sampled_from(["0", "2", "500m"])}
        ),
        "admissionChecksStrategy": st.just(
            {"admissionChecks": [{"name": "prov", "onFlavors": [flavors_pool[0]]}]}
        ),
        "admissionScope": st.just({"admissionMode": "UsageBasedAdmissionFairSharing"}),
    }
    for name, strategy in optional.items():
        if draw(st.booleans()):
            spec[name] = draw(strategy)
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": spec,
    }


def comparable_cluster_queue(cq: dict[str, Any]) -> dict[str, Any]:
    """Drop values equal to v1beta2 defaults and compare quantities by value."""
    result = copy.deepcopy(cq)
    spec = result["spec"]
    for name in list(spec):
        if is_default_hub_field(name, spec[name]) and name not in (
            "resourceGroups",
            "cohortName",
            "namespaceSelector",
            "queueingStrategy",
        ):
            del spec[name]
    for group in spec.get("resourceGroups", []):
        for flavor in group["flavors"]:
            for quota in flavor["resources"]:
                for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                    if key in quota:
                        quota[key] = Quantity.parse(quota[key])
    return result


@SETTINGS
@given(hub_cluster_queue(), st.sampled_from(["v1alpha1", "v1alpha2", "v1beta1"]))
def test_hub_cluster_queue_survives_every_older_version(cq: dict[str, Any], version: str) -> None:
    back = to_hub(from_hub(cq, version))
    assert comparable_cluster_queue(back) == comparable_cluster_queue(cq)
    if version == "v1beta1":
        assert back == cq


@st.composite
def hub_resource_flavor(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["nodeLabels"] = draw(LABELS)
    if draw(st.booleans()):
        spec["nodeTaints"] = draw(TAINTS)
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]
    if draw(st.booleans()):
        spec["topologyName"] = "default"
    metadata: dict[str, Any] = {"name": "f"}
    if draw(st.booleans()):
        metadata["labels"] = draw(st.one_of(LABELS, st.just(spec.get("nodeLabels") or {"a": "b"})))
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": metadata,
        "spec": spec,
    }


@SETTINGS
@given(hub_resource_flavor(), st.sampled_from(["v1alpha1", "v1alpha2", "v1beta1"]))
def test_hub_resource_flavor_survives_every_older_version(
    flavor: dict[str, Any], version: str
) -> None:
    assert to_hub(from_hub(flavor, version)) == flavor


@st.composite
def hub_local_queue(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"clusterQueue": draw(DNS)}
    if draw(st.booleans()):
        spec["stopPolicy"] = draw(st.sampled_from(["Hold", "HoldAndDrain"]))
    if draw(st.booleans()):
        spec["fairSharing"] = {"weight": draw(st.sampled_from(["1", "2"]))}
    obj = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ns"},
        "spec": spec,
    }
    if draw(st.booleans()):
        obj["status"] = {"pendingWorkloads": draw(st.integers(0, 5))}
    return obj


@SETTINGS
@given(hub_local_queue(), st.sampled_from(["v1alpha1", "v1alpha2", "v1beta1"]))
def test_hub_local_queue_survives_every_older_version(queue: dict[str, Any], version: str) -> None:
    assert to_hub(from_hub(queue, version)) == queue


@st.composite
def hub_workload(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(
        st.lists(
            st.sampled_from(["main", "driver", "workers"]), min_size=1, max_size=3, unique=True
        )
    )
    pod_sets = []
    for name in names:
        pod_set: dict[str, Any] = {
            "name": name,
            "count": draw(st.integers(0, 6)),
            "template": {"spec": draw(pod_spec())},
        }
        if draw(st.booleans()):
            pod_set["template"]["metadata"] = {"labels": {"app": "x"}}
        if draw(st.booleans()) and pod_set["count"] > 0:
            pod_set["minCount"] = 1
        pod_sets.append(pod_set)
    spec: dict[str, Any] = {"podSets": pod_sets}
    if draw(st.booleans()):
        spec["queueName"] = draw(DNS)
    ref = draw(st.sampled_from(["none", "pc", "wpc"]))
    if ref != "none":
        group, kind = (
            ("scheduling.k8s.io", "PriorityClass")
            if ref == "pc"
            else ("kueue.x-k8s.io", "WorkloadPriorityClass")
        )
        spec["priorityClassRef"] = {"group": group, "kind": kind, "name": "gold"}
        spec["priority"] = draw(st.integers(0, 100))
    if draw(st.booleans()):
        spec["active"] = False
    if draw(st.booleans()):
        spec["maximumExecutionTimeSeconds"] = draw(st.integers(1, 3600))
    status: dict[str, Any] = {}
    conditions = []
    reserved = draw(st.booleans())
    if reserved:
        assignments = []
        for pod_set in pod_sets:
            assignment: dict[str, Any] = {
                "name": pod_set["name"],
                "flavors": {"cpu": "spot"},
                "count": pod_set["count"],
            }
            if draw(st.booleans()):
                assignment["resourceUsage"] = {"cpu": draw(QUANTITY)}
            assignments.append(assignment)
        status["admission"] = {"clusterQueue": draw(DNS), "podSetAssignments": assignments}
        conditions.append(
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "r",
                "lastTransitionTime": draw(TIMESTAMP),
            }
        )
        if draw(st.booleans()):
            conditions.append(
                {
                    "type": "Admitted",
                    "status": draw(st.sampled_from(["True", "False"])),
                    "reason": "Admitted",
                    "message": "a",
                    "lastTransitionTime": draw(TIMESTAMP),
                }
            )
    elif draw(st.booleans()):
        conditions.append(
            {
                "type": "QuotaReserved",
                "status": "False",
                "reason": "Pending",
                "message": "p",
                "lastTransitionTime": draw(TIMESTAMP),
            }
        )
    if draw(st.booleans()):
        conditions.append(
            {
                "type": "Finished",
                "status": "True",
                "reason": "Succeeded",
                "message": "f",
                "lastTransitionTime": draw(TIMESTAMP),
            }
        )
    if draw(st.booleans()):
        conditions.append(
            {
                "type": "PodsReady",
                "status": "True",
                "reason": "Started",
                "message": "s",
                "lastTransitionTime": draw(TIMESTAMP),
            }
        )
    conditions = draw(st.permutations(conditions))
    if conditions:
        status["conditions"] = list(conditions)
    if draw(st.booleans()):
        status["requeueState"] = {"count": 1}
    obj: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": spec,
    }
    if status:
        obj["status"] = status
    return obj


@SETTINGS
@given(hub_workload(), st.sampled_from(["v1alpha1", "v1alpha2", "v1beta1"]))
def test_hub_workload_survives_every_older_version(workload: dict[str, Any], version: str) -> None:
    # A v1beta2 pod set may have count 0, which the legacy rules (count > 0) reject:
    # reading back a down-converted object is a conversion, not an admission, so skip the check.
    assert to_hub(from_hub(workload, version), check=False) == workload


# --- v1beta2 → old, a field changed there, → v1beta2: the change wins -----------------------------
#
# What ``kubectl apply`` of an older-version manifest does to a stored object: the
# manifest changes one field the older version can express, and everything else the
# down-conversion wrote (annotations included) comes back as it was.  The change must
# be in the result, and nothing the older version cannot express may be lost.


def changed_up(lower: dict[str, Any]) -> dict[str, Any]:
    """The conversion the API server runs on the patched object (unchecked)."""
    return to_hub(lower, check=False)


@SETTINGS
@given(
    hub_resource_flavor(),
    st.sampled_from(["v1alpha1", "v1alpha2", "v1beta1"]),
    st.sampled_from(["labels", "nodeSelector", "taints"]),
    st.one_of(LABELS, st.just({})),
    TAINTS,
)
def test_a_resource_flavor_field_changed_in_an_older_version_wins(
    flavor: dict[str, Any],
    version: str,
    field: str,
    labels: dict[str, str],
    taints: list[dict[str, str]],
) -> None:
    lower = from_hub(flavor, version)
    expected = copy.deepcopy(flavor)
    if field == "taints":
        assume(taints != flavor["spec"].get("nodeTaints"))
        if version == "v1beta1":
            lower["spec"]["nodeTaints"] = taints
        else:
            lower["taints"] = taints
        expected["spec"]["nodeTaints"] = taints
    elif version == "v1beta1":
        assume(labels != flavor["spec"].get("nodeLabels"))
        lower["spec"]["nodeLabels"] = labels
        expected["spec"]["nodeLabels"] = labels
    elif version == "v1alpha1":
        assume(labels != flavor["spec"].get("nodeLabels"))
        lower["labels"] = labels
        expected["spec"]["nodeLabels"] = labels
    elif field == "labels":  # v1alpha2: metadata.labels are the node labels
        assume(labels != (lower["metadata"].get("labels") or {}))
        lower["metadata"]["labels"] = labels
        expected["metadata"]["labels"] = labels
        expected["spec"].pop("nodeLabels", None)
        if labels:
            expected["spec"]["nodeLabels"] = labels
        if not labels:
            del expected["metadata"]["labels"]
            del lower["metadata"]["labels"]
    else:  # v1alpha2: an explicit nodeSelector wins over metadata.labels
        assume(labels != lower.get("nodeSelector"))
        lower["nodeSelector"] = labels
        expected["spec"].pop("nodeLabels", None)
        if labels:
            expected["spec"]["nodeLabels"] = labels
    back = changed_up(lower)
    assert back["spec"] == expected["spec"]
    assert back["metadata"].get("labels") == expected["metadata"].get("labels")


LEGACY_PREEMPTION = st.fixed_dictionaries(
    {},
    optional={
        "withinClusterQueue": st.sampled_from(["Never", "LowerPriority"]),
        "reclaimWithinCohort": st.sampled_from(["Never", "LowerPriority", "Any"]),
    },
)


@SETTINGS
@given(
    hub_cluster_queue(),
    st.sampled_from(["v1alpha1", "v1alpha2", "v1beta1"]),
    st.sampled_from(["queueingStrategy", "cohort", "namespaceSelector"]),
    DNS,
)
def test_a_cluster_queue_field_changed_in_an_older_version_wins(
    cq: dict[str, Any], version: str, field: str, name: str
) -> None:
    lower = from_hub(cq, version)
    expected = copy.deepcopy(cq)
    spec, expected_spec = lower["spec"], expected["spec"]
    if field == "queueingStrategy":
        current = spec.get("queueingStrategy")
        strategy = "BestEffortFIFO" if current == "StrictFIFO" else "StrictFIFO"
        spec["queueingStrategy"] = strategy
        expected_spec["queueingStrategy"] = strategy
    elif field == "cohort":
        # A cohort replaced by another: the borrowing and lending limits stay valid.
        assume("cohortName" in cq["spec"] and name != cq["spec"]["cohortName"])
        spec["cohort"] = name
        expected_spec["cohortName"] = name
    else:
        spec["namespaceSelector"] = {"matchLabels": {"team": name}}
        expected_spec["namespaceSelector"] = {"matchLabels": {"team": name}}
    back = changed_up(lower)
    # (The metadata may gain what only the older version said, e.g. where preemption was.)
    assert meaningful_spec(back) == meaningful_spec(expected)


@SETTINGS
@given(hub_cluster_queue(), LEGACY_PREEMPTION)
def test_a_preemption_changed_in_late_v1alpha2_wins(
    cq: dict[str, Any], preemption: dict[str, str]
) -> None:
    lower = from_hub(cq, "v1alpha2")
    assume(preemption != lower["spec"].get("preemption"))
    lower["spec"]["preemption"] = preemption
    expected = copy.deepcopy(cq)
    kept = {  # what v1alpha2 cannot say
        key: value
        for key, value in (cq["spec"].get("preemption") or {}).items()
        if key not in ("withinClusterQueue", "reclaimWithinCohort")
    }
    expected["spec"]["preemption"] = {**kept, **preemption}
    assert meaningful_spec(changed_up(lower)) == meaningful_spec(expected)


def meaningful_spec(cq: dict[str, Any]) -> dict[str, Any]:
    """The comparable spec, without preemption keys equal to their defaults."""
    spec: dict[str, Any] = comparable_cluster_queue(cq)["spec"]
    if isinstance(spec.get("preemption"), dict):
        spec["preemption"] = {
            key: value
            for key, value in spec["preemption"].items()
            if not is_default_preemption({key: value})
        }
    return spec


@SETTINGS
@given(hub_cluster_queue(), st.sampled_from(["list", "strategy"]), DNS)
def test_v1beta1_admission_checks_changed_after_a_v1beta1_and_a_v1beta2_write_win(
    cq: dict[str, Any], form: str, check: str
) -> None:
    # The object was first written in v1beta1 with the list form, then in v1beta2.
    first = from_hub(cq, "v1beta1")
    first["spec"].pop("admissionChecksStrategy", None)
    first["spec"]["admissionChecks"] = ["first"]
    stored = to_hub(first, check=False)
    stored["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "second"}]}
    lower = from_hub(stored, "v1beta1")
    if form == "list":
        lower["spec"]["admissionChecks"] = [check]
    else:  # the patch sets the strategy and leaves whatever else the view showed
        lower["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": check}]}
    back = changed_up(lower)
    assert back["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": check}]}


@SETTINGS
@given(hub_local_queue(), st.sampled_from(["v1alpha1", "v1alpha2", "v1beta1"]), DNS)
def test_a_local_queue_field_changed_in_an_older_version_wins(
    queue: dict[str, Any], version: str, cluster_queue: str
) -> None:
    assume(cluster_queue != queue["spec"]["clusterQueue"])
    lower = from_hub(queue, version)
    lower["spec"]["clusterQueue"] = cluster_queue
    expected = copy.deepcopy(queue)
    expected["spec"]["clusterQueue"] = cluster_queue
    assert changed_up(lower) == expected


@SETTINGS
@given(
    hub_workload(),
    st.sampled_from(["v1alpha1", "v1alpha2", "v1beta1"]),
    st.sampled_from(["priorityClassName", "queueName"]),
    st.sampled_from(["", "other"]),
)
def test_a_workload_field_changed_in_an_older_version_wins(
    workload: dict[str, Any], version: str, field: str, value: str
) -> None:
    lower = from_hub(workload, version)
    expected = copy.deepcopy(workload)
    spec, expected_spec = lower["spec"], expected["spec"]
    if field == "queueName":
        assume(value and value != spec.get("queueName"))
        spec["queueName"] = value
        expected_spec["queueName"] = value
    elif version == "v1beta1":
        assume(value)
        spec["priorityClassName"] = value
        spec["priorityClassSource"] = "scheduling.k8s.io/priorityclass"
        expected_spec["priorityClassRef"] = {
            "group": "scheduling.k8s.io",
            "kind": "PriorityClass",
            "name": value,
        }
    else:  # legacy: the name always meant a PriorityClass; "" means none
        assume(value != spec.get("priorityClassName"))
        spec["priorityClassName"] = value
        expected_spec.pop("priorityClassRef", None)
        if value:
            expected_spec["priorityClassRef"] = {
                "group": "scheduling.k8s.io",
                "kind": "PriorityClass",
                "name": value,
            }
    back = changed_up(lower)
    assert back["spec"] == expected_spec
    assert back.get("status") == workload.get("status")
