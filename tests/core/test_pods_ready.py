"""waitForPodsReady in the engine (docs/configuration.md#waitforpodsready):
``blockAdmission`` holds every admission while a workload holding quota is not PodsReady,
and ``requeuingStrategy.timestamp`` decides whether a workload evicted by the PodsReady
timeout queues by its eviction time."""

from __future__ import annotations

from datetime import timedelta

from scheduler.core.decisions import Admit, Pending
from scheduler.core.engine import Engine
from tests.builders import (
    T0,
    cluster_queue,
    configuration,
    engine_with,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)

QUEUES = (
    resource_flavor("f"),
    cluster_queue("cq").resource_group(flavor_quotas("f", cpu="10")),
    local_queue("lq").cluster_queue("cq"),
)


def blocking(*objects: object, observed: bool = True) -> Engine:
    config = configuration().set(waitForPodsReady={"blockAdmission": True, "timeout": "5m"})
    return engine_with(*QUEUES, *objects, config=config, pods_observed=observed)


def decided(engine: Engine) -> list[object]:
    """The last Admit or Pending of each workload, in workload order, once steady."""
    results, _ = engine.run_until_steady(T0)
    last: dict[str, object] = {}
    for decision in (d for r in results for d in r.decisions):
        if isinstance(decision, Admit | Pending):
            last[decision.workload] = decision
    return [last[key] for key in sorted(last)]


def test_block_admission_admits_one_workload_until_its_pods_are_ready() -> None:
    engine = blocking(
        workload("a").queue("lq").created(1).pod_set(cpu="1"),
        workload("b").queue("lq").created(2).pod_set(cpu="1"),
    )
    made = decided(engine)
    assert [type(d).__name__ for d in made] == ["Admit", "Pending"]
    waiting = made[1]
    assert isinstance(waiting, Pending)
    assert (waiting.workload, waiting.reason, waiting.message) == (
        "default/b",
        "WaitingForPodsReady",
        "waiting for all admitted workloads to be in PodsReady condition",
    )
    # The first one's status shows its reservation, not yet PodsReady: still held.
    reserved = workload("a").queue("lq").created(1).pod_set(cpu="1").reserve_quota("cq")
    engine.apply(reserved.admitted().model())
    assert [type(d).__name__ for d in decided(engine)] == ["Pending"]
    engine.apply(reserved.admitted().condition("PodsReady", "True", reason="Started").model())
    (admit,) = decided(engine)
    assert isinstance(admit, Admit) and admit.workload == "default/b"


def test_without_block_admission_or_offline_nothing_waits_for_pods() -> None:
    objects = (
        workload("a").queue("lq").created(1).pod_set(cpu="1"),
        workload("b").queue("lq").created(2).pod_set(cpu="1"),
    )
    assert [type(d).__name__ for d in decided(engine_with(*QUEUES, *objects))] == [
        "Admit",
        "Admit",
    ]
    offline = blocking(*objects, observed=False)  # kuota simulate: no pods to wait for
    assert [type(d).__name__ for d in decided(offline)] == ["Admit", "Admit"]


def evicted_late() -> workload:
    """Created first, evicted by the PodsReady timeout at T0 + 100 s."""
    return (
        workload("late").queue("lq").created(1).pod_set(cpu="6").evicted("PodsReadyTimeout", at=100)
    )


def test_a_pods_ready_timeout_queues_by_eviction_time_unless_the_strategy_says_creation() -> None:
    early = workload("early").queue("lq").created(50).pod_set(cpu="6")
    by_eviction = engine_with(*QUEUES, evicted_late(), early)
    (admit,) = [d for d in decided(by_eviction) if isinstance(d, Admit)]
    assert admit.workload == "default/early"
    creation = configuration().set(
        waitForPodsReady={"requeuingStrategy": {"timestamp": "Creation"}}
    )
    by_creation = engine_with(*QUEUES, evicted_late(), early, config=creation)
    (admit,) = [d for d in decided(by_creation) if isinstance(d, Admit)]
    assert admit.workload == "default/late"
    assert T0 + timedelta(seconds=100) > T0  # the eviction is later than both creations


def test_a_backoff_recorded_while_the_quota_is_held_counts_once_it_is_released() -> None:
    held = (
        workload("slow")
        .queue("lq")
        .created(1)
        .pod_set(cpu="1")
        .reserve_quota("cq")
        .admitted()
        .evicted("PodsReadyTimeout", at=100)
        .status(requeueState={"count": 1, "requeueAt": "2024-01-01T00:03:00Z"})
    )
    engine = engine_with(*QUEUES, held)
    now = T0 + timedelta(seconds=100)
    engine.cycle(now)  # the eviction is still going on: the backoff waits for the release
    engine.release("default/slow")
    results, _ = engine.run_until_steady(now + timedelta(seconds=60))
    assert not any(isinstance(d, Admit) for r in results for d in r.decisions)
    results, _ = engine.run_until_steady(T0 + timedelta(minutes=3))
    assert [d.workload for r in results for d in r.decisions if isinstance(d, Admit)] == [
        "default/slow"
    ]
