"""Engine benchmark: 1,000 ClusterQueues in 100 cohorts, 100,000 pending workloads.

Run with ``python -m benchmarks.bench_engine``.  Phases (bounded, ~1 min):

1. memory: apply every Workload under ``tracemalloc``; bytes per pending
   workload = growth of traced memory / workloads (the parsed objects already
   exist before tracing starts, so this is what the engine adds);
2. admission: cycles until steady (each CQ admits up to its quota; the rest
   are parked as inadmissible), then churn rounds: finish 2,000 admitted
   workloads, cycle until steady again.
Admission decisions per second = Admit decisions / time spent in cycles.
Targets: 10,000 admissions/s on one core, < 1 KiB per pending workload.
"""

from __future__ import annotations

import dataclasses
import random
import time
import tracemalloc
from datetime import timedelta

from benchmarks.rows import print_rows
from scheduler.core.engine import Engine
from tests.builders import T0, cluster_queue, flavor_quotas, local_queue, resource_flavor, workload

CLUSTER_QUEUES = 1_000
COHORTS = 100
WORKLOADS = 100_000
CHURN_ROUNDS = 5
CHURN = 2_000


def build_workloads() -> list:
    template = workload("template").pod_set(cpu="1", memory="1Gi").model()
    result = []
    for index in range(WORKLOADS):
        meta = dataclasses.replace(
            template.metadata,
            name=f"w{index}",
            namespace="default",
            uid=f"u{index}",
            creation_timestamp=T0 + timedelta(seconds=index),
        )
        spec = dataclasses.replace(
            template.spec, queue_name=f"lq{index % CLUSTER_QUEUES}", priority=index % 3
        )
        result.append(dataclasses.replace(template, metadata=meta, spec=spec))
    return result


def main() -> None:
    engine = Engine()
    engine.apply(resource_flavor("default").model())
    for index in range(CLUSTER_QUEUES):
        engine.apply(
            cluster_queue(f"cq{index}")
            .cohort(f"cohort{index % COHORTS}")
            .resource_group(flavor_quotas("default", cpu="40", memory="64Gi"))
            .model()
        )
        engine.apply(local_queue(f"lq{index}").cluster_queue(f"cq{index}").model())
    workloads = build_workloads()

    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    started = time.perf_counter()
    for item in workloads:
        engine.apply(item)
    apply_seconds = time.perf_counter() - started
    after, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per_workload = (after - before) / WORKLOADS

    cycle_times: list[float] = []
    admitting_time = 0.0
    admissions = 0
    decisions = 0

    def until_steady() -> None:
        nonlocal admissions, decisions, admitting_time
        for _ in range(200):
            tick = time.perf_counter()
            result = engine.cycle(T0)
            cycle_times.append(time.perf_counter() - tick)
            admissions += result.admitted
            if result.admitted:
                admitting_time += cycle_times[-1]
            decisions += len(result.decisions)
            if not result.decisions:
                return

    until_steady()
    rng = random.Random(1)
    for _ in range(CHURN_ROUNDS):
        holding = {key for keys in engine.cache.admitted.values() for key in keys}
        admitted = [item.key for item in workloads if item.key in holding]  # in apply order
        for key in rng.sample(admitted, CHURN):
            engine.finish(key)
        until_steady()

    total = sum(cycle_times)
    rows = [
        ("cluster queues / cohorts", f"{CLUSTER_QUEUES} / {COHORTS}"),
        ("pending workloads applied", f"{WORKLOADS} in {apply_seconds:.2f} s (under tracemalloc)"),
        ("admission decisions", f"{admissions}"),
        ("all decisions", f"{decisions}"),
        ("cycles", f"{len(cycle_times)}"),
        (
            "admission decisions per second (admitting cycles)",
            f"{admissions / admitting_time:,.0f}",
        ),
        ("admission decisions per second (all cycles)", f"{admissions / total:,.0f}"),
        ("all decisions per second", f"{decisions / total:,.0f}"),
        (
            "time per cycle mean / max",
            f"{1000 * total / len(cycle_times):.1f} ms / {1000 * max(cycle_times):.1f} ms",
        ),
        ("peak traced memory while applying", f"{peak / 2**20:.1f} MiB"),
        ("bytes per pending workload beyond the object", f"{per_workload:.0f} B"),
    ]
    print_rows(rows)


if __name__ == "__main__":
    main()
