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
from tests.api.seed_examples import documents
from tests.builders import (
    KUEUE,
    admission_check,
    cluster_queue,
    cohort,
    condition,
    configuration,
    flavor_quotas,
    local_queue,
    multikueue_cluster,
    pod_set,
    resource_flavor,
    resource_group,
    workload_priority_class,
)
from tests.jobs import test_validation_job as job_tests

WHEN = "2025-01-01T00:00:00Z"  # every condition's time

SPEC_FILE = Path(__file__).resolve().parents[1] / "reference" / "validation.md"
CQ = validate_cluster_queue
R0 = "spec.resourceGroups[0].flavors[0].resources[0]"
MORE = "…"  # the spec abbreviates a message's generic tail; compare up to here


RESERVED_3 = (
    wl_tests.wl()
    .pod_sets(pod_set(None, 3, cpu="1"))
    .reserve_quota("cq", flavor="alpha", at=WHEN, message="")
)
RESERVED_A = wl_tests.wl().queue("a").reserve_quota("cq", flavor="alpha", at=WHEN, message="")

# (number, validator, new, old, options, path, message (full, or prefix ending in …), rule)
INVALID: list[tuple[int, Callable[..., Any], dict, dict | None, dict, str, str, str]] = [
    (
        1,
        CQ,
        cluster_queue().resource_group(covered=["cpu"]).build(),
        None,
        {},
        "spec.resourceGroups[0].flavors",
        "must list at least 1 flavor",
        "CQ-6",
    ),
    (
        2,
        CQ,
        cluster_queue()
        .cohort("team-ab")
        .resource_group(
            flavor_quotas("default-flavor").resource("cpu", 9, borrowing_limit=1),
            covered=["cpu", "memory"],
        )
        .build(),
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
        cluster_queue()
        .resource_group(
            flavor_quotas("alpha", cpu="1", memory="1"), flavor_quotas("beta", memory="1", cpu="1")
        )
        .build(),
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
        cluster_queue()
        .resource_group(flavor_quotas("spot", cpu="1"))
        .resource_group(flavor_quotas("spot", gpu="1"))
        .build(),
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
        cluster_queue()
        .resource_group(flavor_quotas("a", cpu="1", memory="1"))
        .resource_group(flavor_quotas("b", memory="1"))
        .build(),
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
        cluster_queue().resource_group(flavor_quotas("alpha", cpu=-1)).build(),
        None,
        {},
        f"{R0}.nominalQuota",
        "must be greater than or equal to 0, got -1",
        "CQ-17",
    ),
    (
        7,
        CQ,
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="ten")).build(),
        None,
        {},
        f"{R0}.nominalQuota",
        '"ten" is not a valid quantity (examples: 9, 500m, 36Gi)',
        "CQ-16",
    ),
    (
        8,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", borrowing_limit=0))
        .build(),
        None,
        {},
        f"{R0}.borrowingLimit",
        "a borrowing limit needs a cohort: set spec.cohortName or remove borrowingLimit",
        "CQ-18",
    ),
    (
        9,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", lending_limit=1))
        .build(),
        None,
        {},
        f"{R0}.lendingLimit",
        "a lending limit needs a cohort: set spec.cohortName or remove lendingLimit",
        "CQ-21",
    ),
    (
        10,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", 1, lending_limit=2))
        .cohort("c")
        .build(),
        None,
        {},
        f"{R0}.lendingLimit",
        "must be less than or equal to nominalQuota (1); a queue cannot lend more than it owns",
        "CQ-22",
    ),
    (
        11,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", borrowing_limit=-1))
        .cohort("c")
        .build(),
        None,
        {},
        f"{R0}.borrowingLimit",
        "must be greater than or equal to 0, got -1",
        "CQ-19",
    ),
    (
        12,
        CQ,
        cluster_queue().resource_group(flavor_quotas("invalid_name", cpu="1")).build(),
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
        cluster_queue().resource_group(flavor_quotas("a").resource("@cpu")).build(),
        None,
        {},
        "spec.resourceGroups[0].coveredResources[0]",
        '"@cpu" is not a valid resource name: …',
        "CQ-4",
    ),
    (
        14,
        CQ,
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).cohort("@prod").build(),
        None,
        {},
        "spec.cohortName",
        '"@prod" is not a valid name: …',
        "CQ-26",
    ),
    (
        15,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .queueing_strategy("FIFO")
        .build(),
        None,
        {},
        "spec.queueingStrategy",
        'unsupported value "FIFO": use one of StrictFIFO, BestEffortFIFO',
        "CQ-27",
    ),
    (
        16,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(reclaimWithinCohort="Never", borrowWithinCohort={"policy": "LowerPriority"})
        .build(),
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(borrowWithinCohort={"policy": "LowerPriority"})
        .build(),
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(withinClusterQueue="Any")
        .build(),
        None,
        {},
        "spec.preemption.withinClusterQueue",
        'unsupported value "Any": use one of Never, LowerPriority, LowerOrNewerEqualPriority',
        "CQ-29",
    ),
    (
        19,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(flavorFungibility={"preference": "PreemptionOverBorrowing"})
        .build(),
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(flavorFungibility={"whenCanBorrow": "Borrow"})
        .build(),
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .stop_policy("Drain")
        .build(),
        None,
        {},
        "spec.stopPolicy",
        'unsupported value "Drain": use one of None, Hold, HoldAndDrain',
        "CQ-34",
    ),
    (
        22,
        CQ,
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight(-1).build(),
        None,
        {},
        "spec.fairSharing.weight",
        "must be greater than or equal to 0, got -1",
        "CQ-36",
    ),
    (
        23,
        CQ,
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight("1n").build(),
        None,
        {},
        "spec.fairSharing.weight",
        "weight 1n is too small to be used: set 0, or a value greater than 1n (0.000000001)",
        "CQ-37",
    ),
    (
        24,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .namespace_selector({"matchLabels": {"nospecialchars^=@": "bar"}})
        .build(),
        None,
        {},
        "spec.namespaceSelector.matchLabels",
        'invalid label key "nospecialchars^=@": …',
        "CQ-28",
    ),
    (
        25,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .namespace_selector({"matchExpressions": [{"key": "team", "operator": "In"}]})
        .build(),
        None,
        {},
        "spec.namespaceSelector.matchExpressions[0].values",
        "must list at least one value when operator is In",
        "CQ-28",
    ),
    (
        26,
        CQ,
        cluster_queue()
        .resource_groups(
            *[
                resource_group(flavor_quotas(f"f{n}").resource(f"r{n}"), covered=[f"r{n}"])
                for n in range(17)
            ]
        )
        .build(),
        None,
        {},
        "spec.resourceGroups",
        "has 17 items; at most 16 are allowed",
        "CQ-1",
    ),
    (
        27,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
            admissionChecksStrategy={"admissionChecks": [{"name": "prov", "onFlavors": ["ghost"]}]}
        )
        .build(),
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(admissionChecksStrategy={"admissionChecks": []})
        .build(),
        None,
        {},
        "spec.admissionChecksStrategy.admissionChecks",
        "must list at least 1 admission check (or remove admissionChecksStrategy)",
        "CQ-38",
    ),
    (
        29,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(cohort="team-ab")
        .build(),
        None,
        {},
        "spec.cohort",
        'unknown field "cohort"; v1beta2 calls it spec.cohortName',
        "CQ-V1",
    ),
    (
        30,
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(concurrentAdmissionPolicy={"migration": {"mode": "TryPreferredFlavors"}})
        .build(),
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).build(),
        {},
        "spec.concurrentAdmissionPolicy",
        "is immutable: it can only be set when the ClusterQueue is created",
        "CQ-44",
    ),
    (
        31,
        validate_resource_flavor,
        resource_flavor("rf").node_labels({f"k{n}": "v" for n in range(9)}).build(),
        None,
        {},
        "spec.nodeLabels",
        "has 9 items; at most 8 are allowed",
        "RF-1",
    ),
    (
        32,
        validate_resource_flavor,
        resource_flavor("rf").node_labels({"@abc": "foo"}).build(),
        None,
        {},
        "spec.nodeLabels[@abc]",
        'invalid label key "@abc": …',
        "RF-2",
    ),
    (
        33,
        validate_resource_flavor,
        resource_flavor("rf").spec(nodeTaints=[{"key": "spot"}]).build(),
        None,
        {},
        "spec.nodeTaints[0].effect",
        "required: use NoSchedule, PreferNoSchedule or NoExecute",
        "RF-7",
    ),
    (
        34,
        validate_resource_flavor,
        resource_flavor("rf")
        .spec(nodeTaints=[{"key": "spot", "effect": "NoSchedule"}] * 2)
        .build(),
        None,
        {},
        "spec.nodeTaints[1]",
        'duplicate taint "spot:NoSchedule": taints must be unique by key and effect',
        "RF-9",
    ),
    (
        35,
        validate_resource_flavor,
        resource_flavor("rf")
        .spec(tolerations=[{"key": "abc", "operator": "Exists", "value": "v"}])
        .build(),
        None,
        {},
        "spec.tolerations[0].value",
        "must be empty when operator is Exists",
        "RF-14",
    ),
    (
        36,
        validate_resource_flavor,
        resource_flavor("rf").topology("default").build(),
        None,
        {},
        "spec.nodeLabels",
        "a flavor with a topologyName needs at least one node label",
        "RF-18",
    ),
    (
        37,
        validate_resource_flavor,
        resource_flavor("rf").node_labels({"a": "b"}).topology("b").build(),
        resource_flavor("rf").node_labels({"a": "b"}).topology("a").build(),
        {},
        "spec.topologyName",
        'is immutable once set; it was "a"',
        "RF-19",
    ),
    (
        38,
        validate_local_queue,
        local_queue().cluster_queue("bar").build(),
        local_queue().cluster_queue("foo").build(),
        {},
        "spec.clusterQueue",
        'is immutable; it was "foo": create a new LocalQueue to point at another ClusterQueue',
        "LQ-2",
    ),
    (
        39,
        validate_local_queue,
        local_queue().cluster_queue("invalid_name").build(),
        None,
        {},
        "spec.clusterQueue",
        '"invalid_name" is not a valid name: …',
        "LQ-1",
    ),
    (
        40,
        validate_cohort,
        cohort("co").resource_group(flavor_quotas("a").resource("cpu", lending_limit=1)).build(),
        None,
        {},
        f"{R0}.lendingLimit",
        "a lending limit needs a parent cohort: set spec.parentName or remove lendingLimit",
        "CO-5",
    ),
    (
        41,
        validate_workload,
        wl_tests.wl().pod_sets(pod_set(None, None, cpu="1"), pod_set(None, None, cpu="1")).build(),
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
        wl_tests.wl().pod_sets(pod_set(None, 3, cpu="1").min_count(5)).build(),
        None,
        {},
        "spec.podSets[0].minCount",
        "must be less than or equal to count (3)",
        "WL-8",
    ),
    (
        43,
        validate_workload,
        wl_tests.wl().pod_sets(pod_set(None, None, pods=1)).build(),
        None,
        {},
        "spec.podSets[0].template.spec.containers[0].resources.requests[pods]",
        'the resource name "pods" is reserved: …',
        "WL-11",
    ),
    (
        44,
        validate_workload,
        wl_tests.wl()
        .spec(
            priorityClassRef={
                "group": "kueue.x-k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": "high",
            }
        )
        .build(),
        None,
        {},
        "spec.priority",
        "required when priorityClassRef is set: copy the class's value here",
        "WL-17",
    ),
    (
        45,
        validate_workload,
        wl_tests.wl()
        .priority(1)
        .spec(
            priorityClassRef={
                "group": "scheduling.k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": "high",
            }
        )
        .build(),
        None,
        {},
        "spec.priorityClassRef.kind",
        "kind WorkloadPriorityClass does not belong to group scheduling.k8s.io: …",
        "WL-16",
    ),
    (
        46,
        validate_workload,
        RESERVED_A.copy().spec(queueName="b").build(),
        RESERVED_A.build(),
        {},
        "spec.queueName",
        'cannot change while the workload holds a quota reservation; it was "a"',
        "WL-52",
    ),
    (
        47,
        validate_workload,
        RESERVED_3.copy().spec(podSets=[pod_set(None, 4, cpu="1").build()]).build(),
        RESERVED_3.build(),
        {},
        "spec.podSets[0]",
        'pod set "main" cannot change while the workload holds a quota reservation',
        "WL-51",
    ),
    (
        48,
        validate_workload,
        wl_tests.wl().status(conditions=[condition("QuotaReserved", at=WHEN)]).build(),
        None,
        {},
        "status.admission",
        "required while the QuotaReserved condition is True: …",
        "WL-30",
    ),
    (
        49,
        validate_workload,
        wl_tests.wl()
        .pod_sets(pod_set(None, 2, cpu="1"))
        .reserve_quota(
            "cq",
            {"name": "main", "count": 2, "resourceUsage": {"nvidia.com/gpu": "3"}},
            at=WHEN,
            message="",
        )
        .build(),
        None,
        {},
        "status.admission.podSetAssignments[0].resourceUsage[nvidia.com/gpu]",
        "3 is not a multiple of count 2; resourceUsage is the per-pod usage times count",
        "WL-33",
    ),
    (
        50,
        validate_workload_priority_class,
        workload_priority_class("high").build(),
        None,
        {},
        "value",
        "required: give the priority as an integer",
        "WPC-1",
    ),
    (
        51,
        validate_admission_check,
        admission_check("ac", "example.com/other").build(),
        admission_check("ac", "kueue.x-k8s.io/multikueue").build(),
        {},
        "spec.controllerName",
        'is immutable; it was "kueue.x-k8s.io/multikueue"',
        "AC-2",
    ),
    (
        52,
        validate_multikueue_cluster,
        multikueue_cluster("worker")
        .spec(clusterSource={"kubeConfig": {"location": "s"}, "clusterProfileRef": {"name": "p"}})
        .build(),
        None,
        {},
        "spec.clusterSource",
        "set exactly one of kubeConfig or clusterProfileRef",
        "MKCL-1",
    ),
    (
        53,
        validate_job,
        job_tests.user_job().queue("Team_A").build(),
        None,
        {},
        "metadata.labels[kueue.x-k8s.io/queue-name]",
        '"Team_A" is not a valid LocalQueue name: …',
        "JOB-1",
    ),
    (
        54,
        validate_job,
        job_tests.user_job().queue("b").suspend(False).build(),
        job_tests.user_job().queue("a").suspend(False).build(),
        {},
        "metadata.labels[kueue.x-k8s.io/queue-name]",
        "cannot change while the job is running (not suspended); suspend the job first",
        "JOB-U1",
    ),
    (
        55,
        validate_job,
        job_tests.user_job().build(),
        job_tests.user_job().queue("a").build(),
        {"namespace_has_default_queue": True},
        "metadata.labels[kueue.x-k8s.io/queue-name]",
        'must not be removed in a namespace with a "default" LocalQueue',
        "JOB-U2",
    ),
    (
        56,
        validate_job,
        job_tests.user_job()
        .labels({"kueue.x-k8s.io/priority-class": "high"})
        .suspend(False)
        .build(),
        job_tests.user_job().suspend(False).build(),
        {},
        "metadata.labels[kueue.x-k8s.io/priority-class]",
        "a WorkloadPriorityClass cannot be added to a running (not suspended) job",
        "JOB-U3",
    ),
    (
        57,
        validate_job,
        job_tests.user_job().labels({"kueue.x-k8s.io/max-exec-time-seconds": "0"}).build(),
        None,
        {},
        "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]",
        "must be greater than 0",
        "JOB-4",
    ),
    (
        58,
        validate_job,
        job_tests.user_job()
        .parallelism(4)
        .annotations({"kueue.x-k8s.io/job-min-parallelism": "5"})
        .build(),
        None,
        {},
        "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]",
        "must be between 1 and 3 (the job runs 4 pods)",
        "JOB-6",
    ),
    (
        65,
        validate_configuration,
        configuration().set(fairSharing={}).build(),
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
        configuration()
        .set(
            fairSharing={
                "preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]
            }
        )
        .build(),
        None,
        {},
        "fairSharing.preemptionStrategies",
        "unsupported list …",
        "CFG-11",
    ),
    (
        67,
        validate_configuration,
        configuration()
        .set(resources={"transformations": [{"input": "cpu"}, {"input": "cpu"}]})
        .build(),
        None,
        {},
        "resources.transformations[1].input",
        'duplicate transformation input "cpu"',
        "CFG-14",
    ),
    (
        68,
        validate_configuration,
        configuration().set(managedJobsNamespaceSelector={}).build(),
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


CQ_NOMINAL_ZERO = cluster_queue().resource_group(flavor_quotas("alpha", cpu=0)).cohort("c")
WORKLOAD_WPC = (
    wl_tests.wl()
    .priority(1)
    .spec(
        priorityClassRef={
            "group": "kueue.x-k8s.io",
            "kind": "WorkloadPriorityClass",
            "name": "high",
        }
    )
    .reserve_quota("cq", flavor="alpha", at=WHEN, message="")
)

VALID: list[tuple[str, Callable[..., Any], dict, dict | None]] = [
    ("V1", CQ, {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "cq"}}, None),
    ("V2", CQ, CQ_NOMINAL_ZERO.build(), None),
    (
        "V3",
        CQ,
        cluster_queue()
        .resource_group(
            flavor_quotas("alpha")
            .resource("cpu", 4, borrowing_limit=0, lending_limit=0)
            .resource("nvidia.com/gpu", 2, lending_limit=2)
        )
        .cohort("c")
        .build(),
        None,
    ),
    (
        "V4",
        validate_cohort,
        cohort("co")
        .parent("root")
        .resource_group(flavor_quotas("a").resource("cpu", 1, lending_limit=2))
        .build(),
        None,
    ),
    (
        "V5",
        CQ,
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight(0).build(),
        None,
    ),
    (
        "V5",
        CQ,
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight("0.1").build(),
        None,
    ),
    (
        "V5",
        CQ,
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight("1m").build(),
        None,
    ),
    (
        "V5",
        CQ,
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight("2n").build(),
        None,
    ),
    (
        "V6",
        CQ,
        cluster_queue()
        .resource_group(
            flavor_quotas("a")
            .resource("pods")
            .resource("cpu_credits")
            .resource("example.com/gpu")
            .resource("nvidia.com/gpu")
        )
        .build(),
        None,
    ),
    (
        "V7",
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(
            reclaimWithinCohort="Any",
            borrowWithinCohort={"policy": "LowerPriority", "maxPriorityThreshold": 100},
            withinClusterQueue="LowerPriority",
        )
        .build(),
        None,
    ),
    (
        "V7",
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(reclaimWithinCohort="Never", borrowWithinCohort={"policy": "Never"})
        .build(),
        None,
    ),
    (
        "V7",
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(reclaimWithinCohort="Never")
        .build(),
        None,
    ),
    (
        "V8",
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
            flavorFungibility={
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "BorrowingOverPreemption",
            }
        )
        .build(),
        None,
    ),
    (
        "V9",
        CQ,
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .queueing_strategy("")
        .build(),
        None,
    ),
    (
        "V10",
        CQ,
        cluster_queue()
        .cohort("no-such-cohort")
        .resource_group(flavor_quotas("no-such-flavor", cpu="1"))
        .admission_checks("no-such-check")
        .build(),
        None,
    ),
    ("V10", validate_local_queue, local_queue().cluster_queue("no-such-queue").build(), None),
    (
        "V11",
        validate_resource_flavor,
        {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "rf"}, "spec": {}},
        None,
    ),
    (
        "V11",
        validate_resource_flavor,
        resource_flavor("rf")
        .node_labels({f"k{n}": "v" for n in range(8)})
        .spec(nodeTaints=[{"key": f"t{n}", "effect": "NoSchedule"} for n in range(8)])
        .build(),
        None,
    ),
    (
        "V11",
        validate_resource_flavor,
        resource_flavor("rf")
        .spec(
            nodeTaints=[
                {"key": "spot", "effect": "NoSchedule"},
                {"key": "spot", "effect": "NoExecute"},
            ]
        )
        .build(),
        None,
    ),
    (
        "V12",
        validate_resource_flavor,
        resource_flavor("rf")
        .node_labels({"a": "c"})
        .spec(nodeTaints=[{"key": "x", "effect": "NoSchedule"}])
        .build(),
        resource_flavor("rf").node_labels({"a": "b"}).build(),
    ),
    (
        "V13",
        validate_workload,
        wl_tests.wl().pod_sets(pod_set(None, 0, cpu="1")).build(),
        None,
    ),
    (
        "V13",
        validate_workload,
        wl_tests.wl().pod_sets(pod_set(None, None, cpu="1")).build(),
        None,
    ),
    ("V14", validate_workload, RESERVED_3.copy().spec(priority=99).build(), RESERVED_3.build()),
    (
        "V14",
        validate_workload,
        WORKLOAD_WPC.copy()
        .spec(
            priorityClassRef={
                "group": "kueue.x-k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": "low",
            }
        )
        .build(),
        WORKLOAD_WPC.build(),
    ),
    (
        "V15",
        validate_workload,
        wl_tests.wl().queue("b").build(),
        wl_tests.wl().queue("a").build(),
    ),
    (
        "V19",
        validate_job,
        job_tests.user_job().queue("b").build(),
        job_tests.user_job().queue("a").build(),
    ),
    (
        "V19",
        validate_job,
        job_tests.user_job()
        .labels({"kueue.x-k8s.io/priority-class": "low"})
        .suspend(False)
        .build(),
        job_tests.user_job()
        .labels({"kueue.x-k8s.io/priority-class": "high"})
        .suspend(False)
        .build(),
    ),
    ("V20", validate_job, job_tests.user_job().queue("q").suspend(False).build(), None),
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
