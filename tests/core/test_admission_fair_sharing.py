"""Admission fair sharing: the decay of a LocalQueue's usage and the order it gives.

See docs/concepts.md#admission-fair-sharing.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from scheduler.core.admission_fair_sharing import (
    FairSharingSettings,
    UsageLedger,
    alpha,
    decayed,
    scaled,
    weighted_usage,
)
from scheduler.core.decisions import Admit
from scheduler.core.engine import Engine
from tests.builders import (
    T0,
    cluster_queue,
    configuration,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)
from tests.core.test_preemption import victims

CPU = 1_000_000_000
"""One CPU in nano-units."""
HOUR = 3600.0


def test_alpha_halves_per_half_life_and_a_zero_half_life_forgets() -> None:
    assert alpha(HOUR, HOUR) == 0.5
    assert alpha(2 * HOUR, HOUR) == 0.75
    assert alpha(0, HOUR) == 0.0
    assert alpha(HOUR, 0) == 0.0


def test_decay_moves_consumed_toward_what_is_held_now() -> None:
    # 4 CPUs consumed, 2 held for one half-life: halfway between.
    assert decayed({"cpu": 4 * CPU}, {"cpu": 2 * CPU}, HOUR, HOUR) == {"cpu": 3 * CPU}
    # Nothing held for two half-lives: a quarter remains.
    assert decayed({"cpu": 4 * CPU}, {}, 2 * HOUR, HOUR) == {"cpu": CPU}
    # A resource only held now comes in at its share.
    assert decayed({}, {"memory": 1000}, HOUR, HOUR) == {"memory": 500}


def test_scaling_rounds_down_to_a_nano_unit() -> None:
    assert scaled({"cpu": 1}, 0.5) == {"cpu": 0}
    assert scaled({"cpu": 3}, 1 / 3) == {"cpu": 0}
    assert scaled({"cpu": 10**9}, 0.1) == {"cpu": 100_000_000}


def test_usage_weights_resources_and_divides_by_the_queue_weight() -> None:
    amounts = {"cpu": 2 * CPU, "nvidia.com/gpu": CPU}
    assert weighted_usage(amounts, 1.0, {}) == 3.0
    assert weighted_usage(amounts, 2.0, {"nvidia.com/gpu": 10.0}) == 6.0
    assert weighted_usage(amounts, 0.0, {}) == math.inf


def ledger(half_life: float = HOUR, sampling: float = 300.0) -> UsageLedger:
    return UsageLedger(FairSharingSettings(half_life=half_life, sampling_interval=sampling))


def test_samples_wait_for_the_interval_unless_a_penalty_can_settle() -> None:
    book = ledger()
    keep = lambda _: "keep"  # noqa: E731
    assert book.sample("ns/lq", {"cpu": 2 * CPU}, keep, T0)  # the first sample starts the clock
    assert book.usage("ns/lq") == 0
    assert not book.sample("ns/lq", {"cpu": 2 * CPU}, keep, T0 + timedelta(seconds=299))
    assert book.sample("ns/lq", {"cpu": 2 * CPU}, keep, T0 + timedelta(hours=1))
    assert book.entry("ns/lq").consumed == {"cpu": CPU}  # type: ignore[union-attr]

    book.admitted("ns/lq", "ns/w", {"cpu": CPU})
    penalty = alpha(300, HOUR)
    assert book.usage("ns/lq") == 1.0 + math.floor(CPU * penalty) / 1e9
    later = T0 + timedelta(hours=1, seconds=1)
    assert book.sample("ns/lq", {"cpu": 3 * CPU}, lambda _: "settle", later)
    entry = book.entry("ns/lq")
    assert entry is not None and entry.penalties == {}
    assert entry.consumed["cpu"] > CPU + CPU * penalty  # the penalty is in consumed now


def test_a_penalty_that_will_never_settle_is_dropped() -> None:
    book = ledger()
    book.admitted("ns/lq", "ns/w", {"cpu": CPU})
    assert book.usage("ns/lq") > 0
    book.sample("ns/lq", {}, lambda _: "drop", T0)
    assert book.usage("ns/lq") == 0


def test_a_zero_half_life_forgets_at_every_sample() -> None:
    book = ledger(half_life=0)
    book.seed("ns/lq", {"cpu": 5 * CPU}, T0)
    book.sample("ns/lq", {"cpu": CPU}, lambda _: "keep", T0 + timedelta(minutes=5))
    assert book.usage("ns/lq") == 0


def test_seed_reads_the_status_only_once() -> None:
    book = ledger()
    book.seed("ns/lq", {"cpu": 4 * CPU}, T0)
    book.sample("ns/lq", {}, lambda _: "keep", T0 + timedelta(hours=1))
    book.seed("ns/lq", {"cpu": 4 * CPU}, T0)  # the status this scheduler wrote before
    assert book.usage("ns/lq") == 2.0


# --- the order of a ClusterQueue's workloads -----------------------------------------------


def afs_engine(*queues: Any, usage_based: bool = True, **config: Any) -> Engine:
    """One ClusterQueue ``cq`` of 1 CPU, LocalQueues ``queues`` in ``default``."""
    engine = Engine(configuration().admission_fair_sharing(**config).model())
    engine.apply(resource_flavor("default").model())
    cq = cluster_queue("cq").resource_group(flavor_quotas("default", cpu="1"))
    if usage_based:
        cq = cq.usage_based_admission()
    engine.apply(cq.model())
    for queue in queues:
        engine.apply(queue.cluster_queue("cq").model())
    return engine


def submit(engine: Engine, name: str, queue: str, created: float, priority: int = 0) -> None:
    engine.apply(
        workload(name).queue(queue).pod_set(cpu="1").created(created).priority(priority).model()
    )


def admission_order(engine: Engine, start: float = 10) -> list[str]:
    """Run cycles, finishing each admitted workload before the next one: names in order."""
    order: list[str] = []
    for step in range(20):
        now = T0 + timedelta(seconds=start + step)
        admitted = [d for d in engine.cycle(now).decisions if isinstance(d, Admit)]
        if not admitted:
            break
        for decision in admitted:
            order.append(decision.workload.split("/", 1)[1])
            engine.finish(decision.workload)
    return order


def test_two_local_queues_take_turns_by_usage() -> None:
    engine = afs_engine(local_queue("lq-a"), local_queue("lq-b"))
    for index, name in enumerate(("a1", "a2", "a3")):
        submit(engine, name, "lq-a", index)
    for index, name in enumerate(("b1", "b2")):
        submit(engine, name, "lq-b", 3 + index)
    assert admission_order(engine) == ["a1", "b1", "a2", "b2", "a3"]


def test_without_usage_based_mode_the_queue_order_is_by_age() -> None:
    engine = afs_engine(local_queue("lq-a"), local_queue("lq-b"), usage_based=False)
    for index, name in enumerate(("a1", "a2", "a3")):
        submit(engine, name, "lq-a", index)
    for index, name in enumerate(("b1", "b2")):
        submit(engine, name, "lq-b", 3 + index)
    assert admission_order(engine) == ["a1", "a2", "a3", "b1", "b2"]


def test_past_usage_read_back_from_status_puts_its_queue_last_even_above_priority() -> None:
    engine = afs_engine(
        local_queue("lq-a").consumed(0, cpu="100"),
        local_queue("lq-b").consumed(0, cpu="1"),
    )
    submit(engine, "a1", "lq-a", 0, priority=100)
    submit(engine, "b1", "lq-b", 1)
    assert admission_order(engine)[0] == "b1"


def test_positions_follow_the_local_queue_usage_as_the_pops_do() -> None:
    """docs/visibility.md#positions: the visibility API and ``kuota explain`` show the
    order the scheduler will admit in, LocalQueue usage first."""
    engine = afs_engine(
        local_queue("lq-a").consumed(0, cpu="100"),
        local_queue("lq-b").consumed(0, cpu="1"),
    )
    submit(engine, "a1", "lq-a", 0, priority=100)
    submit(engine, "a2", "lq-a", 1, priority=100)
    submit(engine, "b1", "lq-b", 2)
    queue = engine.view.pending_queue("cq")
    assert queue is not None
    whole = queue.ranking.keys(0, 10, queue.first)
    assert whole == ["default/b1", "default/a1", "default/a2"]
    assert [engine.view.queue_position(key) for key in whole] == [(1, 3), (2, 3), (3, 3)]
    assert queue.ranking.group_position("default/a2", queue.first) == 1
    assert admission_order(engine) == ["b1", "a1", "a2"]


def test_a_heavier_local_queue_weight_lets_it_use_more() -> None:
    engine = afs_engine(
        local_queue("lq-a").consumed(0, cpu="4").fair_weight("4"),
        local_queue("lq-b").consumed(0, cpu="2"),
    )
    submit(engine, "b1", "lq-b", 0)
    submit(engine, "a1", "lq-a", 1)
    # lq-a: 4 / 4 = 1 before lq-b: 2 / 1.
    assert admission_order(engine)[0] == "a1"


def test_resource_weights_count_in_the_order() -> None:
    engine = afs_engine(
        local_queue("lq-a").consumed(0, cpu="4"),
        local_queue("lq-b").consumed(0, **{"nvidia.com/gpu": "1"}),
        **{"nvidia.com/gpu": 10.0},
    )
    submit(engine, "b1", "lq-b", 0)
    submit(engine, "a1", "lq-a", 1)
    assert admission_order(engine)[0] == "a1"  # 4 CPUs weigh less than 1 GPU x 10


def test_usage_decays_and_is_reported_for_the_status() -> None:
    engine = afs_engine(local_queue("lq-a"), half_life="1h", sampling="5m")
    submit(engine, "a1", "lq-a", 0)
    engine.cycle(T0)
    consumed, last = engine.view.local_queue_fair_usage("default/lq-a") or ({}, None)
    assert last == T0
    # The admission's penalty settles at the next sample, with the usage it held meanwhile.
    engine.sample_fair_usage(T0 + timedelta(seconds=1))
    first, _ = engine.view.local_queue_fair_usage("default/lq-a") or ({}, None)
    assert first["cpu"] == math.floor(CPU * alpha(300, 3600)) + math.floor(CPU * alpha(1, 3600))
    engine.sample_fair_usage(T0 + timedelta(hours=1, seconds=1))
    after_hour, last = engine.view.local_queue_fair_usage("default/lq-a") or ({}, None)
    # Held all hour: halfway from ``first`` toward the one CPU held.
    assert abs(after_hour["cpu"] - (first["cpu"] + CPU) / 2) <= 2
    assert last == T0 + timedelta(hours=1, seconds=1)


def test_without_the_feature_gate_nothing_is_kept() -> None:
    config = configuration().admission_fair_sharing()
    config.raw["featureGates"] = {"AdmissionFairSharing": False}
    assert Engine(config.model()).queues.fair_usage is None


def test_preemption_in_the_queue_takes_from_the_local_queue_that_used_more() -> None:
    def evicted(usage_based: bool) -> list[str]:
        engine = Engine(configuration().admission_fair_sharing().model())
        engine.apply(resource_flavor("default").model())
        cq = (
            cluster_queue("cq")
            .resource_group(flavor_quotas("default", cpu="2"))
            .preemption(withinClusterQueue="LowerPriority")
        )
        engine.apply((cq.usage_based_admission() if usage_based else cq).model())
        for queue in (
            local_queue("lq-a").consumed(0, cpu="100"),
            local_queue("lq-b").consumed(0, cpu="1"),
        ):
            engine.apply(queue.cluster_queue("cq").model())
        # a1 of the heavy lq-a was reserved first: by age alone b1 would go.
        for name, queue, at in (("a1", "lq-a", 1), ("b1", "lq-b", 2)):
            engine.apply(
                workload(name).queue(queue).pod_set(cpu="1").reserve_quota("cq", at=at).model()
            )
        engine.apply(workload("p").queue("lq-b").pod_set(cpu="1").priority(10).created(3).model())
        result = engine.cycle(T0 + timedelta(seconds=10))
        return sorted(victims(result))

    assert evicted(usage_based=True) == ["a1"]
    assert evicted(usage_based=False) == ["b1"]
