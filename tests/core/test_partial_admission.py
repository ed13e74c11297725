"""Partial admission: the largest count that fits, down to ``minCount``.

See docs/scheduling.md#partial-admission.

Kueue's ``sample-job-partial-admission`` asks for 20 one-CPU pods with a
minimum of 5 in a ClusterQueue of 9 CPUs: Kueue admits 9.
"""

from __future__ import annotations

from typing import Any

from scheduler.api.quantity import Quantity
from scheduler.core.decisions import Evict
from scheduler.core.engine import Engine
from scheduler.core.partial_admission import counts_at, search
from scheduler.core.workload import PodSetInfo
from tests.builders import T0, cluster_queue, flavor_quotas, local_queue, resource_flavor, workload


def engine_with(cpu: str, *workloads: Any, **preemption: str) -> Engine:
    engine = Engine()
    engine.apply(resource_flavor("default-flavor").model())
    queue = cluster_queue("cluster-queue").resource_group(flavor_quotas("default-flavor", cpu=cpu))
    if preemption:
        queue.preemption(**preemption)
    engine.apply(queue.model())
    engine.apply(local_queue("user-queue").cluster_queue("cluster-queue").model())
    for item in workloads:
        engine.apply(item.model())
    return engine


def settle(engine: Engine) -> list[Evict]:
    evicted: list[Evict] = []

    def release(result: Any) -> None:
        for decision in result.decisions:
            if isinstance(decision, Evict):
                evicted.append(decision)
                engine.release(decision.victim)

    _, steady = engine.run_until_steady(T0, max_cycles=50, after_cycle=release)
    assert steady
    return evicted


def test_the_sample_job_is_admitted_with_the_nine_pods_that_fit() -> None:
    engine = engine_with(
        "9",
        workload("sample-job-partial-admission")
        .queue("user-queue")
        .priority(0)
        .created(10)
        .pod_set(count=20, cpu="1")
        .min_count(5),
    )
    settle(engine)
    state = engine.view.workload_state("default/sample-job-partial-admission")
    assert state.state == "Admitted"
    (pod_set,) = state.admission
    assert pod_set.count == 9
    assert pod_set.flavors == {"cpu": "default-flavor"}
    assert pod_set.resource_usage == {"cpu": Quantity.parse("9")}


def test_the_quota_left_by_other_workloads_is_what_fits() -> None:
    engine = engine_with(
        "9",
        workload("small").queue("user-queue").created(0).pod_set(count=3, cpu="1"),
        workload("wide")
        .queue("user-queue")
        .priority(0)
        .created(10)
        .pod_set(count=20, cpu="1")
        .min_count(5),
    )
    settle(engine)
    assert engine.view.workload_state("default/small").admission[0].count == 3
    assert engine.view.workload_state("default/wide").admission[0].count == 6


def test_a_workload_that_fits_whole_is_not_cut() -> None:
    engine = engine_with(
        "30",
        workload("wide")
        .queue("user-queue")
        .priority(0)
        .created(10)
        .pod_set(count=20, cpu="1")
        .min_count(5),
    )
    settle(engine)
    assert engine.view.workload_state("default/wide").admission[0].count == 20


def test_the_minimum_is_respected_and_below_it_the_workload_stays_pending() -> None:
    engine = engine_with(
        "9",
        workload("big").queue("user-queue").created(0).pod_set(count=5, cpu="1"),
        workload("wide")
        .queue("user-queue")
        .priority(0)
        .created(10)
        .pod_set(count=20, cpu="1")
        .min_count(5),
    )
    settle(engine)
    state = engine.view.workload_state("default/wide")
    assert state.state == "Pending"
    # Kueue's reason and message for the full request, and what kuota tried besides.
    assert state.reason == "ExceedsMaxQuota"
    assert state.message == (
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor "
        "default-flavor, previously considered podsets requests (0) + current podset request "
        "(20) > maximum capacity (9); partial admission: not even the minimum (5 of 20 pods in "
        "pod set main) can be admitted"
    )
    # Once the quota frees, the workload is admitted with what fits then.
    engine.finish("default/big")
    settle(engine)
    assert engine.view.workload_state("default/wide").admission[0].count == 9


def test_exactly_the_minimum_is_admitted_when_only_the_minimum_fits() -> None:
    engine = engine_with(
        "9",
        workload("big").queue("user-queue").created(0).pod_set(count=4, cpu="1"),
        workload("wide")
        .queue("user-queue")
        .priority(0)
        .created(10)
        .pod_set(count=20, cpu="1")
        .min_count(5),
    )
    settle(engine)
    assert engine.view.workload_state("default/wide").admission[0].count == 5


def test_a_reduced_count_may_preempt_lower_priority_workloads() -> None:
    """A reduced count is accepted as a Fit or as a preemption with targets."""
    low = (
        workload("low")
        .queue("user-queue")
        .created(0)
        .pod_set(count=4, cpu="1")
        .reserve_quota("cluster-queue", flavor="default-flavor")
    )
    engine = engine_with(
        "9",
        low,
        workload("wide")
        .queue("user-queue")
        .priority(100)
        .created(10)
        .pod_set(count=20, cpu="1")
        .min_count(5),
        withinClusterQueue="LowerPriority",
    )
    evicted = settle(engine)
    assert [decision.victim for decision in evicted] == ["default/low"]
    assert engine.view.workload_state("default/wide").admission[0].count == 9


def pod_set(count: int, minimum: int | None) -> PodSetInfo:
    return PodSetInfo(
        name="main",
        count=count,
        per_pod={"cpu": 1000},
        tolerations=(),
        node_selector={},
        affinity=None,
        min_count=minimum,
    )


def test_counts_shrink_in_proportion_to_each_pod_sets_room() -> None:
    pod_sets = [pod_set(20, 5), pod_set(4, None)]
    assert counts_at(pod_sets, 0) == (20, 4)
    assert counts_at(pod_sets, 15) == (5, 4)
    assert counts_at(pod_sets, 11) == (9, 4)


def test_search_returns_the_largest_accepted_count_or_none() -> None:
    pod_sets = [pod_set(20, 5)]
    tried: list[int] = []

    def fits_in(capacity: int) -> Any:
        def attempt(candidate: tuple[PodSetInfo, ...]) -> int | None:
            tried.append(candidate[0].count)
            return candidate[0].count if candidate[0].count <= capacity else None

        return attempt

    assert search(pod_sets, fits_in(9)) == 9
    assert len(tried) <= 5
    assert search(pod_sets, fits_in(5)) == 5
    assert search(pod_sets, fits_in(4)) is None


def test_preemption_for_the_full_count_comes_before_a_cut() -> None:
    """The reduced search runs only when the full count has no preemption targets."""
    low = (
        workload("low")
        .queue("user-queue")
        .created(0)
        .pod_set(count=15, cpu="1")
        .reserve_quota("cluster-queue", flavor="default-flavor")
    )
    engine = engine_with(
        "20",
        low,
        workload("wide")
        .queue("user-queue")
        .priority(100)
        .created(10)
        .pod_set(count=20, cpu="1")
        .min_count(5),
        withinClusterQueue="LowerPriority",
    )
    evicted = settle(engine)
    assert [decision.victim for decision in evicted] == ["default/low"]
    assert engine.view.workload_state("default/wide").admission[0].count == 20
