"""Kueue's series as the live scheduler records them, through the executor over a FakeApi."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from scheduler.kube.kueue_metrics import (
    RECORDER,
    STORE,
    local_queue_facts,
    pods_ready_to_evicted,
    queued_since,
    removed_gates,
    unadmitted_facts,
)
from scheduler.metrics.store import HistogramValue
from tests.builders import T0, local_queue, pod, workload
from tests.kube.test_executor import preempted, running
from tests.kube.test_pods_ready import admitted, set_job_status
from tests.kube.world import World


@pytest.fixture(autouse=True)
def leading() -> None:
    RECORDER.role = "leader"


def count(series: str, /, **labels: str) -> float:
    found = STORE.value(series, {**labels, "replica_role": "leader"})
    if isinstance(found, HistogramValue):
        return float(found.count)
    return found or 0.0


CQ = {"cluster_queue": "cq"}
LQ = {"name": "lq", "namespace": "ml"}


async def test_an_admission_counts_with_its_priority_class_and_local_queue() -> None:
    world = World().setup()
    world.add("/apis/scheduling.k8s.io/v1/priorityclasses/high", _high())
    labels = {**CQ, "priority_class": "high"}
    before = [
        count("kueue_quota_reserved_workloads_total", **labels),
        count("kueue_admitted_workloads_total", **labels),
        count("kueue_admission_wait_time_seconds", **labels),
        count("kueue_local_queue_admitted_workloads_total", **LQ, priority_class="high"),
    ]
    await world.submit("train", priority_class_name="high")
    await world.cycle()
    after = [
        count("kueue_quota_reserved_workloads_total", **labels),
        count("kueue_admitted_workloads_total", **labels),
        count("kueue_admission_wait_time_seconds", **labels),
        count("kueue_local_queue_admitted_workloads_total", **LQ, priority_class="high"),
    ]
    assert [b - a for a, b in zip(before, after, strict=True)] == [1, 1, 1, 1]


async def test_a_preemption_counts_the_eviction_and_the_preempting_queue() -> None:
    world = World().setup()
    evicted = {**CQ, "reason": "Preempted", "underlying_cause": "InClusterQueue"}
    before = (
        count("kueue_evicted_workloads_total", **evicted, priority_class=""),
        count("kueue_evicted_workloads_once_total", **evicted, priority_class=""),
        count(
            "kueue_preempted_workloads_total",
            preempting_cluster_queue="cq",
            reason="InClusterQueue",
        ),
        count("kueue_workload_eviction_latency_seconds", **CQ, reason="Preempted"),
    )
    low, _ = await preempted(world)
    assert await world.executor.jobs.reconcile_jobs()  # suspend
    world.deliver()
    assert await world.executor.jobs.reconcile_jobs()  # restore the template
    world.deliver()
    running(world, "low", active=0)
    assert await world.executor.jobs.reconcile_jobs()  # release the quota
    after = (
        count("kueue_evicted_workloads_total", **evicted, priority_class=""),
        count("kueue_evicted_workloads_once_total", **evicted, priority_class=""),
        count(
            "kueue_preempted_workloads_total",
            preempting_cluster_queue="cq",
            reason="InClusterQueue",
        ),
        count("kueue_workload_eviction_latency_seconds", **CQ, reason="Preempted"),
    )
    assert [b - a for a, b in zip(before, after, strict=True)] == [1, 1, 1, 1]


def total(series: str, /, **labels: str) -> float:
    found = STORE.value(series, {**labels, "replica_role": "leader"})
    return found.total if isinstance(found, HistogramValue) else 0.0


async def test_pods_ready_counts_the_time_to_ready_once_per_start() -> None:
    world = World().setup()
    labels = {**CQ, "priority_class": ""}
    lq = {**LQ, "priority_class": ""}
    series = (
        "kueue_ready_wait_time_seconds",
        "kueue_admitted_until_ready_wait_time_seconds",
    )
    before = [count(name, **labels) for name in series]
    before_sum = total("kueue_admitted_until_ready_wait_time_seconds", **labels)
    before_lq = count("kueue_local_queue_ready_wait_time_seconds", **lq)
    await admitted(world)
    world.clock.advance(90)
    set_job_status(world, "train", active=1, ready=1)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    after = [count(name, **labels) for name in series]
    assert [b - a for a, b in zip(before, after, strict=True)] == [1, 1]
    assert total("kueue_admitted_until_ready_wait_time_seconds", **labels) - before_sum == 90
    assert count("kueue_local_queue_ready_wait_time_seconds", **lq) - before_lq == 1
    set_job_status(world, "train", active=1, ready=0)  # WaitForRecovery, then Recovered
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    set_job_status(world, "train", active=1, ready=1)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    assert [count(name, **labels) for name in series] == after, "a recovery is not a start"


async def test_preempting_a_workload_whose_pods_are_ready_counts_how_long_they_ran() -> None:
    world = World().setup()
    world.add("/apis/scheduling.k8s.io/v1/priorityclasses/high", _high())
    evicted = {**CQ, "reason": "Preempted", "underlying_cause": "InClusterQueue"}
    before = count("kueue_pods_ready_to_evicted_time_seconds", **evicted)
    before_sum = total("kueue_pods_ready_to_evicted_time_seconds", **evicted)
    await world.submit("low", cpu="2")
    await world.cycle()
    world.deliver()
    set_job_status(world, "low", active=1, ready=1)
    await world.executor.jobs.reconcile_jobs()
    world.deliver()
    world.clock.advance(120)
    await world.submit("high", cpu="2", priority_class_name="high")
    await world.cycle()
    world.deliver()
    assert count("kueue_pods_ready_to_evicted_time_seconds", **evicted) - before == 1
    assert total("kueue_pods_ready_to_evicted_time_seconds", **evicted) - before_sum == 120


def test_pods_ready_to_evicted_needs_both_conditions_true() -> None:
    def at(minute: int) -> str:
        return (T0 + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def with_conditions(*conditions: tuple[str, str, int]) -> dict[str, Any]:
        return {
            "status": {
                "conditions": [
                    {"type": kind, "status": status, "lastTransitionTime": at(minute)}
                    for kind, status, minute in conditions
                ]
            }
        }

    assert pods_ready_to_evicted(
        with_conditions(("PodsReady", "True", 1), ("Evicted", "True", 4))
    ) == pytest.approx(180)
    assert (
        pods_ready_to_evicted(with_conditions(("PodsReady", "False", 1), ("Evicted", "True", 4)))
        is None
    ), "pods not ready when evicted: not counted (as Kueue)"
    assert pods_ready_to_evicted(with_conditions(("PodsReady", "True", 1))) is None


def test_queued_since_is_the_last_requeue_or_the_creation() -> None:
    created = workload("w").created(0).build()
    assert queued_since(created) == T0
    requeued = workload("w").created(0).condition("Requeued", "True", at=60).build()
    assert queued_since(requeued) == T0 + timedelta(seconds=60)


def test_local_queue_facts_read_the_active_condition() -> None:
    active = local_queue("a", "ml").cluster_queue("cq").condition("Active", "True").build()
    inactive = local_queue("b", "ml").cluster_queue("cq").condition("Active", "False").build()
    unknown = local_queue("c", "ml").cluster_queue("cq").build()
    facts = local_queue_facts({"ml/a": active, "ml/b": inactive, "ml/c": unknown})
    assert [(f.name, f.cluster_queue, f.active) for f in facts] == [
        ("a", "cq", "True"),
        ("b", "cq", "False"),
        ("c", "cq", "Unknown"),
    ]


def test_unadmitted_facts_use_kueues_fallback_reasons() -> None:
    new = workload("new", "ml").queue("lq").build()
    tried = (
        workload("tried", "ml")
        .queue("lq")
        .condition("QuotaReserved", "False", reason="Inadmissible")
        .build()
    )
    admitted = workload("in", "ml").queue("lq").reserve_quota("cq").admitted().build()
    facts = unadmitted_facts({"ml/new": new, "ml/tried": tried, "ml/in": admitted})
    assert [(f.queue_name, f.reason, f.cause) for f in facts] == [
        ("lq", "NoReservation", "PendingEvaluation"),
        ("lq", "NoReservation", "Inadmissible"),
    ]


def test_removed_gates_are_kuotas_only() -> None:
    gated: dict[str, Any] = pod("p").build()
    gated["spec"]["schedulingGates"] = [
        {"name": "kueue.x-k8s.io/admission"},
        {"name": "example.com/other"},
    ]
    ungated = {**gated, "spec": {**gated["spec"], "schedulingGates": []}}
    assert removed_gates(gated, ungated) == ["kueue.x-k8s.io/admission"]
    assert removed_gates(gated, gated) == []


def _high() -> dict[str, Any]:
    from tests.kube.world import priority_class

    return priority_class("high", 100)
