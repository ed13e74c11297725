"""ClusterQueue rules: one failing and one passing case per rule.

See docs/validation.md#clusterqueue.
"""

from __future__ import annotations

import pytest

from scheduler.api.validation import validate_cluster_queue
from tests.api.cases import Bad, Good, bad, check_bad, check_good, find, good
from tests.builders import KUEUE, cluster_queue, flavor_quotas, resource_group

G0 = "spec.resourceGroups[0]"
R0 = f"{G0}.flavors[0].resources[0]"
ON = {"ConcurrentAdmission": True}


def groups_of(count: int, flavors_each: int = 1) -> list[dict]:
    """``count`` groups, each covering its own resource, ``flavors_each`` flavors each."""
    return [
        resource_group(
            *(flavor_quotas(f"f{g}-{j}").resource(f"r{g}") for j in range(flavors_each)),
            covered=[f"r{g}"],
        )
        for g in range(count)
    ]


def wide_group(resources: int, flavors: int = 1, prefix: str = "") -> dict:
    names = [f"{prefix}r{k}" for k in range(resources)]
    return resource_group(
        *(flavor_quotas(f"{prefix}f{j}", **{name: "1" for name in names}) for j in range(flavors)),
        covered=names,
    )


POLICY = {"migration": {"mode": "TryPreferredFlavors"}}

FAILING = [
    bad(
        "CQ-1",
        cluster_queue().resource_groups(*groups_of(17)),
        "spec.resourceGroups",
        "has 17 items",
        "at most 16",
    ),
    bad(
        "CQ-2",
        cluster_queue().resource_group(flavor_quotas("a", cpu="1"), covered=[]),
        f"{G0}.coveredResources",
        "at least 1 resource",
    ),
    bad(
        "CQ-2",
        cluster_queue().resource_groups({"flavors": [flavor_quotas("a", cpu="1").build()]}),
        f"{G0}.coveredResources",
        "at least 1 resource",
    ),
    bad(
        "CQ-3",
        cluster_queue().resource_groups(wide_group(65)),
        f"{G0}.coveredResources",
        "has 65 items",
        "at most 64",
    ),
    bad(
        "CQ-4",
        cluster_queue().resource_group(flavor_quotas("a").resource("@cpu")),
        f"{G0}.coveredResources[0]",
        '"@cpu" is not a valid resource name',
    ),
    bad(
        "CQ-5",
        cluster_queue().resource_group(flavor_quotas("a").resource("cpu").resource("cpu")),
        f"{G0}.coveredResources[1]",
        'resource "cpu" is listed twice in coveredResources',
    ),
    bad(
        "CQ-5",
        cluster_queue()
        .resource_group(flavor_quotas("a", memory="1"))
        .resource_group(flavor_quotas("b", memory="1")),
        "spec.resourceGroups[1].coveredResources[0]",
        'resource "memory" is already covered by resourceGroups[0]',
    ),
    bad(
        "CQ-6",
        cluster_queue().resource_group(covered=["cpu"]),
        f"{G0}.flavors",
        "must list at least 1 flavor",
    ),
    bad(
        "CQ-7",
        cluster_queue().resource_groups(*groups_of(1, 65)),
        f"{G0}.flavors",
        "has 65 items",
        "at most 64",
    ),
    bad(
        "CQ-8",
        cluster_queue().resource_group(flavor_quotas(None, cpu="1")),
        f"{G0}.flavors[0].name",
        "required",
    ),
    bad(
        "CQ-8",
        cluster_queue().resource_group(flavor_quotas("invalid_name", cpu="1")),
        f"{G0}.flavors[0].name",
        '"invalid_name" is not a valid flavor name',
        "at most 253 lower-case",
    ),
    bad(
        "CQ-9",
        cluster_queue().resource_group(flavor_quotas("a", cpu="1"), flavor_quotas("a", cpu="2")),
        f"{G0}.flavors[1].name",
        'flavor "a" is listed twice in this resource group',
    ),
    bad(
        "CQ-9",
        cluster_queue()
        .resource_group(flavor_quotas("spot", cpu="1"))
        .resource_group(flavor_quotas("spot", gpu="1")),
        "spec.resourceGroups[1].flavors[0].name",
        'flavor "spot" is already used by resourceGroups[0]',
    ),
    bad(
        "CQ-10",
        cluster_queue().resource_group(flavor_quotas("a"), covered=["cpu"]),
        f"{G0}.flavors[0].resources",
        "must list at least 1 resource quota",
    ),
    bad(
        "CQ-11",
        cluster_queue().resource_group(
            flavor_quotas("a", **{f"r{k}": "1" for k in range(65)}), covered=["r0"]
        ),
        f"{G0}.flavors[0].resources",
        "has 65 items",
        "at most 64",
    ),
    bad(
        "CQ-12",
        cluster_queue().resource_group(
            flavor_quotas("default-flavor", cpu="9"), covered=["cpu", "memory"]
        ),
        f"{G0}.flavors[0].resources",
        'flavor "default-flavor" gives quotas for 1 resource(s) but the group covers 2 (cpu, '
        "memory)",
    ),
    bad(
        "CQ-13",
        cluster_queue().resource_group(
            flavor_quotas("a", cpu="1", memory="1"), flavor_quotas("beta", memory="1", cpu="1")
        ),
        f"{G0}.flavors[1].resources[0].name",
        'expected "cpu" (coveredResources[0]) but found "memory"',
    ),
    bad(
        "CQ-14",
        cluster_queue().resource_group(
            flavor_quotas("a").resource("cpu").resource("cpu"), covered=["cpu", "memory"]
        ),
        f"{G0}.flavors[0].resources[1].name",
        'duplicate resource "cpu"',
    ),
    bad(
        "CQ-15",
        cluster_queue().resource_group(flavor_quotas("alpha").resource("cpu", None)),
        f"{R0}.nominalQuota",
        "required: set the quota for this resource",
    ),
    bad(
        "CQ-16",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="ten")),
        f"{R0}.nominalQuota",
        '"ten" is not a valid quantity',
        "500m",
    ),
    bad(
        "CQ-16",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", borrowing_limit="1.2.3"))
        .cohort("c"),
        f"{R0}.borrowingLimit",
        '"1.2.3" is not a valid quantity',
    ),
    bad(
        "CQ-16",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", lending_limit="lots"))
        .cohort("c"),
        f"{R0}.lendingLimit",
        '"lots" is not a valid quantity',
    ),
    bad(
        "CQ-17",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu=-1)),
        f"{R0}.nominalQuota",
        "greater than or equal to 0, got -1",
    ),
    bad(
        "CQ-18",
        cluster_queue().resource_group(flavor_quotas("alpha").resource("cpu", borrowing_limit=0)),
        f"{R0}.borrowingLimit",
        "a borrowing limit needs a cohort",
    ),
    bad(
        "CQ-19",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", borrowing_limit=-1))
        .cohort("c"),
        f"{R0}.borrowingLimit",
        "greater than or equal to 0, got -1",
    ),
    bad(
        "CQ-20",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", lending_limit="-500m"))
        .cohort("c"),
        f"{R0}.lendingLimit",
        "got -500m",
    ),
    bad(
        "CQ-21",
        cluster_queue().resource_group(flavor_quotas("alpha").resource("cpu", lending_limit=1)),
        f"{R0}.lendingLimit",
        "a lending limit needs a cohort",
    ),
    bad(
        "CQ-22",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", 1, lending_limit=2))
        .cohort("c"),
        f"{R0}.lendingLimit",
        "less than or equal to nominalQuota (1)",
        "cannot lend more than it owns",
    ),
    bad(
        "CQ-23",
        cluster_queue().resource_groups(*groups_of(16, 17)),
        "spec.resourceGroups",
        "has 272 flavors in total",
        "at most 256",
    ),
    bad(
        "CQ-24",
        cluster_queue().resource_groups(*[wide_group(52, prefix=f"g{g}") for g in range(5)]),
        "spec.resourceGroups",
        "covers 260 resources in total",
        "at most 256",
    ),
    bad(
        "CQ-25",
        cluster_queue().resource_groups(wide_group(64, flavors=9)),
        G0,
        "has 576 flavor/resource quota entries",
        "at most 512",
    ),
    bad(
        "CQ-26",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).cohort("@prod"),
        "spec.cohortName",
        '"@prod" is not a valid name',
    ),
    bad(
        "CQ-27",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).queueing_strategy("FIFO"),
        "spec.queueingStrategy",
        'unsupported value "FIFO": use one of StrictFIFO, BestEffortFIFO',
    ),
    bad(
        "CQ-28",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .namespace_selector({"matchLabels": {"nospecialchars^=@": "bar"}}),
        "spec.namespaceSelector.matchLabels",
        'invalid label key "nospecialchars^=@"',
    ),
    bad(
        "CQ-28",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .namespace_selector({"matchExpressions": [{"key": "team", "operator": "In"}]}),
        "spec.namespaceSelector.matchExpressions[0].values",
        "at least one value when operator is In",
    ),
    bad(
        "CQ-29",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(withinClusterQueue="Any"),
        "spec.preemption.withinClusterQueue",
        'unsupported value "Any": use one of Never, LowerPriority, LowerOrNewerEqualPriority',
    ),
    bad(
        "CQ-29",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(reclaimWithinCohort="Sometimes"),
        "spec.preemption.reclaimWithinCohort",
        'unsupported value "Sometimes"',
    ),
    bad(
        "CQ-29",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(reclaimWithinCohort="Any", borrowWithinCohort={"policy": "Always"}),
        "spec.preemption.borrowWithinCohort.policy",
        'unsupported value "Always"',
    ),
    bad(
        "CQ-29",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(
            reclaimWithinCohort="Any",
            borrowWithinCohort={"policy": "LowerPriority", "maxPriorityThreshold": 2**31},
        ),
        "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
        "must be a 32-bit integer",
    ),
    bad(
        "CQ-30",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(reclaimWithinCohort="Never", borrowWithinCohort={"policy": "LowerPriority"}),
        "spec.preemption",
        "borrowWithinCohort.policy LowerPriority needs reclaimWithinCohort LowerPriority or Any",
    ),
    bad(
        "CQ-30",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(borrowWithinCohort={"policy": "LowerPriority"}),
        "spec.preemption",
        "with reclaimWithinCohort Never, set borrowWithinCohort.policy to Never",
    ),
    bad(
        "CQ-31",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(flavorFungibility={"whenCanBorrow": "Borrow"}),
        "spec.flavorFungibility.whenCanBorrow",
        'unsupported value "Borrow": use one of MayStopSearch, TryNextFlavor',
        "old v1beta1 spelling",
    ),
    bad(
        "CQ-31",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(flavorFungibility={"whenCanPreempt": "Preempt"}),
        "spec.flavorFungibility.whenCanPreempt",
        '"Preempt" is the old v1beta1 spelling',
    ),
    bad(
        "CQ-32",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(flavorFungibility={"preference": "PreemptionOverBorrowing"}),
        "spec.flavorFungibility.preference",
        'preference "PreemptionOverBorrowing" applies only when whenCanBorrow and whenCanPreempt '
        "are both TryNextFlavor",
    ),
    bad(
        "CQ-34",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).stop_policy("Drain"),
        "spec.stopPolicy",
        'unsupported value "Drain": use one of None, Hold, HoldAndDrain',
    ),
    bad(
        "CQ-35",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight("heavy"),
        "spec.fairSharing.weight",
        '"heavy" is not a valid quantity',
    ),
    bad(
        "CQ-36",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight(-1),
        "spec.fairSharing.weight",
        "greater than or equal to 0, got -1",
    ),
    bad(
        "CQ-37",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight("1n"),
        "spec.fairSharing.weight",
        "weight 1n is too small to be used",
        "greater than 1n (0.000000001)",
    ),
    bad(
        "CQ-38",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).admission_checks(),
        "spec.admissionChecksStrategy.admissionChecks",
        "at least 1 admission check",
    ),
    bad(
        "CQ-38",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(admissionChecksStrategy={}),
        "spec.admissionChecksStrategy.admissionChecks",
        "at least 1 admission check",
    ),
    bad(
        "CQ-39",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks(*(f"c{k}" for k in range(65))),
        "spec.admissionChecksStrategy.admissionChecks",
        "has 65 items",
    ),
    bad(
        "CQ-39",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks({"onFlavors": ["alpha"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].name",
        "required",
    ),
    bad(
        "CQ-39",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).admission_checks("x" * 317),
        "spec.admissionChecksStrategy.admissionChecks[0].name",
        "at most 316 characters",
    ),
    bad(
        "CQ-39",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks("prov", "prov"),
        "spec.admissionChecksStrategy.admissionChecks[1].name",
        'duplicate admission check "prov"',
    ),
    bad(
        "CQ-40",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks({"name": "prov", "onFlavors": [f"f{k}" for k in range(65)]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors",
        "has 65 items",
    ),
    bad(
        "CQ-40",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks({"name": "prov", "onFlavors": ["Bad_Flavor"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]",
        '"Bad_Flavor" is not a valid flavor name',
    ),
    bad(
        "CQ-40",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks({"name": "prov", "onFlavors": ["alpha", "alpha"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[1]",
        'flavor "alpha" is listed twice',
    ),
    bad(
        "CQ-41",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks({"name": "prov", "onFlavors": ["ghost"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]",
        'flavor "ghost" is not one of this queue\'s flavors (alpha)',
        "onFlavors may only name flavors from spec.resourceGroups",
    ),
    bad(
        "CQ-41",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks({"name": "prov", "onFlavors": ["ghost", "other"]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]",
        'flavor "ghost" is not one',
        old=cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks({"name": "prov", "onFlavors": ["ghost"]}),
    ),
    bad(
        "CQ-42",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).spec(admissionScope={}),
        "spec.admissionScope.admissionMode",
        "required",
    ),
    bad(
        "CQ-42",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(admissionScope={"admissionMode": "Fair"}),
        "spec.admissionScope.admissionMode",
        'unsupported value "Fair"',
    ),
    bad(
        "CQ-43",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(concurrentAdmissionPolicy={"migration": {}}),
        "spec.concurrentAdmissionPolicy.migration.mode",
        "required",
    ),
    bad(
        "CQ-43",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(concurrentAdmissionPolicy={"migration": {"mode": "Sometimes"}}),
        "spec.concurrentAdmissionPolicy.migration.mode",
        'unsupported value "Sometimes"',
    ),
    bad(
        "CQ-43",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(concurrentAdmissionPolicy=POLICY),
        "spec.concurrentAdmissionPolicy",
        "is immutable: it can only be set when the ClusterQueue is created",
        old=cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")),
    ),
    bad(
        "CQ-44",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")),
        "spec.concurrentAdmissionPolicy",
        "is immutable",
        old=cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(concurrentAdmissionPolicy=POLICY),
    ),
    bad(
        "CQ-45",
        cluster_queue().resource_groups(*groups_of(2)).spec(concurrentAdmissionPolicy=POLICY),
        "spec.resourceGroups",
        "must have exactly one resource group when concurrentAdmissionPolicy is set",
        gates=ON,
    ),
    bad(
        "CQ-45",
        cluster_queue().resource_groups(*groups_of(1, 17)).spec(concurrentAdmissionPolicy=POLICY),
        "spec.resourceGroups[0].flavors",
        "at most 16 flavors when concurrentAdmissionPolicy is set",
        gates=ON,
    ),
    bad(
        "CQ-45",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .queueing_strategy("StrictFIFO")
        .spec(concurrentAdmissionPolicy=POLICY),
        "spec.queueingStrategy",
        "StrictFIFO cannot be combined with concurrentAdmissionPolicy",
        gates=ON,
    ),
    bad(
        "CQ-V1",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).spec(cohort="team-ab"),
        "spec.cohort",
        'unknown field "cohort"; v1beta2 calls it spec.cohortName',
    ),
    bad(
        "CQ-V2",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(admissionChecks=["prov"]),
        "spec.admissionChecks",
        'unknown field "admissionChecks"',
        "spec.admissionChecksStrategy.admissionChecks[].name",
    ),
    bad(
        "CQ-V4",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(resources=[{"name": "cpu"}]),
        "spec.resources",
        'unknown field "resources"; v1beta2 ClusterQueues use spec.resourceGroups (see '
        'kuota\'s docs/api-differences.md, "Legacy versions and conversion")',
    ),
]

PASSING = [
    good("CQ-1", cluster_queue().resource_groups(*groups_of(16)), note="16 groups"),
    good(
        "CQ-2",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")),
        note="one covered resource",
    ),
    good("CQ-3", cluster_queue().resource_groups(wide_group(64)), note="64 covered resources"),
    good(
        "CQ-4",
        cluster_queue().resource_group(
            flavor_quotas("a")
            .resource("pods")
            .resource("cpu_credits")
            .resource("example.com/gpu")
            .resource("nvidia.com/gpu")
        ),
        note="V6 qualified names",
    ),
    good(
        "CQ-5",
        cluster_queue()
        .resource_group(flavor_quotas("a", cpu="1"))
        .resource_group(flavor_quotas("b", memory="1")),
    ),
    good("CQ-6", cluster_queue().resource_group(flavor_quotas("alpha", cpu="1"))),
    good("CQ-7", cluster_queue().resource_groups(*groups_of(1, 64)), note="64 flavors"),
    good("CQ-8", cluster_queue().resource_group(flavor_quotas("on-demand.v2", cpu="1"))),
    good(
        "CQ-9",
        cluster_queue().resource_group(
            flavor_quotas("alpha", cpu="1"), flavor_quotas("beta", cpu="1")
        ),
    ),
    good("CQ-10", cluster_queue().resource_group(flavor_quotas("alpha", cpu="1"))),
    good("CQ-11", cluster_queue().resource_groups(wide_group(64)), note="64 resources in a flavor"),
    good(
        "CQ-12",
        cluster_queue().resource_group(flavor_quotas("a", cpu="9", memory="36Gi")),
    ),
    good(
        "CQ-13",
        cluster_queue().resource_group(
            flavor_quotas("a", cpu="1", memory="1"), flavor_quotas("b", cpu="1", memory="1")
        ),
    ),
    good(
        "CQ-14",
        cluster_queue().resource_group(flavor_quotas("a", cpu="1", memory="1")),
    ),
    good(
        "CQ-15",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu=0)).cohort("c"),
        note="V2 zero quota",
    ),
    good(
        "CQ-16",
        cluster_queue()
        .resource_group(
            flavor_quotas("alpha")
            .resource("cpu", "1.5")
            .resource("memory", "36Gi", borrowing_limit="1e3", lending_limit="500Mi")
        )
        .cohort("c"),
    ),
    good("CQ-17", cluster_queue().resource_group(flavor_quotas("alpha", cpu=0))),
    good(
        "CQ-18",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", borrowing_limit=0, lending_limit=0))
        .cohort("c"),
        note="V3 limits 0",
    ),
    good(
        "CQ-19",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", borrowing_limit="0"))
        .cohort("c"),
    ),
    good(
        "CQ-20",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", 0, lending_limit=0))
        .cohort("c"),
    ),
    good(
        "CQ-21",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", lending_limit=1))
        .cohort("c"),
    ),
    good(
        "CQ-22",
        cluster_queue()
        .resource_group(flavor_quotas("alpha").resource("cpu", "2", lending_limit="2000m"))
        .cohort("c"),
        note="V3 lending == nominal",
    ),
    good("CQ-23", cluster_queue().resource_groups(*groups_of(16, 16)), note="256 flavors"),
    good(
        "CQ-24",
        cluster_queue().resource_groups(*[wide_group(64, prefix=f"g{g}") for g in range(4)]),
        note="256 resources",
    ),
    good("CQ-25", cluster_queue().resource_groups(wide_group(64, flavors=8)), note="512 entries"),
    good(
        "CQ-26",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).cohort("team-ab.prod"),
    ),
    good(
        "CQ-27",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).queueing_strategy(""),
        note="V9 empty strategy",
    ),
    good(
        "CQ-27",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .queueing_strategy("StrictFIFO"),
    ),
    good(
        "CQ-28",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .namespace_selector(
            {
                "matchLabels": {"team": "a"},
                "matchExpressions": [{"key": "x", "operator": "Exists"}],
            }
        ),
    ),
    good(
        "CQ-29",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(
            reclaimWithinCohort="Any",
            withinClusterQueue="LowerPriority",
            borrowWithinCohort={"policy": "LowerPriority", "maxPriorityThreshold": 100},
        ),
        note="V7 all set",
    ),
    good(
        "CQ-30",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(reclaimWithinCohort="Never", borrowWithinCohort={"policy": "Never"}),
        note="V7",
    ),
    good(
        "CQ-30",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .preemption(reclaimWithinCohort="Never"),
        note="V7 reclaim alone",
    ),
    good(
        "CQ-31",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
            flavorFungibility={"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"}
        ),
    ),
    good(
        "CQ-32",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
            flavorFungibility={
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "PreemptionOverBorrowing",
            }
        ),
    ),
    good(
        "CQ-34",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).stop_policy("HoldAndDrain"),
    ),
    good(
        "CQ-35",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight("0.1"),
        note="V5 0.1",
    ),
    good(
        "CQ-36",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight(0),
        note="V5 0",
    ),
    good(
        "CQ-37",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight("2n"),
        note="V5 2n",
    ),
    good(
        "CQ-37",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).fair_weight("1m"),
        note="V5 1m",
    ),
    good(
        "CQ-38",
        cluster_queue().resource_group(flavor_quotas("alpha", cpu="1")).admission_checks("prov"),
    ),
    good(
        "CQ-39",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks(*(f"c{k}" for k in range(64))),
        note="64 checks",
    ),
    good(
        "CQ-40",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"), flavor_quotas("beta", cpu="1"))
        .admission_checks({"name": "prov", "onFlavors": ["alpha", "beta"]}),
    ),
    good(
        "CQ-41",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks({"name": "prov", "onFlavors": ["ghost"]})
        .stop_policy("Hold"),
        old=cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .admission_checks({"name": "prov", "onFlavors": ["ghost"]}),
        note="update leniency",
    ),
    good(
        "CQ-42",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(admissionScope={"admissionMode": "UsageBasedAdmissionFairSharing"}),
    ),
    good(
        "CQ-43",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(
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
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .stop_policy("Hold")
        .spec(concurrentAdmissionPolicy=POLICY),
        old=cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(concurrentAdmissionPolicy=POLICY),
        note="unchanged policy",
    ),
    good(
        "CQ-45",
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu="1"))
        .spec(concurrentAdmissionPolicy=POLICY),
        gates=ON,
    ),
    good(
        "CQ-45",
        cluster_queue().resource_groups(*groups_of(2)).spec(concurrentAdmissionPolicy=POLICY),
        note="gate off",
    ),
    good("CQ-V1", cluster_queue(), note="V1 name only"),
]


@pytest.mark.parametrize("case", FAILING, ids=lambda case: case.id)
def test_failing_case(case: Bad) -> None:
    check_bad(validate_cluster_queue, case)


@pytest.mark.parametrize("case", PASSING, ids=lambda case: case.id)
def test_passing_case(case: Good) -> None:
    check_good(validate_cluster_queue, case)


def test_cluster_queue_with_only_a_name_is_valid() -> None:
    """V1: no spec at all."""
    assert (
        validate_cluster_queue(
            {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "cq"}}
        )
        == []
    )


def test_missing_and_invalid_object_name() -> None:
    no_name = cluster_queue().build()
    del no_name["metadata"]["name"]
    find(validate_cluster_queue(no_name), "metadata.name", "required", rule="META-NAME")
    find(
        validate_cluster_queue(cluster_queue("Bad_Name").build()),
        "metadata.name",
        '"Bad_Name" is not a valid name',
    )


def test_every_violation_is_reported_in_rule_order() -> None:
    queue = (
        cluster_queue()
        .cohort("@bad")
        .resource_group(
            flavor_quotas("a").resource("cpu", "ten").resource("gpu", -1, lending_limit=1),
            covered=["cpu", "memory"],
        )
        .queueing_strategy("FIFO")
        .build()
    )
    errors = validate_cluster_queue(queue)
    assert [item.rule for item in errors] == ["CQ-13", "CQ-16", "CQ-17", "CQ-22", "CQ-26", "CQ-27"]


def test_wrong_types_are_reported_and_dependent_rules_skipped() -> None:
    queue = cluster_queue().resource_group(flavor_quotas("a", cpu={"amount": 1})).cohort(7).build()
    errors = validate_cluster_queue(queue)
    find(errors, f"{R0}.nominalQuota", "must be a quantity", rule="TYPE")
    find(errors, "spec.cohortName", "must be a string", rule="TYPE")
    assert [item.rule for item in errors] == ["TYPE", "TYPE"]
    assert all(item.origin == "S" for item in errors)


def test_type_errors_come_first_and_unknown_fields_last() -> None:
    queue = (
        cluster_queue()
        .resource_group(flavor_quotas("alpha", cpu=-1))
        .stop_policy(3)
        .spec(extra=True)
        .build()
    )
    rules = [item.rule for item in validate_cluster_queue(queue)]
    assert rules == ["TYPE", "CQ-17", "UNKNOWN-FIELD"]
