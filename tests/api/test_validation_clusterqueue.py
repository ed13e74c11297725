"""ClusterQueue rules: one failing and one passing case per rule.

See docs/validation.md#clusterqueue.
"""

from __future__ import annotations

import pytest

from scheduler.api.validation import validate_cluster_queue
from tests.api import validation_builders as b
from tests.api.validation_builders import bad, good
from tests.api.validation_builders import quota as q

G0 = "spec.resourceGroups[0]"
R0 = f"{G0}.flavors[0].resources[0]"
ON = {"ConcurrentAdmission": True}


def groups_of(count: int, flavors_each: int = 1) -> list[dict]:
    """``count`` groups, each covering its own resource, ``flavors_each`` flavors each."""
    return [
        b.group([f"r{g}"], *(b.flavor(f"f{g}-{j}", q(f"r{g}")) for j in range(flavors_each)))
        for g in range(count)
    ]


def wide_group(resources: int, flavors: int = 1, prefix: str = "") -> dict:
    names = [f"{prefix}r{k}" for k in range(resources)]
    return b.group(
        names, *(b.flavor(f"{prefix}f{j}", *(q(name) for name in names)) for j in range(flavors))
    )


def with_strategy(*rules: dict, **spec: object) -> dict:
    return b.simple_cluster_queue(admissionChecksStrategy={"admissionChecks": list(rules)}, **spec)


def two_flavor_queue(**spec: object) -> dict:
    return b.cluster_queue(
        groups=[b.group(["cpu"], b.flavor("alpha", cpu="1"), b.flavor("beta", cpu="1"))], **spec
    )


POLICY = {"migration": {"mode": "TryPreferredFlavors"}}

FAILING = [
    bad(
        "CQ-1",
        b.cluster_queue(groups=groups_of(17)),
        "spec.resourceGroups",
        "has 17 items",
        "at most 16",
    ),
    bad(
        "CQ-2",
        b.cluster_queue(groups=[b.group([], b.flavor("a", cpu="1"))]),
        f"{G0}.coveredResources",
        "at least 1 resource",
    ),
    bad(
        "CQ-2",
        b.cluster_queue(groups=[{"flavors": [b.flavor("a", cpu="1")]}]),
        f"{G0}.coveredResources",
        "at least 1 resource",
    ),
    bad(
        "CQ-3",
        b.cluster_queue(groups=[wide_group(65)]),
        f"{G0}.coveredResources",
        "has 65 items",
        "at most 64",
    ),
    bad(
        "CQ-4",
        b.cluster_queue(groups=[b.group(["@cpu"], b.flavor("a", q("@cpu")))]),
        f"{G0}.coveredResources[0]",
        '"@cpu" is not a valid resource name',
    ),
    bad(
        "CQ-5",
        b.cluster_queue(groups=[b.group(["cpu", "cpu"], b.flavor("a", q("cpu"), q("cpu")))]),
        f"{G0}.coveredResources[1]",
        'resource "cpu" is listed twice in coveredResources',
    ),
    bad(
        "CQ-5",
        b.cluster_queue(
            groups=[
                b.group(["memory"], b.flavor("a", memory="1")),
                b.group(["memory"], b.flavor("b", memory="1")),
            ]
        ),
        "spec.resourceGroups[1].coveredResources[0]",
        'resource "memory" is already covered by resourceGroups[0]',
    ),
    bad(
        "CQ-6",
        b.cluster_queue(groups=[b.group(["cpu"])]),
        f"{G0}.flavors",
        "must list at least 1 flavor",
    ),
    bad(
        "CQ-7",
        b.cluster_queue(groups=groups_of(1, 65)),
        f"{G0}.flavors",
        "has 65 items",
        "at most 64",
    ),
    bad(
        "CQ-8",
        b.cluster_queue(groups=[b.group(["cpu"], b.flavor(None, cpu="1"))]),
        f"{G0}.flavors[0].name",
        "required",
    ),
    bad(
        "CQ-8",
        b.cluster_queue(groups=[b.group(["cpu"], b.flavor("invalid_name", cpu="1"))]),
        f"{G0}.flavors[0].name",
        '"invalid_name" is not a valid flavor name',
        "at most 253 lower-case",
    ),
    bad(
        "CQ-9",
        b.cluster_queue(groups=[b.group(["cpu"], b.flavor("a", cpu="1"), b.flavor("a", cpu="2"))]),
        f"{G0}.flavors[1].name",
        'flavor "a" is listed twice in this resource group',
    ),
    bad(
        "CQ-9",
        b.cluster_queue(
            groups=[
                b.group(["cpu"], b.flavor("spot", cpu="1")),
                b.group(["gpu"], b.flavor("spot", gpu="1")),
            ]
        ),
        "spec.resourceGroups[1].flavors[0].name",
        'flavor "spot" is already used by resourceGroups[0]',
    ),
    bad(
        "CQ-10",
        b.cluster_queue(groups=[b.group(["cpu"], b.flavor("a"))]),
        f"{G0}.flavors[0].resources",
        "must list at least 1 resource quota",
    ),
    bad(
        "CQ-11",
        b.cluster_queue(groups=[b.group(["r0"], b.flavor("a", *(q(f"r{k}") for k in range(65))))]),
        f"{G0}.flavors[0].resources",
        "has 65 items",
        "at most 64",
    ),
    bad(
        "CQ-12",
        b.cluster_queue(groups=[b.group(["cpu", "memory"], b.flavor("default-flavor", cpu="9"))]),
        f"{G0}.flavors[0].resources",
        'flavor "default-flavor" gives quotas for 1 resource(s) but the group covers 2 (cpu, '
        "memory)",
    ),
    bad(
        "CQ-13",
        b.cluster_queue(
            groups=[
                b.group(
                    ["cpu", "memory"],
                    b.flavor("a", cpu="1", memory="1"),
                    b.flavor("beta", memory="1", cpu="1"),
                )
            ]
        ),
        f"{G0}.flavors[1].resources[0].name",
        'expected "cpu" (coveredResources[0]) but found "memory"',
    ),
    bad(
        "CQ-14",
        b.cluster_queue(groups=[b.group(["cpu", "memory"], b.flavor("a", q("cpu"), q("cpu")))]),
        f"{G0}.flavors[0].resources[1].name",
        'duplicate resource "cpu"',
    ),
    bad(
        "CQ-15",
        b.simple_cluster_queue({"name": "cpu"}),
        f"{R0}.nominalQuota",
        "required: set the quota for this resource",
    ),
    bad(
        "CQ-16",
        b.simple_cluster_queue(q("cpu", "ten")),
        f"{R0}.nominalQuota",
        '"ten" is not a valid quantity',
        "500m",
    ),
    bad(
        "CQ-16",
        b.simple_cluster_queue(q("cpu", borrowing="1.2.3"), cohort="c"),
        f"{R0}.borrowingLimit",
        '"1.2.3" is not a valid quantity',
    ),
    bad(
        "CQ-16",
        b.simple_cluster_queue(q("cpu", lending="lots"), cohort="c"),
        f"{R0}.lendingLimit",
        '"lots" is not a valid quantity',
    ),
    bad(
        "CQ-17",
        b.simple_cluster_queue(q("cpu", -1)),
        f"{R0}.nominalQuota",
        "greater than or equal to 0, got -1",
    ),
    bad(
        "CQ-18",
        b.simple_cluster_queue(q("cpu", borrowing=0)),
        f"{R0}.borrowingLimit",
        "a borrowing limit needs a cohort",
    ),
    bad(
        "CQ-19",
        b.simple_cluster_queue(q("cpu", borrowing=-1), cohort="c"),
        f"{R0}.borrowingLimit",
        "greater than or equal to 0, got -1",
    ),
    bad(
        "CQ-20",
        b.simple_cluster_queue(q("cpu", lending="-500m"), cohort="c"),
        f"{R0}.lendingLimit",
        "got -500m",
    ),
    bad(
        "CQ-21",
        b.simple_cluster_queue(q("cpu", lending=1)),
        f"{R0}.lendingLimit",
        "a lending limit needs a cohort",
    ),
    bad(
        "CQ-22",
        b.simple_cluster_queue(q("cpu", 1, lending=2), cohort="c"),
        f"{R0}.lendingLimit",
        "less than or equal to nominalQuota (1)",
        "cannot lend more than it owns",
    ),
    bad(
        "CQ-23",
        b.cluster_queue(groups=groups_of(16, 17)),
        "spec.resourceGroups",
        "has 272 flavors in total",
        "at most 256",
    ),
    bad(
        "CQ-24",
        b.cluster_queue(groups=[wide_group(52, prefix=f"g{g}") for g in range(5)]),
        "spec.resourceGroups",
        "covers 260 resources in total",
        "at most 256",
    ),
    bad(
        "CQ-25",
        b.cluster_queue(groups=[wide_group(64, flavors=9)]),
        G0,
        "has 576 flavor/resource quota entries",
        "at most 512",
    ),
    bad(
        "CQ-26",
        b.simple_cluster_queue(cohort="@prod"),
        "spec.cohortName",
        '"@prod" is not a valid name',
    ),
    bad(
        "CQ-27",
        b.simple_cluster_queue(queueingStrategy="FIFO"),
        "spec.queueingStrategy",
        'unsupported value "FIFO": use one of StrictFIFO, BestEffortFIFO',
    ),
    bad(
        "CQ-28",
        b.simple_cluster_queue(namespaceSelector={"matchLabels": {"nospecialchars^=@": "bar"}}),
        "spec.namespaceSelector.matchLabels",
        'invalid label key "nospecialchars^=@"',
    ),
    bad(
        "CQ-28",
        b.simple_cluster_queue(
            namespaceSelector={"matchExpressions": [{"key": "team", "operator": "In"}]}
        ),
        "spec.namespaceSelector.matchExpressions[0].values",
        "at least one value when operator is In",
    ),
    bad(
        "CQ-29",
        b.simple_cluster_queue(preemption={"withinClusterQueue": "Any"}),
        "spec.preemption.withinClusterQueue",
        'unsupported value "Any": use one of Never, LowerPriority, LowerOrNewerEqualPriority',
    ),
    bad(
        "CQ-29",
        b.simple_cluster_queue(preemption={"reclaimWithinCohort": "Sometimes"}),
        "spec.preemption.reclaimWithinCohort",
        'unsupported value "Sometimes"',
    ),
    bad(
        "CQ-29",
        b.simple_cluster_queue(
            preemption={"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "Always"}}
        ),
        "spec.preemption.borrowWithinCohort.policy",
        'unsupported value "Always"',
    ),
    bad(
        "CQ-29",
        b.simple_cluster_queue(
            preemption={
                "reclaimWithinCohort": "Any",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 2**31},
            }
        ),
        "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
        "must be a 32-bit integer",
    ),
    bad(
        "CQ-30",
        b.simple_cluster_queue(
            preemption={
                "reclaimWithinCohort": "Never",
                "borrowWithinCohort": {"policy": "LowerPriority"},
            }
        ),
        "spec.preemption",
        "borrowWithinCohort.policy LowerPriority needs reclaimWithinCohort LowerPriority or Any",
    ),
    bad(
        "CQ-30",
        b.simple_cluster_queue(preemption={"borrowWithinCohort": {"policy": "LowerPriority"}}),
        "spec.preemption",
        "with reclaimWithinCohort Never, set borrowWithinCohort.policy to Never",
    ),
    bad(
        "CQ-31",
        b.simple_cluster_queue(flavorFungibility={"whenCanBorrow": "Borrow"}),
        "spec.flavorFungibility.whenCanBorrow",
        'unsupported value "Borrow": use one of MayStopSearch, TryNextFlavor',
        "old v1beta1 spelling",
    ),
    bad(
        "CQ-31",
        b.simple_cluster_queue(flavorFungibility={"whenCanPreempt": "Preempt"}),
        "spec.flavorFungibility.whenCanPreempt",
        '"Preempt" is the old v1beta1 spelling',
    ),
    bad(
        "CQ-32",
        b.simple_cluster_queue(
            flavorFungibility={
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "Cheapest",
            }
        ),
        "spec.flavorFungibility.preference",
        'unsupported value "Cheapest"',
    ),
    bad(
        "CQ-33",
        b.simple_cluster_queue(flavorFungibility={"preference": "PreemptionOverBorrowing"}),
        "spec.flavorFungibility.preference",
        'preference "PreemptionOverBorrowing" applies only when whenCanBorrow and whenCanPreempt '
        "are both TryNextFlavor",
    ),
    bad(
        "CQ-34",
        b.simple_cluster_queue(stopPolicy="Drain"),
        "spec.stopPolicy",
        'unsupported value "Drain": use one of None, Hold, HoldAndDrain',
    ),
    bad(
        "CQ-35",
        b.simple_cluster_queue(fairSharing={"weight": "heavy"}),
        "spec.fairSharing.weight",
        '"heavy" is not a valid quantity',
    ),
    bad(
        "CQ-36",
        b.simple_cluster_queue(fairSharing={"weight": -1}),
        "spec.fairSharing.weight",
        "greater than or equal to 0, got -1",
    ),
    bad(
        "CQ-37",
        b.simple_cluster_queue(fairSharing={"weight": "1n"}),
        "spec.fairSharing.weight",
        "weight 1n is too small to be used",
        "greater than 1n (0.000000001)",
    ),
    bad(
        "CQ-38",
        with_strategy(),
        "spec.admissionChecksStrategy.admissionChecks",
        "at least 1 admission check",
    ),
    bad(
        "CQ-38",
        b.simple_cluster_queue(admissionChecksStrategy={}),
        "spec.admissionChecksStrategy.admissionChecks",
        "at least 1 admission check",
    ),
    bad(
        "CQ-39",
        with_strategy(*({"name": f"c{k}"} for k in range(65))),
        "spec.admissionChecksStrategy.admissionChecks",
        "has 65 items",
    ),
    bad(
        "CQ-39",
        with_strategy({"onFlavors": ["alpha"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].name",
        "required",
    ),
    bad(
        "CQ-39",
        with_strategy({"name": "x" * 317}),
        "spec.admissionChecksStrategy.admissionChecks[0].name",
        "at most 316 characters",
    ),
    bad(
        "CQ-39",
        with_strategy({"name": "prov"}, {"name": "prov"}),
        "spec.admissionChecksStrategy.admissionChecks[1].name",
        'duplicate admission check "prov"',
    ),
    bad(
        "CQ-40",
        with_strategy({"name": "prov", "onFlavors": [f"f{k}" for k in range(65)]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors",
        "has 65 items",
    ),
    bad(
        "CQ-40",
        with_strategy({"name": "prov", "onFlavors": ["Bad_Flavor"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]",
        '"Bad_Flavor" is not a valid flavor name',
    ),
    bad(
        "CQ-40",
        with_strategy({"name": "prov", "onFlavors": ["alpha", "alpha"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[1]",
        'flavor "alpha" is listed twice',
    ),
    bad(
        "CQ-41",
        with_strategy({"name": "prov", "onFlavors": ["ghost"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]",
        'flavor "ghost" is not one of this queue\'s flavors (alpha)',
        "onFlavors may only name flavors from spec.resourceGroups",
    ),
    bad(
        "CQ-41",
        with_strategy({"name": "prov", "onFlavors": ["ghost", "other"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]",
        'flavor "ghost" is not one',
        old=with_strategy({"name": "prov", "onFlavors": ["ghost"]}),
    ),
    bad(
        "CQ-42",
        b.simple_cluster_queue(admissionScope={}),
        "spec.admissionScope.admissionMode",
        "required",
    ),
    bad(
        "CQ-42",
        b.simple_cluster_queue(admissionScope={"admissionMode": "Fair"}),
        "spec.admissionScope.admissionMode",
        'unsupported value "Fair"',
    ),
    bad(
        "CQ-43",
        b.simple_cluster_queue(concurrentAdmissionPolicy={"migration": {}}),
        "spec.concurrentAdmissionPolicy.migration.mode",
        "required",
    ),
    bad(
        "CQ-43",
        b.simple_cluster_queue(concurrentAdmissionPolicy={"migration": {"mode": "Sometimes"}}),
        "spec.concurrentAdmissionPolicy.migration.mode",
        'unsupported value "Sometimes"',
    ),
    bad(
        "CQ-43",
        b.simple_cluster_queue(
            concurrentAdmissionPolicy={
                "migration": {
                    "mode": "TryPreferredFlavors",
                    "constraints": {"lastAcceptableFlavorName": "Bad_Name"},
                }
            }
        ),
        "spec.concurrentAdmissionPolicy.migration.constraints.lastAcceptableFlavorName",
        '"Bad_Name" is not a valid flavor name',
    ),
    bad(
        "CQ-44",
        b.simple_cluster_queue(concurrentAdmissionPolicy=POLICY),
        "spec.concurrentAdmissionPolicy",
        "is immutable: it can only be set when the ClusterQueue is created",
        old=b.simple_cluster_queue(),
    ),
    bad(
        "CQ-44",
        b.simple_cluster_queue(),
        "spec.concurrentAdmissionPolicy",
        "is immutable",
        old=b.simple_cluster_queue(concurrentAdmissionPolicy=POLICY),
    ),
    bad(
        "CQ-45",
        b.cluster_queue(groups=groups_of(2), concurrentAdmissionPolicy=POLICY),
        "spec.resourceGroups",
        "must have exactly one resource group when concurrentAdmissionPolicy is set",
        gates=ON,
    ),
    bad(
        "CQ-45",
        b.cluster_queue(groups=groups_of(1, 17), concurrentAdmissionPolicy=POLICY),
        "spec.resourceGroups[0].flavors",
        "at most 16 flavors when concurrentAdmissionPolicy is set",
        gates=ON,
    ),
    bad(
        "CQ-45",
        b.simple_cluster_queue(
            concurrentAdmissionPolicy={
                "migration": {"mode": "RetainFirstAdmission", "constraints": {}}
            }
        ),
        "spec.concurrentAdmissionPolicy.migration.constraints",
        "constraints are allowed only with mode TryPreferredFlavors",
        gates=ON,
    ),
    bad(
        "CQ-45",
        b.simple_cluster_queue(
            concurrentAdmissionPolicy={
                "migration": {
                    "mode": "TryPreferredFlavors",
                    "constraints": {"lastAcceptableFlavorName": "beta"},
                }
            }
        ),
        "spec.concurrentAdmissionPolicy.migration.constraints.lastAcceptableFlavorName",
        "must be one of this queue's flavors: alpha",
        gates=ON,
    ),
    bad(
        "CQ-45",
        b.simple_cluster_queue(concurrentAdmissionPolicy=POLICY, queueingStrategy="StrictFIFO"),
        "spec.queueingStrategy",
        "StrictFIFO cannot be combined with concurrentAdmissionPolicy",
        gates=ON,
    ),
    bad(
        "CQ-V1",
        b.with_spec(b.simple_cluster_queue(), cohort="team-ab"),
        "spec.cohort",
        'unknown field "cohort"; v1beta2 calls it spec.cohortName',
    ),
    bad(
        "CQ-V2",
        b.simple_cluster_queue(admissionChecks=["prov"]),
        "spec.admissionChecks",
        'unknown field "admissionChecks"',
        "spec.admissionChecksStrategy.admissionChecks[].name",
    ),
    bad(
        "CQ-V4",
        b.simple_cluster_queue(resources=[{"name": "cpu"}]),
        "spec.resources",
        'unknown field "resources"; v1beta2 ClusterQueues use spec.resourceGroups (see '
        'kuota\'s docs/api-differences.md, "Legacy versions and conversion")',
    ),
]

PASSING = [
    good("CQ-1", b.cluster_queue(groups=groups_of(16)), note="16 groups"),
    good("CQ-2", b.simple_cluster_queue(), note="one covered resource"),
    good("CQ-3", b.cluster_queue(groups=[wide_group(64)]), note="64 covered resources"),
    good(
        "CQ-4",
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
        note="V6 qualified names",
    ),
    good(
        "CQ-5",
        b.cluster_queue(
            groups=[
                b.group(["cpu"], b.flavor("a", cpu="1")),
                b.group(["memory"], b.flavor("b", memory="1")),
            ]
        ),
    ),
    good("CQ-6", b.simple_cluster_queue()),
    good("CQ-7", b.cluster_queue(groups=groups_of(1, 64)), note="64 flavors"),
    good("CQ-8", b.cluster_queue(groups=[b.group(["cpu"], b.flavor("on-demand.v2", cpu="1"))])),
    good("CQ-9", two_flavor_queue()),
    good("CQ-10", b.simple_cluster_queue()),
    good("CQ-11", b.cluster_queue(groups=[wide_group(64)]), note="64 resources in a flavor"),
    good(
        "CQ-12",
        b.cluster_queue(groups=[b.group(["cpu", "memory"], b.flavor("a", cpu="9", memory="36Gi"))]),
    ),
    good(
        "CQ-13",
        b.cluster_queue(
            groups=[
                b.group(
                    ["cpu", "memory"],
                    b.flavor("a", cpu="1", memory="1"),
                    b.flavor("b", cpu="1", memory="1"),
                )
            ]
        ),
    ),
    good(
        "CQ-14",
        b.cluster_queue(groups=[b.group(["cpu", "memory"], b.flavor("a", cpu="1", memory="1"))]),
    ),
    good("CQ-15", b.simple_cluster_queue(q("cpu", 0), cohort="c"), note="V2 zero quota"),
    good(
        "CQ-16",
        b.simple_cluster_queue(
            q("cpu", "1.5"), q("memory", "36Gi", borrowing="1e3", lending="500Mi"), cohort="c"
        ),
    ),
    good("CQ-17", b.simple_cluster_queue(q("cpu", 0))),
    good(
        "CQ-18",
        b.simple_cluster_queue(q("cpu", borrowing=0, lending=0), cohort="c"),
        note="V3 limits 0",
    ),
    good("CQ-19", b.simple_cluster_queue(q("cpu", borrowing="0"), cohort="c")),
    good("CQ-20", b.simple_cluster_queue(q("cpu", 0, lending=0), cohort="c")),
    good("CQ-21", b.simple_cluster_queue(q("cpu", lending=1), cohort="c")),
    good(
        "CQ-22",
        b.simple_cluster_queue(q("cpu", "2", lending="2000m"), cohort="c"),
        note="V3 lending == nominal",
    ),
    good("CQ-23", b.cluster_queue(groups=groups_of(16, 16)), note="256 flavors"),
    good(
        "CQ-24",
        b.cluster_queue(groups=[wide_group(64, prefix=f"g{g}") for g in range(4)]),
        note="256 resources",
    ),
    good("CQ-25", b.cluster_queue(groups=[wide_group(64, flavors=8)]), note="512 entries"),
    good("CQ-26", b.simple_cluster_queue(cohort="team-ab.prod")),
    good("CQ-27", b.simple_cluster_queue(queueingStrategy=""), note="V9 empty strategy"),
    good("CQ-27", b.simple_cluster_queue(queueingStrategy="StrictFIFO")),
    good(
        "CQ-28",
        b.simple_cluster_queue(
            namespaceSelector={
                "matchLabels": {"team": "a"},
                "matchExpressions": [{"key": "x", "operator": "Exists"}],
            }
        ),
    ),
    good(
        "CQ-29",
        b.simple_cluster_queue(
            preemption={
                "reclaimWithinCohort": "Any",
                "withinClusterQueue": "LowerPriority",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
            }
        ),
        note="V7 all set",
    ),
    good(
        "CQ-30",
        b.simple_cluster_queue(
            preemption={"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "Never"}}
        ),
        note="V7",
    ),
    good(
        "CQ-30",
        b.simple_cluster_queue(preemption={"reclaimWithinCohort": "Never"}),
        note="V7 reclaim alone",
    ),
    good(
        "CQ-31",
        b.simple_cluster_queue(
            flavorFungibility={"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"}
        ),
    ),
    good(
        "CQ-32",
        b.simple_cluster_queue(
            flavorFungibility={
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "BorrowingOverPreemption",
            }
        ),
        note="V8",
    ),
    good(
        "CQ-33",
        b.simple_cluster_queue(
            flavorFungibility={
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "PreemptionOverBorrowing",
            }
        ),
    ),
    good("CQ-34", b.simple_cluster_queue(stopPolicy="HoldAndDrain")),
    good("CQ-35", b.simple_cluster_queue(fairSharing={"weight": "0.1"}), note="V5 0.1"),
    good("CQ-36", b.simple_cluster_queue(fairSharing={"weight": 0}), note="V5 0"),
    good("CQ-37", b.simple_cluster_queue(fairSharing={"weight": "2n"}), note="V5 2n"),
    good("CQ-37", b.simple_cluster_queue(fairSharing={"weight": "1m"}), note="V5 1m"),
    good("CQ-38", with_strategy({"name": "prov"})),
    good("CQ-39", with_strategy(*({"name": f"c{k}"} for k in range(64))), note="64 checks"),
    good(
        "CQ-40",
        b.cluster_queue(
            groups=[b.group(["cpu"], b.flavor("alpha", cpu="1"), b.flavor("beta", cpu="1"))],
            admission_checks=[{"name": "prov", "onFlavors": ["alpha", "beta"]}],
        ),
    ),
    good(
        "CQ-41",
        with_strategy({"name": "prov", "onFlavors": ["ghost"]}, stopPolicy="Hold"),
        old=with_strategy({"name": "prov", "onFlavors": ["ghost"]}),
        note="update leniency",
    ),
    good(
        "CQ-42",
        b.simple_cluster_queue(admissionScope={"admissionMode": "UsageBasedAdmissionFairSharing"}),
    ),
    good(
        "CQ-43",
        b.simple_cluster_queue(
            concurrentAdmissionPolicy={
                "migration": {
                    "mode": "TryPreferredFlavors",
                    "constraints": {"lastAcceptableFlavorName": "alpha"},
                }
            }
        ),
    ),
    good(
        "CQ-44",
        b.simple_cluster_queue(concurrentAdmissionPolicy=POLICY, stopPolicy="Hold"),
        old=b.simple_cluster_queue(concurrentAdmissionPolicy=POLICY),
        note="unchanged policy",
    ),
    good("CQ-45", b.simple_cluster_queue(concurrentAdmissionPolicy=POLICY), gates=ON),
    good(
        "CQ-45",
        b.cluster_queue(groups=groups_of(2), concurrentAdmissionPolicy=POLICY),
        note="gate off",
    ),
    good("CQ-V1", b.cluster_queue(), note="V1 name only"),
]


@pytest.mark.parametrize("case", FAILING, ids=lambda case: case.id)
def test_failing_case(case: b.Bad) -> None:
    b.check_bad(validate_cluster_queue, case)


@pytest.mark.parametrize("case", PASSING, ids=lambda case: case.id)
def test_passing_case(case: b.Good) -> None:
    b.check_good(validate_cluster_queue, case)


def test_cluster_queue_with_only_a_name_is_valid() -> None:
    """V1: no spec at all."""
    assert (
        validate_cluster_queue(
            {"apiVersion": b.KUEUE, "kind": "ClusterQueue", "metadata": {"name": "cq"}}
        )
        == []
    )


def test_missing_and_invalid_object_name() -> None:
    no_name = b.cluster_queue()
    del no_name["metadata"]["name"]
    b.find(validate_cluster_queue(no_name), "metadata.name", "required", rule="META-NAME")
    b.find(
        validate_cluster_queue(b.cluster_queue("Bad_Name")),
        "metadata.name",
        '"Bad_Name" is not a valid name',
    )


def test_every_violation_is_reported_in_rule_order() -> None:
    queue = b.cluster_queue(
        groups=[
            b.group(["cpu", "memory"], b.flavor("a", q("cpu", "ten"), q("gpu", -1, lending=1)))
        ],
        queueingStrategy="FIFO",
        cohort="@bad",
    )
    errors = validate_cluster_queue(queue)
    assert [item.rule for item in errors] == ["CQ-13", "CQ-16", "CQ-17", "CQ-22", "CQ-26", "CQ-27"]


def test_wrong_types_are_reported_and_dependent_rules_skipped() -> None:
    queue = b.cluster_queue(
        groups=[b.group(["cpu"], b.flavor("a", q("cpu", {"amount": 1})))], cohortName=7
    )
    errors = validate_cluster_queue(queue)
    b.find(errors, f"{R0}.nominalQuota", "must be a quantity", rule="TYPE")
    b.find(errors, "spec.cohortName", "must be a string", rule="TYPE")
    assert [item.rule for item in errors] == ["TYPE", "TYPE"]
    assert all(item.origin == "S" for item in errors)


def test_type_errors_come_first_and_unknown_fields_last() -> None:
    queue = b.simple_cluster_queue(q("cpu", -1), stopPolicy=3, extra=True)
    rules = [item.rule for item in validate_cluster_queue(queue)]
    assert rules == ["TYPE", "CQ-17", "UNKNOWN-FIELD"]
