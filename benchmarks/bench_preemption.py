"""Preemption benchmark: time to find victims with 10,000 admitted workloads in one cohort.

Run with ``python -m benchmarks.bench_preemption`` (bounded, well under a minute).

Setup: 100 ClusterQueues (cpu 100 each) in one cohort and 10,000 admitted
1-cpu workloads (priorities 0-9).  For reclamation the odd CQs run 150
(borrowing 50 each) and the even CQs 50; for the within-CQ case every CQ
runs 100.  The preemptor asks for 20 cpu in ``cq0`` with priority 5.

Measured, as the median of repeated calls to ``preemption.find_targets``
(the whole-workload search of nomination, candidates collected and ordered,
minimal set selected, tree restored):

* classical ``withinClusterQueue: LowerPriority`` in a full CQ;
* classical ``reclaimWithinCohort: Any`` (cross-CQ candidates: 5,000);
* fair sharing, both strategies;
and one full scheduling cycle that issues the reclaim preemption.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from scheduler.api.config import parse_configuration
from scheduler.core.decisions import Evict
from scheduler.core.engine import Engine
from scheduler.core.preemption import Preemptor, find_targets
from tests.builders import T0, cluster_queue, flavor_quotas, local_queue, resource_flavor, workload

QUEUES = 100
PER_QUEUE_EVEN, PER_QUEUE_ODD = 50, 150  # 100 x average 100 = 10,000 admitted workloads
REQUEST = 20_000  # milli-cpu
REPEATS = 15


def build(policy: dict[str, Any], *, fair: bool, full_even: bool) -> Engine:
    config = None
    if fair:
        config = parse_configuration(
            {
                "apiVersion": "config.kueue.x-k8s.io/v1beta2",
                "kind": "Configuration",
                "fairSharing": {},
            }
        )
    engine = Engine(config)
    engine.apply(resource_flavor("default").model())
    for index in range(QUEUES):
        engine.apply(
            cluster_queue(f"cq{index}")
            .cohort("all")
            .resource_group(flavor_quotas("default", cpu="100"))
            .preemption(**policy)
            .model()
        )
        engine.apply(local_queue(f"lq{index}").cluster_queue(f"cq{index}").model())
    template = workload("t").pod_set(cpu="1").reserve_quota("cq0", at=0).model()
    serial = 0
    for index in range(QUEUES):
        count = (100 if full_even else PER_QUEUE_EVEN) if index % 2 == 0 else PER_QUEUE_ODD
        if full_even and index % 2 == 1:
            count = 100
        for _ in range(count):
            serial += 1
            stamp = T0 + timedelta(seconds=serial)
            meta = dataclasses.replace(
                template.metadata,
                name=f"w{serial}",
                namespace="default",
                uid=f"u{serial}",
                creation_timestamp=stamp,
            )
            spec = dataclasses.replace(template.spec, queue_name=f"lq{index}", priority=serial % 10)
            admission = dataclasses.replace(template.status.admission, cluster_queue=f"cq{index}")
            conditions = tuple(
                dataclasses.replace(c, last_transition_time=stamp)
                for c in template.status.conditions
            )
            status = dataclasses.replace(
                template.status, admission=admission, conditions=conditions
            )
            engine.apply(dataclasses.replace(template, metadata=meta, spec=spec, status=status))
    engine.cache.tree.ensure_forest()
    return engine


def median_ms(call: Callable[[], Any]) -> tuple[float, Any]:
    samples, result = [], None
    for _ in range(REPEATS):
        started = time.perf_counter()
        result = call()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), result


def search(engine: Engine) -> Callable[[], Any]:
    context = engine.view.preemption_context()
    preemptor = Preemptor(
        key="default/p",
        uid="up",
        priority=5,
        timestamp=T0 + timedelta(days=1),
        cq=engine.cache.cluster_queues["cq0"],
    )
    fr = ("default", "cpu")
    return lambda: find_targets(context, preemptor, {fr: REQUEST}, {fr})


def main() -> None:
    rows = []
    cases = [
        ("classical withinClusterQueue", {"withinClusterQueue": "LowerPriority"}, False, True),
        ("classical reclaimWithinCohort", {"reclaimWithinCohort": "Any"}, False, False),
        (
            "fair sharing (both strategies)",
            {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            True,
            False,
        ),
    ]
    for name, policy, fair, full_even in cases:
        engine = build(policy, fair=fair, full_even=full_even)
        admitted = sum(len(keys) for keys in engine.cache.admitted.values())
        elapsed, targets = median_ms(search(engine))
        rows.append((name, admitted, len(targets), elapsed))
    engine = build({"reclaimWithinCohort": "Any"}, fair=False, full_even=False)
    engine.apply(workload("p").queue("lq0").priority(5).created(10**6).pod_set(cpu="20").model())
    started = time.perf_counter()
    result = engine.cycle(T0)
    cycle_ms = (time.perf_counter() - started) * 1000
    evicted = sum(1 for decision in result.decisions if isinstance(decision, Evict))
    rows.append(
        (
            "full cycle issuing the reclaim",
            sum(len(k) for k in engine.cache.admitted.values()),
            evicted,
            cycle_ms,
        )
    )

    print(f"{'case':34} {'admitted':>9} {'victims':>8} {'median ms':>10}")
    for name, admitted, victims, elapsed in rows:
        print(f"{name:34} {admitted:>9} {victims:>8} {elapsed:>10.1f}")


if __name__ == "__main__":
    main()
