"""Workload rules (docs/validation.md#workload): spec, status and update-only rules."""

from __future__ import annotations

import copy

import pytest

from scheduler.api.validation import validate_workload, validate_workload_status
from tests.api import validation_builders as b
from tests.api.validation_builders import bad, good

GATED_BY = "kueue.x-k8s.io/admission-gated-by"
PS0 = "spec.podSets[0]"
WPC_REF = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
PC_REF = {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "high"}


def wl(*pod_sets: dict, **spec: object) -> dict:
    return b.workload(pod_sets=list(pod_sets) or None, **spec)


def status_of(obj: dict, **status: object) -> dict:
    return b.with_status(obj, **status)


def changed(obj: dict, *path: object, value: object) -> dict:
    result = copy.deepcopy(obj)
    target = result
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return result


def conditions(count: int) -> list[dict]:
    return [b.condition(f"Type{n}", "False") for n in range(count)]


RESERVED = b.reserved(wl(b.pod_set(count=3)))
ADMITTED = b.reserved(wl(b.pod_set(count=3), maximumExecutionTimeSeconds=60), admitted=True)
WITH_RECLAIM = b.with_status(RESERVED, reclaimablePods=[{"name": "main", "count": 2}])
CHECK = {
    "name": "prov",
    "state": "Ready",
    "lastTransitionTime": "2025-01-01T00:00:00Z",
    "podSetUpdates": [{"name": "main", "labels": {"zone": "a"}}],
}
NOMINATED = status_of(wl(), nominatedClusterNames=["w1", "w2"])

FAILING = [
    bad("WL-1", wl(podSets=[]), "spec.podSets", "must list at least 1 pod set"),
    bad(
        "WL-1",
        {"apiVersion": b.KUEUE, "kind": "Workload", "metadata": {"name": "w"}, "spec": {}},
        "spec.podSets",
        "at least 1 pod set",
    ),
    bad(
        "WL-2",
        wl(*(b.pod_set(f"p{n}") for n in range(19))),
        "spec.podSets",
        "has 19 items; at most 18",
    ),
    bad("WL-3", wl(b.pod_set("Main")), f"{PS0}.name", '"Main" is not a valid pod set name'),
    bad(
        "WL-4",
        wl(b.pod_set(), b.pod_set()),
        "spec.podSets[1].name",
        'duplicate pod set name "main"',
        "an unnamed pod set is called main",
    ),
    bad("WL-5", wl({"name": "main"}), f"{PS0}.template", "required", "at least one container"),
    bad(
        "WL-5",
        wl(b.pod_set(containers=[])),
        f"{PS0}.template.spec.containers",
        "at least one container",
    ),
    bad("WL-6", wl(b.pod_set(count=-1)), f"{PS0}.count", "must be greater than or equal to 0"),
    bad("WL-7", wl(b.pod_set(count=3, min_count=0)), f"{PS0}.minCount", "must be at least 1"),
    bad(
        "WL-8",
        wl(b.pod_set(count=3, min_count=5)),
        f"{PS0}.minCount",
        "must be less than or equal to count (3)",
    ),
    bad(
        "WL-9",
        wl(b.pod_set("a", count=3, min_count=1), b.pod_set("b", count=3, min_count=2)),
        "spec.podSets",
        "2 pod sets use minCount; at most one pod set may use partial admission",
    ),
    bad(
        "WL-10",
        b.workload(
            pod_sets=[b.pod_set(count=3, min_count=1)],
            annotations={"kueue.x-k8s.io/elastic-job": "true"},
        ),
        "spec.podSets",
        "partial admission (minCount) and elastic jobs cannot be combined",
    ),
    bad(
        "WL-11",
        wl(b.pod_set(requests={"pods": 1})),
        f"{PS0}.template.spec.containers[0].resources.requests[pods]",
        'the resource name "pods" is reserved',
    ),
    bad(
        "WL-11",
        wl(b.pod_set(init_containers=[b.container(limits={"pods": "1"})])),
        f"{PS0}.template.spec.initContainers[0].resources.limits[pods]",
        '"pods" is reserved',
    ),
    bad(
        "WL-12",
        wl(b.pod_set(requests={"cpu": "-1"})),
        f"{PS0}.template.spec.containers[0].resources.requests[cpu]",
        "greater than or equal to 0, got -1",
    ),
    bad(
        "WL-13",
        wl(
            b.pod_set(
                template={
                    "metadata": {"labels": {"bad key!": "x"}},
                    "spec": {"containers": [b.container()]},
                }
            )
        ),
        f"{PS0}.template.metadata.labels",
        'invalid label key "bad key!"',
    ),
    bad(
        "WL-13",
        wl(
            b.pod_set(
                template={
                    "metadata": {"annotations": {"big": "x" * 262145}},
                    "spec": {"containers": [b.container()]},
                }
            )
        ),
        f"{PS0}.template.metadata.annotations",
        "annotations are larger than 262144 bytes",
    ),
    bad(
        "WL-14",
        wl(queueName="Bad_Queue"),
        "spec.queueName",
        '"Bad_Queue" is not a valid LocalQueue name',
    ),
    bad(
        "WL-15",
        wl(
            priorityClassRef={"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass"},
            priority=1,
        ),
        "spec.priorityClassRef.name",
        "required",
    ),
    bad(
        "WL-15",
        wl(priorityClassRef={**WPC_REF, "group": "example.com"}, priority=1),
        "spec.priorityClassRef.group",
        'unsupported value "example.com"',
    ),
    bad(
        "WL-16",
        wl(priorityClassRef={**WPC_REF, "group": "scheduling.k8s.io"}, priority=1),
        "spec.priorityClassRef.kind",
        "kind WorkloadPriorityClass does not belong to group scheduling.k8s.io",
    ),
    bad(
        "WL-17",
        wl(priorityClassRef=WPC_REF),
        "spec.priority",
        "required when priorityClassRef is set: copy the class's value here",
    ),
    bad(
        "WL-18",
        wl(maximumExecutionTimeSeconds=0),
        "spec.maximumExecutionTimeSeconds",
        "must be at least 1 (omit it for no limit)",
    ),
    bad(
        "WL-19",
        wl(preemptionGates=[{"name": f"g{n}"} for n in range(9)]),
        "spec.preemptionGates",
        "has 9 items",
    ),
    bad(
        "WL-19",
        wl(preemptionGates=[{"name": ""}]),
        "spec.preemptionGates[0].name",
        "must be 1 to 63 characters",
    ),
    bad(
        "WL-19",
        wl(preemptionGates=[{"name": "g"}, {"name": "g"}]),
        "spec.preemptionGates[1].name",
        'duplicate gate "g"',
    ),
    bad(
        "WL-20",
        b.workload(annotations={GATED_BY: "example.com/a,,example.com/b"}),
        f"metadata.annotations[{GATED_BY}]",
        "cannot contain empty gate names",
    ),
    bad(
        "WL-20",
        b.workload(annotations={GATED_BY: "example.com/a,example.com/a"}),
        f"metadata.annotations[{GATED_BY}]",
        "duplicate gate name: example.com/a",
    ),
    bad(
        "WL-20",
        b.workload(annotations={GATED_BY: "provisioner"}),
        f"metadata.annotations[{GATED_BY}]",
        '"provisioner" must look like example.com/name',
    ),
    bad(
        "WL-20",
        b.workload(annotations={GATED_BY: "example.com/" + "x" * 60}),
        f"metadata.annotations[{GATED_BY}]",
        "is longer than 63 characters",
    ),
    bad(
        "WL-21",
        b.workload(annotations={"kueue.x-k8s.io/priority-boost": ""}),
        "metadata.annotations[kueue.x-k8s.io/priority-boost]",
        "must be a signed integer such as 10 or -5",
        gates={"PriorityBoost": True},
    ),
    # status rules
    bad(
        "WL-30",
        status_of(wl(), conditions=[b.condition("QuotaReserved")]),
        "status.admission",
        "required while the QuotaReserved condition is True",
    ),
    bad(
        "WL-31",
        b.reserved(wl(), assignments=[{"name": "main", "count": 1}, {"name": "extra", "count": 1}]),
        "status.admission.podSetAssignments",
        "has 2 assignments but spec.podSets has 1",
    ),
    bad(
        "WL-32",
        b.reserved(wl(), assignments=[{"name": "other", "count": 1}]),
        "status.admission.podSetAssignments[0].name",
        'no pod set named "other" in spec.podSets',
    ),
    bad(
        "WL-33",
        b.reserved(
            wl(b.pod_set(count=2)),
            assignments=[{"name": "main", "count": 2, "resourceUsage": {"nvidia.com/gpu": "3"}}],
        ),
        "status.admission.podSetAssignments[0].resourceUsage[nvidia.com/gpu]",
        "3 is not a multiple of count 2",
    ),
    bad(
        "WL-33",
        b.reserved(
            wl(b.pod_set(count=2)),
            assignments=[{"name": "main", "count": 2, "resourceUsage": {"memory": "2.5"}}],
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
        b.reserved(wl(), assignments=[{"name": "main", "count": -1}]),
        "status.admission.podSetAssignments[0].count",
        "greater than or equal to 0",
    ),
    bad(
        "WL-34",
        b.reserved(wl(), assignments=[{"name": "main", "count": 1, "flavors": {"cpu": "Bad_F"}}]),
        "status.admission.podSetAssignments[0].flavors[cpu]",
        '"Bad_F" is not a valid flavor name',
    ),
    bad(
        "WL-34",
        b.reserved(
            wl(), assignments=[{"name": "main", "count": 1, "delayedTopologyRequest": "Later"}]
        ),
        "status.admission.podSetAssignments[0].delayedTopologyRequest",
        'unsupported value "Later"',
    ),
    bad(
        "WL-35",
        status_of(
            wl(), conditions=[{"type": "Finished", "status": "True", "lastTransitionTime": "t"}]
        ),
        "status.conditions[0].reason",
        "required",
    ),
    bad(
        "WL-35",
        status_of(wl(), conditions=[b.condition("Finished", "Maybe")]),
        "status.conditions[0].status",
        'unsupported value "Maybe"',
    ),
    bad(
        "WL-35",
        status_of(wl(), conditions=[b.condition("Finished", reason="1bad")]),
        "status.conditions[0].reason",
        "reason must start with a letter",
    ),
    bad(
        "WL-35",
        status_of(wl(), conditions=[b.condition("Finished"), b.condition("Finished")]),
        "status.conditions[1].type",
        'duplicate condition type "Finished"',
    ),
    bad(
        "WL-35",
        status_of(wl(), conditions=conditions(17)),
        "status.conditions",
        "has 17 items; at most 16",
    ),
    bad(
        "WL-36",
        status_of(wl(), reclaimablePods=[{"name": "ghost", "count": 1}]),
        "status.reclaimablePods[ghost].name",
        'no pod set named "ghost"',
    ),
    bad(
        "WL-37",
        status_of(wl(b.pod_set(count=2)), reclaimablePods=[{"name": "main", "count": 5}]),
        "status.reclaimablePods[main].count",
        "must be less than or equal to 2",
    ),
    bad(
        "WL-38",
        status_of(wl(), admissionChecks=[{"name": "prov", "state": "Done"}]),
        "status.admissionChecks[0].state",
        'unsupported value "Done": use one of Pending, Ready, Retry, Rejected',
    ),
    bad(
        "WL-38",
        status_of(wl(), admissionChecks=[{"state": "Pending"}]),
        "status.admissionChecks[0].name",
        "required",
    ),
    bad(
        "WL-38",
        status_of(wl(), admissionChecks=[{"name": "prov", "state": "Retry", "retryCount": -1}]),
        "status.admissionChecks[0].retryCount",
        "greater than or equal to 0",
    ),
    bad(
        "WL-38",
        status_of(wl(), admissionChecks=[{"name": f"c{n}", "state": "Pending"} for n in range(9)]),
        "status.admissionChecks",
        "has 9 items",
    ),
    bad(
        "WL-39",
        status_of(
            wl(),
            admissionChecks=[
                {"name": "prov", "state": "Ready", "podSetUpdates": [{"name": "ghost"}]}
            ],
        ),
        "status.admissionChecks[0].podSetUpdates[0].name",
        'no pod set named "ghost"',
    ),
    bad(
        "WL-39",
        status_of(
            wl(),
            admissionChecks=[
                {
                    "name": "prov",
                    "state": "Ready",
                    "podSetUpdates": [{"name": "main", "nodeSelector": {"@x": "y"}}],
                }
            ],
        ),
        "status.admissionChecks[0].podSetUpdates[0].nodeSelector",
        'invalid label key "@x"',
    ),
    bad(
        "WL-39",
        status_of(
            wl(),
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
            ],
        ),
        "status.admissionChecks[0].podSetUpdates[0].tolerations[0].value",
        "must be empty when operator is Exists",
    ),
    bad(
        "WL-40",
        status_of(wl(), clusterName="w1", nominatedClusterNames=["w1"]),
        "status.clusterName",
        "clusterName and nominatedClusterNames cannot both be set",
    ),
    bad(
        "WL-41",
        status_of(wl(), nominatedClusterNames=[f"w{n}" for n in range(21)]),
        "status.nominatedClusterNames",
        "has 21 items",
    ),
    bad(
        "WL-41",
        status_of(wl(), clusterName="w" * 257),
        "status.clusterName",
        "must be at most 256 characters",
    ),
    # update-only rules
    bad(
        "WL-50",
        changed(RESERVED, "spec", "podSets", value=[b.pod_set(count=3), b.pod_set("extra")]),
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
        changed(b.reserved(wl(queueName="a")), "spec", "queueName", value="b"),
        "spec.queueName",
        'cannot change while the workload holds a quota reservation; it was "a"',
        old=b.reserved(wl(queueName="a")),
    ),
    bad(
        "WL-53",
        b.reserved(wl(b.pod_set(count=3), priorityClassRef=WPC_REF, priority=1)),
        "spec.priorityClassRef",
        "cannot be added or removed while the workload holds a quota reservation",
        old=RESERVED,
    ),
    bad(
        "WL-54",
        b.reserved(
            wl(
                priorityClassRef={
                    **PC_REF,
                    "group": "kueue.x-k8s.io",
                    "kind": "WorkloadPriorityClass",
                },
                priority=1,
            )
        ),
        "spec.priorityClassRef.group",
        "cannot change while the workload holds a quota reservation",
        old=b.reserved(wl(priorityClassRef=PC_REF, priority=1)),
    ),
    bad(
        "WL-55",
        b.reserved(wl(priorityClassRef={**PC_REF, "name": "low"}, priority=1)),
        "spec.priorityClassRef.name",
        "a PriorityClass reference cannot change while the workload holds a quota reservation",
        old=b.reserved(wl(priorityClassRef=PC_REF, priority=1)),
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
        status_of(
            wl(),
            admissionChecks=[
                {**CHECK, "podSetUpdates": [{"name": "main", "labels": {"zone": "b"}}]}
            ],
        ),
        "status.admissionChecks[0].podSetUpdates",
        "cannot change after the check became Ready",
        old=status_of(wl(), admissionChecks=[CHECK]),
    ),
    bad(
        "WL-60",
        status_of(wl(), clusterName="w2"),
        "status.clusterName",
        'is immutable once set; it was "w1"',
        old=status_of(wl(), clusterName="w1"),
    ),
    bad(
        "WL-61",
        status_of(wl(), clusterName="w3"),
        "status.clusterName",
        "must be one of the nominated clusters (w1, w2)",
        old=NOMINATED,
    ),
    bad(
        "WL-62",
        b.workload(annotations={GATED_BY: "example.com/a"}),
        f"metadata.annotations[{GATED_BY}]",
        "admission gates can only be set when the object is created",
        old=b.workload(),
    ),
    bad(
        "WL-62",
        b.workload(annotations={GATED_BY: "example.com/a,example.com/b"}),
        f"metadata.annotations[{GATED_BY}]",
        "gates can only be removed, not added",
        old=b.workload(annotations={GATED_BY: "example.com/a"}),
    ),
]

PASSING = [
    good("WL-1", wl()),
    good("WL-2", wl(*(b.pod_set(f"p{n}") for n in range(18)))),
    good("WL-3", wl(b.pod_set("driver"), b.pod_set("workers"))),
    good("WL-4", wl(b.pod_set()), note="V13 single unnamed"),
    good("WL-5", wl(b.pod_set(containers=[b.container(), b.container(name="sidecar")]))),
    good("WL-6", wl(b.pod_set(count=0)), note="V13 count 0"),
    good("WL-7", wl(b.pod_set(count=3, min_count=1))),
    good("WL-8", wl(b.pod_set(count=3, min_count=3))),
    good("WL-9", wl(b.pod_set("a", count=3, min_count=1), b.pod_set("b", count=3))),
    good("WL-10", b.workload(annotations={"kueue.x-k8s.io/elastic-job": "true"})),
    good("WL-11", wl(b.pod_set(requests={"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}))),
    good("WL-12", wl(b.pod_set(requests={"cpu": 0}))),
    good(
        "WL-13",
        wl(
            b.pod_set(
                template={
                    "metadata": {
                        "labels": {"app": "x"},
                        "annotations": {"example.com/a": "anything goes"},
                    },
                    "spec": {"containers": [b.container()]},
                }
            )
        ),
    ),
    good("WL-14", wl(queueName="user-queue")),
    good("WL-15", wl(priorityClassRef=WPC_REF, priority=1000)),
    good("WL-16", wl(priorityClassRef=PC_REF, priority=1000)),
    good("WL-17", wl(priorityClassRef=WPC_REF, priority=0)),
    good("WL-18", wl(maximumExecutionTimeSeconds=1)),
    good("WL-19", wl(preemptionGates=[{"name": "example.com/g"}])),
    good("WL-20", b.workload(annotations={GATED_BY: "example.com/a, example.com/b"})),
    good(
        "WL-21",
        b.workload(annotations={"kueue.x-k8s.io/priority-boost": "-5"}),
        gates={"PriorityBoost": True},
    ),
    good("WL-21", b.workload(annotations={"kueue.x-k8s.io/priority-boost": ""}), note="gate off"),
    good("WL-30", RESERVED),
    good(
        "WL-30",
        status_of(wl(priority=5), conditions=[b.condition("QuotaReserved")]),
        old=status_of(wl(), conditions=[b.condition("QuotaReserved")]),
        note="stale reserved without admission",
    ),
    good("WL-31", b.reserved(wl(b.pod_set("a"), b.pod_set("b")))),
    good(
        "WL-32",
        b.with_status(
            b.reserved(wl()), conditions=[b.condition("QuotaReserved", "False", "Pending")]
        ),
        note="not reserved",
    ),
    good(
        "WL-33",
        b.reserved(
            wl(b.pod_set(count=2)),
            assignments=[
                {"name": "main", "count": 2, "resourceUsage": {"cpu": "3", "memory": "2Gi"}}
            ],
        ),
        note="3 cpu over 2 pods",
    ),
    good(
        "WL-33",
        b.reserved(
            wl(b.pod_set(count=2)),
            assignments=[{"name": "main", "count": 2, "resourceUsage": {"memory": "1.5"}}],
        ),
        note="1.5 rounds up to 2",
    ),
    good(
        "WL-34",
        b.reserved(
            wl(),
            assignments=[
                {
                    "name": "main",
                    "count": 1,
                    "flavors": {"cpu": "on-demand"},
                    "delayedTopologyRequest": "Ready",
                }
            ],
        ),
    ),
    good(
        "WL-35",
        status_of(
            wl(),
            conditions=[
                b.condition("Finished", reason="Succeeded"),
                b.condition("PodsReady", "Unknown", "Wait:ing_1"),
            ],
        ),
    ),
    good(
        "WL-36", status_of(wl(b.pod_set(count=2)), reclaimablePods=[{"name": "main", "count": 2}])
    ),
    good(
        "WL-37",
        status_of(wl(b.pod_set(count=1)), reclaimablePods=[{"name": "main", "count": 3}]),
        old=status_of(wl(b.pod_set(count=1)), reclaimablePods=[{"name": "main", "count": 3}]),
        note="unchanged over-count",
    ),
    good(
        "WL-38",
        status_of(
            wl(),
            admissionChecks=[
                {"name": "prov", "state": "Retry", "requeueAfterSeconds": 30, "retryCount": 1}
            ],
        ),
    ),
    good("WL-39", status_of(wl(), admissionChecks=[CHECK])),
    good("WL-40", status_of(wl(), clusterName="w1", nominatedClusterNames=[])),
    good("WL-41", status_of(wl(), nominatedClusterNames=[f"w{n}" for n in range(20)])),
    good(
        "WL-50", changed(RESERVED, "spec", "priority", value=50), old=RESERVED, note="V14 priority"
    ),
    good(
        "WL-51",
        changed(RESERVED, "spec", "podSets", 0, "count", value=4),
        old=changed(RESERVED, "status", value={}),
        note="not reserved before",
    ),
    good("WL-52", wl(queueName="b"), old=wl(queueName="a"), note="V15"),
    good(
        "WL-53",
        b.reserved(wl(priorityClassRef=WPC_REF, priority=5)),
        old=b.reserved(wl(priorityClassRef=WPC_REF, priority=1)),
    ),
    good(
        "WL-54",
        b.reserved(wl(priorityClassRef={**WPC_REF, "name": "low"}, priority=1)),
        old=b.reserved(wl(priorityClassRef=WPC_REF, priority=1)),
        note="V14 WPC name",
    ),
    good(
        "WL-55",
        wl(priorityClassRef={**PC_REF, "name": "low"}, priority=1),
        old=wl(priorityClassRef=PC_REF, priority=1),
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
        status_of(wl(), admissionChecks=[{**CHECK, "state": "Ready"}]),
        old=status_of(wl(), admissionChecks=[{**CHECK, "state": "Pending", "podSetUpdates": []}]),
    ),
    good(
        "WL-60",
        status_of(wl(), clusterName=""),
        old=status_of(wl(), clusterName="w1"),
        note="clearing",
    ),
    good("WL-61", status_of(wl(), clusterName="w2"), old=NOMINATED),
    good(
        "WL-62",
        b.workload(annotations={GATED_BY: "example.com/a"}),
        old=b.workload(annotations={GATED_BY: "example.com/a,example.com/b"}),
    ),
]


@pytest.mark.parametrize("case", FAILING, ids=lambda case: case.id)
def test_failing_case(case: b.Bad) -> None:
    b.check_bad(validate_workload, case)


@pytest.mark.parametrize("case", PASSING, ids=lambda case: case.id)
def test_passing_case(case: b.Good) -> None:
    b.check_good(validate_workload, case)


def test_status_subresource_ignores_spec_rules() -> None:
    obj = b.with_status(wl(b.pod_set(count=-1)), conditions=[b.condition("QuotaReserved")])
    errors = validate_workload_status(obj)
    assert [item.rule for item in errors] == ["WL-30"]


def test_status_subresource_checks_status_updates() -> None:
    errors = validate_workload_status(
        changed(RESERVED, "status", "admission", "clusterQueue", value="other"), RESERVED
    )
    b.find(errors, "status.admission", "cannot be modified once set", rule="WL-57")


def test_partial_admission_gate_does_not_change_validation() -> None:
    assert (
        validate_workload(wl(b.pod_set(count=3, min_count=2)), gates={"PartialAdmission": False})
        == []
    )


def test_elastic_slices_may_scale_down_while_reserved() -> None:
    elastic = b.workload(
        pod_sets=[b.pod_set(count=3)], annotations={"kueue.x-k8s.io/elastic-job": "true"}
    )
    old = b.reserved(elastic)
    new = changed(old, "spec", "podSets", 0, "count", value=2)
    assert validate_workload(new, old, gates={"ElasticJobsViaWorkloadSlices": True}) == []
    b.find(validate_workload(new, old), PS0, "cannot change", rule="WL-51")


def test_v1alpha1_fields_get_hints() -> None:
    obj = b.with_spec(wl(), priorityClassName="high")
    b.find(
        validate_workload(obj),
        "spec.priorityClassName",
        'unknown field "priorityClassName"',
        "spec.priorityClassRef",
    )


def test_pod_set_name_rules_are_skipped_when_pod_sets_has_the_wrong_type() -> None:
    obj = b.with_spec(b.reserved(wl()), podSets="main")
    errors = validate_workload(obj)
    assert [item.rule for item in errors] == ["TYPE"]
    b.find(errors, "spec.podSets", "must be a list")
