"""ResourceFlavor, LocalQueue and Cohort rules (docs/validation.md#rules-by-kind)."""

from __future__ import annotations

import pytest

from scheduler.api.validation import validate_cohort, validate_local_queue, validate_resource_flavor
from tests.api.cases import Bad, Good, bad, check_bad, check_good, find, good
from tests.builders import KUEUE, cohort, flavor_quotas, local_queue, resource_flavor

NO_SCHEDULE = {"key": "spot", "effect": "NoSchedule"}
R0 = "spec.resourceGroups[0].flavors[0].resources[0]"


def labels(count: int) -> dict[str, str]:
    return {f"label-{n}": "x" for n in range(count)}


def taints(count: int) -> list[dict]:
    return [{"key": f"t{n}", "effect": "NoSchedule"} for n in range(count)]


RF_FAILING = [
    bad(
        "RF-1",
        resource_flavor("rf").node_labels(labels(9)),
        "spec.nodeLabels",
        "has 9 items; at most 8 are allowed",
    ),
    bad(
        "RF-2",
        resource_flavor("rf").node_labels({"@abc": "foo"}),
        "spec.nodeLabels[@abc]",
        'invalid label key "@abc"',
    ),
    bad(
        "RF-2",
        resource_flavor("rf").node_labels({"abc": "-foo"}),
        "spec.nodeLabels[abc]",
        'invalid label value "-foo" for key "abc"',
    ),
    bad("RF-3", resource_flavor("rf").spec(nodeTaints=taints(9)), "spec.nodeTaints", "has 9 items"),
    bad(
        "RF-4",
        resource_flavor("rf").spec(nodeTaints=[{"effect": "NoSchedule"}]),
        "spec.nodeTaints[0].key",
        "required: give the taint key",
    ),
    bad(
        "RF-5",
        resource_flavor("rf").spec(nodeTaints=[{"key": "bad key", "effect": "NoSchedule"}]),
        "spec.nodeTaints[0].key",
        '"bad key" is not a valid taint key',
    ),
    bad(
        "RF-6",
        resource_flavor("rf").taint("spot", "not ok"),
        "spec.nodeTaints[0].value",
        '"not ok" is not a valid label value',
    ),
    bad(
        "RF-7",
        resource_flavor("rf").spec(nodeTaints=[{"key": "spot"}]),
        "spec.nodeTaints[0].effect",
        "required: use NoSchedule, PreferNoSchedule or NoExecute",
    ),
    bad(
        "RF-8",
        resource_flavor("rf").spec(nodeTaints=[{"key": "spot", "effect": ""}]),
        "spec.nodeTaints[0].effect",
        'unsupported value ""',
    ),
    bad(
        "RF-8",
        resource_flavor("rf").spec(nodeTaints=[{"key": "spot", "effect": "Evict"}]),
        "spec.nodeTaints[0].effect",
        'unsupported value "Evict": use one of NoSchedule, PreferNoSchedule, NoExecute',
    ),
    bad(
        "RF-9",
        resource_flavor("rf").spec(nodeTaints=[NO_SCHEDULE, NO_SCHEDULE]),
        "spec.nodeTaints[1]",
        'duplicate taint "spot:NoSchedule": taints must be unique by key and effect',
    ),
    bad(
        "RF-10",
        resource_flavor("rf").spec(tolerations=[{"operator": "Exists"}] * 9),
        "spec.tolerations",
        "has 9 items",
    ),
    bad(
        "RF-11",
        resource_flavor("rf").spec(tolerations=[{"value": "x"}]),
        "spec.tolerations[0].operator",
        "must be Exists when key is empty",
    ),
    bad(
        "RF-12",
        resource_flavor("rf").spec(
            tolerations=[
                {"key": "a", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}
            ]
        ),
        "spec.tolerations[0].effect",
        "must be NoExecute when tolerationSeconds is set",
    ),
    bad(
        "RF-13",
        resource_flavor("rf").spec(tolerations=[{"key": "a", "operator": "Matches"}]),
        "spec.tolerations[0].operator",
        'unsupported value "Matches": use one of Equal, Exists',
    ),
    bad(
        "RF-14",
        resource_flavor("rf").spec(
            tolerations=[{"key": "abc", "operator": "Exists", "value": "v"}]
        ),
        "spec.tolerations[0].value",
        "must be empty when operator is Exists",
    ),
    bad(
        "RF-15",
        resource_flavor("rf").spec(
            tolerations=[{"key": "a", "operator": "Exists", "effect": "Sometimes"}]
        ),
        "spec.tolerations[0].effect",
        'unsupported value "Sometimes"',
    ),
    bad(
        "RF-16",
        resource_flavor("rf").spec(tolerations=[{"key": "a b", "operator": "Exists"}]),
        "spec.tolerations[0].key",
        '"a b" is not a valid toleration key',
    ),
    bad(
        "RF-17",
        resource_flavor("rf").node_labels({"a": "b"}).topology("Default_Topo"),
        "spec.topologyName",
        '"Default_Topo" is not a valid topology name',
    ),
    bad(
        "RF-18",
        resource_flavor("rf").topology("default"),
        "spec.nodeLabels",
        "a flavor with a topologyName needs at least one node label",
    ),
    bad(
        "RF-19",
        resource_flavor("rf").node_labels({"a": "b"}).topology("b"),
        "spec.topologyName",
        'is immutable once set; it was "a"',
        old=resource_flavor("rf").node_labels({"a": "b"}).topology("a"),
    ),
    bad(
        "RF-19",
        resource_flavor("rf").node_labels({"a": "b"}),
        "spec.topologyName",
        "is immutable once set",
        old=resource_flavor("rf").node_labels({"a": "b"}).topology("a"),
    ),
]

RF_PASSING = [
    good(
        "RF-1",
        resource_flavor("rf").node_labels(labels(8)).spec(nodeTaints=taints(8)),
        note="V11 limits inclusive",
    ),
    good(
        "RF-2",
        resource_flavor("rf").node_labels(
            {"cloud.example.com/instance-type": "spot_v2", "empty": ""}
        ),
    ),
    good("RF-3", resource_flavor("rf"), note="V11 empty flavor"),
    good("RF-4", resource_flavor("rf").spec(nodeTaints=[NO_SCHEDULE])),
    good(
        "RF-5",
        resource_flavor("rf").spec(
            nodeTaints=[{"key": "example.com/spot", "effect": "NoSchedule"}]
        ),
    ),
    good("RF-6", resource_flavor("rf").taint("spot", "true")),
    good(
        "RF-7",
        resource_flavor("rf").spec(nodeTaints=[{"key": "spot", "effect": "PreferNoSchedule"}]),
    ),
    good("RF-8", resource_flavor("rf").spec(nodeTaints=[{"key": "spot", "effect": "NoExecute"}])),
    good(
        "RF-9",
        resource_flavor("rf").spec(
            nodeTaints=[NO_SCHEDULE, {"key": "spot", "effect": "NoExecute"}]
        ),
        note="V11 per key+effect",
    ),
    good("RF-10", resource_flavor("rf").spec(tolerations=[{"operator": "Exists"}] * 8)),
    good(
        "RF-11",
        resource_flavor("rf").spec(tolerations=[{"operator": "Exists"}]),
        note="empty key with Exists",
    ),
    good(
        "RF-12",
        resource_flavor("rf").spec(
            tolerations=[
                {"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}
            ]
        ),
    ),
    good(
        "RF-13",
        resource_flavor("rf").spec(tolerations=[{"key": "a", "value": "b"}]),
        note="Equal by default",
    ),
    good(
        "RF-14",
        resource_flavor("rf").spec(tolerations=[{"key": "a", "operator": "Equal", "value": "v"}]),
    ),
    good(
        "RF-15",
        resource_flavor("rf").spec(tolerations=[{"key": "a", "operator": "Exists", "effect": ""}]),
        note="empty effect",
    ),
    good(
        "RF-16",
        resource_flavor("rf").spec(tolerations=[{"key": "example.com/a", "operator": "Exists"}]),
    ),
    good("RF-17", resource_flavor("rf").node_labels({"a": "b"}).topology("default")),
    good("RF-18", resource_flavor("rf").node_labels({"a": "b"}).topology("default")),
    good(
        "RF-19",
        resource_flavor("rf").node_labels({"a": "c"}).spec(nodeTaints=[NO_SCHEDULE]).topology("a"),
        old=resource_flavor("rf").node_labels({"a": "b"}).topology("a"),
        note="labels mutable with topology",
    ),
    good(
        "RF-19",
        resource_flavor("rf").node_labels({"a": "c"}).spec(nodeTaints=[NO_SCHEDULE]),
        old=resource_flavor("rf").node_labels({"a": "b"}),
        note="V12",
    ),
]

LQ_FAILING = [
    bad(
        "LQ-1",
        local_queue().cluster_queue("invalid_name"),
        "spec.clusterQueue",
        '"invalid_name" is not a valid name',
    ),
    bad(
        "LQ-2",
        local_queue().cluster_queue("bar"),
        "spec.clusterQueue",
        'is immutable; it was "foo"',
        "create a new LocalQueue",
        old=local_queue().cluster_queue("foo"),
    ),
    bad(
        "LQ-2",
        local_queue(),
        "spec.clusterQueue",
        'is immutable; it was "foo"',
        old=local_queue().cluster_queue("foo"),
    ),
    bad(
        "LQ-3",
        local_queue().cluster_queue("cq").stop_policy("Pause"),
        "spec.stopPolicy",
        'unsupported value "Pause": use one of None, Hold, HoldAndDrain',
    ),
    bad(
        "LQ-4",
        local_queue().cluster_queue("cq").spec(fairSharing={"weight": "x1"}),
        "spec.fairSharing.weight",
        '"x1" is not a valid quantity',
    ),
    bad(
        "LQ-5",
        local_queue().cluster_queue("cq").spec(fairSharing={"weight": "-2"}),
        "spec.fairSharing.weight",
        "greater than or equal to 0, got -2",
    ),
    bad(
        "LQ-5",
        local_queue().cluster_queue("cq").spec(fairSharing={"weight": "0.5n"}),
        "spec.fairSharing.weight",
        "too small to be used",
    ),
]

LQ_PASSING = [
    good("LQ-1", local_queue().cluster_queue("cluster-queue")),
    good(
        "LQ-2",
        local_queue().cluster_queue("foo"),
        old=local_queue(),
        note="set when it had none",
    ),
    good(
        "LQ-2",
        local_queue().cluster_queue("foo").stop_policy("Hold"),
        old=local_queue().cluster_queue("foo"),
    ),
    good("LQ-3", local_queue().cluster_queue("cq").stop_policy("HoldAndDrain")),
    good("LQ-4", local_queue().cluster_queue("cq").spec(fairSharing={"weight": "2"})),
    good("LQ-5", local_queue().cluster_queue("cq").spec(fairSharing={"weight": 0})),
]

CO_FAILING = [
    bad(
        "CO-1",
        {"apiVersion": KUEUE, "kind": "Cohort", "metadata": {"name": ""}},
        "metadata.name",
        "required",
    ),
    bad("CO-1", cohort("Team_A"), "metadata.name", '"Team_A" is not a valid name'),
    bad(
        "CO-2",
        cohort("co").parent("@root"),
        "spec.parentName",
        '"@root" is not a valid cohort name',
    ),
    bad(
        "CQ-6",
        cohort("co").resource_group(covered=["cpu"]),
        "spec.resourceGroups[0].flavors",
        "must list at least 1 flavor",
    ),
    bad(
        "CQ-13",
        cohort("co").resource_group(
            flavor_quotas("a", memory="1", cpu="1"), covered=["cpu", "memory"]
        ),
        "spec.resourceGroups[0].flavors[0].resources[0].name",
        'expected "cpu"',
    ),
    bad(
        "CQ-17",
        cohort("co").resource_group(flavor_quotas("a", cpu="-1")),
        f"{R0}.nominalQuota",
        "got -1",
    ),
    bad(
        "CQ-19",
        cohort("co")
        .parent("p")
        .resource_group(flavor_quotas("a").resource("cpu", borrowing_limit="-1")),
        f"{R0}.borrowingLimit",
        "got -1",
    ),
    bad(
        "CQ-20",
        cohort("co")
        .parent("p")
        .resource_group(flavor_quotas("a").resource("cpu", lending_limit="-1")),
        f"{R0}.lendingLimit",
        "got -1",
    ),
    bad(
        "CO-4",
        cohort("co").resource_group(flavor_quotas("a").resource("cpu", borrowing_limit=0)),
        f"{R0}.borrowingLimit",
        "a borrowing limit needs a parent cohort: set spec.parentName or remove borrowingLimit",
    ),
    bad(
        "CO-5",
        cohort("co").resource_group(flavor_quotas("a").resource("cpu", lending_limit=1)),
        f"{R0}.lendingLimit",
        "a lending limit needs a parent cohort: set spec.parentName or remove lendingLimit",
    ),
    bad("CQ-37", cohort("co").fair_weight("1n"), "spec.fairSharing.weight", "too small"),
]

CO_PASSING = [
    good("CO-1", cohort("team.root")),
    good("CO-2", cohort("co").parent("co"), note="self parent is accepted"),
    good("CO-3", cohort("co").resource_group(flavor_quotas("a", cpu="1", memory="1Gi"))),
    good(
        "CO-4",
        cohort("co")
        .parent("p")
        .resource_group(flavor_quotas("a").resource("cpu", borrowing_limit=0)),
    ),
    good(
        "CO-5",
        cohort("co")
        .parent("p")
        .resource_group(flavor_quotas("a").resource("cpu", lending_limit=1)),
    ),
    good(
        "CO-6",
        cohort("co")
        .parent("p")
        .resource_group(flavor_quotas("a").resource("cpu", 1, lending_limit=2)),
        note="V4 lend more than nominal",
    ),
    good(
        "CO-7",
        cohort("co").resource_group(
            *(flavor_quotas(f"f{j}", **{f"r{k}": "1" for k in range(64)}) for j in range(9)),
            covered=[f"r{k}" for k in range(64)],
        ),
        note="no 512 limit",
    ),
    good("CO-8", cohort("co").fair_weight("0.5")),
]


@pytest.mark.parametrize("case", RF_FAILING, ids=lambda case: case.id)
def test_resource_flavor_failing(case: Bad) -> None:
    check_bad(validate_resource_flavor, case)


@pytest.mark.parametrize("case", RF_PASSING, ids=lambda case: case.id)
def test_resource_flavor_passing(case: Good) -> None:
    check_good(validate_resource_flavor, case)


@pytest.mark.parametrize("case", LQ_FAILING, ids=lambda case: case.id)
def test_local_queue_failing(case: Bad) -> None:
    check_bad(validate_local_queue, case)


@pytest.mark.parametrize("case", LQ_PASSING, ids=lambda case: case.id)
def test_local_queue_passing(case: Good) -> None:
    check_good(validate_local_queue, case)


@pytest.mark.parametrize("case", CO_FAILING, ids=lambda case: case.id)
def test_cohort_failing(case: Bad) -> None:
    check_bad(validate_cohort, case)


@pytest.mark.parametrize("case", CO_PASSING, ids=lambda case: case.id)
def test_cohort_passing(case: Good) -> None:
    check_good(validate_cohort, case)


def test_local_queue_namespace_must_be_a_label() -> None:
    find(
        validate_local_queue(local_queue("lq", "Team.A").cluster_queue("cq").build()),
        "metadata.namespace",
        '"Team.A" is not a valid namespace',
    )


def test_legacy_flavor_fields_get_a_hint() -> None:
    flavor = resource_flavor("rf").build()
    flavor["labels"] = {"instance-type": "spot"}
    find(
        validate_resource_flavor(flavor),
        "labels",
        'unknown field "labels"',
        "v1beta2 uses spec.nodeLabels",
    )


def test_lq5_is_a_kuota_addition() -> None:
    errors = validate_local_queue(
        local_queue().cluster_queue("cq").spec(fairSharing={"weight": "-1"}).build()
    )
    assert [(item.rule, item.origin) for item in errors] == [("LQ-5", "K")]
