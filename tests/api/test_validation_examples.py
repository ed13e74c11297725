"""The worked examples of tests/reference/validation.md: section 16 (invalid, one
per line), section 17 (valid edge cases), the v1beta2 manifests of the seeds, and
a check that every rule of its sections 3-13 has a failing and a passing test
somewhere.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scheduler.api.validation import (
    VALIDATORS,
    validate,
    validate_admission_check,
    validate_cluster_queue,
    validate_cohort,
    validate_configuration,
    validate_local_queue,
    validate_multikueue_cluster,
    validate_resource_flavor,
    validate_workload,
    validate_workload_priority_class,
)
from scheduler.jobs.batchjob import validate_job
from tests.api import test_validation_clusterqueue as cq_tests
from tests.api import test_validation_configuration as cfg_tests
from tests.api import test_validation_queues as queue_tests
from tests.api import test_validation_small_kinds as small_tests
from tests.api import test_validation_workload as wl_tests
from tests.api import validation_builders as b
from tests.api.seed_examples import documents
from tests.api.validation_builders import quota as q
from tests.jobs import test_validation_job as job_tests

SPEC_FILE = Path(__file__).resolve().parents[1] / "reference" / "validation.md"
CQ = validate_cluster_queue
R0 = "spec.resourceGroups[0].flavors[0].resources[0]"
MORE = "…"  # the spec abbreviates a message's generic tail; compare up to here


def cq_with(*entries: dict, **spec: Any) -> dict:
    return b.simple_cluster_queue(*entries, **spec)


def flavor_group(*names: str) -> list[dict]:
    return [b.group(["cpu"], *(b.flavor(name, cpu="1") for name in names))]


RESERVED_3 = b.reserved(b.workload(pod_sets=[b.pod_set(count=3)]))
RESERVED_A = b.reserved(b.workload(queueName="a"))

# (number, validator, new, old, options, path, message (full, or prefix ending in …), rule)
INVALID: list[tuple[int, Callable[..., Any], dict, dict | None, dict, str, str, str]] = [
    (
        1,
        CQ,
        b.cluster_queue(groups=[b.group(["cpu"])]),
        None,
        {},
        "spec.resourceGroups[0].flavors",
        "must list at least 1 flavor",
        "CQ-6",
    ),
    (
        2,
        CQ,
        b.cluster_queue(
            cohort="team-ab",
            groups=[
                b.group(["cpu", "memory"], b.flavor("default-flavor", q("cpu", 9, borrowing=1)))
            ],
        ),
        None,
        {},
        "spec.resourceGroups[0].flavors[0].resources",
        'flavor "default-flavor" gives quotas for 1 resource(s) but the group covers 2 (cpu, '
        "memory); give exactly one quota per covered resource, in the same order",
        "CQ-12",
    ),
    (
        3,
        CQ,
        b.cluster_queue(
            groups=[
                b.group(
                    ["cpu", "memory"],
                    b.flavor("alpha", cpu="1", memory="1"),
                    b.flavor("beta", memory="1", cpu="1"),
                )
            ]
        ),
        None,
        {},
        "spec.resourceGroups[0].flavors[1].resources[0].name",
        'expected "cpu" (coveredResources[0]) but found "memory"; list resources in the same '
        "order as coveredResources",
        "CQ-13",
    ),
    (
        4,
        CQ,
        b.cluster_queue(
            groups=[
                b.group(["cpu"], b.flavor("spot", cpu="1")),
                b.group(["gpu"], b.flavor("spot", gpu="1")),
            ]
        ),
        None,
        {},
        "spec.resourceGroups[1].flavors[0].name",
        'flavor "spot" is already used by resourceGroups[0]; a flavor may belong to only one '
        "resource group",
        "CQ-9",
    ),
    (
        5,
        CQ,
        b.cluster_queue(
            groups=[
                b.group(["cpu", "memory"], b.flavor("a", cpu="1", memory="1")),
                b.group(["memory"], b.flavor("b", memory="1")),
            ]
        ),
        None,
        {},
        "spec.resourceGroups[1].coveredResources[0]",
        'resource "memory" is already covered by resourceGroups[0]; a resource may belong to only '
        "one resource group",
        "CQ-5",
    ),
    (
        6,
        CQ,
        cq_with(q("cpu", -1)),
        None,
        {},
        f"{R0}.nominalQuota",
        "must be greater than or equal to 0, got -1",
        "CQ-17",
    ),
    (
        7,
        CQ,
        cq_with(q("cpu", "ten")),
        None,
        {},
        f"{R0}.nominalQuota",
        '"ten" is not a valid quantity (examples: 9, 500m, 36Gi)',
        "CQ-16",
    ),
    (
        8,
        CQ,
        cq_with(q("cpu", borrowing=0)),
        None,
        {},
        f"{R0}.borrowingLimit",
        "a borrowing limit needs a cohort: set spec.cohortName or remove borrowingLimit",
        "CQ-18",
    ),
    (
        9,
        CQ,
        cq_with(q("cpu", lending=1)),
        None,
        {},
        f"{R0}.lendingLimit",
        "a lending limit needs a cohort: set spec.cohortName or remove lendingLimit",
        "CQ-21",
    ),
    (
        10,
        CQ,
        cq_with(q("cpu", 1, lending=2), cohort="c"),
        None,
        {},
        f"{R0}.lendingLimit",
        "must be less than or equal to nominalQuota (1); a queue cannot lend more than it owns",
        "CQ-22",
    ),
    (
        11,
        CQ,
        cq_with(q("cpu", borrowing=-1), cohort="c"),
        None,
        {},
        f"{R0}.borrowingLimit",
        "must be greater than or equal to 0, got -1",
        "CQ-19",
    ),
    (
        12,
        CQ,
        b.cluster_queue(groups=flavor_group("invalid_name")),
        None,
        {},
        "spec.resourceGroups[0].flavors[0].name",
        '"invalid_name" is not a valid flavor name: use at most 253 lower-case letters, digits, '
        '"-" or "." …',
        "CQ-8",
    ),
    (
        13,
        CQ,
        b.cluster_queue(groups=[b.group(["@cpu"], b.flavor("a", q("@cpu")))]),
        None,
        {},
        "spec.resourceGroups[0].coveredResources[0]",
        '"@cpu" is not a valid resource name: …',
        "CQ-4",
    ),
    (
        14,
        CQ,
        cq_with(cohort="@prod"),
        None,
        {},
        "spec.cohortName",
        '"@prod" is not a valid name: …',
        "CQ-26",
    ),
    (
        15,
        CQ,
        cq_with(queueingStrategy="FIFO"),
        None,
        {},
        "spec.queueingStrategy",
        'unsupported value "FIFO": use one of StrictFIFO, BestEffortFIFO',
        "CQ-27",
    ),
    (
        16,
        CQ,
        cq_with(
            preemption={
                "reclaimWithinCohort": "Never",
                "borrowWithinCohort": {"policy": "LowerPriority"},
            }
        ),
        None,
        {},
        "spec.preemption",
        "borrowWithinCohort.policy LowerPriority needs reclaimWithinCohort LowerPriority or Any; "
        "with reclaimWithinCohort Never, set borrowWithinCohort.policy to Never",
        "CQ-30",
    ),
    (
        17,
        CQ,
        cq_with(preemption={"borrowWithinCohort": {"policy": "LowerPriority"}}),
        None,
        {},
        "spec.preemption",
        "borrowWithinCohort.policy LowerPriority needs reclaimWithinCohort LowerPriority or Any; "
        "with reclaimWithinCohort Never, set borrowWithinCohort.policy to Never",
        "CQ-30",
    ),
    (
        18,
        CQ,
        cq_with(preemption={"withinClusterQueue": "Any"}),
        None,
        {},
        "spec.preemption.withinClusterQueue",
        'unsupported value "Any": use one of Never, LowerPriority, LowerOrNewerEqualPriority',
        "CQ-29",
    ),
    (
        19,
        CQ,
        cq_with(flavorFungibility={"preference": "PreemptionOverBorrowing"}),
        None,
        {},
        "spec.flavorFungibility.preference",
        'preference "PreemptionOverBorrowing" applies only when whenCanBorrow and whenCanPreempt '
        "are both TryNextFlavor",
        "CQ-33",
    ),
    (
        20,
        CQ,
        cq_with(flavorFungibility={"whenCanBorrow": "Borrow"}),
        None,
        {},
        "spec.flavorFungibility.whenCanBorrow",
        'unsupported value "Borrow": use one of MayStopSearch, TryNextFlavor; "Borrow" is the old '
        "v1beta1 spelling, use MayStopSearch",
        "CQ-31",
    ),
    (
        21,
        CQ,
        cq_with(stopPolicy="Drain"),
        None,
        {},
        "spec.stopPolicy",
        'unsupported value "Drain": use one of None, Hold, HoldAndDrain',
        "CQ-34",
    ),
    (
        22,
        CQ,
        cq_with(fairSharing={"weight": -1}),
        None,
        {},
        "spec.fairSharing.weight",
        "must be greater than or equal to 0, got -1",
        "CQ-36",
    ),
    (
        23,
        CQ,
        cq_with(fairSharing={"weight": "1n"}),
        None,
        {},
        "spec.fairSharing.weight",
        "weight 1n is too small to be used: set 0, or a value greater than 1n (0.000000001)",
        "CQ-37",
    ),
    (
        24,
        CQ,
        cq_with(namespaceSelector={"matchLabels": {"nospecialchars^=@": "bar"}}),
        None,
        {},
        "spec.namespaceSelector.matchLabels",
        'invalid label key "nospecialchars^=@": …',
        "CQ-28",
    ),
    (
        25,
        CQ,
        cq_with(namespaceSelector={"matchExpressions": [{"key": "team", "operator": "In"}]}),
        None,
        {},
        "spec.namespaceSelector.matchExpressions[0].values",
        "must list at least one value when operator is In",
        "CQ-28",
    ),
    (
        26,
        CQ,
        b.cluster_queue(
            groups=[b.group([f"r{n}"], b.flavor(f"f{n}", q(f"r{n}"))) for n in range(17)]
        ),
        None,
        {},
        "spec.resourceGroups",
        "has 17 items; at most 16 are allowed",
        "CQ-1",
    ),
    (
        27,
        CQ,
        cq_with(
            admissionChecksStrategy={"admissionChecks": [{"name": "prov", "onFlavors": ["ghost"]}]}
        ),
        None,
        {},
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]",
        'flavor "ghost" is not one of this queue\'s flavors (alpha); onFlavors may only name '
        "flavors from spec.resourceGroups",
        "CQ-41",
    ),
    (
        28,
        CQ,
        cq_with(admissionChecksStrategy={"admissionChecks": []}),
        None,
        {},
        "spec.admissionChecksStrategy.admissionChecks",
        "must list at least 1 admission check (or remove admissionChecksStrategy)",
        "CQ-38",
    ),
    (
        29,
        CQ,
        b.with_spec(cq_with(), cohort="team-ab"),
        None,
        {},
        "spec.cohort",
        'unknown field "cohort"; v1beta2 calls it spec.cohortName',
        "CQ-V1",
    ),
    (
        30,
        CQ,
        cq_with(concurrentAdmissionPolicy={"migration": {"mode": "TryPreferredFlavors"}}),
        cq_with(),
        {},
        "spec.concurrentAdmissionPolicy",
        "is immutable: it can only be set when the ClusterQueue is created",
        "CQ-44",
    ),
    (
        31,
        validate_resource_flavor,
        b.resource_flavor(node_labels={f"k{n}": "v" for n in range(9)}),
        None,
        {},
        "spec.nodeLabels",
        "has 9 items; at most 8 are allowed",
        "RF-1",
    ),
    (
        32,
        validate_resource_flavor,
        b.resource_flavor(node_labels={"@abc": "foo"}),
        None,
        {},
        "spec.nodeLabels[@abc]",
        'invalid label key "@abc": …',
        "RF-2",
    ),
    (
        33,
        validate_resource_flavor,
        b.resource_flavor(taints=[{"key": "spot"}]),
        None,
        {},
        "spec.nodeTaints[0].effect",
        "required: use NoSchedule, PreferNoSchedule or NoExecute",
        "RF-7",
    ),
    (
        34,
        validate_resource_flavor,
        b.resource_flavor(taints=[{"key": "spot", "effect": "NoSchedule"}] * 2),
        None,
        {},
        "spec.nodeTaints[1]",
        'duplicate taint "spot:NoSchedule": taints must be unique by key and effect',
        "RF-9",
    ),
    (
        35,
        validate_resource_flavor,
        b.resource_flavor(tolerations=[{"key": "abc", "operator": "Exists", "value": "v"}]),
        None,
        {},
        "spec.tolerations[0].value",
        "must be empty when operator is Exists",
        "RF-14",
    ),
    (
        36,
        validate_resource_flavor,
        b.resource_flavor(topology="default"),
        None,
        {},
        "spec.nodeLabels",
        "a flavor with a topologyName needs at least one node label",
        "RF-18",
    ),
    (
        37,
        validate_resource_flavor,
        b.resource_flavor(node_labels={"a": "b"}, topology="b"),
        b.resource_flavor(node_labels={"a": "b"}, topology="a"),
        {},
        "spec.topologyName",
        'is immutable once set; it was "a"',
        "RF-19",
    ),
    (
        38,
        validate_local_queue,
        b.local_queue(cluster_queue="bar"),
        b.local_queue(cluster_queue="foo"),
        {},
        "spec.clusterQueue",
        'is immutable; it was "foo": create a new LocalQueue to point at another ClusterQueue',
        "LQ-2",
    ),
    (
        39,
        validate_local_queue,
        b.local_queue(cluster_queue="invalid_name"),
        None,
        {},
        "spec.clusterQueue",
        '"invalid_name" is not a valid name: …',
        "LQ-1",
    ),
    (
        40,
        validate_cohort,
        b.cohort(groups=[b.group(["cpu"], b.flavor("a", q("cpu", lending=1)))]),
        None,
        {},
        f"{R0}.lendingLimit",
        "a lending limit needs a parent cohort: set spec.parentName or remove lendingLimit",
        "CO-5",
    ),
    (
        41,
        validate_workload,
        b.workload(pod_sets=[b.pod_set(), b.pod_set()]),
        None,
        {},
        "spec.podSets[1].name",
        'duplicate pod set name "main"; give every pod set its own name (an unnamed pod set is '
        "called main)",
        "WL-4",
    ),
    (
        42,
        validate_workload,
        b.workload(pod_sets=[b.pod_set(count=3, min_count=5)]),
        None,
        {},
        "spec.podSets[0].minCount",
        "must be less than or equal to count (3)",
        "WL-8",
    ),
    (
        43,
        validate_workload,
        b.workload(pod_sets=[b.pod_set(requests={"pods": 1})]),
        None,
        {},
        "spec.podSets[0].template.spec.containers[0].resources.requests[pods]",
        'the resource name "pods" is reserved: …',
        "WL-11",
    ),
    (
        44,
        validate_workload,
        b.workload(
            priorityClassRef={
                "group": "kueue.x-k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": "high",
            }
        ),
        None,
        {},
        "spec.priority",
        "required when priorityClassRef is set: copy the class's value here",
        "WL-17",
    ),
    (
        45,
        validate_workload,
        b.workload(
            priorityClassRef={
                "group": "scheduling.k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": "high",
            },
            priority=1,
        ),
        None,
        {},
        "spec.priorityClassRef.kind",
        "kind WorkloadPriorityClass does not belong to group scheduling.k8s.io: …",
        "WL-16",
    ),
    (
        46,
        validate_workload,
        b.with_spec(RESERVED_A, queueName="b"),
        RESERVED_A,
        {},
        "spec.queueName",
        'cannot change while the workload holds a quota reservation; it was "a"',
        "WL-52",
    ),
    (
        47,
        validate_workload,
        b.with_spec(RESERVED_3, podSets=[b.pod_set(count=4)]),
        RESERVED_3,
        {},
        "spec.podSets[0]",
        'pod set "main" cannot change while the workload holds a quota reservation',
        "WL-51",
    ),
    (
        48,
        validate_workload,
        b.with_status(b.workload(), conditions=[b.condition("QuotaReserved")]),
        None,
        {},
        "status.admission",
        "required while the QuotaReserved condition is True: …",
        "WL-30",
    ),
    (
        49,
        validate_workload,
        b.reserved(
            b.workload(pod_sets=[b.pod_set(count=2)]),
            assignments=[{"name": "main", "count": 2, "resourceUsage": {"nvidia.com/gpu": "3"}}],
        ),
        None,
        {},
        "status.admission.podSetAssignments[0].resourceUsage[nvidia.com/gpu]",
        "3 is not a multiple of count 2; resourceUsage is the per-pod usage times count",
        "WL-33",
    ),
    (
        50,
        validate_workload_priority_class,
        b.priority_class(value=None),
        None,
        {},
        "value",
        "required: give the priority as an integer",
        "WPC-1",
    ),
    (
        51,
        validate_admission_check,
        b.admission_check(controller="example.com/other"),
        b.admission_check(),
        {},
        "spec.controllerName",
        'is immutable; it was "kueue.x-k8s.io/multikueue"',
        "AC-2",
    ),
    (
        52,
        validate_multikueue_cluster,
        b.multikueue_cluster(
            source={"kubeConfig": {"location": "s"}, "clusterProfileRef": {"name": "p"}}
        ),
        None,
        {},
        "spec.clusterSource",
        "set exactly one of kubeConfig or clusterProfileRef",
        "MKCL-1",
    ),
    (
        53,
        validate_job,
        b.job(queue="Team_A"),
        None,
        {},
        "metadata.labels[kueue.x-k8s.io/queue-name]",
        '"Team_A" is not a valid LocalQueue name: …',
        "JOB-1",
    ),
    (
        54,
        validate_job,
        b.job(queue="b", suspend=False),
        b.job(queue="a", suspend=False),
        {},
        "metadata.labels[kueue.x-k8s.io/queue-name]",
        "cannot change while the job is running (not suspended); suspend the job first",
        "JOB-U1",
    ),
    (
        55,
        validate_job,
        b.job(),
        b.job(queue="a"),
        {"namespace_has_default_queue": True},
        "metadata.labels[kueue.x-k8s.io/queue-name]",
        'must not be removed in a namespace with a "default" LocalQueue',
        "JOB-U2",
    ),
    (
        56,
        validate_job,
        b.job(suspend=False, labels={"kueue.x-k8s.io/priority-class": "high"}),
        b.job(suspend=False),
        {},
        "metadata.labels[kueue.x-k8s.io/priority-class]",
        "a WorkloadPriorityClass cannot be added to a running (not suspended) job",
        "JOB-U3",
    ),
    (
        57,
        validate_job,
        b.job(labels={"kueue.x-k8s.io/max-exec-time-seconds": "0"}),
        None,
        {},
        "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]",
        "must be greater than 0",
        "JOB-4",
    ),
    (
        58,
        validate_job,
        b.job(parallelism=4, annotations={"kueue.x-k8s.io/job-min-parallelism": "5"}),
        None,
        {},
        "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]",
        "must be between 1 and 3 (the job runs 4 pods)",
        "JOB-6",
    ),
    (
        65,
        validate_configuration,
        b.configuration(fairSharing={}),
        None,
        {},
        "fairSharing.preemptionStrategies",
        "required: use [LessThanOrEqualToFinalShare], [LessThanInitialShare] or "
        "[LessThanOrEqualToFinalShare, LessThanInitialShare]",
        "CFG-10",
    ),
    (
        66,
        validate_configuration,
        b.configuration(
            fairSharing={
                "preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]
            }
        ),
        None,
        {},
        "fairSharing.preemptionStrategies",
        "unsupported list …",
        "CFG-11",
    ),
    (
        67,
        validate_configuration,
        b.configuration(resources={"transformations": [{"input": "cpu"}, {"input": "cpu"}]}),
        None,
        {},
        "resources.transformations[1].input",
        'duplicate transformation input "cpu"',
        "CFG-14",
    ),
    (
        68,
        validate_configuration,
        b.configuration(managedJobsNamespaceSelector={}),
        None,
        {},
        "managedJobsNamespaceSelector",
        'must not select the "kube-system" namespace',
        "CFG-6",
    ),
]


@pytest.mark.parametrize(
    ("number", "validator", "new", "old", "options", "path", "message", "rule"),
    INVALID,
    ids=[f"#{case[0]}" for case in INVALID],
)
def test_section_16_invalid_example(
    number: int,
    validator: Callable[..., Any],
    new: dict,
    old: dict | None,
    options: dict,
    path: str,
    message: str,
    rule: str,
) -> None:
    errors = validator(new, old, **options)
    matching = [item for item in errors if item.field == path and item.rule == rule]
    assert matching, (
        f"#{number}: nothing at {path} for {rule}: {[item.render() for item in errors]}"
    )
    if message.endswith(MORE):
        assert matching[0].message.startswith(message[: -len(MORE)].rstrip())
    else:
        assert matching[0].message == message


CQ_NOMINAL_ZERO = cq_with(q("cpu", 0), cohort="c")
WORKLOAD_WPC = b.reserved(
    b.workload(
        priorityClassRef={
            "group": "kueue.x-k8s.io",
            "kind": "WorkloadPriorityClass",
            "name": "high",
        },
        priority=1,
    )
)

VALID: list[tuple[str, Callable[..., Any], dict, dict | None]] = [
    ("V1", CQ, {"apiVersion": b.KUEUE, "kind": "ClusterQueue", "metadata": {"name": "cq"}}, None),
    ("V2", CQ, CQ_NOMINAL_ZERO, None),
    (
        "V3",
        CQ,
        cq_with(q("cpu", 4, borrowing=0, lending=0), q("nvidia.com/gpu", 2, lending=2), cohort="c"),
        None,
    ),
    (
        "V4",
        validate_cohort,
        b.cohort(parent="root", groups=[b.group(["cpu"], b.flavor("a", q("cpu", 1, lending=2)))]),
        None,
    ),
    ("V5", CQ, cq_with(fairSharing={"weight": 0}), None),
    ("V5", CQ, cq_with(fairSharing={"weight": "0.1"}), None),
    ("V5", CQ, cq_with(fairSharing={"weight": "1m"}), None),
    ("V5", CQ, cq_with(fairSharing={"weight": "2n"}), None),
    (
        "V6",
        CQ,
        b.cluster_queue(
            groups=[
                b.group(
                    ["pods", "cpu_credits", "example.com/gpu", "nvidia.com/gpu"],
                    b.flavor(
                        "a", q("pods"), q("cpu_credits"), q("example.com/gpu"), q("nvidia.com/gpu")
                    ),
                )
            ]
        ),
        None,
    ),
    (
        "V7",
        CQ,
        cq_with(
            preemption={
                "reclaimWithinCohort": "Any",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
                "withinClusterQueue": "LowerPriority",
            }
        ),
        None,
    ),
    (
        "V7",
        CQ,
        cq_with(
            preemption={"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "Never"}}
        ),
        None,
    ),
    ("V7", CQ, cq_with(preemption={"reclaimWithinCohort": "Never"}), None),
    (
        "V8",
        CQ,
        cq_with(
            flavorFungibility={
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "BorrowingOverPreemption",
            }
        ),
        None,
    ),
    ("V9", CQ, cq_with(queueingStrategy=""), None),
    (
        "V10",
        CQ,
        b.cluster_queue(
            groups=flavor_group("no-such-flavor"),
            cohort="no-such-cohort",
            admission_checks=[{"name": "no-such-check"}],
        ),
        None,
    ),
    ("V10", validate_local_queue, b.local_queue(cluster_queue="no-such-queue"), None),
    (
        "V11",
        validate_resource_flavor,
        {"apiVersion": b.KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "rf"}, "spec": {}},
        None,
    ),
    (
        "V11",
        validate_resource_flavor,
        b.resource_flavor(
            node_labels={f"k{n}": "v" for n in range(8)},
            taints=[{"key": f"t{n}", "effect": "NoSchedule"} for n in range(8)],
        ),
        None,
    ),
    (
        "V11",
        validate_resource_flavor,
        b.resource_flavor(
            taints=[{"key": "spot", "effect": "NoSchedule"}, {"key": "spot", "effect": "NoExecute"}]
        ),
        None,
    ),
    (
        "V12",
        validate_resource_flavor,
        b.resource_flavor(node_labels={"a": "c"}, taints=[{"key": "x", "effect": "NoSchedule"}]),
        b.resource_flavor(node_labels={"a": "b"}),
    ),
    ("V13", validate_workload, b.workload(pod_sets=[b.pod_set(count=0)]), None),
    ("V13", validate_workload, b.workload(pod_sets=[b.pod_set()]), None),
    ("V14", validate_workload, b.with_spec(RESERVED_3, priority=99), RESERVED_3),
    (
        "V14",
        validate_workload,
        b.with_spec(
            WORKLOAD_WPC,
            priorityClassRef={
                "group": "kueue.x-k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": "low",
            },
        ),
        WORKLOAD_WPC,
    ),
    ("V15", validate_workload, b.workload(queueName="b"), b.workload(queueName="a")),
    ("V19", validate_job, b.job(queue="b"), b.job(queue="a")),
    (
        "V19",
        validate_job,
        b.job(suspend=False, labels={"kueue.x-k8s.io/priority-class": "low"}),
        b.job(suspend=False, labels={"kueue.x-k8s.io/priority-class": "high"}),
    ),
    ("V20", validate_job, b.job(queue="q", suspend=False), None),
]


@pytest.mark.parametrize(
    ("number", "validator", "new", "old"), VALID, ids=[case[0] for case in VALID]
)
def test_section_17_valid_edge_case(
    number: str, validator: Callable[..., Any], new: dict, old: dict | None
) -> None:
    assert validator(new, old) == []


# Seeds: every v1beta2 manifest is meant to be valid, except the borrowing-limit example that
# gives no memory quota (see
# docs/api-differences.md#examples-from-kueues-documentation-that-kuota-rejects).
KNOWN_INVALID_SEEDS = {("ClusterQueue", "team-a-cq", ("CQ-12",))}
SEED_DOCS = [doc for doc in documents() if (doc.api_version, doc.kind) in VALIDATORS]


def test_seeds_hold_v1beta2_examples() -> None:
    assert len(SEED_DOCS) >= 15


@pytest.mark.parametrize(
    "doc", SEED_DOCS, ids=[f"{doc.source}:{doc.line}:{doc.kind}" for doc in SEED_DOCS]
)
def test_seed_example(doc: Any) -> None:
    errors = validate(copy.deepcopy(doc.raw))
    name = (doc.raw.get("metadata") or {}).get("name")
    if errors:
        assert (doc.kind, name, tuple(item.rule for item in errors)) in KNOWN_INVALID_SEEDS, [
            item.render() for item in errors
        ]


def test_exactly_one_seed_is_the_documented_invalid_example() -> None:
    invalid = [doc for doc in SEED_DOCS if validate(doc.raw)]
    assert len(invalid) == 1
    assert "borrowingLimit" in str(invalid[0].raw)


def test_validate_rejects_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="cannot validate"):
        validate({"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "ClusterQueue"})
    with pytest.raises(ValueError):
        validate({"apiVersion": "v1", "kind": "Pod"})


# --- every rule has tests ---------------------------------------------------------------

# CQ-V3 is a v1beta1 input rule, checked by the conversion layer before v1beta2 validation.
NOT_OURS = {"CQ-V3"}


def _documented_rules() -> set[str]:
    text = SPEC_FILE.read_text(encoding="utf-8")
    body = text[text.index("## 3. ClusterQueue") : text.index("## 14. Legacy rules")]
    return (
        set(
            re.findall(
                r"^\| ((?:CQ|RF|LQ|CO|WL|WPC|AC|MKC|MKCL|TOPO|JOB|CFG)-[A-Z]?\d+) \|",
                body,
                re.MULTILINE,
            )
        )
        - NOT_OURS
    )


def _tested(attribute_names: tuple[str, ...]) -> set[str]:
    rules: set[str] = set()
    for module in (cq_tests, cfg_tests, job_tests, queue_tests, wl_tests):
        for name in attribute_names:
            for case in getattr(module, name, []):
                rules.add(case.rule)
    for _, failing, passing in small_tests.CASES:
        for case in failing if "FAILING" in attribute_names[0] else passing:
            rules.add(case.rule)
    return rules


def test_every_documented_rule_has_a_failing_case() -> None:
    documented = _documented_rules()
    assert len(documented) > 150
    no_failure_possible = {
        "CO-3",
        "CO-6",
        "CO-7",
        "CO-8",
    }  # CO-3/CO-8 are tested through the CQ rule ids they reuse
    missing = (
        documented
        - no_failure_possible
        - _tested(("FAILING", "RF_FAILING", "LQ_FAILING", "CO_FAILING"))
    )
    assert not missing, sorted(missing)


def test_every_documented_rule_has_a_passing_case() -> None:
    passing_elsewhere = {
        "CQ-V2",
        "CQ-V4",
        "CFG-3",
        "CFG-9",
        "CFG-14",
        "CFG-17",
        "CFG-20",
    }  # any valid object passes these
    missing = (
        _documented_rules()
        - passing_elsewhere
        - _tested(("PASSING", "RF_PASSING", "LQ_PASSING", "CO_PASSING"))
    )
    assert not missing, sorted(missing)
