"""Properties of preemption over random cohorts, policies and workloads (hypothesis).

One flavor and one resource keep "would it fit without preemption?" a single
comparison.  Victims are released right after the cycle that evicted them,
as ``kuota simulate`` does.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.api.config import parse_configuration
from scheduler.core.decisions import Evict
from scheduler.core.engine import Engine
from scheduler.core.preemption import Preemptor, find_targets
from scheduler.core.preemption.candidates import classical_candidates
from scheduler.core.preemption.classical import minimal_targets
from scheduler.core.resource_node import capacity_available
from tests.builders import (
    T0,
    cluster_queue,
    cohort,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)
from tests.core.test_properties import check_tree

FR = ("default", "cpu")


@st.composite
def clusters(
    draw: Any, *, lower_priority_only: bool = False
) -> tuple[list[Any], list[Any], list[Any], bool]:
    fair = draw(st.booleans())
    queues = []
    for index in range(draw(st.integers(1, 4))):
        builder = cluster_queue(f"q{index}").resource_group(
            flavor_quotas("default", cpu=str(draw(st.integers(0, 6))))
        )
        if draw(st.integers(0, 4)) > 0:
            builder.cohort("c")
        if lower_priority_only:
            within = reclaim = "LowerPriority"
        else:
            within = draw(st.sampled_from(["Never", "LowerPriority", "LowerOrNewerEqualPriority"]))
            reclaim = draw(st.sampled_from(["Never", "LowerPriority", "Any"]))
        policy: dict[str, Any] = {"withinClusterQueue": within, "reclaimWithinCohort": reclaim}
        if reclaim != "Never" and draw(st.booleans()):
            borrow: dict[str, Any] = {"policy": "LowerPriority"}
            if draw(st.booleans()):
                borrow["maxPriorityThreshold"] = draw(st.integers(0, 3))
            policy["borrowWithinCohort"] = borrow
        builder.preemption(**policy)
        if fair and draw(st.integers(0, 3)) == 0:
            builder.fair_weight(draw(st.sampled_from(["0", "2", "500m"])))
        queues.append(builder)
    names = [builder.raw["metadata"]["name"] for builder in queues]

    def some_workloads(prefix: str, first: int, bump: int) -> list[Any]:
        return [
            workload(f"{prefix}{i}")
            .queue(f"lq-{draw(st.sampled_from(names))}")
            .priority(draw(st.integers(0, 3)) + bump)
            .created(first + i)
            .pod_set(count=draw(st.integers(1, 2)), cpu=str(draw(st.integers(1, 4))))
            for i in range(draw(st.integers(0, 8)))
        ]

    return queues, some_workloads("early", 0, 0), some_workloads("late", 100, 2), fair


def new_engine(queues: list[Any], fair: bool, **kwargs: Any) -> Engine:
    config = None
    if fair:
        config = parse_configuration(
            {
                "apiVersion": "config.kueue.x-k8s.io/v1beta2",
                "kind": "Configuration",
                "fairSharing": {},
            }
        )
    engine = Engine(config, **kwargs)
    engine.apply(resource_flavor("default").model())
    for builder in queues:
        engine.apply(builder.model())
        name = builder.raw["metadata"]["name"]
        engine.apply(local_queue(f"lq-{name}").cluster_queue(name).model())
    return engine


def run(engine: Engine, check: Any = None, max_cycles: int = 400) -> tuple[bool, list[Evict]]:
    """Cycle with release until steady; ``check(engine, before, result)`` after every cycle."""
    evictions: list[Evict] = []
    for _ in range(max_cycles):
        engine.cache.tree.ensure_forest()
        before = {
            name: capacity_available(info.node, FR)
            for name, info in engine.cache.cluster_queues.items()
            if info.node
        }
        result, changed = _cycle(engine)
        check_tree(engine)
        if check is not None:
            check(engine, before, result)
        for decision in result.decisions:
            if isinstance(decision, Evict):
                evictions.append(decision)
                engine.release(decision.victim)
        check_tree(engine)
        if not changed:
            return True, evictions
    return False, evictions


def _cycle(engine: Engine) -> Any:
    """One cycle: (its result, whether it changed anything)."""
    results, steady = engine.run_until_steady(T0, max_cycles=1)
    return results[0], not steady


def load(engine: Engine, workloads: list[Any]) -> dict[str, Any]:
    built = {}
    for item in workloads:
        obj = item.model()
        built[obj.key] = obj
        engine.apply(obj)
    return built


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_steady_state_and_quota_invariants_after_every_step(cluster: Any) -> None:
    """No ping-pong, on any input: a steady state, and quota invariants after every step.

    Kueue's algorithm loops forever on some of these
    inputs: a ClusterQueue that both preempts inside itself and reclaims from
    its cohort (``test_no_livelock``).  kuota's loop guard (docs/scheduling.md#loop-guard)
    (``candidates.loop_guard``) and the preemptor's claim on what its
    preemptions free (``cycle``) make every input settle.
    """
    queues, early, late, fair = cluster
    engine = new_engine(queues, fair)
    load(engine, early)
    assert run(engine)[0]
    load(engine, late)
    steady, _ = run(engine)
    assert steady, "preemption ping-pong: no steady state"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(lower_priority_only=True))
def test_lower_priority_never_evicts_a_higher_priority_victim(cluster: Any) -> None:
    queues, early, late, fair = cluster
    engine = new_engine(queues, fair)
    load(engine, early)
    _, first = run(engine)
    load(engine, late)
    _, second = run(engine)
    for evict in [*first, *second]:
        assert (
            engine.view.records[evict.victim].priority
            < engine.view.records[evict.preemptor].priority
        )  # type: ignore[index]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_no_preemption_when_the_preemptor_would_fit(cluster: Any) -> None:
    queues, early, late, fair = cluster
    engine = new_engine(
        queues, fair, one_admission_per_queue=True
    )  # one round: nomination sees the tree as it was

    def check(engine: Engine, before: dict[str, int], result: Any) -> None:
        for decision in result.decisions:
            if isinstance(decision, Evict):
                preemptor = engine.view.records[decision.preemptor]  # type: ignore[index]
                request = sum(ps.requests.get("cpu", 0) for ps in preemptor.pod_sets)
                assert request > before[preemptor.cluster_queue], (decision, before)  # type: ignore[index]

    load(engine, early)
    run(engine, check)
    load(engine, late)
    run(engine, check)


LIVELOCKS = {
    # late0 (q1) evicts q1's early workloads by priority; before it is admitted, the
    # higher-priority late1 (q2) borrows what they freed; early5 reclaims it back for
    # q1's nominal quota, and late0 evicts again.  kuota: what late0 freed is its own.
    "a preemptor's freed capacity goes to another queue's borrower": (
        False,
        [
            cluster_queue("q1")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="3"))
            .preemption(
                withinClusterQueue="LowerPriority",
                reclaimWithinCohort="Any",
                borrowWithinCohort={"policy": "LowerPriority"},
            ),
            cluster_queue("q2")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="1"))
            .preemption(withinClusterQueue="Never", reclaimWithinCohort="Never"),
        ],
        [
            workload(f"early{i}").queue("lq-q1").priority(0).created(i).pod_set(count=1, cpu="1")
            for i in (3, 4, 5)
        ],
        [
            workload("late0").queue("lq-q1").priority(2).created(100).pod_set(count=2, cpu="2"),
            workload("late1").queue("lq-q2").priority(3).created(101).pod_set(count=1, cpu="2"),
        ],
        {"default/late0"},
    ),
    # early1 reclaims q0's nominal quota from early0; early2 evicts early1 by priority
    # inside q0 and borrows; early0 evicts early2 by fair sharing; and round again.
    # kuota: early0 may not evict early2, which led (through early1) to its own eviction.
    "a three-workload cycle of reclaim, priority and fair sharing": (
        True,
        [
            cluster_queue("q0")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="2"))
            .preemption(withinClusterQueue="LowerPriority", reclaimWithinCohort="Any"),
            cluster_queue("q1")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(withinClusterQueue="Never", reclaimWithinCohort="Any"),
        ],
        [
            workload("early0").queue("lq-q1").priority(0).created(0).pod_set(count=2, cpu="4"),
            workload("early1").queue("lq-q0").priority(0).created(1).pod_set(count=1, cpu="1"),
            workload("early2").queue("lq-q0").priority(1).created(2).pod_set(count=2, cpu="4"),
        ],
        [],
        {"default/early2"},
    ),
}


@pytest.mark.parametrize("name", sorted(LIVELOCKS))
def test_no_livelock(name: str) -> None:
    """Inputs on which Kueue's algorithm ping-pongs forever settle in kuota."""
    fair, queues, early, late, want_admitted = LIVELOCKS[name]
    engine = new_engine(queues, fair)
    load(engine, early)
    load(engine, late)
    steady, evictions = run(engine, max_cycles=100)
    assert steady, [(e.preemptor, e.victim) for e in evictions]
    admitted = {key for key, record in engine.view.records.items() if record.state == "Admitted"}
    assert admitted == want_admitted
    pairs = [(e.preemptor, e.victim) for e in evictions]
    assert len(pairs) == len(set(pairs)), "no preemption repeated"


def test_no_livelock_in_a_hierarchical_cohort_under_fair_sharing() -> None:
    """w3 evicts w1 by priority in q0; on main, w2 of the root's own q1 then took the capacity,
    w1 evicted it back by fair sharing, and round again.  Here w3 gets what it freed."""
    engine = new_engine([], True)
    engine.apply(cohort("root").model())
    engine.apply(cohort("c1").parent("root").model())
    for name, nominal, parent, policy in (
        ("q0", 4, "c1", {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}),
        ("q1", 3, "root", {}),
        ("q2", 2, "c1", {}),
    ):
        builder = (
            cluster_queue(name)
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu=str(nominal)))
            .preemption(**{"withinClusterQueue": "Never", "reclaimWithinCohort": "Never", **policy})
            .cohort(parent)
        )
        engine.apply(builder.model())
        engine.apply(local_queue(f"lq-{name}").cluster_queue(name).model())
    load(
        engine,
        [
            workload("w0").queue("lq-q0").priority(0).created(0).pod_set(count=1, cpu="2"),
            workload("w1").queue("lq-q0").priority(0).created(1).pod_set(count=2, cpu="2"),
        ],
    )
    assert run(engine)[0]
    load(
        engine,
        [
            workload("w2").queue("lq-q1").priority(0).created(2).pod_set(count=1, cpu="4"),
            workload("w3").queue("lq-q0").priority(1).created(3).pod_set(count=2, cpu="3"),
        ],
    )
    steady, evictions = run(engine, max_cycles=100)
    assert steady, [(e.preemptor, e.victim) for e in evictions]
    assert [(e.preemptor, e.victim) for e in evictions] == [("default/w3", "default/w1")]
    admitted = {key for key, record in engine.view.records.items() if record.state == "Admitted"}
    assert admitted == {"default/w0", "default/w3"}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(1, 8))
def test_pruned_candidate_search_finds_the_same_victims(cluster: Any, request: int) -> None:
    """The candidate search leaves out reclaims it cannot use; the victims stay the same.

    Every late workload asks, as a preemptor in its queue, for ``request`` cpu
    on the tree the early ones left; the answer must equal the minimal set
    chosen from the full, unpruned candidate list (docs/scheduling.md#minimal-victim-set).
    """
    queues, early, late, fair = cluster
    if fair:  # the pruning is the classical search's; fair sharing has its own
        return
    engine = new_engine(queues, fair)
    load(engine, early)
    run(engine)
    context = engine.view.preemption_context()
    for item in late:
        obj = item.model()
        queue = obj.spec.queue_name.removeprefix("lq-")
        cq = engine.cache.cluster_queues[queue]
        preemptor = Preemptor(
            key=obj.key,
            uid=obj.metadata.uid,
            priority=obj.spec.priority or 0,
            timestamp=T0,
            cq=cq,
        )
        requests, needed = {FR: request * 1000}, {FR}
        full = classical_candidates(context, preemptor, requests, needed, prune=False)
        expected = tuple(
            (c.key, c.cq_name, c.reason) for c in minimal_targets(cq, requests, needed, full)
        )
        found = tuple(
            (t.workload, t.cluster_queue, t.reason)
            for t in find_targets(context, preemptor, requests, needed)
        )
        assert found == expected
