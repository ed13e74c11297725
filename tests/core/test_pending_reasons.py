"""Pending decisions carry the structure their message is rendered from.

See docs/scheduling.md#pending-reasons.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from scheduler.api.models import Taint
from scheduler.api.quantity import Quantity
from scheduler.core.decisions import Pending
from scheduler.core.engine import Engine
from scheduler.core.pending_reasons import (
    AffinityMismatch,
    ExceedsMaximum,
    PreemptionPossibility,
    ResourceUnavailable,
    Shortage,
    UntoleratedTaint,
    pod_set_message,
)
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
from tests.core.test_properties import load, scenarios


def pending_decisions(engine: Engine) -> dict[str, Pending]:
    """The last Pending decision of every workload over one cycle."""
    return {d.workload: d for d in engine.cycle(T0).decisions if isinstance(d, Pending)}


def test_research_pool_shortage_and_taint_of_5_7() -> None:
    engine = engine_with(
        resource_flavor("ondemand").node_labels(**{"instance-type": "ondemand"}),
        resource_flavor("spot").node_labels(**{"instance-type": "spot"}).taint("spot", "true"),
        cluster_queue("research-pool").resource_group(
            flavor_quotas("ondemand", cpu="1000"), flavor_quotas("spot", cpu="2000")
        ),
        local_queue("lq").cluster_queue("research-pool"),
        workload("running")
        .queue("lq")
        .pod_set(cpu="1000")
        .reserve_quota("research-pool", assignment({"cpu": "ondemand"}, {"cpu": "1000"})),
        workload("j").queue("lq").pod_set(cpu="3"),
    )
    decision = pending_decisions(engine)["default/j"]
    shortage = Shortage(
        pod_set="main",
        flavor="ondemand",
        resource="cpu",
        amount=Quantity.parse("3"),
        borrowing=False,
        preemption=PreemptionPossibility.NO_CANDIDATES,
    )
    taint = UntoleratedTaint("main", "spot", Taint(key="spot", value="true", effect="NoSchedule"))
    assert (decision.reason, decision.shortages, decision.blockers) == (
        "WaitingForQuota",
        (shortage,),
        (taint,),
    )
    assert (
        decision.message
        == pod_set_message("main", [taint, shortage])
        == (
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
            "ondemand, 3 more needed, untolerated taint {spot true NoSchedule <nil>} in flavor spot"
        )
    )
    state = engine.view.workload_state("default/j")
    assert (state.shortages, state.blockers) == ((shortage,), (taint,))


def test_exceeding_the_maximum_names_the_earlier_pod_sets() -> None:
    engine = engine_with(
        resource_flavor("default"),
        cluster_queue("cq").resource_group(flavor_quotas("default", cpu="50")),
        local_queue("lq").cluster_queue("cq"),
        workload("w").queue("lq").pod_set("one", cpu="30").pod_set("two", cpu="30"),
    )
    decision = pending_decisions(engine)["default/w"]
    assert decision.shortages == ()
    assert decision.blockers == (
        ExceedsMaximum(
            pod_set="two",
            flavor="default",
            resource="cpu",
            earlier=Quantity.parse("30"),
            request=Quantity.parse("30"),
            maximum=Quantity.parse("50"),
        ),
    )


def test_uncovered_resource_and_affinity_are_blockers() -> None:
    engine = engine_with(
        resource_flavor("a").node_labels(pool="a"),
        resource_flavor("b").node_labels(pool="b"),
        cluster_queue("cq").resource_group(
            flavor_quotas("a", cpu="4"), flavor_quotas("b", cpu="4")
        ),
        local_queue("lq").cluster_queue("cq"),
        workload("filler").queue("lq").pod_set(cpu="2").reserve_quota("cq", flavor="b"),
        workload("gpu").queue("lq").created(1).pod_set(requests={"cpu": "1", "gpu": "1"}),
        workload("picky").queue("lq").created(2).pod_set(cpu="3").node_selector(pool="b"),
    )
    engine.run_until_steady(T0)
    assert engine.view.workload_state("default/gpu").blockers == (
        ResourceUnavailable("main", "gpu"),
    )
    picky = engine.view.workload_state("default/picky")
    assert picky.blockers == (AffinityMismatch("main", "a"),)
    assert [(s.flavor, str(s.amount)) for s in picky.shortages] == [("b", "1")]


def test_borrowing_shortage_without_preemption_policy_is_not_preemptible() -> None:
    engine = engine_with(
        resource_flavor("default"),
        cluster_queue("a").cohort("c").resource_group(flavor_quotas("default", cpu="2")),
        cluster_queue("b").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
        local_queue("lq-a").cluster_queue("a"),
        workload("b1").queue("lq-a").pod_set(cpu="4").reserve_quota("b"),
        workload("a1").queue("lq-a").pod_set(cpu="3"),
    )
    decision = pending_decisions(engine)["default/a1"]
    assert decision.reason == "WaitingForQuota"
    assert decision.shortages == (
        Shortage(
            "main", "default", "cpu", Quantity.parse("1"), True, PreemptionPossibility.NOT_POSSIBLE
        ),
    )


def test_preempt_and_reclaim_are_told_apart() -> None:
    within = engine_with(
        resource_flavor("default"),
        cluster_queue("q")
        .resource_group(flavor_quotas("default", cpu="4"))
        .preemption(withinClusterQueue="LowerPriority"),
        local_queue("lq").cluster_queue("q"),
        workload("low").queue("lq").pod_set(cpu="4").reserve_quota("q"),
        workload("high").queue("lq").priority(9).pod_set(cpu="4"),
    )
    decision = pending_decisions(within)["default/high"]
    assert decision.reason == "WaitingForPreemptedWorkloads"
    assert [s.preemption for s in decision.shortages] == [PreemptionPossibility.PREEMPT]
    reclaim = engine_with(
        resource_flavor("default"),
        cluster_queue("a")
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu="4"))
        .preemption(reclaimWithinCohort="Any"),
        cluster_queue("b").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
        local_queue("lq-a").cluster_queue("a"),
        workload("borrower").queue("lq-a").pod_set(cpu="8").reserve_quota("b"),
        workload("owner").queue("lq-a").pod_set(cpu="4"),
    )
    decision = pending_decisions(reclaim)["default/owner"]
    assert decision.reason == "WaitingForPreemptedWorkloads"
    assert [(s.preemption, s.borrowing) for s in decision.shortages] == [
        (PreemptionPossibility.RECLAIM, False)
    ]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_every_flavor_message_is_rendered_from_its_structure(objects: list[Any]) -> None:
    """The message names exactly the shortages and blockers, per pod set, in their order."""
    engine = load(objects)
    pod_sets = {
        obj.key: [str(ps.name) for ps in obj.spec.pod_sets]
        for obj in objects
        if obj.kind == "Workload"
    }
    for _ in range(20):
        result = engine.cycle(T0)
        for decision in result.decisions:
            if not isinstance(decision, Pending):
                continue
            reasons = [*decision.shortages, *decision.blockers]
            if not decision.message.startswith("couldn't assign flavors"):
                assert reasons == [], decision
                continue
            rendered = "; ".join(
                pod_set_message(name, [r for r in reasons if r.pod_set == name])
                for name in pod_sets[decision.workload]
                if any(r.pod_set == name for r in reasons)
            )
            assert decision.message.split(". Pending the preemption")[0] == rendered
            for part in (decision.shortages, decision.blockers):
                cursor = 0  # each reason is found after the one before it (notes may repeat)
                for reason in part:
                    cursor = decision.message.index(reason.note(), cursor) + 1
        if not result.decisions:
            break
