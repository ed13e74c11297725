"""Workload rules (docs/validation.md#workload): spec, status and update-only rules."""

from __future__ import annotations

import copy

import pytest

from scheduler.api.validation import validate_workload, validate_workload_status
from tests.api.cases import Bad, Good, bad, check_bad, check_good, find, good
from tests.builders import KUEUE, condition, container, pod_set, raw, workload

WHEN = "2025-01-01T00:00:00Z"  # every condition's time

GATED_BY = "kueue.x-k8s.io/admission-gated-by"
PS0 = "spec.podSets[0]"
WPC_REF = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
PC_REF = {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "high"}


def wl() -> workload:
    """The smallest Workload a user writes: queue ``lq``, one unnamed pod set asking 1 cpu."""
    return workload().as_written().queue("lq").pod_set(None, None, cpu="1")


def changed(obj: object, *path: object, value: object) -> dict:
    """A copy of ``obj`` (a builder or a raw dict) with the field at ``path`` set."""
    result = copy.deepcopy(raw(obj))
    target = result
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return result


RESERVED = (
    wl()
    .pod_sets(pod_set(None, 3, cpu="1"))
    .reserve_quota("cq", flavor="alpha", at=WHEN, message="")
)
ADMITTED = (
    wl()
    .pod_sets(pod_set(None, 3, cpu="1"))
    .spec(maximumExecutionTimeSeconds=60)
    .reserve_quota("cq", flavor="alpha", at=WHEN, message="")
    .admitted(at=WHEN)
)
WITH_RECLAIM = RESERVED.copy().status(reclaimablePods=[{"name": "main", "count": 2}])
CHECK = {
    "name": "prov",
    "state": "Ready",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
    "podSetUpdates": [{"name": "main", "labels": {"zone": "a"}}],
}
NOMINATED = wl().status(nominatedClusterNames=["w1", "w2"])

FAILING = [
    bad("WL-1", wl().pod_sets(), "spec.podSets", "must list at least 1 pod set"),
    bad(
        "WL-1",
        {"apiVersion": KUEUE, "kind": "Workload", "metadata": {"name": "w"}, "spec": {}},
        "spec.podSets",
        "at least 1 pod set",
    ),
    bad(
        "WL-2",
        wl().pod_sets(*(pod_set(f"p{n}", None, cpu="1") for n in range(19))),
        "spec.podSets",
        "has 19 items; at most 18",
    ),
    bad(
        "WL-3",
        wl().pod_sets(pod_set("Main", None, cpu="1")),
        f"{PS0}.name",
        '"Main" is not a valid pod set name',
    ),
    bad(
        "WL-4",
        wl().pod_sets(pod_set(None, None, cpu="1"), pod_set(None, None, cpu="1")),
        "spec.podSets[1].name",
        'duplicate pod set name "main"',
        "an unnamed pod set is called main",
    ),
    bad(
        "WL-5",
        wl().pod_sets({"name": "main"}),
        f"{PS0}.template",
        "required",
        "at least one container",
    ),
    bad(
        "WL-5",
        wl().pod_sets(pod_set(None, None).containers()),
        f"{PS0}.template.spec.containers",
        "at least one container",
    ),
    bad(
        "WL-6",
        wl().pod_sets(pod_set(None, -1, cpu="1")),
        f"{PS0}.count",
        "must be greater than or equal to 0",
    ),
    bad(
        "WL-7",
        wl().pod_sets(pod_set(None, 3, cpu="1").min_count(0)),
        f"{PS0}.minCount",
        "must be at least 1",
    ),
    bad(
        "WL-8",
        wl().pod_sets(pod_set(None, 3, cpu="1").min_count(5)),
        f"{PS0}.minCount",
        "must be less than or equal to count (3)",
    ),
    bad(
        "WL-9",
        wl().pod_sets(pod_set("a", 3, cpu="1").min_count(1), pod_set("b", 3, cpu="1").min_count(2)),
        "spec.podSets",
        "2 pod sets use minCount; at most one pod set may use partial admission",
    ),
    bad(
        "WL-10",
        wl()
        .pod_sets(pod_set(None, 3, cpu="1").min_count(1))
        .annotations({"kueue.x-k8s.io/elastic-job": "true"}),
        "spec.podSets",
        "partial admission (minCount) and elastic jobs cannot be combined",
    ),
    bad(
        "WL-11",
        wl().pod_sets(pod_set(None, None, pods=1)),
        f"{PS0}.template.spec.containers[0].resources.requests[pods]",
        'the resource name "pods" is reserved',
    ),
    bad(
        "WL-11",
        wl().pod_sets(
            pod_set(None, None, cpu="1").init_containers(container(limits={"pods": "1"}))
        ),
        f"{PS0}.template.spec.initContainers[0].resources.limits[pods]",
        '"pods" is reserved',
    ),
    bad(
        "WL-12",
        wl().pod_sets(pod_set(None, None, cpu="-1")),
        f"{PS0}.template.spec.containers[0].resources.requests[cpu]",
        "greater than or equal to 0, got -1",
    ),
    bad(
        "WL-13",
        wl().pod_sets(
            pod_set(None, None, cpu="1").template(
                {
                    "metadata": {"labels": {"bad key!": "x"}},
                    "spec": {"containers": [container()]},
                }
            )
        ),
        f"{PS0}.template.metadata.labels",
        'invalid label key "bad key!"',
    ),
    bad(
        "WL-13",
        wl().pod_sets(
            pod_set(None, None, cpu="1").template(
                {
                    "metadata": {"annotations": {"big": "x" * 262145}},
                    "spec": {"containers": [container()]},
                }
            )
        ),
        f"{PS0}.template.metadata.annotations",
        "annotations are larger than 262144 bytes",
    ),
    bad(
        "WL-14",
        wl().queue("Bad_Queue"),
        "spec.queueName",
        '"Bad_Queue" is not a valid LocalQueue name',
    ),
    bad(
        "WL-15",
        wl()
        .priority(1)
        .spec(priorityClassRef={"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass"}),
        "spec.priorityClassRef.name",
        "required",
    ),
    bad(
        "WL-15",
        wl().priority(1).spec(priorityClassRef={**WPC_REF, "group": "example.com"}),
        "spec.priorityClassRef.group",
        'unsupported value "example.com"',
    ),
    bad(
        "WL-16",
        wl().priority(1).spec(priorityClassRef={**WPC_REF, "group": "scheduling.k8s.io"}),
        "spec.priorityClassRef.kind",
        "kind WorkloadPriorityClass does not belong to group scheduling.k8s.io",
    ),
    bad(
        "WL-17",
        wl().spec(priorityClassRef=WPC_REF),
        "spec.priority",
        "required when priorityClassRef is set: copy the class's value here",
    ),
    bad(
        "WL-18",
        wl().spec(maximumExecutionTimeSeconds=0),
        "spec.maximumExecutionTimeSeconds",
        "must be at least 1 (omit it for no limit)",
    ),
    bad(
        "WL-19",
        wl().spec(preemptionGates=[{"name": f"g{n}"} for n in range(9)]),
        "spec.preemptionGates",
        "has 9 items",
    ),
    bad(
        "WL-19",
        wl().spec(preemptionGates=[{"name": ""}]),
        "spec.preemptionGates[0].name",
        "must be 1 to 63 characters",
    ),
    bad(
        "WL-19",
        wl().spec(preemptionGates=[{"name": "g"}, {"name": "g"}]),
        "spec.preemptionGates[1].name",
        'duplicate gate "g"',
    ),
    bad(
        "WL-20",
        wl().annotations({GATED_BY: "example.com/a,,example.com/b"}),
        f"metadata.annotations[{GATED_BY}]",
        "cannot contain empty gate names",
    ),
    bad(
        "WL-20",
        wl().annotations({GATED_BY: "example.com/a,example.com/a"}),
        f"metadata.annotations[{GATED_BY}]",
        "duplicate gate name: example.com/a",
    ),
    bad(
        "WL-20",
        wl().annotations({GATED_BY: "provisioner"}),
        f"metadata.annotations[{GATED_BY}]",
        '"provisioner" must look like example.com/name',
    ),
    bad(
        "WL-20",
        wl().annotations({GATED_BY: "example.com/" + "x" * 60}),
        f"metadata.annotations[{GATED_BY}]",
        "is longer than 63 characters",
    ),
    bad(
        "WL-21",
        wl().annotations({"kueue.x-k8s.io/priority-boost": ""}),
        "metadata.annotations[kueue.x-k8s.io/priority-boost]",
        "must be a signed integer such as 10 or -5",
        gates={"PriorityBoost": True},
    ),
    # status rules
    bad(
        "WL-30",
        wl().status(conditions=[condition("QuotaReserved", at=WHEN)]),
        "status.admission",
        "required while the QuotaReserved condition is True",
    ),
    bad(
        "WL-31",
        wl().reserve_quota(
            "cq", {"name": "main", "count": 1}, {"name": "extra", "count": 1}, at=WHEN, message=""
        ),
        "status.admission.podSetAssignments",
        "has 2 assignments but spec.podSets has 1",
    ),
    bad(
        "WL-32",
        wl().reserve_quota("cq", {"name": "other", "count": 1}, at=WHEN, message=""),
        "status.admission.podSetAssignments[0].name",
        'no pod set named "other" in spec.podSets',
    ),
    bad(
        "WL-33",
        wl()
        .pod_sets(pod_set(None, 2, cpu="1"))
        .reserve_quota(
            "cq",
            {"name": "main", "count": 2, "resourceUsage": {"nvidia.com/gpu": "3"}},
            at=WHEN,
            message="",
        ),
        "status.admission.podSetAssignments[0].resourceUsage[nvidia.com/gpu]",
        "3 is not a multiple of count 2",
    ),
    bad(
        "WL-33",
        wl()
        .pod_sets(pod_set(None, 2, cpu="1"))
        .reserve_quota(
            "cq",
            {"name": "main", "count": 2, "resourceUsage": {"memory": "2.5"}},
            at=WHEN,
            message="",
        ),
        "status.admission.podSetAssignments[0].resourceUsage[memory]",
        "2.5 is not a multiple of count 2",
    ),
    bad(
        "WL-34",
        changed(RESERVED, "status", "admission", "clusterQueue", value="Bad_CQ"),
        "status.admission.clusterQueue",
        '"Bad_CQ" is not a valid ClusterQueue name',
    ),
    bad(
        "WL-34",
        wl().reserve_quota("cq", {"name": "main", "count": -1}, at=WHEN, message=""),
        "status.admission.podSetAssignments[0].count",
        "greater than or equal to 0",
    ),
    bad(
        "WL-34",
        wl().reserve_quota(
            "cq", {"name": "main", "count": 1, "flavors": {"cpu": "Bad_F"}}, at=WHEN, message=""
        ),
        "status.admission.podSetAssignments[0].flavors[cpu]",
        '"Bad_F" is not a valid flavor name',
    ),
    bad(
        "WL-34",
        wl().reserve_quota(
            "cq",
            {"name": "main", "count": 1, "delayedTopologyRequest": "Later"},
            at=WHEN,
            message="",
        ),
        "status.admission.podSetAssignments[0].delayedTopologyRequest",
        'unsupported value "Later"',
    ),
    bad(
        "WL-35",
        wl().status(conditions=[{"type": "Finished", "status": "True", "lastTransitionTime": "t"}]),
        "status.conditions[0].reason",
        "required",
    ),
    bad(
        "WL-35",
        wl().status(conditions=[condition("Finished", "Maybe", at=WHEN)]),
        "status.conditions[0].status",
        'unsupported value "Maybe"',
    ),
    bad(
        "WL-35",
        wl().status(conditions=[condition("Finished", reason="1bad", at=WHEN)]),
        "status.conditions[0].reason",
        "reason must start with a letter",
    ),
    bad(
        "WL-35",
        wl().status(conditions=[condition("Finished", at=WHEN), condition("Finished", at=WHEN)]),
        "status.conditions[1].type",
        'duplicate condition type "Finished"',
    ),
    bad(
        "WL-35",
        wl().status(conditions=[condition(f"Type{n}", "False", at=WHEN) for n in range(17)]),
        "status.conditions",
        "has 17 items; at most 16",
    ),
    bad(
        "WL-36",
        wl().status(reclaimablePods=[{"name": "ghost", "count": 1}]),
        "status.reclaimablePods[ghost].name",
        'no pod set named "ghost"',
    ),
    bad(
        "WL-37",
        wl()
        .pod_sets(pod_set(None, 2, cpu="1"))
        .status(reclaimablePods=[{"name": "main", "count": 5}]),
        "status.reclaimablePods[main].count",
        "must be less than or equal to 2",
    ),
    bad(
        "WL-38",
        wl().status(admissionChecks=[{"name": "prov", "state": "Done"}]),
        "status.admissionChecks[0].state",
        'unsupported value "Done": use one of Pending, Ready, Retry, Rejected',
    ),
    bad(
        "WL-38",
        wl().status(admissionChecks=[{"state": "Pending"}]),
        "status.admissionChecks[0].name",
        "required",
    ),
    bad(
        "WL-38",
        wl().status(admissionChecks=[{"name": "prov", "state": "Retry", "retryCount": -1}]),
        "status.admissionChecks[0].retryCount",
        "greater than or equal to 0",
    ),
    bad(
        "WL-38",
        wl().status(admissionChecks=[{"name": f"c{n}", "state": "Pending"} for n in range(9)]),
        "status.admissionChecks",
        "has 9 items",
    ),
    bad(
        "WL-39",
        wl().status(
            admissionChecks=[
                {"name": "prov", "state": "Ready", "podSetUpdates": [{"name": "ghost"}]}
            ]
        ),
        "status.admissionChecks[0].podSetUpdates[0].name",
        'no pod set named "ghost"',
    ),
    bad(
        "WL-39",
        wl().status(
            admissionChecks=[
                {
                    "name": "prov",
                    "state": "Ready",
                    "podSetUpdates": [{"name": "main", "nodeSelector": {"@x": "y"}}],
                }
            ]
        ),
        "status.admissionChecks[0].podSetUpdates[0].nodeSelector",
        'invalid label key "@x"',
    ),
    bad(
        "WL-39",
        wl().status(
            admissionChecks=[
                {
                    "name": "prov",
                    "state": "Ready",
                    "podSetUpdates": [
                        {
                            "name": "main",
                            "tolerations": [{"key": "a", "operator": "Exists", "value": "v"}],
                        }
                    ],
                }
            ]
        ),
        "status.admissionChecks[0].podSetUpdates[0].tolerations[0].value",
        "must be empty when operator is Exists",
    ),
    bad(
        "WL-40",
        wl().status(clusterName="w1", nominatedClusterNames=["w1"]),
        "status.clusterName",
        "clusterName and nominatedClusterNames cannot both be set",
    ),
    bad(
        "WL-41",
        wl().status(nominatedClusterNames=[f"w{n}" for n in range(21)]),
        "status.nominatedClusterNames",
        "has 21 items",
    ),
    bad(
        "WL-41",
        wl().status(clusterName="w" * 257),
        "status.clusterName",
        "must be at most 256 characters",
    ),
    # update-only rules
    bad(
        "WL-50",
        changed(
            RESERVED,
            "spec",
            "podSets",
            value=[pod_set(None, 3, cpu="1").build(), pod_set("extra", None, cpu="1").build()],
        ),
        "spec.podSets",
        "pod sets cannot change while the workload holds a quota reservation",
        old=RESERVED,
    ),
    bad(
        "WL-51",
        changed(RESERVED, "spec", "podSets", 0, "count", value=4),
        PS0,
        'pod set "main" cannot change while the workload holds a quota reservation',
        old=RESERVED,
    ),
    bad(
        "WL-52",
        changed(
            wl().queue("a").reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
            "spec",
            "queueName",
            value="b",
        ),
        "spec.queueName",
        'cannot change while the workload holds a quota reservation; it was "a"',
        old=wl().queue("a").reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
    ),
    bad(
        "WL-53",
        wl()
        .pod_sets(pod_set(None, 3, cpu="1"))
        .priority(1)
        .spec(priorityClassRef=WPC_REF)
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
        "spec.priorityClassRef",
        "cannot be added or removed while the workload holds a quota reservation",
        old=RESERVED,
    ),
    bad(
        "WL-54",
        wl()
        .priority(1)
        .spec(
            priorityClassRef={
                **PC_REF,
                "group": "kueue.x-k8s.io",
                "kind": "WorkloadPriorityClass",
            }
        )
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
        "spec.priorityClassRef.group",
        "cannot change while the workload holds a quota reservation",
        old=wl()
        .priority(1)
        .spec(priorityClassRef=PC_REF)
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
    ),
    bad(
        "WL-55",
        wl()
        .priority(1)
        .spec(priorityClassRef={**PC_REF, "name": "low"})
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
        "spec.priorityClassRef.name",
        "a PriorityClass reference cannot change while the workload holds a quota reservation",
        old=wl()
        .priority(1)
        .spec(priorityClassRef=PC_REF)
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
    ),
    bad(
        "WL-56",
        changed(ADMITTED, "spec", "maximumExecutionTimeSeconds", value=120),
        "spec.maximumExecutionTimeSeconds",
        "cannot change while the workload is admitted",
        old=ADMITTED,
    ),
    bad(
        "WL-57",
        changed(RESERVED, "status", "admission", "clusterQueue", value="other"),
        "status.admission",
        "cannot be modified once set; clear it (evict) and set it again instead",
        old=RESERVED,
    ),
    bad(
        "WL-58",
        changed(WITH_RECLAIM, "status", "reclaimablePods", value=[{"name": "main", "count": 1}]),
        "status.reclaimablePods[main].count",
        "cannot decrease below 2",
        old=WITH_RECLAIM,
    ),
    bad(
        "WL-58",
        changed(WITH_RECLAIM, "status", "reclaimablePods", value=[]),
        "status.reclaimablePods[main]",
        "cannot be removed while the workload holds a quota reservation",
        old=WITH_RECLAIM,
    ),
    bad(
        "WL-59",
        wl().status(
            admissionChecks=[
                {**CHECK, "podSetUpdates": [{"name": "main", "labels": {"zone": "b"}}]}
            ]
        ),
        "status.admissionChecks[0].podSetUpdates",
        "cannot change after the check became Ready",
        old=wl().status(admissionChecks=[CHECK]),
    ),
    bad(
        "WL-60",
        wl().status(clusterName="w2"),
        "status.clusterName",
        'is immutable once set; it was "w1"',
        old=wl().status(clusterName="w1"),
    ),
    bad(
        "WL-61",
        wl().status(clusterName="w3"),
        "status.clusterName",
        "must be one of the nominated clusters (w1, w2)",
        old=NOMINATED,
    ),
    bad(
        "WL-62",
        wl().annotations({GATED_BY: "example.com/a"}),
        f"metadata.annotations[{GATED_BY}]",
        "admission gates can only be set when the object is created",
        old=wl(),
    ),
    bad(
        "WL-62",
        wl().annotations({GATED_BY: "example.com/a,example.com/b"}),
        f"metadata.annotations[{GATED_BY}]",
        "gates can only be removed, not added",
        old=wl().annotations({GATED_BY: "example.com/a"}),
    ),
]

PASSING = [
    good("WL-1", wl()),
    good("WL-2", wl().pod_sets(*(pod_set(f"p{n}", None, cpu="1") for n in range(18)))),
    good(
        "WL-3", wl().pod_sets(pod_set("driver", None, cpu="1"), pod_set("workers", None, cpu="1"))
    ),
    good("WL-4", wl().pod_sets(pod_set(None, None, cpu="1")), note="V13 single unnamed"),
    good("WL-5", wl().pod_sets(pod_set(None, None).containers(container(), container("sidecar")))),
    good("WL-6", wl().pod_sets(pod_set(None, 0, cpu="1")), note="V13 count 0"),
    good("WL-7", wl().pod_sets(pod_set(None, 3, cpu="1").min_count(1))),
    good("WL-8", wl().pod_sets(pod_set(None, 3, cpu="1").min_count(3))),
    good("WL-9", wl().pod_sets(pod_set("a", 3, cpu="1").min_count(1), pod_set("b", 3, cpu="1"))),
    good("WL-10", wl().annotations({"kueue.x-k8s.io/elastic-job": "true"})),
    good(
        "WL-11",
        wl().pod_sets(pod_set(None, None, {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"})),
    ),
    good("WL-12", wl().pod_sets(pod_set(None, None, cpu=0))),
    good(
        "WL-13",
        wl().pod_sets(
            pod_set(None, None, cpu="1").template(
                {
                    "metadata": {
                        "labels": {"app": "x"},
                        "annotations": {"example.com/a": "anything goes"},
                    },
                    "spec": {"containers": [container()]},
                }
            )
        ),
    ),
    good("WL-14", wl().queue("user-queue")),
    good("WL-15", wl().priority(1000).spec(priorityClassRef=WPC_REF)),
    good("WL-16", wl().priority(1000).spec(priorityClassRef=PC_REF)),
    good("WL-17", wl().priority(0).spec(priorityClassRef=WPC_REF)),
    good("WL-18", wl().spec(maximumExecutionTimeSeconds=1)),
    good("WL-19", wl().spec(preemptionGates=[{"name": "example.com/g"}])),
    good("WL-20", wl().annotations({GATED_BY: "example.com/a, example.com/b"})),
    good(
        "WL-21",
        wl().annotations({"kueue.x-k8s.io/priority-boost": "-5"}),
        gates={"PriorityBoost": True},
    ),
    good("WL-21", wl().annotations({"kueue.x-k8s.io/priority-boost": ""}), note="gate off"),
    good("WL-30", RESERVED),
    good(
        "WL-30",
        wl().priority(5).status(conditions=[condition("QuotaReserved", at=WHEN)]),
        old=wl().status(conditions=[condition("QuotaReserved", at=WHEN)]),
        note="stale reserved without admission",
    ),
    good(
        "WL-31",
        wl()
        .pod_sets(pod_set("a", None, cpu="1"), pod_set("b", None, cpu="1"))
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
    ),
    good(
        "WL-32",
        wl()
        .reserve_quota("cq", flavor="alpha", at=WHEN, message="")
        .status(conditions=[condition("QuotaReserved", "False", reason="Pending", at=WHEN)]),
        note="not reserved",
    ),
    good(
        "WL-33",
        wl()
        .pod_sets(pod_set(None, 2, cpu="1"))
        .reserve_quota(
            "cq",
            {"name": "main", "count": 2, "resourceUsage": {"cpu": "3", "memory": "2Gi"}},
            at=WHEN,
            message="",
        ),
        note="3 cpu over 2 pods",
    ),
    good(
        "WL-33",
        wl()
        .pod_sets(pod_set(None, 2, cpu="1"))
        .reserve_quota(
            "cq",
            {"name": "main", "count": 2, "resourceUsage": {"memory": "1.5"}},
            at=WHEN,
            message="",
        ),
        note="1.5 rounds up to 2",
    ),
    good(
        "WL-34",
        wl().reserve_quota(
            "cq",
            {
                "name": "main",
                "count": 1,
                "flavors": {"cpu": "on-demand"},
                "delayedTopologyRequest": "Ready",
            },
            at=WHEN,
            message="",
        ),
    ),
    good(
        "WL-35",
        wl().status(
            conditions=[
                condition("Finished", reason="Succeeded", at=WHEN),
                condition("PodsReady", "Unknown", reason="Wait:ing_1", at=WHEN),
            ]
        ),
    ),
    good(
        "WL-36",
        wl()
        .pod_sets(pod_set(None, 2, cpu="1"))
        .status(reclaimablePods=[{"name": "main", "count": 2}]),
    ),
    good(
        "WL-37",
        wl()
        .pod_sets(pod_set(None, 1, cpu="1"))
        .status(reclaimablePods=[{"name": "main", "count": 3}]),
        old=wl()
        .pod_sets(pod_set(None, 1, cpu="1"))
        .status(reclaimablePods=[{"name": "main", "count": 3}]),
        note="unchanged over-count",
    ),
    good(
        "WL-38",
        wl().status(
            admissionChecks=[
                {"name": "prov", "state": "Retry", "requeueAfterSeconds": 30, "retryCount": 1}
            ]
        ),
    ),
    good("WL-39", wl().status(admissionChecks=[CHECK])),
    good("WL-40", wl().status(clusterName="w1", nominatedClusterNames=[])),
    good("WL-41", wl().status(nominatedClusterNames=[f"w{n}" for n in range(20)])),
    good(
        "WL-50", changed(RESERVED, "spec", "priority", value=50), old=RESERVED, note="V14 priority"
    ),
    good(
        "WL-51",
        changed(RESERVED, "spec", "podSets", 0, "count", value=4),
        old=changed(RESERVED, "status", value={}),
        note="not reserved before",
    ),
    good("WL-52", wl().queue("b"), old=wl().queue("a"), note="V15"),
    good(
        "WL-53",
        wl()
        .priority(5)
        .spec(priorityClassRef=WPC_REF)
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
        old=wl()
        .priority(1)
        .spec(priorityClassRef=WPC_REF)
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
    ),
    good(
        "WL-54",
        wl()
        .priority(1)
        .spec(priorityClassRef={**WPC_REF, "name": "low"})
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
        old=wl()
        .priority(1)
        .spec(priorityClassRef=WPC_REF)
        .reserve_quota("cq", flavor="alpha", at=WHEN, message=""),
        note="V14 WPC name",
    ),
    good(
        "WL-55",
        wl().priority(1).spec(priorityClassRef={**PC_REF, "name": "low"}),
        old=wl().priority(1).spec(priorityClassRef=PC_REF),
    ),
    good(
        "WL-56",
        changed(RESERVED, "spec", "maximumExecutionTimeSeconds", value=120),
        old=RESERVED,
        note="reserved, not admitted",
    ),
    good(
        "WL-57",
        changed(
            RESERVED,
            "status",
            "admission",
            "podSetAssignments",
            0,
            "delayedTopologyRequest",
            value="Ready",
        ),
        old=RESERVED,
        note="TAS fields may be filled in",
    ),
    good("WL-57", changed(RESERVED, "status", value={}), old=RESERVED, note="clearing admission"),
    good(
        "WL-58",
        changed(WITH_RECLAIM, "status", "reclaimablePods", value=[{"name": "main", "count": 3}]),
        old=WITH_RECLAIM,
    ),
    good(
        "WL-59",
        wl().status(admissionChecks=[{**CHECK, "state": "Ready"}]),
        old=wl().status(admissionChecks=[{**CHECK, "state": "Pending", "podSetUpdates": []}]),
    ),
    good(
        "WL-60",
        wl().status(clusterName=""),
        old=wl().status(clusterName="w1"),
        note="clearing",
    ),
    good("WL-61", wl().status(clusterName="w2"), old=NOMINATED),
    good(
        "WL-62",
        wl().annotations({GATED_BY: "example.com/a"}),
        old=wl().annotations({GATED_BY: "example.com/a,example.com/b"}),
    ),
]


@pytest.mark.parametrize("case", FAILING, ids=lambda case: case.id)
def test_failing_case(case: Bad) -> None:
    check_bad(validate_workload, case)


@pytest.mark.parametrize("case", PASSING, ids=lambda case: case.id)
def test_passing_case(case: Good) -> None:
    check_good(validate_workload, case)


def test_status_subresource_ignores_spec_rules() -> None:
    obj = (
        wl()
        .pod_sets(pod_set(None, -1, cpu="1"))
        .status(conditions=[condition("QuotaReserved", at=WHEN)])
        .build()
    )
    errors = validate_workload_status(obj)
    assert [item.rule for item in errors] == ["WL-30"]


def test_status_subresource_checks_status_updates() -> None:
    errors = validate_workload_status(
        changed(RESERVED, "status", "admission", "clusterQueue", value="other"), RESERVED.build()
    )
    find(errors, "status.admission", "cannot be modified once set", rule="WL-57")


def test_partial_admission_gate_does_not_change_validation() -> None:
    assert (
        validate_workload(
            wl().pod_sets(pod_set(None, 3, cpu="1").min_count(2)).build(),
            gates={"PartialAdmission": False},
        )
        == []
    )


def test_elastic_slices_may_scale_down_while_reserved() -> None:
    elastic = (
        wl().pod_sets(pod_set(None, 3, cpu="1")).annotations({"kueue.x-k8s.io/elastic-job": "true"})
    )
    old = elastic.reserve_quota("cq", flavor="alpha", at=WHEN, message="").build()
    new = changed(old, "spec", "podSets", 0, "count", value=2)
    assert validate_workload(new, old) == [], "the gate is on by default, as in Kueue"
    off = {"ElasticJobsViaWorkloadSlices": False}
    find(validate_workload(new, old, gates=off), PS0, "cannot change", rule="WL-51")
    grown = changed(old, "spec", "podSets", 0, "count", value=4)
    find(validate_workload(grown, old), PS0, "cannot change", rule="WL-51")


def test_v1alpha1_fields_get_hints() -> None:
    obj = wl().spec(priorityClassName="high").build()
    find(
        validate_workload(obj),
        "spec.priorityClassName",
        'unknown field "priorityClassName"',
        "spec.priorityClassRef",
    )


def test_pod_set_name_rules_are_skipped_when_pod_sets_has_the_wrong_type() -> None:
    obj = wl().reserve_quota("cq", flavor="alpha", at=WHEN, message="").spec(podSets="main").build()
    errors = validate_workload(obj)
    assert [item.rule for item in errors] == ["TYPE"]
    find(errors, "spec.podSets", "must be a list")
