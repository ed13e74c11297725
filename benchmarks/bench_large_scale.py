"""Engine benchmark shaped like Kueue's large-scale scheduler config, on a virtual clock.

Run with ``python -m benchmarks.bench_large_scale [--queues N]``.  Why: the
real large-scale run (``make bench-kueue-large``) takes half an hour and
mixes the engine with the API server; this one isolates the engine's part
of it in a minute or two.

Setup, as Kueue's ``configs/large-scale/generator.yaml``: 10 cohorts x 100
ClusterQueues (nominal 20 cpu, borrowing limit 100, ``reclaimWithinCohort:
Any``, ``withinClusterQueue: LowerPriority``), 50 Workloads per queue (35
small: 1 cpu, priority 50, 150 ms; 11 medium: 5 cpu, 100, 350 ms; 4 large:
20 cpu, 200, 700 ms).  Each queue's sets create at their own intervals,
all queues at once, but no faster than ``CREATION_RATE`` in total (the real
run's creation phase: 50,000 Workloads in about 2 minutes).

Loop (bounded by ``MAX_TURNS``): one engine cycle per turn; the virtual
clock advances by the cycle's measured time plus the live scheduler's turn
interval (0.1 s); an admitted Workload finishes ``--latency`` plus its
runtime after its admission, a victim's quota is released ``--latency``
after its eviction (the round trips through the API server and the runner
of the real run).  Printed: turns, cycle time mean / p99 / max, virtual time to
finish everything, admissions per second of cycle time, evictions.
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import statistics
import time
from datetime import datetime, timedelta
from typing import Any

from benchmarks.rows import print_rows
from scheduler.core.decisions import Admit, Evict
from scheduler.core.engine import Engine
from tests.builders import (
    T0,
    cluster_queue,
    flavor_quotas,
    local_queue,
    resource_flavor,
    workload,
)

COHORTS = 10
QUEUES_PER_COHORT = 100
TURN_INTERVAL = 0.1
CREATION_RATE = 400.0  # Workloads per second
LATENCY = 5.0
MAX_TURNS = 20_000
CLASSES = (  # name, count per queue, creation interval ms, runtime ms, priority, cpu
    ("small", 35, 60, 150, 50, "1"),
    ("medium", 11, 300, 350, 100, "5"),
    ("large", 4, 700, 700, 200, "20"),
)


def build(queues_per_cohort: int) -> tuple[Engine, dict[str, float], list[tuple[float, Any]]]:
    engine = Engine()
    engine.apply(resource_flavor("default").model())
    runtimes: dict[str, float] = {}
    templates = {name: workload("t").pod_set(cpu=cpu).model() for name, _, _, _, _, cpu in CLASSES}
    serial = 0
    scheduled: list[tuple[float, int, Any]] = []
    for cohort in range(COHORTS):
        for index in range(queues_per_cohort):
            name = f"cq-{cohort}-{index}"
            engine.apply(
                cluster_queue(name)
                .cohort(f"cohort-{cohort}")
                .resource_group(
                    flavor_quotas("default").resource("cpu", "20", borrowing_limit="100")
                )
                .preemption(reclaimWithinCohort="Any", withinClusterQueue="LowerPriority")
                .model()
            )
            engine.apply(local_queue(name).cluster_queue(name).model())
            for class_name, count, interval_ms, runtime_ms, priority, _ in CLASSES:
                template = templates[class_name]
                for number in range(count):
                    serial += 1
                    meta = dataclasses.replace(
                        template.metadata,
                        name=f"{name}-{class_name}-{number}",
                        namespace="default",
                        uid=f"u{serial}",
                        creation_timestamp=T0 + timedelta(milliseconds=number * interval_ms),
                    )
                    spec = dataclasses.replace(template.spec, queue_name=name, priority=priority)
                    item = dataclasses.replace(template, metadata=meta, spec=spec)
                    runtimes[item.key] = runtime_ms / 1000
                    scheduled.append((number * interval_ms / 1000, serial, item))
    scheduled.sort(key=lambda entry: entry[:2])
    arrivals = [
        (max(at, position / CREATION_RATE), item)
        for position, (at, _, item) in enumerate(scheduled)
    ]
    return engine, runtimes, arrivals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queues", type=int, default=QUEUES_PER_COHORT, help="queues per cohort")
    parser.add_argument(
        "--latency",
        type=float,
        default=LATENCY,
        help="seconds from a decision to its effect: a finish after the runtime, a release",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    engine, runtimes, arrivals = build(args.queues)
    arrivals.reverse()  # popped from the end, earliest first
    build_seconds = time.perf_counter() - started

    clock = 0.0
    running: list[tuple[float, str]] = []
    victims: list[tuple[float, str]] = []
    finished = admissions = evictions = 0
    cycle_times: list[float] = []
    total = len(runtimes)
    for _ in range(MAX_TURNS):
        now: datetime = T0 + timedelta(seconds=clock)
        while running and running[0][0] <= clock:
            _, key = heapq.heappop(running)
            engine.finish(key)
            finished += 1
        while arrivals and arrivals[-1][0] <= clock:
            engine.apply(arrivals.pop()[1])
        while victims and victims[0][0] <= clock:
            engine.release(heapq.heappop(victims)[1])
        if finished == total:
            break
        tick = time.perf_counter()
        result = engine.cycle(now)
        spent = time.perf_counter() - tick
        cycle_times.append(spent)
        clock += spent + TURN_INTERVAL
        for decision in result.decisions:
            if isinstance(decision, Admit):
                admissions += 1
                done = clock + args.latency + runtimes[decision.workload]
                heapq.heappush(running, (done, decision.workload))
                engine.admission_recorded(decision.workload)
            elif isinstance(decision, Evict):
                evictions += 1
                heapq.heappush(victims, (clock + args.latency, decision.victim))
                running = [item for item in running if item[1] != decision.victim]
                heapq.heapify(running)
    ordered = sorted(cycle_times)
    busy = sum(cycle_times)
    rows = [
        ("cluster queues / workloads", f"{COHORTS * args.queues} / {total}"),
        ("build (objects, CQs applied)", f"{build_seconds:.1f} s"),
        ("finished", f"{finished} of {total}"),
        ("turns", f"{len(cycle_times)}"),
        (
            "cycle time mean / p50 / p99 / max",
            f"{1000 * statistics.fmean(ordered):.1f} / {1000 * ordered[len(ordered) // 2]:.1f}"
            f" / {1000 * ordered[int(len(ordered) * 0.99)]:.1f} / {1000 * ordered[-1]:.1f} ms",
        ),
        ("time in cycles", f"{busy:.1f} s"),
        ("virtual wall time", f"{clock:.1f} s"),
        ("admissions / evictions", f"{admissions} / {evictions}"),
        ("admissions per second of cycle time", f"{admissions / busy:,.0f}"),
    ]
    print_rows(rows)


if __name__ == "__main__":
    main()
