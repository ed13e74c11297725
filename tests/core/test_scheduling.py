"""Scheduling rules of docs/scheduling.md, as named cases with builders."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from scheduler.api.config import parse_configuration
from scheduler.core.decisions import Admit, Pending
from scheduler.core.engine import Engine, NamespaceInfo
from tests.builders import (
    T0,
    assignment,
    cluster_queue,
    engine_with,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)


def final(engine: Engine) -> dict[str, tuple[str, str | None, str]]:
    results, steady = engine.run_until_steady(T0)
    assert steady
    return {
        key: (s.state, s.reason, s.message)
        for key in engine.view.workload_keys()
        for s in [engine.view.workload_state(key)]
    }


def flavors_of(engine: Engine, key: str) -> dict[str, str]:
    return dict(engine.view.workload_state(key).admission[0].flavors)


# --- credits transformation ----------------------------------------------------


def test_credits_transformation_example() -> None:
    config = parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "resources": {
                "transformations": [
                    {"input": "cpu", "strategy": "Retain", "outputs": {"cpu_credits": "1"}}
                ]
            },
        }
    )
    engine = engine_with(
        resource_flavor("on-demand"),
        resource_flavor("spot"),
        resource_flavor("credits"),
        cluster_queue("team-cluster-queue")
        .resource_group(flavor_quotas("on-demand", cpu="9"), flavor_quotas("spot", cpu="9"))
        .resource_group(flavor_quotas("credits", cpu_credits="14")),
        local_queue("lq").cluster_queue("team-cluster-queue"),
        *[workload(f"job{i}").queue("lq").created(i).pod_set(cpu="3") for i in range(1, 6)],
        config=config,
    )
    states = final(engine)
    assert [flavors_of(engine, f"default/job{i}") for i in (1, 2, 3, 4)] == [
        {"cpu": "on-demand", "cpu_credits": "credits"}
    ] * 3 + [{"cpu": "spot", "cpu_credits": "credits"}]
    assert states["default/job5"] == (
        "Pending",
        "WaitingForQuota",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu_credits in "
        "flavor credits, 1 more needed",
    )
    usage = engine.view.cluster_queue_status("team-cluster-queue").usage
    assert (
        str(usage["on-demand"]["cpu"]),
        str(usage["spot"]["cpu"]),
        str(usage["credits"]["cpu_credits"]),
    ) == ("9", "3", "12")


def test_excluded_prefix_is_not_counted() -> None:
    config = parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "resources": {"excludeResourcePrefixes": ["example.com/"]},
        }
    )
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="1")),
        local_queue("lq").cluster_queue("cq"),
        workload("w").queue("lq").pod_set(requests={"cpu": "1", "example.com/gpu": "2"}),
        config=config,
    )
    assert final(engine)["default/w"][0] == "Admitted"


# --- pods resource and uncovered resources --------------------------------------


def test_uncovered_resource_blocks_with_no_matching_flavor() -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="10")),
        local_queue("lq").cluster_queue("cq"),
        workload("w").queue("lq").pod_set(requests={"cpu": "1", "example.com/gpu": "1"}),
    )
    assert final(engine)["default/w"] == (
        "Pending",
        "NoMatchingFlavor",
        "couldn't assign flavors to pod set main: resource example.com/gpu unavailable in "
        "ClusterQueue",
    )


def test_pods_resource_counts_pods() -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="100", pods="5")),
        local_queue("lq").cluster_queue("cq"),
        workload("a").queue("lq").created(1).pod_set(count=3, cpu="1"),
        workload("b").queue("lq").created(2).pod_set(count=3, cpu="1"),
    )
    states = final(engine)
    assert states["default/a"][0] == "Admitted"
    assert str(engine.view.workload_state("default/a").admission[0].resource_usage["pods"]) == "3"
    assert states["default/b"] == (
        "Pending",
        "WaitingForQuota",
        "couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor f, "
        "1 more needed",
    )


# --- borrowing level: ordering and re-check inside one cycle ----------------------


def team_ab(**kwargs: Any) -> Engine:
    return engine_with(
        resource_flavor("default"),
        cluster_queue("team-a").cohort("team-ab").resource_group(flavor_quotas("default", cpu="9")),
        cluster_queue("team-b")
        .cohort("team-ab")
        .resource_group(flavor_quotas("default", cpu="12")),
        local_queue("a").cluster_queue("team-a"),
        local_queue("b").cluster_queue("team-b"),
        workload("a-run")
        .queue("a")
        .reserve_quota("team-a", assignment({"cpu": "default"}, {"cpu": "9"}))
        .pod_set(cpu="9"),
        workload("b-run")
        .queue("b")
        .reserve_quota("team-b", assignment({"cpu": "default"}, {"cpu": "6"}))
        .pod_set(cpu="6"),
        **kwargs,
    )


def test_team_b_gets_nominal_before_team_a_borrows() -> None:
    # One Kueue cycle: kuota's further rounds would retry a1 in the same call.
    engine = team_ab(one_admission_per_queue=True)
    engine.apply(workload("a1").queue("a").created(1).priority(100).pod_set(cpu="4").model())
    engine.apply(workload("b1").queue("b").created(2).pod_set(cpu="4").model())
    first = engine.cycle(T0).decisions
    assert first[0] == Admit(
        "default/b1", "team-b", first[0].pod_sets, "Quota reserved in ClusterQueue team-b"
    )  # type: ignore[union-attr]
    assert first[1] == Pending(
        "default/a1",
        "team-a",
        "WaitingForQuota",
        "Workload no longer fits after processing another workload",
    )
    kuota = team_ab()
    kuota.apply(workload("a1").queue("a").created(1).priority(100).pod_set(cpu="4").model())
    kuota.apply(workload("b1").queue("b").created(2).pod_set(cpu="4").model())
    decisions = {d.workload: d for d in kuota.cycle(T0).decisions}
    assert isinstance(decisions["default/b1"], Admit), "kuota's cycle: team-b still first"
    assert decisions["default/a1"].message == (  # type: ignore[union-attr]
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "default, 2 more needed"
    )


@pytest.mark.parametrize(
    "name, wl2_requests, want_wl2",
    [
        ("same resource, too much", {"r1": "16"}, "Pending"),
        ("same resource, exactly the rest", {"r1": "14"}, "Admitted"),
        ("other resource", {"r2": "16"}, "Admitted"),
    ],
)
def test_cq1_cq3_example(name: str, wl2_requests: dict[str, str], want_wl2: str) -> None:
    cqs = [
        cluster_queue(f"cq{i}")
        .cohort("c")
        .resource_group(flavor_quotas("default", r1="10", r2="10"))
        for i in (1, 2, 3)
    ]
    engine = engine_with(
        resource_flavor("default"),
        *cqs,
        *[local_queue(f"lq{i}").cluster_queue(f"cq{i}") for i in (1, 2, 3)],
        workload("wl1").queue("lq1").priority(10).pod_set(r1="16"),
        workload("wl2").queue("lq2").pod_set(requests=wl2_requests),
        one_admission_per_queue=True,
    )
    decisions = {d.workload: d for d in engine.cycle(T0).decisions}
    assert isinstance(decisions["default/wl1"], Admit)
    wl2 = decisions["default/wl2"]
    assert type(wl2).__name__ == ("Admit" if want_wl2 == "Admitted" else "Pending")
    if want_wl2 == "Pending":
        assert wl2.message == "Workload no longer fits after processing another workload"  # type: ignore[union-attr]


def test_borrowing_limit_exceeds_max_quota() -> None:
    engine = engine_with(
        resource_flavor("default"),
        cluster_queue("team-a")
        .cohort("ab")
        .resource_group(flavor_quotas("default").resource("cpu", "9", borrowing_limit="1")),
        cluster_queue("team-b").cohort("ab").resource_group(flavor_quotas("default", cpu="12")),
        local_queue("a").cluster_queue("team-a"),
        workload("big").queue("a").pod_set(cpu="11"),
    )
    assert final(engine)["default/big"] == (
        "Pending",
        "ExceedsMaxQuota",
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, "
        "previously considered "
        "podsets requests (0) + current podset request (11) > maximum capacity (10)",
    )


# --- StrictFIFO vs BestEffortFIFO --------------------------------------------------


@pytest.mark.parametrize("strict, want_w2", [(True, "Pending"), (False, "Admitted")])
def test_strict_vs_best_effort(strict: bool, want_w2: str) -> None:
    cq = cluster_queue("cq").resource_group(flavor_quotas("f", cpu="10"))
    if strict:
        cq.strict_fifo()
    engine = engine_with(
        resource_flavor("f"),
        cq,
        local_queue("lq").cluster_queue("cq"),
        workload("run")
        .queue("lq")
        .reserve_quota("cq", assignment({"cpu": "f"}, {"cpu": "6"}))
        .pod_set(cpu="6"),
        workload("w1").queue("lq").created(1).pod_set(cpu="6"),
        workload("w2").queue("lq").created(2).pod_set(cpu="2"),
    )
    states = final(engine)
    assert states["default/w2"][0] == want_w2
    assert states["default/w1"][0] == "Pending"
    engine.finish("default/run")
    states = final(engine)
    assert states["default/w1"][0] == "Admitted"


# --- namespaceSelector ----------------------------------------------------------


@pytest.mark.parametrize(
    "selector, labels, admitted",
    [
        (None, {"team": "a"}, False),
        ({}, {"team": "a"}, True),
        ({"matchLabels": {"team": "a"}}, {"team": "a"}, True),
        ({"matchLabels": {"team": "a"}}, {"team": "b"}, False),
    ],
)
def test_namespace_selector(selector: Any, labels: dict[str, str], admitted: bool) -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq")
        .namespace_selector(selector)
        .resource_group(flavor_quotas("f", cpu="1")),
        local_queue("lq", "ns").cluster_queue("cq"),
        NamespaceInfo("ns", labels),
        workload("w", "ns").queue("lq").pod_set(cpu="1"),
    )
    state = final(engine)["ns/w"]
    if admitted:
        assert state[0] == "Admitted"
    else:
        assert state == (
            "Pending",
            "Misconfigured",
            "workload namespace doesn't match ClusterQueue selector",
        )


def test_namespace_label_change_requeues() -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq")
        .namespace_selector({"matchLabels": {"team": "a"}})
        .resource_group(flavor_quotas("f", cpu="1")),
        local_queue("lq", "ns").cluster_queue("cq"),
        NamespaceInfo("ns", {}),
        workload("w", "ns").queue("lq").pod_set(cpu="1"),
    )
    assert final(engine)["ns/w"][0] == "Pending"
    engine.apply(NamespaceInfo("ns", {"team": "a"}))
    assert final(engine)["ns/w"][0] == "Admitted"


def test_only_a_new_cluster_queue_or_a_new_spec_requeues_its_tree() -> None:
    """Requeue on "ClusterQueue created, or its spec changes".  kuota's own status writes come
    back as ClusterQueue updates about once a second; they must not move the inadmissible
    workloads of the whole cohort back for another try each time."""
    queue = cluster_queue("cq").cohort("co").resource_group(flavor_quotas("f", cpu="1"))
    engine = engine_with(
        resource_flavor("f"),
        queue,
        local_queue("lq").cluster_queue("cq"),
        workload("big").queue("lq").pod_set(cpu="2"),
    )
    assert final(engine)["default/big"][0] == "Pending"
    built = queue.model()
    engine.apply(replace(built, status=replace(built.status, pending_workloads=1)))
    assert engine.queues.pending.take_requeue_events() == (set(), set())
    engine.apply(
        cluster_queue("cq").cohort("co").resource_group(flavor_quotas("f", cpu="2")).model()
    )
    assert engine.queues.pending.take_requeue_events() == ({"cq"}, set())


def test_a_local_queue_status_update_routes_nothing_again() -> None:
    """Only a new ClusterQueue or stop policy changes where a LocalQueue's workloads go."""
    queue = local_queue("lq").cluster_queue("cq")
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="1")),
        queue,
        workload("w").queue("lq").pod_set(cpu="2"),
    )
    routed: list[str] = []
    route = engine.queues.route
    engine.queues.route = lambda record, **kw: (routed.append(record.key), route(record, **kw))[1]  # type: ignore[method-assign]
    built = queue.model()
    engine.apply(replace(built, status=replace(built.status, pending_workloads=1)))
    assert routed == []
    engine.apply(local_queue("lq").cluster_queue("other").model())
    assert routed == ["default/w"]
    assert final(engine)["default/w"][1:] == ("Misconfigured", "ClusterQueue other doesn't exist")


# --- queues, stop policies, inactive queues -------------------------------------


def test_missing_local_queue_and_cluster_queue() -> None:
    engine = engine_with(
        resource_flavor("f"),
        local_queue("lq").cluster_queue("nope"),
        workload("a").queue("missing").pod_set(cpu="1"),
        workload("b").queue("lq").pod_set(cpu="1"),
        workload("c").queue("lq").inactive().pod_set(cpu="1"),
    )
    states = final(engine)
    assert states["default/a"] == ("Pending", "Misconfigured", "LocalQueue missing doesn't exist")
    assert states["default/b"] == ("Pending", "Misconfigured", "ClusterQueue nope doesn't exist")
    assert states["default/c"] == ("Pending", "Deactivated", "The workload is deactivated")
    engine.apply(cluster_queue("nope").resource_group(flavor_quotas("f", cpu="1")).model())
    assert final(engine)["default/b"][0] == "Admitted"


@pytest.mark.parametrize("policy", ["Hold", "HoldAndDrain"])
def test_stop_policy(policy: str) -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").stop_policy(policy).resource_group(flavor_quotas("f", cpu="4")),
        local_queue("lq").cluster_queue("cq"),
        workload("w").queue("lq").pod_set(cpu="1"),
    )
    assert final(engine)["default/w"] == ("Pending", "Suspended", "ClusterQueue cq is inactive")
    status = engine.view.cluster_queue_status("cq")
    assert (status.active, status.active_reason, status.active_message, status.pending) == (
        False,
        "Stopped",
        "Can't admit new workloads: is stopped.",
        1,
    )
    engine.apply(cluster_queue("cq").resource_group(flavor_quotas("f", cpu="4")).model())
    assert final(engine)["default/w"][0] == "Admitted"


def test_stopped_local_queue() -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="4")),
        local_queue("lq").cluster_queue("cq").stop_policy("Hold"),
        workload("w").queue("lq").pod_set(cpu="1"),
    )
    assert final(engine)["default/w"] == ("Pending", "Suspended", "LocalQueue lq is inactive")
    assert engine.view.cluster_queue_status("cq").pending == 0


def test_inactive_cluster_queue_missing_flavor() -> None:
    engine = engine_with(
        cluster_queue("cq").resource_group(flavor_quotas("default-flavor", cpu="4")),
        local_queue("lq").cluster_queue("cq"),
        workload("w").queue("lq").pod_set(cpu="1"),
    )
    status = engine.view.cluster_queue_status("cq")
    assert (status.active_reason, status.active_message) == (
        "FlavorNotFound",
        "Can't admit new workloads: references missing ResourceFlavor(s): default-flavor.",
    )
    first = engine.cycle(T0).decisions
    assert first == (Pending("default/w", "cq", "Suspended", "ClusterQueue cq is inactive"),)
    engine.apply(resource_flavor("default-flavor").model())
    assert final(engine)["default/w"][0] == "Admitted"
    assert engine.view.cluster_queue_status("cq").active_message == "Can admit new workloads"


# --- eligibility, fungibility, reasons, research-pool --------------------------------


def research_pool(*workloads: Any, used_ondemand: int = 0) -> Engine:
    objects: list[Any] = [
        resource_flavor("ondemand").node_labels(**{"instance-type": "ondemand"}),
        resource_flavor("spot").node_labels(**{"instance-type": "spot"}).taint("spot", "true"),
        cluster_queue("research-pool").resource_group(
            flavor_quotas("ondemand", cpu="1000"), flavor_quotas("spot", cpu="2000")
        ),
        local_queue("lq").cluster_queue("research-pool"),
    ]
    if used_ondemand:
        objects.append(
            workload("running")
            .queue("lq")
            .pod_set(cpu=str(used_ondemand))
            .reserve_quota(
                "research-pool", assignment({"cpu": "ondemand"}, {"cpu": str(used_ondemand)})
            )
        )
    return engine_with(*objects, *workloads)


def test_research_pool_fits_ondemand() -> None:
    engine = research_pool(
        workload("j").queue("lq").pod_set(cpu="3").toleration("spot", "true"), used_ondemand=990
    )
    final(engine)
    assert flavors_of(engine, "default/j") == {"cpu": "ondemand"}


def test_research_pool_falls_to_spot_when_tolerated() -> None:
    engine = research_pool(
        workload("j").queue("lq").pod_set(cpu="3").toleration("spot", "true"), used_ondemand=1000
    )
    final(engine)
    assert flavors_of(engine, "default/j") == {"cpu": "spot"}


def test_research_pool_untolerated_spot() -> None:
    engine = research_pool(workload("j").queue("lq").pod_set(cpu="3"), used_ondemand=1000)
    assert final(engine)["default/j"] == (
        "Pending",
        "WaitingForQuota",
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        "ondemand, 3 more needed, "
        "untolerated taint {spot true NoSchedule <nil>} in flavor spot",
    )


def test_research_pool_node_selector() -> None:
    engine = research_pool(
        workload("j")
        .queue("lq")
        .pod_set(cpu="3")
        .toleration("spot", "true")
        .node_selector(**{"instance-type": "spot"})
    )
    final(engine)
    assert flavors_of(engine, "default/j") == {"cpu": "spot"}


def test_tolerations_exists_operator_and_flavor_tolerations() -> None:
    engine = engine_with(
        resource_flavor("t").taint("gpu", "yes").toleration("gpu", operator="Exists"),
        cluster_queue("cq").resource_group(flavor_quotas("t", cpu="4")),
        local_queue("lq").cluster_queue("cq"),
        workload("w").queue("lq").pod_set(cpu="1"),
    )
    assert final(engine)["default/w"][0] == "Admitted"


@pytest.mark.parametrize(
    "terms, want",
    [
        ([[("zone", "In", ["a"])]], "f-a"),
        ([[("zone", "In", ["b"])]], "f-b"),
        (
            [[("zone", "In", ["z"])], [("other", "Exists", [])]],
            "f-a",
        ),  # a term emptied by reduction drops affinity
        ([[("zone", "NotIn", ["a", "b"])]], None),
    ],
)
def test_required_affinity(terms: list[Any], want: str | None) -> None:
    engine = engine_with(
        resource_flavor("f-a").node_labels(zone="a"),
        resource_flavor("f-b").node_labels(zone="b"),
        cluster_queue("cq").resource_group(
            flavor_quotas("f-a", cpu="4"), flavor_quotas("f-b", cpu="4")
        ),
        local_queue("lq").cluster_queue("cq"),
        workload("w").queue("lq").pod_set(cpu="1").required_affinity(*terms),
    )
    state = final(engine)["default/w"]
    if want is None:
        assert state == (
            "Pending",
            "NoMatchingFlavor",
            "couldn't assign flavors to pod set main: flavor f-a doesn't "
            "match node affinity, flavor f-b doesn't match node affinity",
        )
    else:
        assert flavors_of(engine, "default/w") == {"cpu": want}


def fungibility_case(first_used: int, second_used: int, cq_builder: Any) -> Engine:
    """Two flavors f1 (4 cpu) and f2 (4 cpu) in CQ "cq", cohort with "lender" (4 cpu in f1)."""
    return engine_with(
        resource_flavor("f1"),
        resource_flavor("f2"),
        cq_builder.cohort("c").resource_group(
            flavor_quotas("f1", cpu="4"), flavor_quotas("f2", cpu="4")
        ),
        cluster_queue("lender")
        .cohort("c")
        .resource_group(flavor_quotas("f1", cpu="4"), flavor_quotas("f2", cpu="0")),
        local_queue("lq").cluster_queue("cq"),
        workload("used")
        .queue("lq")
        .pod_set(cpu="1")
        .reserve_quota("cq", assignment({"cpu": "f1"}, {"cpu": str(first_used)})),
        *(
            [
                workload("used2")
                .queue("lq")
                .pod_set(cpu="1")
                .reserve_quota("cq", assignment({"cpu": "f2"}, {"cpu": str(second_used)}))
            ]
            if second_used
            else []
        ),
        workload("w").queue("lq").created(5).pod_set(cpu="2"),
    )


@pytest.mark.parametrize(
    "name, first_used, second_used, when_can_borrow, want",
    [
        ("fit in flavor 1", 0, 0, None, "f1"),
        ("borrowing in flavor 1 stops the scan", 3, 0, None, "f1"),
        ("TryNextFlavor on borrowing prefers f2", 3, 0, "TryNextFlavor", "f2"),
        ("TryNextFlavor, both borrow: lower level wins, tie keeps f1", 3, 3, "TryNextFlavor", "f1"),
    ],
)
def test_fungibility_table(
    name: str, first_used: int, second_used: int, when_can_borrow: str | None, want: str
) -> None:
    cq = cluster_queue("cq")
    if when_can_borrow:
        cq.fungibility(when_can_borrow=when_can_borrow)
    engine = fungibility_case(first_used, second_used, cq)
    final(engine)
    assert flavors_of(engine, "default/w") == {"cpu": want}


def test_preempt_no_candidates_then_fit_chooses_second() -> None:
    engine = engine_with(
        resource_flavor("f1"),
        resource_flavor("f2"),
        cluster_queue("cq").resource_group(
            flavor_quotas("f1", cpu="4"), flavor_quotas("f2", cpu="4")
        ),
        local_queue("lq").cluster_queue("cq"),
        workload("used")
        .queue("lq")
        .pod_set(cpu="4")
        .reserve_quota("cq", assignment({"cpu": "f1"}, {"cpu": "4"})),
        workload("w").queue("lq").created(5).pod_set(cpu="2"),
    )
    final(engine)
    assert flavors_of(engine, "default/w") == {"cpu": "f2"}


@pytest.mark.parametrize(
    "name, second_flavor_quota, cpu, want_reason",
    [
        ("taint + insufficient unused", "4", "3", "WaitingForQuota"),
        ("taint + exceeds max", "4", "5", "ExceedsMaxQuota"),
        ("taint on both", None, "1", "NoMatchingFlavor"),
    ],
)
def test_no_fit_reasons(
    name: str, second_flavor_quota: str | None, cpu: str, want_reason: str
) -> None:
    flavors = [flavor_quotas("tainted", cpu="4")]
    objects: list[Any] = [
        resource_flavor("tainted").taint("k", "v"),
        local_queue("lq").cluster_queue("cq"),
    ]
    if second_flavor_quota is not None:
        flavors.append(flavor_quotas("plain", cpu=second_flavor_quota))
        objects.append(resource_flavor("plain"))
        objects.append(
            workload("used")
            .queue("lq")
            .pod_set(cpu="2")
            .reserve_quota("cq", assignment({"cpu": "plain"}, {"cpu": "2"}))
        )
    objects.append(cluster_queue("cq").cohort("solo").resource_group(*flavors))
    objects.append(
        cluster_queue("other")
        .cohort("solo")
        .resource_group(
            flavor_quotas("tainted", cpu="0"),
            *([flavor_quotas("plain", cpu="0")] if second_flavor_quota else []),
        )
    )
    objects.append(workload("w").queue("lq").created(5).pod_set(cpu=cpu))
    engine = engine_with(*objects)
    state = final(engine)["default/w"]
    assert state[1] == want_reason


def test_multiple_pod_sets_accumulate_and_message_names_failing_pod_set() -> None:
    engine = engine_with(
        resource_flavor("default"),
        cluster_queue("cq").resource_group(flavor_quotas("default", cpu="50")),
        local_queue("lq").cluster_queue("cq"),
        workload("w")
        .queue("lq")
        .pod_set("one", count=1, cpu="30")
        .pod_set("two", count=1, cpu="30"),
    )
    assert final(engine)["default/w"] == (
        "Pending",
        "ExceedsMaxQuota",
        "couldn't assign flavors to pod set two: insufficient quota for cpu in flavor default, "
        "previously considered "
        "podsets requests (30) + current podset request (30) > maximum capacity (50)",
    )


def test_memory_quantities_print_binary() -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="4", memory="1Gi")),
        local_queue("lq").cluster_queue("cq"),
        workload("a").queue("lq").created(1).pod_set(cpu="500m", memory="512Mi"),
        workload("b").queue("lq").created(2).pod_set(cpu="500m", memory="1Gi"),
    )
    states = final(engine)
    assert states["default/b"][2] == (
        "couldn't assign flavors to pod set main: insufficient unused quota for "
        "memory in flavor f, 512Mi more needed"
    )
    assert str(engine.view.workload_state("default/a").admission[0].resource_usage["cpu"]) == "500m"


def test_priority_orders_queue() -> None:
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="1")),
        local_queue("lq").cluster_queue("cq"),
        workload("old").queue("lq").created(1).pod_set(cpu="1"),
        workload("important").queue("lq").created(2).priority(10).pod_set(cpu="1"),
    )
    assert final(engine)["default/important"][0] == "Admitted"
    assert final(engine)["default/old"][0] == "Pending"


def test_a_workload_on_hold_is_not_queued_until_the_hold_comes_off() -> None:
    """``QuotaReserved=False`` reason ``OnHold`` (a StatefulSet scaled to zero): it waits
    with that reason and message, even with room, and queues once the hold is gone."""
    held = (
        workload("w")
        .queue("lq")
        .pod_set(cpu="1")
        .condition("QuotaReserved", "False", reason="OnHold", message="scaled to zero")
    )
    engine = engine_with(
        resource_flavor("f"),
        cluster_queue("cq").resource_group(flavor_quotas("f", cpu="2")),
        local_queue("lq").cluster_queue("cq"),
        held,
    )
    assert final(engine)["default/w"] == ("Pending", "OnHold", "scaled to zero")
    released = workload("w").queue("lq").pod_set(cpu="1")
    released.condition("QuotaReserved", "False", reason="PendingEvaluation")
    engine.apply(released.model())
    assert final(engine)["default/w"][0] == "Admitted"
