"""Queue status refresh at Kueue's large-scale shape: what one refresh costs, and with how much
change.

Run with ``python -m benchmarks.bench_queue_status`` (well under a minute).  Why: the
scheduler starts a refresh of the queue statuses about once a second
(docs/architecture.md#queue-statuses); at 1,000 ClusterQueues and 50,000 Workloads what a
refresh costs when nothing, or one Workload, changed is paid every second of a run.

Setup, as Kueue's large-scale generator: 10 cohorts x 100 ClusterQueues (20 CPUs each), one
LocalQueue per ClusterQueue, 50 Workloads per queue (the first 10 holding quota), fed to the
scheduler's state as watch events, as after its first lists.  Writes go to an in-memory API
server.  Measured (median of ``--repeat`` refreshes each):

* the first refresh (every status is new and written);
* a refresh when nothing changed since the last one;
* a refresh after one Workload of one queue changed (it finished);
* a refresh after one Workload changed in each of 100 queues.

Printed per case: milliseconds, statuses computed, statuses written.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.rows import print_rows
from scheduler.api import objects
from scheduler.core.engine import Engine
from scheduler.kube.informer import Event
from scheduler.kube.queue_reporter import QueueReporter
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from tests.builders import T0, cluster_queue, flavor_quotas, local_queue, resource_flavor, workload
from tests.kube.fake_api import FakeApi

COHORTS = 10
QUEUES_PER_COHORT = 100
WORKLOADS_PER_QUEUE = 50
ADMITTED_PER_QUEUE = 10
NAMESPACE = "default"


def deliver(state: ClusterState, obj: dict[str, Any], kind: str = "ADDED") -> None:
    state.on_kueue(Event(kind, obj, objects.key(obj)))  # type: ignore[arg-type]


def build(queues_per_cohort: int) -> tuple[ClusterState, FakeApi, list[dict[str, Any]]]:
    """The state after the first lists; the API server holding the same; one admitted Workload
    per queue (what the "changed" cases finish)."""
    api = FakeApi()
    state = ClusterState(Engine())

    def add(obj: dict[str, Any], path: str) -> None:
        api.put(path, obj)
        deliver(state, api.store[path])

    kueue = "/apis/kueue.x-k8s.io/v1beta2"
    add(resource_flavor("default").build(), f"{kueue}/resourceflavors/default")
    firsts: list[dict[str, Any]] = []
    for cohort in range(COHORTS):
        for index in range(queues_per_cohort):
            name = f"cq-{cohort}-{index}"
            add(
                cluster_queue(name)
                .cohort(f"cohort-{cohort}")
                .resource_group(flavor_quotas("default").resource("cpu", "20"))
                .build(),
                f"{kueue}/clusterqueues/{name}",
            )
            add(
                local_queue(name, NAMESPACE).cluster_queue(name).build(),
                f"{kueue}/namespaces/{NAMESPACE}/localqueues/{name}",
            )
            for number in range(WORKLOADS_PER_QUEUE):
                item = workload(f"{name}-{number}", NAMESPACE).queue(name).pod_set(cpu="1")
                if number < ADMITTED_PER_QUEUE:
                    item = item.reserve_quota(name, at=T0).admitted(at=T0)
                raw = item.build()
                add(raw, f"{kueue}/namespaces/{NAMESPACE}/workloads/{raw['metadata']['name']}")
                if number == 0:
                    firsts.append(api.store[f"{kueue}/namespaces/{NAMESPACE}/workloads/{name}-0"])
    return state, api, firsts


def finish(state: ClusterState, admitted: dict[str, Any]) -> None:
    """The Workload finished: the watch brings it with Finished=True."""
    finished = workload.__new__(workload)
    finished.raw = {**admitted, "metadata": {**admitted["metadata"]}}
    version = int(admitted["metadata"].get("resourceVersion") or 0) + 1_000_000
    finished.raw["metadata"]["resourceVersion"] = str(version)
    finished.raw["status"] = {
        **admitted["status"],
        "conditions": list(admitted["status"]["conditions"]),
    }
    deliver(state, finished.finished(at=T0).raw, "MODIFIED")


async def timed(reporter: QueueReporter, api: FakeApi) -> tuple[float, int]:
    writes_before = len(api.calls)
    started = time.perf_counter()
    await reporter.refresh()
    return (time.perf_counter() - started) * 1000, len(api.calls) - writes_before


def row(
    what: str, median: float, most: float, reporter: QueueReporter, written: int
) -> tuple[str, str]:
    return (
        what,
        f"{median:8.1f} ms median ({most:.1f} max), "
        f"{reporter.last_computed} statuses computed, {written} written",
    )


async def run(queues_per_cohort: int, repeat: int) -> list[tuple[str, str]]:
    state, api, firsts = build(queues_per_cohort)
    reporter = QueueReporter(engine=state.engine, state=state, writer=Writer(api), clock=lambda: T0)
    rows: list[tuple[str, str]] = []

    async def case(what: str, before: Callable[[int], None] | None = None) -> None:
        times, written = [], []
        for attempt in range(repeat):
            if before is not None:
                before(attempt)
            ms, writes = await timed(reporter, api)
            times.append(ms)
            written.append(writes)
        rows.append(
            row(
                what,
                statistics.median(times),
                max(times),
                reporter,
                int(statistics.median(written)),
            )
        )

    ms, writes = await timed(reporter, api)
    rows.append(row("first refresh", ms, ms, reporter, writes))
    await case("nothing changed")
    await case("1 Workload finished", lambda attempt: finish(state, firsts[attempt]))
    per_batch = 100

    def hundred(attempt: int) -> None:
        start = repeat + attempt * per_batch
        for admitted in firsts[start : start + per_batch]:
            finish(state, admitted)

    await case("100 Workloads finished, 100 queues", hundred)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queues", type=int, default=QUEUES_PER_COHORT, help="queues per cohort")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = asyncio.run(run(args.queues, args.repeat))
    queues = COHORTS * args.queues
    print(
        f"queue status refresh: {queues} ClusterQueues and LocalQueues, "
        f"{queues * WORKLOADS_PER_QUEUE} Workloads ({time.perf_counter() - started:.0f} s in all)"
    )
    print_rows(rows)


if __name__ == "__main__":
    main()
