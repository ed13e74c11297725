"""Classical preemption (docs/scheduling.md#preemption) as named table cases, cycle processing,
Engine.release.

Each case: ClusterQueues, running workloads (holding quota in their ClusterQueue
since ``created``/``at`` seconds after T0), one or more incoming workloads, all
builders, and the victims of the first cycle (``want_victims``, victim -> reason)
with the preemptor's pending message.  A workload of ClusterQueue ``q`` is queued
in its LocalQueue ``lq-q``.  ``settle`` runs to a
steady state releasing every victim at once, as ``kuota simulate`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler.core.decisions import Admit, CycleResult, Evict, Pending
from scheduler.core.engine import Engine
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


def engine_of(
    queues: list[Any], workloads: list[Any], *, extra: list[Any] = (), config: Any = None
) -> Engine:  # type: ignore[assignment]
    engine = Engine(config)
    engine.apply(resource_flavor("default").model())
    for item in [*extra, *queues]:
        engine.apply(item.model())
    for builder in queues:
        name = builder.raw["metadata"]["name"]
        engine.apply(local_queue(f"lq-{name}").cluster_queue(name).model())
    for item in workloads:
        engine.apply(item.model())
    return engine


def victims(result: CycleResult) -> dict[str, str]:
    return {d.victim.split("/")[1]: d.reason for d in result.decisions if isinstance(d, Evict)}


def release_all(engine: Engine, result: CycleResult) -> None:
    for decision in result.decisions:
        if isinstance(decision, Evict):
            engine.release(decision.victim)


def settle(engine: Engine) -> list[Evict]:
    log: list[Evict] = []

    def release(result: CycleResult) -> None:
        for decision in result.decisions:
            if isinstance(decision, Evict):
                log.append(decision)
                engine.release(decision.victim)

    _, steady = engine.run_until_steady(T0, max_cycles=200, after_cycle=release)
    assert steady
    return log


def state(engine: Engine, name: str) -> str:
    return engine.view.workload_state(f"default/{name}").state


@dataclass
class Case:
    name: str
    queues: list[Any]
    running: list[Any]
    incoming: list[Any]
    want_victims: dict[str, str]
    want_admitted_after: set[str] = field(default_factory=set)
    cohorts: list[Any] = field(default_factory=list)


LOWER = {"withinClusterQueue": "LowerPriority"}
NEWER = {"withinClusterQueue": "LowerOrNewerEqualPriority"}

CASES = [
    # --- withinClusterQueue -------------------------------------------------------------
    Case(
        "within Never: no victim",
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="4"))],
        [workload("r").queue("lq-q").priority(0).pod_set(cpu="4").reserve_quota("q")],
        [workload("p").queue("lq-q").priority(10).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "within LowerPriority: lower-priority victim",
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="4")).preemption(**LOWER)],
        [workload("r").queue("lq-q").priority(0).pod_set(cpu="4").reserve_quota("q")],
        [workload("p").queue("lq-q").priority(10).created(100).pod_set(cpu="4")],
        {"r": "InClusterQueue"},
        {"p"},
    ),
    Case(
        "within LowerPriority: equal priority is safe",
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="4")).preemption(**LOWER)],
        [workload("r").queue("lq-q").priority(5).pod_set(cpu="4").reserve_quota("q")],
        [workload("p").queue("lq-q").priority(5).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "within LowerOrNewerEqualPriority: equal priority, newer victim",
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="4")).preemption(**NEWER)],
        [
            workload("r")
            .queue("lq-q")
            .priority(5)
            .created(200)
            .pod_set(cpu="4")
            .reserve_quota("q", at=200)
        ],
        [workload("p").queue("lq-q").priority(5).created(100).pod_set(cpu="4")],
        {"r": "InClusterQueue"},
        {"p"},
    ),
    Case(
        "within LowerOrNewerEqualPriority: equal priority, older victim is safe",
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="4")).preemption(**NEWER)],
        [
            workload("r")
            .queue("lq-q")
            .priority(5)
            .created(50)
            .pod_set(cpu="4")
            .reserve_quota("q", at=50)
        ],
        [workload("p").queue("lq-q").priority(5).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "within LowerOrNewerEqualPriority: same timestamp is safe (strictly earlier needed)",
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="4")).preemption(**NEWER)],
        [
            workload("r")
            .queue("lq-q")
            .priority(5)
            .created(100)
            .pod_set(cpu="4")
            .reserve_quota("q", at=100)
        ],
        [workload("p").queue("lq-q").priority(5).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "7.6 within the CQ, minimal set",
        [cluster_queue("X").resource_group(flavor_quotas("default", cpu="10")).preemption(**LOWER)],
        [
            workload("x1")
            .queue("lq-X")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("X", at=1),
            workload("x2")
            .queue("lq-X")
            .priority(0)
            .created(3)
            .pod_set(cpu="1")
            .reserve_quota("X", at=3),
            workload("x3")
            .queue("lq-X")
            .priority(10)
            .created(2)
            .pod_set(cpu="5")
            .reserve_quota("X", at=2),
        ],
        [workload("p").queue("lq-X").priority(5).created(100).pod_set(cpu="4")],
        {"x1": "InClusterQueue"},
        {"p", "x2", "x3"},
    ),
    Case(
        "lowest priority first, then most recently reserved",
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="6")).preemption(**LOWER)],
        [
            workload("old")
            .queue("lq-q")
            .priority(1)
            .created(1)
            .pod_set(cpu="2")
            .reserve_quota("q", at=1),
            workload("new")
            .queue("lq-q")
            .priority(1)
            .created(5)
            .pod_set(cpu="2")
            .reserve_quota("q", at=5),
            workload("low")
            .queue("lq-q")
            .priority(0)
            .created(3)
            .pod_set(cpu="2")
            .reserve_quota("q", at=3),
        ],
        [workload("p").queue("lq-q").priority(9).created(100).pod_set(cpu="4")],
        {"low": "InClusterQueue", "new": "InClusterQueue"},
        {"p", "old"},
    ),
    Case(
        "request larger than nominal never preempts without borrowWithinCohort",
        [
            cluster_queue("q")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(**LOWER),
            cluster_queue("other").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [workload("r").queue("lq-q").priority(0).pod_set(cpu="4").reserve_quota("q")],
        [workload("p").queue("lq-q").priority(10).created(100).pod_set(cpu="6")],
        {},
    ),
    # --- reclaimWithinCohort ------------------------------------------------------------
    Case(
        "7.6 reclaim (flat cohort): newest borrower goes",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
        ],
        [
            workload("b1")
            .queue("lq-B")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(0)
            .created(2)
            .pod_set(cpu="4")
            .reserve_quota("B", at=2),
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="2")
            .reserve_quota("A", at=1),
        ],
        [workload("a2").queue("lq-A").priority(0).created(100).pod_set(cpu="4")],
        {"b2": "InCohortReclamation"},
        {"a1", "a2", "b1"},
    ),
    Case(
        "reclaim Never: borrower is safe",
        [
            cluster_queue("A").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
        ],
        [
            workload("b1")
            .queue("lq-B")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(0)
            .created(2)
            .pod_set(cpu="4")
            .reserve_quota("B", at=2),
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="2")
            .reserve_quota("A", at=1),
        ],
        [workload("a2").queue("lq-A").priority(0).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "reclaim LowerPriority: higher-priority borrower is safe",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(reclaimWithinCohort="LowerPriority"),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
        ],
        [
            workload("b1")
            .queue("lq-B")
            .priority(5)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(5)
            .created(2)
            .pod_set(cpu="4")
            .reserve_quota("B", at=2),
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="2")
            .reserve_quota("A", at=1),
        ],
        [workload("a2").queue("lq-A").priority(5).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "reclaim LowerPriority: lower-priority borrower goes",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(reclaimWithinCohort="LowerPriority"),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
        ],
        [
            workload("b1")
            .queue("lq-B")
            .priority(1)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(1)
            .created(2)
            .pod_set(cpu="4")
            .reserve_quota("B", at=2),
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="2")
            .reserve_quota("A", at=1),
        ],
        [workload("a2").queue("lq-A").priority(5).created(100).pod_set(cpu="4")],
        {"b2": "InCohortReclamation"},
        {"a2"},
    ),
    Case(
        "reclaim Any: even a higher-priority borrower",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
        ],
        [
            workload("b1")
            .queue("lq-B")
            .priority(9)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(9)
            .created(2)
            .pod_set(cpu="4")
            .reserve_quota("B", at=2),
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="2")
            .reserve_quota("A", at=1),
        ],
        [workload("a2").queue("lq-A").priority(0).created(100).pod_set(cpu="4")],
        {"b2": "InCohortReclamation"},
        {"a2"},
    ),
    Case(
        "a CQ within its nominal quota is never reclaimed from",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
        ],
        [
            workload("b1")
            .queue("lq-B")
            .priority(0)
            .created(1)
            .pod_set(cpu="6")
            .reserve_quota("B", at=1),
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("A", at=1),
        ],
        [workload("a2").queue("lq-A").priority(0).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "non-preemptive queue's borrowing workloads are still reclaimed by others",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("B")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(
                withinClusterQueue="Never",
                reclaimWithinCohort="Never",
                borrowWithinCohort={"policy": "Never"},
            ),
        ],
        [
            workload("b1")
            .queue("lq-B")
            .priority(0)
            .created(1)
            .pod_set(cpu="8")
            .reserve_quota("B", at=1)
        ],
        [workload("a1").queue("lq-A").priority(0).created(100).pod_set(cpu="6")],
        {"b1": "InCohortReclamation"},
        {"a1"},
    ),
    Case(
        "reclaim and within combined: cross-CQ victims before own CQ",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(reclaimWithinCohort="Any", **LOWER),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
        ],
        [
            workload("a0")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("A", at=1),
            workload("b1")
            .queue("lq-B")
            .priority(0)
            .created(1)
            .pod_set(cpu="8")
            .reserve_quota("B", at=1),
        ],
        [workload("a1").queue("lq-A").priority(5).created(100).pod_set(cpu="2")],
        {"b1": "InCohortReclamation"},
    ),
    # --- borrowWithinCohort -------------------------------------------------------------
    Case(
        "7.6 borrowWithinCohort threshold 100: priority 50 taken, 200 kept",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(
                reclaimWithinCohort="LowerPriority",
                borrowWithinCohort={"policy": "LowerPriority", "maxPriorityThreshold": 100},
            ),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
            cluster_queue("C").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("A", at=1),
            workload("b1")
            .queue("lq-B")
            .priority(50)
            .created(1)
            .pod_set(cpu="2")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(200)
            .created(2)
            .pod_set(cpu="4")
            .reserve_quota("B", at=2),
        ],
        [workload("a2").queue("lq-A").priority(500).created(100).pod_set(cpu="4")],
        {"b1": "InCohortReclaimWhileBorrowing"},
        {"a2"},
    ),
    Case(
        "maxPriorityThreshold boundary: priority equal to the threshold may be taken",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(
                reclaimWithinCohort="LowerPriority",
                borrowWithinCohort={"policy": "LowerPriority", "maxPriorityThreshold": 100},
            ),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
            cluster_queue("C").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("A", at=1),
            workload("b1")
            .queue("lq-B")
            .priority(1000)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(100)
            .created(2)
            .pod_set(cpu="2")
            .reserve_quota("B", at=2),
        ],
        [workload("a2").queue("lq-A").priority(500).created(100).pod_set(cpu="4")],
        {"b2": "InCohortReclaimWhileBorrowing"},
        {"a2"},
    ),
    Case(
        "maxPriorityThreshold boundary: one above the threshold is kept",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(
                reclaimWithinCohort="LowerPriority",
                borrowWithinCohort={"policy": "LowerPriority", "maxPriorityThreshold": 100},
            ),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
            cluster_queue("C").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("A", at=1),
            workload("b1")
            .queue("lq-B")
            .priority(1000)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(101)
            .created(2)
            .pod_set(cpu="2")
            .reserve_quota("B", at=2),
        ],
        [workload("a2").queue("lq-A").priority(500).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "borrowWithinCohort without threshold: only lower priority",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(reclaimWithinCohort="Any", borrowWithinCohort={"policy": "LowerPriority"}),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
            cluster_queue("C").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("A", at=1),
            workload("b1")
            .queue("lq-B")
            .priority(1000)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(500)
            .created(2)
            .pod_set(cpu="2")
            .reserve_quota("B", at=2),
        ],
        [workload("a2").queue("lq-A").priority(500).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "borrowWithinCohort Never: borrowing preemptor takes nobody across",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
            cluster_queue("C").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("A", at=1),
            workload("b1")
            .queue("lq-B")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(0)
            .created(2)
            .pod_set(cpu="2")
            .reserve_quota("B", at=2),
        ],
        [workload("a2").queue("lq-A").priority(500).created(100).pod_set(cpu="4")],
        {},
    ),
    Case(
        "reclaim while borrowing: other CQs' candidates are tried before the preemptor's own",
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(
                reclaimWithinCohort="Any", borrowWithinCohort={"policy": "LowerPriority"}, **LOWER
            ),
            cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
            cluster_queue("C").cohort("c").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [
            workload("a1")
            .queue("lq-A")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("A", at=1),
            workload("b1")
            .queue("lq-B")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("B", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(0)
            .created(2)
            .pod_set(cpu="2")
            .reserve_quota("B", at=2),
        ],
        [workload("a2").queue("lq-A").priority(500).created(100).pod_set(cpu="4")],
        {"b2": "InCohortReclaimWhileBorrowing"},
        {"a2", "a1", "b1"},
    ),
    # --- hierarchical cohorts -----------------------------------------------------------
    Case(
        "hierarchical reclaim: the org's guaranteed quota comes back",
        [
            cluster_queue("a")
            .cohort("org")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("b").cohort("org").resource_group(flavor_quotas("default", cpu="2")),
            cluster_queue("x").cohort("root").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [
            workload("x1")
            .queue("lq-x")
            .priority(0)
            .created(1)
            .pod_set(cpu="10")
            .reserve_quota("x", at=1)
        ],
        [workload("a1").queue("lq-a").priority(0).created(100).pod_set(cpu="6")],
        {"x1": "InCohortReclamation"},
        {"a1"},
        cohorts=[cohort("root"), cohort("org").parent("root")],
    ),
    Case(
        "hierarchical: a sibling inside the org within its subtree quota is shielded",
        [
            cluster_queue("a")
            .cohort("org")
            .resource_group(flavor_quotas("default", cpu="2"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("b").cohort("org").resource_group(flavor_quotas("default", cpu="2")),
            cluster_queue("x").cohort("root").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [
            workload("b1")
            .queue("lq-b")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("b", at=1),
            workload("x1")
            .queue("lq-x")
            .priority(0)
            .created(1)
            .pod_set(cpu="4")
            .reserve_quota("x", at=1),
        ],
        [workload("a1").queue("lq-a").priority(0).created(100).pod_set(cpu="2")],
        {"b1": "InCohortReclamation"},
        {"a1"},
        cohorts=[cohort("root"), cohort("org").parent("root")],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_first_cycle_victims_and_outcome(case: Case) -> None:
    engine = engine_of(case.queues, [*case.running, *case.incoming], extra=case.cohorts)
    engine.cache.tree.ensure_forest()
    check_tree(engine)  # the running workloads of the case fit their quota
    result = engine.cycle(T0)
    assert victims(result) == case.want_victims
    preemptors = {d.preemptor for d in result.decisions if isinstance(d, Evict)}
    for key in preemptors:
        pending = [d for d in result.decisions if isinstance(d, Pending) and d.workload == key][-1]
        assert pending.reason == "WaitingForPreemptedWorkloads"
        assert pending.message.endswith(
            f". Pending the preemption of {len(victims(result))} workload(s)"
        )
    for decision in result.decisions:
        if isinstance(decision, Evict):
            engine.release(decision.victim)
    settle(engine)
    for name in case.want_admitted_after:
        assert state(engine, name) == "Admitted", name
    for name in case.want_victims:
        assert engine.view.workload_state(f"default/{name}").evictions >= 1


def test_no_preemption_when_the_preemptor_fits() -> None:
    engine = engine_of(
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="8")).preemption(**LOWER)],
        [
            workload("r").queue("lq-q").priority(0).pod_set(cpu="4").reserve_quota("q"),
            workload("p").queue("lq-q").priority(9).created(100).pod_set(cpu="4"),
        ],
    )
    result = engine.cycle(T0)
    assert victims(result) == {}
    assert any(isinstance(d, Admit) and d.workload == "default/p" for d in result.decisions)


def test_victim_keeps_quota_until_released_and_preemptor_waits() -> None:
    engine = engine_of(
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="4")).preemption(**LOWER)],
        [
            workload("r").queue("lq-q").priority(0).pod_set(cpu="4").reserve_quota("q"),
            workload("p").queue("lq-q").priority(9).created(100).pod_set(cpu="4"),
        ],
    )
    first = engine.cycle(T0)
    assert victims(first) == {"r": "InClusterQueue"}
    assert engine.view.cluster_queue_status("q").admitted == 1
    second = engine.cycle(T0)
    assert victims(second) == {}  # not evicted twice
    waiting = [d for d in second.decisions if isinstance(d, Pending) and d.workload == "default/p"]
    assert waiting and waiting[0].message.endswith(". Pending the preemption of 1 workload(s)")
    assert str(engine.view.cluster_queue_status("q").usage["default"]["cpu"]) == "4"
    engine.release("default/r")
    third = engine.cycle(T0)
    assert [d.workload for d in third.decisions if isinstance(d, Admit)] == ["default/p"]
    assert str(engine.view.cluster_queue_status("q").usage["default"]["cpu"]) == "4"
    r = engine.view.workload_state("default/r")
    assert (r.state, r.evictions) == ("Pending", 1)


def test_eviction_message_names_the_preemptor_by_uid_and_why() -> None:
    engine = engine_of(
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="4")).preemption(**LOWER)],
        [
            workload("r").queue("lq-q").priority(0).pod_set(cpu="4").reserve_quota("q"),
            workload("p")
            .queue("lq-q")
            .priority(9)
            .created(100)
            .pod_set(cpu="4")
            .job_uid("job-123"),
        ],
    )
    evict = next(d for d in engine.cycle(T0).decisions if isinstance(d, Evict))
    assert evict.message == (
        "Preempted to accommodate a workload (UID: uid-p, JobUID: job-123) due to prioritization "
        "in the "
        "ClusterQueue; preemptor path: /q; preemptee path: /q"
    )
    assert evict.preemptor == "default/p"
    engine.release("default/r")
    r = engine.view.workload_state("default/r")
    assert (r.reason, r.message) == ("PendingEvaluation", evict.message)


def test_cohort_paths_in_the_message() -> None:
    engine = engine_of(
        [
            cluster_queue("a")
            .cohort("org")
            .resource_group(flavor_quotas("default", cpu="6"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("b").cohort("org").resource_group(flavor_quotas("default", cpu="2")),
            cluster_queue("x").cohort("root").resource_group(flavor_quotas("default", cpu="4")),
        ],
        [
            workload("x1")
            .queue("lq-x")
            .priority(0)
            .created(1)
            .pod_set(cpu="10")
            .reserve_quota("x", at=1),
            workload("a1").queue("lq-a").priority(0).created(100).pod_set(cpu="6"),
        ],
        extra=[cohort("root"), cohort("org").parent("root")],
    )
    evict = next(d for d in engine.cycle(T0).decisions if isinstance(d, Evict))
    assert evict.message.endswith(
        "due to reclamation within the cohort; preemptor path: /root/org/a; preemptee path: /root/x"
    )


def test_two_preemptors_do_not_share_victims_in_one_cycle() -> None:
    # p1 (cq a) and p2 (cq b) both need the borrower x1: the first one processed wins, the
    # other is skipped.
    engine = engine_of(
        [
            cluster_queue("a")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("b")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(reclaimWithinCohort="Any"),
            cluster_queue("x").cohort("c").resource_group(flavor_quotas("default", cpu="0")),
        ],
        [
            workload("x1")
            .queue("lq-x")
            .priority(0)
            .created(1)
            .pod_set(cpu="8")
            .reserve_quota("x", at=1),
            workload("p1").queue("lq-a").priority(5).created(100).pod_set(cpu="4"),
            workload("p2").queue("lq-b").priority(0).created(100).pod_set(cpu="4"),
        ],
    )
    result = engine.cycle(T0)
    assert victims(result) == {"x1": "InCohortReclamation"}
    pending = {d.workload: d for d in result.decisions if isinstance(d, Pending)}
    assert pending["default/p1"].reason == "WaitingForPreemptedWorkloads"
    assert pending["default/p2"].message in (
        "Workload has overlapping preemption targets with another workload, but will fit after "
        "these preemptions complete",
        "Workload has overlapping preemption targets with another workload",
    )
    assert result.preemption_skips == {"b": 1}, "p2 gave way: one skip in ClusterQueue b"
    release_all(engine, result)
    settle(engine)
    assert state(engine, "p1") == state(engine, "p2") == "Admitted"


def test_sticky_preemptor_stays_head_of_best_effort_fifo() -> None:
    engine = engine_of(
        [cluster_queue("q").resource_group(flavor_quotas("default", cpu="4")).preemption(**LOWER)],
        [
            workload("r").queue("lq-q").priority(0).pod_set(cpu="4").reserve_quota("q"),
            workload("p").queue("lq-q").priority(9).created(100).pod_set(cpu="4"),
        ],
    )
    engine.cycle(T0)
    assert engine.queues.pending.queue("q").sticky == "default/p"
    # "small" arrives with a higher priority, but the preemptor stays at the head until admitted.
    engine.apply(workload("small").queue("lq-q").priority(10).created(200).pod_set(cpu="1").model())
    second = engine.cycle(T0)
    tried = [d.workload for d in second.decisions if isinstance(d, Pending)]
    assert tried[0] == "default/p"


def test_within_nominal_capacity_hold_for_non_reclaiming_queue() -> None:
    # a (reclaim Never) needs preemption without candidates: it holds its nominal capacity
    # this cycle.
    engine = engine_of(
        [
            cluster_queue("a").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
            cluster_queue("b").cohort("c").resource_group(flavor_quotas("default", cpu="6")),
        ],
        [
            workload("b1")
            .queue("lq-b")
            .priority(0)
            .created(1)
            .pod_set(cpu="8")
            .reserve_quota("b", at=1),
            workload("a1").queue("lq-a").priority(0).created(1).pod_set(cpu="6"),
            workload("b2").queue("lq-b").priority(0).created(2).pod_set(cpu="2"),
        ],
    )
    result = engine.cycle(T0)
    assert not [d for d in result.decisions if isinstance(d, Admit)]


# --- flavor-scan position ----------------------------------------------------------------


def test_flavor_scan_resumes_after_the_last_examined_flavor() -> None:
    from scheduler.core.flavor_assignment import assign_flavors

    engine = Engine()
    for name in ("f1", "f2"):
        engine.apply(resource_flavor(name).model())
    engine.apply(
        cluster_queue("q")
        .cohort("c")
        .fungibility(when_can_borrow="MayStopSearch")
        .resource_group(flavor_quotas("f1", cpu="1"), flavor_quotas("f2", cpu="4"))
        .model()
    )
    engine.apply(
        cluster_queue("lender").cohort("c").resource_group(flavor_quotas("f1", cpu="4")).model()
    )
    engine.cache.tree.ensure_forest()
    info = engine.cache.cluster_queues["q"]
    pod_sets = workload("w").pod_set(cpu="2").model()
    from scheduler.core.workload import pod_set_infos

    sets = pod_set_infos(pod_sets, None)
    first = assign_flavors(
        cq=info,
        pod_sets=sets,
        flavors=engine.cache.flavors,
        ignore_undeclared=False,
        fair_sharing=False,
    )
    # f1 fits with borrowing and MayStopSearch stops the scan there: position 0, untried
    # flavors remain.
    assert (first.pod_sets[0].flavors, first.borrowing_level, first.last_tried) == (
        {"cpu": "f1"},
        1,
        {("main", 0): 0},
    )
    resumed = assign_flavors(
        cq=info,
        pod_sets=sets,
        flavors=engine.cache.flavors,
        ignore_undeclared=False,
        fair_sharing=False,
        start_after=first.last_tried,
    )
    assert (resumed.pod_sets[0].flavors, resumed.last_tried) == ({"cpu": "f2"}, {("main", 0): -1})


def test_the_loop_guard_bars_victims_that_led_to_the_preemptors_eviction() -> None:
    """No eviction closes a cycle of evictions, none repeats before the preemptor's readmission."""
    from scheduler.core.preemption import PreemptionHistory

    history = PreemptionHistory()
    history.evicted("a", "p")
    history.evicted("b", "a")
    history.evicted("p", "b")  # already a cycle (a restart forgot the rest): still ends
    history.evicted("p", "v")
    assert history.guarded("p") == {"a", "b", "p", "v"}
    assert history.guarded("c") == set(), "never evicted, evicted nobody: no guard"
    history.admitted("p")
    assert history.guarded("p") == {"a", "b", "p"}
    history.restart(lambda key: key != "a")
    assert history.guarded("p") == {"a"}, "a's own history is forgotten, not that a evicted p"


def test_a_finished_workload_lets_a_barred_reclaim_happen() -> None:
    """The loop guard holds for an unchanged input only: team B gets its nominal quota back."""
    engine = engine_of(
        [
            cluster_queue("A")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(reclaimWithinCohort="Any", borrowWithinCohort={"policy": "LowerPriority"}),
            cluster_queue("B")
            .cohort("c")
            .resource_group(flavor_quotas("default", cpu="4"))
            .preemption(reclaimWithinCohort="Any"),
        ],
        [
            workload("a1")
            .queue("lq-A")
            .priority(9)
            .created(1)
            .pod_set(cpu="2")
            .reserve_quota("A", at=1),
            workload("b2")
            .queue("lq-B")
            .priority(0)
            .created(1)
            .pod_set(cpu="2")
            .reserve_quota("B", at=1),
            workload("b1")
            .queue("lq-B")
            .priority(0)
            .created(2)
            .pod_set(cpu="4")
            .reserve_quota("B", at=2),
            workload("a2").queue("lq-A").priority(5).created(100).pod_set(cpu="4"),
        ],
    )
    evictions = settle(engine)
    assert [(e.victim, e.preemptor) for e in evictions] == [("default/b1", "default/a2")]
    assert state(engine, "a2") == "Admitted" and state(engine, "b1") == "Pending"
    # B is now within its nominal quota even with b1: b1 reclaims from A's newest, lowest
    # priority workload, a2, though a2 once evicted it (the input changed).
    engine.finish("default/b2")
    evictions = settle(engine)
    assert [(e.victim, e.preemptor) for e in evictions] == [("default/a2", "default/b1")]
    assert state(engine, "b1") == "Admitted"


def test_the_history_survives_a_status_update_of_a_queue_but_not_a_quota_change() -> None:
    queue = (
        cluster_queue("A")
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu="4"))
        .preemption(reclaimWithinCohort="Any")
    )
    engine = engine_of(
        [queue, cluster_queue("B").cohort("c").resource_group(flavor_quotas("default", cpu="4"))],
        [],
    )
    engine.history.evicted("default/p", "default/v")
    engine.apply(queue.model())  # what every ClusterQueue status write brings back
    assert engine.history.guarded("default/v") == {"default/p"}
    engine.apply(
        cluster_queue("A")
        .cohort("c")
        .resource_group(flavor_quotas("default", cpu="6"))
        .preemption(reclaimWithinCohort="Any")
        .model()
    )
    assert engine.history.guarded("default/v") == set()
