"""Topology-aware scheduling benchmark: 1,000 Workloads on a 1,000-node, three-level topology.

Run with ``python -m benchmarks.bench_topology`` (part of ``make bench``).
10 blocks of 10 racks of 10 nodes, 8 CPUs each (8,000 CPUs); 1,000
Workloads of 1 to 16 one-CPU pods (about 8,500 CPUs asked: the last ones
wait), a third requiring one rack, a third preferring one block, a third
unconstrained; one ClusterQueue with quota for all of them, so only the
topology decides.  The same Workloads are then run on the same quota with
a flavor without topology, for comparison.  Each run: cycles until steady,
then three rounds of finishing 100 admitted Workloads and cycling again.
Printed: admissions, cycles, time per cycle (mean, max), the time to admit
everything that fits, and the peak traced memory of the whole run (the nodes
and the engine's state; measured in a second run under tracemalloc, not timed).
See docs/concepts.md#topology-aware-scheduling.
"""

from __future__ import annotations

import random
import time
import tracemalloc
from dataclasses import dataclass

from benchmarks.rows import print_rows
from scheduler.core.engine import Engine, NodeInfo
from tests.builders import (
    T0,
    cluster_queue,
    flavor_quotas,
    local_queue,
    model,
    resource_flavor,
    topology,
    workload,
)

BLOCKS, RACKS, NODES = 10, 10, 10
NODE_CPU = 8
WORKLOADS = 1_000
CHURN_ROUNDS, CHURN = 3, 100
HOST = "kubernetes.io/hostname"


@dataclass
class Run:
    admissions: int = 0
    cycles: int = 0
    cycle_seconds: float = 0.0
    longest: float = 0.0
    first_steady: float = 0.0
    peak_bytes: int = 0
    placed_pods: int = 0


def nodes() -> list[NodeInfo]:
    made = []
    for block in range(BLOCKS):
        for rack in range(RACKS):
            for index in range(NODES):
                name = f"b{block}-r{rack}-n{index}"
                labels = {"pool": "tas", "block": f"b{block}", "rack": f"b{block}-r{rack}"}
                labels[HOST] = name
                made.append(NodeInfo(name, labels, {"cpu": NODE_CPU * 1000, "pods": 110}))
    return made


def workloads(with_topology: bool) -> list[object]:
    rng = random.Random(7)
    made = []
    for index in range(WORKLOADS):
        built = workload(f"w{index:04d}").queue("lq").created(index)
        built.pod_set(count=rng.randint(1, 16), cpu="1")
        if with_topology:
            kind = index % 3
            if kind == 0:
                built.topology_request(required="rack")
            elif kind == 1:
                built.topology_request(preferred="block")
            else:
                built.topology_request(unconstrained=True)
        made.append(model(built))
    return made


def run(with_topology: bool, *, traced: bool = False) -> Run:
    """One run; ``traced``: under tracemalloc, for its peak (slower: not timed)."""
    result = Run()
    if traced:
        tracemalloc.start()
    engine = Engine()
    flavor = resource_flavor("f").node_labels(pool="tas")
    engine.apply(model(flavor.topology("t") if with_topology else flavor))
    if with_topology:
        engine.apply(model(topology("t", "block", "rack", HOST)))
        for node in nodes():
            engine.apply(node)
    quota = str(BLOCKS * RACKS * NODES * NODE_CPU)
    engine.apply(model(cluster_queue("cq").resource_group(flavor_quotas("f", cpu=quota))))
    engine.apply(model(local_queue("lq").cluster_queue("cq")))
    items = workloads(with_topology)
    for item in items:
        engine.apply(item)
    started = time.perf_counter()

    def until_steady() -> None:
        for _ in range(500):
            tick = time.perf_counter()
            cycle = engine.cycle(T0)
            spent = time.perf_counter() - tick
            result.cycles += 1
            result.cycle_seconds += spent
            result.longest = max(result.longest, spent)
            result.admissions += cycle.admitted
            if not cycle.decisions:
                return

    until_steady()
    result.first_steady = time.perf_counter() - started
    rng = random.Random(3)
    for _ in range(CHURN_ROUNDS):
        holding = sorted(key for keys in engine.cache.admitted.values() for key in keys)
        for key in rng.sample(holding, min(CHURN, len(holding))):
            engine.finish(key)
        until_steady()
    for key in sorted(k for keys in engine.cache.admitted.values() for k in keys):
        for item in engine.view.workload_state(key).admission:
            if item.topology_assignment is not None:
                result.placed_pods += sum(d.count for d in item.topology_assignment.domains)
    if traced:
        _, result.peak_bytes = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return result


def main() -> None:
    tas, plain = run(True), run(False)
    tas.peak_bytes = run(True, traced=True).peak_bytes
    plain.peak_bytes = run(False, traced=True).peak_bytes
    rows: list[tuple[str, str]] = [
        ("topology", f"{BLOCKS} blocks x {RACKS} racks x {NODES} nodes of {NODE_CPU} CPUs"),
        ("workloads", f"{WORKLOADS}, 1-16 pods; churn {CHURN_ROUNDS} x {CHURN} finished"),
    ]
    for name, figures in (("with topology", tas), ("without topology", plain)):
        mean = 1000 * figures.cycle_seconds / max(1, figures.cycles)
        rows += [
            (f"{name}: admissions / cycles", f"{figures.admissions} / {figures.cycles}"),
            (
                f"{name}: time per admission",
                f"{1000 * figures.cycle_seconds / max(1, figures.admissions):.2f} ms",
            ),
            (
                f"{name}: time per cycle mean / max",
                f"{mean:.2f} ms / {1000 * figures.longest:.1f} ms",
            ),
            (f"{name}: first steady state", f"{figures.first_steady:.2f} s"),
            (f"{name}: peak traced memory", f"{figures.peak_bytes / 2**20:.1f} MiB"),
        ]
    rows += [
        ("pods placed by topology at the end", f"{tas.placed_pods}"),
        ("cycle time ratio (with / without)", f"{tas.cycle_seconds / plain.cycle_seconds:.1f}x"),
    ]
    print_rows(rows)


if __name__ == "__main__":
    main()
